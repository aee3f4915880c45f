/* Binary pointwise ops with their own dtype rules: gcd, lcm (integers),
 * heaviside (equal dtypes), nextafter, ldexp, logaddexp, logaddexp2, igamma,
 * igammac (floats).
 * out may be NULL (allocate) or self (in-place). */
#ifndef AT_BINARY_H
#define AT_BINARY_H
#include "ATen.h"

AT_API THTensor *at_gcd(const THTensor *self, const THTensor *other, THTensor *out);
AT_API THTensor *at_lcm(const THTensor *self, const THTensor *other, THTensor *out);
AT_API THTensor *at_heaviside(const THTensor *self, const THTensor *values, THTensor *out);
AT_API THTensor *at_nextafter(const THTensor *self, const THTensor *other, THTensor *out);
AT_API THTensor *at_ldexp(const THTensor *self, const THTensor *other, THTensor *out);
AT_API THTensor *at_logaddexp(const THTensor *self, const THTensor *other, THTensor *out);
AT_API THTensor *at_logaddexp2(const THTensor *self, const THTensor *other, THTensor *out);
/* the regularized lower (P) and upper (Q) incomplete gamma of (self = a, other = x) */
AT_API THTensor *at_igamma(const THTensor *self, const THTensor *other, THTensor *out);
AT_API THTensor *at_igammac(const THTensor *self, const THTensor *other, THTensor *out);
#endif
