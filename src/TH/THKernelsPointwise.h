/* generic/THTensorPointwise.c */
#ifndef TH_KERNELS_POINTWISE_H
#define TH_KERNELS_POINTWISE_H
#include "THDispatch.h"
TH_DECLARE_NUMERIC(clamp_loop)
TH_DECLARE_FLOATING(lerp_loop) TH_DECLARE_FLOATING(lerp_scalar_loop) TH_DECLARE_FLOATING(addcdiv_loop) TH_DECLARE_NUMERIC(addcmul_loop)
TH_DECLARE_FLOATING(nan_to_num_loop) TH_DECLARE_FLOATING(logit_loop) TH_DECLARE_FLOATING(xlogy_loop)
TH_DECLARE_FLOATING(round_decimals_loop) TH_DECLARE_ALL(isclose_loop)
#endif
