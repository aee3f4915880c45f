/* Activation functions and their backward kernels (floating dtypes).
 * Forward: x -> f(x; args). Backward: (grad, x) -> grad * f'(x; args).
 * The math is THScalarOps.h's, shared with the CUDA kernels. */
#include "../THLoops.h"
#include "../THMath.h"   /* vector libm: the simd loops below */

TH_DEFINE_ACTIVATION_HELPERS(THTensor_(sigm), THTensor_(softplus1), THTensor_(gelu_grad), THTensor_(gelu_grad2),
                             THTensor_(mish_grad), THTensor_(mish_grad2), compute_t)
#undef TH_F
#define TH_F(n) THTensor_(n)

TH_VEC_UNARY_LOOP(gelu_loop, TH_OP_GELU(x), _Pragma("omp simd"), TH_VEC_GELU, TH_ARG(0) == 0)
TH_SIMD_BINARY_LOOP(gelu_backward_loop, TH_OP_GELU_BACKWARD(a, b))
TH_VEC_UNARY_LOOP(silu_loop, TH_OP_SILU(x), _Pragma("omp simd"), TH_VEC_SILU, 1)
TH_SIMD_BINARY_LOOP(silu_backward_loop, TH_OP_SILU_BACKWARD(a, b))
TH_SIMD_UNARY_LOOP(leaky_relu_loop, TH_OP_LEAKY_RELU(x))
TH_SIMD_BINARY_LOOP(leaky_relu_backward_loop, TH_OP_LEAKY_RELU_BACKWARD(a, b))
TH_SIMD_UNARY_LOOP(elu_loop, TH_OP_ELU(x))
TH_SIMD_BINARY_LOOP(elu_backward_loop, TH_OP_ELU_BACKWARD(a, b))
TH_SIMD_UNARY_LOOP(hardtanh_loop, TH_OP_HARDTANH(x))
TH_SIMD_BINARY_LOOP(hardtanh_backward_loop, TH_OP_HARDTANH_BACKWARD(a, b))
TH_SIMD_UNARY_LOOP(softplus_loop, TH_OP_SOFTPLUS(x))
TH_BINARY_LOOP(softplus_backward_loop, TH_OP_SOFTPLUS_BACKWARD(a, b))
TH_SIMD_UNARY_LOOP(hardsigmoid_loop, TH_OP_HARDSIGMOID(x))
TH_SIMD_BINARY_LOOP(hardsigmoid_backward_loop, TH_OP_HARDSIGMOID_BACKWARD(a, b))
TH_SIMD_UNARY_LOOP(hardswish_loop, TH_OP_HARDSWISH(x))
TH_SIMD_BINARY_LOOP(hardswish_backward_loop, TH_OP_HARDSWISH_BACKWARD(a, b))
TH_VEC_UNARY_LOOP(mish_loop, TH_OP_MISH(x), , TH_VEC_MISH, 1)
TH_BINARY_LOOP(mish_backward_loop, TH_OP_MISH_BACKWARD(a, b))
TH_UNARY_LOOP(gelu2_loop, TH_OP_GELU2(x))
TH_BINARY_LOOP(gelu2_backward_loop, TH_OP_GELU2_BACKWARD(a, b))
TH_UNARY_LOOP(mish2_loop, TH_OP_MISH2(x))
TH_BINARY_LOOP(mish2_backward_loop, TH_OP_MISH2_BACKWARD(a, b))
TH_UNARY_LOOP(log_sigmoid_loop, TH_OP_LOG_SIGMOID(x))
TH_BINARY_LOOP(log_sigmoid_backward_loop, TH_OP_LOG_SIGMOID_BACKWARD(a, b))
TH_UNARY_LOOP(threshold_loop, TH_OP_THRESHOLD(x))
TH_BINARY_LOOP(threshold_backward_loop, TH_OP_THRESHOLD_BACKWARD(a, b))
