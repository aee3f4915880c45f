/* More pointwise kernels: clamp, lerp, addcmul/addcdiv, nan_to_num,
 * isclose, logit, xlogy, round(decimals). Parameters arrive in THOpArgs. */
#include "../THLoops.h"

#define ARGS ((const THOpArgs *)extra)

#if !defined(TH_REAL_IS_BOOL)
/* clamp: i[2]/i[3] say whether min/max are given; NaN passes through */
void THTensor_(clamp_loop)(char **data, const int64_t *st, int64_t n, const void *extra) {
  const compute_t lo = TH_ARG(0), hi = TH_ARG(1);
  const bool has_lo = ARGS->i[2], has_hi = ARGS->i[3];
  if (st[0] == TH_S && st[1] == TH_S) {   /* contiguous: a select per bound vectorizes (NaN compares false) */
    scalar_t *o = (scalar_t *)data[0];
    const scalar_t *a = (const scalar_t *)data[1];
    /* a NaN bound gives NaN, as torch */
#define CLAMP_LO(x) (has_lo && ((x) < lo || lo != lo) ? lo : (x))
#define CLAMP_HI(x) (has_hi && ((x) > hi || hi != hi) ? hi : (x))
    TH_CONTIG((TH_CHUNKED(scalar_t, FROMC, TH_HALF_LOAD(a, ca_), compute_t x = CLAMP_LO(ca_[i]);,
                          CLAMP_HI(x), _Pragma("omp simd"))),
              (_Pragma("omp simd")
               for (int64_t i = 0; i < n; i++) { compute_t x = CLAMP_LO(TOC(a[i])); o[i] = FROMC(CLAMP_HI(x)); }))
#undef CLAMP_LO
#undef CLAMP_HI
    return;
  }
  for (int64_t i = 0; i < n; i++) {
    compute_t x = TOC(TH_AT(data[1], st[1], i));
#if defined(TH_REAL_IS_FLOATING)
    if (!isnan(x)) {
#else
    {
#endif
      if (has_lo && (x < lo || lo != lo)) x = lo;
      if (has_hi && (x > hi || hi != hi)) x = hi;
    }
    TH_AT(data[0], st[0], i) = FROMC(x);
  }
}
#endif

#if defined(TH_REAL_IS_FLOATING)
/* the math is THScalarOps.h's, shared with the CUDA kernels */
TH_TERNARY_LOOP(lerp_loop, TH_OP_LERP(a, b, c))
/* a Python number weight, held in the compute type (float for half/bfloat16) as torch's opmath */
TH_BINARY_LOOP(lerp_scalar_loop, TH_OP_LERP(a, b, TH_ARG(0)))
TH_TERNARY_LOOP(addcdiv_loop, TH_OP_ADDCDIV(a, b, c, TH_ARG(0)))
TH_UNARY_LOOP(nan_to_num_loop, TH_OP_NAN_TO_NUM(x, TH_ARG(0), TH_ARG(1), TH_ARG(2)))
TH_UNARY_LOOP(logit_loop, TH_OP_LOGIT(x, TH_ARG(0), ARGS->i[3]))
TH_BINARY_LOOP(xlogy_loop, TH_OP_XLOGY(a, b))
TH_UNARY_LOOP(round_decimals_loop, TH_OP_ROUND_DECIMALS(x, TH_ARG(0), TH_ARG(1)))
TH_DEFINE_ISCLOSE(THTensor_(close), compute_t)
TH_PREDICATE_LOOP(isclose_loop, THTensor_(close)(a, b, ARGS->d[0], ARGS->d[1], ARGS->i[2]))
#else
TH_PREDICATE_LOOP(isclose_loop, a == b)
#endif
#if !defined(TH_REAL_IS_BOOL)
TH_TERNARY_LOOP(addcmul_loop, TH_OP_ADDCMUL(a, b, c, TH_ARG(0)))
#endif
#undef ARGS
