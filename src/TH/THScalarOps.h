/* Scalar math of the elementwise ops, written once for two compilers:
 * gcc builds it into the generic CPU loops (src/TH/generic/), nvcc into the
 * CUDA kernels (src/THC/THCLoop*.cu), so the GPU computes what the CPU does.
 *
 * Conventions:
 *  - TH_HOSTDEV marks a function both sides call (__host__ __device__ under
 *    nvcc, nothing under gcc).
 *  - Expression macros (TH_OP_*) are written in terms of `compute_t`, the
 *    type arithmetic uses: the generic files define it per dtype, the CUDA
 *    functors as a local typedef. Plain libm names (exp, log1p, ...) are
 *    C's double functions under gcc (as the CPU kernels always called them)
 *    and the overloaded float/double math under nvcc.
 *  - TH_DEFINE_* macros generate a typed function (C has no overloads): the
 *    generic files instantiate one per dtype, THC one per compute type.
 * Plain C and C++: no _Generic, no C11 atomics here. */
#ifndef TH_SCALAR_OPS_H
#define TH_SCALAR_OPS_H

#include <stdbool.h>
#include <stdint.h>
#include <math.h>

#ifdef __CUDACC__
#define TH_HOSTDEV __host__ __device__
#else
#define TH_HOSTDEV
#endif

/* a * b + c rounded once, where torch's kernels fuse the two (add/sub with
 * alpha, lerp, addcmul, uniform's u * span + from): results that torch
 * matches bit for bit must not depend on whether the compiler contracts.
 * gcc contracted these only when the target had FMA (-march=native), so the
 * ASan build (baseline x86-64, -O1) rounded twice and gave other values.
 * With FMA instructions fma/fmaf are one instruction and vectorize; without,
 * glibc's fma is still correctly rounded. Integer types: plain arithmetic.
 * nvcc contracts a * b + c into one fma by default (--fmad=true). */
#ifdef __CUDACC__
#define TH_FMA(a, b, c) ((a) * (b) + (c))
#else
#define TH_FMA(a, b, c) _Generic((a) * (b) + (c), float: fmaf((a), (b), (c)), double: fma((a), (b), (c)), \
                                 default: (a) * (b) + (c))
#endif

/* Op parameters passed through `extra` (alpha, bounds, exponents...). */
typedef struct { double d[4]; int64_t i[4]; } THOpArgs;

/* ---- float16 / bfloat16 on the device: the twins of THGeneral.h's host
 * th_half2float / th_float2half / th_bf2float / th_float2bf, bit for bit
 * (round to nearest even; a bfloat16 NaN becomes 0x7fc0 as on the host) ---- */
#ifdef __CUDACC__
#include <cuda_fp16.h>
static __device__ inline float th_half2float_dev(uint16_t h) { return __half2float(__ushort_as_half(h)); }
static __device__ inline uint16_t th_float2half_dev(float f) { return __half_as_ushort(__float2half_rn(f)); }
static __device__ inline float th_bf2float_dev(uint16_t b) { return __uint_as_float((uint32_t)b << 16); }
static __device__ inline uint16_t th_float2bf_dev(float f) {
  uint32_t u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1)) >> 16);
}
#endif

/* ---- binary ---- */

/* Python's floor division, as PyTorch computes it: from fmod so that
 * a == b * q + r holds as closely as floating point allows. */
#define TH_DEFINE_FLOORDIV(NAME, T)                                             \
  static inline TH_HOSTDEV T NAME(T a, T b) {                                   \
    if (b == 0) return a / b;                                                   \
    T mod = fmod(a, b), div = (a - mod) / b;                                    \
    if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1;                           \
    T fl;                                                                       \
    if (div != 0) { fl = floor(div); if (div - fl > (T)0.5) fl += 1; }          \
    else fl = copysign((T)0, a / b);                                            \
    return fl;                                                                  \
  }
/* Python's modulo: the sign of the divisor */
#define TH_DEFINE_PYMOD(NAME, T)                                                \
  static inline TH_HOSTDEV T NAME(T a, T b) {                                   \
    T m = fmod(a, b);                                                           \
    if (m != 0 && ((b < 0) != (m < 0))) m += b;                                 \
    return m;                                                                   \
  }
/* Integer power by squaring; negative exponents give 0 except for |a| == 1. */
#define TH_DEFINE_IPOW(NAME, T, SIGNED)                                         \
  static inline TH_HOSTDEV T NAME(T a, T b) {                                   \
    if (SIGNED && (int64_t)b < 0) return a == 1 ? 1 : (a == (T)-1 ? ((b & 1) ? (T)-1 : 1) : 0); \
    uint64_t r = 1, base = (uint64_t)a; uint64_t e = (uint64_t)b;               \
    while (e) { if (e & 1) r *= base; base *= base; e >>= 1; }                  \
    return (T)r;                                                                \
  }
/* Euclid on |a|, |b| as torch's calc_gcd (|INT_MIN| stays INT_MIN) */
#define TH_DEFINE_GCD(NAME, T, SIGNED)                                          \
  static inline TH_HOSTDEV T NAME(T a, T b) {                                   \
    if (SIGNED) { if ((int64_t)a < 0) a = (T)(0 - (uint64_t)a); if ((int64_t)b < 0) b = (T)(0 - (uint64_t)b); } \
    while (a != 0) { T c = a; a = (T)(b % a); b = c; }                          \
    return b;                                                                   \
  }
/* |a / g * b|, the product wrapping in 64 bits and then to the dtype */
#define TH_DEFINE_LCM(NAME, GCD, T)                                             \
  static inline TH_HOSTDEV T NAME(T a, T b) {                                   \
    T g = GCD(a, b);                                                            \
    if (g == 0) return 0;                                                       \
    int64_t p = (int64_t)((uint64_t)(int64_t)(T)(a / g) * (uint64_t)(int64_t)b); \
    return (T)(p < 0 ? 0 - (uint64_t)p : (uint64_t)p);                          \
  }

/* ---- activations (generic/THTensorActivation.c, THCLoopActivation.cu) ----
 * Helpers are generated per type by TH_DEFINE_ACTIVATION_HELPERS(..., T),
 * where compute_t must name T (it is a macro in the generic files),
 * and named through TH_F(name) in the expressions (the generic file maps it
 * to THTensor_(name), THC to th_##name). Forward: x; backward: a is the
 * grad, b the input; TH_ARG(k) the op's parameters. */
#define TH_C(v) ((compute_t)(v))
#define TH_SQRT1_2 TH_C(0.70710678118654752440)
#define TH_GELU_K TH_C(0.79788456080286535588)     /* sqrt(2/pi) */
#define TH_INV_SQRT_2PI TH_C(0.39894228040143267794)

#define TH_DEFINE_ACTIVATION_HELPERS(SIGM, SOFTPLUS1, GELU_GRAD, GELU_GRAD2, MISH_GRAD, MISH_GRAD2, T) \
  static inline TH_HOSTDEV T SIGM(T x) { return (T)1 / ((T)1 + exp(-x)); }      \
  static inline TH_HOSTDEV T SOFTPLUS1(T x) { return x > (T)20 ? x : log1p(exp(x)); } \
  static inline TH_HOSTDEV T GELU_GRAD(T x, bool approx) {                       \
    if (approx) {                                                               \
      T inner = TH_GELU_K * (x + TH_C(0.044715) * x * x * x), t = TH_TANH(inner); \
      return TH_C(0.5) * (TH_C(1) + t) + TH_C(0.5) * x * (TH_C(1) - t * t) * TH_GELU_K * (TH_C(1) + TH_C(3) * TH_C(0.044715) * x * x); \
    }                                                                           \
    return TH_C(0.5) * (TH_C(1) + TH_ERF(x * TH_SQRT1_2)) + x * TH_EXP(TH_C(-0.5) * x * x) * TH_INV_SQRT_2PI; \
  }                                                                             \
  static inline TH_HOSTDEV T GELU_GRAD2(T x, bool approx) {                      \
    if (approx) {                                                               \
      T u = TH_GELU_K * (x + TH_C(0.044715) * x * x * x), t = tanh(u), s = TH_C(1) - t * t; \
      T du = TH_GELU_K * (TH_C(1) + TH_C(3) * TH_C(0.044715) * x * x), ddu = TH_GELU_K * TH_C(6) * TH_C(0.044715) * x; \
      return s * du + TH_C(0.5) * x * s * (ddu - TH_C(2) * t * du * du);       \
    }                                                                           \
    return exp(TH_C(-0.5) * x * x) * TH_INV_SQRT_2PI * (TH_C(2) - x * x);       \
  }                                                                             \
  static inline TH_HOSTDEV T MISH_GRAD(T x) {                                    \
    T t = tanh(SOFTPLUS1(x));                                                   \
    return t + x * SIGM(x) * ((T)1 - t * t);                                    \
  }                                                                             \
  static inline TH_HOSTDEV T MISH_GRAD2(T x) {                                   \
    T t = tanh(SOFTPLUS1(x)), s = SIGM(x);                                      \
    return ((T)1 - t * t) * s * ((T)2 + x * (((T)1 - s) - (T)2 * t * s));       \
  }

/* gelu: arg 0 = 1 for the tanh approximation */
#define TH_OP_GELU(x) (TH_ARG(0) != TH_C(0)                                     \
    ? TH_C(0.5) * (x) * (TH_C(1) + TH_TANH(TH_GELU_K * ((x) + TH_C(0.044715) * (x) * (x) * (x)))) \
    : (x) * TH_C(0.5) * (TH_C(1) + TH_ERF((x) * TH_SQRT1_2)))
#define TH_OP_GELU_BACKWARD(a, b) ((a) * TH_F(gelu_grad)(b, TH_ARG(0) != TH_C(0)))
#define TH_OP_SILU(x) ((x) * TH_F(sigm)(x))
/* silu's grad with the sigmoid in compute_t (float's vector expf), as torch's float kernel:
 * 0.6x the double-exp sigm's time; the forward keeps sigm, whose float expf form is 0 below -88 */
#define TH_SIGM_IN_T(x) (TH_C(1) / (TH_C(1) + TH_EXP(-(x))))
#define TH_OP_SILU_BACKWARD(a, b) ((a) * TH_SIGM_IN_T(b) * (TH_C(1) + (b) * (TH_C(1) - TH_SIGM_IN_T(b))))
#define TH_OP_LEAKY_RELU(x) ((x) > TH_C(0) ? (x) : (x) * TH_ARG(0))
#define TH_OP_LEAKY_RELU_BACKWARD(a, b) ((b) > TH_C(0) ? (a) : (a) * TH_ARG(0))
/* elu family: args alpha, scale, input_scale */
#define TH_OP_ELU(x) ((x) > TH_C(0) ? TH_ARG(1) * (x) : TH_ARG(1) * TH_ARG(0) * (TH_EXP((x) * TH_ARG(2)) - TH_C(1)))
#define TH_OP_ELU_BACKWARD(a, b) ((b) > TH_C(0) ? (a) * TH_ARG(1) : (a) * TH_ARG(1) * TH_ARG(0) * TH_ARG(2) * TH_EXP((b) * TH_ARG(2)))
#define TH_OP_HARDTANH(x) ((x) < TH_ARG(0) ? TH_ARG(0) : ((x) > TH_ARG(1) ? TH_ARG(1) : (x)))
#define TH_OP_HARDTANH_BACKWARD(a, b) (((b) > TH_ARG(0) && (b) < TH_ARG(1)) ? (a) : TH_C(0))
/* softplus: args beta, threshold */
#define TH_OP_SOFTPLUS(x) ((x) * TH_ARG(0) > TH_ARG(1) ? (x) : TH_LOG1P(TH_EXP((x) * TH_ARG(0))) / TH_ARG(0))
#define TH_OP_SOFTPLUS_BACKWARD(a, b) ((b) * TH_ARG(0) > TH_ARG(1) ? (a) : (a) * TH_F(sigm)((b) * TH_ARG(0)))
#define TH_OP_HARDSIGMOID(x) ((x) <= TH_C(-3) ? TH_C(0) : ((x) >= TH_C(3) ? TH_C(1) : (x) / TH_C(6) + TH_C(0.5)))
#define TH_OP_HARDSIGMOID_BACKWARD(a, b) (((b) > TH_C(-3) && (b) < TH_C(3)) ? (a) / TH_C(6) : TH_C(0))
#define TH_OP_HARDSWISH(x) ((x) <= TH_C(-3) ? TH_C(0) : ((x) >= TH_C(3) ? (x) : (x) * ((x) + TH_C(3)) / TH_C(6)))
#define TH_OP_HARDSWISH_BACKWARD(a, b) ((b) < TH_C(-3) ? TH_C(0) : ((b) > TH_C(3) ? (a) : (a) * (TH_C(2) * (b) + TH_C(3)) / TH_C(6)))
#define TH_OP_MISH(x) ((x) * tanh(TH_F(softplus1)(x)))
#define TH_OP_MISH_BACKWARD(a, b) ((a) * TH_F(mish_grad)(b))
/* second derivatives, for double backward: "gelu2"/"mish2" map x to f'(x)
 * and (grad, x) to grad * f''(x) */
#define TH_OP_GELU2(x) (TH_F(gelu_grad)(x, TH_ARG(0) != TH_C(0)))
#define TH_OP_GELU2_BACKWARD(a, b) ((a) * TH_F(gelu_grad2)(b, TH_ARG(0) != TH_C(0)))
#define TH_OP_MISH2(x) (TH_F(mish_grad)(x))
#define TH_OP_MISH2_BACKWARD(a, b) ((a) * TH_F(mish_grad2)(b))
#define TH_OP_LOG_SIGMOID(x) (((x) < TH_C(0) ? (x) : TH_C(0)) - log1p(exp(-fabs(x))))
#define TH_OP_LOG_SIGMOID_BACKWARD(a, b) ((a) * TH_F(sigm)(-(b)))
/* threshold: args threshold, value; backward keeps grad where x > threshold */
#define TH_OP_THRESHOLD(x) ((x) > TH_ARG(0) ? (x) : TH_ARG(1))
#define TH_OP_THRESHOLD_BACKWARD(a, b) ((b) > TH_ARG(0) ? (a) : TH_C(0))

/* ---- unary, binary, pointwise (generic/THTensor{Unary,Binary,Pointwise}.c,
 * THCLoop{Unary,Binary,Pointwise}.cu): x the input, a/b/c the operands ---- */
#define TH_OP_RSQRT(x) (TH_C(1) / sqrt(x))
#define TH_OP_SIGMOID(x) (TH_C(1) / (TH_C(1) + TH_EXP(-(x))))
#define TH_OP_FRAC(x) ((x) - trunc(x))
/* sign(nan) is 0 and relu keeps -0.0 and nan, as PyTorch's */
#define TH_OP_FSIGN(x) ((compute_t)(((x) > 0) - ((x) < 0)))
#define TH_OP_FRELU(x) ((x) < 0 ? TH_C(0) : (x))
/* sin(pi x) / (pi x), 1 at 0 */
#define TH_OP_SINC(x) ((x) == 0 ? TH_C(1) : TH_SIN(TH_C(M_PI) * (x)) / (TH_C(M_PI) * (x)))
#define TH_OP_HEAVISIDE(a, b) ((a) == 0 ? (b) : (compute_t)((a) > 0))
/* log(exp(a) + exp(b)) shifted by the max; equal infinities give themselves.
 * exp2(-d) is exp(-d ln 2) so both CPU loops run on the vector exp/log1p */
#define TH_LN2 TH_C(0.6931471805599453)
#define TH_OP_LOGADDEXP(a, b) ((isinf(a) && (a) == (b)) ? (a) \
    : ((a) > (b) ? (a) : (b)) + TH_LOG1P(TH_EXP((compute_t)-fabs((a) - (b)))))
#define TH_OP_LOGADDEXP2(a, b) ((isinf(a) && (a) == (b)) ? (a) \
    : ((a) > (b) ? (a) : (b)) + TH_LOG1P(TH_EXP((compute_t)-fabs((a) - (b)) * TH_LN2)) / TH_LN2)
/* lerp(start, end, weight): the two-sided form keeps lerp(a, b, 1) == b exactly */
#define TH_OP_LERP(a, b, c) (fabs(c) < TH_C(0.5) ? TH_FMA((c), (b) - (a), (a)) : TH_FMA((a) - (b), TH_C(1) - (c), (b)))
/* (value * t1) / t2, then the sum: the order torch's kernel rounds in */
#define TH_OP_ADDCDIV(a, b, c, v) ((a) + (v) * (b) / (c))
#define TH_OP_ADDCMUL(a, b, c, v) TH_FMA((v) * (b), (c), (a))
#define TH_OP_NAN_TO_NUM(x, nan, posinf, neginf) (isnan(x) ? (nan) : (isinf(x) ? ((x) > 0 ? (posinf) : (neginf)) : (x)))
#define TH_OP_XLOGY(a, b) (isnan(b) ? (b) : ((a) == 0 ? TH_C(0) : (a) * log(b)))
/* scale = 10^|decimals|; pos: decimals >= 0 */
#define TH_OP_ROUND_DECIMALS(x, scale, pos) \
  ((pos) != 0 ? nearbyint((x) * (scale)) / (scale) : nearbyint((x) / (scale)) * (scale))
/* logit with the input clamped to [eps, 1 - eps] when clampit */
#define TH_OP_LOGIT(x, eps, clampit) ((clampit) \
    ? log(((x) < (eps) ? (eps) : ((x) > TH_C(1) - (eps) ? TH_C(1) - (eps) : (x))) / \
          (TH_C(1) - ((x) < (eps) ? (eps) : ((x) > TH_C(1) - (eps) ? TH_C(1) - (eps) : (x))))) \
    : log((x) / (TH_C(1) - (x))))
/* isclose: |a - b| <= atol + rtol * |b|; equal infinities are close; NaNs only with equal_nan */
#define TH_DEFINE_ISCLOSE(NAME, T)                                              \
  static inline TH_HOSTDEV bool NAME(T a, T b, double rtol, double atol, bool equal_nan) { \
    if (a == b) return true;                                                    \
    if (isnan(a) || isnan(b)) return equal_nan && isnan(a) && isnan(b);         \
    if (isinf(a) || isinf(b)) return false;                                     \
    return fabs((double)a - (double)b) <= atol + rtol * fabs((double)b);        \
  }

/* nextafter on float16/bfloat16 bit patterns, c10's steps (inf: 0x7c00 or
 * 0x7f80). Returns 0 for a NaN operand: the caller answers from + to. */
static inline TH_HOSTDEV int th_nextafter16(uint16_t *from, uint16_t to, uint16_t inf) {
  const uint16_t sign = 0x8000;
  uint16_t af = *from & (uint16_t)~sign, at = to & (uint16_t)~sign;
  if (af > inf || at > inf) return 0;
  if (*from == to) return 1;
  if (af == 0) {
    if (at == 0) *from = to;
    else *from = (uint16_t)((to & sign) | 1);
  } else if (af > at || ((*from ^ to) & sign)) {
    (*from)--;
  } else {
    (*from)++;
  }
  return 1;
}

#endif
