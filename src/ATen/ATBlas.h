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
/* row-major C = alpha * op(A) @ op(B) + beta * C for float (dbl=false) or
 * double, split over cthtorch's threads when large; single-threaded inside
 * an OpenMP parallel region */
AT_API void at_gemm(bool dbl, bool ta, bool tb, int64_t M, int64_t N, int64_t K, double alpha, const void *A,
                    int64_t lda, const void *B, int64_t ldb, double beta, void *C, int64_t ldc);
/* A weight reused by many small-M float32 products (a recurrent layer's
 * per-step hidden GEMMs), packed once (TH/THGemmPacked.h): at_gemm_pack(b)
 * packs b (K x N, any strides) into a (panels, K, NR) float32 tensor, and
 * at_gemm_packed(a, packed, n, c) = c + a @ b for a (M x K), c None, (n,)
 * or (M, n). */
AT_API THTensor *at_gemm_pack(const THTensor *b);
AT_API THTensor *at_gemm_packed(const THTensor *a, const THTensor *packed, int64_t n, const THTensor *c);
#endif
