// Unary kernels on the GPU: the twins of generic/THTensorUnary.c. Float
// ones compute in float for float16/bfloat16/float32 (CUDA's float libm)
// and in double for float64, as PyTorch's CUDA kernels.
#include "THCLoop.cuh"
#include "../TH/THMath.h"

#define C(v) ((compute_t)(v))
THC_UNARY_OP(ExpOp, exp(x)) THC_UNARY_OP(Exp2Op, exp2(x)) THC_UNARY_OP(Expm1Op, expm1(x))
THC_UNARY_OP(LogOp, log(x)) THC_UNARY_OP(Log2Op, log2(x)) THC_UNARY_OP(Log10Op, log10(x))
THC_UNARY_OP(Log1pOp, log1p(x)) THC_UNARY_OP(SinOp, sin(x)) THC_UNARY_OP(CosOp, cos(x))
THC_UNARY_OP(TanOp, tan(x)) THC_UNARY_OP(AsinOp, asin(x)) THC_UNARY_OP(AcosOp, acos(x))
THC_UNARY_OP(AtanOp, atan(x)) THC_UNARY_OP(SinhOp, sinh(x)) THC_UNARY_OP(CoshOp, cosh(x))
THC_UNARY_OP(TanhOp, tanh(x)) THC_UNARY_OP(AsinhOp, asinh(x)) THC_UNARY_OP(AcoshOp, acosh(x))
THC_UNARY_OP(AtanhOp, atanh(x)) THC_UNARY_OP(SqrtOp, sqrt(x)) THC_UNARY_OP(RsqrtOp, TH_OP_RSQRT(x))
THC_UNARY_OP(SigmoidOp, TH_OP_SIGMOID(x)) THC_UNARY_OP(ErfOp, erf(x)) THC_UNARY_OP(ErfcOp, erfc(x))
THC_UNARY_OP(ErfinvOp, th_erfinv(x)) THC_UNARY_OP(LgammaOp, lgamma(x)) THC_UNARY_OP(DigammaOp, th_digamma(x))
THC_UNARY_OP(ReciprocalOp, C(1) / x) THC_UNARY_OP(CeilOp, ceil(x)) THC_UNARY_OP(FloorOp, floor(x))
THC_UNARY_OP(RoundOp, th_round_even(x)) THC_UNARY_OP(TruncOp, trunc(x)) THC_UNARY_OP(FracOp, TH_OP_FRAC(x))
THC_UNARY_PRED(IsnanOp, isnan(x)) THC_UNARY_PRED(IsinfOp, isinf(x)) THC_UNARY_PRED(IsfiniteOp, isfinite(x))
// sinc, i0, i0e, i1, i1e (THKernelsUnary.h)
THC_UNARY_OP(SincOp, TH_OP_SINC(x))
THC_UNARY_OP(I0Op, TH_I0(x)) THC_UNARY_OP(I1Op, TH_I1(x)) THC_UNARY_OP(I1eOp, TH_I1E(x))
THC_UNARY_OP(I0eOp, TH_I0E(x))

// the numeric ones, by kind of type: integers wrap as the CPU loops do;
// sign(nan) is 0 and relu keeps -0.0 and nan, as PyTorch's
#define THC_KIND_OP(NAME, RET, FLOAT_EXPR, SIGNED_EXPR, UNSIGNED_EXPR)                      \
  struct NAME {                                                                            \
    template <class C> __device__ __forceinline__ RET operator()(const THOpArgs &, C x) const { \
      typedef C compute_t;                                                                 \
      if constexpr (std::is_floating_point<C>::value) return (RET)(FLOAT_EXPR);            \
      else if constexpr (std::is_signed<C>::value) return (RET)(SIGNED_EXPR);              \
      else return (RET)(UNSIGNED_EXPR);                                                    \
    }                                                                                      \
  };
#define THC_KIND_UNARY(NAME, F, S, U) THC_KIND_OP(NAME, C, F, S, U)
THC_KIND_UNARY(NegOp, -x, (C)(0 - (uint64_t)x), (C)(0 - (uint64_t)x))
THC_KIND_UNARY(AbsOp, fabs(x), x < 0 ? (C)(0 - (uint64_t)x) : x, x)
THC_KIND_UNARY(SignOp, TH_OP_FSIGN(x), (x > 0) - (x < 0), x > 0)
THC_KIND_UNARY(ReluOp, TH_OP_FRELU(x), x > 0 ? x : 0, x > 0 ? x : 0)
THC_KIND_OP(SignbitOp, bool, signbit(x), x < 0, false)
THC_UNARY_OP(BitwiseNotOp, ~x)
THC_UNARY_OP(BoolNotOp, !x)
THC_UNARY_OP(IdentityOp, x)
THC_UNARY_PRED(LogicalNotOp, !(x != 0))
THC_UNARY_PRED(NonzeroOp, x != 0)
#undef C

#define THC_E_FU(R, T, NAME, F) THC_E_UNARY(R, T, NAME, F)
const THCKernel thc_kernels_unary[] = {
#define THC_FLOAT_UNARY(n, F) THC_FLOATING(THC_E_UNARY, n##_loop, F)
  THC_FLOAT_UNARY(exp, ExpOp) THC_FLOAT_UNARY(exp2, Exp2Op) THC_FLOAT_UNARY(expm1, Expm1Op)
  THC_FLOAT_UNARY(log, LogOp) THC_FLOAT_UNARY(log2, Log2Op) THC_FLOAT_UNARY(log10, Log10Op)
  THC_FLOAT_UNARY(log1p, Log1pOp) THC_FLOAT_UNARY(sin, SinOp) THC_FLOAT_UNARY(cos, CosOp)
  THC_FLOAT_UNARY(tan, TanOp) THC_FLOAT_UNARY(asin, AsinOp) THC_FLOAT_UNARY(acos, AcosOp)
  THC_FLOAT_UNARY(atan, AtanOp) THC_FLOAT_UNARY(sinh, SinhOp) THC_FLOAT_UNARY(cosh, CoshOp)
  THC_FLOAT_UNARY(tanh, TanhOp) THC_FLOAT_UNARY(asinh, AsinhOp) THC_FLOAT_UNARY(acosh, AcoshOp)
  THC_FLOAT_UNARY(atanh, AtanhOp) THC_FLOAT_UNARY(sqrt, SqrtOp) THC_FLOAT_UNARY(rsqrt, RsqrtOp)
  THC_FLOAT_UNARY(sigmoid, SigmoidOp) THC_FLOAT_UNARY(erf, ErfOp) THC_FLOAT_UNARY(erfc, ErfcOp)
  THC_FLOAT_UNARY(erfinv, ErfinvOp) THC_FLOAT_UNARY(lgamma, LgammaOp) THC_FLOAT_UNARY(digamma, DigammaOp)
  THC_FLOAT_UNARY(reciprocal, ReciprocalOp) THC_FLOAT_UNARY(ceil, CeilOp) THC_FLOAT_UNARY(floor, FloorOp)
  THC_FLOAT_UNARY(round, RoundOp) THC_FLOAT_UNARY(trunc, TruncOp) THC_FLOAT_UNARY(frac, FracOp)
  THC_FLOAT_UNARY(sinc, SincOp) THC_FLOAT_UNARY(i0, I0Op) THC_FLOAT_UNARY(i1, I1Op) THC_FLOAT_UNARY(i1e, I1eOp)
  THC_FLOAT_UNARY(i0e, I0eOp)
  THC_FLOATING(THC_E_UPRED, isnan_loop, IsnanOp)
  THC_FLOATING(THC_E_UPRED, isinf_loop, IsinfOp)
  THC_FLOATING(THC_E_UPRED, isfinite_loop, IsfiniteOp)
  THC_NUMERIC(THC_E_UPRED, signbit_loop, SignbitOp)
  THC_NUMERIC(THC_E_UNARY, neg_loop, NegOp)
  THC_ALL(THC_E_UNARY, abs_loop, AbsOp)
  THC_ALL(THC_E_UNARY, sign_loop, SignOp)
  THC_NUMERIC(THC_E_UNARY, relu_loop, ReluOp)
  THC_INTEGRAL(THC_E_UNARY, bitwise_not_loop, BitwiseNotOp)
  THC_BOOL(THC_E_UNARY, bitwise_not_loop, BoolNotOp)
  THC_INTEGRAL(THC_E_UNARY, identity_loop, IdentityOp)
  THC_ALL(THC_E_UPRED, logical_not_loop, LogicalNotOp)
  THC_ALL(THC_E_UPRED, nonzero_loop, NonzeroOp)
};
const size_t thc_nkernels_unary = sizeof thc_kernels_unary / sizeof thc_kernels_unary[0];
