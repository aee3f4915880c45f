/* generic/THTensorSpecial.c: torch.special's Bessel, Airy, zeta and orthogonal-polynomial loops */
#ifndef TH_KERNELS_SPECIAL_H
#define TH_KERNELS_SPECIAL_H
#include "THDispatch.h"
#define TH_SPECIAL_UNARY_OPS(_) _(bessel_j0) _(bessel_j1) _(bessel_y0) _(bessel_y1) _(modified_bessel_i0) \
  _(modified_bessel_i1) _(modified_bessel_k0) _(modified_bessel_k1) _(scaled_modified_bessel_k0)            \
  _(scaled_modified_bessel_k1) _(spherical_bessel_j0) _(airy_ai)
#define TH_SPECIAL_BINARY_OPS(_) _(zeta) _(chebyshev_t) _(chebyshev_u) _(chebyshev_v) _(chebyshev_w)        \
  _(shifted_chebyshev_t) _(shifted_chebyshev_u) _(shifted_chebyshev_v) _(shifted_chebyshev_w) _(hermite_h)   \
  _(hermite_he) _(laguerre_l) _(legendre_p)
#define TH_SPECIAL_DECLARE(N) TH_DECLARE_FLOATING(N##_loop)
TH_SPECIAL_UNARY_OPS(TH_SPECIAL_DECLARE)
TH_SPECIAL_BINARY_OPS(TH_SPECIAL_DECLARE)
#undef TH_SPECIAL_DECLARE
#endif
