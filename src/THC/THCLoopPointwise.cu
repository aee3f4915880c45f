// More pointwise kernels on the GPU: clamp, lerp, addcmul/addcdiv,
// nan_to_num, logit, xlogy, round(decimals), isclose. The twins of
// generic/THTensorPointwise.c; parameters arrive in THOpArgs as there.
#include "THCLoop.cuh"
#include "../TH/THMath.h"

#define C(v) ((compute_t)(v))
// clamp: i[2]/i[3] say whether min/max are given; NaN passes through, a NaN bound gives NaN
struct ClampOp {
  template <class T> __device__ __forceinline__ T operator()(const THOpArgs &args, T x) const {
    typedef T compute_t;
    const T lo = TH_ARG(0), hi = TH_ARG(1);
    x = args.i[2] && (x < lo || lo != lo) ? lo : x;
    x = args.i[3] && (x > hi || hi != hi) ? hi : x;
    return x;
  }
};
// lerp(start, end, weight): the two-sided form keeps lerp(a, b, 1) == b exactly
THC_TERNARY_OP(LerpOp, fabs(c) < C(0.5) ? a + c * (b - a) : b - (b - a) * (C(1) - c))
// (value * t1) / t2, then the sum: the order torch's kernel rounds in
THC_TERNARY_OP(AddcdivOp, a + TH_ARG(0) * b / c)
THC_TERNARY_OP(AddcmulOp, a + TH_ARG(0) * b * c)
THC_UNARY_OP(NanToNumOp, isnan(x) ? TH_ARG(0) : (isinf(x) ? (x > 0 ? TH_ARG(1) : TH_ARG(2)) : x))
struct LogitOp {
  template <class T> __device__ __forceinline__ T operator()(const THOpArgs &args, T x) const {
    typedef T compute_t;
    if (args.i[3]) {
      const T eps = TH_ARG(0);
      const T z = x < eps ? eps : (x > C(1) - eps ? C(1) - eps : x);
      return log(z / (C(1) - z));
    }
    return log(x / (C(1) - x));
  }
};
THC_BINARY_OP(XlogyOp, isnan(b) ? b : (a == 0 ? C(0) : a * log(b)))
THC_UNARY_OP(RoundDecimalsOp, TH_ARG(1) != 0 ? nearbyint(x * TH_ARG(0)) / TH_ARG(0) : nearbyint(x / TH_ARG(0)) * TH_ARG(0))
// |a - b| <= atol + rtol * |b|; equal infinities are close; NaNs only with equal_nan
struct IscloseOp {
  template <class T> __device__ __forceinline__ bool operator()(const THOpArgs &args, T a, T b) const {
    if constexpr (std::is_floating_point<T>::value) {
      if (a == b) return true;
      if (isnan(a) || isnan(b)) return args.i[2] && isnan(a) && isnan(b);
      if (isinf(a) || isinf(b)) return false;
      return fabs((double)a - (double)b) <= args.d[1] + args.d[0] * fabs((double)b);
    } else {
      return a == b;
    }
  }
};
#undef C

const THCKernel thc_kernels_pointwise[] = {
  THC_NUMERIC(THC_E_UNARY, clamp_loop, ClampOp)
  THC_FLOATING(THC_E_TERNARY, lerp_loop, LerpOp)
  THC_FLOATING(THC_E_TERNARY, addcdiv_loop, AddcdivOp)
  THC_NUMERIC(THC_E_TERNARY, addcmul_loop, AddcmulOp)
  THC_FLOATING(THC_E_UNARY, nan_to_num_loop, NanToNumOp)
  THC_FLOATING(THC_E_UNARY, logit_loop, LogitOp)
  THC_FLOATING(THC_E_BINARY, xlogy_loop, XlogyOp)
  THC_FLOATING(THC_E_UNARY, round_decimals_loop, RoundDecimalsOp)
  THC_ALL(THC_E_PRED, isclose_loop, IscloseOp)
};
const size_t thc_nkernels_pointwise = sizeof thc_kernels_pointwise / sizeof thc_kernels_pointwise[0];
