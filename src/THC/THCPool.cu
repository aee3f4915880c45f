// Pooling over contiguous NCHW planes on the GPU, as src/ATen/ATPool.c.
// Max pooling with PyTorch's index semantics (flat offsets into the input
// plane; the window's first valid element is the starting pick; a larger
// element or a NaN takes over). Average and adaptive average pooling: a
// thread per output sums its window (in double, as the CPU); their backwards
// gather, a thread per input element summing the outputs whose windows hold
// it, so no atomics and a deterministic result.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math.h>

#include "THCGeneral.h"

namespace {

struct PoolG { long long P, H, W, OH, OW, KH, KW, SH, SW, PH, PW, DH, DW; };

// max pooling compares in the type's own precision, 16-bit types in float (autocast runs it on float16)
template <typename T> struct CmpOf { typedef T type; };
template <> struct CmpOf<__half> { typedef float type; };
template <> struct CmpOf<__nv_bfloat16> { typedef float type; };

template <typename T>
__global__ void maxpool_fwd(const T *x, T *y, long long *ind, PoolG g) {
  typedef typename CmpOf<T>::type C;
  long long L = g.OH * g.OW, total = g.P * L;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)blockDim.x * gridDim.x) {
    long long ow = i % g.OW, oh = (i / g.OW) % g.OH, p = i / L;
    long long ih0 = oh * g.SH - g.PH, iw0 = ow * g.SW - g.PW;
    long long fh = ih0, fw = iw0;
    while (fh < 0) fh += g.DH;
    while (fw < 0) fw += g.DW;
    const T *plane = x + p * g.H * g.W;
    C best = -INFINITY;
    long long bi = fh * g.W + fw;
    for (long long kh = 0; kh < g.KH; kh++) {
      long long ih = ih0 + kh * g.DH;
      if (ih < 0 || ih >= g.H) continue;
      for (long long kw = 0; kw < g.KW; kw++) {
        long long iw = iw0 + kw * g.DW;
        if (iw < 0 || iw >= g.W) continue;
        C v = (C)plane[ih * g.W + iw];
        if (v > best || v != v) { best = v; bi = ih * g.W + iw; }
      }
    }
    y[i] = (T)best;
    ind[i] = bi;
  }
}

template <typename T>
__global__ void fill_zero(T *p, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)blockDim.x * gridDim.x) p[i] = T(0.0f);
}

// indices outside the plane (only a hand-made indices tensor has them) are skipped
template <typename T>
__global__ void maxpool_bwd(const T *gy, const long long *ind, T *gx, long long P, long long L, long long HW) {
  long long total = P * L;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)blockDim.x * gridDim.x) {
    long long j = ind[i];
    if (j >= 0 && j < HW) atomicAdd(gx + (i / L) * HW + j, gy[i]);
  }
}


// ---- average pooling; geom P, H, W, OH, OW, KH, KW, SH, SW, PH, PW ----
struct AvgG { long long P, H, W, OH, OW, KH, KW, SH, SW, PH, PW; bool cip; long long divisor; };

// the divisor of output (oh, ow): ATPool.c's avg_div
__device__ long long avg_div(const AvgG &g, long long oh, long long ow) {
  if (g.divisor) return g.divisor;
  long long h0 = oh * g.SH - g.PH, w0 = ow * g.SW - g.PW, h1 = h0 + g.KH, w1 = w0 + g.KW;
  long long ph1 = h1 < g.H + g.PH ? h1 : g.H + g.PH, pw1 = w1 < g.W + g.PW ? w1 : g.W + g.PW;
  if (g.cip) return (ph1 - h0) * (pw1 - w0);
  long long a0 = h0 > 0 ? h0 : 0, b0 = w0 > 0 ? w0 : 0, a1 = h1 < g.H ? h1 : g.H, b1 = w1 < g.W ? w1 : g.W;
  return (a1 - a0) * (b1 - b0);
}

template <typename T>
__global__ void avgpool_fwd(const T *x, T *y, AvgG g) {
  long long L = g.OH * g.OW, total = g.P * L;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)blockDim.x * gridDim.x) {
    long long ow = i % g.OW, oh = (i / g.OW) % g.OH, p = i / L;
    long long h0 = oh * g.SH - g.PH, w0 = ow * g.SW - g.PW;
    const T *plane = x + p * g.H * g.W;
    double sum = 0;
    for (long long ih = h0 < 0 ? 0 : h0; ih < h0 + g.KH && ih < g.H; ih++)
      for (long long iw = w0 < 0 ? 0 : w0; iw < w0 + g.KW && iw < g.W; iw++) sum += (double)plane[ih * g.W + iw];
    long long dv = avg_div(g, oh, ow);
    y[i] = dv ? (T)(sum / (double)dv) : (T)0;
  }
}

// input (ih, iw) lies in the windows of oh with oh*SH - PH <= ih < oh*SH - PH + KH
__device__ void avg_range(long long i, long long P, long long K, long long S, long long O, long long *lo, long long *hi) {
  long long a = i + P - K;
  *lo = a < 0 ? 0 : a / S + 1;
  long long h = (i + P) / S + 1;
  *hi = h < O ? h : O;
}

template <typename T>
__global__ void avgpool_bwd(const T *gy, T *gx, AvgG g) {
  long long HW = g.H * g.W, total = g.P * HW;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)blockDim.x * gridDim.x) {
    long long iw = i % g.W, ih = (i / g.W) % g.H, p = i / HW;
    long long oh0, oh1, ow0, ow1;
    avg_range(ih, g.PH, g.KH, g.SH, g.OH, &oh0, &oh1);
    avg_range(iw, g.PW, g.KW, g.SW, g.OW, &ow0, &ow1);
    const T *plane = gy + p * g.OH * g.OW;
    double sum = 0;
    for (long long oh = oh0; oh < oh1; oh++)
      for (long long ow = ow0; ow < ow1; ow++) {
        long long dv = avg_div(g, oh, ow);
        if (dv) sum += (double)plane[oh * g.OW + ow] / (double)dv;
      }
    gx[i] = (T)sum;
  }
}

// ---- adaptive average pooling; geom P, D, H, W, OD, OH, OW (D = OD = 1 in 2-d) ----
// output cell o of a dim of size n pooled to m covers [start(o), end(o))
struct AdaptG { long long P, D, H, W, OD, OH, OW; };
__device__ __forceinline__ long long ad_start(long long o, long long n, long long m) { return o * n / m; }
__device__ __forceinline__ long long ad_end(long long o, long long n, long long m) { return ((o + 1) * n + m - 1) / m; }

// output i's plane p and its cell [d0, d1) x [h0, h1) x [w0, w1)
struct Cell { long long p, d0, d1, h0, h1, w0, w1; };
__device__ __forceinline__ Cell cell_of(long long i, const AdaptG &g) {
  long long ow = i % g.OW, oh = (i / g.OW) % g.OH, od = (i / (g.OW * g.OH)) % g.OD;
  return Cell{i / (g.OD * g.OH * g.OW), ad_start(od, g.D, g.OD), ad_end(od, g.D, g.OD), ad_start(oh, g.H, g.OH),
              ad_end(oh, g.H, g.OH), ad_start(ow, g.W, g.OW), ad_end(ow, g.W, g.OW)};
}

template <typename T>
__global__ void adapt_avg_fwd(const T *x, T *y, AdaptG g) {
  long long L = g.OD * g.OH * g.OW, total = g.P * L;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)blockDim.x * gridDim.x) {
    Cell c = cell_of(i, g);
    long long d0 = c.d0, d1 = c.d1, h0 = c.h0, h1 = c.h1, w0 = c.w0, w1 = c.w1;
    const T *plane = x + c.p * g.D * g.H * g.W;
    double sum = 0;
    for (long long id = d0; id < d1; id++)
      for (long long ih = h0; ih < h1; ih++)
        for (long long iw = w0; iw < w1; iw++) sum += (double)plane[(id * g.H + ih) * g.W + iw];
    y[i] = (T)(sum / (double)((d1 - d0) * (h1 - h0) * (w1 - w0)));
  }
}

// input index i of a dim of size n lies in cells [floor(i*m/n), ceil((i+1)*m/n)) of m
template <typename T>
__global__ void adapt_avg_bwd(const T *gy, T *gx, AdaptG g) {
  long long HW = g.D * g.H * g.W, total = g.P * HW;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)blockDim.x * gridDim.x) {
    long long iw = i % g.W, ih = (i / g.W) % g.H, id = (i / (g.W * g.H)) % g.D, p = i / HW;
    const T *plane = gy + p * g.OD * g.OH * g.OW;
    double sum = 0;
    for (long long od = id * g.OD / g.D; od < ((id + 1) * g.OD + g.D - 1) / g.D; od++) {
      long long nd = ad_end(od, g.D, g.OD) - ad_start(od, g.D, g.OD);
      for (long long oh = ih * g.OH / g.H; oh < ((ih + 1) * g.OH + g.H - 1) / g.H; oh++) {
        long long nh = ad_end(oh, g.H, g.OH) - ad_start(oh, g.H, g.OH);
        for (long long ow = iw * g.OW / g.W; ow < ((iw + 1) * g.OW + g.W - 1) / g.W; ow++) {
          long long nw = ad_end(ow, g.W, g.OW) - ad_start(ow, g.W, g.OW);
          sum += (double)plane[(od * g.OH + oh) * g.OW + ow] / (double)(nd * nh * nw);
        }
      }
    }
    gx[i] = (T)sum;
  }
}

// adaptive max pooling: a thread per output scans its cell; the first
// element starts, a larger one or the first NaN takes over (as the CPU)
template <typename T>
__global__ void adapt_max_fwd(const T *x, T *y, long long *ind, AdaptG g) {
  long long L = g.OD * g.OH * g.OW, total = g.P * L;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)blockDim.x * gridDim.x) {
    Cell c = cell_of(i, g);
    long long d0 = c.d0, d1 = c.d1, h0 = c.h0, h1 = c.h1, w0 = c.w0, w1 = c.w1;
    const T *plane = x + c.p * g.D * g.H * g.W;
    long long best = (d0 * g.H + h0) * g.W + w0;
    T bv = plane[best];
    for (long long id = d0; id < d1; id++)
      for (long long ih = h0; ih < h1; ih++) {
        long long base = (id * g.H + ih) * g.W;
        for (long long iw = w0; iw < w1; iw++) {
          T v = plane[base + iw];
          if (v > bv || (v != v && bv == bv)) { bv = v; best = base + iw; }
        }
      }
    y[i] = bv;
    ind[i] = best;
  }
}

}  // namespace

// geom: P, H, W, OH, OW, KH, KW, SH, SW, PH, PW, DH, DW
template <typename T>
int maxpool_fwd_t(const void *x, void *y, int64_t *ind, const PoolG &g, long long total) {
  maxpool_fwd<T><<<thc_blocks(total, 256), 256, 0, thc_stream()>>>((const T *)x, (T *)y, (long long *)ind, g);
  return thc_launched("max_pool2d");
}

template <typename T>
int maxpool_bwd_t(const void *gy, const int64_t *ind, void *gx, long long P, long long L, long long HW) {
  long long n = P * HW, m = P * L;
  if (n) fill_zero<T><<<thc_blocks(n, 256), 256, 0, thc_stream()>>>((T *)gx, n);
  if (m) maxpool_bwd<T><<<thc_blocks(m, 256), 256, 0, thc_stream()>>>((const T *)gy, (const long long *)ind, (T *)gx, P, L, HW);
  return thc_launched("max_pool2d_backward");
}

// geom: P, H, W, OH, OW, KH, KW, SH, SW, PH, PW, DH, DW
extern "C" int thc_max_pool2d(THDtype dt, const void *x, void *y, int64_t *ind, const int64_t *geom) {
  PoolG g = {geom[0], geom[1], geom[2], geom[3], geom[4], geom[5], geom[6], geom[7], geom[8], geom[9], geom[10], geom[11], geom[12]};
  long long total = g.P * g.OH * g.OW;
  if (total == 0) return 0;
  switch (dt) {
    case TH_Float: return maxpool_fwd_t<float>(x, y, ind, g, total);
    case TH_Double: return maxpool_fwd_t<double>(x, y, ind, g, total);
    case TH_Half: return maxpool_fwd_t<__half>(x, y, ind, g, total);
    case TH_BFloat16: return maxpool_fwd_t<__nv_bfloat16>(x, y, ind, g, total);
    default: break;
  }
  THError_set(TH_ERR_NOTIMPL, "max_pool2d on CUDA: floating point dtypes only");
  return -1;
}

extern "C" int thc_max_pool2d_backward(THDtype dt, const void *gy, const int64_t *ind, void *gx, int64_t P, int64_t L,
                                       int64_t HW) {
  switch (dt) {
    case TH_Float: return maxpool_bwd_t<float>(gy, ind, gx, P, L, HW);
    case TH_Double: return maxpool_bwd_t<double>(gy, ind, gx, P, L, HW);
    case TH_Half: return maxpool_bwd_t<__half>(gy, ind, gx, P, L, HW);
    case TH_BFloat16: return maxpool_bwd_t<__nv_bfloat16>(gy, ind, gx, P, L, HW);
    default: break;
  }
  THError_set(TH_ERR_NOTIMPL, "max_pool2d backward on CUDA: floating point dtypes only");
  return -1;
}

// the launch of a float32/float64 pooling kernel over n elements
#define POOL_LAUNCH(NAME, KERNEL, n, src, dst, geom)                                                          \
  do {                                                                                                        \
    if ((n) == 0) return 0;                                                                                   \
    unsigned b_ = thc_blocks((n), 256);                                                                       \
    if (dt == TH_Float) KERNEL<float><<<b_, 256, 0, thc_stream()>>>((const float *)(src), (float *)(dst), geom); \
    else if (dt == TH_Double) KERNEL<double><<<b_, 256, 0, thc_stream()>>>((const double *)(src), (double *)(dst), geom); \
    else { THError_set(TH_ERR_NOTIMPL, "\"" NAME "\" on CUDA is not implemented for '%s'", THDtype_info[dt].legacy); return -1; } \
    return thc_launched(NAME);                                                                                \
  } while (0)

static AvgG avg_geom(const int64_t *g, bool cip, int64_t divisor) {
  return AvgG{g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7], g[8], g[9], g[10], cip, divisor};
}

// geom: P, H, W, OH, OW, KH, KW, SH, SW, PH, PW; divisor 0: the window's count
extern "C" int thc_avg_pool2d(THDtype dt, const void *x, void *y, const int64_t *geom, bool cip, int64_t divisor) {
  AvgG g = avg_geom(geom, cip, divisor);
  POOL_LAUNCH("avg_pool2d", avgpool_fwd, g.P * g.OH * g.OW, x, y, g);
}

extern "C" int thc_avg_pool2d_backward(THDtype dt, const void *gy, void *gx, const int64_t *geom, bool cip,
                                       int64_t divisor) {
  AvgG g = avg_geom(geom, cip, divisor);
  POOL_LAUNCH("avg_pool2d_backward", avgpool_bwd, g.P * g.H * g.W, gy, gx, g);
}

// geom: P, D, H, W, OD, OH, OW (every output size > 0)
extern "C" int thc_adaptive_avg_pool(THDtype dt, const void *x, void *y, const int64_t *geom) {
  AdaptG g = {geom[0], geom[1], geom[2], geom[3], geom[4], geom[5], geom[6]};
  POOL_LAUNCH("adaptive_avg_pool", adapt_avg_fwd, g.P * g.OD * g.OH * g.OW, x, y, g);
}

extern "C" int thc_adaptive_avg_pool_backward(THDtype dt, const void *gy, void *gx, const int64_t *geom) {
  AdaptG g = {geom[0], geom[1], geom[2], geom[3], geom[4], geom[5], geom[6]};
  POOL_LAUNCH("adaptive_avg_pool_backward", adapt_avg_bwd, g.P * g.D * g.H * g.W, gy, gx, g);
}

// geom: P, D, H, W, OD, OH, OW (every size > 0)
extern "C" int thc_adaptive_max_pool(THDtype dt, const void *x, void *y, int64_t *idx, const int64_t *geom) {
  AdaptG g = {geom[0], geom[1], geom[2], geom[3], geom[4], geom[5], geom[6]};
  long long n = g.P * g.OD * g.OH * g.OW;
  if (n == 0) return 0;
  unsigned b = thc_blocks(n, 256);
  if (dt == TH_Float) adapt_max_fwd<float><<<b, 256, 0, thc_stream()>>>((const float *)x, (float *)y, (long long *)idx, g);
  else if (dt == TH_Double) adapt_max_fwd<double><<<b, 256, 0, thc_stream()>>>((const double *)x, (double *)y, (long long *)idx, g);
  else {
    THError_set(TH_ERR_NOTIMPL, "\"adaptive_max_pool\" on CUDA is not implemented for '%s'", THDtype_info[dt].legacy);
    return -1;
  }
  return thc_launched("adaptive_max_pool");
}
