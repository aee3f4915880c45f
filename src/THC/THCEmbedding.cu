// embedding_bag on the GPU, forward and backward, as src/ATen/ATEmbedding.c
// computes it on the CPU (float32/float64; ATen casts 16-bit weights to float).
//
// Forward: a thread per (bag, column) walks its bag's indices in order, so
// sums add in the CPU's order and max keeps the first of equal maxima.
// Backward: sum/mean scatter a thread per (index, column) into the weight's
// gradient with atomicAdd (rows repeat across indices, so the order of the
// adds, and the last bits of a float sum, are unspecified, as in PyTorch's
// CUDA kernel); max adds each non-empty bag's gradient at its argmax row.
// per_sample_weights' gradient: a thread per index takes one dot product.
#include <stdint.h>

#include "THCGeneral.h"

namespace {

enum { BAG_SUM = 0, BAG_MEAN = 1, BAG_MAX = 2 };

template <typename T>
__global__ void bag_fwd(const T *w, const long long *idx, const long long *start, const T *psw, long long B,
                        long long D, long long pad, int mode, T *out, long long *argmax) {
  long long total = B * D;
  for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < total; e += (long long)gridDim.x * blockDim.x) {
    long long b = e / D, d = e % D, cnt = 0, am = 0;
    T acc = 0;
    for (long long t = start[b]; t < start[b + 1]; t++) {
      long long r = idx[t];
      if (r == pad) continue;
      T v = w[r * D + d];
      if (mode == BAG_MAX) {
        if (cnt == 0 || v > acc) { acc = v; am = r; }
      } else {
        acc += psw ? psw[t] * v : v;
      }
      cnt++;
    }
    if (mode == BAG_MEAN && cnt > 0) acc /= (T)cnt;
    out[e] = acc;
    if (mode == BAG_MAX) argmax[e] = am;
  }
}

template <typename T>
__global__ void bag_bwd_rows(const T *g, const long long *idx, const long long *o2b, const long long *bag_size,
                             const T *psw, long long n, long long D, long long pad, int mode, T *gw) {
  long long total = n * D;
  for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < total; e += (long long)gridDim.x * blockDim.x) {
    long long t = e / D, d = e % D, r = idx[t], b = o2b[t];
    if (r == pad) continue;
    T s = psw ? psw[t] : (T)1;
    if (mode == BAG_MEAN) s /= (T)bag_size[b];
    atomicAdd(gw + r * D + d, s * g[b * D + d]);
  }
}

template <typename T>
__global__ void bag_bwd_max(const T *g, const long long *bag_size, const long long *argmax, long long B, long long D,
                            T *gw) {
  long long total = B * D;
  for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < total; e += (long long)gridDim.x * blockDim.x) {
    long long b = e / D, d = e % D;
    if (bag_size[b] == 0) continue;
    atomicAdd(gw + argmax[e] * D + d, g[e]);
  }
}

template <typename T>
__global__ void bag_psw_bwd(const T *g, const T *w, const long long *idx, const long long *o2b, long long n,
                            long long D, long long pad, T *out) {
  for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < n; t += (long long)gridDim.x * blockDim.x) {
    T s = 0;
    if (idx[t] != pad) {
      const T *gr = g + o2b[t] * D, *wr = w + idx[t] * D;
      for (long long d = 0; d < D; d++) s += gr[d] * wr[d];
    }
    out[t] = s;
  }
}

int bad_dtype(THDtype dt) {
  THError_set(TH_ERR_NOTIMPL, "embedding_bag on CUDA: float32/float64 only, got '%s'", THDtype_info[dt].legacy);
  return -1;
}

}  // namespace

extern "C" int thc_embedding_bag(THDtype dt, const void *w, const int64_t *idx, const int64_t *start, const void *psw,
                                 int64_t B, int64_t D, int64_t pad, int mode, void *out, int64_t *argmax) {
  long long total = B * D;
  if (total == 0) return 0;
  unsigned b = thc_blocks(total, 256);
  const long long *ix = (const long long *)idx, *st = (const long long *)start;
  if (dt == TH_Float)
    bag_fwd<float><<<b, 256, 0, thc_stream()>>>((const float *)w, ix, st, (const float *)psw, B, D, pad, mode,
                                                 (float *)out, (long long *)argmax);
  else if (dt == TH_Double)
    bag_fwd<double><<<b, 256, 0, thc_stream()>>>((const double *)w, ix, st, (const double *)psw, B, D, pad, mode,
                                                  (double *)out, (long long *)argmax);
  else return bad_dtype(dt);
  return thc_launched("embedding_bag");
}

extern "C" int thc_embedding_bag_backward(THDtype dt, const void *g, const int64_t *idx, const int64_t *o2b,
                                          const int64_t *bag_size, const int64_t *argmax, const void *psw, int64_t n,
                                          int64_t B, int64_t D, int64_t pad, int mode, void *gw) {
  if (dt != TH_Float && dt != TH_Double) return bad_dtype(dt);
  const long long *ix = (const long long *)idx, *ob = (const long long *)o2b, *bs = (const long long *)bag_size;
  if (mode == BAG_MAX) {
    long long total = B * D;
    if (total == 0) return 0;
    unsigned b = thc_blocks(total, 256);
    if (dt == TH_Float)
      bag_bwd_max<float><<<b, 256, 0, thc_stream()>>>((const float *)g, bs, (const long long *)argmax, B, D, (float *)gw);
    else
      bag_bwd_max<double><<<b, 256, 0, thc_stream()>>>((const double *)g, bs, (const long long *)argmax, B, D,
                                                        (double *)gw);
  } else {
    long long total = B ? n * D : 0;   // with no bags no index takes a gradient
    if (total == 0) return 0;
    unsigned b = thc_blocks(total, 256);
    if (dt == TH_Float)
      bag_bwd_rows<float><<<b, 256, 0, thc_stream()>>>((const float *)g, ix, ob, bs, (const float *)psw, n, D, pad,
                                                        mode, (float *)gw);
    else
      bag_bwd_rows<double><<<b, 256, 0, thc_stream()>>>((const double *)g, ix, ob, bs, (const double *)psw, n, D, pad,
                                                         mode, (double *)gw);
  }
  return thc_launched("embedding_bag_backward");
}

extern "C" int thc_embedding_bag_psw_backward(THDtype dt, const void *g, const void *w, const int64_t *idx,
                                              const int64_t *o2b, int64_t n, int64_t D, int64_t pad, void *out) {
  if (n == 0) return 0;
  unsigned b = thc_blocks(n, 128);
  const long long *ix = (const long long *)idx, *ob = (const long long *)o2b;
  if (dt == TH_Float)
    bag_psw_bwd<float><<<b, 128, 0, thc_stream()>>>((const float *)g, (const float *)w, ix, ob, n, D, pad, (float *)out);
  else if (dt == TH_Double)
    bag_psw_bwd<double><<<b, 128, 0, thc_stream()>>>((const double *)g, (const double *)w, ix, ob, n, D, pad,
                                                      (double *)out);
  else return bad_dtype(dt);
  return thc_launched("embedding_bag_per_sample_weights_backward");
}
