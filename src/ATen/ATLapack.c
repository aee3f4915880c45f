/* LAPACK factorizations (see ATLapack.h).
 *
 * LAPACK works on column-major matrices. A contiguous tensor of shape
 * (..., cols, rows) holds each (rows x cols) matrix column-major, so every
 * routine copies its input into one (colmajor()), runs LAPACK per batch
 * entry in place, and returns the transposed view (as_matrix()). */
#include "ATLapack.h"
#include "ATTriangular.h"

#include <cblas.h>
#include <lapacke.h>
#include <string.h>

/* s/d twin of a LAPACKE routine; data pointers are void * so one call site
 * serves both dtypes. */
#define LAPACKE(dt, fn, ...) \
  ((dt) == TH_Float ? scipy_LAPACKE_s##fn(__VA_ARGS__) : scipy_LAPACKE_d##fn(__VA_ARGS__))

static int64_t imax(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t imin(int64_t a, int64_t b) { return a < b ? a : b; }

static int check_input(const THTensor *A, const char *name) {
  /* LAPACKE would otherwise reject NaN inputs itself; LAPACK propagates them as PyTorch does */
  scipy_LAPACKE_set_nancheck(0);
  if (A->dtype != TH_Float && A->dtype != TH_Double) {
    THError_set(TH_ERR_RUNTIME, "%s: expected a float or double tensor, got %s", name, THDtype_info[A->dtype].name);
    return -1;
  }
  if (A->ndim < 2) {
    THError_set(TH_ERR_RUNTIME, "%s: The input tensor A must have at least 2 dimensions.", name);
    return -1;
  }
  /* LAPACK takes int dimensions */
  if (A->sizes[A->ndim - 2] > INT32_MAX || A->sizes[A->ndim - 1] > INT32_MAX) {
    THError_set(TH_ERR_RUNTIME, "%s: matrix dimensions larger than %d are not supported", name, INT32_MAX);
    return -1;
  }
  return 0;
}

/* The routines that factor or solve with A read n x n matrices: a
 * non-square A (only a bad internal call can pass one) would be read past
 * its end. */
static int check_square(const THTensor *A, const char *name) {
  if (check_input(A, name) < 0) return -1;
  if (A->sizes[A->ndim - 2] != A->sizes[A->ndim - 1]) {
    THError_set(TH_ERR_RUNTIME, "%s: A must be batches of square matrices, but they are %lld by %lld matrices", name,
                (long long)A->sizes[A->ndim - 2], (long long)A->sizes[A->ndim - 1]);
    return -1;
  }
  return 0;
}

static int64_t nbatch(const THTensor *A) {
  int64_t b = 1;
  for (int d = 0; d < A->ndim - 2; d++) b *= A->sizes[d];
  return b;
}

/* A new tensor with A's batch dims followed by the given tail dims. */
static THTensor *new_batched(THDtype dt, const THTensor *A, int ntail, const int64_t *tail) {
  int64_t sizes[TH_MAX_DIMS];
  int nb = A->ndim - 2;
  if (nb > 0) memcpy(sizes, A->sizes, nb * sizeof(int64_t));
  if (ntail > 0) memcpy(sizes + nb, tail, ntail * sizeof(int64_t));   /* tail is NULL when empty */
  THTensor *t = THTensor_new(dt, nb + ntail, sizes);
  if (t) memset(THTensor_data(t), 0, THTensor_numel(t) * THDtype_size(dt));
  return t;
}

/* Zeroed storage for (..., rows, cols) matrices, column-major. */
static THTensor *new_colmajor(THDtype dt, const THTensor *A, int64_t rows, int64_t cols) {
  return new_batched(dt, A, 2, (int64_t[]){ cols, rows });
}

/* A's matrices copied column-major (a fresh buffer LAPACK may overwrite). */
static THTensor *colmajor(const THTensor *A) {
  THTensor *w = new_colmajor(A->dtype, A, A->sizes[A->ndim - 2], A->sizes[A->ndim - 1]);
  THTensor *tv = w ? at_transpose(A, A->ndim - 2, A->ndim - 1) : NULL;
  if (!tv || at_copy_(w, tv) < 0) { THTensor_free(w); THTensor_free(tv); return NULL; }
  THTensor_free(tv);
  return w;
}

/* The (..., rows, cols) view of column-major storage; takes w's reference. */
static THTensor *as_matrix(THTensor *w) {
  if (!w) return NULL;
  THTensor *r = at_transpose(w, w->ndim - 2, w->ndim - 1);
  THTensor_free(w);
  return r;
}

static char *mat(THTensor *w, int64_t b, int64_t per) {
  return THTensor_data(w) + b * per * (int64_t)THDtype_size(w->dtype);
}

/* LAPACKE's own failures (bad argument, out of memory) */
static int lapack_failed(int info, const char *routine) {
  if (info >= 0) return 0;
  if (info == LAPACK_WORK_MEMORY_ERROR || info == LAPACK_TRANSPOSE_MEMORY_ERROR)
    THError_set(TH_ERR_MEMORY, "%s: out of memory", routine);
  else
    THError_set(TH_ERR_RUNTIME, "%s: argument %d had an illegal value", routine, -info);
  return -1;
}

static void free_all(THTensor **ts, int n) {
  for (int i = 0; i < n; i++) { THTensor_free(ts[i]); ts[i] = NULL; }
}

int at_lapack_lu(THTensor **outs, const THTensor *A) {
  if (check_input(A, "linalg.lu_factor") < 0) return -1;
  int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1], k = imin(m, n), B = nbatch(A);
  outs[0] = colmajor(A);
  outs[1] = new_batched(TH_Int32, A, 1, &k);
  outs[2] = new_batched(TH_Int32, A, 0, NULL);
  if (!outs[0] || !outs[1] || !outs[2]) { free_all(outs, 3); return -1; }
  int32_t *piv = (int32_t *)THTensor_data(outs[1]), *info = (int32_t *)THTensor_data(outs[2]);
  for (int64_t b = 0; b < B && k > 0; b++) {
    info[b] = LAPACKE(A->dtype, getrf, LAPACK_COL_MAJOR, (int)m, (int)n, (void *)mat(outs[0], b, m * n),
                      (int)imax(1, m), piv + b * k);
    if (lapack_failed(info[b], "getrf") < 0) { free_all(outs, 3); return -1; }
  }
  outs[0] = as_matrix(outs[0]);
  return outs[0] ? 0 : (free_all(outs, 3), -1);
}

THTensor *at_lapack_lu_solve(const THTensor *LU, const THTensor *pivots, const THTensor *B, bool trans) {
  if (check_square(LU, "linalg.lu_solve") < 0 || check_input(B, "linalg.lu_solve") < 0) return NULL;
  int64_t n = LU->sizes[LU->ndim - 1], k = B->sizes[B->ndim - 1], nb = nbatch(LU);
  if (LU->dtype != B->dtype || nbatch(B) != nb || B->sizes[B->ndim - 2] != n || THTensor_numel(pivots) != nb * n) {
    THError_set(TH_ERR_RUNTIME, "linalg.lu_solve: incompatible shapes of LU, pivots and B");
    return NULL;
  }
  THTensor *a = colmajor(LU), *x = a ? colmajor(B) : NULL;
  THTensor *p = x ? at_to_dtype(pivots, TH_Int32, true) : NULL;   /* a contiguous copy */
  if (!p) { THTensor_free(a); THTensor_free(x); return NULL; }
  const int32_t *piv = (const int32_t *)THTensor_data(p);
  /* getrs swaps rows piv[i]-1 of B: a pivot outside [1, n] would write past it */
  for (int64_t i = 0; i < nb * n; i++)
    if (piv[i] < 1 || piv[i] > n) {
      THError_set(TH_ERR_RUNTIME, "linalg.lu_solve: pivots must be between 1 and %lld, got %d", (long long)n, piv[i]);
      THTensor_free(a); THTensor_free(x); THTensor_free(p);
      return NULL;
    }
  for (int64_t b = 0; b < nb && n > 0 && k > 0; b++) {
    int info = LAPACKE(LU->dtype, getrs, LAPACK_COL_MAJOR, trans ? 'T' : 'N', (int)n, (int)k,
                       (void *)mat(a, b, n * n), (int)n, piv + b * n, (void *)mat(x, b, n * k), (int)n);
    if (lapack_failed(info, "getrs") < 0) { THTensor_free(a); THTensor_free(x); THTensor_free(p); return NULL; }
  }
  THTensor_free(a);
  THTensor_free(p);
  return as_matrix(x);
}

int at_lapack_cholesky(THTensor **outs, const THTensor *A, bool upper) {
  if (check_square(A, "linalg.cholesky") < 0) return -1;
  int64_t n = A->sizes[A->ndim - 1], B = nbatch(A);
  outs[0] = colmajor(A);
  outs[1] = new_batched(TH_Int32, A, 0, NULL);
  if (!outs[0] || !outs[1]) { free_all(outs, 2); return -1; }
  int32_t *info = (int32_t *)THTensor_data(outs[1]);
  for (int64_t b = 0; b < B && n > 0; b++) {
    info[b] = LAPACKE(A->dtype, potrf, LAPACK_COL_MAJOR, upper ? 'U' : 'L', (int)n, (void *)mat(outs[0], b, n * n),
                      (int)n);
    if (lapack_failed(info[b], "potrf") < 0) { free_all(outs, 2); return -1; }
  }
  outs[0] = as_matrix(outs[0]);
  /* potrf leaves the other triangle as it was */
  THTensor *r = outs[0] ? (upper ? at_triu(outs[0], 0, outs[0]) : at_tril(outs[0], 0, outs[0])) : NULL;
  if (!r) { free_all(outs, 2); return -1; }
  THTensor_free(r);
  return 0;
}

int at_lapack_eigh(THTensor **outs, const THTensor *A, bool upper, bool compute_v) {
  if (check_square(A, "linalg.eigh") < 0) return -1;
  int64_t n = A->sizes[A->ndim - 1], B = nbatch(A);
  THTensor *w = colmajor(A);
  outs[0] = new_batched(A->dtype, A, 1, &n);
  outs[2] = new_batched(TH_Int32, A, 0, NULL);
  if (!w || !outs[0] || !outs[2]) { THTensor_free(w); outs[1] = NULL; free_all(outs, 3); return -1; }
  int32_t *info = (int32_t *)THTensor_data(outs[2]);
  for (int64_t b = 0; b < B && n > 0; b++) {
    info[b] = LAPACKE(A->dtype, syevd, LAPACK_COL_MAJOR, compute_v ? 'V' : 'N', upper ? 'U' : 'L', (int)n,
                      (void *)mat(w, b, n * n), (int)n, (void *)mat(outs[0], b, n));
    if (lapack_failed(info[b], "syevd") < 0) { THTensor_free(w); outs[1] = NULL; free_all(outs, 3); return -1; }
  }
  if (compute_v) outs[1] = as_matrix(w);
  else {
    THTensor_free(w);
    outs[1] = THTensor_new(A->dtype, 1, (int64_t[]){ 0 });
  }
  if (!outs[1]) { free_all(outs, 3); return -1; }
  return 0;
}

/* Identity in every matrix of column-major storage w (rows x cols): what a
 * full SVD of an empty matrix returns for its square factor. */
static void set_identity(THTensor *w, int64_t B, int64_t rows, int64_t cols) {
  size_t es = THDtype_size(w->dtype);
  for (int64_t b = 0; b < B; b++)
    for (int64_t i = 0; i < imin(rows, cols); i++) {
      char *p = mat(w, b, rows * cols) + (i + i * rows) * (int64_t)es;
      if (w->dtype == TH_Float) *(float *)p = 1.0f;
      else *(double *)p = 1.0;
    }
}

int at_lapack_svd(THTensor **outs, const THTensor *A, bool full_matrices, bool compute_uv) {
  if (check_input(A, "linalg.svd") < 0) return -1;
  int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1], k = imin(m, n), B = nbatch(A);
  int64_t ucol = compute_uv ? (full_matrices ? m : k) : 0, vrow = compute_uv ? (full_matrices ? n : k) : 0;
  THTensor *w = colmajor(A);
  outs[0] = new_colmajor(A->dtype, A, compute_uv ? m : 0, ucol);
  outs[1] = new_batched(A->dtype, A, 1, &k);
  outs[2] = new_colmajor(A->dtype, A, vrow, compute_uv ? n : 0);
  outs[3] = new_batched(TH_Int32, A, 0, NULL);
  if (!w || !outs[0] || !outs[1] || !outs[2] || !outs[3]) { THTensor_free(w); free_all(outs, 4); return -1; }
  int32_t *info = (int32_t *)THTensor_data(outs[3]);
  char jobz = compute_uv ? (full_matrices ? 'A' : 'S') : 'N';
  if (k == 0 && compute_uv) {
    set_identity(outs[0], B, m, ucol);
    set_identity(outs[2], B, vrow, n);
  }
  for (int64_t b = 0; b < B && k > 0; b++) {
    info[b] = LAPACKE(A->dtype, gesdd, LAPACK_COL_MAJOR, jobz, (int)m, (int)n, (void *)mat(w, b, m * n), (int)m,
                      (void *)mat(outs[1], b, k), (void *)(compute_uv ? mat(outs[0], b, m * ucol) : NULL),
                      (int)imax(1, m), (void *)(compute_uv ? mat(outs[2], b, vrow * n) : NULL), (int)imax(1, vrow));
    if (lapack_failed(info[b], "gesdd") < 0) { THTensor_free(w); free_all(outs, 4); return -1; }
  }
  THTensor_free(w);
  outs[0] = as_matrix(outs[0]);
  outs[2] = as_matrix(outs[2]);
  if (!outs[0] || !outs[2]) { free_all(outs, 4); return -1; }
  return 0;
}

int at_lapack_qr(THTensor **outs, const THTensor *A, const char *mode) {
  if (check_input(A, "linalg.qr") < 0) return -1;
  bool complete = strcmp(mode, "complete") == 0, ronly = strcmp(mode, "r") == 0;
  if (!complete && !ronly && strcmp(mode, "reduced") != 0) {
    THError_set(TH_ERR_RUNTIME, "qr received unrecognized mode '%s' but expected one of 'reduced' (default), 'r', "
                "or 'complete'", mode);
    return -1;
  }
  int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1], k = imin(m, n), B = nbatch(A);
  int64_t rrows = complete ? m : k, qcols = ronly ? 0 : (complete ? m : k);
  size_t es = THDtype_size(A->dtype);
  THTensor *w = colmajor(A), *tau = new_batched(A->dtype, A, 1, &k);
  outs[0] = new_colmajor(A->dtype, A, ronly ? 0 : m, qcols);
  outs[1] = new_colmajor(A->dtype, A, rrows, n);
  if (!w || !tau || !outs[0] || !outs[1]) { THTensor_free(w); THTensor_free(tau); free_all(outs, 2); return -1; }
  int failed = 0;
  for (int64_t b = 0; b < B && !failed; b++) {
    char *a = mat(w, b, m * n), *t = mat(tau, b, k), *r = mat(outs[1], b, rrows * n);
    int info = k > 0 ? LAPACKE(A->dtype, geqrf, LAPACK_COL_MAJOR, (int)m, (int)n, (void *)a, (int)m, (void *)t) : 0;
    if ((failed = lapack_failed(info, "geqrf")) < 0) break;
    for (int64_t j = 0; j < n; j++)   /* R: the upper triangle of the factored matrix */
      memcpy(r + j * rrows * es, a + j * m * es, imin(j + 1, rrows) * es);
    if (ronly || m == 0) continue;
    char *q = mat(outs[0], b, m * qcols);
    memcpy(q, a, imin(n, qcols) * m * es);   /* the reflectors, in the first columns */
    info = LAPACKE(A->dtype, orgqr, LAPACK_COL_MAJOR, (int)m, (int)qcols, (int)k, (void *)q, (int)m, (void *)t);
    failed = lapack_failed(info, "orgqr");
  }
  THTensor_free(w);
  THTensor_free(tau);
  if (failed) { free_all(outs, 2); return -1; }
  outs[0] = as_matrix(outs[0]);
  outs[1] = as_matrix(outs[1]);
  if (!outs[0] || !outs[1]) { free_all(outs, 2); return -1; }
  return 0;
}

/* geqrf alone: torch.geqrf's (a, tau), the reflectors below R's diagonal */
int at_lapack_geqrf(THTensor **outs, const THTensor *A) {
  if (check_input(A, "geqrf") < 0) return -1;
  int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1], k = imin(m, n), B = nbatch(A);
  outs[0] = colmajor(A);
  outs[1] = new_batched(A->dtype, A, 1, &k);
  if (!outs[0] || !outs[1]) { free_all(outs, 2); return -1; }
  for (int64_t b = 0; b < B && k > 0; b++) {
    int info = LAPACKE(A->dtype, geqrf, LAPACK_COL_MAJOR, (int)m, (int)n, (void *)mat(outs[0], b, m * n), (int)m,
                       (void *)mat(outs[1], b, k));
    if (lapack_failed(info, "geqrf") < 0) { free_all(outs, 2); return -1; }
  }
  outs[0] = as_matrix(outs[0]);
  return outs[0] ? 0 : (free_all(outs, 2), -1);
}

/* householder_product's forward: LAPACK's blocked orgqr over a column-major copy of A, per batch entry */
THTensor *at_lapack_orgqr(const THTensor *A, const THTensor *tau) {
  if (check_input(A, "torch.linalg.householder_product") < 0) return NULL;
  int64_t m = A->sizes[A->ndim - 2], n = A->sizes[A->ndim - 1], k = tau->ndim ? tau->sizes[tau->ndim - 1] : 0;
  int64_t B = nbatch(A);
  if (tau->dtype != A->dtype || tau->ndim != A->ndim - 1 || m < n || n < k || THTensor_numel(tau) != B * k) {
    THError_set(TH_ERR_RUNTIME, "torch.linalg.householder_product: incompatible shapes or dtypes of input and tau");
    return NULL;
  }
  THTensor *q = colmajor(A), *t = q ? at_contiguous(tau) : NULL;
  if (!t) { THTensor_free(q); return NULL; }
  for (int64_t b = 0; b < B && m > 0; b++) {
    int info = LAPACKE(A->dtype, orgqr, LAPACK_COL_MAJOR, (int)m, (int)n, (int)k, (void *)mat(q, b, m * n), (int)m,
                       (void *)mat(t, b, k));
    if (lapack_failed(info, "orgqr") < 0) { THTensor_free(q); THTensor_free(t); return NULL; }
  }
  THTensor_free(t);
  return as_matrix(q);
}

/* sytrf on the lower triangle (as torch calls it); the strict upper triangle,
 * which sytrf leaves as it found it, is zeroed so LD holds only the factor */
int at_lapack_ldl_factor(THTensor **outs, const THTensor *A) {
  if (check_square(A, "torch.linalg.ldl_factor_ex") < 0) return -1;
  int64_t n = A->sizes[A->ndim - 1], B = nbatch(A);
  size_t es = THDtype_size(A->dtype);
  outs[0] = colmajor(A);
  outs[1] = new_batched(TH_Int32, A, 1, &n);
  outs[2] = new_batched(TH_Int32, A, 0, NULL);
  if (!outs[0] || !outs[1] || !outs[2]) { free_all(outs, 3); return -1; }
  int32_t *piv = (int32_t *)THTensor_data(outs[1]), *info = (int32_t *)THTensor_data(outs[2]);
  for (int64_t b = 0; b < B && n > 0; b++) {
    char *a = mat(outs[0], b, n * n);
    info[b] = LAPACKE(A->dtype, sytrf, LAPACK_COL_MAJOR, 'L', (int)n, (void *)a, (int)n, piv + b * n);
    if (lapack_failed(info[b], "sytrf") < 0) { free_all(outs, 3); return -1; }
    for (int64_t j = 1; j < n; j++) memset(a + j * n * es, 0, j * es);   /* column j's rows above the diagonal */
  }
  outs[0] = as_matrix(outs[0]);
  return outs[0] ? 0 : (free_all(outs, 3), -1);
}

THTensor *at_lapack_ldl_solve(const THTensor *LD, const THTensor *pivots, const THTensor *B) {
  if (check_square(LD, "torch.linalg.ldl_solve") < 0 || check_input(B, "torch.linalg.ldl_solve") < 0) return NULL;
  int64_t n = LD->sizes[LD->ndim - 1], k = B->sizes[B->ndim - 1], nb = nbatch(LD);
  if (LD->dtype != B->dtype || nbatch(B) != nb || B->sizes[B->ndim - 2] != n || THTensor_numel(pivots) != nb * n) {
    THError_set(TH_ERR_RUNTIME, "torch.linalg.ldl_solve: incompatible shapes of LD, pivots and B");
    return NULL;
  }
  THTensor *a = colmajor(LD), *x = a ? colmajor(B) : NULL;
  THTensor *p = x ? at_to_dtype(pivots, TH_Int32, true) : NULL;   /* a contiguous copy */
  if (!p) { THTensor_free(a); THTensor_free(x); return NULL; }
  const int32_t *piv = (const int32_t *)THTensor_data(p);
  /* sytrs swaps rows |piv[i]|-1 of B: a pivot outside [-n, -1] u [1, n] would reach past it
   * (torch checks |pivot| >= 1 with its text; larger ones it passes on to LAPACK) */
  for (int64_t i = 0; i < nb * n; i++)
    if (piv[i] == 0 || piv[i] > n || piv[i] < -n) {
      if (piv[i] == 0)
        THError_set(TH_ERR_RUNTIME, "Pivots given to ldl_solve must all satisfy |pivot| >= 1. Did you properly pass "
                    "the result of ldl_factor?");
      else
        THError_set(TH_ERR_RUNTIME, "torch.linalg.ldl_solve: pivots must be between 1 and %lld in absolute value, "
                    "got %d", (long long)n, piv[i]);
      THTensor_free(a); THTensor_free(x); THTensor_free(p);
      return NULL;
    }
  for (int64_t b = 0; b < nb && n > 0 && k > 0; b++) {
    int info = LAPACKE(LD->dtype, sytrs, LAPACK_COL_MAJOR, 'L', (int)n, (int)k, (void *)mat(a, b, n * n), (int)n,
                       piv + b * n, (void *)mat(x, b, n * k), (int)n);
    if (lapack_failed(info, "sytrs") < 0) { THTensor_free(a); THTensor_free(x); THTensor_free(p); return NULL; }
  }
  THTensor_free(a);
  THTensor_free(p);
  return as_matrix(x);
}

THTensor *at_lapack_triangular_solve(const THTensor *A, const THTensor *B, bool upper, bool left,
                                     bool unitriangular) {
  if (check_square(A, "linalg.solve_triangular") < 0 || check_input(B, "linalg.solve_triangular") < 0) return NULL;
  int64_t n = A->sizes[A->ndim - 1], m = B->sizes[B->ndim - 2], k = B->sizes[B->ndim - 1], nb = nbatch(A);
  if (A->dtype != B->dtype || nbatch(B) != nb || (left ? m : k) != n) {
    THError_set(TH_ERR_RUNTIME, "linalg.solve_triangular: incompatible shapes of A and B");
    return NULL;
  }
  THTensor *a = colmajor(A), *x = a ? colmajor(B) : NULL;
  if (!x) { THTensor_free(a); return NULL; }
  /* trsm, unlike trtrs, does not stop at a zero diagonal: it gives inf/nan as PyTorch does */
  for (int64_t b = 0; b < nb && m > 0 && k > 0; b++) {
    enum CBLAS_SIDE side = left ? CblasLeft : CblasRight;
    enum CBLAS_UPLO uplo = upper ? CblasUpper : CblasLower;
    enum CBLAS_DIAG diag = unitriangular ? CblasUnit : CblasNonUnit;
    if (A->dtype == TH_Float)
      scipy_cblas_strsm(CblasColMajor, side, uplo, CblasNoTrans, diag, (int)m, (int)k, 1.0f,
                        (const float *)mat(a, b, n * n), (int)n, (float *)mat(x, b, m * k), (int)m);
    else
      scipy_cblas_dtrsm(CblasColMajor, side, uplo, CblasNoTrans, diag, (int)m, (int)k, 1.0,
                        (const double *)mat(a, b, n * n), (int)n, (double *)mat(x, b, m * k), (int)m);
  }
  THTensor_free(a);
  return as_matrix(x);
}

THTensor *at_lu_pivots_to_permutation(const THTensor *pivots, int64_t m) {
  if (pivots->ndim < 1) {
    THError_set(TH_ERR_RUNTIME, "lu_unpack: LU_pivots must have at least 1 dimension");
    return NULL;
  }
  if (m < 0) {
    THError_set(TH_ERR_RUNTIME, "lu_unpack: the number of rows must be non-negative, got %lld", (long long)m);
    return NULL;
  }
  int64_t k = pivots->sizes[pivots->ndim - 1], npiv = THTensor_numel(pivots);
  int64_t sizes[TH_MAX_DIMS];
  memcpy(sizes, pivots->sizes, (pivots->ndim - 1) * sizeof(int64_t));
  sizes[pivots->ndim - 1] = m;
  THTensor *p = at_to_dtype(pivots, TH_Int64, true);   /* a contiguous copy */
  THTensor *perm = p ? THTensor_new(TH_Int64, pivots->ndim, sizes) : NULL;
  if (!perm) { THTensor_free(p); return NULL; }
  const int64_t *piv = (const int64_t *)THTensor_data(p);
  int64_t *out = (int64_t *)THTensor_data(perm);
  for (int64_t i = 0; i < npiv; i++) {
    if (piv[i] < 1 || piv[i] > m) {
      THError_set(TH_ERR_RUNTIME, "pivots passed to lu_unpack must be between 1 and LU.size(-2) inclusive."
                                  "Did you properly pass the result of lu_factor?");
      THTensor_free(p); THTensor_free(perm);
      return NULL;
    }
  }
  /* the row swaps are sequential within a matrix; matrices are independent */
  int64_t nmat = THTensor_numel(perm) / (m ? m : 1);
#pragma omp parallel for if (nmat * (m + k) > 65536)
  for (int64_t b = 0; b < nmat; b++) {
    int64_t *row = out + b * m;
    for (int64_t i = 0; i < m; i++) row[i] = i;
    for (int64_t i = 0; i < k && i < m; i++) {
      int64_t j = piv[b * k + i] - 1, t = row[i];
      row[i] = row[j];
      row[j] = t;
    }
  }
  THTensor_free(p);
  return perm;
}

/* ---- lu_unpack: P, L, U from getrf's packed factors ----
 * The factors are moved, never computed on, so the copies go by element
 * width (one instance per width serves every dtype). They run over 32x32
 * tiles: getrf's LU is column-major, and a tile keeps both the strided
 * reads and the contiguous writes in cache. */
#define LU_TILE 32

#define LU_UNPACK_WIDTH(T)                                                                                   \
  /* L (m x k, unit diagonal) and U (k x n) of one matrix; src strides in elements */                       \
  static void lu_unpack_##T(const T *src, int64_t rs, int64_t cs, int64_t m, int64_t n, T *L, T *U, T one) { \
    int64_t k = imin(m, n);                                                                                  \
    for (int64_t i0 = 0; i0 < m; i0 += LU_TILE)                                                              \
      for (int64_t j0 = 0; j0 < n; j0 += LU_TILE) {                                                          \
        int64_t i1 = imin(i0 + LU_TILE, m), j1 = imin(j0 + LU_TILE, n);                                       \
        for (int64_t i = i0; i < i1; i++) {                                                                  \
          const T *s = src + i * rs;                                                                         \
          if (j0 < k) { /* L's columns: strictly below the diagonal from src, 1 on it, 0 above */           \
            T *l = L + i * k;                                                                                \
            int64_t jl = imin(j1, k), jc = imax(j0, imin(i, jl));                                            \
            for (int64_t j = j0; j < jc; j++) l[j] = s[j * cs];                                              \
            for (int64_t j = jc; j < jl; j++) l[j] = 0;                                                      \
            if (i >= j0 && i < jl) l[i] = one;                                                               \
          }                                                                                                  \
          if (i < k) { /* U's rows: 0 below the diagonal, src on and above it */                            \
            T *u = U + i * n;                                                                                \
            int64_t jc = imax(j0, imin(i, j1));                                                              \
            for (int64_t j = j0; j < jc; j++) u[j] = 0;                                                      \
            for (int64_t j = jc; j < j1; j++) u[j] = s[j * cs];                                              \
          }                                                                                                  \
        }                                                                                                    \
      }                                                                                                      \
  }
LU_UNPACK_WIDTH(uint8_t)
LU_UNPACK_WIDTH(uint16_t)
LU_UNPACK_WIDTH(uint32_t)
LU_UNPACK_WIDTH(uint64_t)

/* LAPACK's row swaps of one matrix applied to 0..m-1, written as P[perm[c], c] = one */
static void lu_unpack_perm(const int32_t *piv, int64_t k, int64_t m, int64_t *row, char *P, size_t es,
                           const void *one) {
  for (int64_t i = 0; i < m; i++) row[i] = i;
  for (int64_t i = 0; i < k; i++) {
    int64_t j = piv[i] - 1, t = row[i];
    row[i] = row[j];
    row[j] = t;
  }
  for (int64_t c = 0; c < m; c++) memcpy(P + (row[c] * m + c) * es, one, es);
}

static THTensor *empty_1d(THDtype dt) { return THTensor_new(dt, 1, (int64_t[]){ 0 }); }

int at_lu_unpack(THTensor **outs, const THTensor *LU, const THTensor *pivots, bool unpack_data, bool unpack_pivots) {
  outs[0] = outs[1] = outs[2] = NULL;
  if (LU->ndim < 2) {
    char buf[256];
    THError_set(TH_ERR_RUNTIME, "torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: %s instead",
                THTensor_sizeStr(LU->ndim, LU->sizes, buf, sizeof buf));
    return -1;
  }
  if (unpack_pivots && pivots->dtype != TH_Int32) {
    THError_set(TH_ERR_RUNTIME, "torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 "
                                "dtype.\nNote: this function is intended to be used with the output produced by "
                                "torch.linalg.lu_factor");
    return -1;
  }
  THDtype dt = LU->dtype;
  size_t es = THDtype_size(dt);
  int nbd = LU->ndim - 2;
  int64_t m = LU->sizes[nbd], n = LU->sizes[nbd + 1], k = imin(m, n), nb = nbatch(LU);
  THTensor *piv = NULL, *onet = NULL;
  int64_t *boff = NULL, *rows = NULL;
  uint64_t one = 0;   /* the dtype's 1, as bytes */
  onet = at_full(&(ATIntList){ .n = 0 }, at_scalar_int(1), dt);
  if (!onet) goto fail;
  memcpy(&one, THTensor_data(onet), es);
  if (unpack_pivots) {
    /* pivots' batch dims broadcast against LU's (PyTorch accepts a shared (k,) vector) */
    if (pivots->ndim < 1 || pivots->sizes[pivots->ndim - 1] != k) {
      THError_set(TH_ERR_RUNTIME, "pivots passed to lu_unpack must be between 1 and LU.size(-2) inclusive."
                                  "Did you properly pass the result of lu_factor?");
      goto fail;
    }
    ATIntList shape = { .n = nbd + 1 };
    memcpy(shape.v, LU->sizes, nbd * sizeof(int64_t));
    shape.v[nbd] = k;
    THTensor *e = at_expand(pivots, &shape);
    piv = e ? at_to_dtype(e, TH_Int32, true) : NULL;   /* a contiguous (nb, k) copy */
    THTensor_free(e);
    if (!piv) goto fail;
    const int32_t *p = (const int32_t *)THTensor_data(piv);
    for (int64_t i = 0; i < nb * k; i++)
      if (p[i] < 1 || p[i] > m) {
        THError_set(TH_ERR_RUNTIME, "pivots passed to lu_unpack must be between 1 and LU.size(-2) inclusive."
                                    "Did you properly pass the result of lu_factor?");
        goto fail;
      }
    outs[0] = new_batched(dt, LU, 2, (int64_t[]){ m, m });   /* zeroed */
    rows = malloc((size_t)imax(nb * m, 1) * sizeof(int64_t));
    if (!outs[0] || !rows) { if (!rows) THError_set(TH_ERR_MEMORY, "lu_unpack: out of memory"); goto fail; }
  } else if (!(outs[0] = empty_1d(dt))) {
    goto fail;
  }
  if (unpack_data) {
    int64_t ls[TH_MAX_DIMS], us[TH_MAX_DIMS];
    memcpy(ls, LU->sizes, nbd * sizeof(int64_t));
    memcpy(us, LU->sizes, nbd * sizeof(int64_t));
    ls[nbd] = m, ls[nbd + 1] = k, us[nbd] = k, us[nbd + 1] = n;
    outs[1] = THTensor_new(dt, LU->ndim, ls);
    outs[2] = outs[1] ? THTensor_new(dt, LU->ndim, us) : NULL;
    boff = outs[2] ? malloc((size_t)imax(nb, 1) * sizeof(int64_t)) : NULL;
    if (!boff) { if (outs[2]) THError_set(TH_ERR_MEMORY, "lu_unpack: out of memory"); goto fail; }
    for (int64_t b = 0; b < nb; b++) {   /* each matrix's element offset in LU (any batch strides) */
      int64_t r = b, off = 0;
      for (int d = nbd - 1; d >= 0; d--) {
        off += (r % LU->sizes[d]) * LU->strides[d];
        r /= LU->sizes[d];
      }
      boff[b] = off;
    }
  } else if (!(outs[1] = empty_1d(dt)) || !(outs[2] = empty_1d(dt))) {
    goto fail;
  }
  const char *src = THTensor_data(LU);
  char *Pd = unpack_pivots ? THTensor_data(outs[0]) : NULL;
  char *Ld = unpack_data ? THTensor_data(outs[1]) : NULL, *Ud = unpack_data ? THTensor_data(outs[2]) : NULL;
  const int32_t *pv = piv ? (const int32_t *)THTensor_data(piv) : NULL;
  int64_t rs = LU->strides[nbd], cs = LU->strides[nbd + 1];
  /* copies finish in microseconds: only a large batch is worth waking the pool (a 2-thread
   * region over 64 32x32 factors cost 12 ms on a loaded machine) */
#pragma omp parallel for if (nb * (m * n + (unpack_pivots ? m * m : 0)) > (1 << 22) && nb > 1)
  for (int64_t b = 0; b < nb; b++) {
    if (unpack_pivots) lu_unpack_perm(pv + b * k, k, m, rows + b * m, Pd + b * m * m * es, es, &one);
    if (!unpack_data) continue;
    const char *s = src + boff[b] * (int64_t)es;
    char *l = Ld + b * m * k * es, *u = Ud + b * k * n * es;
    switch (es) {
      case 1: lu_unpack_uint8_t((const uint8_t *)s, rs, cs, m, n, (uint8_t *)l, (uint8_t *)u, (uint8_t)one); break;
      case 2: lu_unpack_uint16_t((const uint16_t *)s, rs, cs, m, n, (uint16_t *)l, (uint16_t *)u, (uint16_t)one); break;
      case 4: lu_unpack_uint32_t((const uint32_t *)s, rs, cs, m, n, (uint32_t *)l, (uint32_t *)u, (uint32_t)one); break;
      default: lu_unpack_uint64_t((const uint64_t *)s, rs, cs, m, n, (uint64_t *)l, (uint64_t *)u, one); break;
    }
  }
  THTensor_free(piv);
  THTensor_free(onet);
  free(boff);
  free(rows);
  return 0;
fail:
  for (int i = 0; i < 3; i++) { THTensor_free(outs[i]); outs[i] = NULL; }
  THTensor_free(piv);
  THTensor_free(onet);
  free(boff);
  free(rows);
  return -1;
}
