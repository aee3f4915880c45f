/* The CUDA device key: what ATen asks of src/THC, as one table of function
 * pointers.
 *
 * libATen never links the CUDA libraries, so one build serves machines with
 * and without a GPU. libTHC (built by nvcc where it exists) exports
 * THC_hooks(); `cthtorch.cuda` loads it on first use and hands the table to
 * at_cuda_register(). Until then at_cuda is NULL and no tensor can be on a
 * GPU, so every `at_cuda->` call below sits behind a THTensor_device() >= 0.
 *
 * Elementwise kernels are found by their CPU twin: ATen's loop driver
 * passes the TH kernel it would run on the host (THFloatTensor_add_loop) and
 * libTHC looks up the CUDA kernel registered for it. So an elementwise op
 * needs no ATen change to run on the GPU, only its kernel in src/THC.
 *
 * Plain C: src/THC includes it from C++ (nvcc) inside extern "C". */
#ifndef AT_CUDA_H
#define AT_CUDA_H

#include "../TH/THAllocator.h"   /* not THTensor.h: C11 atomics do not compile as C++ */
#include "../TH/THDispatch.h"

#ifdef __cplusplus
extern "C" {
#endif

#define AT_CUDA_ABI 2          /* bumped when this table changes shape */
#define AT_CUDA_MAX_OPS 8

/* One elementwise launch: the geometry ATen's loop driver computed
 * (broadcast, coalesced, innermost dimension first, byte strides).
 * Operand 0 is the output. A host_scalar operand is a 0-d CPU tensor (a
 * Python number, x.sum() of a CPU tensor) broadcast into a GPU op: its value
 * travels in `scalar` (already in dtype[k]) and data[k] is NULL. */
typedef struct ATCudaLoop {
  int ndim, nops;
  int64_t shape[TH_MAX_DIMS];
  int64_t strides[AT_CUDA_MAX_OPS][TH_MAX_DIMS];
  char *data[AT_CUDA_MAX_OPS];
  THDtype dtype[AT_CUDA_MAX_OPS];
  bool host_scalar[AT_CUDA_MAX_OPS];
  union { double d; int64_t i; unsigned char bytes[8]; } scalar[AT_CUDA_MAX_OPS];
} ATCudaLoop;

/* what at_cuda->reduce computes per row */
typedef enum { AT_RED_SUM, AT_RED_PROD, AT_RED_MAX, AT_RED_MIN, AT_RED_ALL, AT_RED_ANY, AT_RED_VAR, AT_RED_STD,
               AT_RED_LOGSUMEXP, AT_RED_NORM2 } ATReduceOp;

typedef enum { AT_H2D = 1, AT_D2H = 2, AT_D2D = 3 } ATCopyKind;

typedef struct ATCudaProps {
  char name[256];
  int major, minor, multi_processor_count;
  int64_t total_memory;
  int is_integrated, is_multi_gpu_board, warp_size, max_threads_per_multi_processor;
  int64_t l2_cache_size;
} ATCudaProps;

/* memory_stats() fills these, per device, in bytes (counts where named) */
enum { AT_MEM_ALLOCATED, AT_MEM_PEAK_ALLOCATED, AT_MEM_RESERVED, AT_MEM_PEAK_RESERVED,
       AT_MEM_NUM_ALLOC_RETRIES, AT_MEM_NUM_OOMS, AT_MEM_NUM_ALLOCS, AT_MEM_NUM_FREES, AT_MEM_NSTATS };

/* One indexing launch (gather, put, accumulate): a thread per position of
 * the iteration shape (ndim sizes, element strides, outermost first). At a
 * position the self slot is  sum(coord * ss) + sum_k idx[k][sum(coord * is)] * istride[k]
 * and the other operand (the gather's output, the put's values) is at
 * sum(coord * os). One `is` serves every index (ATen makes them contiguous
 * and broadcast alike); gather/scatter's per-element index is nidx == 1.
 * An index equal to skip touches nothing (embedding's padding_idx); wrap
 * adds isize[k] to a negative one; one still outside [0, isize[k]) is
 * reported back (the call waits for the GPU to read the flag). */
enum { AT_CUDA_INDEX_MAX = 8 };
/* PROD/AMAX/AMIN combine other into the self slot as scatter_reduce does
 * (a NaN wins amax/amin and stays), by compare-and-swap; alpha is unused. */
typedef enum { AT_IDX_GATHER, AT_IDX_PUT, AT_IDX_ACCUM, AT_IDX_PROD, AT_IDX_AMAX, AT_IDX_AMIN } ATIndexOp;
typedef struct ATCudaIndex {
  ATIndexOp op;
  THDtype dt;
  int ndim, nidx;
  bool wrap;
  int64_t skip;                                  /* INT64_MIN: none */
  double alpha;                                  /* ACCUM: other * alpha (1 for a plain add) */
  int64_t sizes[TH_MAX_DIMS], ss[TH_MAX_DIMS], os[TH_MAX_DIMS], is[TH_MAX_DIMS];
  const int64_t *idx[AT_CUDA_INDEX_MAX];
  int64_t isize[AT_CUDA_INDEX_MAX], istride[AT_CUDA_INDEX_MAX];
  char *self, *other;
  int bad_k;                                     /* out: which index, and its value */
  int64_t bad_value;
} ATCudaIndex;

/* torch.backends.cudnn's flags. libATen holds them (at_cudnn_flags, set from
 * Python before or after libTHC loads) and hands them to each cuDNN call. */
typedef struct ATCudnnFlags {
  bool enabled, benchmark, deterministic, allow_tf32;
} ATCudnnFlags;

/* One cuDNN convolution: NCHW input [N, C, H, W], OIHW weight [O, C/G, KH, KW],
 * output [N, O, OH, OW], every buffer contiguous and of dt. */
typedef struct ATCudnnConv {
  THDtype dt;
  int64_t N, C, H, W, O, KH, KW, SH, SW, PH, PW, DH, DW, OH, OW, G;
  ATCudnnFlags flags;
} ATCudnnConv;
enum { AT_CUDNN_FWD = 0, AT_CUDNN_BWD_DATA = 1, AT_CUDNN_BWD_FILTER = 2 };

/* Every function returns 0 (or a value >= 0) on success, -1 with THError set. */
typedef struct ATCudaHooks {
  int abi;                                   /* AT_CUDA_ABI */

  /* ---- devices (THCGeneral.cu) ---- */
  int (*device_count)(void);
  int (*current_device)(void);
  int (*set_device)(int device);             /* cheap when already current */
  int (*synchronize)(int device);            /* also reports an earlier kernel's error */
  int (*device_props)(int device, ATCudaProps *props);

  /* ---- memory (THCAllocator.cu) ---- */
  const THAllocator *allocator;              /* caching allocator, current device and stream */
  const THAllocator *host_allocator;         /* pinned host memory (cudaHostAlloc) */
  int (*memory_stats)(int device, int64_t stats[AT_MEM_NSTATS]);
  void (*reset_peak_stats)(int device);
  void (*empty_cache)(void);
  int (*mem_get_info)(int device, int64_t *free_bytes, int64_t *total_bytes);
  /* contiguous bytes; non_blocking returns once queued on the current stream */
  int (*memcpy)(void *dst, const void *src, size_t nbytes, ATCopyKind kind, bool non_blocking);

  /* ---- streams and events (THCGeneral.cu); handles are cudaStream_t / cudaEvent_t ---- */
  void *(*stream_create)(int priority);
  int (*stream_destroy)(void *stream);
  void *(*current_stream)(void);             /* NULL: the legacy default stream */
  int (*set_stream)(void *stream);
  int (*stream_query)(void *stream);         /* 1 done, 0 busy, -1 error */
  int (*stream_synchronize)(void *stream);
  int (*stream_wait_event)(void *stream, void *event);
  void *(*event_create)(bool enable_timing, bool blocking);
  int (*event_destroy)(void *event);
  int (*event_record)(void *event, void *stream);
  int (*event_query)(void *event);
  int (*event_synchronize)(void *event);
  int (*event_elapsed)(void *start, void *end, float *ms);

  /* ---- elementwise (THCLoop.cu): the CUDA twin of the TH kernel cpu_fn;
   * TH_ERR_NOTIMPL when none is registered. extra: the THOpArgs (or NULL) ---- */
  int (*loop)(THLoopFn cpu_fn, const ATCudaLoop *L, const void *extra);
  /* ---- GEMM (THCBlas.cu): column-major, as BLAS; dtype float32/float64/float16/bfloat16.
   * Batched: batch products at the given element strides (0 broadcasts). ---- */
  int (*gemm)(THDtype dt, char transa, char transb, int64_t m, int64_t n, int64_t k, double alpha,
              const void *a, int64_t lda, int64_t stride_a, const void *b, int64_t ldb, int64_t stride_b,
              double beta, void *c, int64_t ldc, int64_t stride_c, int64_t batch);

  /* ---- convolution, pooling, random numbers (THCConv.cu, THCPool.cu, THCRandom.cu) ----
   * conv shape: C, H, W, KH, KW, OH, OW, sh, sw, ph, pw, dh, dw (C: the channels of one
   * group); nb images xs elements apart; columns (C*KH*KW) x (OH*OW) per image, packed.
   * col2im writes every element of x. Floating dtypes (16-bit ones accumulate in float). */
  int (*im2col)(THDtype dt, const void *x, void *col, int64_t nb, const int64_t *shape, int64_t xs);
  int (*col2im)(THDtype dt, const void *col, void *x, int64_t nb, const int64_t *shape, int64_t xs);
  /* geom: P (planes), H, W, OH, OW, KH, KW, SH, SW, PH, PW, DH, DW; contiguous planes */
  int (*max_pool2d)(THDtype dt, const void *x, void *y, int64_t *indices, const int64_t *geom);
  /* gx (P planes of HW) = 0, then gy scatter-added at indices (P planes of L) */
  int (*max_pool2d_backward)(THDtype dt, const void *gy, const int64_t *indices, void *gx, int64_t P, int64_t L,
                             int64_t HW);
  /* n contiguous elements: kind 0 uniform [a, b), 1 normal (mean a, std b), 2 bernoulli (p a);
   * Philox at (seed, offset) */
  int (*random)(int kind, THDtype dt, void *out, int64_t n, double a, double b, uint64_t seed, uint64_t offset);

  /* ---- dense ops: reductions (THCReduce.cu), softmax and nll_loss (THCNN.cu),
   * fused optimizer steps (THCOptim.cu) ---- */
  /* M rows of K elements of dtype dt at x, element strides sm (row to row) and
   * sk (along a row), as ATReduce.h's 2-d driver lays them out. Writes M
   * contiguous values in out_dt to out, and for MAX/MIN the int64 index of
   * each row's extreme to idx (else NULL). arg: the scale of SUM (1, or 1/K
   * for a mean), the correction of VAR/STD. */
  int (*reduce)(ATReduceOp op, THDtype dt, const void *x, int64_t M, int64_t K, int64_t sm, int64_t sk,
                THDtype out_dt, void *out, int64_t *idx, double arg);
  /* contiguous [outer, D, inner] tensors of dt (float32/float64) */
  int (*softmax)(THDtype dt, const void *x, void *y, int64_t outer, int64_t D, int64_t inner, bool log);
  int (*softmax_backward)(THDtype dt, const void *grad, const void *y, void *dx, int64_t outer, int64_t D,
                          int64_t inner, bool log);
  /* x contiguous [N, C, S] of dt (float32/float64), target N*S int64, w C values of dt or NULL.
   * reduction 0 ('none'): out holds N*S values, else one. An out-of-range target
   * gives TH_ERR_INDEX "Target %lld is out of bounds." (the call waits for the GPU). */
  int (*nll_loss)(THDtype dt, const void *x, const int64_t *target, const void *w, int64_t N, int64_t C, int64_t S,
                  int reduction, int64_t ignore_index, void *out);
  /* gin: N*C*S values of dt, written whole; grad: N*S values ('none') or one */
  int (*nll_loss_backward)(THDtype dt, const void *grad, const int64_t *target, const void *w, int64_t N, int64_t C,
                           int64_t S, int reduction, int64_t ignore_index, void *gin);
  /* the updates of ATOptim.h on n contiguous values of dt (float32/float64) */
  int (*sgd_step)(THDtype dt, void *p, const void *g, void *buf, int64_t n, double lr, double momentum,
                  double dampening, double weight_decay, bool nesterov, bool maximize, bool first);
  int (*adam_step)(THDtype dt, void *p, const void *g, void *m, void *v, void *vmax, int64_t n, double lr,
                   double beta1, double beta2, double eps, double weight_decay, double step, bool maximize,
                   bool decoupled);

  /* ---- indexing (THCIndex.cu): one launch of ATCudaIndex; 0, 1 when an index was out of
   * range (bad_k/bad_value say which; nothing is reported through THError), -1 with THError ---- */
  int (*index)(struct ATCudaIndex *I);
  /* ---- normalization (THCNorm.cu) and average pooling (THCPool.cu) ----
   * float32/float64 (dt); every buffer contiguous and of dt. An optional vector
   * passed as NULL takes torch's default: weight 1, bias 0, mean 0, var/invstd 1. */
  /* batch norm of x [N, C, S] into y. training: the batch mean and invstd (biased
   * variance) into mean/invstd; new_rm/new_rv (NULL when rm/rv are) get rm/rv moved
   * toward the batch stats by momentum (unbiased variance). Eval: mean = rm,
   * invstd = 1/sqrt(rv + eps). */
  int (*batch_norm)(THDtype dt, const void *x, const void *w, const void *b, const void *rm, const void *rv, void *y,
                    void *mean, void *invstd, void *new_rm, void *new_rv, int64_t N, int64_t C, int64_t S,
                    bool training, double momentum, double eps);
  /* dx (N*C*S), dw and db (C each); stat1 is the invstd, or (is_var) the variance to which eps is added */
  int (*batch_norm_backward)(THDtype dt, const void *g, const void *x, const void *w, const void *mean,
                             const void *stat1, bool is_var, void *dx, void *dw, void *db, int64_t N, int64_t C,
                             int64_t S, bool training, double eps);
  /* R rows of M elements; w, b, dw, db: M values; mean, rstd: R */
  int (*layer_norm)(THDtype dt, const void *x, const void *w, const void *b, void *y, void *mean, void *rstd,
                    int64_t R, int64_t M, double eps);
  int (*layer_norm_backward)(THDtype dt, const void *g, const void *x, const void *mean, const void *rstd,
                             const void *w, void *dx, void *dw, void *db, int64_t R, int64_t M);
  /* geom: P, H, W, OH, OW, KH, KW, SH, SW, PH, PW; divisor 0: the window's count
   * (count_include_pad as torch). The backward writes every element of gx. */
  int (*avg_pool2d)(THDtype dt, const void *x, void *y, const int64_t *geom, bool count_include_pad,
                    int64_t divisor);
  int (*avg_pool2d_backward)(THDtype dt, const void *gy, void *gx, const int64_t *geom, bool count_include_pad,
                             int64_t divisor);
  /* geom: P, D, H, W, OD, OH, OW (2-d: D = OD = 1); the backward writes every element of gx */
  int (*adaptive_avg_pool)(THDtype dt, const void *x, void *y, const int64_t *geom);
  int (*adaptive_avg_pool_backward)(THDtype dt, const void *gy, void *gx, const int64_t *geom);

  /* ---- cuDNN (THCCudnn.cu), opened at run time. The calls below return 1
   * when cuDNN did the work, 0 when it declined (not loadable, or a dtype or
   * shape it does not take; nothing written, no error: the caller runs its own
   * kernels), -1 with THError set. ---- */
  /* cudnnGetVersion() (9.28.1 is 92801), or 0 with why (n bytes) saying why it cannot load */
  int (*cudnn_version)(char *why, int n);
  /* AT_CUDNN_FWD: out = conv(a = x, b = w); BWD_DATA: out = dx from a = dy, b = w;
   * BWD_FILTER: out = dw from a = x, b = dy. out is overwritten. */
  int (*cudnn_conv)(int dir, const ATCudnnConv *p, const void *a, const void *b, void *out);
  /* as batch_norm and batch_norm_backward above (spatial batch norm, float32) */
  int (*cudnn_batch_norm)(THDtype dt, const void *x, const void *w, const void *b, const void *rm, const void *rv,
                          void *y, void *mean, void *invstd, void *new_rm, void *new_rv, int64_t N, int64_t C,
                          int64_t S, bool training, double momentum, double eps);
  int (*cudnn_batch_norm_backward)(THDtype dt, const void *g, const void *x, const void *w, const void *mean,
                                   const void *stat1, bool is_var, void *dx, void *dw, void *db, int64_t N,
                                   int64_t C, int64_t S, bool training, double eps);
  /* ---- sort, scans, adaptive max pooling (THCSort.cu, THCScan.cu, THCPool.cu) ---- */
  /* rows contiguous rows of n elements of dt (any dtype) at x: each row's stable
   * ascending (descending) order into idx (rows*n positions within the row), and
   * the values in that order into vals (NULL: not wanted). NaN sorts above
   * everything and -0.0 ties with 0.0, as on the CPU. */
  int (*sort_rows)(THDtype dt, const void *x, int64_t rows, int64_t n, bool descending, void *vals, int64_t *idx);
  /* one pick per row of ascending sort_rows output (vals, idx): mode 0 column kth;
   * 1 the median ((n-1)/2, or the row's first NaN); 2 the nanmedian (the middle of
   * the non-NaN values, column 0 for an all-NaN row) into out_vals, out_idx (rows each) */
  int (*sort_select)(THDtype dt, const void *vals, const int64_t *idx, int64_t rows, int64_t n, int mode, int64_t kth,
                     void *out_vals, int64_t *out_idx);
  /* op (src/TH/THKernelsScan.h's THScanOp) along D of contiguous [outer, D, inner]
   * blocks x and y of dt; MAX/MIN also write idx. Accumulates as the CPU: double
   * for float/double, float for 16-bit floats, wrapping 64-bit for integers. */
  int (*scan)(int op, THDtype dt, const void *x, void *y, int64_t *idx, int64_t outer, int64_t D, int64_t inner);
  /* cumprod's backward (mode 0) and its derivatives for grad (1) and self (2), as
   * ATScan.c's lines: L contiguous lines of K doubles in x, g, a (NULL for mode 0), out */
  int (*cumprod_grad)(int mode, const double *x, const double *g, const double *a, double *out, int64_t L, int64_t K);
  /* geom: P, D, H, W, OD, OH, OW (2-d: D = OD = 1), contiguous planes of dt
   * (float32/float64); idx: each maximum's flat position in its input plane */
  int (*adaptive_max_pool)(THDtype dt, const void *x, void *y, int64_t *idx, const int64_t *geom);

  /* ---- embedding_bag (THCEmbedding.cu), float32/float64 (dt), contiguous, as
   * ATEmbedding.c: w (V, D); n int64 indices in [0, V); bag b holds indices
   * [start[b], start[b+1]) (B + 1 values); rows equal to pad (-1: none) take no part;
   * mode 0 sum (each row scaled by psw[t] when psw is given), 1 mean, 2 max. ---- */
  /* out (B, D); argmax (B, D) for max: the row each maximum came from (0 in an empty bag) */
  int (*embedding_bag)(THDtype dt, const void *w, const int64_t *idx, const int64_t *start, const void *psw, int64_t B,
                       int64_t D, int64_t pad, int mode, void *out, int64_t *argmax);
  /* gw (V, D), zeroed by the caller, gets g (B, D) back: for sum/mean through every
   * index t (bag o2b[t], divided by bag_size for mean), for max through argmax of
   * bags with bag_size > 0 */
  int (*embedding_bag_backward)(THDtype dt, const void *g, const int64_t *idx, const int64_t *o2b,
                                const int64_t *bag_size, const int64_t *argmax, const void *psw, int64_t n, int64_t B,
                                int64_t D, int64_t pad, int mode, void *gw);
  /* out[t] = <g[o2b[t]], w[idx[t]]> (0 for a padding row), n values */
  int (*embedding_bag_psw_backward)(THDtype dt, const void *g, const void *w, const int64_t *idx, const int64_t *o2b,
                                    int64_t n, int64_t D, int64_t pad, void *out);
  /* ---- upsampling (THCUpsample.cu): contiguous float32/float64 planes (dt). geom: P, D, H, W,
   * OD, OH, OW, nsp (the op's spatial dims: D = OD = 1 when nsp < 3, H = OH = 1 too when
   * nsp == 1); mode: a THUpsampleMode
   * (src/TH/THUpsample.h); scales (d, h, w): the user's scale factors, <= 0 for none.
   * The backward writes every element of gx. ---- */
  int (*upsample)(THDtype dt, const void *x, void *y, const int64_t *geom, int mode, bool align_corners,
                  const double *scales);
  int (*upsample_backward)(THDtype dt, const void *gy, void *gx, const int64_t *geom, int mode,
                           bool align_corners, const double *scales);
} ATCudaHooks;

/* NULL until cthtorch.cuda initialised libTHC (ATDevice.c). */
TH_API extern const ATCudaHooks *at_cuda;
TH_API int at_cuda_register(const ATCudaHooks *hooks);
/* torch.backends.cudnn's flags (torch's defaults: enabled, allow_tf32) */
TH_API extern ATCudnnFlags at_cudnn_flags;
/* calls cuDNN took (1) and declined (0), for tests that check which path ran */
TH_API extern int64_t at_cudnn_taken, at_cudnn_declined;

#ifdef __cplusplus
}
#endif
#endif
