// Softmax/log_softmax (forward, backward) and nll_loss (forward, backward)
// on contiguous float32/float64 tensors; ATNN.c makes them so.
//
// Softmax: a block per row when the softmax dim is innermost (the common
// [batch, classes] case), a thread per (outer, inner) column otherwise.
// nll_loss reads its targets on the device; a target out of range is
// reported through a flag the host reads back (one wait, as PyTorch's device
// assert makes the next synchronising call fail; here the call itself fails
// with PyTorch's message instead of poisoning the context).
#include <math.h>

#include "THCGeneral.h"

namespace {

const int NB = 256;

__device__ __forceinline__ float exp_t(float x) { return expf(x); }
__device__ __forceinline__ double exp_t(double x) { return exp(x); }
__device__ __forceinline__ float log_t(float x) { return logf(x); }
__device__ __forceinline__ double log_t(double x) { return log(x); }

// block-wide sum or max of v (blockDim.x == NB), result to every thread
template <typename T> __device__ T block_reduce(T v, bool is_max, T *sh) {
  sh[threadIdx.x] = v;
  __syncthreads();
  for (int w = NB / 2; w > 0; w >>= 1) {
    if (threadIdx.x < w) {
      T a = sh[threadIdx.x], b = sh[threadIdx.x + w];
      // max: a NaN anywhere wins (as the CPU, whose row becomes NaN)
      sh[threadIdx.x] = is_max ? ((a != a || a > b) ? a : (b != b ? b : (a > b ? a : b))) : a + b;
    }
    __syncthreads();
  }
  T r = sh[0];
  __syncthreads();
  return r;
}

template <typename T> __device__ __forceinline__ T max_nan(T a, T b) { return (a != a || a > b) ? a : b; }

template <typename T>
__global__ void softmax_rows(const T *x, T *y, long long outer, long long D, bool islog) {
  __shared__ T sh[NB];
  for (long long o = blockIdx.x; o < outer; o += gridDim.x) {
    const T *xs = x + o * D;
    T *ys = y + o * D;
    T mx = -INFINITY;
    for (long long d = threadIdx.x; d < D; d += NB) mx = max_nan(xs[d], mx);
    mx = block_reduce(mx, true, sh);
    if (isinf(mx) && mx < 0) mx = 0;
    T sum = 0;
    for (long long d = threadIdx.x; d < D; d += NB) sum += exp_t(xs[d] - mx);
    sum = block_reduce(sum, false, sh);
    if (islog) {
      T lse = mx + log_t(sum);
      for (long long d = threadIdx.x; d < D; d += NB) ys[d] = xs[d] - lse;
    } else {
      T inv = (T)1 / sum;
      for (long long d = threadIdx.x; d < D; d += NB) ys[d] = exp_t(xs[d] - mx) * inv;
    }
  }
}

template <typename T>
__global__ void softmax_cols(const T *x, T *y, long long outer, long long D, long long inner, bool islog) {
  long long n = outer * inner;
  for (long long j = blockIdx.x * (long long)blockDim.x + threadIdx.x; j < n; j += (long long)gridDim.x * blockDim.x) {
    long long o = j / inner, i = j % inner;
    const T *xs = x + o * D * inner + i;
    T *ys = y + o * D * inner + i;
    T mx = -INFINITY;
    for (long long d = 0; d < D; d++) mx = max_nan(xs[d * inner], mx);
    if (isinf(mx) && mx < 0) mx = 0;
    T sum = 0;
    for (long long d = 0; d < D; d++) sum += exp_t(xs[d * inner] - mx);
    if (islog) {
      T lse = mx + log_t(sum);
      for (long long d = 0; d < D; d++) ys[d * inner] = xs[d * inner] - lse;
    } else {
      T inv = (T)1 / sum;
      for (long long d = 0; d < D; d++) ys[d * inner] = exp_t(xs[d * inner] - mx) * inv;
    }
  }
}

// softmax: dx = y * (g - sum(g * y)); log_softmax: dx = g - exp(y) * sum(g)
template <typename T>
__global__ void softmax_bwd_rows(const T *g, const T *y, T *dx, long long outer, long long D, bool islog) {
  __shared__ T sh[NB];
  for (long long o = blockIdx.x; o < outer; o += gridDim.x) {
    const T *gs = g + o * D, *ys = y + o * D;
    T *ds = dx + o * D;
    T s = 0;
    for (long long d = threadIdx.x; d < D; d += NB) s += islog ? gs[d] : gs[d] * ys[d];
    s = block_reduce(s, false, sh);
    for (long long d = threadIdx.x; d < D; d += NB) ds[d] = islog ? gs[d] - exp_t(ys[d]) * s : ys[d] * (gs[d] - s);
  }
}

template <typename T>
__global__ void softmax_bwd_cols(const T *g, const T *y, T *dx, long long outer, long long D, long long inner,
                                 bool islog) {
  long long n = outer * inner;
  for (long long j = blockIdx.x * (long long)blockDim.x + threadIdx.x; j < n; j += (long long)gridDim.x * blockDim.x) {
    long long o = j / inner, i = j % inner, base = o * D * inner + i;
    T s = 0;
    for (long long d = 0; d < D; d++) s += islog ? g[base + d * inner] : g[base + d * inner] * y[base + d * inner];
    for (long long d = 0; d < D; d++) {
      long long k = base + d * inner;
      dx[k] = islog ? g[k] - exp_t(y[k]) * s : y[k] * (g[k] - s);
    }
  }
}

unsigned row_blocks(long long rows) { return (unsigned)(rows < 65535LL * 16 ? rows : 65535LL * 16); }

template <typename T> int softmax_t(const void *x, void *y, int64_t outer, int64_t D, int64_t inner, bool log) {
  if (inner == 1)
    softmax_rows<T><<<row_blocks(outer), NB, 0, thc_stream()>>>((const T *)x, (T *)y, outer, D, log);
  else
    softmax_cols<T><<<thc_blocks(outer * inner, 256), 256, 0, thc_stream()>>>((const T *)x, (T *)y, outer, D, inner, log);
  return thc_launched(log ? "log_softmax" : "softmax");
}

template <typename T>
int softmax_bwd_t(const void *g, const void *y, void *dx, int64_t outer, int64_t D, int64_t inner, bool log) {
  if (inner == 1)
    softmax_bwd_rows<T><<<row_blocks(outer), NB, 0, thc_stream()>>>((const T *)g, (const T *)y, (T *)dx, outer, D, log);
  else
    softmax_bwd_cols<T><<<thc_blocks(outer * inner, 256), 256, 0, thc_stream()>>>((const T *)g, (const T *)y, (T *)dx,
                                                                                   outer, D, inner, log);
  return thc_launched(log ? "log_softmax_backward" : "softmax_backward");
}

// ---- nll_loss: x [N, C, S], target [N*S] ----

// bad: set to the first (any) out-of-range target + 1 (so 0 means none)
__device__ __forceinline__ bool target_ok(long long c, long long C, long long ignore, long long *bad) {
  if (c == ignore) return false;
  if (c < 0 || c >= C) { atomicCAS((unsigned long long *)bad, 0ULL, (unsigned long long)(c + 1)); return false; }
  return true;
}

// 'none': one thread per target
template <typename T>
__global__ void nll_none(const T *x, const long long *t, const T *w, long long N, long long C, long long S,
                         long long ignore, T *out, long long *bad) {
  long long n = N * S;
  for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < n; k += (long long)gridDim.x * blockDim.x) {
    long long b = k / S, s = k % S, c = t[k];
    out[k] = target_ok(c, C, ignore, bad) ? -(w ? w[c] : (T)1) * x[(b * C + c) * S + s] : (T)0;
  }
}

// 'mean'/'sum': one block; totals in double (as the CPU)
template <typename T>
__global__ void nll_reduced(const T *x, const long long *t, const T *w, long long N, long long C, long long S,
                            long long ignore, bool mean, T *out, long long *bad) {
  __shared__ double sh[NB];
  double total = 0, wsum = 0;
  for (long long k = threadIdx.x; k < N * S; k += NB) {
    long long b = k / S, s = k % S, c = t[k];
    if (!target_ok(c, C, ignore, bad)) continue;
    double wc = w ? (double)w[c] : 1.0;
    total -= wc * (double)x[(b * C + c) * S + s];
    wsum += wc;
  }
  total = block_reduce(total, false, sh);
  wsum = block_reduce(wsum, false, sh);
  if (threadIdx.x == 0) out[0] = (T)(mean ? total / wsum : total);
}

// the weight total of the non-ignored targets (the 'mean' divisor)
template <typename T>
__global__ void nll_wsum(const long long *t, const T *w, long long n, long long C, long long ignore, double *wsum,
                         long long *bad) {
  __shared__ double sh[NB];
  double acc = 0;
  for (long long k = threadIdx.x; k < n; k += NB)
    if (target_ok(t[k], C, ignore, bad)) acc += w ? (double)w[t[k]] : 1.0;
  acc = block_reduce(acc, false, sh);
  if (threadIdx.x == 0) *wsum = acc;
}

// gin is zero except at each target's class
template <typename T>
__global__ void nll_bwd(const T *g, const long long *t, const T *w, long long N, long long C, long long S,
                        long long ignore, int reduction, const double *wsum, T *gin, long long *bad) {
  long long n = N * C * S;
  for (long long j = blockIdx.x * (long long)blockDim.x + threadIdx.x; j < n; j += (long long)gridDim.x * blockDim.x) {
    long long s = j % S, c = (j / S) % C, b = j / (S * C), k = b * S + s, tc = t[k];
    T v = 0;
    if (tc == c && target_ok(tc, C, ignore, bad)) {
      double scale = reduction == 0 ? (double)g[k] : reduction == 1 ? (double)g[0] / *wsum : (double)g[0];
      v = (T)(-(w ? (double)w[c] : 1.0) * scale);
    }
    gin[j] = v;
  }
}

// a scratch of two 8-byte words on the device: [0] the bad-target flag, [1] wsum
struct Scratch {
  void *p = NULL, *ctx = NULL;
  ~Scratch() { if (p) THCCachingAllocator.free(&THCCachingAllocator, p, 16, ctx); }
};

int scratch_new(Scratch &sc) {
  sc.p = THCCachingAllocator.malloc(&THCCachingAllocator, 16, &sc.ctx);
  if (!sc.p) return -1;
  return thc_check(cudaMemsetAsync(sc.p, 0, 16, thc_stream()), "nll_loss");
}

// waits for the kernels, then reports an out-of-range target
int check_targets(const Scratch &sc) {
  long long bad = 0;
  cudaStream_t s = thc_stream();
  if (thc_check(cudaMemcpyAsync(&bad, sc.p, sizeof bad, cudaMemcpyDeviceToHost, s), "nll_loss") < 0) return -1;
  if (thc_check(cudaStreamSynchronize(s), "nll_loss") < 0) return -1;
  if (bad) {
    THError_set(TH_ERR_INDEX, "Target %lld is out of bounds.", bad - 1);
    return -1;
  }
  return 0;
}

template <typename T>
int nll_t(const void *x, const int64_t *t, const void *w, int64_t N, int64_t C, int64_t S, int reduction,
          int64_t ignore, void *out) {
  Scratch sc;
  if (scratch_new(sc) < 0) return -1;
  long long *bad = (long long *)sc.p;
  if (reduction == 0) {
    if (N * S == 0) return 0;
    nll_none<T><<<thc_blocks(N * S, 256), 256, 0, thc_stream()>>>((const T *)x, (const long long *)t, (const T *)w, N,
                                                                    C, S, ignore, (T *)out, bad);
  } else {
    nll_reduced<T><<<1, NB, 0, thc_stream()>>>((const T *)x, (const long long *)t, (const T *)w, N, C, S, ignore,
                                               reduction == 1, (T *)out, bad);
  }
  if (thc_launched("nll_loss") < 0) return -1;
  return check_targets(sc);
}

template <typename T>
int nll_bwd_t(const void *g, const int64_t *t, const void *w, int64_t N, int64_t C, int64_t S, int reduction,
              int64_t ignore, void *gin) {
  if (N * C * S == 0) return 0;
  Scratch sc;
  if (scratch_new(sc) < 0) return -1;
  long long *bad = (long long *)sc.p;
  double *wsum = (double *)((char *)sc.p + 8);
  if (reduction == 1) {
    nll_wsum<T><<<1, NB, 0, thc_stream()>>>((const long long *)t, (const T *)w, N * S, C, ignore, wsum, bad);
    if (thc_launched("nll_loss_backward") < 0) return -1;
  }
  nll_bwd<T><<<thc_blocks(N * C * S, 256), 256, 0, thc_stream()>>>((const T *)g, (const long long *)t, (const T *)w, N,
                                                                     C, S, ignore, reduction, wsum, (T *)gin, bad);
  if (thc_launched("nll_loss_backward") < 0) return -1;
  return check_targets(sc);
}

int float_or_double(THDtype dt, const char *what) {
  if (dt == TH_Float || dt == TH_Double) return 0;
  THError_set(TH_ERR_RUNTIME, "%s on CUDA: expected float32 or float64, got %s", what, THDtype_info[dt].legacy);
  return -1;
}

}  // namespace

extern "C" {

int thc_softmax(THDtype dt, const void *x, void *y, int64_t outer, int64_t D, int64_t inner, bool log) {
  if (float_or_double(dt, "softmax") < 0) return -1;
  if (outer * D * inner == 0) return 0;
  return dt == TH_Float ? softmax_t<float>(x, y, outer, D, inner, log) : softmax_t<double>(x, y, outer, D, inner, log);
}

int thc_softmax_backward(THDtype dt, const void *grad, const void *y, void *dx, int64_t outer, int64_t D,
                         int64_t inner, bool log) {
  if (float_or_double(dt, "softmax_backward") < 0) return -1;
  if (outer * D * inner == 0) return 0;
  return dt == TH_Float ? softmax_bwd_t<float>(grad, y, dx, outer, D, inner, log)
                        : softmax_bwd_t<double>(grad, y, dx, outer, D, inner, log);
}

int thc_nll_loss(THDtype dt, const void *x, const int64_t *target, const void *w, int64_t N, int64_t C, int64_t S,
                 int reduction, int64_t ignore_index, void *out) {
  if (float_or_double(dt, "nll_loss") < 0) return -1;
  return dt == TH_Float ? nll_t<float>(x, target, w, N, C, S, reduction, ignore_index, out)
                        : nll_t<double>(x, target, w, N, C, S, reduction, ignore_index, out);
}

int thc_nll_loss_backward(THDtype dt, const void *grad, const int64_t *target, const void *w, int64_t N, int64_t C,
                          int64_t S, int reduction, int64_t ignore_index, void *gin) {
  if (float_or_double(dt, "nll_loss_backward") < 0) return -1;
  return dt == TH_Float ? nll_bwd_t<float>(grad, target, w, N, C, S, reduction, ignore_index, gin)
                        : nll_bwd_t<double>(grad, target, w, N, C, S, reduction, ignore_index, gin);
}

}  // extern "C"
