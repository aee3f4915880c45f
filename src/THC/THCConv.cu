// im2col / col2im for convolution on the GPU: the convolution itself is a
// batched cuBLAS GEMM over these columns (src/ATen/ATConvCuda.c drives it).
// Columns are laid out per image as (C*KH*KW) x (OH*OW), images one after
// another, as the CPU path's. One thread per column element (im2col) or per
// input element (col2im gathers the columns that read it: no atomics).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "THCGeneral.h"

namespace {

struct Geom {
  long long nb, C, H, W, KH, KW, OH, OW, sh, sw, ph, pw, dh, dw, xs;   // xs: elements between images of x
};

template <typename T>
__global__ void im2col_kernel(const T *x, T *col, Geom g) {
  long long L = g.OH * g.OW, K = g.C * g.KH * g.KW, total = g.nb * K * L;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)blockDim.x * gridDim.x) {
    long long l = i % L, k = (i / L) % K, n = i / (L * K);
    long long ow = l % g.OW, oh = l / g.OW;
    long long kw = k % g.KW, kh = (k / g.KW) % g.KH, c = k / (g.KW * g.KH);
    long long ih = oh * g.sh - g.ph + kh * g.dh, iw = ow * g.sw - g.pw + kw * g.dw;
    col[i] = (ih >= 0 && ih < g.H && iw >= 0 && iw < g.W) ? x[n * g.xs + (c * g.H + ih) * g.W + iw] : T(0.0f);
  }
}

// the accumulator of col2im: float for the 16-bit types
template <typename T> struct AccOf { typedef T type; };
template <> struct AccOf<__half> { typedef float type; };
template <> struct AccOf<__nv_bfloat16> { typedef float type; };

template <typename T>
__global__ void col2im_kernel(const T *col, T *x, Geom g) {
  typedef typename AccOf<T>::type A;
  long long L = g.OH * g.OW, K = g.C * g.KH * g.KW, total = g.nb * g.C * g.H * g.W;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)blockDim.x * gridDim.x) {
    long long iw = i % g.W, ih = (i / g.W) % g.H, c = (i / (g.W * g.H)) % g.C, n = i / (g.W * g.H * g.C);
    A acc = A(0);
    for (long long kh = 0; kh < g.KH; kh++) {
      long long hoff = ih + g.ph - kh * g.dh;
      if (hoff < 0 || hoff % g.sh) continue;
      long long oh = hoff / g.sh;
      if (oh >= g.OH) continue;
      for (long long kw = 0; kw < g.KW; kw++) {
        long long woff = iw + g.pw - kw * g.dw;
        if (woff < 0 || woff % g.sw) continue;
        long long ow = woff / g.sw;
        if (ow >= g.OW) continue;
        acc += (A)col[(n * K + (c * g.KH + kh) * g.KW + kw) * L + oh * g.OW + ow];
      }
    }
    x[n * g.xs + (c * g.H + ih) * g.W + iw] = (T)acc;
  }
}

Geom make(int64_t nb, const int64_t *shape, int64_t xs) {
  // shape: C, H, W, KH, KW, OH, OW, sh, sw, ph, pw, dh, dw
  Geom g = {nb, shape[0], shape[1], shape[2], shape[3], shape[4], shape[5], shape[6],
            shape[7], shape[8], shape[9], shape[10], shape[11], shape[12], xs};
  return g;
}

}  // namespace

template <typename T>
int im2col_t(const void *x, void *col, const Geom &g, long long total) {
  im2col_kernel<T><<<thc_blocks(total, 256), 256, 0, thc_stream()>>>((const T *)x, (T *)col, g);
  return thc_launched("im2col");
}

template <typename T>
int col2im_t(const void *col, void *x, const Geom &g, long long total) {
  col2im_kernel<T><<<thc_blocks(total, 256), 256, 0, thc_stream()>>>((const T *)col, (T *)x, g);
  return thc_launched("col2im");
}

extern "C" int thc_im2col(THDtype dt, const void *x, void *col, int64_t nb, const int64_t *shape, int64_t xs) {
  Geom g = make(nb, shape, xs);
  long long total = g.nb * g.C * g.KH * g.KW * g.OH * g.OW;
  if (total == 0) return 0;
  switch (dt) {
    case TH_Float: return im2col_t<float>(x, col, g, total);
    case TH_Double: return im2col_t<double>(x, col, g, total);
    case TH_Half: return im2col_t<__half>(x, col, g, total);
    case TH_BFloat16: return im2col_t<__nv_bfloat16>(x, col, g, total);
    default: break;
  }
  THError_set(TH_ERR_NOTIMPL, "im2col on CUDA: floating point dtypes only");
  return -1;
}

extern "C" int thc_col2im(THDtype dt, const void *col, void *x, int64_t nb, const int64_t *shape, int64_t xs) {
  Geom g = make(nb, shape, xs);
  long long total = g.nb * g.C * g.H * g.W;
  if (total == 0) return 0;
  switch (dt) {
    case TH_Float: return col2im_t<float>(col, x, g, total);
    case TH_Double: return col2im_t<double>(col, x, g, total);
    case TH_Half: return col2im_t<__half>(col, x, g, total);
    case TH_BFloat16: return col2im_t<__nv_bfloat16>(col, x, g, total);
    default: break;
  }
  THError_set(TH_ERR_NOTIMPL, "col2im on CUDA: floating point dtypes only");
  return -1;
}
