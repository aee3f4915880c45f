/* torch.special's Bessel (J, Y, I, K, scaled K, spherical j0), Airy Ai, Hurwitz
 * zeta and orthogonal polynomials (Chebyshev T U V W and their shifted forms,
 * Hermite H and He, Laguerre, Legendre of (x, n)). Integer and bool inputs
 * compute in the default float dtype; float16/bfloat16 and complex are
 * refused, as torch's CPU kernels refuse them. out may be NULL or self. */
#ifndef AT_SPECIAL_H
#define AT_SPECIAL_H
#include "ATen.h"

#define AT_SPECIAL_UNARY_DECL(N) AT_API THTensor *at_special_##N(const THTensor *self, THTensor *out);
#define AT_SPECIAL_BINARY_DECL(N) AT_API THTensor *at_special_##N(const THTensor *self, const THTensor *other, THTensor *out);
AT_SPECIAL_UNARY_DECL(bessel_j0) AT_SPECIAL_UNARY_DECL(bessel_j1) AT_SPECIAL_UNARY_DECL(bessel_y0)
AT_SPECIAL_UNARY_DECL(bessel_y1) AT_SPECIAL_UNARY_DECL(modified_bessel_i0) AT_SPECIAL_UNARY_DECL(modified_bessel_i1)
AT_SPECIAL_UNARY_DECL(modified_bessel_k0) AT_SPECIAL_UNARY_DECL(modified_bessel_k1)
AT_SPECIAL_UNARY_DECL(scaled_modified_bessel_k0) AT_SPECIAL_UNARY_DECL(scaled_modified_bessel_k1)
AT_SPECIAL_UNARY_DECL(spherical_bessel_j0) AT_SPECIAL_UNARY_DECL(airy_ai)
AT_SPECIAL_BINARY_DECL(zeta)
AT_SPECIAL_BINARY_DECL(chebyshev_polynomial_t) AT_SPECIAL_BINARY_DECL(chebyshev_polynomial_u)
AT_SPECIAL_BINARY_DECL(chebyshev_polynomial_v) AT_SPECIAL_BINARY_DECL(chebyshev_polynomial_w)
AT_SPECIAL_BINARY_DECL(shifted_chebyshev_polynomial_t) AT_SPECIAL_BINARY_DECL(shifted_chebyshev_polynomial_u)
AT_SPECIAL_BINARY_DECL(shifted_chebyshev_polynomial_v) AT_SPECIAL_BINARY_DECL(shifted_chebyshev_polynomial_w)
AT_SPECIAL_BINARY_DECL(hermite_polynomial_h) AT_SPECIAL_BINARY_DECL(hermite_polynomial_he)
AT_SPECIAL_BINARY_DECL(laguerre_polynomial_l) AT_SPECIAL_BINARY_DECL(legendre_polynomial_p)
#undef AT_SPECIAL_UNARY_DECL
#undef AT_SPECIAL_BINARY_DECL
#endif
