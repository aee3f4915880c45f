// GEMM through cuBLAS, opened at run time.
//
// The build machines have no cuBLAS headers or library, and libTHC must load
// where cuBLAS is absent (it then fails only when a product is asked for), so
// the few declarations used here are written out by hand from the public
// cuBLAS API (cublas_api.h); cudaDataType comes from the toolkit's
// library_types.h, which the runtime ships.
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <library_types.h>

#include "THCGeneral.h"

typedef struct cublasContext *cublasHandle_t;
typedef int cublasStatus_t;             // CUBLAS_STATUS_SUCCESS = 0
typedef int cublasOperation_t;          // CUBLAS_OP_N = 0, CUBLAS_OP_T = 1
typedef int cublasMath_t;
typedef int cublasComputeType_t;
typedef int cublasGemmAlgo_t;

enum { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1 };
enum { CUBLAS_DEFAULT_MATH = 0 };       // no TF32: pure FP32 math, as PyTorch's default
enum { CUBLAS_COMPUTE_32F = 68 };       // float accumulation (half/bfloat16 inputs)
enum { CUBLAS_GEMM_DEFAULT = -1 };

typedef cublasStatus_t (*create_fn)(cublasHandle_t *);
typedef cublasStatus_t (*set_stream_fn)(cublasHandle_t, cudaStream_t);
typedef cublasStatus_t (*set_math_fn)(cublasHandle_t, cublasMath_t);
typedef cublasStatus_t (*sgemm_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const float *,
                                   const float *, int, const float *, int, const float *, float *, int);
typedef cublasStatus_t (*dgemm_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const double *,
                                   const double *, int, const double *, int, const double *, double *, int);
typedef cublasStatus_t (*gemm_ex_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void *,
                                     const void *, cudaDataType, int, const void *, cudaDataType, int, const void *,
                                     void *, cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
typedef cublasStatus_t (*sgemm_sb_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                      const float *, const float *, int, long long, const float *, int, long long,
                                      const float *, float *, int, long long, int);
typedef cublasStatus_t (*dgemm_sb_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                      const double *, const double *, int, long long, const double *, int, long long,
                                      const double *, double *, int, long long, int);
typedef cublasStatus_t (*gemm_sb_ex_fn)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                        const void *, const void *, cudaDataType, int, long long, const void *,
                                        cudaDataType, int, long long, const void *, void *, cudaDataType, int,
                                        long long, int, cublasComputeType_t, cublasGemmAlgo_t);

static struct {
  create_fn create;
  set_stream_fn set_stream;
  set_math_fn set_math;
  sgemm_fn sgemm;
  dgemm_fn dgemm;
  gemm_ex_fn gemm_ex;
  sgemm_sb_fn sgemm_sb;
  dgemm_sb_fn dgemm_sb;
  gemm_sb_ex_fn gemm_sb_ex;
} cb;
static pthread_once_t cb_once = PTHREAD_ONCE_INIT;
static char cb_error[512];

static void cb_load(void) {
  // cthtorch.cuda preloads the pip nvidia-cublas library (RTLD_GLOBAL), so the
  // soname resolves to it; otherwise the system toolkit's, if any
  static const char *const libs[] = { "libcublas.so.13", "libcublas.so.12", "libcublas.so" };
  const THCSymbol syms[] = {
    { (void **)&cb.create, "cublasCreate_v2" },
    { (void **)&cb.set_stream, "cublasSetStream_v2" },
    { (void **)&cb.set_math, "cublasSetMathMode" },
    { (void **)&cb.sgemm, "cublasSgemm_v2" },
    { (void **)&cb.dgemm, "cublasDgemm_v2" },
    { (void **)&cb.gemm_ex, "cublasGemmEx" },
    { (void **)&cb.sgemm_sb, "cublasSgemmStridedBatched" },
    { (void **)&cb.dgemm_sb, "cublasDgemmStridedBatched" },
    { (void **)&cb.gemm_sb_ex, "cublasGemmStridedBatchedEx" },
  };
  if (thc_open_library("cuBLAS", libs, 3, syms, (int)(sizeof syms / sizeof *syms), cb_error, sizeof cb_error) < 0)
    cb.create = NULL;   // marks the table unusable
}

static int cb_check(cublasStatus_t s, const char *what) {
  if (s == 0) return 0;
  THError_set(s == 3 ? TH_ERR_MEMORY : TH_ERR_RUNTIME, "CUDA error: cuBLAS status %d in %s", (int)s, what);
  return -1;
}

// A handle per thread and device: a handle carries its stream, and threads
// launching on different streams must not share one.
static __thread cublasHandle_t handles[THC_MAX_DEVICES];

static cublasHandle_t handle_for_current(void) {
  pthread_once(&cb_once, cb_load);
  if (!cb.create) {
    THError_set(TH_ERR_RUNTIME, "%s", cb_error);
    return NULL;
  }
  int dev = thc_current_device_slot();
  if (dev < 0) return NULL;
  if (!handles[dev]) {
    cublasHandle_t h = NULL;
    if (cb_check(cb.create(&h), "cublasCreate") < 0) return NULL;
    if (cb_check(cb.set_math(h, CUBLAS_DEFAULT_MATH), "cublasSetMathMode") < 0) return NULL;
    handles[dev] = h;
  }
  if (cb_check(cb.set_stream(handles[dev], thc_stream()), "cublasSetStream") < 0) return NULL;
  return handles[dev];
}

static bool fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

extern "C" int thc_gemm(THDtype dt, char transa, char transb, int64_t m, int64_t n, int64_t k, double alpha,
                        const void *a, int64_t lda, int64_t stride_a, const void *b, int64_t ldb, int64_t stride_b,
                        double beta, void *c, int64_t ldc, int64_t stride_c, int64_t batch) {
  if (m == 0 || n == 0 || batch == 0) return 0;
  if (!fits_int(m) || !fits_int(n) || !fits_int(k) || !fits_int(lda) || !fits_int(ldb) || !fits_int(ldc) ||
      !fits_int(batch)) {
    THError_set(TH_ERR_RUNTIME, "GEMM on CUDA: sizes (m=%lld, n=%lld, k=%lld, batch=%lld) exceed cuBLAS's int range",
                (long long)m, (long long)n, (long long)k, (long long)batch);
    return -1;
  }
  cudaDataType ty;
  switch (dt) {
    case TH_Float: ty = CUDA_R_32F; break;
    case TH_Double: ty = CUDA_R_64F; break;
    case TH_Half: ty = CUDA_R_16F; break;
    case TH_BFloat16: ty = CUDA_R_16BF; break;
    default:
      THError_set(TH_ERR_RUNTIME, "\"addmm_cuda\" not implemented for '%s'", THDtype_info[dt].legacy);
      return -1;
  }
  cublasHandle_t h = handle_for_current();
  if (!h) return -1;
  cublasOperation_t ta = (transa == 't' || transa == 'T') ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t tb = (transb == 't' || transb == 'T') ? CUBLAS_OP_T : CUBLAS_OP_N;
  // cuBLAS requires ld >= rows of the stored matrix, even when a side is empty
  int64_t ra = ta == CUBLAS_OP_N ? m : k, rb = tb == CUBLAS_OP_N ? k : n;
  if (lda < ra) lda = ra > 1 ? ra : 1;
  if (ldb < rb) ldb = rb > 1 ? rb : 1;
  if (ldc < m) ldc = m;
  int M = (int)m, N = (int)n, K = (int)k, LDA = (int)lda, LDB = (int)ldb, LDC = (int)ldc, B = (int)batch;
  if (dt == TH_Double) {
    double al = alpha, be = beta;
    if (B == 1)
      return cb_check(cb.dgemm(h, ta, tb, M, N, K, &al, (const double *)a, LDA, (const double *)b, LDB, &be,
                               (double *)c, LDC), "cublasDgemm");
    return cb_check(cb.dgemm_sb(h, ta, tb, M, N, K, &al, (const double *)a, LDA, stride_a, (const double *)b, LDB,
                                stride_b, &be, (double *)c, LDC, stride_c, B), "cublasDgemmStridedBatched");
  }
  // float32 and the half types: float scalars, float accumulation
  float al = (float)alpha, be = (float)beta;
  if (dt == TH_Float) {
    if (B == 1)
      return cb_check(cb.sgemm(h, ta, tb, M, N, K, &al, (const float *)a, LDA, (const float *)b, LDB, &be,
                               (float *)c, LDC), "cublasSgemm");
    return cb_check(cb.sgemm_sb(h, ta, tb, M, N, K, &al, (const float *)a, LDA, stride_a, (const float *)b, LDB,
                                stride_b, &be, (float *)c, LDC, stride_c, B), "cublasSgemmStridedBatched");
  }
  if (B == 1)
    return cb_check(cb.gemm_ex(h, ta, tb, M, N, K, &al, a, ty, LDA, b, ty, LDB, &be, c, ty, LDC, CUBLAS_COMPUTE_32F,
                               CUBLAS_GEMM_DEFAULT), "cublasGemmEx");
  return cb_check(cb.gemm_sb_ex(h, ta, tb, M, N, K, &al, a, ty, LDA, stride_a, b, ty, LDB, stride_b, &be, c, ty, LDC,
                                stride_c, B, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT), "cublasGemmStridedBatchedEx");
}
