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
THC_TERNARY_OP(LerpOp, TH_OP_LERP(a, b, c))
THC_TERNARY_OP(AddcdivOp, TH_OP_ADDCDIV(a, b, c, TH_ARG(0)))
THC_TERNARY_OP(AddcmulOp, TH_OP_ADDCMUL(a, b, c, TH_ARG(0)))
THC_UNARY_OP(NanToNumOp, TH_OP_NAN_TO_NUM(x, TH_ARG(0), TH_ARG(1), TH_ARG(2)))
THC_UNARY_OP(LogitOp, TH_OP_LOGIT(x, TH_ARG(0), args.i[3]))
THC_BINARY_OP(XlogyOp, TH_OP_XLOGY(a, b))
THC_UNARY_OP(RoundDecimalsOp, TH_OP_ROUND_DECIMALS(x, TH_ARG(0), TH_ARG(1)))
TH_DEFINE_ISCLOSE(th_isclose, float)
TH_DEFINE_ISCLOSE(th_isclose, double)
// |a - b| <= atol + rtol * |b|; equal infinities are close; NaNs only with equal_nan
struct IscloseOp {
  template <class T> __device__ __forceinline__ bool operator()(const THOpArgs &args, T a, T b) const {
    if constexpr (std::is_floating_point<T>::value) {
      return th_isclose(a, b, args.d[0], args.d[1], args.i[2]);
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
