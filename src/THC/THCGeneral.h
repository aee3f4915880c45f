/* THC: the CUDA side of TH. Compiled by nvcc where it exists, loaded at run
 * time by cthtorch.cuda (see src/ATen/ATCuda.h for the table it fills).
 * Same error protocol as TH: status returns and THError_set, never throws. */
#ifndef THC_GENERAL_H
#define THC_GENERAL_H

#include <cuda_runtime.h>
#include "../ATen/ATCuda.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The stream this thread launches on (NULL: the legacy default stream). */
cudaStream_t thc_stream(void);
void thc_set_stream(cudaStream_t s);
int thc_current_device(void);
/* per-device library handles (cuBLAS, cuDNN) live in arrays of this many; the
 * current device as an index into them, or -1 with THError set */
#define THC_MAX_DEVICES 64
int thc_current_device_slot(void);
int thc_set_device(int device);

/* 0, or -1 with THError set naming what failed */
int thc_check(cudaError_t e, const char *what);
/* after a launch: a bad configuration shows at once; a fault inside the
 * kernel shows at the next synchronising call, as in PyTorch */
int thc_launched(const char *what);

/* A CUDA library opened at run time (cuBLAS, cuDNN): the first of libs that
 * loads (RTLD_GLOBAL), then each symbol into its slot. 0, or -1 with err
 * saying what was tried, or which symbol is missing. */
typedef struct THCSymbol { void **slot; const char *name; } THCSymbol;
int thc_open_library(const char *what, const char *const *libs, int nlibs, const THCSymbol *syms, int nsyms,
                     char *err, size_t errlen);

/* blocks for n elements at 256 threads, capped so grid-stride loops cover the rest */
static inline unsigned thc_blocks(long long n, int threads) {
  long long b = (n + threads - 1) / threads;
  if (b < 1) b = 1;
  if (b > 65535LL * 32) b = 65535LL * 32;
  return (unsigned)b;
}

/* libTHC's parts of the table (each file fills its own) */
extern const THAllocator THCCachingAllocator;
extern const THAllocator THCHostAllocator;
int thc_memory_stats(int device, int64_t *stats);
void thc_reset_peak_stats(int device);
void thc_empty_cache(void);
int thc_loop(THLoopFn cpu_fn, const ATCudaLoop *L, const void *extra);       /* THCLoop.cu */
int thc_gemm(THDtype dt, char transa, char transb, int64_t m, int64_t n, int64_t k, double alpha,
             const void *a, int64_t lda, int64_t stride_a, const void *b, int64_t ldb, int64_t stride_b,
             double beta, void *c, int64_t ldc, int64_t stride_c, int64_t batch);      /* THCBlas.cu */
int thc_im2col(THDtype dt, const void *x, void *col, int64_t nb, const int64_t *shape, int64_t xs);   /* THCConv.cu */
int thc_col2im(THDtype dt, const void *col, void *x, int64_t nb, const int64_t *shape, int64_t xs);
int thc_max_pool2d(THDtype dt, const void *x, void *y, int64_t *ind, const int64_t *geom);            /* THCPool.cu */
int thc_max_pool2d_backward(THDtype dt, const void *gy, const int64_t *ind, void *gx, int64_t P, int64_t L, int64_t HW);
int thc_random(int kind, THDtype dt, void *out, int64_t n, double a, double b, uint64_t seed, uint64_t offset);  /* THCRandom.cu */

/* the dense ops (THCReduce.cu, THCNN.cu, THCOptim.cu); see ATCuda.h */
int thc_reduce(ATReduceOp op, THDtype dt, const void *x, int64_t M, int64_t K, int64_t sm, int64_t sk,
               THDtype out_dt, void *out, int64_t *idx, double arg);
int thc_softmax(THDtype dt, const void *x, void *y, int64_t outer, int64_t D, int64_t inner, bool log);
int thc_softmax_backward(THDtype dt, const void *grad, const void *y, void *dx, int64_t outer, int64_t D,
                         int64_t inner, bool log);
int thc_nll_loss(THDtype dt, const void *x, const int64_t *target, const void *w, int64_t N, int64_t C, int64_t S,
                 int reduction, int64_t ignore_index, void *out);
int thc_nll_loss_backward(THDtype dt, const void *grad, const int64_t *target, const void *w, int64_t N, int64_t C,
                          int64_t S, int reduction, int64_t ignore_index, void *gin);
int thc_sgd_step(THDtype dt, void *p, const void *g, void *buf, int64_t n, double lr, double momentum,
                 double dampening, double weight_decay, bool nesterov, bool maximize, bool first);
int thc_adam_step(THDtype dt, void *p, const void *g, void *m, void *v, void *vmax, int64_t n, double lr,
                  double beta1, double beta2, double eps, double weight_decay, double step, bool maximize,
                  bool decoupled);
int thc_index(ATCudaIndex *I);                                                  /* THCIndex.cu */

/* normalization (THCNorm.cu) and average pooling (THCPool.cu); see ATCuda.h */
int thc_batch_norm(THDtype dt, const void *x, const void *w, const void *b, const void *rm, const void *rv, void *y,
                   void *mean, void *invstd, void *new_rm, void *new_rv, int64_t N, int64_t C, int64_t S,
                   bool training, double momentum, double eps);
int thc_batch_norm_backward(THDtype dt, const void *g, const void *x, const void *w, const void *mean,
                            const void *stat1, bool is_var, void *dx, void *dw, void *db, int64_t N, int64_t C,
                            int64_t S, bool training, double eps);
int thc_layer_norm(THDtype dt, const void *x, const void *w, const void *b, void *y, void *mean, void *rstd,
                   int64_t R, int64_t M, double eps);
int thc_layer_norm_backward(THDtype dt, const void *g, const void *x, const void *mean, const void *rstd,
                            const void *w, void *dx, void *dw, void *db, int64_t R, int64_t M);
int thc_avg_pool2d(THDtype dt, const void *x, void *y, const int64_t *geom, bool count_include_pad, int64_t divisor);
int thc_avg_pool2d_backward(THDtype dt, const void *gy, void *gx, const int64_t *geom, bool count_include_pad,
                            int64_t divisor);
int thc_adaptive_avg_pool(THDtype dt, const void *x, void *y, const int64_t *geom);
int thc_adaptive_avg_pool_backward(THDtype dt, const void *gy, void *gx, const int64_t *geom);
int thc_adaptive_max_pool(THDtype dt, const void *x, void *y, int64_t *idx, const int64_t *geom);

/* sort (THCSort.cu) and scans (THCScan.cu); see ATCuda.h */
int thc_sort_rows(THDtype dt, const void *x, int64_t rows, int64_t n, bool descending, void *vals, int64_t *idx);
int thc_scan(int op, THDtype dt, const void *x, void *y, int64_t *idx, int64_t outer, int64_t D, int64_t inner);
int thc_sort_select(THDtype dt, const void *vals, const int64_t *idx, int64_t rows, int64_t n, int mode, int64_t kth,
                    void *out_vals, int64_t *out_idx);
int thc_cumprod_grad(int mode, const double *x, const double *g, const double *a, double *out, int64_t L, int64_t K);

/* embedding_bag (THCEmbedding.cu); see ATCuda.h */
int thc_embedding_bag(THDtype dt, const void *w, const int64_t *idx, const int64_t *start, const void *psw, int64_t B,
                      int64_t D, int64_t pad, int mode, void *out, int64_t *argmax);
int thc_embedding_bag_backward(THDtype dt, const void *g, const int64_t *idx, const int64_t *o2b,
                               const int64_t *bag_size, const int64_t *argmax, const void *psw, int64_t n, int64_t B,
                               int64_t D, int64_t pad, int mode, void *gw);
int thc_embedding_bag_psw_backward(THDtype dt, const void *g, const void *w, const int64_t *idx, const int64_t *o2b,
                                   int64_t n, int64_t D, int64_t pad, void *out);

/* cuDNN (THCCudnn.cu); see ATCuda.h */
int thc_cudnn_version(char *why, int n);
int thc_cudnn_conv(int dir, const ATCudnnConv *p, const void *a, const void *b, void *out);
int thc_cudnn_batch_norm(THDtype dt, const void *x, const void *w, const void *b, const void *rm, const void *rv,
                         void *y, void *mean, void *invstd, void *new_rm, void *new_rv, int64_t N, int64_t C,
                         int64_t S, bool training, double momentum, double eps);
int thc_cudnn_batch_norm_backward(THDtype dt, const void *g, const void *x, const void *w, const void *mean,
                                  const void *stat1, bool is_var, void *dx, void *dw, void *db, int64_t N, int64_t C,
                                  int64_t S, bool training, double eps);
int thc_upsample(THDtype dt, const void *x, void *y, const int64_t *geom, int mode, bool align_corners,
                 const double *scales);                                        /* THCUpsample.cu */
int thc_upsample_backward(THDtype dt, const void *gy, void *gx, const int64_t *geom, int mode, bool align_corners,
                          const double *scales);

#ifdef __cplusplus
}

/* Device scratch from the caching allocator, given back when it goes out of
 * scope. Blocks are stream-ordered, so giving one back right after the
 * launches that use it is safe: only later work on this stream reuses it. */
struct THCScratch {
  void *ptr = NULL, *ctx = NULL;
  size_t n = 0;
  /* 0, or -1 with THError set (out of memory); 0 bytes gives NULL */
  int get(size_t bytes) {
    if (bytes == 0) return 0;
    ptr = THCCachingAllocator.malloc(&THCCachingAllocator, bytes, &ctx);
    if (!ptr) return -1;
    n = bytes;
    return 0;
  }
  THCScratch() = default;
  THCScratch(const THCScratch &) = delete;
  THCScratch &operator=(const THCScratch &) = delete;
  ~THCScratch() {
    if (ptr) THCCachingAllocator.free(&THCCachingAllocator, ptr, n, ctx);
  }
};
#endif
#endif
