/* Unary pointwise ops: sinc, i0, special_i0e/i1/i1e (integers compute in the default
 * float dtype) and frexp (mantissa and int32 exponent). */
#ifndef AT_UNARY_H
#define AT_UNARY_H
#include "ATen.h"

AT_API THTensor *at_sinc(const THTensor *self, THTensor *out);
AT_API THTensor *at_i0(const THTensor *self, THTensor *out);
AT_API THTensor *at_special_i1(const THTensor *self, THTensor *out);
AT_API THTensor *at_special_i1e(const THTensor *self, THTensor *out);
AT_API THTensor *at_special_i0e(const THTensor *self, THTensor *out);
/* outs[0] mantissa (self's dtype), outs[1] exponent (int32); -1 on error */
AT_API int at_frexp(THTensor **outs, const THTensor *self);
#endif
