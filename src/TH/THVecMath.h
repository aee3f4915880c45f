/* AVX2+FMA vector versions of the float32 transcendental unary ops (THVecMath.c), the
 * contiguous fast path of their kernels in every reduced-or-single float dtype: float16 and
 * bfloat16 convert a block to float32, run the float32 kernel, and convert back.
 * CPU only: THC's kernels keep THMath.h's scalar math. */
#ifndef TH_VEC_MATH_H
#define TH_VEC_MATH_H
#include "THGeneral.h"

typedef enum {
  TH_VEC_NONE = -1,
  TH_VEC_SIN, TH_VEC_COS, TH_VEC_TAN, TH_VEC_EXP, TH_VEC_EXPM1, TH_VEC_LOG, TH_VEC_LOG1P, TH_VEC_LOG2,
  TH_VEC_TANH, TH_VEC_SIGMOID, TH_VEC_ERF, TH_VEC_ERFC, TH_VEC_ATAN, TH_VEC_ASIN, TH_VEC_SQRT,
  TH_VEC_RSQRT, TH_VEC_GELU, TH_VEC_SILU, TH_VEC_MISH,
  TH_VEC_NOPS
} THVecOp;

/* o[i] = op(a[i]) for n contiguous elements; returns 0 (having written nothing) when this cpu
 * lacks AVX2/FMA/F16C, CTHTORCH_VEC_MATH=scalar is set, or the op keeps its libmvec loop (the
 * `dispatched` table of THVecMath.c), so the caller runs its scalar loop */
int th_vec_unary_float(THVecOp op, float *o, const float *a, int64_t n);
int th_vec_unary_half(THVecOp op, THHalf *o, const THHalf *a, int64_t n);
int th_vec_unary_bf16(THVecOp op, THBFloat16 *o, const THBFloat16 *a, int64_t n);
/* the double (and any other dtype's) slot of THLoops.h's TH_VEC_UNARY: always the scalar loop */
static inline int th_vec_unary_none(THVecOp op, void *o, const void *a, int64_t n) {
  (void)op; (void)o; (void)a; (void)n;
  return 0;
}
/* o[i] = atan2(y[i * incy], x[i * incx]) for float32 (inc 1, or 0 for a broadcast value), within
 * 1 ulp of double libm's; returns 0 (writing nothing) where the unary calls above would */
int th_vec_atan2_float(float *o, const float *y, int64_t incy, const float *x, int64_t incx, int64_t n);
/* "avx2" or "scalar": which path the calls above take */
const char *th_vec_math_kernel(void);

#endif
