/* Pointwise ops with parameters or three inputs: clamp, lerp, addcmul/addcdiv, nan_to_num, isclose, logit,
 * xlogy, round(decimals) (src/ATen/ATPointwise.c; the arithmetic ops are declared in ATen.h). */
#ifndef AT_POINTWISE_H
#define AT_POINTWISE_H
#include "ATen.h"

/* square(x) = x * x; a bool x squares to int64, as pow(x, 2) */
AT_API THTensor *at_square(const THTensor *self, THTensor *out);
AT_API THTensor *at_clamp(const THTensor *self, ATOptScalar min, ATOptScalar max, THTensor *out);
AT_API THTensor *at_clamp_tensor(const THTensor *self, const THTensor *min, const THTensor *max, THTensor *out);
AT_API THTensor *at_lerp(const THTensor *self, const THTensor *end, const THTensor *weight, THTensor *out);
AT_API THTensor *at_addcmul(const THTensor *self, const THTensor *t1, const THTensor *t2, ATScalar value, THTensor *out);
AT_API THTensor *at_addcdiv(const THTensor *self, const THTensor *t1, const THTensor *t2, ATScalar value, THTensor *out);
AT_API THTensor *at_nan_to_num(const THTensor *self, ATOptDouble nan, ATOptDouble posinf, ATOptDouble neginf, THTensor *out);
AT_API THTensor *at_isclose(const THTensor *a, const THTensor *b, double rtol, double atol, bool equal_nan);
AT_API THTensor *at_logit(const THTensor *self, ATOptDouble eps, THTensor *out);
AT_API THTensor *at_xlogy(const THTensor *self, const THTensor *other, THTensor *out);
AT_API THTensor *at_round_decimals(const THTensor *self, int64_t decimals, THTensor *out);
AT_API int at_equal(const THTensor *a, const THTensor *b);
/* trigamma of self (psi_1), computed in double */
AT_API THTensor *at_trigamma(const THTensor *self);
AT_API THTensor *at_polygamma_n(int64_t n, const THTensor *self);
#endif
