/* gcd, lcm, heaviside, nextafter, ldexp, logaddexp, logaddexp2, igamma, igammac (see ATBinary.h):
 * a kernel table by dtype (src/TH/generic/THTensorBinary.c) and the result
 * dtype rule; at_iter_run broadcasts, promotes and threads. */
#include "ATBinary.h"
#include "../TH/THKernelsBinary.h"

/* to_float: an integer result type computes in the default float dtype */
static THTensor *run(const char *kname, const THLoopFn *loops, bool to_float, const THTensor *a, const THTensor *b,
                     THTensor *out) {
  const THTensor *in[2] = { a, b };
  THDtype dt = at_result_type(2, in);
  if (to_float && !THDtype_isFloating(dt)) dt = at_default_dtype();
  if (!loops[dt]) {
    THError_set(TH_ERR_NOTIMPL, "\"%s_cpu\" not implemented for '%s'", kname, THDtype_info[dt].legacy);
    return NULL;
  }
  ATIterSpec spec = { .out = out, .out_dtype = dt, .common_dtype = dt, .inplace = out == a, .check_cast = true, .name = kname };
  return at_iter_run(&spec, 2, in, loops[dt], NULL);
}

static const THLoopFn gcd_loops[TH_NDTYPES] = { TH_INTEGRAL_ENTRIES(gcd_loop) };
static const THLoopFn lcm_loops[TH_NDTYPES] = { TH_INTEGRAL_ENTRIES(lcm_loop) };
static const THLoopFn heaviside_loops[TH_NDTYPES] = TH_ALL_TABLE(heaviside_loop);
static const THLoopFn nextafter_loops[TH_NDTYPES] = TH_FLOATING_TABLE(nextafter_loop);
static const THLoopFn ldexp_loops[TH_NDTYPES] = TH_FLOATING_TABLE(ldexp_loop);
static const THLoopFn logaddexp_loops[TH_NDTYPES] = TH_FLOATING_TABLE(logaddexp_loop);
static const THLoopFn logaddexp2_loops[TH_NDTYPES] = TH_FLOATING_TABLE(logaddexp2_loop);
static const THLoopFn igamma_loops[TH_NDTYPES] = TH_FLOATING_TABLE(igamma_loop);
static const THLoopFn igammac_loops[TH_NDTYPES] = TH_FLOATING_TABLE(igammac_loop);

THTensor *at_gcd(const THTensor *a, const THTensor *b, THTensor *out) { return run("gcd", gcd_loops, false, a, b, out); }
THTensor *at_lcm(const THTensor *a, const THTensor *b, THTensor *out) { return run("lcm", lcm_loops, false, a, b, out); }

THTensor *at_heaviside(const THTensor *a, const THTensor *values, THTensor *out) {
  if (a->dtype != values->dtype) {
    THError_set(TH_ERR_RUNTIME, "heaviside is not yet implemented for tensors with different dtypes.");
    return NULL;
  }
  return run("heaviside", heaviside_loops, false, a, values, out);
}

THTensor *at_nextafter(const THTensor *a, const THTensor *b, THTensor *out) {
  return run("nextafter", nextafter_loops, false, a, b, out);
}
THTensor *at_ldexp(const THTensor *a, const THTensor *b, THTensor *out) {
  const THTensor *in[2] = { a, b };
  THDtype dt = at_result_type(2, in);
  if (!THDtype_isFloating(dt)) dt = at_default_dtype();
  if (out && !at_can_cast(dt, out->dtype)) {   /* torch's message names the op here */
    THError_set(TH_ERR_RUNTIME, "ldexp can't be cast to the desired output type %s", THDtype_info[out->dtype].legacy);
    return NULL;
  }
  return run("ldexp", ldexp_loops, true, a, b, out);
}
THTensor *at_logaddexp(const THTensor *a, const THTensor *b, THTensor *out) {
  return run("logaddexp", logaddexp_loops, false, a, b, out);
}
THTensor *at_logaddexp2(const THTensor *a, const THTensor *b, THTensor *out) {
  return run("logaddexp2", logaddexp2_loops, false, a, b, out);
}
THTensor *at_igamma(const THTensor *a, const THTensor *x, THTensor *out) {
  return run("igamma", igamma_loops, false, a, x, out);
}
THTensor *at_igammac(const THTensor *a, const THTensor *x, THTensor *out) {
  return run("igammac", igammac_loops, false, a, x, out);
}
