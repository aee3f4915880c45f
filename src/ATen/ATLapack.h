/* LAPACK factorizations (OpenBLAS's LAPACKE) for float32/float64, batched
 * over the leading dims. These are the primitives; cthtorch/linalg builds the
 * public ops, their checks, error messages and gradients on top.
 *
 * Matrix results come back column-major (the transpose of a contiguous
 * tensor), as PyTorch's LAPACK results do. info tensors are int32 with the
 * batch shape: LAPACK's info per matrix (0 = success). */
#ifndef AT_LAPACK_H
#define AT_LAPACK_H
#include "ATen.h"

/* getrf: outs = {LU (..., m, n), pivots (..., min(m, n)) 1-based, info} */
AT_API int at_lapack_lu(THTensor **outs, const THTensor *A);
/* getrs: X with LU X = B (or LU^T X = B); B (..., n, k) with LU's batch shape */
AT_API THTensor *at_lapack_lu_solve(const THTensor *LU, const THTensor *pivots, const THTensor *B, bool trans);
/* potrf: outs = {L (or U when upper), info}; the other triangle is zero */
AT_API int at_lapack_cholesky(THTensor **outs, const THTensor *A, bool upper);
/* syevd: outs = {eigenvalues ascending, eigenvectors (empty unless compute_v), info} */
AT_API int at_lapack_eigh(THTensor **outs, const THTensor *A, bool upper, bool compute_v);
/* gesdd: outs = {U, S, Vh, info}; U and Vh are empty unless compute_uv */
AT_API int at_lapack_svd(THTensor **outs, const THTensor *A, bool full_matrices, bool compute_uv);
/* geqrf + orgqr: outs = {Q, R}; mode "reduced", "complete" or "r" (Q empty) */
AT_API int at_lapack_qr(THTensor **outs, const THTensor *A, const char *mode);
/* geqrf: outs = {a (..., m, n): R with the reflectors below its diagonal, tau (..., min(m, n))} */
AT_API int at_lapack_geqrf(THTensor **outs, const THTensor *A);
/* orgqr: Q (..., m, n) = H_0 ... H_{k-1} applied to the first n columns of I, the reflectors below A's
 * diagonal (..., m, n), m >= n >= k = tau.size(-1); tau (..., k) with A's batch shape and dtype */
AT_API THTensor *at_lapack_orgqr(const THTensor *A, const THTensor *tau);
/* sytrf (lower): outs = {LD (..., n, n) lower, pivots (..., n) int32 in LAPACK's signed form, info} */
AT_API int at_lapack_ldl_factor(THTensor **outs, const THTensor *A);
/* sytrs (lower): X with A X = B from sytrf's LD and pivots; B (..., n, k) with LD's batch shape */
AT_API THTensor *at_lapack_ldl_solve(const THTensor *LD, const THTensor *pivots, const THTensor *B);
/* trsm: X with A X = B (left) or X A = B, A triangular (..., n, n), B with A's batch */
AT_API THTensor *at_lapack_triangular_solve(const THTensor *A, const THTensor *B, bool upper, bool left,
                                            bool unitriangular);
/* LAPACK's 1-based row swaps (..., k) applied in order to 0..m-1: perm (..., m) int64,
 * with A = P L U for P[perm[c], c] = 1 */
AT_API THTensor *at_lu_pivots_to_permutation(const THTensor *pivots, int64_t m);
/* lu_unpack: outs = {P (..., m, m) or empty, L (..., m, k) unit lower, U (..., k, n) upper}
 * from getrf's LU (..., m, n), any dtype and strides; pivots int32 (..., k), batch broadcast */
AT_API int at_lu_unpack(THTensor **outs, const THTensor *LU, const THTensor *pivots, bool unpack_data,
                        bool unpack_pivots);
#endif
