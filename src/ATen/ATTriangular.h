/* tril/triu: keep one triangle of the last two dims, zero the rest. */
#ifndef AT_TRIANGULAR_H
#define AT_TRIANGULAR_H
#include "ATen.h"

/* upper=false: tril (keep j - i <= diagonal); upper=true: triu (keep j - i >= diagonal).
 * out may be self (in-place). */
AT_API THTensor *at_tril(const THTensor *self, int64_t diagonal, THTensor *out);
AT_API THTensor *at_triu(const THTensor *self, int64_t diagonal, THTensor *out);
/* tril_indices/triu_indices: the (2, n) int64 coordinates of the kept triangle of a
 * row x col matrix, row-major (a negative row/col is PyTorch's error) */
AT_API THTensor *at_tri_indices(int64_t row, int64_t col, int64_t offset, bool lower);
#endif
