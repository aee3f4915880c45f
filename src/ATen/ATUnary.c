/* sinc, i0, special_i0e, special_i1, special_i1e, frexp (see ATUnary.h); kernels in src/TH/generic/THTensorUnary.c. */
#include "ATUnary.h"
#include "../TH/THKernelsUnary.h"

static THTensor *run_float(const char *name, const THLoopFn *loops, const THTensor *a, THTensor *out) {
  if (THDtype_isComplex(a->dtype)) {   /* no complex kernels: a real one would drop the imaginary part */
    THError_set(TH_ERR_NOTIMPL, "\"%s_cpu\" not implemented for '%s'", name, THDtype_info[a->dtype].legacy);
    return NULL;
  }
  THDtype dt = THDtype_isFloating(a->dtype) ? a->dtype : at_default_dtype();
  ATIterSpec spec = { .out = out, .out_dtype = dt, .common_dtype = dt, .inplace = out == a, .check_cast = true, .name = name };
  const THTensor *in[1] = { a };
  return at_iter_run(&spec, 1, in, loops[dt], NULL);
}

static const THLoopFn sinc_loops[TH_NDTYPES] = TH_FLOATING_TABLE(sinc_loop);
static const THLoopFn i0_loops[TH_NDTYPES] = TH_FLOATING_TABLE(i0_loop);
static const THLoopFn i1_loops[TH_NDTYPES] = TH_FLOATING_TABLE(i1_loop);
static const THLoopFn i1e_loops[TH_NDTYPES] = TH_FLOATING_TABLE(i1e_loop);
static const THLoopFn i0e_loops[TH_NDTYPES] = TH_FLOATING_TABLE(i0e_loop);

THTensor *at_sinc(const THTensor *a, THTensor *out) { return run_float("sinc", sinc_loops, a, out); }
THTensor *at_i0(const THTensor *a, THTensor *out) { return run_float("i0", i0_loops, a, out); }
THTensor *at_special_i1(const THTensor *a, THTensor *out) { return run_float("i1", i1_loops, a, out); }
THTensor *at_special_i1e(const THTensor *a, THTensor *out) { return run_float("i1e", i1e_loops, a, out); }
THTensor *at_special_i0e(const THTensor *a, THTensor *out) { return run_float("i0e", i0e_loops, a, out); }

static const THFrexpFn frexp_fns[TH_NDTYPES] = TH_FLOATING_TABLE(frexp_contig);

int at_frexp(THTensor **outs, const THTensor *self) {
  if (!THDtype_isFloating(self->dtype)) {
    THError_set(TH_ERR_RUNTIME, "torch.frexp() only supports floating-point dtypes");
    return -1;
  }
  THTensor *c = at_contiguous(self);
  THTensor *m = c ? THTensor_new(self->dtype, self->ndim, self->sizes) : NULL;
  THTensor *e = m ? THTensor_new(TH_Int32, self->ndim, self->sizes) : NULL;
  if (!e) { THTensor_free(c); THTensor_free(m); return -1; }
  const int64_t n = THTensor_numel(c), es = THDtype_size(self->dtype), chunk = 32768;
  const char *x = THTensor_data(c);
  char *mp = THTensor_data(m);
  int32_t *ep = (int32_t *)THTensor_data(e);
  THFrexpFn fn = frexp_fns[self->dtype];
  #pragma omp parallel for if (n > 2 * chunk)
  for (int64_t s = 0; s < n; s += chunk) {
    int64_t k = n - s < chunk ? n - s : chunk;
    fn(x + s * es, mp + s * es, ep + s, k);
  }
  THTensor_free(c);
  outs[0] = m;
  outs[1] = e;
  return 0;
}
