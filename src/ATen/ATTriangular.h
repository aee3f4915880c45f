/* tril/triu: keep one triangle of the last two dims, zero the rest. */
#ifndef AT_TRIANGULAR_H
#define AT_TRIANGULAR_H
#include "ATen.h"

/* upper=false: tril (keep j - i <= diagonal); upper=true: triu (keep j - i >= diagonal).
 * out may be self (in-place). */
AT_API THTensor *at_tril(const THTensor *self, int64_t diagonal, THTensor *out);
AT_API THTensor *at_triu(const THTensor *self, int64_t diagonal, THTensor *out);
#endif
