// Activation kernels and their backward loops on the GPU (floating dtypes),
// from the expressions THScalarOps.h shares with generic/THTensorActivation.c.
#include "THCLoop.cuh"
#include "../TH/THMath.h"

// the helpers' constants are written in compute_t, as in the generic file
#define compute_t float
TH_DEFINE_ACTIVATION_HELPERS(th_sigm, th_softplus1, th_gelu_grad, th_gelu_grad2, th_mish_grad, th_mish_grad2, float)
#undef compute_t
#define compute_t double
TH_DEFINE_ACTIVATION_HELPERS(th_sigm, th_softplus1, th_gelu_grad, th_gelu_grad2, th_mish_grad, th_mish_grad2, double)
#undef compute_t
#define TH_F(n) th_##n

#define THC_ACT(NAME, OP)                                      \
  THC_UNARY_OP(NAME##Op, TH_OP_##OP(x))                        \
  THC_BINARY_OP(NAME##BackwardOp, TH_OP_##OP##_BACKWARD(a, b))
THC_ACT(Gelu, GELU) THC_ACT(Silu, SILU) THC_ACT(LeakyRelu, LEAKY_RELU) THC_ACT(Elu, ELU)
THC_ACT(Hardtanh, HARDTANH) THC_ACT(Softplus, SOFTPLUS) THC_ACT(Hardsigmoid, HARDSIGMOID)
THC_ACT(Hardswish, HARDSWISH) THC_ACT(Mish, MISH) THC_ACT(LogSigmoid, LOG_SIGMOID)
THC_ACT(Threshold, THRESHOLD) THC_ACT(Gelu2, GELU2) THC_ACT(Mish2, MISH2)

#define THC_E_ACT(NAME, CNAME)                                \
  THC_FLOATING(THC_E_UNARY, NAME##_loop, CNAME##Op)           \
  THC_FLOATING(THC_E_BINARY, NAME##_backward_loop, CNAME##BackwardOp)
const THCKernel thc_kernels_activation[] = {
  THC_E_ACT(gelu, Gelu) THC_E_ACT(silu, Silu) THC_E_ACT(leaky_relu, LeakyRelu) THC_E_ACT(elu, Elu)
  THC_E_ACT(hardtanh, Hardtanh) THC_E_ACT(softplus, Softplus) THC_E_ACT(hardsigmoid, Hardsigmoid)
  THC_E_ACT(hardswish, Hardswish) THC_E_ACT(mish, Mish) THC_E_ACT(log_sigmoid, LogSigmoid)
  THC_E_ACT(threshold, Threshold) THC_E_ACT(gelu2, Gelu2) THC_E_ACT(mish2, Mish2)
};
const size_t thc_nkernels_activation = sizeof thc_kernels_activation / sizeof thc_kernels_activation[0];
