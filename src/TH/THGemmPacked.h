/* float32 GEMM with the right operand packed once and reused: C = alpha A B + beta C
 * for a small M (a batch) against a weight B (K x N) that many calls share,
 * as a recurrent layer's per-step hidden products do. OpenBLAS packs B again
 * on every call, which at M = 32 costs a large part of each call; here the
 * caller packs B once (THGemmPacked_pack) and every product runs a
 * register-blocked microkernel over the packed panels, reading A in place.
 *
 * Packed layout: ceil(N / THGEMM_NR) column panels, each K rows of THGEMM_NR
 * floats (row k of the panel = B[k, j0 .. j0+NR-1], zero past N). */
#ifndef TH_GEMM_PACKED_H
#define TH_GEMM_PACKED_H
#include "THGeneral.h"

#define THGEMM_NR 24

/* floats the packed form of a K x N operand takes */
TH_API int64_t THGemmPacked_size(int64_t K, int64_t N);
/* packs B[k, n] = b[k * sk + n * sn] (any strides) into packed */
TH_API void THGemmPacked_pack(int64_t K, int64_t N, const float *b, int64_t sk, int64_t sn, float *packed);
/* C[M, N] (row stride ldc) = alpha * A[M, K] (row stride lda, unit column
 * stride) @ B + beta * C; beta == 0 never reads C. nthreads > 1 splits the
 * column panels across OpenMP threads when the product is large enough. */
TH_API void THGemmPacked_run(int64_t M, int64_t N, int64_t K, float alpha, const float *a, int64_t lda,
                             const float *packed, float beta, float *c, int64_t ldc, int nthreads);
/* C[M, N] (row stride ldc) = alpha * A op(B) + beta * C for float32, A(i, k) = a[i * lda + k],
 * op(B)(k, j) = b[k * ldb + j] (b[j * ldb + k] when tb): A read in place, B packed block by block on
 * the way, nthreads splitting C's columns (its rows when it has few columns). beta == 0 never reads C. */
TH_API void THGemm_sgemm(bool tb, int64_t M, int64_t N, int64_t K, float alpha, const float *a, int64_t lda,
                         const float *b, int64_t ldb, float beta, float *c, int64_t ldc, int nthreads);
/* "avx2" or "portable": the microkernel the cpu selected (or
 * CTHTORCH_GEMM_PACKED=portable forced, for tests of the fallback) */
TH_API const char *THGemmPacked_kernel(void);

#endif
