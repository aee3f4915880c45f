/* Pooling kernels for NCHW tensors: max (with indices), average, adaptive
 * (2-d, and 3-d over NCDHW).
 * Loops run over planes in parallel. */
#include "ATArgChecks.h"
#include "ATComplex.h"
#include "ATConv.h"
#include "ATCuda.h"

#include <float.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* ---- pooling ---- */
/* the compute type: double for double, float for float, half and bfloat16 */
#define POOL_CT(t) ((t)->dtype == TH_Double ? TH_Double : TH_Float)
static int64_t pool_out(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode) {
  int64_t num = in + 2 * p - d * (k - 1) - 1 + (ceil_mode ? s - 1 : 0);
  int64_t out = num / s - (num % s != 0 && num < 0) + 1;   /* floor division (torch's div_rtn), s > 0 */
  if (ceil_mode && (out - 1) * s >= in + p) out--;
  return out;
}

typedef struct { int64_t P, H, W, OH, OW, KH, KW, SH, SW, PH, PW, DH, DW; } PoolGeom;
/* pooling over three spatial dims (D, H, W); the 2-d kernels run as its D = 1 case */
typedef struct { int64_t P, in[3], out[3], k[3], s[3], p[3], d[3]; } Pool3Geom;

static Pool3Geom pool_geom_as_3d(const PoolGeom *g) {
  return (Pool3Geom){ .P = g->P, .in = { 1, g->H, g->W }, .out = { 1, g->OH, g->OW }, .k = { 1, g->KH, g->KW },
                      .s = { 1, g->SH, g->SW }, .p = { 0, g->PH, g->PW }, .d = { 1, g->DH, g->DW } };
}
/* average pooling (or its backward) of src over the trailing nsp (2 or 3) dims of input's shape */
static THTensor *avg_pool_run(const THTensor *src, const THTensor *input, const Pool3Geom *g, int nsp, bool cip,
                              ATOptInt divisor, bool bwd);

static int pool_geom(const THTensor *x, const ATIntList *k, const ATIntList *s, const ATIntList *p,
                     const ATIntList *d, bool ceil_mode, PoolGeom *g, const char *name) {
  char b[256];
  if (x->ndim != 3 && x->ndim != 4) {
    THError_set(TH_ERR_RUNTIME, "non-empty 3D or 4D (batch mode) tensor expected for input, got %s",
                THTensor_sizeStr(x->ndim, x->sizes, b, 256));
    return -1;
  }
  g->H = x->sizes[x->ndim - 2]; g->W = x->sizes[x->ndim - 1];
  g->P = THTensor_numel(x) / ((g->H * g->W != 0) ? g->H * g->W : 1);
  g->KH = k->v[0]; g->KW = k->n > 1 ? k->v[1] : k->v[0];
  bool sgiven = s && s->n > 0;
  g->SH = sgiven ? s->v[0] : g->KH; g->SW = sgiven ? (s->n > 1 ? s->v[1] : s->v[0]) : g->KW;
  g->PH = p->v[0]; g->PW = p->n > 1 ? p->v[1] : p->v[0];
  g->DH = d ? d->v[0] : 1; g->DW = d ? (d->n > 1 ? d->v[1] : d->v[0]) : 1;
  /* PyTorch keeps these in int: larger ones overflow the output-size
   * arithmetic below (and a 2**62 kernel would loop for ever) */
  const int64_t geom[] = { g->KH, g->KW, g->SH, g->SW, g->PH, g->PW, g->DH, g->DW };
  for (size_t i = 0; i < sizeof geom / sizeof *geom; i++)
    if (geom[i] > INT32_MAX || geom[i] < INT32_MIN) {
      THError_set(TH_ERR_RUNTIME, "value cannot be converted to type int without overflow");
      return -1;
    }
  if (g->DH <= 0 || g->DW <= 0) {
    THError_set(TH_ERR_RUNTIME, "dilation should be greater than zero, but got dilationH: %lld dilationW: %lld",
                (long long)g->DH, (long long)g->DW);
    return -1;
  }
  if (g->KH <= 0 || g->KW <= 0) { THError_set(TH_ERR_RUNTIME, "kernel size should be greater than zero, but got kH: %lld kW: %lld", (long long)g->KH, (long long)g->KW); return -1; }
  if (g->SH <= 0 || g->SW <= 0) { THError_set(TH_ERR_RUNTIME, "stride should be greater than zero, but got dH: %lld dW: %lld", (long long)g->SH, (long long)g->SW); return -1; }
  if (g->PH > g->KH / 2 || g->PW > g->KW / 2) {
    THError_set(TH_ERR_RUNTIME, "pad should be at most half of effective kernel size, but got pad=%lld, kernel_size=%lld and dilation=%lld",
                (long long)g->PH, (long long)g->KH, (long long)g->DH);
    return -1;
  }
  g->OH = pool_out(g->H, g->KH, g->SH, g->PH, g->DH, ceil_mode);
  g->OW = pool_out(g->W, g->KW, g->SW, g->PW, g->DW, ceil_mode);
  if (g->OH <= 0 || g->OW <= 0) {
    THError_set(TH_ERR_RUNTIME, "Given input size: (%lldx%lldx%lld). Calculated output size: (%lldx%lldx%lld). Output size is too small",
                (long long)(x->ndim == 4 ? x->sizes[1] : x->sizes[0]), (long long)g->H, (long long)g->W,
                (long long)(x->ndim == 4 ? x->sizes[1] : x->sizes[0]), (long long)g->OH, (long long)g->OW);
    return -1;
  }
  (void)name;
  return 0;
}

static void out_sizes(const THTensor *x, int64_t OH, int64_t OW, int64_t *sizes) {
  memcpy(sizes, x->sizes, x->ndim * sizeof(int64_t));
  sizes[x->ndim - 2] = OH;
  sizes[x->ndim - 1] = OW;
}


/* One plane of max pooling over D x H x W (2-d pooling is the D = 1 case), in
 * the compute type T: float, double, or int64 for the integer dtypes. Each
 * output's window is visited in torch's order (kt, kh, kw), but tap by tap
 * over the whole output plane, so the inner loop runs along an output row
 * and vectorizes. As torch's kernels: the window's first valid element
 * starts as the pick, a later element wins if it is larger or NaN, and
 * indices are flat offsets into the input plane. */
#define MAXPOOL_PLANE(T, LOWEST)                                                                       \
  static void maxpool_plane_##T(const T *x, T *y, int64_t *id, const Pool3Geom *g) {                   \
    const int64_t H = g->in[1], W = g->in[2], OD = g->out[0], OH = g->out[1], OW = g->out[2];          \
    for (int64_t od = 0; od < OD; od++) {                                                              \
      int64_t t0 = od * g->s[0] - g->p[0];                                                             \
      while (t0 < 0) t0 += g->d[0];                                                                    \
      for (int64_t oh = 0; oh < OH; oh++) {                                                            \
        int64_t h0 = oh * g->s[1] - g->p[1];                                                           \
        while (h0 < 0) h0 += g->d[1];                                                                  \
        T *yb = y + (od * OH + oh) * OW;                                                               \
        int64_t *ib = id + (od * OH + oh) * OW;                                                        \
        for (int64_t ow = 0; ow < OW; ow++) {                                                          \
          int64_t w0 = ow * g->s[2] - g->p[2];                                                         \
          while (w0 < 0) w0 += g->d[2];                                                                \
          yb[ow] = LOWEST;                                                                             \
          ib[ow] = (t0 * H + h0) * W + w0;                                                             \
        }                                                                                              \
      }                                                                                                \
    }                                                                                                  \
    for (int64_t kt = 0; kt < g->k[0]; kt++)                                                           \
      for (int64_t kh = 0; kh < g->k[1]; kh++)                                                         \
        for (int64_t kw = 0; kw < g->k[2]; kw++) {                                                     \
          int64_t iw0 = kw * g->d[2] - g->p[2]; /* input column of output column 0 */                  \
          int64_t lo, hi, sw = g->s[2];                                                                \
          at_window_cols(iw0, W, sw, OW, &lo, &hi);                                                    \
          for (int64_t od = 0; od < OD; od++) {                                                        \
            int64_t it = od * g->s[0] - g->p[0] + kt * g->d[0];                                        \
            if (it < 0 || it >= g->in[0]) continue;                                                    \
            for (int64_t oh = 0; oh < OH; oh++) {                                                      \
              int64_t ih = oh * g->s[1] - g->p[1] + kh * g->d[1];                                      \
              if (ih < 0 || ih >= H) continue;                                                         \
              int64_t base = (it * H + ih) * W + iw0;                                                  \
              const T *row = x + base;                                                                 \
              T *yb = y + (od * OH + oh) * OW;                                                         \
              int64_t *ib = id + (od * OH + oh) * OW;                                                  \
              for (int64_t ow = lo; ow < hi; ow++) {                                                   \
                T v = row[ow * sw];                                                                    \
                int take = (v > yb[ow]) | (v != v);                                                    \
                yb[ow] = take ? v : yb[ow];                                                            \
                ib[ow] = take ? base + ow * sw : ib[ow];                                               \
              }                                                                                        \
            }                                                                                          \
          }                                                                                            \
        }                                                                                              \
  }
MAXPOOL_PLANE(float, -INFINITY)
MAXPOOL_PLANE(double, -INFINITY)
MAXPOOL_PLANE(int64_t, INT64_MIN)

/* max pooling of a GPU tensor (src/THC/THCPool.cu): float32/float64 planes */
static int max_pool2d_cuda(THTensor **outs, const THTensor *input, const PoolGeom *g) {
  if (!THDtype_isFloating(input->dtype)) {
    THError_set(TH_ERR_NOTIMPL, "\"max_pool2d\" on CUDA is not implemented for '%s'", THDtype_info[input->dtype].legacy);
    return -1;
  }
  int dev = THTensor_device(input);
  int64_t sz[4];
  out_sizes(input, g->OH, g->OW, sz);
  THTensor *x = at_contiguous(input);
  THTensor *y = x ? at_new_on(dev, input->dtype, input->ndim, sz, NULL) : NULL;
  THTensor *idx = y ? at_new_on(dev, TH_Int64, input->ndim, sz, NULL) : NULL;
  int64_t geom[13] = { g->P, g->H, g->W, g->OH, g->OW, g->KH, g->KW, g->SH, g->SW, g->PH, g->PW, g->DH, g->DW };
  int rc = !idx ? -1 : dev == TH_DEVICE_META ? 0   /* meta: the shapes alone */
           : at_cuda->max_pool2d(input->dtype, THTensor_data(x), THTensor_data(y), (int64_t *)THTensor_data(idx), geom);
  THTensor_free(x);
  if (rc < 0) { THTensor_free(y); THTensor_free(idx); return -1; }
  outs[0] = y;
  outs[1] = idx;
  return 0;
}

static int max_pool2d_nchw(THTensor **outs, const THTensor *input, const ATIntList *k, const ATIntList *s,
                           const ATIntList *p, const ATIntList *d, bool ceil_mode) {
  PoolGeom g;
  if (pool_geom(input, k, s, p, d, ceil_mode, &g, "max_pool2d") < 0) return -1;
  if (at_off_host(input)) return max_pool2d_cuda(outs, input, &g);   /* GPU or meta */
  THDtype ct = input->dtype == TH_Double ? TH_Double : TH_Float;
  THTensor *x = at_contiguous_as(input, ct);
  if (!x) return -1;
  int64_t sz[4];
  out_sizes(input, g.OH, g.OW, sz);
  THTensor *y = THTensor_new(ct, input->ndim, sz), *idx = THTensor_new(TH_Int64, input->ndim, sz);
  if (!y || !idx) { THTensor_free(x); THTensor_free(y); THTensor_free(idx); return -1; }
  int64_t *id = (int64_t *)THTensor_data(idx), HW = g.H * g.W, L = g.OH * g.OW;
  const Pool3Geom g3 = pool_geom_as_3d(&g);
  if (ct == TH_Double) {
    const double *xd = (const double *)THTensor_data(x);
    double *yd = (double *)THTensor_data(y);
#pragma omp parallel for if (g.P * L > 16384)
    for (int64_t pl = 0; pl < g.P; pl++) maxpool_plane_double(xd + pl * HW, yd + pl * L, id + pl * L, &g3);
  } else {
    const float *xd = (const float *)THTensor_data(x);
    float *yd = (float *)THTensor_data(y);
#pragma omp parallel for if (g.P * L > 16384)
    for (int64_t pl = 0; pl < g.P; pl++) maxpool_plane_float(xd + pl * HW, yd + pl * L, id + pl * L, &g3);
  }
  THTensor_free(x);
  outs[0] = ct == input->dtype ? y : at_to_dtype(y, input->dtype, false);
  if (outs[0] != y) THTensor_free(y);
  outs[1] = idx;
  if (!outs[0]) { THTensor_free(idx); outs[1] = NULL; return -1; }
  return 0;
}

/* scatter-add of grad into each window's pick, in the compute type T */
#define MAXPOOL_BWD(T)                                                                        \
  static void maxpool_bwd_##T(const T *gd, const int64_t *id, T *gid, int64_t P, int64_t L, int64_t HW) { \
    _Pragma("omp parallel for if (P * L > 16384)")                                           \
    for (int64_t pl = 0; pl < P; pl++) {                                                     \
      T *dst = gid + pl * HW;                                                                \
      const T *src = gd + pl * L;                                                            \
      const int64_t *ix = id + pl * L;                                                       \
      for (int64_t j = 0; j < L; j++) if (ix[j] >= 0) dst[ix[j]] += src[j];                  \
    }                                                                                        \
  }
MAXPOOL_BWD(float)
MAXPOOL_BWD(double)

/* the product of the trailing nsp sizes: the pooled plane */
static int64_t plane_numel(const THTensor *t, int nsp) {
  int64_t n = 1;
  for (int i = t->ndim - nsp; i < t->ndim; i++) n *= t->sizes[i];
  return n;
}

/* max pooling's backward over planes of the trailing nsp dims: grad scatter-added at indices */
/* The max-pool index helpers read planes of x (nsp+1 or nsp+2 dims) at the
 * flat positions indices holds (int64, -1 for none), one plane of indices per
 * plane of x: check all of that before the loops trust it. */
static int pool_indices_check(const THTensor *x, const THTensor *indices, int nsp, const char *op) {
  if (at_check_ndim(x, nsp + 1, nsp + 2, op, "self") < 0 || at_check_int64(indices, op, "indices") < 0 ||
      at_check_ndim(indices, x->ndim, x->ndim, op, "indices") < 0)
    return -1;
  for (int d = 0; d < x->ndim - nsp; d++)
    if (indices->sizes[d] != x->sizes[d]) return at_check_same_shape(indices, x, op, "indices", "self");
  return at_check_index_range(indices, -1, plane_numel(x, nsp), op, "index");
}

static THTensor *plane_scatter(const THTensor *grad, const THTensor *input, const THTensor *indices, int nsp,
                               const char *op) {
  if (pool_indices_check(input, indices, nsp, op) < 0 ||
      at_check_same_shape(grad, indices, op, "grad_output", "indices") < 0)
    return NULL;
  int64_t HW = plane_numel(input, nsp);
  int64_t P = THTensor_numel(input) / (HW ? HW : 1);
  THDtype ct = POOL_CT(input);
  THTensor *gi = THTensor_new(ct, input->ndim, input->sizes);
  THTensor *g = gi ? at_contiguous_as(grad, ct) : NULL, *ic = g ? at_contiguous(indices) : NULL, *r = NULL;
  if (ic) {
    const int64_t *id = (const int64_t *)THTensor_data(ic);
    int64_t L = THTensor_numel(g) / (P ? P : 1);
    memset(THTensor_data(gi), 0, THTensor_numel(gi) * THDtype_size(ct));
    if (ct == TH_Double) maxpool_bwd_double((const double *)THTensor_data(g), id, (double *)THTensor_data(gi), P, L, HW);
    else maxpool_bwd_float((const float *)THTensor_data(g), id, (float *)THTensor_data(gi), P, L, HW);
    r = ct == input->dtype ? THTensor_retain(gi) : at_to_dtype(gi, input->dtype, false);
  }
  THTensor_free(gi); THTensor_free(g); THTensor_free(ic);
  return r;
}

/* the GPU scatter: indices are not read on the host (the kernel skips any
 * outside the plane); shapes are checked as on the CPU */
static THTensor *plane_scatter_cuda(const THTensor *grad, const THTensor *input, const THTensor *indices, int nsp,
                                    const char *op) {
  if (at_check_ndim(input, nsp + 1, nsp + 2, op, "self") < 0 || at_check_int64(indices, op, "indices") < 0 ||
      at_check_same_shape(grad, indices, op, "grad_output", "indices") < 0)
    return NULL;
  for (int d = 0; d < input->ndim - nsp; d++)
    if (indices->ndim != input->ndim || indices->sizes[d] != input->sizes[d]) {
      char a[256], b[256];
      THError_set(TH_ERR_RUNTIME, "%s: expected indices of shape %s to have self's leading dims %s", op,
                  THTensor_sizeStr(indices->ndim, indices->sizes, a, 256), THTensor_sizeStr(input->ndim, input->sizes, b, 256));
      return NULL;
    }
  if (!THDtype_isFloating(input->dtype)) {
    THError_set(TH_ERR_NOTIMPL, "\"%s\" on CUDA is not implemented for '%s'", op, THDtype_info[input->dtype].legacy);
    return NULL;
  }
  int64_t HW = plane_numel(input, nsp), P = THTensor_numel(input) / (HW ? HW : 1);
  int64_t L = THTensor_numel(indices) / (P ? P : 1);
  THTensor *gi = at_new_on(THTensor_device(input), input->dtype, input->ndim, input->sizes, NULL);
  THTensor *g = gi ? at_to_dtype(grad, input->dtype, false) : NULL, *gc = g ? at_contiguous(g) : NULL;
  THTensor *ic = gc ? at_contiguous(indices) : NULL;
  int rc = ic ? at_cuda->max_pool2d_backward(input->dtype, THTensor_data(gc), (const int64_t *)THTensor_data(ic),
                                             THTensor_data(gi), P, L, HW) : -1;
  THTensor_free(g); THTensor_free(gc); THTensor_free(ic);
  if (rc < 0) { THTensor_free(gi); return NULL; }
  return gi;
}

THTensor *at_max_pool2d_backward(const THTensor *grad, const THTensor *input, const THTensor *indices) {
  if (THTensor_device(input) >= 0)
    return plane_scatter_cuda(grad, input, indices, 2, "max_pool2d_with_indices_backward");
  return plane_scatter(grad, input, indices, 2, "max_pool2d_with_indices_backward");
}
THTensor *at_adaptive_max_pool3d_backward(const THTensor *grad, const THTensor *input, const THTensor *indices) {
  if (THTensor_device(input) >= 0) return plane_scatter_cuda(grad, input, indices, 3, "adaptive_max_pool3d_backward");
  return plane_scatter(grad, input, indices, 3, "adaptive_max_pool3d_backward");
}

/* ---- average pooling of GPU tensors (src/THC/THCPool.cu): src (grad for a
 * backward) as a contiguous float/double copy, the kernel writing every
 * element of a fresh dst of dst_sizes, cast back to out_dt ---- */
typedef enum { GPU_AVG, GPU_AVG_BWD, GPU_ADAPT, GPU_ADAPT_BWD } GpuPoolKind;

static THTensor *avg_pool_cuda(GpuPoolKind kind, const THTensor *src, const THTensor *other, int ndim,
                               const int64_t *dst_sizes, THDtype out_dt, const int64_t *geom, bool cip,
                               int64_t divisor, const char *op) {
  const THTensor *both[2] = { src, other };
  int dev;
  if (at_common_device(2, both, op, &dev) < 0) return NULL;
  if (!THDtype_isFloating(out_dt)) {
    THError_set(TH_ERR_NOTIMPL, "\"%s\" on CUDA is not implemented for '%s'", op, THDtype_info[out_dt].legacy);
    return NULL;
  }
  THDtype ct = out_dt == TH_Double ? TH_Double : TH_Float;
  THTensor *x = at_contiguous_as(src, ct), *y = x ? at_new_on(dev, ct, ndim, dst_sizes, NULL) : NULL, *r = NULL;
  int rc = -1;
  if (y && dev == TH_DEVICE_META) {
    rc = 0;   /* meta: y's shape is the result */
  } else if (y) {
    const void *xd = THTensor_data(x);
    void *yd = THTensor_data(y);
    switch (kind) {
      case GPU_AVG: rc = at_cuda->avg_pool2d(ct, xd, yd, geom, cip, divisor); break;
      case GPU_AVG_BWD: rc = at_cuda->avg_pool2d_backward(ct, xd, yd, geom, cip, divisor); break;
      case GPU_ADAPT: rc = at_cuda->adaptive_avg_pool(ct, xd, yd, geom); break;
      default: rc = at_cuda->adaptive_avg_pool_backward(ct, xd, yd, geom); break;
    }
  }
  if (rc == 0) r = ct == out_dt ? THTensor_retain(y) : at_to_dtype(y, out_dt, false);
  THTensor_free(x); THTensor_free(y);
  return r;
}

/* the kernels' avg geometry: P, H, W, OH, OW, KH, KW, SH, SW, PH, PW */
static void avg_geom_vec(const PoolGeom *g, int64_t *v) {
  int64_t a[11] = { g->P, g->H, g->W, g->OH, g->OW, g->KH, g->KW, g->SH, g->SW, g->PH, g->PW };
  memcpy(v, a, sizeof a);
}

/* pooling keeps a channels-last input's layout in its results (the indices too), as torch's */
static int keep_format2(const THTensor *input, THTensor **outs) {
  if (at_keep_format(input, &outs[0]) < 0 || at_keep_format(input, &outs[1]) < 0) {
    THTensor_free(outs[0]); THTensor_free(outs[1]);
    outs[0] = outs[1] = NULL;
    return -1;
  }
  return 0;
}

int at_max_pool2d(THTensor **outs, const THTensor *input, const ATIntList *k, const ATIntList *s, const ATIntList *p,
                  const ATIntList *d, bool ceil_mode) {
  if (max_pool2d_nchw(outs, input, k, s, p, d, ceil_mode) < 0) return -1;
  return keep_format2(input, outs);
}

/* F.max_pool1d when neither indices nor a gradient are wanted: the values
 * only (torch's max_pool1d_impl, with its checks and texts), tap by tap along
 * each row as maxpool_plane does, without an int64 index per output to build
 * and write, which cost the indexed kernel 2-3.7x torch's time. NaN and
 * first-pick rules are maxpool_plane's; every output has a valid tap
 * (pad <= kernel / 2). */
typedef struct { int64_t W, OW, K, S, P, D; } Pool1Geom;

#define MAXPOOL_ROW(T)                                                                                 \
  static void maxpool_row_##T(const T *x, T *y, const Pool1Geom *g) {                                  \
    for (int64_t ow = 0; ow < g->OW; ow++) y[ow] = -INFINITY;                                          \
    for (int64_t kw = 0; kw < g->K; kw++) {                                                            \
      int64_t iw0 = kw * g->D - g->P, lo, hi, sw = g->S;                                               \
      at_window_cols(iw0, g->W, sw, g->OW, &lo, &hi);                                                  \
      for (int64_t ow = lo; ow < hi; ow++) {                                                           \
        T v = x[iw0 + ow * sw];                                                                        \
        y[ow] = (v > y[ow]) | (v != v) ? v : y[ow];                                                    \
      }                                                                                                \
    }                                                                                                  \
  }
MAXPOOL_ROW(float)
MAXPOOL_ROW(double)

THTensor *at_max_pool1d_values(const THTensor *input, const ATIntList *k, const ATIntList *s, const ATIntList *p,
                               const ATIntList *d, bool ceil_mode) {
  char b[256];
  int nd = input->ndim;
  bool ok = nd == 2 || nd == 3;
  for (int i = nd - 2; ok && i < nd; i++) ok = input->sizes[i] != 0;
  if (!ok) {
    THError_set(TH_ERR_RUNTIME, "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size "
                "for input, but got:%s", THTensor_sizeStr(nd, input->sizes, b, sizeof b));
    return NULL;
  }
  const char *what[4] = { "kernel_size must be an int, list of ints or tuple of ints",
                          "stride must be None, an int, list of ints, or tuple of ints",
                          "padding must be an int, list of ints or tuple of ints",
                          "dilation must be an int, list of ints or tuple of ints" };
  const ATIntList *lists[4] = { k, s, p, d };
  for (int i = 0; i < 4; i++)
    if (lists[i]->n != 1 && !(i == 1 && lists[i]->n == 0)) {
      THError_set(TH_ERR_RUNTIME, "max_pool1d() %s of size 1 but got size %d", what[i], lists[i]->n);
      return NULL;
    }
  Pool1Geom g = { input->sizes[nd - 1], 0, k->v[0], s->n ? s->v[0] : k->v[0], p->v[0], d->v[0] };
  const char *bad = g.K <= 0 ? "kernel_size must be greater than zero" : g.S <= 0 ? "stride must be greater than zero"
                    : g.P < 0 ? "padding must be non-negative" : NULL;
  if (bad) {
    THError_set(TH_ERR_RUNTIME, "max_pool1d() %s, but got %lld", bad,
                (long long)(g.K <= 0 ? g.K : g.S <= 0 ? g.S : g.P));
    return NULL;
  }
  if (g.P > g.K / 2) {
    THError_set(TH_ERR_RUNTIME, "max_pool1d() padding should be at most half of kernel size, but got padding=%lld "
                "and kernel_size=%lld", (long long)g.P, (long long)g.K);
    return NULL;
  }
  if (g.D <= 0) {
    THError_set(TH_ERR_RUNTIME, "max_pool1d() dilation must be greater than zero, but got %lld", (long long)g.D);
    return NULL;
  }
  /* the window's extent past int64 (torch's check fails there on its wrapped value): refused, where pool_out's
   * wrapped size would run a loop over the 2^62 taps */
  int64_t ext;
  if (th_mul_overflow(g.K - 1, g.D, &ext) || ext > INT64_MAX - 2 * g.P - g.W) {
    THError_set(TH_ERR_RUNTIME, "pad should be at most half of effective kernel size, but got pad=%lld, "
                "kernel_size=%lld and dilation=%lld", (long long)g.P, (long long)g.K, (long long)g.D);
    return NULL;
  }
  g.OW = pool_out(g.W, g.K, g.S, g.P, g.D, ceil_mode);
  if (g.OW <= 0) {
    THError_set(TH_ERR_RUNTIME, "max_pool1d() Invalid computed output size: %lld", (long long)g.OW);
    return NULL;
  }
  if (!THDtype_isFloating(input->dtype)) {
    THError_set(TH_ERR_NOTIMPL, "\"max_pool1d_impl\" not implemented for '%s'", THDtype_info[input->dtype].legacy);
    return NULL;
  }
  THDtype ct = input->dtype == TH_Double ? TH_Double : TH_Float;
  THTensor *x = at_contiguous_as(input, ct);
  if (!x) return NULL;
  int64_t osz[3], P = THTensor_numel(input) / g.W;
  memcpy(osz, input->sizes, nd * sizeof(int64_t));
  osz[nd - 1] = g.OW;
  THTensor *y = THTensor_new(ct, nd, osz);
  if (!y) { THTensor_free(x); return NULL; }
  if (ct == TH_Double) {
    const double *xd = (const double *)(void *)THTensor_data(x);
    double *yd = (double *)(void *)THTensor_data(y);
#pragma omp parallel for if (P * g.OW > 16384)
    for (int64_t pl = 0; pl < P; pl++) maxpool_row_double(xd + pl * g.W, yd + pl * g.OW, &g);
  } else {
    const float *xd = (const float *)(void *)THTensor_data(x);
    float *yd = (float *)(void *)THTensor_data(y);
#pragma omp parallel for if (P * g.OW > 16384)
    for (int64_t pl = 0; pl < P; pl++) maxpool_row_float(xd + pl * g.W, yd + pl * g.OW, &g);
  }
  THTensor_free(x);
  if (ct == input->dtype) return y;
  THTensor *r = at_to_dtype(y, input->dtype, false);
  THTensor_free(y);
  return r;
}

static THTensor *avg_pool2d_nchw(const THTensor *input, const ATIntList *k, const ATIntList *s, const ATIntList *p,
                                 bool ceil_mode, bool cip, ATOptInt divisor) {
  PoolGeom g;
  if (pool_geom(input, k, s, p, NULL, ceil_mode, &g, "avg_pool2d") < 0) return NULL;
  if (divisor.has && divisor.v == 0) { THError_set(TH_ERR_RUNTIME, "divisor must be not zero"); return NULL; }
  if (at_off_host(input)) {   /* GPU or meta */
    int64_t sz[4], geom[11];
    out_sizes(input, g.OH, g.OW, sz);
    avg_geom_vec(&g, geom);
    return avg_pool_cuda(GPU_AVG, input, NULL, input->ndim, sz, input->dtype, geom, cip,
                         divisor.has ? divisor.v : 0, "avg_pool2d");
  }
  const Pool3Geom g3 = pool_geom_as_3d(&g);
  return avg_pool_run(input, input, &g3, 2, cip, divisor, false);
}

THTensor *at_avg_pool2d(const THTensor *input, const ATIntList *k, const ATIntList *s, const ATIntList *p,
                        bool ceil_mode, bool cip, ATOptInt divisor) {
  if (at_no_complex(input, "avg_pool2d") < 0) return NULL;   /* the kernel would cast the imaginary part away */
  THTensor *out = avg_pool2d_nchw(input, k, s, p, ceil_mode, cip, divisor);
  return at_keep_format(input, &out) < 0 ? NULL : out;
}

THTensor *at_avg_pool2d_backward(const THTensor *grad, const THTensor *input, const ATIntList *k, const ATIntList *s,
                                 const ATIntList *p, bool ceil_mode, bool cip, ATOptInt divisor) {
  PoolGeom g;
  if (pool_geom(input, k, s, p, NULL, ceil_mode, &g, "avg_pool2d") < 0) return NULL;
  int64_t osz[4];
  out_sizes(input, g.OH, g.OW, osz);
  if (at_check_shape(grad, input->ndim, osz, "avg_pool2d_backward", "grad_output") < 0) return NULL;
  if (at_off_host(input)) {   /* GPU or meta */
    int64_t geom[11];
    avg_geom_vec(&g, geom);
    return avg_pool_cuda(GPU_AVG_BWD, grad, input, input->ndim, input->sizes, input->dtype, geom, cip,
                         divisor.has ? divisor.v : 0, "avg_pool2d_backward");
  }
  const Pool3Geom g3 = pool_geom_as_3d(&g);
  return avg_pool_run(grad, input, &g3, 2, cip, divisor, true);
}

/* ---- adaptive pooling over the trailing 2 (D = OD = 1) or 3 spatial dims ----
 * Output cell o of a dim of size L pooled to O covers [START(o), END(o)). */
typedef struct {
  int64_t P, D, H, W, OD, OH, OW;
  const int64_t *cell[3];   /* adapt_planes: START and END of each output of D, H, W (2 * out each) */
} AdaptGeom;

#define START(i, in, out) (((i) * (in)) / (out))
#define END(i, in, out) ((((i) + 1) * (in) + (out) - 1) / (out))

/* torch's checks and texts; nsp spatial dims, output_size entries < 0 mean the
 * input's size (the 2-d entry points' None) */
static int adapt_geom(const THTensor *x, const ATIntList *os, int nsp, const char *name, bool is_max, AdaptGeom *g) {
  char b[256];
  if (x->ndim != nsp + 1 && x->ndim != nsp + 2) {
    THError_set(TH_ERR_RUNTIME, "%s(): Expected %dD or %dD tensor, but got%s %s", name, nsp + 1, nsp + 2,
                is_max ? ":" : "", THTensor_sizeStr(x->ndim, x->sizes, b, 256));
    return -1;
  }
  if (!THDtype_isFloating(x->dtype)) {
    THError_set(TH_ERR_NOTIMPL, "\"%s_cpu\" not implemented for '%s'", name, THDtype_info[x->dtype].legacy);
    return -1;
  }
  int64_t in[3] = { 1, 1, 1 }, out[3] = { 1, 1, 1 };
  for (int i = 0; i < nsp; i++) in[3 - nsp + i] = x->sizes[x->ndim - nsp + i];
  if (nsp == 3) {
    if (os->n != 3) {
      THError_set(TH_ERR_RUNTIME, is_max ? "%s(): internal error: output_size.size() must be 3" : "%s: output_size must be 3",
                  name);
      return -1;
    }
    for (int i = 0; i < 3; i++) out[i] = os->v[i];
    if (out[0] < 0 || out[1] < 0 || out[2] < 0) {
      int64_t sz[5];
      memcpy(sz, x->sizes, x->ndim * sizeof(int64_t));
      for (int i = 0; i < 3; i++) sz[x->ndim - 3 + i] = out[i];
      if (is_max) {
        int64_t neg = out[0] < 0 ? out[0] : out[1] < 0 ? out[1] : out[2];
        THError_set(TH_ERR_RUNTIME, "Trying to create tensor with negative dimension %lld: %s", (long long)neg,
                    THTensor_sizeStr(x->ndim, sz, b, 256));
      } else {
        THError_set(TH_ERR_RUNTIME, "%s: elements of output_size must be greater than or equal to 0 but received "
                    "{%lld, %lld,%lld}", name, (long long)out[0], (long long)out[1], (long long)out[2]);
      }
      return -1;
    }
  } else {
    out[1] = os->v[0] >= 0 ? os->v[0] : in[1];
    out[2] = os->n > 1 ? (os->v[1] >= 0 ? os->v[1] : in[2]) : out[1];
  }
  /* torch's emptiness check: a one-cell average is a mean (NaN over an empty plane) and checks nothing;
   * the 2-d average checks its spatial dims; the others every dim after the first */
  bool mean = !is_max && out[0] == 1 && out[1] == 1 && out[2] == 1;
  for (int i = !mean ? (!is_max && nsp == 2 ? x->ndim - 2 : 1) : x->ndim; i < x->ndim; i++)
    if (x->sizes[i] == 0) {
      THError_set(TH_ERR_RUNTIME, "%s(): Expected input to have non-zero size for non-batch dimensions, but input has "
                  "sizes %s with dimension %d being empty", name, THTensor_sizeStr(x->ndim, x->sizes, b, 256), i);
      return -1;
    }
  g->D = in[0]; g->H = in[1]; g->W = in[2];
  g->OD = out[0]; g->OH = out[1]; g->OW = out[2];
  int64_t plane = g->D * g->H * g->W;
  g->P = THTensor_numel(x) / (plane ? plane : 1);
  return 0;
}

static void adapt_out_sizes(const THTensor *x, int nsp, const AdaptGeom *g, int64_t *sizes) {
  int64_t o[3] = { g->OD, g->OH, g->OW };
  memcpy(sizes, x->sizes, x->ndim * sizeof(int64_t));
  for (int i = 0; i < nsp; i++) sizes[x->ndim - nsp + i] = o[3 - nsp + i];
}

/* Each plane's cells: average, its adjoint (the backward, which adds each
 * cell's share to its window), and max with the flat index of the pick in
 * the plane (the first of equal values; NaN wins, as torch). */
#define ADAPT_KERNELS(T)                                                                                \
  /* the sum of n contiguous values in 32 running partial sums: the additions overlap (no chain of     \
   * dependent adds) and each partial sum holds n/32 terms, which also keeps the error down */         \
  static T adapt_sum_##T(const T *x, int64_t n) {                                                      \
    T acc[32] = { 0 }, sum = 0;                                                                        \
    int64_t i = 0;                                                                                     \
    for (; i + 32 <= n; i += 32)                                                                       \
      for (int k = 0; k < 32; k++) acc[k] += x[i + k];                                                 \
    for (; i < n; i++) sum += x[i];                                                                    \
    for (int k = 0; k < 32; k++) sum += acc[k];                                                        \
    return sum;                                                                                        \
  }                                                                                                    \
  static void adapt_avg_##T(const T *x, T *y, const AdaptGeom *g, T *scratch) {                        \
    if (g->OH == 1 && g->OW == 1) {   /* each cell is whole H x W planes, one contiguous run */         \
      for (int64_t od = 0; od < g->OD; od++) {                                                         \
        int64_t d0 = g->cell[0][2 * od], d1 = g->cell[0][2 * od + 1];                                  \
        *y++ = adapt_sum_##T(x + d0 * g->H * g->W, (d1 - d0) * g->H * g->W) / (T)((d1 - d0) * g->H * g->W); \
      }                                                                                                \
      return;                                                                                          \
    }                                                                                                  \
    /* separably, as the window is a box: each row's W cells into A (D x H x OW), H cells into B      \
     * (D x OH x OW) as whole-row sums, then D cells into y, divided by the window's size */          \
    const int64_t D = g->D, H = g->H, W = g->W, OD = g->OD, OH = g->OH, OW = g->OW;                    \
    T *A = scratch, *B = scratch + D * H * OW;                                                         \
    for (int64_t r = 0; r < D * H; r++) {                                                              \
      const T *row = x + r * W;                                                                        \
      for (int64_t ow = 0; ow < OW; ow++) {                                                            \
        int64_t w0 = g->cell[2][2 * ow], w1 = g->cell[2][2 * ow + 1];                                  \
        T sum = 0;                                                                                     \
        for (int64_t iw = w0; iw < w1; iw++) sum += row[iw];                                           \
        A[r * OW + ow] = sum;                                                                          \
      }                                                                                                \
    }                                                                                                  \
    for (int64_t d = 0; d < D; d++)                                                                    \
      for (int64_t oh = 0; oh < OH; oh++) {                                                            \
        int64_t h0 = g->cell[1][2 * oh], h1 = g->cell[1][2 * oh + 1];                                  \
        T *b = B + (d * OH + oh) * OW;                                                                 \
        const T *a = A + (d * H + h0) * OW;                                                            \
        for (int64_t j = 0; j < OW; j++) b[j] = a[j];                                                  \
        for (int64_t ih = h0 + 1; ih < h1; ih++) {                                                     \
          a = A + (d * H + ih) * OW;                                                                   \
          for (int64_t j = 0; j < OW; j++) b[j] += a[j];                                               \
        }                                                                                              \
      }                                                                                                \
    for (int64_t od = 0; od < OD; od++) {                                                              \
      int64_t d0 = g->cell[0][2 * od], d1 = g->cell[0][2 * od + 1];                                    \
      T *yo = y + od * OH * OW;                                                                        \
      for (int64_t j = 0; j < OH * OW; j++) yo[j] = B[d0 * OH * OW + j];                               \
      for (int64_t id = d0 + 1; id < d1; id++)                                                         \
        for (int64_t j = 0; j < OH * OW; j++) yo[j] += B[id * OH * OW + j];                            \
      for (int64_t oh = 0; oh < OH; oh++) {                                                            \
        int64_t nh = (d1 - d0) * (g->cell[1][2 * oh + 1] - g->cell[1][2 * oh]);                        \
        for (int64_t ow = 0; ow < OW; ow++)                                                            \
          yo[oh * OW + ow] /= (T)(nh * (g->cell[2][2 * ow + 1] - g->cell[2][2 * ow]));                 \
      }                                                                                                \
    }                                                                                                  \
  }                                                                                                    \
  static void adapt_avg_bwd_##T(const T *gy, T *gx, const AdaptGeom *g) {                              \
    memset(gx, 0, g->D * g->H * g->W * sizeof(T));                                                     \
    for (int64_t od = 0; od < g->OD; od++)                                                             \
      for (int64_t oh = 0; oh < g->OH; oh++)                                                           \
        for (int64_t ow = 0; ow < g->OW; ow++) {                                                       \
          int64_t d0 = g->cell[0][2 * od], d1 = g->cell[0][2 * od + 1];                                \
          int64_t h0 = g->cell[1][2 * oh], h1 = g->cell[1][2 * oh + 1];                                \
          int64_t w0 = g->cell[2][2 * ow], w1 = g->cell[2][2 * ow + 1];                                \
          T v = *gy++ / (T)((d1 - d0) * (h1 - h0) * (w1 - w0));                                       \
          for (int64_t id = d0; id < d1; id++)                                                         \
            for (int64_t ih = h0; ih < h1; ih++) {                                                     \
              T *row = gx + (id * g->H + ih) * g->W;                                                   \
              for (int64_t iw = w0; iw < w1; iw++) row[iw] += v;                                       \
            }                                                                                          \
        }                                                                                              \
  }                                                                                                    \
  static void adapt_max_##T(const T *x, T *y, int64_t *ix, const AdaptGeom *g) {                       \
    for (int64_t od = 0; od < g->OD; od++)                                                             \
      for (int64_t oh = 0; oh < g->OH; oh++)                                                           \
        for (int64_t ow = 0; ow < g->OW; ow++) {                                                       \
          int64_t d0 = g->cell[0][2 * od], d1 = g->cell[0][2 * od + 1];                                \
          int64_t h0 = g->cell[1][2 * oh], h1 = g->cell[1][2 * oh + 1];                                \
          int64_t w0 = g->cell[2][2 * ow], w1 = g->cell[2][2 * ow + 1];                                \
          int64_t best = (d0 * g->H + h0) * g->W + w0;                                                 \
          T bv = x[best];                                                                              \
          for (int64_t id = d0; id < d1; id++)                                                         \
            for (int64_t ih = h0; ih < h1; ih++) {                                                     \
              int64_t base = (id * g->H + ih) * g->W;                                                  \
              for (int64_t iw = w0; iw < w1; iw++) {                                                   \
                T v = x[base + iw];                                                                    \
                if (v > bv || (v != v && bv == bv)) { bv = v; best = base + iw; }                      \
              }                                                                                        \
            }                                                                                          \
          *y++ = bv;                                                                                   \
          *ix++ = best;                                                                                \
        }                                                                                              \
  }
ADAPT_KERNELS(float)
ADAPT_KERNELS(double)


/* the kernel k over every plane, in the compute type ct: src planes hold the
 * input (the grad of the output for ADAPT_AVG_BWD), dst planes the result, ix
 * max's indices */
typedef enum { ADAPT_AVG, ADAPT_AVG_BWD, ADAPT_MAX } AdaptKind;
/* ADAPT_AVG's scratch per thread, in elements of its compute type */
static int64_t adapt_scratch(const AdaptGeom *g) { return g->D * (g->H + g->OH) * g->OW; }

static int adapt_planes(AdaptKind k, THDtype ct, const void *src, void *dst, int64_t *ix, const AdaptGeom *g0) {
  AdaptGeom g1 = *g0, *g = &g1;
  int64_t L = g->OD * g->OH * g->OW, HW = g->D * g->H * g->W;
  int64_t sin = k == ADAPT_AVG_BWD ? L : HW, sout = k == ADAPT_AVG_BWD ? HW : L;
  bool par = g->P * HW > 16384;
  int nt = par ? omp_get_max_threads() : 1;
  size_t es = ct == TH_Double ? sizeof(double) : sizeof(float);
  char *scratch = k == ADAPT_AVG ? malloc(nt * adapt_scratch(g) * es + 1) : NULL;
  int64_t *cells = malloc(2 * (g->OD + g->OH + g->OW) * sizeof(int64_t) + 1);
  if ((k == ADAPT_AVG && !scratch) || !cells) {
    free(scratch); free(cells);
    THError_set(TH_ERR_MEMORY, "adaptive_avg_pool: out of memory");
    return -1;
  }
  {   /* the cells' bounds once per call, not two divisions per output in every plane */
    int64_t in[3] = { g->D, g->H, g->W }, out[3] = { g->OD, g->OH, g->OW }, *c = cells;
    for (int d = 0; d < 3; d++) {
      g->cell[d] = c;
      for (int64_t o = 0; o < out[d]; o++, c += 2) { c[0] = START(o, in[d], out[d]); c[1] = END(o, in[d], out[d]); }
    }
  }
#define ADAPT_PLANE(T)                                                                               \
  do {                                                                                               \
    const T *s = (const T *)src + pl * sin;                                                          \
    T *d = (T *)dst + pl * sout;                                                                     \
    if (k == ADAPT_AVG) adapt_avg_##T(s, d, g, (T *)(scratch + omp_get_thread_num() * adapt_scratch(g) * es)); \
    else if (k == ADAPT_AVG_BWD) adapt_avg_bwd_##T(s, d, g);                                         \
    else adapt_max_##T(s, d, ix + pl * L, g);                                                        \
  } while (0)
#pragma omp parallel for num_threads(nt) if (par)
  for (int64_t pl = 0; pl < g->P; pl++) {
    if (ct == TH_Double) ADAPT_PLANE(double);
    else ADAPT_PLANE(float);
  }
#undef ADAPT_PLANE
  free(scratch); free(cells);
  return 0;
}

static THTensor *adaptive_avg(const THTensor *input, const ATIntList *os, int nsp, const char *name) {
  AdaptGeom g;
  if (adapt_geom(input, os, nsp, name, false, &g) < 0) return NULL;
  int64_t sz[5];
  adapt_out_sizes(input, nsp, &g, sz);
  if (g.D * g.H * g.W == 0 && !at_off_host(input)) {   /* a mean over an empty plane: NaN, as torch's */
    THTensor *y = THTensor_new(input->dtype, input->ndim, sz);
    if (y && at_fill_(y, at_scalar_float(NAN)) < 0) { THTensor_free(y); return NULL; }
    return y;
  }
  if (at_off_host(input)) {   /* GPU or meta */
    int64_t geom[7] = { g.P, g.D, g.H, g.W, g.OD, g.OH, g.OW };
    return avg_pool_cuda(GPU_ADAPT, input, NULL, input->ndim, sz, input->dtype, geom, false, 0, name);
  }
  THDtype ct = POOL_CT(input);
  THTensor *x = at_contiguous_as(input, ct);
  if (!x) return NULL;
  THTensor *y = THTensor_new(ct, input->ndim, sz), *r = NULL;
  if (y) {
    if (adapt_planes(ADAPT_AVG, ct, THTensor_data(x), THTensor_data(y), NULL, &g) == 0)
      r = ct == input->dtype ? THTensor_retain(y) : at_to_dtype(y, input->dtype, false);
  }
  THTensor_free(x); THTensor_free(y);
  return r;
}

/* the geometry of a backward: input's sizes, grad's trailing sizes as the output size */
static THTensor *adaptive_avg_bwd(const THTensor *grad, const THTensor *input, int nsp, const char *name) {
  if (at_check_ndim(grad, input->ndim, input->ndim, name, "grad_output") < 0) return NULL;
  for (int d = 0; d < input->ndim - nsp; d++)
    if (grad->sizes[d] != input->sizes[d]) {
      at_check_same_shape(grad, input, name, "grad_output", "self");
      return NULL;
    }
  AdaptGeom g;
  ATIntList os = { nsp, { 0 } };
  /* grad has input's ndim, which adapt_geom checks is above nsp: read its sizes only then */
  for (int i = 0; i < nsp && grad->ndim > nsp; i++) os.v[i] = grad->sizes[grad->ndim - nsp + i];
  if (adapt_geom(input, &os, nsp, name, false, &g) < 0) return NULL;
  if (at_off_host(input)) {   /* GPU or meta */
    int64_t geom[7] = { g.P, g.D, g.H, g.W, g.OD, g.OH, g.OW };
    return avg_pool_cuda(GPU_ADAPT_BWD, grad, input, input->ndim, input->sizes, input->dtype, geom, false, 0, name);
  }
  THDtype ct = POOL_CT(input);
  THTensor *gy = at_contiguous_as(grad, ct), *gi = gy ? THTensor_new(ct, input->ndim, input->sizes) : NULL, *r = NULL;
  if (gi) {
    if (adapt_planes(ADAPT_AVG_BWD, ct, THTensor_data(gy), THTensor_data(gi), NULL, &g) == 0)
      r = ct == input->dtype ? THTensor_retain(gi) : at_to_dtype(gi, input->dtype, false);
  }
  THTensor_free(gy); THTensor_free(gi);
  return r;
}

static int adaptive_max(THTensor **outs, const THTensor *input, const ATIntList *os, int nsp, const char *name) {
  AdaptGeom g;
  if (adapt_geom(input, os, nsp, name, true, &g) < 0) return -1;
  int dev = THTensor_device(input);
  if (dev >= 0 && !THDtype_isFloating(input->dtype)) {
    THError_set(TH_ERR_NOTIMPL, "\"%s\" on CUDA is not implemented for '%s'", name, THDtype_info[input->dtype].legacy);
    return -1;
  }
  THDtype ct = POOL_CT(input);
  THTensor *x = at_contiguous_as(input, ct);
  if (!x) return -1;
  int64_t sz[5];
  adapt_out_sizes(input, nsp, &g, sz);
  THTensor *y = at_new_on(dev, ct, input->ndim, sz, NULL), *idx = at_new_on(dev, TH_Int64, input->ndim, sz, NULL);
  if (!y || !idx) { THTensor_free(x); THTensor_free(y); THTensor_free(idx); return -1; }
  if (dev >= 0) {   /* src/THC/THCPool.cu, the same cells and picks */
    int64_t geom[7] = { g.P, g.D, g.H, g.W, g.OD, g.OH, g.OW };
    if (at_cuda->adaptive_max_pool(ct, THTensor_data(x), THTensor_data(y), (int64_t *)THTensor_data(idx), geom) < 0) {
      THTensor_free(x); THTensor_free(y); THTensor_free(idx);
      return -1;
    }
  } else {
    if (adapt_planes(ADAPT_MAX, ct, THTensor_data(x), THTensor_data(y), (int64_t *)THTensor_data(idx), &g) < 0) {
      THTensor_free(x); THTensor_free(y); THTensor_free(idx);
      return -1;
    }
  }
  THTensor_free(x);
  outs[0] = ct == input->dtype ? THTensor_retain(y) : at_to_dtype(y, input->dtype, false);
  THTensor_free(y);
  outs[1] = idx;
  if (!outs[0]) { THTensor_free(idx); outs[1] = NULL; return -1; }
  return 0;
}

/* The adjoint of max_pool2d's backward (its double backward): each output
 * position takes ggI at the input position its window picked. */
static THTensor *plane_take(const THTensor *self, const THTensor *indices, int nsp, const char *op) {
  if (pool_indices_check(self, indices, nsp, op) < 0) return NULL;
  int64_t HW = plane_numel(self, nsp);
  int64_t P = THTensor_numel(self) / (HW ? HW : 1);
  int64_t L = THTensor_numel(indices) / (P ? P : 1);
  THDtype ct = self->dtype == TH_Double ? TH_Double : TH_Float;
  THTensor *x = at_contiguous_as(self, ct), *ic = x ? at_contiguous(indices) : NULL, *out = NULL, *r = NULL;
  if (ic && (out = THTensor_new(ct, indices->ndim, indices->sizes))) {
    const int64_t *id = (const int64_t *)THTensor_data(ic);
#define TAKE(T)                                                                                              \
    do {                                                                                                     \
      const T *xs = (const T *)THTensor_data(x);                                                             \
      T *o = (T *)THTensor_data(out);                                                                        \
      for (int64_t p = 0; p < P; p++)                                                                        \
        for (int64_t j = 0; j < L; j++) o[p * L + j] = id[p * L + j] >= 0 ? xs[p * HW + id[p * L + j]] : 0; \
    } while (0)
    if (ct == TH_Double) TAKE(double); else TAKE(float);
#undef TAKE
    r = ct == self->dtype ? THTensor_retain(out) : at_to_dtype(out, self->dtype, false);
  }
  THTensor_free(x); THTensor_free(ic); THTensor_free(out);
  return r;
}

/* adaptive average pooling of self to like's trailing nsp sizes (the adjoint
 * of adaptive_avg_pool{2,3}d_backward, for double backward) */
static THTensor *adaptive_avg_like(const THTensor *self, const THTensor *like, int nsp, const char *name) {
  if (at_check_ndim(like, nsp, TH_MAX_DIMS, name, "like") < 0) return NULL;
  ATIntList os = { nsp, { 0 } };
  for (int i = 0; i < nsp; i++) os.v[i] = like->sizes[like->ndim - nsp + i];
  return adaptive_avg(self, &os, nsp, nsp == 2 ? "adaptive_avg_pool2d" : "adaptive_avg_pool3d");
}
/* the public entries of N = 2 and 3 spatial dims: one body each */
#define ADAPTIVE_ENTRIES(N)                                                                     \
  THTensor *at_adaptive_avg_pool##N##d(const THTensor *input, const ATIntList *os) {            \
    THTensor *out = adaptive_avg(input, os, N, "adaptive_avg_pool" #N "d");                     \
    return at_keep_format(input, &out) < 0 ? NULL : out;                                        \
  }                                                                                             \
  THTensor *at_adaptive_avg_pool##N##d_backward(const THTensor *grad, const THTensor *input) {  \
    return adaptive_avg_bwd(grad, input, N, "adaptive_avg_pool" #N "d");                        \
  }                                                                                             \
  int at_adaptive_max_pool##N##d(THTensor **outs, const THTensor *input, const ATIntList *os) { \
    if (adaptive_max(outs, input, os, N, "adaptive_max_pool" #N "d") < 0) return -1;           \
    return keep_format2(input, outs);                                                           \
  }                                                                                             \
  THTensor *at_max_pool##N##d_take(const THTensor *self, const THTensor *indices) {             \
    return plane_take(self, indices, N, "_max_pool" #N "d_take");                               \
  }                                                                                             \
  THTensor *at_adaptive_avg_pool##N##d_like(const THTensor *self, const THTensor *like) {       \
    return adaptive_avg_like(self, like, N, "_adaptive_avg_pool" #N "d_like");                  \
  }
ADAPTIVE_ENTRIES(2)
ADAPTIVE_ENTRIES(3)

/* ---- max and average pooling over three spatial dims (T, H, W) ----
 * torch's checks, in its order: the output size per dim (stride not zero,
 * padding within half the effective kernel), then pool3d_shape_check. */

/* floor division, as torch's div_rtn (the numerator may be negative) */
static int64_t div_floor(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

static int pool3d_geom(const THTensor *x, const ATIntList *k, const ATIntList *s, const ATIntList *p,
                       const ATIntList *d, bool ceil_mode, bool is_avg, Pool3Geom *g) {
  char b[256];
  if (x->ndim != 4 && x->ndim != 5) {
    THError_set(TH_ERR_RUNTIME, "non-empty 4D or 5D (batch mode) tensor expected for input");
    return -1;
  }
  const char *fn = is_avg ? "avg_pool3d()" : "max_pool3d_with_indices_out_cpu_template()";
  for (int i = 0; i < 3; i++) {
    g->k[i] = k->n == 3 ? k->v[i] : k->v[0];
    g->s[i] = s && s->n > 0 ? (s->n == 3 ? s->v[i] : s->v[0]) : g->k[i];
    g->p[i] = p->n == 3 ? p->v[i] : p->v[0];
    g->d[i] = d ? (d->n == 3 ? d->v[i] : d->v[0]) : 1;
    g->in[i] = x->sizes[x->ndim - 3 + i];
    if (g->k[i] > INT32_MAX || g->k[i] < INT32_MIN || g->s[i] > INT32_MAX || g->s[i] < INT32_MIN ||
        g->p[i] > INT32_MAX || g->p[i] < INT32_MIN || g->d[i] > INT32_MAX || g->d[i] < INT32_MIN) {
      THError_set(TH_ERR_RUNTIME, "value cannot be converted to type int without overflow");
      return -1;
    }
  }
  for (int i = 0; i < 3; i++) {   /* torch's pooling_output_shape, T then H then W */
    if (g->s[i] == 0) { THError_set(TH_ERR_RUNTIME, "stride should not be zero"); return -1; }
    if (g->p[i] < 0) { THError_set(TH_ERR_RUNTIME, "pad must be non-negative, but got pad: %lld", (long long)g->p[i]); return -1; }
    if (g->p[i] > ((g->k[i] - 1) * g->d[i] + 1) / 2) {
      THError_set(TH_ERR_RUNTIME, "pad should be at most half of effective kernel size, but got pad=%lld, kernel_size=%lld "
                  "and dilation=%lld", (long long)g->p[i], (long long)g->k[i], (long long)g->d[i]);
      return -1;
    }
    int64_t o = div_floor(g->in[i] + 2 * g->p[i] - g->d[i] * (g->k[i] - 1) - 1 + (ceil_mode ? g->s[i] - 1 : 0), g->s[i]) + 1;
    if (ceil_mode && (o - 1) * g->s[i] >= g->in[i] + g->p[i]) o--;
    g->out[i] = o;
  }
  /* pool3d_shape_check */
  if (g->k[0] <= 0 || g->k[1] <= 0 || g->k[2] <= 0) {
    THError_set(TH_ERR_RUNTIME, "kernel size should be greater than zero, but got kT: %lld kH: %lld kW: %lld",
                (long long)g->k[0], (long long)g->k[1], (long long)g->k[2]);
    return -1;
  }
  if (g->s[0] <= 0 || g->s[1] <= 0 || g->s[2] <= 0) {
    THError_set(TH_ERR_RUNTIME, "stride should be greater than zero, but got dT: %lld dH: %lld dW: %lld",
                (long long)g->s[0], (long long)g->s[1], (long long)g->s[2]);
    return -1;
  }
  if (g->d[0] <= 0 || g->d[1] <= 0 || g->d[2] <= 0) {
    THError_set(TH_ERR_RUNTIME, "dilation should be greater than zero, but got dilationT: %lld dilationH: %lld "
                "dilationW: %lld", (long long)g->d[0], (long long)g->d[1], (long long)g->d[2]);
    return -1;
  }
  for (int i = x->ndim == 5 ? 1 : 0; i < x->ndim; i++)
    if (x->sizes[i] <= 0) {
      /* sic: torch prints the dimension's length where it means its index */
      THError_set(TH_ERR_RUNTIME, "%s: Expected input's non-batch dimensions to have positive length, but input has a "
                  "shape of %s and non-batch dimension %lld has length zero!", fn,
                  THTensor_sizeStr(x->ndim, x->sizes, b, 256), (long long)x->sizes[i]);
      return -1;
    }
  if (is_avg && (g->in[0] < g->k[0] || g->in[1] < g->k[1] || g->in[2] < g->k[2])) {
    THError_set(TH_ERR_RUNTIME, "input image (T: %lld H: %lld W: %lld) smaller than kernel size (kT: %lld kH: %lld kW: %lld)",
                (long long)g->in[0], (long long)g->in[1], (long long)g->in[2], (long long)g->k[0], (long long)g->k[1],
                (long long)g->k[2]);
    return -1;
  }
  if (g->k[0] / 2 < g->p[0] || g->k[2] / 2 < g->p[2] || g->k[1] / 2 < g->p[1]) {
    THError_set(TH_ERR_RUNTIME, "pad should be smaller than or equal to half of kernel size, but got kT: %lld kW: %lld "
                "kH: %lld padT: %lld padW: %lld padH: %lld", (long long)g->k[0], (long long)g->k[2], (long long)g->k[1],
                (long long)g->p[0], (long long)g->p[2], (long long)g->p[1]);
    return -1;
  }
  int64_t C = x->sizes[x->ndim - 4];
  if (g->out[0] < 1 || g->out[1] < 1 || g->out[2] < 1) {
    THError_set(TH_ERR_RUNTIME, "Given input size: (%lldx%lldx%lldx%lld). Calculated output size: (%lldx%lldx%lldx%lld). "
                "Output size is too small", (long long)C, (long long)g->in[0], (long long)g->in[1], (long long)g->in[2],
                (long long)C, (long long)g->out[0], (long long)g->out[1], (long long)g->out[2]);
    return -1;
  }
  g->P = C * (x->ndim == 5 ? x->sizes[0] : 1);
  return 0;
}

static void pool3d_out_sizes(const THTensor *x, const Pool3Geom *g, int64_t *sz) {
  memcpy(sz, x->sizes, x->ndim * sizeof(int64_t));
  for (int i = 0; i < 3; i++) sz[x->ndim - 3 + i] = g->out[i];
}


int at_max_pool3d(THTensor **outs, const THTensor *input, const ATIntList *k, const ATIntList *s, const ATIntList *p,
                  const ATIntList *d, bool ceil_mode) {
  Pool3Geom g;
  if (pool3d_geom(input, k, s, p, d, ceil_mode, false, &g) < 0) return -1;
  if (input->dtype == TH_Bool) {
    THError_set(TH_ERR_NOTIMPL, "\"max_pool3d\" not implemented for 'Bool'");
    return -1;
  }
  if (THTensor_device(input) >= 0) {
    THError_set(TH_ERR_NOTIMPL, "max_pool3d on CUDA is not implemented in cthtorch");
    return -1;
  }
  THDtype ct = input->dtype == TH_Double ? TH_Double : THDtype_isFloating(input->dtype) ? TH_Float : TH_Int64;
  int64_t sz[5];
  pool3d_out_sizes(input, &g, sz);
  THTensor *x = at_contiguous_as(input, ct);
  THTensor *y = x ? THTensor_new(ct, input->ndim, sz) : NULL, *idx = y ? THTensor_new(TH_Int64, input->ndim, sz) : NULL;
  if (!idx) { THTensor_free(x); THTensor_free(y); return -1; }
  int64_t HW = g.in[0] * g.in[1] * g.in[2], L = g.out[0] * g.out[1] * g.out[2];
  int64_t *id = (int64_t *)THTensor_data(idx);
  const char *xd = THTensor_data(x);
  char *yd = THTensor_data(y);
  size_t es = THDtype_size(ct);
#pragma omp parallel for if (g.P * L > 16384)
  for (int64_t pl = 0; pl < g.P; pl++) {
    const void *xp = xd + pl * HW * es;
    void *yp = yd + pl * L * es;
    if (ct == TH_Double) maxpool_plane_double(xp, yp, id + pl * L, &g);
    else if (ct == TH_Float) maxpool_plane_float(xp, yp, id + pl * L, &g);
    else maxpool_plane_int64_t(xp, yp, id + pl * L, &g);
  }
  THTensor_free(x);
  outs[0] = ct == input->dtype ? THTensor_retain(y) : at_to_dtype(y, input->dtype, false);
  THTensor_free(y);
  outs[1] = idx;
  if (!outs[0]) { THTensor_free(idx); outs[1] = NULL; return -1; }
  return 0;
}

THTensor *at_max_pool3d_backward(const THTensor *grad, const THTensor *input, const THTensor *indices) {
  return plane_scatter(grad, input, indices, 3, "max_pool3d_with_indices_backward");
}

/* average pooling's divisor, as torch's: the override, or the window's count
 * within input + padding (count_include_pad), or within the input. Without
 * the override it is a product over the dims: fac[i][o] is dim i's factor
 * for output index o. */
static void avg_factors(const Pool3Geom *g, bool cip, int64_t *const fac[3]) {
  for (int i = 0; i < 3; i++)
    for (int64_t o = 0; o < g->out[i]; o++) {
      int64_t a = o * g->s[i] - g->p[i], e = a + g->k[i];
      int64_t pe = e < g->in[i] + g->p[i] ? e : g->in[i] + g->p[i];
      int64_t ca = a > 0 ? a : 0, ce = e < g->in[i] ? e : g->in[i];
      fac[i][o] = cip ? pe - a : ce - ca;
    }
}

/* One plane of average pooling over D x H x W (avg_pool2d is the D = 1 case),
 * tap by tap over the whole output plane as MAXPOOL_PLANE, so the inner loop
 * runs along an output row and vectorizes; each output still sums its window
 * in torch's order (kt, kh, kw) in the compute type, then divides. bwd: the
 * adjoint (src the output's grad, dst the input's, zeroed first; v scratch of
 * an output plane). */
#define AVGPOOL_PLANE(T)                                                                               \
  /* each output (or its grad) over its divisor; a zero divisor gives 0 */                            \
  static void avg_divide_##T(T *acc, const Pool3Geom *g, int64_t *const fac[3], ATOptInt dv) {         \
    for (int64_t od = 0, o = 0; od < g->out[0]; od++)                                                  \
      for (int64_t oh = 0; oh < g->out[1]; oh++)                                                       \
        for (int64_t ow = 0; ow < g->out[2]; ow++, o++) {                                              \
          int64_t div = dv.has ? dv.v : fac[0][od] * fac[1][oh] * fac[2][ow];                          \
          acc[o] = div ? acc[o] / (T)div : 0;                                                          \
        }                                                                                              \
  }                                                                                                    \
  static void avgpool_plane_##T(const T *src, T *dst, const Pool3Geom *g, int64_t *const fac[3], ATOptInt dv, \
                                bool bwd, T *v) {                                                      \
    const int64_t H = g->in[1], W = g->in[2], OD = g->out[0], OH = g->out[1], OW = g->out[2];          \
    const int64_t L = OD * OH * OW;                                                                    \
    T *acc = bwd ? v : dst;                                                                            \
    if (bwd) {                                                                                         \
      memset(dst, 0, g->in[0] * H * W * sizeof(T));                                                    \
      memcpy(v, src, L * sizeof(T));                                                                   \
    } else                                                                                             \
      memset(dst, 0, L * sizeof(T));                                                                   \
    if (bwd) avg_divide_##T(acc, g, fac, dv); /* the output's grad over its divisor */                \
    for (int64_t kt = 0; kt < g->k[0]; kt++)                                                           \
      for (int64_t kh = 0; kh < g->k[1]; kh++)                                                         \
        for (int64_t kw = 0; kw < g->k[2]; kw++) {                                                     \
          int64_t iw0 = kw - g->p[2], lo, hi, sw = g->s[2];                                            \
          at_window_cols(iw0, W, sw, OW, &lo, &hi);                                                    \
          for (int64_t od = 0; od < OD; od++) {                                                        \
            int64_t it = od * g->s[0] - g->p[0] + kt;                                                  \
            if (it < 0 || it >= g->in[0]) continue;                                                    \
            for (int64_t oh = 0; oh < OH; oh++) {                                                      \
              int64_t ih = oh * g->s[1] - g->p[1] + kh;                                                \
              if (ih < 0 || ih >= H) continue;                                                         \
              T *ab = acc + (od * OH + oh) * OW;                                                       \
              if (!bwd) {                                                                              \
                const T *row = src + (it * H + ih) * W + iw0;                                          \
                for (int64_t ow = lo; ow < hi; ow++) ab[ow] += row[ow * sw];                           \
              } else {                                                                                 \
                T *row = dst + (it * H + ih) * W + iw0;                                                \
                for (int64_t ow = lo; ow < hi; ow++) row[ow * sw] += ab[ow];                           \
              }                                                                                        \
            }                                                                                          \
          }                                                                                            \
        }                                                                                              \
    if (!bwd) avg_divide_##T(dst, g, fac, dv);                                                        \
  }
AVGPOOL_PLANE(float)
AVGPOOL_PLANE(double)

static THTensor *avg_pool_run(const THTensor *src, const THTensor *input, const Pool3Geom *g, int nsp, bool cip,
                              ATOptInt divisor, bool bwd) {
  if (THTensor_device(input) >= 0) {
    THError_set(TH_ERR_NOTIMPL, "avg_pool3d on CUDA is not implemented in cthtorch");
    return NULL;
  }
  /* int64 sums in double, then truncates as torch's integer division does */
  THDtype ct = input->dtype == TH_Float ? TH_Float : TH_Double;
  int64_t sz[5];
  memcpy(sz, input->sizes, input->ndim * sizeof(int64_t));
  for (int i = 0; i < nsp; i++) sz[input->ndim - nsp + i] = g->out[3 - nsp + i];
  THTensor *x = at_contiguous_as(src, ct);
  THTensor *y = x ? THTensor_new(ct, input->ndim, bwd ? input->sizes : sz) : NULL, *r = NULL;
  int64_t nfac = g->out[0] + g->out[1] + g->out[2];
  int64_t *facbuf = y ? malloc(nfac * sizeof(int64_t)) : NULL;
  if (y && !facbuf) THError_set(TH_ERR_MEMORY, "avg_pool: out of memory");
  if (facbuf) {
    int64_t *const fac[3] = { facbuf, facbuf + g->out[0], facbuf + g->out[0] + g->out[1] };
    avg_factors(g, cip, fac);
    int64_t HW = g->in[0] * g->in[1] * g->in[2], L = g->out[0] * g->out[1] * g->out[2];
    int64_t sin = bwd ? L : HW, sout = bwd ? HW : L;
    size_t es = THDtype_size(ct);
    const char *xd = THTensor_data(x);
    char *yd = THTensor_data(y);
    int failed = 0;
#pragma omp parallel if (g->P > 1 && g->P * (L + HW) > 16384)
    {
      void *v = bwd ? malloc(L * es + 1) : NULL;   /* a backward's scratch output plane */
      if (bwd && !v) {
#pragma omp atomic write
        failed = 1;
      }
#pragma omp for
      for (int64_t pl = 0; pl < g->P; pl++) {
        if (bwd && !v) continue;
        if (ct == TH_Double)
          avgpool_plane_double((const double *)(xd + pl * sin * es), (double *)(yd + pl * sout * es), g, fac, divisor,
                               bwd, v);
        else
          avgpool_plane_float((const float *)(xd + pl * sin * es), (float *)(yd + pl * sout * es), g, fac, divisor, bwd,
                              v);
      }
      free(v);
    }
    free(facbuf);
    if (failed) THError_set(TH_ERR_MEMORY, "avg_pool: out of memory");
    else r = ct == input->dtype ? THTensor_retain(y) : at_to_dtype(y, input->dtype, false);
  }
  THTensor_free(x); THTensor_free(y);
  return r;
}

/* torch's CPU avg_pool3d takes float32, float64 and int64 */
static int avg_pool3d_dtype(const THTensor *t) {
  if (t->dtype == TH_Float || t->dtype == TH_Double || t->dtype == TH_Int64) return 0;
  THError_set(TH_ERR_NOTIMPL, "\"avg_pool3d_out_frame\" not implemented for '%s'", THDtype_info[t->dtype].legacy);
  return -1;
}

THTensor *at_avg_pool3d(const THTensor *input, const ATIntList *k, const ATIntList *s, const ATIntList *p,
                        bool ceil_mode, bool cip, ATOptInt divisor) {
  /* torch's order: the rank (pool3d_geom's first check), the divisor, the geometry */
  if ((input->ndim == 4 || input->ndim == 5) && divisor.has && divisor.v == 0) { THError_set(TH_ERR_RUNTIME, "divisor must be not zero"); return NULL; }
  Pool3Geom g;
  if (pool3d_geom(input, k, s, p, NULL, ceil_mode, true, &g) < 0 || avg_pool3d_dtype(input) < 0) return NULL;
  return avg_pool_run(input, input, &g, 3, cip, divisor, false);
}

THTensor *at_avg_pool3d_backward(const THTensor *grad, const THTensor *input, const ATIntList *k, const ATIntList *s,
                                 const ATIntList *p, bool ceil_mode, bool cip, ATOptInt divisor) {
  if (divisor.has && divisor.v == 0) { THError_set(TH_ERR_RUNTIME, "divisor must be not zero"); return NULL; }
  Pool3Geom g;
  if (pool3d_geom(input, k, s, p, NULL, ceil_mode, true, &g) < 0) return NULL;
  int64_t osz[5];
  pool3d_out_sizes(input, &g, osz);
  if (at_check_shape(grad, input->ndim, osz, "avg_pool3d_backward", "grad_output") < 0) return NULL;
  if (!THDtype_isFloating(grad->dtype)) {
    THError_set(TH_ERR_NOTIMPL, "\"avg_pool3d_backward_out_frame\" not implemented for '%s'", THDtype_info[grad->dtype].legacy);
    return NULL;
  }
  return avg_pool_run(grad, input, &g, 3, cip, divisor, true);
}
