/* Activation functions and their backward kernels (floating dtypes).
 * Forward: x -> f(x; args). Backward: (grad, x) -> grad * f'(x; args). */
#include "../THLoops.h"
#include "../THMath.h"   /* vector libm: the simd loops below */

#define C(v) ((compute_t)(v))
#define SQRT1_2 C(0.70710678118654752440)
#define GELU_K C(0.79788456080286535588)     /* sqrt(2/pi) */
#define INV_SQRT_2PI C(0.39894228040143267794)

static inline compute_t THTensor_(sigm)(compute_t x) { return C(1) / (C(1) + exp(-x)); }
static inline compute_t THTensor_(softplus1)(compute_t x) { return x > C(20) ? x : log1p(exp(x)); }

/* gelu: arg 0 = 1 for the tanh approximation */
TH_SIMD_UNARY_LOOP(gelu_loop, TH_ARG(0) != C(0)
    ? C(0.5) * x * (C(1) + TH_TANH(GELU_K * (x + C(0.044715) * x * x * x)))
    : x * C(0.5) * (C(1) + TH_ERF(x * SQRT1_2)))
static inline compute_t THTensor_(gelu_grad)(compute_t x, bool approx) {
  if (approx) {
    compute_t inner = GELU_K * (x + C(0.044715) * x * x * x), t = TH_TANH(inner);
    return C(0.5) * (C(1) + t) + C(0.5) * x * (C(1) - t * t) * GELU_K * (C(1) + C(3) * C(0.044715) * x * x);
  }
  return C(0.5) * (C(1) + TH_ERF(x * SQRT1_2)) + x * TH_EXP(C(-0.5) * x * x) * INV_SQRT_2PI;
}
TH_SIMD_BINARY_LOOP(gelu_backward_loop, a * THTensor_(gelu_grad)(b, TH_ARG(0) != C(0)))

TH_SIMD_UNARY_LOOP(silu_loop, x * THTensor_(sigm)(x))
TH_SIMD_BINARY_LOOP(silu_backward_loop, a * THTensor_(sigm)(b) * (C(1) + b * (C(1) - THTensor_(sigm)(b))))

TH_SIMD_UNARY_LOOP(leaky_relu_loop, x > C(0) ? x : x * TH_ARG(0))
TH_SIMD_BINARY_LOOP(leaky_relu_backward_loop, b > C(0) ? a : a * TH_ARG(0))

/* elu family: args alpha, scale, input_scale */
TH_SIMD_UNARY_LOOP(elu_loop, x > C(0) ? TH_ARG(1) * x : TH_ARG(1) * TH_ARG(0) * (TH_EXP(x * TH_ARG(2)) - C(1)))
TH_SIMD_BINARY_LOOP(elu_backward_loop, b > C(0) ? a * TH_ARG(1) : a * TH_ARG(1) * TH_ARG(0) * TH_ARG(2) * TH_EXP(b * TH_ARG(2)))

TH_SIMD_UNARY_LOOP(hardtanh_loop, x < TH_ARG(0) ? TH_ARG(0) : (x > TH_ARG(1) ? TH_ARG(1) : x))
TH_SIMD_BINARY_LOOP(hardtanh_backward_loop, (b > TH_ARG(0) && b < TH_ARG(1)) ? a : C(0))

/* softplus: args beta, threshold */
TH_SIMD_UNARY_LOOP(softplus_loop, x * TH_ARG(0) > TH_ARG(1) ? x : TH_LOG1P(TH_EXP(x * TH_ARG(0))) / TH_ARG(0))
TH_BINARY_LOOP(softplus_backward_loop, b * TH_ARG(0) > TH_ARG(1) ? a : a * THTensor_(sigm)(b * TH_ARG(0)))

TH_SIMD_UNARY_LOOP(hardsigmoid_loop, x <= C(-3) ? C(0) : (x >= C(3) ? C(1) : x / C(6) + C(0.5)))
TH_SIMD_BINARY_LOOP(hardsigmoid_backward_loop, (b > C(-3) && b < C(3)) ? a / C(6) : C(0))

TH_SIMD_UNARY_LOOP(hardswish_loop, x <= C(-3) ? C(0) : (x >= C(3) ? x : x * (x + C(3)) / C(6)))
TH_SIMD_BINARY_LOOP(hardswish_backward_loop, b < C(-3) ? C(0) : (b > C(3) ? a : a * (C(2) * b + C(3)) / C(6)))

TH_UNARY_LOOP(mish_loop, x * tanh(THTensor_(softplus1)(x)))
static inline compute_t THTensor_(mish_grad)(compute_t x) {
  compute_t t = tanh(THTensor_(softplus1)(x));
  return t + x * THTensor_(sigm)(x) * (C(1) - t * t);
}
TH_BINARY_LOOP(mish_backward_loop, a * THTensor_(mish_grad)(b))

/* second derivatives, for double backward: "gelu2"/"mish2" map x to f'(x)
 * and (grad, x) to grad * f''(x) */
static inline compute_t THTensor_(gelu_grad2)(compute_t x, bool approx) {
  if (approx) {
    compute_t u = GELU_K * (x + C(0.044715) * x * x * x), t = tanh(u), s = C(1) - t * t;
    compute_t du = GELU_K * (C(1) + C(3) * C(0.044715) * x * x), ddu = GELU_K * C(6) * C(0.044715) * x;
    return s * du + C(0.5) * x * s * (ddu - C(2) * t * du * du);
  }
  return exp(C(-0.5) * x * x) * INV_SQRT_2PI * (C(2) - x * x);
}
TH_UNARY_LOOP(gelu2_loop, THTensor_(gelu_grad)(x, TH_ARG(0) != C(0)))
TH_BINARY_LOOP(gelu2_backward_loop, a * THTensor_(gelu_grad2)(b, TH_ARG(0) != C(0)))
static inline compute_t THTensor_(mish_grad2)(compute_t x) {
  compute_t t = tanh(THTensor_(softplus1)(x)), s = THTensor_(sigm)(x);
  return (C(1) - t * t) * s * (C(2) + x * ((C(1) - s) - C(2) * t * s));
}
TH_UNARY_LOOP(mish2_loop, THTensor_(mish_grad)(x))
TH_BINARY_LOOP(mish2_backward_loop, a * THTensor_(mish_grad2)(b))

TH_UNARY_LOOP(log_sigmoid_loop, (x < C(0) ? x : C(0)) - log1p(exp(-fabs(x))))
TH_BINARY_LOOP(log_sigmoid_backward_loop, a * THTensor_(sigm)(-b))

/* threshold: args threshold, value; backward keeps grad where x > threshold */
TH_UNARY_LOOP(threshold_loop, x > TH_ARG(0) ? x : TH_ARG(1))
TH_BINARY_LOOP(threshold_backward_loop, b > TH_ARG(0) ? a : C(0))
#undef C
