/* Window functions (src/ATen/ATFactory.c): element i of a window of length
 * N, computed op by op as torch's arange(N).mul_(...).cos_()... so each step
 * rounds to the dtype (half/bfloat16 too). data[0] is the output (n elements
 * from index i[2]); THOpArgs: i[0] the window (TH_WINDOW_*), i[1] N,
 * d[0] the step scale, d[1] alpha, d[2] beta. */
#include "../THLoops.h"
#include "../THMath.h"

#if defined(TH_REAL_IS_FLOATING)
#define R(v) TOC(FROMC((compute_t)(v)))
#define COS_(x) _Generic((x), float: cosf, default: cos)(x)
/* kaiser in double, element by element: libmvec's vector exp is a few ulp
 * off glibc's scalar exp, and double windows match torch's to an ulp */
__attribute__((optimize("no-tree-vectorize")))
static void THTensor_(kaiser_scalar)(scalar_t *o, int64_t start, int64_t n, compute_t beta, compute_t center,
                                     compute_t i0b) {
  for (int64_t j = 0; j < n; j++) {
    const compute_t k = R(start + j), r = (k - center) / center;
    o[j] = FROMC(TH_I0((compute_t)(beta * (compute_t)sqrt(fabs(1 - r * r)))) / i0b);
  }
}

void THTensor_(window_loop)(char **data, const int64_t *st, int64_t n, const void *extra) {
  const THOpArgs *p = (const THOpArgs *)extra;
  const int64_t kind = p->i[0], N = p->i[1], start = p->i[2];
  /* a scalar operand is first converted to the dtype, as torch's mul_/add_ do */
  const compute_t scale = R(p->d[0]), alpha = R(p->d[1]), nbeta = R(-p->d[2]), beta = (compute_t)p->d[2];
  const int64_t half = ((N - 1) >> 1) + 1;   /* bartlett's falling side starts here */
  const compute_t center = (compute_t)((double)(N - 1) / 2.0), i0b = TH_I0(beta);
  /* one loop per window (the switch once), each a vectorizable select-free body */
  scalar_t *o = (scalar_t *)data[0];
  (void)st;   /* contiguous: ATen passes the element size */
  /* int32 indices where they fit: int64 -> float has no AVX2 vector conversion
   * (both round the same integer, so values are unchanged) */
#define WLOOP_T(IT, EXPR) \
  _Pragma("omp simd") for (int64_t j = 0; j < n; j++) { const IT idx = (IT)(start + j); const compute_t k = R(idx); \
    (void)idx; o[j] = FROMC(EXPR); }
#define WLOOP(EXPR) \
  if (start + n <= INT32_MAX) { WLOOP_T(int32_t, EXPR) } else { WLOOP_T(int64_t, EXPR) } break;
  switch (kind) {
    case TH_WINDOW_HAMMING: WLOOP(R(R(R(COS_(R(k * scale))) * nbeta) + alpha))
    case TH_WINDOW_BLACKMAN:
      WLOOP(R(R(R(R(COS_(R(R(k * scale) * 4))) * R(0.08)) - R(R(COS_(R(R(k * scale) * 2))) * R(0.5))) + R(0.42)))
    case TH_WINDOW_BARTLETT: WLOOP(idx >= half ? R(2 - R(k * scale)) : R(k * scale))
    default:   /* kaiser: one kernel in opmath (beta not rounded), as torch's */
      if (sizeof(compute_t) == sizeof(double)) { THTensor_(kaiser_scalar)(o, start, n, beta, center, i0b); break; }
      WLOOP(TH_I0((compute_t)(beta * (compute_t)sqrt(fabs(1 - ((k - center) / center) * ((k - center) / center))))) / i0b)
  }
#undef WLOOP
#undef WLOOP_T
}
#undef COS_
#undef R
#endif
