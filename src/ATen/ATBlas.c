/* GEMM-based products (see ATBlas.h). */
#include "ATBlas.h"
#include "ATCuda.h"
#include "../TH/THGemmPacked.h"

#include <cblas.h>
#include <omp.h>
#include <string.h>

/* One thread pool: OpenBLAS always runs single-threaded and cthtorch splits
 * large GEMMs across its own OpenMP threads (at_gemm). Two pools (OpenBLAS's
 * pthreads beside OpenMP) oversubscribed the cores and stalled under load. */
void at_blas_set_threads(int n) { (void)n; scipy_openblas_set_num_threads(1); }

/* below this many multiply-adds a GEMM stays on one thread: waking the
 * others costs more than it saves */
#define GEMM_SPLIT_MACS (1LL << 21)

/* y = alpha op(W) x + beta y through BLAS's gemv: a matrix-vector product (N == 1: A times a column of B;
 * M == 1: a row of A times B) given to gemm packs the whole matrix first, which at 512 x 512 took 3x
 * torch's time (the copy ran longer than the arithmetic). */
static void gemv1(bool dbl, bool tw, int64_t rows, int64_t cols, double alpha, const char *W, int64_t ldw,
                  const char *x, int64_t incx, double beta, char *y, int64_t incy) {
  enum CBLAS_TRANSPOSE t = tw ? CblasTrans : CblasNoTrans;
  if (dbl)
    scipy_cblas_dgemv(CblasRowMajor, t, (int)rows, (int)cols, alpha, (const double *)W, (int)ldw,
                      (const double *)x, (int)incx, beta, (double *)y, (int)incy);
  else
    scipy_cblas_sgemv(CblasRowMajor, t, (int)rows, (int)cols, (float)alpha, (const float *)W, (int)ldw,
                      (const float *)x, (int)incx, (float)beta, (float *)y, (int)incy);
}

static void gemm1(bool dbl, bool ta, bool tb, int64_t M, int64_t N, int64_t K, double alpha, const char *A,
                  int64_t lda, const char *B, int64_t ldb, double beta, char *C, int64_t ldc) {
  if (N == 1 && M > 1 && K > 1) {   /* C[:, 0] = op(A) B[:, 0]; A is stored M x K, or K x M when ta */
    gemv1(dbl, ta, ta ? K : M, ta ? M : K, alpha, A, lda, B, tb ? 1 : ldb, beta, C, ldc);
    return;
  }
  if (M == 1 && N > 1 && K > 1) {   /* C[0, :] = A[0, :] op(B) = op(B)^T A[0, :]; B is stored K x N, or N x K when tb */
    gemv1(dbl, !tb, tb ? N : K, tb ? K : N, alpha, B, ldb, A, ta ? lda : 1, beta, C, 1);
    return;
  }
  if (dbl)
    scipy_cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)M, (int)N,
                      (int)K, alpha, (const double *)A, (int)lda, (const double *)B, (int)ldb, beta, (double *)C,
                      (int)ldc);
  else
    scipy_cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)M, (int)N,
                      (int)K, (float)alpha, (const float *)A, (int)lda, (const float *)B, (int)ldb, (float)beta,
                      (float *)C, (int)ldc);
}

/* A BLAS call costs a fixed few hundred nanoseconds, more than the arithmetic of a tiny product; bmm over
 * thousands of 1x1 or 4x4 matrices (batched dot products) spends that per matrix, so those products are
 * plain loops. Accumulates in double; beta == 0 ignores what C held, as BLAS does. */
#define GEMM_TINY_MACS 512

static void gemm_tiny(bool dbl, bool ta, bool tb, int64_t M, int64_t N, int64_t K, double alpha, const char *A,
                      int64_t lda, const char *B, int64_t ldb, double beta, char *C, int64_t ldc) {
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      double acc = 0;
      for (int64_t k = 0; k < K; k++) {
        int64_t ia = ta ? k * lda + i : i * lda + k, ib = tb ? j * ldb + k : k * ldb + j;
        acc += dbl ? ((const double *)A)[ia] * ((const double *)B)[ib]
                   : (double)((const float *)A)[ia] * ((const float *)B)[ib];
      }
      if (dbl) {
        double *c = (double *)C + i * ldc + j;
        *c = alpha * acc + (beta != 0 ? beta * *c : 0);
      } else {
        float *c = (float *)C + i * ldc + j;
        *c = (float)(alpha * acc + (beta != 0 ? beta * *c : 0));
      }
    }
}

/* Which float32 products run cthtorch's own blocked GEMM (THGemm_sgemm) instead of OpenBLAS: A not
 * transposed (it is read in place; only B is packed, once per thread's columns, where OpenBLAS packs both
 * and, split by rows across threads, each thread packs all of B again), K at most OWN_SGEMM_K (one or two
 * chunks: there it measured 2-7% less CPU time at one thread, the most on a Linear's x @ W^T; from
 * K = 512 on, carrying C across more chunks, 1-4% more), and at least OWN_SGEMM_MACS multiply-adds at one
 * thread (at 64^3 and 128^3 it was 1% slower), GEMM_SPLIT_MACS with threads (two threads: level with the
 * row split at 256 and 512, 4% faster at 384, 10% at 128, best single calls on a loaded machine). A
 * transposed A (a weight gradient's G^T X) stays with OpenBLAS: packing it measured 5-25% slower, and
 * again 0-13% slower (CPU time at one thread) with A's blocks packed k-outer by 4 x 4
 * transposes (an LSTM's G^T X and G^T H, 1024 x 1120 x 128/256, and 256^3 / 512^3), as were
 * K = 512 and 1024 with A packed or in place (2-7%); chunks of 384 instead of 256 closed at most half
 * the gap. So do
 * calls made inside a parallel region (conv's per-image products): the packing workspace is cached for
 * one call at a time. */
#define OWN_SGEMM_K 384
#define OWN_SGEMM_MACS (1LL << 22)

void at_gemm(bool dbl, bool ta, bool tb, int64_t M, int64_t N, int64_t K, double alpha, const void *A, int64_t lda,
             const void *B, int64_t ldb, double beta, void *C, int64_t ldc) {
  int nt = omp_in_parallel() ? 1 : at_get_num_threads();
  if (!dbl && !ta && !omp_in_parallel() && K <= OWN_SGEMM_K &&
      M * N * K >= (nt > 1 ? GEMM_SPLIT_MACS : OWN_SGEMM_MACS)) {
    THGemm_sgemm(tb, M, N, K, (float)alpha, A, lda, B, ldb, (float)beta, C, ldc,
                 M * N * K >= GEMM_SPLIT_MACS ? nt : 1);
    return;
  }
  if (nt <= 1 || M * N * K < GEMM_SPLIT_MACS) {
    gemm1(dbl, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    return;
  }
  int es = dbl ? 8 : 4;
  bool by_rows = M >= N;   /* split the longer side of C into nt slabs (multiples of 16) */
  int64_t len = by_rows ? M : N, part = ((len + nt - 1) / nt + 15) / 16 * 16;
#pragma omp parallel for num_threads(nt) schedule(static)
  for (int t = 0; t < nt; t++) {
    int64_t lo = t * part, n = len - lo < part ? len - lo : part;
    if (n <= 0) continue;
    if (by_rows)   /* rows lo.. of A (and C) */
      gemm1(dbl, ta, tb, n, N, K, alpha, (const char *)A + (ta ? lo : lo * lda) * es, lda, B, ldb, beta,
            (char *)C + lo * ldc * es, ldc);
    else           /* columns lo.. of B (and C) */
      gemm1(dbl, ta, tb, M, n, K, alpha, A, lda, (const char *)B + (tb ? lo * ldb : lo) * es, ldb, beta,
            (char *)C + lo * es, ldc);
  }
}

/* How to hand t (rows x cols) to row-major GEMM: as is (trans=0, ld = row
 * stride), as a transpose (trans=1, ld = column stride), or via a copy. */
static const char *operand(const THTensor *t, int64_t rows, int64_t cols, bool *trans, int64_t *ld, THTensor **holder) {
  int64_t s0 = t->strides[t->ndim - 2], s1 = t->strides[t->ndim - 1];
  *holder = NULL;
  if ((s1 == 1 || cols == 1) && (s0 >= (cols > 1 ? cols : 1) || rows == 1)) {
    *trans = false;
    *ld = rows == 1 ? (cols > 1 ? cols : 1) : s0;
    if (*ld < cols) *ld = cols;
    return THTensor_data(t);
  }
  if ((s0 == 1 || rows == 1) && (s1 >= (rows > 1 ? rows : 1) || cols == 1)) {
    *trans = true;
    *ld = cols == 1 ? (rows > 1 ? rows : 1) : s1;
    if (*ld < rows) *ld = rows;
    return THTensor_data(t);
  }
  *holder = at_contiguous(t);
  if (!*holder) return NULL;
  *trans = false;
  *ld = cols > 1 ? cols : 1;
  return THTensor_data(*holder);
}

static int gemm2d(THDtype dt, const THTensor *A, const THTensor *B, THTensor *C, double alpha, double beta);

/* float16 / bfloat16: the operands widened to float32 and one float GEMM, rounded once into C (PyTorch's CPU
 * GEMM for these types also accumulates in float32). The double triple loop it replaces took 4x torch's
 * time at 256 x 512 x 256. */
static int gemm2d_half(const THTensor *A, const THTensor *B, THTensor *C, double alpha, double beta) {
  THTensor *af = at_to_dtype(A, TH_Float, false), *bf = af ? at_to_dtype(B, TH_Float, false) : NULL;
  THTensor *cf = bf ? (beta != 0 ? at_to_dtype(C, TH_Float, true) : THTensor_new(TH_Float, 2, C->sizes)) : NULL;
  int rc = -1;
  if (cf && gemm2d(TH_Float, af, bf, cf, alpha, beta) == 0) rc = at_copy_(C, cf);   /* C and cf: contiguous */
  THTensor_free(af); THTensor_free(bf); THTensor_free(cf);
  return rc;
}

/* C[M,N] = alpha * A[M,K] @ B[K,N] + beta * C, C contiguous */
static int gemm2d(THDtype dt, const THTensor *A, const THTensor *B, THTensor *C, double alpha, double beta) {
  int64_t M = A->sizes[A->ndim - 2], K = A->sizes[A->ndim - 1], N = B->sizes[B->ndim - 1];
  if (M == 0 || N == 0) return 0;
  char *c = THTensor_data(C);
  if (K == 0) {
    if (beta == 0) memset(c, 0, M * N * THDtype_size(dt));
    else {
      THTensor *r = at_mul(C, &(THTensor){ .storage = &(THStorage){ .device = -1, .data = &beta }, .dtype = TH_Double, .wrapped_number = true }, C);
      THTensor_free(r);
    }
    return 0;
  }
  if (dt == TH_Half || dt == TH_BFloat16) return gemm2d_half(A, B, C, alpha, beta);
  bool ta, tb;
  int64_t lda, ldb;
  THTensor *ha, *hb;
  const char *a = operand(A, M, K, &ta, &lda, &ha);
  const char *b = a ? operand(B, K, N, &tb, &ldb, &hb) : NULL;
  if (!a || !b) { THTensor_free(ha); return -1; }
  if (dt == TH_Float || dt == TH_Double)
    at_gemm(dt == TH_Double, ta, tb, M, N, K, alpha, a, lda, b, ldb, beta, c, N);
  else if (dt == TH_ComplexDouble) {   /* zgemm/cgemm take alpha and beta by address */
    double al[2] = { alpha, 0 }, be[2] = { beta, 0 };
    scipy_cblas_zgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)M, (int)N,
                      (int)K, al, a, (int)lda, b, (int)ldb, be, c, (int)N);
  } else if (dt == TH_ComplexFloat) {
    float al[2] = { (float)alpha, 0 }, be[2] = { (float)beta, 0 };
    scipy_cblas_cgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)M, (int)N,
                      (int)K, al, a, (int)lda, b, (int)ldb, be, c, (int)N);
  } else {
    /* integers (and half types through double): plain triple loop in int64/double */
    int64_t sa0 = A->strides[A->ndim - 2], sa1 = A->strides[A->ndim - 1];
    int64_t sb0 = B->strides[B->ndim - 2], sb1 = B->strides[B->ndim - 1];
    THTensor *Ad = at_to_dtype(A, THDtype_isFloating(dt) ? TH_Double : TH_Int64, false);
    THTensor *Bd = Ad ? at_to_dtype(B, Ad->dtype, false) : NULL;
    THTensor *Cd = Bd ? THTensor_new(Ad->dtype, 2, (int64_t[]){ M, N }) : NULL;
    if (!Cd) { THTensor_free(Ad); THTensor_free(Bd); THTensor_free(ha); THTensor_free(hb); return -1; }
    sa0 = Ad->strides[Ad->ndim - 2]; sa1 = Ad->strides[Ad->ndim - 1];
    sb0 = Bd->strides[Bd->ndim - 2]; sb1 = Bd->strides[Bd->ndim - 1];
    if (Ad->dtype == TH_Int64) {
      const int64_t *pa = (const int64_t *)THTensor_data(Ad), *pb = (const int64_t *)THTensor_data(Bd);
      int64_t *pc = (int64_t *)THTensor_data(Cd);
      for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
          int64_t s = 0;
          for (int64_t k = 0; k < K; k++) s += pa[i * sa0 + k * sa1] * pb[k * sb0 + j * sb1];
          pc[i * N + j] = s;
        }
    } else {
      const double *pa = (const double *)THTensor_data(Ad), *pb = (const double *)THTensor_data(Bd);
      double *pc = (double *)THTensor_data(Cd);
      for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
          double s = 0;
          for (int64_t k = 0; k < K; k++) s += pa[i * sa0 + k * sa1] * pb[k * sb0 + j * sb1];
          pc[i * N + j] = s;
        }
    }
    /* C = alpha * Cd + beta * C */
    THTensor *cview = THTensor_newView(C, 2, (int64_t[]){ M, N }, (int64_t[]){ N, 1 }, C->offset);
    int rc = -1;
    if (cview) {
      if (beta == 0) {
        THTensor *scaled = alpha == 1 ? THTensor_retain(Cd) : at_mul(Cd, &(THTensor){ .storage = &(THStorage){ .device = -1, .data = &alpha }, .dtype = TH_Double, .wrapped_number = true }, NULL);
        rc = scaled ? at_copy_(cview, scaled) : -1;
        THTensor_free(scaled);
      } else {
        THTensor *cc = at_to_dtype(cview, Cd->dtype, true);
        THTensor *r1 = cc ? at_mul(cc, &(THTensor){ .storage = &(THStorage){ .device = -1, .data = &beta }, .dtype = TH_Double, .wrapped_number = true }, cc) : NULL;
        THTensor *r2 = r1 ? at_add(cc, Cd, at_scalar_float(alpha), cc) : NULL;
        rc = r2 ? at_copy_(cview, cc) : -1;
        THTensor_free(cc); THTensor_free(r1); THTensor_free(r2);
      }
      THTensor_free(cview);
    }
    THTensor_free(Ad); THTensor_free(Bd); THTensor_free(Cd); THTensor_free(ha); THTensor_free(hb);
    return rc;
  }
  THTensor_free(ha);
  THTensor_free(hb);
  return 0;
}

/* The GPU twin of gemm2d and of baddbmm's loop: C (contiguous [batch,] M x N)
 * = alpha * A @ B + beta * C, one (strided-batched) cuBLAS call. cuBLAS is
 * column-major, and a row-major C = A @ B is the column-major C^T = B^T @ A^T:
 * so B goes first, and an operand that row-major GEMM would read transposed
 * is transposed for cuBLAS too. */
static int gemm_cuda(const THTensor *A, const THTensor *B, THTensor *C, double alpha, double beta) {
  int nd = A->ndim;
  int64_t M = A->sizes[nd - 2], K = A->sizes[nd - 1], N = B->sizes[nd - 1], batch = nd == 3 ? A->sizes[0] : 1;
  if (M == 0 || N == 0 || batch == 0) return 0;
  bool ta, tb;
  int64_t lda, ldb;
  THTensor *ha, *hb = NULL;
  const char *a = operand(A, M, K, &ta, &lda, &ha);
  const char *b = a ? operand(B, K, N, &tb, &ldb, &hb) : NULL;
  if (!a || !b) { THTensor_free(ha); return -1; }
  int64_t sa = nd == 3 ? (ha ? M * K : A->strides[0]) : 0, sb = nd == 3 ? (hb ? K * N : B->strides[0]) : 0;
  int rc = at_cuda->gemm(C->dtype, tb ? 't' : 'n', ta ? 't' : 'n', N, M, K, alpha, b, ldb, sb, a, lda, sa, beta,
                         THTensor_data(C), N, M * N, batch);
  THTensor_free(ha);
  THTensor_free(hb);
  return rc;
}

static double sd(ATScalar s) { return s.kind == AT_SCALAR_FLOAT ? s.d : (double)s.i; }

/* torch's checks of mm(a, b), and of addmm(self, a, b) when self is given: addmm compares the dtypes first
 * (ScalarType names), then the ranks and shapes; mm the ranks, the shapes, then the dtypes (C++ names) */
static int check_mm(const THTensor *self, const THTensor *a, const THTensor *b) {
  if (self) {
    if (self->dtype != b->dtype || a->dtype != b->dtype) {
      bool s = self->dtype != b->dtype;
      THError_set(TH_ERR_RUNTIME, "%s and mat2 must have the same dtype, but got %s and %s", s ? "self" : "mat1",
                  THDtype_info[s ? self->dtype : a->dtype].legacy, THDtype_info[b->dtype].legacy);
      return -1;
    }
    if (a->ndim != 2 || b->ndim != 2) {
      THError_set(TH_ERR_RUNTIME, "%s must be a matrix, got %d-D tensor", a->ndim != 2 ? "mat1" : "mat2",
                  a->ndim != 2 ? a->ndim : b->ndim);
      return -1;
    }
  } else if (a->ndim != 2 || b->ndim != 2) {
    THError_set(TH_ERR_RUNTIME, "%s must be a matrix", a->ndim != 2 ? "self" : "mat2");
    return -1;
  }
  if (a->sizes[1] != b->sizes[0]) {
    THError_set(TH_ERR_RUNTIME, "mat1 and mat2 shapes cannot be multiplied (%lldx%lld and %lldx%lld)",
                (long long)a->sizes[0], (long long)a->sizes[1], (long long)b->sizes[0], (long long)b->sizes[1]);
    return -1;
  }
  if (a->dtype != b->dtype) {
    THError_set(TH_ERR_RUNTIME, "expected m1 and m2 to have the same dtype, but got: %s != %s",
                at_cpp_dtype_name(a->dtype), at_cpp_dtype_name(b->dtype));
    return -1;
  }
  return 0;
}

THTensor *at_addmm(const THTensor *self, const THTensor *m1, const THTensor *m2, ATScalar beta, ATScalar alpha,
                   THTensor *out) {
  if (check_mm(self, m1, m2) < 0) return NULL;
  int dev;
  if (at_common_device(4, (const THTensor *[]){ self, m1, m2, out }, "addmm", &dev) < 0) return NULL;
  int64_t M = m1->sizes[0], N = m2->sizes[1];
  THTensor *C = at_new_on(dev, m1->dtype, 2, (int64_t[]){ M, N }, NULL);
  if (!C) return NULL;
  double b = self ? sd(beta) : 0.0;
  if (self && b != 0) {
    if (at_copy_(C, self) < 0) { THTensor_free(C); return NULL; }   /* broadcasts bias rows */
  }
  if (dev != TH_DEVICE_META &&   /* meta: C's shape is the result */
      (dev >= 0 ? gemm_cuda(m1, m2, C, sd(alpha), b) : gemm2d(m1->dtype, m1, m2, C, sd(alpha), b)) < 0) {
    THTensor_free(C);
    return NULL;
  }
  if (!out) return C;
  if (THTensor_resize(out, 2, C->sizes) < 0 || at_copy_(out, C) < 0) { THTensor_free(C); return NULL; }
  THTensor_free(C);
  return THTensor_retain(out);
}

THTensor *at_mm(const THTensor *a, const THTensor *b, THTensor *out) {
  return at_addmm(NULL, a, b, at_scalar_int(0), at_scalar_int(1), out);
}

THTensor *at_baddbmm(const THTensor *self, const THTensor *a, const THTensor *b, ATScalar beta, ATScalar alpha,
                     THTensor *out) {
  if (a->ndim != 3 || b->ndim != 3) {
    THError_set(TH_ERR_RUNTIME, "batch1 must be a 3D tensor");
    return NULL;
  }
  if (a->sizes[0] != b->sizes[0] || a->sizes[2] != b->sizes[1]) {
    THError_set(TH_ERR_RUNTIME, "Expected size for first two dimensions of batch2 tensor to be: [%lld, %lld] but got: [%lld, %lld].",
                (long long)a->sizes[0], (long long)a->sizes[2], (long long)b->sizes[0], (long long)b->sizes[1]);
    return NULL;
  }
  if (a->dtype != b->dtype) {
    THError_set(TH_ERR_RUNTIME, "expected scalar type %s but found %s", THDtype_info[a->dtype].legacy, THDtype_info[b->dtype].legacy);
    return NULL;
  }
  int dev;
  if (at_common_device(4, (const THTensor *[]){ self, a, b, out }, "baddbmm", &dev) < 0) return NULL;
  int64_t B = a->sizes[0], M = a->sizes[1], N = b->sizes[2];
  THTensor *C = at_new_on(dev, a->dtype, 3, (int64_t[]){ B, M, N }, NULL);
  if (!C) return NULL;
  double bt = self ? sd(beta) : 0.0;
  if (self && bt != 0 && at_copy_(C, self) < 0) { THTensor_free(C); return NULL; }
  int64_t K = a->sizes[2];
  int nt = at_get_num_threads();
  if (dev == TH_DEVICE_META) {
    /* C's shape is the result */
  } else if (dev >= 0) {
    if (gemm_cuda(a, b, C, sd(alpha), bt) < 0) { THTensor_free(C); return NULL; }
  } else if ((a->dtype == TH_Float || a->dtype == TH_Double) && B > 0 && M * N * K > 0 && M * N * K < GEMM_SPLIT_MACS * 4) {
    /* many small products: one whole GEMM per matrix, straight from the data (a select per matrix cost
       more than a tiny GEMM); split across threads only when the batch holds enough work to pay for waking them.
       B > 0: an empty batch's tile size (B matrices) would divide by zero below */
    bool split = nt > 1 && B >= nt && B * M * N * K >= GEMM_SPLIT_MACS / 8 && !omp_in_parallel();
    bool ta, tb, dbl = a->dtype == TH_Double;
    int64_t lda, ldb;
    THTensor *ha, *hb = NULL;
    const char *pa = operand(a, M, K, &ta, &lda, &ha);
    const char *pb = pa ? operand(b, K, N, &tb, &ldb, &hb) : NULL;
    if (!pb) { THTensor_free(ha); THTensor_free(C); return NULL; }
    int64_t sa = ha ? M * K : a->strides[0], sb = hb ? K * N : b->strides[0];
    int es = dbl ? 8 : 4;
    char *pc = THTensor_data(C);
    double al = sd(alpha);
#pragma omp parallel for num_threads(nt) schedule(static) if (split)
    for (int64_t i = 0; i < B; i++)
      (M * N * K <= GEMM_TINY_MACS ? gemm_tiny : gemm1)(dbl, ta, tb, M, N, K, al, pa + i * sa * es, lda,
                                                        pb + i * sb * es, ldb, bt, pc + i * M * N * es, N);
    THTensor_free(ha);
    THTensor_free(hb);
  } else
  for (int64_t i = 0; i < B; i++) {
    THTensor *ai = at_select(a, 0, i), *bi = ai ? at_select(b, 0, i) : NULL, *ci = bi ? at_select(C, 0, i) : NULL;
    int rc = ci ? gemm2d(a->dtype, ai, bi, ci, sd(alpha), bt) : -1;
    THTensor_free(ai); THTensor_free(bi); THTensor_free(ci);
    if (rc < 0) { THTensor_free(C); return NULL; }
  }
  if (!out) return C;
  if (THTensor_resize(out, 3, C->sizes) < 0 || at_copy_(out, C) < 0) { THTensor_free(C); return NULL; }
  THTensor_free(C);
  return THTensor_retain(out);
}

THTensor *at_bmm(const THTensor *a, const THTensor *b, THTensor *out) {
  return at_baddbmm(NULL, a, b, at_scalar_int(0), at_scalar_int(1), out);
}

/* ---- packed-weight products (TH/THGemmPacked.h) ---- */

static int packed_operand_check(const THTensor *t, const char *op, const char *name, int ndim) {
  if (t->dtype != TH_Float || THTensor_device(t) >= 0 || t->ndim != ndim) {
    THError_set(TH_ERR_RUNTIME, "%s: expected %s to be a %d-D float32 CPU tensor, got %d-D %s%s", op, name, ndim,
                t->ndim, THDtype_info[t->dtype].name, THTensor_device(t) >= 0 ? " on CUDA" : "");
    return -1;
  }
  return 0;
}

THTensor *at_gemm_pack(const THTensor *b) {
  if (packed_operand_check(b, "_gemm_pack", "b", 2) < 0) return NULL;
  int64_t K = b->sizes[0], N = b->sizes[1];
  int64_t s[3] = { (N + THGEMM_NR - 1) / THGEMM_NR, K, THGEMM_NR };
  THTensor *p = THTensor_new(TH_Float, 3, s);
  if (!p) return NULL;
  THGemmPacked_pack(K, N, (const float *)THTensor_data(b), b->strides[0], b->strides[1], (float *)THTensor_data(p));
  return p;
}

THTensor *at_gemm_packed(const THTensor *a, const THTensor *packed, int64_t n, const THTensor *c) {
  const char *op = "_gemm_packed";
  if (packed_operand_check(a, op, "a", 2) < 0 || packed_operand_check(packed, op, "packed", 3) < 0 ||
      (c && packed_operand_check(c, op, "c", c->ndim == 1 ? 1 : 2) < 0))
    return NULL;
  int64_t M = a->sizes[0], K = a->sizes[1];
  if (n < 0 || packed->sizes[0] != (n + THGEMM_NR - 1) / THGEMM_NR || packed->sizes[1] != K ||
      packed->sizes[2] != THGEMM_NR || !THTensor_isContiguous(packed)) {
    THError_set(TH_ERR_RUNTIME, "%s: packed is not the packed form of a [%lld, %lld] matrix", op, (long long)K,
                (long long)n);
    return NULL;
  }
  if (c && (c->sizes[c->ndim - 1] != n || (c->ndim == 2 && c->sizes[0] != M))) {
    THError_set(TH_ERR_RUNTIME, "%s: expected c of size [%lld] or [%lld, %lld]", op, (long long)n, (long long)M,
                (long long)n);
    return NULL;
  }
  THTensor *ac = NULL;   /* A is read in place when its rows are unit-stride and do not overlap */
  if (((a->strides[1] != 1 && K > 1) || (M > 1 && a->strides[0] < K)) && !(ac = at_contiguous(a))) return NULL;
  const THTensor *A = ac ? ac : a;
  int64_t lda = M > 1 ? A->strides[0] : K;
  THTensor *out = THTensor_new(TH_Float, 2, (int64_t[]){ M, n });
  if (!out) { THTensor_free(ac); return NULL; }
  float *o = (float *)THTensor_data(out);
  if (c) {   /* out starts as c (broadcast over rows), and the product adds onto it */
    const float *cd = (const float *)THTensor_data(c);
    int64_t cs0 = c->ndim == 2 ? c->strides[0] : 0, cs1 = c->strides[c->ndim - 1];
    if (cs1 == 1)   /* rows of c (or the bias row) are contiguous: one memcpy each, not a strided gather */
      for (int64_t i = 0; i < M; i++) memcpy(o + i * n, cd + i * cs0, (size_t)n * sizeof(float));
    else
      for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < n; j++) o[i * n + j] = cd[i * cs0 + j * cs1];
  }
  THGemmPacked_run(M, n, K, 1.f, (const float *)THTensor_data(A), lda < 1 ? 1 : lda, (const float *)THTensor_data(packed),
                   c ? 1.f : 0.f, o, n, omp_in_parallel() ? 1 : at_get_num_threads());
  THTensor_free(ac);
  return out;
}
