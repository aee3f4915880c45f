/* generic/THTensorBinary.c: gcd, lcm, heaviside, nextafter, ldexp, logaddexp(2), igamma(c)
 * (the other binary kernels are in THKernels.h) */
#ifndef TH_KERNELS_BINARY_H
#define TH_KERNELS_BINARY_H
#include "THDispatch.h"
TH_DECLARE_INTEGRAL(gcd_loop) TH_DECLARE_INTEGRAL(lcm_loop) TH_DECLARE_ALL(heaviside_loop)
TH_DECLARE_FLOATING(nextafter_loop) TH_DECLARE_FLOATING(ldexp_loop)
TH_DECLARE_FLOATING(logaddexp_loop) TH_DECLARE_FLOATING(logaddexp2_loop)
TH_DECLARE_FLOATING(igamma_loop) TH_DECLARE_FLOATING(igammac_loop)
#endif
