/* Unary pointwise kernels. Floating ones are instantiated for the four
 * float dtypes (ATen computes integer inputs in the default float dtype);
 * the rest for every dtype they make sense for. */
#include "../THLoops.h"
#include "../THMath.h"

#if defined(TH_REAL_IS_FLOATING)
#define C(v) ((compute_t)(v))
TH_VEC_UNARY_LOOP(exp_loop, exp(x), _Pragma("omp simd"), TH_VEC_EXP, 1)
TH_UNARY_LOOP(exp2_loop, exp2(x))
TH_VEC_UNARY_LOOP(expm1_loop, expm1(x), , TH_VEC_EXPM1, 1)
TH_VEC_UNARY_LOOP(log_loop, log(x), _Pragma("omp simd"), TH_VEC_LOG, 1)
TH_VEC_UNARY_LOOP(log2_loop, log2(x), , TH_VEC_LOG2, 1)
TH_UNARY_LOOP(log10_loop, log10(x))
TH_VEC_UNARY_LOOP(log1p_loop, log1p(x), , TH_VEC_LOG1P, 1)
TH_VEC_UNARY_LOOP(sin_loop, sin(x), , TH_VEC_SIN, 1)
TH_VEC_UNARY_LOOP(cos_loop, cos(x), , TH_VEC_COS, 1)
TH_VEC_UNARY_LOOP(tan_loop, tan(x), , TH_VEC_TAN, 1)
TH_VEC_UNARY_LOOP(asin_loop, asin(x), , TH_VEC_ASIN, 1)
TH_UNARY_LOOP(acos_loop, acos(x))
TH_VEC_UNARY_LOOP(atan_loop, atan(x), , TH_VEC_ATAN, 1)
TH_UNARY_LOOP(sinh_loop, sinh(x))
TH_UNARY_LOOP(cosh_loop, cosh(x))
TH_VEC_UNARY_LOOP(tanh_loop, tanh(x), _Pragma("omp simd"), TH_VEC_TANH, 1)
TH_UNARY_LOOP(asinh_loop, asinh(x))
TH_UNARY_LOOP(acosh_loop, acosh(x))
TH_UNARY_LOOP(atanh_loop, atanh(x))
TH_VEC_UNARY_LOOP(sqrt_loop, sqrt(x), , TH_VEC_SQRT, 1)
TH_VEC_UNARY_LOOP(rsqrt_loop, TH_OP_RSQRT(x), , TH_VEC_RSQRT, 1)
TH_VEC_UNARY_LOOP(sigmoid_loop, TH_OP_SIGMOID(x), _Pragma("omp simd"), TH_VEC_SIGMOID, 1)
TH_VEC_UNARY_LOOP(erf_loop, erf(x), , TH_VEC_ERF, 1)
TH_VEC_UNARY_LOOP(erfc_loop, erfc(x), , TH_VEC_ERFC, 1)
TH_UNARY_LOOP(erfinv_loop, th_erfinv(x))
TH_UNARY_LOOP(lgamma_loop, lgamma(x))
TH_UNARY_LOOP(digamma_loop, th_digamma(x))
TH_UNARY_LOOP(reciprocal_loop, C(1) / x)
TH_UNARY_LOOP(ceil_loop, ceil(x))
TH_UNARY_LOOP(floor_loop, floor(x))
TH_UNARY_LOOP(round_loop, th_round_even(x))
TH_UNARY_LOOP(trunc_loop, trunc(x))
TH_UNARY_LOOP(frac_loop, TH_OP_FRAC(x))
TH_UNARY_LOOP(neg_loop, -x)
TH_UNARY_LOOP(abs_loop, fabs(x))
TH_UNARY_LOOP(sign_loop, TH_OP_FSIGN(x))
TH_UNARY_LOOP(relu_loop, TH_OP_FRELU(x))
TH_UNARY_PREDICATE_LOOP(isnan_loop, isnan(x))
TH_UNARY_PREDICATE_LOOP(isinf_loop, isinf(x))
TH_UNARY_PREDICATE_LOOP(isfinite_loop, isfinite(x))
TH_UNARY_PREDICATE_LOOP(signbit_loop, signbit(x))
#undef C
#elif defined(TH_REAL_IS_INTEGRAL)
#if defined(TH_REAL_IS_SIGNED)
TH_UNARY_LOOP(neg_loop, (compute_t)(0 - (uint64_t)x))
TH_UNARY_LOOP(abs_loop, x < 0 ? (compute_t)(0 - (uint64_t)x) : x)
TH_UNARY_LOOP(sign_loop, (x > 0) - (x < 0))
TH_UNARY_PREDICATE_LOOP(signbit_loop, x < 0)
#else
TH_UNARY_LOOP(neg_loop, (compute_t)(0 - (uint64_t)x))
TH_UNARY_LOOP(abs_loop, x)
TH_UNARY_LOOP(sign_loop, x > 0)
TH_UNARY_PREDICATE_LOOP(signbit_loop, ((void)x, false))
#endif
TH_UNARY_LOOP(relu_loop, x > 0 ? x : 0)
TH_UNARY_LOOP(bitwise_not_loop, ~x)
TH_UNARY_LOOP(identity_loop, x)
#else /* bool */
TH_UNARY_LOOP(bitwise_not_loop, !x)
TH_UNARY_LOOP(abs_loop, x)
TH_UNARY_LOOP(sign_loop, x)
#endif
TH_UNARY_PREDICATE_LOOP(logical_not_loop, !(x != 0))
TH_UNARY_PREDICATE_LOOP(nonzero_loop, x != 0)

/* ---- sinc, i0, i0e, i1, i1e, frexp (src/ATen/ATUnary.c) ---- */
#if defined(TH_REAL_IS_FLOATING)
TH_UNARY_LOOP(sinc_loop, TH_OP_SINC(x))
TH_SIMD_UNARY_LOOP(i0_loop, TH_I0(x))
TH_SIMD_UNARY_LOOP(i1_loop, TH_I1(x))
TH_SIMD_UNARY_LOOP(i1e_loop, TH_I1E(x))
TH_SIMD_UNARY_LOOP(i0e_loop, TH_I0E(x))
/* mantissa in [0.5, 1) with the input's sign, and the int32 exponent; contiguous */
void THTensor_(frexp_contig)(const void *in, void *mant, int32_t *expo, int64_t n) {
  const scalar_t *x = (const scalar_t *)in;
  scalar_t *m = (scalar_t *)mant;
  for (int64_t i = 0; i < n; i++) {
    int e = 0;
    compute_t v = TOC(x[i]);
    m[i] = FROMC(_Generic(v, float: frexpf, default: frexp)(v, &e));
    expo[i] = e;
  }
}
#endif
