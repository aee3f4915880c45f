// Upsampling (F.interpolate's nearest, nearest-exact, linear, bilinear,
// trilinear and bicubic) of contiguous planes on the GPU, as
// src/ATen/ATUpsample.c: the taps of each output along each dim come from
// src/TH/THUpsample.h, which both compilers build, so both devices read the
// same input elements with the same weights. The forward is a thread per
// output; the backward a thread per grad_output element that atomically adds
// its weighted share to each tap (as torch's CUDA kernels do: the order of
// the additions, and so the last bits of a float sum, vary from run to run).
#include <math.h>

#include "THCGeneral.h"
#include "../TH/THUpsample.h"

namespace {

// nsp: the op's spatial dims; the leading 3 - nsp of D, H, W are absent (size 1, one tap of weight 1)
struct UpG { long long P, D, H, W, OD, OH, OW, nsp; int mode; bool align; double sd, sh, sw; };

template <typename T> struct Taps;
template <> struct Taps<float> {
  __device__ static int get(int m, bool a, long long in, long long out, double s, long long o, int64_t *i, float *w) {
    return th_upsample_taps_float(m, a, in, out, s, o, i, w);
  }
};
template <> struct Taps<double> {
  __device__ static int get(int m, bool a, long long in, long long out, double s, long long o, int64_t *i, double *w) {
    return th_upsample_taps_double(m, a, in, out, s, o, i, w);
  }
};

// the taps of output (od, oh, ow) along each dim
template <typename T>
struct Cell {
  int nd, nh, nw;
  int64_t id[TH_UPSAMPLE_MAXTAPS], ih[TH_UPSAMPLE_MAXTAPS], iw[TH_UPSAMPLE_MAXTAPS];
  T wd[TH_UPSAMPLE_MAXTAPS], wh[TH_UPSAMPLE_MAXTAPS], ww[TH_UPSAMPLE_MAXTAPS];
  __device__ Cell(const UpG &g, long long od, long long oh, long long ow) {
    // an absent dim takes one tap of weight 1: two, one of weight 0, would make an inf NaN
    nd = g.nsp < 3 ? one(id, wd) : Taps<T>::get(g.mode, g.align, g.D, g.OD, g.sd, od, id, wd);
    nh = g.nsp < 2 ? one(ih, wh) : Taps<T>::get(g.mode, g.align, g.H, g.OH, g.sh, oh, ih, wh);
    nw = Taps<T>::get(g.mode, g.align, g.W, g.OW, g.sw, ow, iw, ww);
  }
  __device__ static int one(int64_t *i, T *w) {
    i[0] = 0;
    w[0] = 1;
    return 1;
  }
};

// innermost dim first, each dim's weighted sum nested in the next, as the CPU
template <typename T>
__global__ void up_fwd(const T *x, T *y, UpG g) {
  long long L = g.OD * g.OH * g.OW, total = g.P * L;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)blockDim.x * gridDim.x) {
    long long ow = i % g.OW, oh = (i / g.OW) % g.OH, od = (i / (g.OW * g.OH)) % g.OD, p = i / L;
    Cell<T> c(g, od, oh, ow);
    const T *plane = x + p * g.D * g.H * g.W;
    T accd = 0;
    for (int a = 0; a < c.nd; a++) {
      T acch = 0;
      for (int b = 0; b < c.nh; b++) {
        const T *row = plane + (c.id[a] * g.H + c.ih[b]) * g.W;
        T accw = c.ww[0] * row[c.iw[0]];
        for (int k = 1; k < c.nw; k++) accw += c.ww[k] * row[c.iw[k]];
        acch = b ? acch + c.wh[b] * accw : c.wh[0] * accw;
      }
      accd = a ? accd + c.wd[a] * acch : c.wd[0] * acch;
    }
    y[i] = accd;
  }
}

template <typename T>
__global__ void up_zero(T *p, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)blockDim.x * gridDim.x) p[i] = 0;
}

template <typename T>
__global__ void up_bwd(const T *gy, T *gx, UpG g) {
  long long L = g.OD * g.OH * g.OW, total = g.P * L;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)blockDim.x * gridDim.x) {
    long long ow = i % g.OW, oh = (i / g.OW) % g.OH, od = (i / (g.OW * g.OH)) % g.OD, p = i / L;
    Cell<T> c(g, od, oh, ow);
    T *plane = gx + p * g.D * g.H * g.W;
    T v = gy[i];
    for (int a = 0; a < c.nd; a++)
      for (int b = 0; b < c.nh; b++) {
        T wdh = c.wd[a] * c.wh[b];
        T *row = plane + (c.id[a] * g.H + c.ih[b]) * g.W;
        for (int k = 0; k < c.nw; k++) atomicAdd(row + c.iw[k], wdh * c.ww[k] * v);
      }
  }
}

UpG up_geom(const int64_t *geom, int mode, bool align, const double *scales) {
  return UpG{geom[0], geom[1], geom[2], geom[3], geom[4], geom[5], geom[6], geom[7], mode, align, scales[0], scales[1],
             scales[2]};
}

}  // namespace

extern "C" int thc_upsample(THDtype dt, const void *x, void *y, const int64_t *geom, int mode, bool align_corners,
                            const double *scales) {
  UpG g = up_geom(geom, mode, align_corners, scales);
  long long n = g.P * g.OD * g.OH * g.OW;
  if (n == 0) return 0;
  unsigned b = thc_blocks(n, 256);
  if (dt == TH_Float) up_fwd<float><<<b, 256, 0, thc_stream()>>>((const float *)x, (float *)y, g);
  else if (dt == TH_Double) up_fwd<double><<<b, 256, 0, thc_stream()>>>((const double *)x, (double *)y, g);
  else {
    THError_set(TH_ERR_NOTIMPL, "\"upsample\" on CUDA is not implemented for '%s'", THDtype_info[dt].legacy);
    return -1;
  }
  return thc_launched("upsample");
}

extern "C" int thc_upsample_backward(THDtype dt, const void *gy, void *gx, const int64_t *geom, int mode,
                                     bool align_corners, const double *scales) {
  UpG g = up_geom(geom, mode, align_corners, scales);
  long long nx = g.P * g.D * g.H * g.W, ny = g.P * g.OD * g.OH * g.OW;
  if (dt == TH_Float) {
    if (nx) up_zero<float><<<thc_blocks(nx, 256), 256, 0, thc_stream()>>>((float *)gx, nx);
    if (ny) up_bwd<float><<<thc_blocks(ny, 256), 256, 0, thc_stream()>>>((const float *)gy, (float *)gx, g);
  } else if (dt == TH_Double) {
    if (nx) up_zero<double><<<thc_blocks(nx, 256), 256, 0, thc_stream()>>>((double *)gx, nx);
    if (ny) up_bwd<double><<<thc_blocks(ny, 256), 256, 0, thc_stream()>>>((const double *)gy, (double *)gx, g);
  } else {
    THError_set(TH_ERR_NOTIMPL, "\"upsample_backward\" on CUDA is not implemented for '%s'", THDtype_info[dt].legacy);
    return -1;
  }
  return thc_launched("upsample_backward");
}
