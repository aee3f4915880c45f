/* Activation kernels (generic/THTensorActivation.c), floating dtypes. */
#ifndef TH_KERNELS_ACTIVATION_H
#define TH_KERNELS_ACTIVATION_H
#include "THDispatch.h"

#define TH_ACTIVATIONS(_) _(gelu) _(silu) _(leaky_relu) _(elu) _(hardtanh) _(softplus) _(hardsigmoid) \
  _(hardswish) _(mish) _(log_sigmoid) _(threshold) _(gelu2) _(mish2)
#define TH_DECL_ACT(n) TH_DECLARE_FLOATING(n##_loop) TH_DECLARE_FLOATING(n##_backward_loop)
TH_ACTIVATIONS(TH_DECL_ACT)

#endif
