// Binary kernels on the GPU beyond the core arithmetic (THCLoop.cu): pow,
// atan2 and friends, bitwise ops and shifts, gcd/lcm, heaviside, nextafter,
// ldexp, logaddexp(2). The twins of generic/THTensorBinary.c.
#include "THCLoop.cuh"
#include "../TH/THMath.h"

TH_DEFINE_IPOW(th_ipow, uint8_t, 0) TH_DEFINE_IPOW(th_ipow, int8_t, 1) TH_DEFINE_IPOW(th_ipow, int16_t, 1)
TH_DEFINE_IPOW(th_ipow, int32_t, 1) TH_DEFINE_IPOW(th_ipow, int64_t, 1)
TH_DEFINE_GCD(th_gcd, uint8_t, 0) TH_DEFINE_GCD(th_gcd, int8_t, 1) TH_DEFINE_GCD(th_gcd, int16_t, 1)
TH_DEFINE_GCD(th_gcd, int32_t, 1) TH_DEFINE_GCD(th_gcd, int64_t, 1)
TH_DEFINE_LCM(th_lcm, th_gcd, uint8_t) TH_DEFINE_LCM(th_lcm, th_gcd, int8_t) TH_DEFINE_LCM(th_lcm, th_gcd, int16_t)
TH_DEFINE_LCM(th_lcm, th_gcd, int32_t) TH_DEFINE_LCM(th_lcm, th_gcd, int64_t)

// Floating pow: the scalar exponents the CPU loop special-cases (x ** 2 as
// a product...) take the same arithmetic, so both devices round alike.
struct PowOp {
  template <class C> __device__ __forceinline__ C operator()(const THOpArgs &, C a, C b) const {
    if constexpr (std::is_floating_point<C>::value) {
      if (b == (C)2) return a * a;
      if (b == (C)3) return a * a * a;
      if (b == (C)0.5) return sqrt(a);
      if (b == (C)-0.5) return (C)1 / sqrt(a);
      if (b == (C)-1) return (C)1 / a;
      if (b == (C)-2) return (C)1 / (a * a);
      return pow(a, b);
    } else {
      return th_ipow(a, b);
    }
  }
};
THC_BINARY_OP(Atan2Op, atan2(a, b))
THC_BINARY_OP(HypotOp, hypot(a, b))
THC_BINARY_OP(CopysignOp, copysign(a, b))
THC_BINARY_OP(FmaxOp, fmax(a, b))
THC_BINARY_OP(FminOp, fmin(a, b))
THC_BINARY_OP(BitAndOp, a & b)
THC_BINARY_OP(BitOrOp, a | b)
THC_BINARY_OP(BitXorOp, a ^ b)
// shifts as PyTorch: out-of-range shift counts give 0 (or -1 for negative >>)
template <class C> __device__ __forceinline__ bool thc_is_neg(C v) {
  if constexpr (std::is_signed<C>::value) return v < 0; else return false;
}
#define TH_NBITS ((compute_t)(sizeof(compute_t) * 8))
THC_BINARY_OP(LshiftOp, (thc_is_neg(b) || b >= TH_NBITS) ? 0 : (compute_t)((uint64_t)a << b))
THC_BINARY_OP(RshiftOp, (thc_is_neg(b) || b >= TH_NBITS) ? (thc_is_neg(a) ? -1 : 0) : (a >> b))
#undef TH_NBITS
THC_BINARY_OP(GcdOp, th_gcd(a, b))
THC_BINARY_OP(LcmOp, th_lcm(a, b))
THC_BINARY_OP(HeavisideOp, TH_OP_HEAVISIDE(a, b))
THC_BINARY_OP(LogaddexpOp, TH_OP_LOGADDEXP(a, b))
THC_BINARY_OP(Logaddexp2Op, TH_OP_LOGADDEXP2(a, b))

// nextafter: float/double by libm's; float16/bfloat16 step their own 16-bit
// patterns (c10's), recovered exactly from the float the kernel sees
THC_BINARY_OP(NextafterOp, nextafter(a, b))
template <class S> struct NextafterReducedOp {
  __device__ __forceinline__ float operator()(const THOpArgs &, float fa, float fb) const {
    S from = THCType<S>::fromc(fa), to = THCType<S>::fromc(fb);
    if (isnan(fa) || isnan(fb) || !th_nextafter16(&from.x, to.x, std::is_same<S, thc_half>::value ? 0x7c00 : 0x7f80))
      return fa + fb;
    return THCType<S>::toc(from);
  }
};
// input * 2 ** other, the power rounded to the dtype first (exact 2^b for
// an integral b in the normal range, as the CPU's bit construction)
template <class S> struct LdexpOp {
  template <class C> __device__ __forceinline__ C operator()(const THOpArgs &, C a, C b) const {
    const bool f64 = sizeof(C) == 8;
    const C lo = f64 ? (C)-1022 : (C)-126, hi = f64 ? (C)1023 : (C)127;
    C p = (b >= lo && b <= hi && b == (C)(int)b) ? (C)ldexp(1.0, (int)b) : (C)exp2(b);
    return a * THCType<S>::toc(THCType<S>::fromc((typename THCType<S>::C)p));
  }
};

#define THC_E_NEXTAFTER_R(R, T, _) { THC_CPU(R, nextafter_loop), thc_launch<true, T, NextafterReducedOp<T>, T, T> },
#define THC_E_LDEXP(R, T, _) { THC_CPU(R, ldexp_loop), thc_launch<true, T, LdexpOp<T>, T, T> },
const THCKernel thc_kernels_binary[] = {
  THC_NUMERIC(THC_E_BINARY, pow_loop, PowOp)
  THC_FLOATING(THC_E_BINARY, atan2_loop, Atan2Op)
  THC_FLOATING(THC_E_BINARY, hypot_loop, HypotOp)
  THC_FLOATING(THC_E_BINARY, copysign_loop, CopysignOp)
  THC_FLOATING(THC_E_BINARY, fmax_loop, FmaxOp)
  THC_FLOATING(THC_E_BINARY, fmin_loop, FminOp)
  THC_INTEGRAL_BOOL(THC_E_BINARY, bitwise_and_loop, BitAndOp)
  THC_INTEGRAL_BOOL(THC_E_BINARY, bitwise_or_loop, BitOrOp)
  THC_INTEGRAL_BOOL(THC_E_BINARY, bitwise_xor_loop, BitXorOp)
  THC_INTEGRAL(THC_E_BINARY, lshift_loop, LshiftOp)
  THC_INTEGRAL(THC_E_BINARY, rshift_loop, RshiftOp)
  THC_INTEGRAL(THC_E_BINARY, gcd_loop, GcdOp)
  THC_INTEGRAL(THC_E_BINARY, lcm_loop, LcmOp)
  THC_ALL(THC_E_BINARY, heaviside_loop, HeavisideOp)
  THC_E_BINARY(Float, float, nextafter_loop, NextafterOp)
  THC_E_BINARY(Double, double, nextafter_loop, NextafterOp)
  THC_E_NEXTAFTER_R(Half, thc_half, _)
  THC_E_NEXTAFTER_R(BFloat16, thc_bf16, _)
  THC_FLOATING(THC_E_LDEXP, _)
  THC_FLOATING(THC_E_BINARY, logaddexp_loop, LogaddexpOp)
  THC_FLOATING(THC_E_BINARY, logaddexp2_loop, Logaddexp2Op)
};
const size_t thc_nkernels_binary = sizeof thc_kernels_binary / sizeof thc_kernels_binary[0];
