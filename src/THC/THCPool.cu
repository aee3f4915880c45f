// Max pooling over NCHW planes on the GPU, with PyTorch's index semantics
// (flat offsets into the input plane; the window's first valid element is the
// starting pick; a larger element or a NaN takes over), as src/ATen/ATPool.c.
#include <math.h>

#include "THCGeneral.h"

namespace {

struct PoolG { long long P, H, W, OH, OW, KH, KW, SH, SW, PH, PW, DH, DW; };

template <typename T>
__global__ void maxpool_fwd(const T *x, T *y, long long *ind, PoolG g) {
  long long L = g.OH * g.OW, total = g.P * L;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)blockDim.x * gridDim.x) {
    long long ow = i % g.OW, oh = (i / g.OW) % g.OH, p = i / L;
    long long ih0 = oh * g.SH - g.PH, iw0 = ow * g.SW - g.PW;
    long long fh = ih0, fw = iw0;
    while (fh < 0) fh += g.DH;
    while (fw < 0) fw += g.DW;
    const T *plane = x + p * g.H * g.W;
    T best = -INFINITY;
    long long bi = fh * g.W + fw;
    for (long long kh = 0; kh < g.KH; kh++) {
      long long ih = ih0 + kh * g.DH;
      if (ih < 0 || ih >= g.H) continue;
      for (long long kw = 0; kw < g.KW; kw++) {
        long long iw = iw0 + kw * g.DW;
        if (iw < 0 || iw >= g.W) continue;
        T v = plane[ih * g.W + iw];
        if (v > best || v != v) { best = v; bi = ih * g.W + iw; }
      }
    }
    y[i] = best;
    ind[i] = bi;
  }
}

template <typename T>
__global__ void fill_zero(T *p, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)blockDim.x * gridDim.x) p[i] = T(0);
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

}  // namespace

// geom: P, H, W, OH, OW, KH, KW, SH, SW, PH, PW, DH, DW
extern "C" int thc_max_pool2d(THDtype dt, const void *x, void *y, int64_t *ind, const int64_t *geom) {
  PoolG g = {geom[0], geom[1], geom[2], geom[3], geom[4], geom[5], geom[6], geom[7], geom[8], geom[9], geom[10], geom[11], geom[12]};
  long long total = g.P * g.OH * g.OW;
  if (total == 0) return 0;
  unsigned b = thc_blocks(total, 256);
  if (dt == TH_Float) maxpool_fwd<float><<<b, 256, 0, thc_stream()>>>((const float *)x, (float *)y, (long long *)ind, g);
  else if (dt == TH_Double) maxpool_fwd<double><<<b, 256, 0, thc_stream()>>>((const double *)x, (double *)y, (long long *)ind, g);
  else { THError_set(TH_ERR_NOTIMPL, "max_pool2d on CUDA: float32 and float64 only"); return -1; }
  return thc_launched("max_pool2d");
}

extern "C" int thc_max_pool2d_backward(THDtype dt, const void *gy, const int64_t *ind, void *gx, int64_t P, int64_t L,
                                       int64_t HW) {
  long long n = P * HW, m = P * L;
  if (dt == TH_Float) {
    if (n) fill_zero<float><<<thc_blocks(n, 256), 256, 0, thc_stream()>>>((float *)gx, n);
    if (m) maxpool_bwd<float><<<thc_blocks(m, 256), 256, 0, thc_stream()>>>((const float *)gy, (const long long *)ind, (float *)gx, P, L, HW);
  } else if (dt == TH_Double) {
    if (n) fill_zero<double><<<thc_blocks(n, 256), 256, 0, thc_stream()>>>((double *)gx, n);
    if (m) maxpool_bwd<double><<<thc_blocks(m, 256), 256, 0, thc_stream()>>>((const double *)gy, (const long long *)ind, (double *)gx, P, L, HW);
  } else {
    THError_set(TH_ERR_NOTIMPL, "max_pool2d backward on CUDA: float32 and float64 only");
    return -1;
  }
  return thc_launched("max_pool2d_backward");
}
