// libTHC's entry: devices, streams, events, host<->device copies, and the
// hook table ATen calls through (src/ATen/ATCuda.h). cthtorch.cuda dlopens
// this library and calls THC_hooks() once.
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "THCGeneral.h"

extern "C" {

static __thread cudaStream_t cur_stream = NULL;   // per thread, as PyTorch's current stream
static __thread int cur_device = -1;              // cached cudaGetDevice

cudaStream_t thc_stream(void) { return cur_stream; }
void thc_set_stream(cudaStream_t s) { cur_stream = s; }

int thc_check(cudaError_t e, const char *what) {
  if (e == cudaSuccess) return 0;
  cudaGetLastError();   // clear a non-sticky error so the next call starts clean
  if (e == cudaErrorMemoryAllocation)
    THError_set(TH_ERR_MEMORY, "CUDA out of memory (%s)", what);
  else
    THError_set(TH_ERR_RUNTIME, "CUDA error: %s (in %s)", cudaGetErrorString(e), what);
  return -1;
}

int thc_launched(const char *what) { return thc_check(cudaGetLastError(), what); }

int thc_open_library(const char *what, const char *const *libs, int nlibs, const THCSymbol *syms, int nsyms,
                     char *err, size_t errlen) {
  void *h = NULL;
  char tried[256] = "";
  for (int i = 0; i < nlibs && !h; i++) {
    size_t used = strlen(tried);
    snprintf(tried + used, sizeof tried - used, "%s%s", i ? ", " : "", libs[i]);
    h = dlopen(libs[i], RTLD_NOW | RTLD_GLOBAL);
  }
  if (!h) {
    const char *e = dlerror();
    snprintf(err, errlen, "%s could not be loaded (tried %s): %s; install its pip nvidia-* package matching the "
             "CUDA driver", what, tried, e ? e : "not found");
    return -1;
  }
  for (int i = 0; i < nsyms; i++) {
    *syms[i].slot = dlsym(h, syms[i].name);
    if (!*syms[i].slot) {
      snprintf(err, errlen, "%s was loaded but has no %s", what, syms[i].name);
      return -1;
    }
  }
  return 0;
}

int thc_current_device(void) {
  if (cur_device < 0) {
    int d = 0;
    if (thc_check(cudaGetDevice(&d), "cudaGetDevice") < 0) return -1;
    cur_device = d;
  }
  return cur_device;
}

int thc_current_device_slot(void) {
  int dev = thc_current_device();
  if (dev >= THC_MAX_DEVICES) {
    THError_set(TH_ERR_RUNTIME, "CUDA device %d: at most %d devices are supported", dev, THC_MAX_DEVICES);
    return -1;
  }
  return dev;
}

int thc_set_device(int device) {
  if (device == cur_device) return 0;
  if (thc_check(cudaSetDevice(device), "cudaSetDevice") < 0) return -1;
  cur_device = device;
  return 0;
}

static int device_count(void) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) { cudaGetLastError(); return 0; }
  return n;
}

static int synchronize(int device) {
  int prev = thc_current_device();
  if (prev < 0 || thc_set_device(device) < 0) return -1;
  int rc = thc_check(cudaDeviceSynchronize(), "synchronize");
  thc_set_device(prev);
  return rc;
}

static int device_props(int device, ATCudaProps *p) {
  cudaDeviceProp q;
  if (thc_check(cudaGetDeviceProperties(&q, device), "cudaGetDeviceProperties") < 0) return -1;
  memset(p, 0, sizeof *p);
  snprintf(p->name, sizeof p->name, "%s", q.name);
  p->major = q.major;
  p->minor = q.minor;
  p->multi_processor_count = q.multiProcessorCount;
  p->total_memory = (int64_t)q.totalGlobalMem;
  p->is_integrated = q.integrated;
  p->is_multi_gpu_board = q.isMultiGpuBoard;
  p->warp_size = q.warpSize;
  p->max_threads_per_multi_processor = q.maxThreadsPerMultiProcessor;
  p->l2_cache_size = q.l2CacheSize;
  return 0;
}

static int mem_get_info(int device, int64_t *free_bytes, int64_t *total_bytes) {
  int prev = thc_current_device();
  if (prev < 0 || thc_set_device(device) < 0) return -1;
  size_t f = 0, t = 0;
  int rc = thc_check(cudaMemGetInfo(&f, &t), "cudaMemGetInfo");
  thc_set_device(prev);
  *free_bytes = (int64_t)f;
  *total_bytes = (int64_t)t;
  return rc;
}

// Blocking copies run on the current stream and wait for it (so they order
// after the kernels queued there); non_blocking ones only queue.
static int copy_bytes(void *dst, const void *src, size_t n, ATCopyKind kind, bool non_blocking) {
  if (n == 0) return 0;
  cudaMemcpyKind k = kind == AT_H2D ? cudaMemcpyHostToDevice : kind == AT_D2H ? cudaMemcpyDeviceToHost
                                                                              : cudaMemcpyDeviceToDevice;
  cudaStream_t s = thc_stream();
  if (thc_check(cudaMemcpyAsync(dst, src, n, k, s), "memcpy") < 0) return -1;
  if (non_blocking) return 0;
  return thc_check(cudaStreamSynchronize(s), "memcpy (a kernel queued before it may have failed)");
}

static void *stream_create(int priority) {
  cudaStream_t s = NULL;
  if (thc_check(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, priority), "cudaStreamCreate") < 0)
    return NULL;
  return (void *)s;
}
static int stream_destroy(void *s) { return s ? thc_check(cudaStreamDestroy((cudaStream_t)s), "cudaStreamDestroy") : 0; }
static void *current_stream(void) { return (void *)cur_stream; }
static int set_stream(void *s) { cur_stream = (cudaStream_t)s; return 0; }
static int stream_query(void *s) {
  cudaError_t e = cudaStreamQuery((cudaStream_t)s);
  if (e == cudaErrorNotReady) { cudaGetLastError(); return 0; }
  return thc_check(e, "cudaStreamQuery") < 0 ? -1 : 1;
}
static int stream_synchronize(void *s) { return thc_check(cudaStreamSynchronize((cudaStream_t)s), "cudaStreamSynchronize"); }
static int stream_wait_event(void *s, void *e) {
  return thc_check(cudaStreamWaitEvent((cudaStream_t)s, (cudaEvent_t)e, 0), "cudaStreamWaitEvent");
}
static void *event_create(bool timing, bool blocking) {
  cudaEvent_t e = NULL;
  unsigned flags = (timing ? cudaEventDefault : cudaEventDisableTiming) | (blocking ? cudaEventBlockingSync : 0);
  if (thc_check(cudaEventCreateWithFlags(&e, flags), "cudaEventCreate") < 0) return NULL;
  return (void *)e;
}
static int event_destroy(void *e) { return e ? thc_check(cudaEventDestroy((cudaEvent_t)e), "cudaEventDestroy") : 0; }
static int event_record(void *e, void *s) { return thc_check(cudaEventRecord((cudaEvent_t)e, (cudaStream_t)s), "cudaEventRecord"); }
static int event_query(void *e) {
  cudaError_t r = cudaEventQuery((cudaEvent_t)e);
  if (r == cudaErrorNotReady) { cudaGetLastError(); return 0; }
  return thc_check(r, "cudaEventQuery") < 0 ? -1 : 1;
}
static int event_synchronize(void *e) { return thc_check(cudaEventSynchronize((cudaEvent_t)e), "cudaEventSynchronize"); }
static int event_elapsed(void *a, void *b, float *ms) {
  return thc_check(cudaEventElapsedTime(ms, (cudaEvent_t)a, (cudaEvent_t)b), "cudaEventElapsedTime");
}

static ATCudaHooks hooks;

// The table, or NULL with THError set when there is no usable GPU.
const ATCudaHooks *THC_hooks(void) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    cudaGetLastError();
    THError_set(TH_ERR_RUNTIME, "no CUDA device: %s", e != cudaSuccess ? cudaGetErrorString(e) : "none found");
    return NULL;
  }
  hooks.abi = AT_CUDA_ABI;
  hooks.device_count = device_count;
  hooks.current_device = thc_current_device;
  hooks.set_device = thc_set_device;
  hooks.synchronize = synchronize;
  hooks.device_props = device_props;
  hooks.allocator = &THCCachingAllocator;
  hooks.host_allocator = &THCHostAllocator;
  hooks.memory_stats = thc_memory_stats;
  hooks.reset_peak_stats = thc_reset_peak_stats;
  hooks.empty_cache = thc_empty_cache;
  hooks.mem_get_info = mem_get_info;
  hooks.memcpy = copy_bytes;
  hooks.stream_create = stream_create;
  hooks.stream_destroy = stream_destroy;
  hooks.current_stream = current_stream;
  hooks.set_stream = set_stream;
  hooks.stream_query = stream_query;
  hooks.stream_synchronize = stream_synchronize;
  hooks.stream_wait_event = stream_wait_event;
  hooks.event_create = event_create;
  hooks.event_destroy = event_destroy;
  hooks.event_record = event_record;
  hooks.event_query = event_query;
  hooks.event_synchronize = event_synchronize;
  hooks.event_elapsed = event_elapsed;
  hooks.loop = thc_loop;
  hooks.gemm = thc_gemm;
  hooks.im2col = thc_im2col;
  hooks.col2im = thc_col2im;
  hooks.max_pool2d = thc_max_pool2d;
  hooks.max_pool2d_backward = thc_max_pool2d_backward;
  hooks.random = thc_random;
  hooks.reduce = thc_reduce;
  hooks.softmax = thc_softmax;
  hooks.softmax_backward = thc_softmax_backward;
  hooks.nll_loss = thc_nll_loss;
  hooks.nll_loss_backward = thc_nll_loss_backward;
  hooks.sgd_step = thc_sgd_step;
  hooks.adam_step = thc_adam_step;
  hooks.index = thc_index;
  hooks.batch_norm = thc_batch_norm;
  hooks.batch_norm_backward = thc_batch_norm_backward;
  hooks.layer_norm = thc_layer_norm;
  hooks.layer_norm_backward = thc_layer_norm_backward;
  hooks.avg_pool2d = thc_avg_pool2d;
  hooks.avg_pool2d_backward = thc_avg_pool2d_backward;
  hooks.adaptive_avg_pool = thc_adaptive_avg_pool;
  hooks.adaptive_avg_pool_backward = thc_adaptive_avg_pool_backward;
  hooks.cudnn_version = thc_cudnn_version;
  hooks.cudnn_conv = thc_cudnn_conv;
  hooks.cudnn_batch_norm = thc_cudnn_batch_norm;
  hooks.cudnn_batch_norm_backward = thc_cudnn_batch_norm_backward;
  hooks.sort_rows = thc_sort_rows;
  hooks.scan = thc_scan;
  hooks.cumprod_grad = thc_cumprod_grad;
  hooks.adaptive_max_pool = thc_adaptive_max_pool;
  hooks.sort_select = thc_sort_select;
  hooks.embedding_bag = thc_embedding_bag;
  hooks.embedding_bag_backward = thc_embedding_bag_backward;
  hooks.embedding_bag_psw_backward = thc_embedding_bag_psw_backward;
  hooks.upsample = thc_upsample;
  hooks.upsample_backward = thc_upsample_backward;
  return &hooks;
}

}  // extern "C"
