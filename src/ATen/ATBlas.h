/* Matrix products through OpenBLAS GEMM (float32/float64) and plain loops
 * (integer dtypes). Operands that are transposed views go to GEMM as
 * transposes, without a copy. */
#ifndef AT_BLAS_H
#define AT_BLAS_H
#include "ATen.h"

/* out = beta * self + alpha * (mat1 @ mat2); self may be NULL (beta ignored) */
AT_API THTensor *at_addmm(const THTensor *self, const THTensor *mat1, const THTensor *mat2, ATScalar beta,
                          ATScalar alpha, THTensor *out);
AT_API THTensor *at_mm(const THTensor *a, const THTensor *b, THTensor *out);
AT_API THTensor *at_bmm(const THTensor *a, const THTensor *b, THTensor *out);
AT_API THTensor *at_baddbmm(const THTensor *self, const THTensor *a, const THTensor *b, ATScalar beta,
                            ATScalar alpha, THTensor *out);
AT_API void at_blas_set_threads(int n);
#endif
