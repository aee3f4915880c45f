/* Declarations of the generic kernels ATen dispatches to (one line per op;
 * the expansion names every dtype's instance). */
#ifndef TH_KERNELS_H
#define TH_KERNELS_H
#include "THDispatch.h"

TH_DECLARE_ALL(copy_loop)
TH_DECLARE_ALL(fill_loop)

TH_DECLARE_ALL(add_loop) TH_DECLARE_ALL(sub_loop) TH_DECLARE_ALL(mul_loop)
TH_DECLARE_ALL(eq_loop) TH_DECLARE_ALL(ne_loop) TH_DECLARE_ALL(lt_loop)
TH_DECLARE_ALL(le_loop) TH_DECLARE_ALL(gt_loop) TH_DECLARE_ALL(ge_loop)
TH_DECLARE_ALL(logical_and_loop) TH_DECLARE_ALL(logical_or_loop) TH_DECLARE_ALL(logical_xor_loop)
TH_DECLARE_FLOATING(div_loop)
TH_DECLARE_ALL(div_trunc_loop) TH_DECLARE_ALL(div_floor_loop)
TH_DECLARE_ALL(remainder_loop) TH_DECLARE_ALL(fmod_loop)
TH_DECLARE_ALL(maximum_loop) TH_DECLARE_ALL(minimum_loop)
TH_DECLARE_NUMERIC(pow_loop)
TH_DECLARE_FLOATING(atan2_loop) TH_DECLARE_FLOATING(hypot_loop) TH_DECLARE_FLOATING(copysign_loop)
TH_DECLARE_FLOATING(fmax_loop) TH_DECLARE_FLOATING(fmin_loop)
TH_DECLARE_INTEGRAL(bitwise_and_loop) TH_DECLARE_INTEGRAL(bitwise_or_loop) TH_DECLARE_INTEGRAL(bitwise_xor_loop)
TH_DECLARE_BOOL(bitwise_and_loop) TH_DECLARE_BOOL(bitwise_or_loop) TH_DECLARE_BOOL(bitwise_xor_loop)
TH_DECLARE_ALL(where_loop)
TH_DECLARE_INTEGRAL(lshift_loop) TH_DECLARE_INTEGRAL(rshift_loop)

/* unary, floating */
#define TH_FLOAT_UNARY_OPS(_) \
  _(exp) _(exp2) _(expm1) _(log) _(log2) _(log10) _(log1p) _(sin) _(cos) _(tan) \
  _(asin) _(acos) _(atan) _(sinh) _(cosh) _(tanh) _(asinh) _(acosh) _(atanh) \
  _(sqrt) _(rsqrt) _(sigmoid) _(erf) _(erfc) _(erfinv) _(lgamma) _(digamma) \
  _(reciprocal)
#define TH_DECL_FU(n) TH_DECLARE_FLOATING(n##_loop)
TH_FLOAT_UNARY_OPS(TH_DECL_FU)
TH_DECLARE_FLOATING(ceil_loop) TH_DECLARE_FLOATING(floor_loop) TH_DECLARE_FLOATING(round_loop)
TH_DECLARE_FLOATING(trunc_loop) TH_DECLARE_FLOATING(frac_loop)
TH_DECLARE_NUMERIC(neg_loop) TH_DECLARE_ALL(abs_loop) TH_DECLARE_ALL(sign_loop) TH_DECLARE_NUMERIC(relu_loop)
TH_DECLARE_FLOATING(isnan_loop) TH_DECLARE_FLOATING(isinf_loop) TH_DECLARE_FLOATING(isfinite_loop)
TH_DECLARE_NUMERIC(signbit_loop)
TH_DECLARE_INTEGRAL(bitwise_not_loop) TH_DECLARE_BOOL(bitwise_not_loop) TH_DECLARE_INTEGRAL(identity_loop)
TH_DECLARE_ALL(logical_not_loop) TH_DECLARE_ALL(nonzero_loop)

/* reductions (generic/THTensorReduce.c) */
#define TH_DECLARE_SUM2D(R, S) void TH##R##Tensor_sum_2d(double *, int64_t *, const S *, int64_t, int64_t, int64_t, int64_t);
TH_DECLARE_SUM2D(Bool, bool) TH_DECLARE_SUM2D(Byte, uint8_t) TH_DECLARE_SUM2D(Char, int8_t)
TH_DECLARE_SUM2D(Short, int16_t) TH_DECLARE_SUM2D(Int, int32_t) TH_DECLARE_SUM2D(Long, int64_t)
TH_DECLARE_SUM2D(Half, THHalf) TH_DECLARE_SUM2D(BFloat16, THBFloat16) TH_DECLARE_SUM2D(Float, float)
TH_DECLARE_SUM2D(Double, double)
double THFloatTensor_sum_contig(const float *x, int64_t n);
double THDoubleTensor_sum_contig(const double *x, int64_t n);
/* one reduced row (n elements at stride st) summed in the dtype in torch's cascade order;
 * vec: torch saw it unit-stride, so a row of >= one vector is summed as vectors */
float THFloatTensor_sum_row_torch(const float *x, int64_t n, int64_t st, bool vec);
double THDoubleTensor_sum_row_torch(const double *x, int64_t n, int64_t st, bool vec);

#endif
