// Convolution and batch norm through cuDNN, opened at run time.
//
// As with cuBLAS (THCBlas.cu), the build machines have neither cuDNN's
// headers nor its library, and libTHC must load where cuDNN is absent, so the
// few legacy-API declarations used here are written out by hand from cuDNN
// 9's cudnn_graph.h / cudnn_ops.h / cudnn_cnn.h. A call cuDNN cannot take
// (library missing, a dtype or shape it does not support) is declined: it
// returns 0 and the caller runs libTHC's own kernels, as PyTorch falls back to
// its native ones.
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "THCGeneral.h"

typedef struct cudnnContext *cudnnHandle_t;
typedef struct cudnnTensorStruct *cudnnTensorDescriptor_t;
typedef struct cudnnFilterStruct *cudnnFilterDescriptor_t;
typedef struct cudnnConvolutionStruct *cudnnConvolutionDescriptor_t;
typedef int cudnnStatus_t;

enum { CUDNN_STATUS_SUCCESS = 0 };
// 3000..3999: CUDNN_STATUS_NOT_SUPPORTED and its refinements (declined, not errors)
static bool not_supported(cudnnStatus_t s) { return s >= 3000 && s < 4000; }
enum { CUDNN_DATA_FLOAT = 0, CUDNN_DATA_DOUBLE = 1, CUDNN_DATA_HALF = 2, CUDNN_DATA_BFLOAT16 = 9 };
enum { CUDNN_DEFAULT_MATH = 0, CUDNN_TENSOR_OP_MATH = 1, CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION = 2,
       CUDNN_FMA_MATH = 3 };
enum { CUDNN_TENSOR_NCHW = 0 };
enum { CUDNN_CROSS_CORRELATION = 1 };
enum { CUDNN_NON_DETERMINISTIC = 0, CUDNN_DETERMINISTIC = 1 };
enum { CUDNN_BATCHNORM_SPATIAL = 1 };

// the three perf structs share this layout (cudnnConvolution{Fwd,BwdData,BwdFilter}AlgoPerf_t)
typedef struct {
  int algo;
  cudnnStatus_t status;
  float time;
  size_t memory;
  int determinism;
  int mathType;
  int reserved[3];
} cudnnAlgoPerf_t;

typedef cudnnTensorDescriptor_t TD;
typedef cudnnFilterDescriptor_t FD;
typedef cudnnConvolutionDescriptor_t CD;
typedef cudnnHandle_t H;

static struct {
  size_t (*get_version)(void);
  const char *(*error_string)(cudnnStatus_t);
  cudnnStatus_t (*create)(H *);
  cudnnStatus_t (*set_stream)(H, cudaStream_t);
  cudnnStatus_t (*create_tensor)(TD *);
  cudnnStatus_t (*set_tensor_nd)(TD, int, int, const int *, const int *);
  cudnnStatus_t (*destroy_tensor)(TD);
  cudnnStatus_t (*create_filter)(FD *);
  cudnnStatus_t (*set_filter_4d)(FD, int, int, int, int, int, int);
  cudnnStatus_t (*destroy_filter)(FD);
  cudnnStatus_t (*create_conv)(CD *);
  cudnnStatus_t (*set_conv_2d)(CD, int, int, int, int, int, int, int, int);
  cudnnStatus_t (*destroy_conv)(CD);
  cudnnStatus_t (*set_math)(CD, int);
  cudnnStatus_t (*set_groups)(CD, int);
  cudnnStatus_t (*fwd_max)(H, int *);
  cudnnStatus_t (*bwd_data_max)(H, int *);
  cudnnStatus_t (*bwd_filter_max)(H, int *);
  cudnnStatus_t (*fwd_v7)(H, TD, FD, CD, TD, int, int *, cudnnAlgoPerf_t *);
  cudnnStatus_t (*bwd_data_v7)(H, FD, TD, CD, TD, int, int *, cudnnAlgoPerf_t *);
  cudnnStatus_t (*bwd_filter_v7)(H, TD, TD, CD, FD, int, int *, cudnnAlgoPerf_t *);
  cudnnStatus_t (*fwd_find)(H, TD, const void *, FD, const void *, CD, TD, void *, int, int *, cudnnAlgoPerf_t *,
                            void *, size_t);
  cudnnStatus_t (*bwd_data_find)(H, FD, const void *, TD, const void *, CD, TD, void *, int, int *,
                                 cudnnAlgoPerf_t *, void *, size_t);
  cudnnStatus_t (*bwd_filter_find)(H, TD, const void *, TD, const void *, CD, FD, void *, int, int *,
                                   cudnnAlgoPerf_t *, void *, size_t);
  cudnnStatus_t (*fwd_ws)(H, TD, FD, CD, TD, int, size_t *);
  cudnnStatus_t (*bwd_data_ws)(H, FD, TD, CD, TD, int, size_t *);
  cudnnStatus_t (*bwd_filter_ws)(H, TD, TD, CD, FD, int, size_t *);
  cudnnStatus_t (*fwd)(H, const void *, TD, const void *, FD, const void *, CD, int, void *, size_t, const void *, TD,
                       void *);
  cudnnStatus_t (*bwd_data)(H, const void *, FD, const void *, TD, const void *, CD, int, void *, size_t,
                            const void *, TD, void *);
  cudnnStatus_t (*bwd_filter)(H, const void *, TD, const void *, TD, const void *, CD, int, void *, size_t,
                              const void *, FD, void *);
  cudnnStatus_t (*bn_train)(H, int, const void *, const void *, TD, const void *, TD, void *, TD, const void *,
                            const void *, double, void *, void *, double, void *, void *);
  cudnnStatus_t (*bn_infer)(H, int, const void *, const void *, TD, const void *, TD, void *, TD, const void *,
                            const void *, const void *, const void *, double);
  cudnnStatus_t (*bn_backward)(H, int, const void *, const void *, const void *, const void *, TD, const void *, TD,
                               const void *, TD, void *, TD, const void *, void *, void *, double, const void *,
                               const void *);
} dn;
static pthread_once_t dn_once = PTHREAD_ONCE_INIT;
static bool dn_ok;
static char dn_error[512];

static void dn_load(void) {
  // cthtorch.cuda preloads the pip nvidia-cudnn library (RTLD_GLOBAL), so the
  // soname resolves to it; otherwise the system's, if any
  static const char *const libs[] = { "libcudnn.so.9", "libcudnn.so" };
  const THCSymbol syms[] = {
    { (void **)&dn.get_version, "cudnnGetVersion" },
    { (void **)&dn.error_string, "cudnnGetErrorString" },
    { (void **)&dn.create, "cudnnCreate" },
    { (void **)&dn.set_stream, "cudnnSetStream" },
    { (void **)&dn.create_tensor, "cudnnCreateTensorDescriptor" },
    { (void **)&dn.set_tensor_nd, "cudnnSetTensorNdDescriptor" },
    { (void **)&dn.destroy_tensor, "cudnnDestroyTensorDescriptor" },
    { (void **)&dn.create_filter, "cudnnCreateFilterDescriptor" },
    { (void **)&dn.set_filter_4d, "cudnnSetFilter4dDescriptor" },
    { (void **)&dn.destroy_filter, "cudnnDestroyFilterDescriptor" },
    { (void **)&dn.create_conv, "cudnnCreateConvolutionDescriptor" },
    { (void **)&dn.set_conv_2d, "cudnnSetConvolution2dDescriptor" },
    { (void **)&dn.destroy_conv, "cudnnDestroyConvolutionDescriptor" },
    { (void **)&dn.set_math, "cudnnSetConvolutionMathType" },
    { (void **)&dn.set_groups, "cudnnSetConvolutionGroupCount" },
    { (void **)&dn.fwd_max, "cudnnGetConvolutionForwardAlgorithmMaxCount" },
    { (void **)&dn.bwd_data_max, "cudnnGetConvolutionBackwardDataAlgorithmMaxCount" },
    { (void **)&dn.bwd_filter_max, "cudnnGetConvolutionBackwardFilterAlgorithmMaxCount" },
    { (void **)&dn.fwd_v7, "cudnnGetConvolutionForwardAlgorithm_v7" },
    { (void **)&dn.bwd_data_v7, "cudnnGetConvolutionBackwardDataAlgorithm_v7" },
    { (void **)&dn.bwd_filter_v7, "cudnnGetConvolutionBackwardFilterAlgorithm_v7" },
    { (void **)&dn.fwd_find, "cudnnFindConvolutionForwardAlgorithmEx" },
    { (void **)&dn.bwd_data_find, "cudnnFindConvolutionBackwardDataAlgorithmEx" },
    { (void **)&dn.bwd_filter_find, "cudnnFindConvolutionBackwardFilterAlgorithmEx" },
    { (void **)&dn.fwd_ws, "cudnnGetConvolutionForwardWorkspaceSize" },
    { (void **)&dn.bwd_data_ws, "cudnnGetConvolutionBackwardDataWorkspaceSize" },
    { (void **)&dn.bwd_filter_ws, "cudnnGetConvolutionBackwardFilterWorkspaceSize" },
    { (void **)&dn.fwd, "cudnnConvolutionForward" },
    { (void **)&dn.bwd_data, "cudnnConvolutionBackwardData" },
    { (void **)&dn.bwd_filter, "cudnnConvolutionBackwardFilter" },
    { (void **)&dn.bn_train, "cudnnBatchNormalizationForwardTraining" },
    { (void **)&dn.bn_infer, "cudnnBatchNormalizationForwardInference" },
    { (void **)&dn.bn_backward, "cudnnBatchNormalizationBackward" },
  };
  if (thc_open_library("cuDNN", libs, 2, syms, (int)(sizeof syms / sizeof *syms), dn_error, sizeof dn_error) < 0)
    return;
  if (dn.get_version() < 90000) {
    snprintf(dn_error, sizeof dn_error, "cuDNN %zu is too old (9.0 or newer is needed)", dn.get_version());
    return;
  }
  dn_ok = true;
}

static bool loaded(void) {
  pthread_once(&dn_once, dn_load);
  return dn_ok;
}

// "cuDNN error: CUDNN_STATUS_... in cudnnConvolutionForward", as PyTorch words it
static int dn_check(cudnnStatus_t s, const char *what) {
  if (s == CUDNN_STATUS_SUCCESS) return 0;
  const char *msg = dn.error_string ? dn.error_string(s) : NULL;
  THError_set(s == 4003 || s == 2006 ? TH_ERR_MEMORY : TH_ERR_RUNTIME, "cuDNN error: %s (status %d) in %s",
              msg ? msg : "unknown status", (int)s, what);
  return -1;
}

// A handle per thread and device: a handle carries its stream, and threads
// launching on different streams must not share one (thread-local, so
// creating one needs no lock).
static __thread H handles[THC_MAX_DEVICES];

// Handle creation failing for want of a sub-library, driver or GPU support is
// cuDNN being unusable here: it is switched off for the process (the reason is
// kept for torch.backends.cudnn.version()'s caller) and calls are declined.
static volatile bool dn_broken;

// The handle, or NULL: with THError set (*declined false), or cuDNN unusable (*declined true)
static H handle_for_current(bool *declined) {
  *declined = false;
  if (dn_broken) { *declined = true; return NULL; }
  int dev = thc_current_device_slot();
  if (dev < 0) return NULL;
  if (!handles[dev]) {
    H h = NULL;
    cudnnStatus_t s = dn.create(&h);
    if (s == 1001 || s == 1002 || s == 1008 || not_supported(s)) {
      const char *msg = dn.error_string ? dn.error_string(s) : NULL;
      snprintf(dn_error, sizeof dn_error, "cuDNN was loaded but cudnnCreate failed: %s (status %d)",
               msg ? msg : "unknown status", (int)s);
      dn_broken = true;
      *declined = true;
      return NULL;
    }
    if (dn_check(s, "cudnnCreate") < 0) return NULL;
    handles[dev] = h;
  }
  if (dn_check(dn.set_stream(handles[dev], thc_stream()), "cudnnSetStream") < 0) return NULL;
  return handles[dev];
}

extern "C" int thc_cudnn_version(char *why, int n) {
  if (loaded()) {
    bool declined;
    if (handle_for_current(&declined) || !declined) {
      THError_clear();   // a transient failure here is not cuDNN missing
      return (int)dn.get_version();
    }
  }
  if (why && n > 0) snprintf(why, (size_t)n, "%s", dn_error);
  return 0;
}

static int data_type(THDtype dt) {
  switch (dt) {
    case TH_Float: return CUDNN_DATA_FLOAT;
    case TH_Double: return CUDNN_DATA_DOUBLE;
    case TH_Half: return CUDNN_DATA_HALF;
    case TH_BFloat16: return CUDNN_DATA_BFLOAT16;
    default: return -1;
  }
}

static bool fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

// ---------------------------------------------------------------- convolution

// the descriptors of one convolution, destroyed with it
struct ConvDescs {
  TD x = NULL, y = NULL;
  FD w = NULL;
  CD c = NULL;
  ~ConvDescs() {
    if (x) dn.destroy_tensor(x);
    if (y) dn.destroy_tensor(y);
    if (w) dn.destroy_filter(w);
    if (c) dn.destroy_conv(c);
  }
};

static cudnnStatus_t set_nchw(TD d, int ty, int64_t n, int64_t c, int64_t h, int64_t w) {
  int dims[4] = { (int)n, (int)c, (int)h, (int)w };
  int strides[4] = { (int)(c * h * w), (int)(h * w), (int)w, 1 };
  return dn.set_tensor_nd(d, ty, 4, dims, strides);
}

// The math type PyTorch gives a convolution: tensor cores for the 16-bit
// types; for float32, CUDNN_DEFAULT_MATH (which lets cuDNN use TF32) when
// allow_tf32, else CUDNN_FMA_MATH (plain float FMA); default for double.
static int base_math(const ATCudnnConv *p) {
  if (p->dt == TH_Half || p->dt == TH_BFloat16) return CUDNN_TENSOR_OP_MATH;
  if (p->dt == TH_Float && !p->flags.allow_tf32) return CUDNN_FMA_MATH;
  return CUDNN_DEFAULT_MATH;
}

// 1: built; 0: cuDNN refused the geometry (declined); -1: error
static int build_descs(const ATCudnnConv *p, ConvDescs *d) {
  int ty = data_type(p->dt);
  int cty = p->dt == TH_Double ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;   // accumulate in float for 16-bit
  struct { cudnnStatus_t s; const char *what; } steps[8];
  int k = 0;
#define STEP(call, name) do { steps[k].s = (call); steps[k].what = name; if (steps[k++].s) goto check; } while (0)
  STEP(dn.create_tensor(&d->x), "cudnnCreateTensorDescriptor");
  STEP(dn.create_tensor(&d->y), "cudnnCreateTensorDescriptor");
  STEP(dn.create_filter(&d->w), "cudnnCreateFilterDescriptor");
  STEP(dn.create_conv(&d->c), "cudnnCreateConvolutionDescriptor");
  STEP(set_nchw(d->x, ty, p->N, p->C, p->H, p->W), "cudnnSetTensorNdDescriptor");
  STEP(set_nchw(d->y, ty, p->N, p->O, p->OH, p->OW), "cudnnSetTensorNdDescriptor");
  STEP(dn.set_filter_4d(d->w, ty, CUDNN_TENSOR_NCHW, (int)p->O, (int)(p->C / p->G), (int)p->KH, (int)p->KW),
       "cudnnSetFilter4dDescriptor");
  STEP(dn.set_conv_2d(d->c, (int)p->PH, (int)p->PW, (int)p->SH, (int)p->SW, (int)p->DH, (int)p->DW,
                      CUDNN_CROSS_CORRELATION, cty), "cudnnSetConvolution2dDescriptor");
  {
    cudnnStatus_t s = dn.set_groups(d->c, (int)p->G);
    if (s) return not_supported(s) ? 0 : dn_check(s, "cudnnSetConvolutionGroupCount");
    s = dn.set_math(d->c, base_math(p));
    if (s) return not_supported(s) ? 0 : dn_check(s, "cudnnSetConvolutionMathType");
  }
  return 1;
check:
#undef STEP
  {
    cudnnStatus_t s = steps[k - 1].s;
    // a shape or dtype the descriptors cannot hold (BAD_PARAM there is a geometry cuDNN rejects)
    if (not_supported(s) || (k > 4 && s >= 2000 && s < 3000)) return 0;
    return dn_check(s, steps[k - 1].what);
  }
}

// The chosen algorithm per convolution, as PyTorch's cache of them: keyed by
// direction, dtype, geometry, device and the flags that change the choice.
struct AlgoKey {     // no padding (six ints, then int64s): keys compare and hash as bytes
  int dir, dev, dt, benchmark, deterministic, tf32;
  int64_t g[16];
};
struct AlgoChoice {
  int algo, math;
  size_t ws;
};
#define ALGO_SLOTS 4096
static struct { bool used; AlgoKey k; AlgoChoice c; } algo_cache[ALGO_SLOTS];
static pthread_mutex_t algo_lock = PTHREAD_MUTEX_INITIALIZER;

static AlgoKey make_key(int dir, const ATCudnnConv *p) {
  AlgoKey k;
  memset(&k, 0, sizeof k);   // padding too: keys compare with memcmp
  k.dir = dir;
  k.dev = thc_current_device();
  k.dt = (int)p->dt;
  k.benchmark = p->flags.benchmark;
  k.deterministic = p->flags.deterministic;
  k.tf32 = p->dt == TH_Float && p->flags.allow_tf32;
  const int64_t v[16] = { p->N, p->C, p->H, p->W, p->O, p->KH, p->KW, p->SH, p->SW, p->PH, p->PW, p->DH, p->DW,
                          p->OH, p->OW, p->G };
  memcpy(k.g, v, sizeof v);
  return k;
}

static unsigned key_hash(const AlgoKey *k) {
  const unsigned char *b = (const unsigned char *)k;
  unsigned h = 2166136261u;
  for (size_t i = 0; i < sizeof *k; i++) h = (h ^ b[i]) * 16777619u;
  return h;
}

static bool cache_get(const AlgoKey *k, AlgoChoice *c) {
  pthread_mutex_lock(&algo_lock);
  bool hit = false;
  for (unsigned i = key_hash(k) % ALGO_SLOTS, n = 0; n < ALGO_SLOTS && algo_cache[i].used; i = (i + 1) % ALGO_SLOTS, n++)
    if (!memcmp(&algo_cache[i].k, k, sizeof *k)) { *c = algo_cache[i].c; hit = true; break; }
  pthread_mutex_unlock(&algo_lock);
  return hit;
}

static void cache_put(const AlgoKey *k, const AlgoChoice *c) {
  pthread_mutex_lock(&algo_lock);
  for (unsigned i = key_hash(k) % ALGO_SLOTS, n = 0; n < ALGO_SLOTS; i = (i + 1) % ALGO_SLOTS, n++)
    if (!algo_cache[i].used || !memcmp(&algo_cache[i].k, k, sizeof *k)) {
      algo_cache[i].used = true;
      memcpy(&algo_cache[i].k, k, sizeof *k);   // padding included, for memcmp
      algo_cache[i].c = *c;
      break;
    }   // a full table keeps what it has: the next call of that shape searches again
  pthread_mutex_unlock(&algo_lock);
}

static int max_algos(H h, int dir, int *n) {
  cudnnStatus_t s = dir == AT_CUDNN_FWD ? dn.fwd_max(h, n) : dir == AT_CUDNN_BWD_DATA ? dn.bwd_data_max(h, n)
                                                                                       : dn.bwd_filter_max(h, n);
  if (dn_check(s, dir == AT_CUDNN_FWD ? "cudnnGetConvolutionForwardAlgorithmMaxCount"
                  : dir == AT_CUDNN_BWD_DATA ? "cudnnGetConvolutionBackwardDataAlgorithmMaxCount"
                                             : "cudnnGetConvolutionBackwardFilterAlgorithmMaxCount") < 0)
    return -1;
  if (*n > 16) *n = 16;
  return 0;
}

static cudnnStatus_t workspace_size(H h, int dir, const ConvDescs *d, int algo, size_t *ws) {
  if (dir == AT_CUDNN_FWD) return dn.fwd_ws(h, d->x, d->w, d->c, d->y, algo, ws);
  if (dir == AT_CUDNN_BWD_DATA) return dn.bwd_data_ws(h, d->w, d->y, d->c, d->x, algo, ws);
  return dn.bwd_filter_ws(h, d->x, d->y, d->c, d->w, algo, ws);
}

static const char *find_name(int dir) {
  return dir == AT_CUDNN_FWD ? "cudnnFindConvolutionForwardAlgorithmEx"
         : dir == AT_CUDNN_BWD_DATA ? "cudnnFindConvolutionBackwardDataAlgorithmEx"
                                    : "cudnnFindConvolutionBackwardFilterAlgorithmEx";
}
static const char *v7_name(int dir) {
  return dir == AT_CUDNN_FWD ? "cudnnGetConvolutionForwardAlgorithm_v7"
         : dir == AT_CUDNN_BWD_DATA ? "cudnnGetConvolutionBackwardDataAlgorithm_v7"
                                    : "cudnnGetConvolutionBackwardFilterAlgorithm_v7";
}

// Workspace cap for a search: no single algorithm may take more than this
#define WS_LIMIT ((size_t)1 << 30)

// Picks the algorithm: benchmark -> time every algorithm on these buffers
// (Find*Ex, which writes out); else cuDNN's heuristics (_v7). deterministic
// keeps only deterministic ones. 1 chosen, 0 none usable (declined), -1 error.
static int choose(H h, int dir, const ATCudnnConv *p, const ConvDescs *d, const void *a, const void *b, void *out,
                  AlgoChoice *c) {
  int maxn = 0, n = 0;
  if (max_algos(h, dir, &maxn) < 0) return -1;
  cudnnAlgoPerf_t perf[16];
  memset(perf, 0, sizeof perf);
  if (p->flags.benchmark) {
    // room for the hungriest algorithm under the cap; algorithms needing more are skipped by cuDNN
    size_t want = 0;
    for (int algo = 0; algo < maxn; algo++) {
      size_t ws = 0;
      if (workspace_size(h, dir, d, algo, &ws) == CUDNN_STATUS_SUCCESS && ws <= WS_LIMIT && ws > want) want = ws;
    }
    THCScratch w;
    while (want > 0 && w.get(want) < 0) {   // less room: fewer candidates, not a failure
      THError_clear();
      want /= 2;
    }
    cudnnStatus_t s;
    if (dir == AT_CUDNN_FWD)
      s = dn.fwd_find(h, d->x, a, d->w, b, d->c, d->y, out, maxn, &n, perf, w.ptr, w.n);
    else if (dir == AT_CUDNN_BWD_DATA)
      s = dn.bwd_data_find(h, d->w, b, d->y, a, d->c, d->x, out, maxn, &n, perf, w.ptr, w.n);
    else
      s = dn.bwd_filter_find(h, d->x, a, d->y, b, d->c, d->w, out, maxn, &n, perf, w.ptr, w.n);
    if (s) return not_supported(s) ? 0 : dn_check(s, find_name(dir));
  } else {
    cudnnStatus_t s;
    if (dir == AT_CUDNN_FWD) s = dn.fwd_v7(h, d->x, d->w, d->c, d->y, maxn, &n, perf);
    else if (dir == AT_CUDNN_BWD_DATA) s = dn.bwd_data_v7(h, d->w, d->y, d->c, d->x, maxn, &n, perf);
    else s = dn.bwd_filter_v7(h, d->x, d->y, d->c, d->w, maxn, &n, perf);
    if (s) return not_supported(s) ? 0 : dn_check(s, v7_name(dir));
  }
  for (int i = 0; i < n; i++) {
    if (perf[i].status != CUDNN_STATUS_SUCCESS) continue;
    if (p->flags.deterministic && perf[i].determinism != CUDNN_DETERMINISTIC) continue;
    if (perf[i].memory > WS_LIMIT) continue;
    {   // as PyTorch: an algorithm whose workspace cannot be had gives way to the next
      THCScratch t;
      if (t.get(perf[i].memory) < 0) { THError_clear(); continue; }
    }
    c->algo = perf[i].algo;
    // as PyTorch: the algorithm's own math type, but never TF32 when allow_tf32 is off
    c->math = (p->dt == TH_Float && !p->flags.allow_tf32) ? CUDNN_FMA_MATH : perf[i].mathType;
    c->ws = perf[i].memory;
    return 1;
  }
  return 0;
}

extern "C" int thc_cudnn_conv(int dir, const ATCudnnConv *p, const void *a, const void *b, void *out) {
  if (dir < AT_CUDNN_FWD || dir > AT_CUDNN_BWD_FILTER) {
    THError_set(TH_ERR_RUNTIME, "cuDNN convolution: unknown direction %d in thc_cudnn_conv", dir);
    return -1;
  }
  if (data_type(p->dt) < 0 || !loaded()) return 0;
  // cuDNN's legacy descriptors hold int sizes and strides
  if (!fits_int(p->N * p->C * p->H * p->W) || !fits_int(p->N * p->O * p->OH * p->OW) ||
      !fits_int(p->O * (p->C / (p->G > 0 ? p->G : 1)) * p->KH * p->KW) || p->G < 1 || p->N < 1 || p->OH < 1 ||
      p->OW < 1)
    return 0;
  bool declined;
  H h = handle_for_current(&declined);
  if (!h) return declined ? 0 : -1;
  ConvDescs d;
  int r = build_descs(p, &d);
  if (r <= 0) return r;
  AlgoKey key = make_key(dir, p);
  AlgoChoice c;
  if (!cache_get(&key, &c)) {
    if ((r = choose(h, dir, p, &d, a, b, out, &c)) <= 0) return r;
    cache_put(&key, &c);
  }
  cudnnStatus_t s = dn.set_math(d.c, c.math);
  if (s) return dn_check(s, "cudnnSetConvolutionMathType");
  THCScratch w;
  if (w.get(c.ws) < 0) return -1;
  // alpha/beta: double for double data, float otherwise (the 16-bit types included)
  double one_d = 1.0, zero_d = 0.0;
  float one_f = 1.0f, zero_f = 0.0f;
  const void *one = p->dt == TH_Double ? (const void *)&one_d : (const void *)&one_f;
  const void *zero = p->dt == TH_Double ? (const void *)&zero_d : (const void *)&zero_f;
  const char *what;
  if (dir == AT_CUDNN_FWD) {
    s = dn.fwd(h, one, d.x, a, d.w, b, d.c, c.algo, w.ptr, w.n, zero, d.y, out);
    what = "cudnnConvolutionForward";
  } else if (dir == AT_CUDNN_BWD_DATA) {
    s = dn.bwd_data(h, one, d.w, b, d.y, a, d.c, c.algo, w.ptr, w.n, zero, d.x, out);
    what = "cudnnConvolutionBackwardData";
  } else {
    s = dn.bwd_filter(h, one, d.x, a, d.y, b, d.c, c.algo, w.ptr, w.n, zero, d.w, out);
    what = "cudnnConvolutionBackwardFilter";
  }
  if (not_supported(s)) return 0;   // refused before launching: the caller's own kernels run
  return dn_check(s, what) < 0 ? -1 : 1;
}

// ----------------------------------------------------------------- batch norm

// x as [N, C, S, 1] and the per-channel [1, C, 1, 1] vectors, destroyed with it
struct BnDescs {
  TD x = NULL, v = NULL;
  ~BnDescs() {
    if (x) dn.destroy_tensor(x);
    if (v) dn.destroy_tensor(v);
  }
};

// 1 built, 0 declined, -1 error
static int bn_descs(THDtype dt, int64_t N, int64_t C, int64_t S, BnDescs *d) {
  if (dt != TH_Float || !loaded()) return 0;   // as PyTorch: cuDNN batch norm for float, not double
  if (!fits_int(N * C * S) || N < 1 || C < 1 || S < 1) return 0;
  cudnnStatus_t s;
  if ((s = dn.create_tensor(&d->x)) || (s = dn.create_tensor(&d->v)))
    return dn_check(s, "cudnnCreateTensorDescriptor");
  if ((s = set_nchw(d->x, CUDNN_DATA_FLOAT, N, C, S, 1)) || (s = set_nchw(d->v, CUDNN_DATA_FLOAT, 1, C, 1, 1)))
    return not_supported(s) ? 0 : dn_check(s, "cudnnSetTensorNdDescriptor");
  return 1;
}

// the descriptors and handle of one batch norm call: 1 ready, 0 declined, -1 error
static int bn_prepare(THDtype dt, int64_t N, int64_t C, int64_t S, BnDescs *d, H *h) {
  int r = bn_descs(dt, N, C, S, d);
  if (r <= 0) return r;
  bool declined;
  *h = handle_for_current(&declined);
  return *h ? 1 : declined ? 0 : -1;
}

namespace {
// eval: the statistics the own kernel would report, mean = rm and invstd = 1/sqrt(rv + eps)
__global__ void eval_stats(const float *rm, const float *rv, float *mean, float *invstd, int64_t C, double eps) {
  for (int64_t c = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; c < C; c += (int64_t)blockDim.x * gridDim.x) {
    mean[c] = rm[c];
    invstd[c] = (float)(1.0 / sqrt((double)rv[c] + eps));
  }
}
}  // namespace

extern "C" int thc_cudnn_batch_norm(THDtype dt, const void *x, const void *w, const void *b, const void *rm,
                                    const void *rv, void *y, void *mean, void *invstd, void *new_rm, void *new_rv,
                                    int64_t N, int64_t C, int64_t S, bool training, double momentum, double eps) {
  // cuDNN needs the affine vectors, and eval needs the running statistics
  if (!w || !b || (!training && (!rm || !rv))) return 0;
  if (training && ((new_rm != NULL) != (rm != NULL) || (new_rv != NULL) != (rv != NULL) || (!rm) != (!rv)))
    return 0;
  BnDescs d;
  H h;
  int r = bn_prepare(dt, N, C, S, &d, &h);
  if (r <= 0) return r;
  float one = 1.0f, zero = 0.0f;
  cudnnStatus_t s;
  if (training) {
    // cuDNN updates the running statistics in place; ours go to new_rm/new_rv
    if (new_rm && thc_check(cudaMemcpyAsync(new_rm, rm, (size_t)C * sizeof(float), cudaMemcpyDeviceToDevice,
                                            thc_stream()), "running_mean copy") < 0)
      return -1;
    if (new_rv && thc_check(cudaMemcpyAsync(new_rv, rv, (size_t)C * sizeof(float), cudaMemcpyDeviceToDevice,
                                            thc_stream()), "running_var copy") < 0)
      return -1;
    s = dn.bn_train(h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, d.x, x, d.x, y, d.v, w, b, momentum, new_rm, new_rv,
                    eps, mean, invstd);
    if (s) return not_supported(s) ? 0 : dn_check(s, "cudnnBatchNormalizationForwardTraining");
    return 1;
  }
  s = dn.bn_infer(h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, d.x, x, d.x, y, d.v, w, b, rm, rv, eps);
  if (s) return not_supported(s) ? 0 : dn_check(s, "cudnnBatchNormalizationForwardInference");
  eval_stats<<<thc_blocks(C, 256), 256, 0, thc_stream()>>>((const float *)rm, (const float *)rv, (float *)mean,
                                                            (float *)invstd, C, eps);
  return thc_launched("batch_norm eval statistics") < 0 ? -1 : 1;
}

extern "C" int thc_cudnn_batch_norm_backward(THDtype dt, const void *g, const void *x, const void *w,
                                             const void *mean, const void *stat1, bool is_var, void *dx, void *dw,
                                             void *db, int64_t N, int64_t C, int64_t S, bool training, double eps) {
  // cuDNN's backward takes the saved batch mean and invstd of a training forward
  if (!training || is_var || !w || !mean || !stat1 || !dw || !db) return 0;
  BnDescs d;
  H h;
  int r = bn_prepare(dt, N, C, S, &d, &h);
  if (r <= 0) return r;
  float one = 1.0f, zero = 0.0f;
  cudnnStatus_t s = dn.bn_backward(h, CUDNN_BATCHNORM_SPATIAL, &one, &zero, &one, &zero, d.x, x, d.x, g, d.x, dx,
                                   d.v, w, dw, db, eps, mean, stat1);
  if (s) return not_supported(s) ? 0 : dn_check(s, "cudnnBatchNormalizationBackward");
  return 1;
}
