/* roi_align / roi_pool and their backward (torchvision.ops), after
 * torchvision's CPU kernels: the same sample positions, clamping and
 * bilinear weights, so results agree to rounding.
 *
 * The boxes and the input are made contiguous in the compute type (float,
 * or double for double); forward runs the boxes in parallel, backward the
 * channels (each channel's gradient plane is written by one thread, so the
 * sums are in one fixed order). The kernels are written once over a type T:
 * this file includes itself with RA_T float, then double. */
#ifndef RA_T
#include "ATRoi.h"
#include "ATArgChecks.h"
#include "ATConv.h"   /* at_contiguous_as */

#include <float.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>

/* C input channels, Co output channels: C for roi_align/roi_pool; C / (PH * PW) for the position-sensitive
 * ps_ variants (ps), whose output channel c reads bin (ph, pw) from input channel (c * PH + ph) * PW + pw */
typedef struct {
  int64_t N, C, Co, H, W, K, PH, PW, ratio;
  double scale;
  bool aligned, ps;
  bool clip_last;   /* ps_roi_pool's bins end before the last row and column (torchvision's CPU forward) */
} RoiGeom;

static inline int64_t roi_in_channel(const RoiGeom *g, int64_t c, int64_t ph, int64_t pw) {
  return g->ps ? (c * g->PH + ph) * g->PW + pw : c;
}

/* box coordinates as integers: NaN reads as 0 and the magnitude is capped (a cast of NaN, inf or a huge value
 * is undefined, and no map is 2^40 pixels wide), so bad boxes give zeros instead of undefined behaviour */
static int64_t roi_to_i64(double v) {
  if (!(v == v)) return 0;
  const double cap = (double)((int64_t)1 << 40);
  return (int64_t)(v < -cap ? -cap : v > cap ? cap : v);
}

/* roi_align's samples per bin side: sampling_ratio, or ceil(bin size) when it is <= 0; 0 for NaN, capped so
 * that an absurd box or ratio cannot run for ever (nor overflow the per-bin sample count) */
static int64_t roi_grid(double v) {
  if (!(v > 0)) return 0;
  return v > 4096.0 ? 4096 : (int64_t)v;
}

/* bilinear corners and weights of (y, x), torchvision's bilinear_interpolate:
 * a point more than one pixel outside reads nothing, one on the border clamps */
typedef struct {
  int64_t o[4];
  double w[4];
} RoiSample;

static bool roi_sample(int64_t H, int64_t W, double y, double x, RoiSample *s) {
  if (H <= 0 || W <= 0) return false;   /* an empty plane has no border pixel to clamp to */
  /* written as a test that NaN fails too */
  if (!(y >= -1.0 && y <= (double)H && x >= -1.0 && x <= (double)W)) return false;
  if (y <= 0) y = 0;
  if (x <= 0) x = 0;
  int64_t yl = (int64_t)y, xl = (int64_t)x, yh, xh;
  if (yl >= H - 1) { yh = yl = H - 1; y = (double)yl; } else yh = yl + 1;
  if (xl >= W - 1) { xh = xl = W - 1; x = (double)xl; } else xh = xl + 1;
  double ly = y - (double)yl, lx = x - (double)xl, hy = 1. - ly, hx = 1. - lx;
  s->o[0] = yl * W + xl; s->o[1] = yl * W + xh; s->o[2] = yh * W + xl; s->o[3] = yh * W + xh;
  s->w[0] = hy * hx; s->w[1] = hy * lx; s->w[2] = ly * hx; s->w[3] = ly * lx;
  return true;
}

#define RA_T float
#define RA_(name) name##_float
#include "ATRoi.c"
#undef RA_T
#undef RA_
#define RA_T double
#define RA_(name) name##_double
#include "ATRoi.c"
#undef RA_T
#undef RA_

/* the checks torchvision's kernels make (TORCH_CHECK texts), plus the batch
 * index range that they leave unchecked (an out-of-range one would read past the input) */
static int roi_check(const THTensor *input, const THTensor *rois, const char *op, RoiGeom *g) {
  int dev;
  if (at_common_device(2, (const THTensor *[]){ input, rois }, op, &dev) < 0) return -1;
  if (!THDtype_isFloating(input->dtype)) {
    THError_set(TH_ERR_RUNTIME, "\"%s_forward_kernel\" not implemented for '%s'", op, THDtype_info[input->dtype].legacy);
    return -1;
  }
  if (rois->dtype != input->dtype) {
    THError_set(TH_ERR_RUNTIME, "Expected tensor for argument #1 'input' to have the same type as tensor for "
                "argument #2 'rois'; but type %s does not equal %s (while checking arguments for %s_forward_kernel)",
                THDtype_info[input->dtype].legacy, THDtype_info[rois->dtype].legacy, op);
    return -1;
  }
  if (rois->ndim != 2 || rois->sizes[1] != 5) {
    THError_set(TH_ERR_RUNTIME, "rois must have shape as Tensor[K, 5]");
    return -1;
  }
  if (input->ndim != 4) {
    THError_set(TH_ERR_RUNTIME, "Expected input to be a 4-d (N, C, H, W) tensor, got %d dims", input->ndim);
    return -1;
  }
  g->N = input->sizes[0]; g->C = input->sizes[1]; g->H = input->sizes[2]; g->W = input->sizes[3];
  g->K = rois->sizes[0];
  g->Co = g->C;
  g->ps = false;
  g->clip_last = false;
  return 0;
}

static int roi_pooled(int64_t ph, int64_t pw, bool ps, RoiGeom *g) {
  if (ph <= 0 || pw <= 0) {
    THError_set(TH_ERR_RUNTIME, "output_size must be positive, got (%lld, %lld)", (long long)ph, (long long)pw);
    return -1;
  }
  g->PH = ph; g->PW = pw;
  g->ps = ps;
  if (ps) {
    int64_t bins;   /* a product past int64 (an absurd output_size) would be undefined, or 0 and a division by 0 */
    if (th_mul_overflow(ph, pw, &bins) || g->C % bins != 0) {
      THError_set(TH_ERR_RUNTIME, "input channels must be a multiple of pooling height * pooling width");
      return -1;
    }
    g->Co = g->C / bins;
  }
  return 0;
}

/* rois as contiguous double, each batch index checked against N */
static double *roi_boxes(const THTensor *rois, int64_t N) {
  THTensor *r = at_contiguous_as(rois, TH_Double);
  if (!r) return NULL;
  int64_t K = rois->sizes[0];
  double *b = malloc(sizeof(double) * (size_t)(K ? K * 5 : 1));
  if (b) {
    const double *src = (void *)THTensor_data(r);
    for (int64_t i = 0; i < K * 5; i++) b[i] = src[i];
  } else {
    THError_set(TH_ERR_MEMORY, "out of memory");
  }
  THTensor_free(r);
  for (int64_t k = 0; b && k < K; k++) {
    double bi = b[k * 5];
    if (!(bi >= 0 && bi < (double)N)) {
      THError_set(TH_ERR_INDEX, "rois[%lld, 0] = %g is not a batch index of an input with %lld items",
                  (long long)k, bi, (long long)N);
      free(b);
      return NULL;
    }
  }
  return b;
}

static int roi_grad_geom(const THTensor *grad_output, const THTensor *rois, const ATIntList *input_sizes,
                         const char *op, bool ps, RoiGeom *g) {
  if (!input_sizes || input_sizes->n != 4) {
    THError_set(TH_ERR_RUNTIME, "%s: input size must have 4 entries (N, C, H, W)", op);
    return -1;
  }
  for (int i = 0; i < 4; i++)
    if (input_sizes->v[i] < 0) {
      THError_set(TH_ERR_RUNTIME, "%s: negative input size", op);
      return -1;
    }
  if (rois->ndim != 2 || rois->sizes[1] != 5) {
    THError_set(TH_ERR_RUNTIME, "rois must have shape as Tensor[K, 5]");
    return -1;
  }
  int64_t bins = grad_output->ndim == 4 ? grad_output->sizes[2] * grad_output->sizes[3] : 0;
  if (grad_output->ndim != 4 || grad_output->sizes[0] != rois->sizes[0] || bins == 0 ||
      grad_output->sizes[1] * (ps ? bins : 1) != input_sizes->v[1]) {
    THError_set(TH_ERR_RUNTIME, "%s: grad_output must be [K, C, pooled_height, pooled_width]", op);
    return -1;
  }
  if (!THDtype_isFloating(grad_output->dtype)) {
    THError_set(TH_ERR_RUNTIME, "\"%s\" not implemented for '%s'", op, THDtype_info[grad_output->dtype].legacy);
    return -1;
  }
  g->N = input_sizes->v[0]; g->C = input_sizes->v[1]; g->H = input_sizes->v[2]; g->W = input_sizes->v[3];
  g->K = rois->sizes[0]; g->PH = grad_output->sizes[2]; g->PW = grad_output->sizes[3];
  g->Co = grad_output->sizes[1];
  g->ps = ps;
  g->clip_last = false;
  return 0;
}

/* the result in the input's dtype: ct's tensor y converted (or retained) */
static THTensor *roi_result(THTensor *y, THDtype dt) {
  return y->dtype == dt ? THTensor_retain(y) : at_to_dtype(y, dt, false);
}

/* the bilinear-mean kernels (roi_align, ps_roi_align) and the bin-mean one (ps_roi_pool) */
enum { RK_ALIGN, RK_PS_POOL };

static void roi_run_fwd(int kind, const RoiGeom *g, bool dbl, const void *x, const double *b, void *y) {
  if (kind == RK_ALIGN) {
    if (dbl) roi_align_fwd_double(g, x, b, y);
    else roi_align_fwd_float(g, x, b, y);
  } else {
    if (dbl) ps_roi_pool_fwd_double(g, x, b, y);
    else ps_roi_pool_fwd_float(g, x, b, y);
  }
}

static void roi_run_bwd(int kind, const RoiGeom *g, bool dbl, const void *go, const double *b, void *gi) {
  if (kind == RK_ALIGN) {
    if (dbl) roi_align_bwd_double(g, go, b, gi);
    else roi_align_bwd_float(g, go, b, gi);
  } else {
    if (dbl) ps_roi_pool_bwd_double(g, go, b, gi);
    else ps_roi_pool_bwd_float(g, go, b, gi);
  }
}

static THTensor *roi_forward(int kind, const char *name, const THTensor *input, const THTensor *rois,
                             double spatial_scale, int64_t pooled_height, int64_t pooled_width,
                             int64_t sampling_ratio, bool aligned, bool ps, bool clip_last) {
  RoiGeom g;
  if (roi_check(input, rois, name, &g) < 0 || roi_pooled(pooled_height, pooled_width, ps, &g) < 0) return NULL;
  g.ratio = sampling_ratio; g.scale = spatial_scale; g.aligned = aligned; g.clip_last = clip_last;
  THDtype ct = input->dtype == TH_Double ? TH_Double : TH_Float;
  int64_t sz[4] = { g.K, g.Co, g.PH, g.PW };
  THTensor *y = THTensor_new(ct, 4, sz), *x = NULL, *r = NULL;
  double *b = NULL;
  if (y && (x = at_contiguous_as(input, ct)) && (b = roi_boxes(rois, g.N))) {
    roi_run_fwd(kind, &g, ct == TH_Double, THTensor_data(x), b, THTensor_data(y));
    r = roi_result(y, input->dtype);
  }
  free(b); THTensor_free(x); THTensor_free(y);
  return r;
}

static THTensor *roi_backward(int kind, const char *name, const THTensor *grad_output, const THTensor *rois,
                              double spatial_scale, int64_t pooled_height, int64_t pooled_width,
                              const ATIntList *input_sizes, int64_t sampling_ratio, bool aligned, bool ps) {
  RoiGeom g;
  if (roi_grad_geom(grad_output, rois, input_sizes, name, ps, &g) < 0) return NULL;
  if (g.PH != pooled_height || g.PW != pooled_width) {
    THError_set(TH_ERR_RUNTIME, "%s: grad_output must be [K, C, pooled_height, pooled_width]", name);
    return NULL;
  }
  g.ratio = sampling_ratio; g.scale = spatial_scale; g.aligned = aligned;
  THDtype ct = grad_output->dtype == TH_Double ? TH_Double : TH_Float;
  THTensor *gi = THTensor_new(ct, 4, input_sizes->v), *go = NULL, *r = NULL;
  double *b = NULL;
  /* the kernel adds into gi; at_fill_ also spares an empty result's NULL data from memset */
  if (gi && at_fill_(gi, at_scalar_int(0)) == 0 && (go = at_contiguous_as(grad_output, ct)) &&
      (b = roi_boxes(rois, g.N))) {
    roi_run_bwd(kind, &g, ct == TH_Double, THTensor_data(go), b, THTensor_data(gi));
    r = roi_result(gi, grad_output->dtype);
  }
  free(b); THTensor_free(go); THTensor_free(gi);
  return r;
}

THTensor *at_roi_align(const THTensor *input, const THTensor *rois, double spatial_scale, int64_t pooled_height,
                       int64_t pooled_width, int64_t sampling_ratio, bool aligned) {
  return roi_forward(RK_ALIGN, "roi_align", input, rois, spatial_scale, pooled_height, pooled_width,
                     sampling_ratio, aligned, false, false);
}

THTensor *at_roi_align_backward(const THTensor *grad_output, const THTensor *rois, double spatial_scale,
                                int64_t pooled_height, int64_t pooled_width, const ATIntList *input_sizes,
                                int64_t sampling_ratio, bool aligned) {
  return roi_backward(RK_ALIGN, "roi_align_backward", grad_output, rois, spatial_scale, pooled_height,
                      pooled_width, input_sizes, sampling_ratio, aligned, false);
}

/* ps_roi_align always uses the half-pixel offset (aligned) */
THTensor *at_ps_roi_align(const THTensor *input, const THTensor *rois, double spatial_scale, int64_t pooled_height,
                          int64_t pooled_width, int64_t sampling_ratio) {
  return roi_forward(RK_ALIGN, "ps_roi_align", input, rois, spatial_scale, pooled_height, pooled_width,
                     sampling_ratio, true, true, false);
}

THTensor *at_ps_roi_align_backward(const THTensor *grad_output, const THTensor *rois, double spatial_scale,
                                   int64_t pooled_height, int64_t pooled_width, const ATIntList *input_sizes,
                                   int64_t sampling_ratio) {
  return roi_backward(RK_ALIGN, "ps_roi_align_backward", grad_output, rois, spatial_scale, pooled_height,
                      pooled_width, input_sizes, sampling_ratio, true, true);
}

THTensor *at_ps_roi_pool(const THTensor *input, const THTensor *rois, double spatial_scale, int64_t pooled_height,
                         int64_t pooled_width, bool clip_last) {
  return roi_forward(RK_PS_POOL, "ps_roi_pool", input, rois, spatial_scale, pooled_height, pooled_width, 0, false,
                     true, clip_last);
}

THTensor *at_ps_roi_pool_backward(const THTensor *grad_output, const THTensor *rois, double spatial_scale,
                                  int64_t pooled_height, int64_t pooled_width, const ATIntList *input_sizes) {
  return roi_backward(RK_PS_POOL, "ps_roi_pool_backward", grad_output, rois, spatial_scale, pooled_height,
                      pooled_width, input_sizes, 0, false, true);
}

int at_roi_pool(THTensor **outs, const THTensor *input, const THTensor *rois, double spatial_scale,
                int64_t pooled_height, int64_t pooled_width) {
  outs[0] = outs[1] = NULL;
  RoiGeom g;
  if (roi_check(input, rois, "roi_pool", &g) < 0 || roi_pooled(pooled_height, pooled_width, false, &g) < 0) return -1;
  g.scale = spatial_scale;
  THDtype ct = input->dtype == TH_Double ? TH_Double : TH_Float;
  int64_t sz[4] = { g.K, g.C, g.PH, g.PW };
  THTensor *y = THTensor_new(ct, 4, sz), *am = y ? THTensor_new(TH_Int64, 4, sz) : NULL, *x = NULL;
  double *b = NULL;
  int rc = -1;
  if (am && (x = at_contiguous_as(input, ct)) && (b = roi_boxes(rois, g.N))) {
    if (ct == TH_Double) roi_pool_fwd_double(&g, (void *)THTensor_data(x), b, (void *)THTensor_data(y), (void *)THTensor_data(am));
    else roi_pool_fwd_float(&g, (void *)THTensor_data(x), b, (void *)THTensor_data(y), (void *)THTensor_data(am));
    if ((outs[0] = roi_result(y, input->dtype))) {
      outs[1] = THTensor_retain(am);
      rc = 0;
    }
  }
  free(b); THTensor_free(x); THTensor_free(am); THTensor_free(y);
  return rc;
}

THTensor *at_roi_pool_backward(const THTensor *grad_output, const THTensor *rois, const THTensor *argmax,
                               const ATIntList *input_sizes) {
  RoiGeom g;
  if (roi_grad_geom(grad_output, rois, input_sizes, "roi_pool_backward", false, &g) < 0) return NULL;
  if (argmax->dtype != TH_Int64 || at_check_shape(argmax, 4, grad_output->sizes, "roi_pool_backward", "argmax") < 0) {
    if (THError_kind() == TH_ERR_NONE) THError_set(TH_ERR_RUNTIME, "roi_pool_backward: argmax must be int64");
    return NULL;
  }
  THDtype ct = grad_output->dtype == TH_Double ? TH_Double : TH_Float;
  THTensor *gi = THTensor_new(ct, 4, input_sizes->v), *go = NULL, *am = NULL, *r = NULL;
  double *b = NULL;
  if (gi && at_fill_(gi, at_scalar_int(0)) == 0 && (go = at_contiguous_as(grad_output, ct)) &&
      (am = at_contiguous_as(argmax, TH_Int64)) && (b = roi_boxes(rois, g.N))) {
    const int64_t *a = (void *)THTensor_data(am);
    int64_t n = g.K * g.C * g.PH * g.PW;
    bool ok = true;
    for (int64_t i = 0; i < n; i++)
      if (a[i] < -1 || a[i] >= g.H * g.W) ok = false;
    if (!ok) {
      THError_set(TH_ERR_INDEX, "roi_pool_backward: argmax index out of range of the input plane");
    } else {
      if (ct == TH_Double) roi_pool_bwd_double(&g, (void *)THTensor_data(go), b, a, (void *)THTensor_data(gi));
      else roi_pool_bwd_float(&g, (void *)THTensor_data(go), b, a, (void *)THTensor_data(gi));
      r = roi_result(gi, grad_output->dtype);
    }
  }
  free(b); THTensor_free(am); THTensor_free(go); THTensor_free(gi);
  return r;
}

#else /* the kernels over RA_T */

/* a box's start corner, bin sizes and sampling grid, torchvision's roi_align geometry */
typedef struct {
  double y0, x0, bh, bw;
  int64_t gh, gw;
  double count;
} RA_(RoiBox);

static void RA_(roi_box)(const RoiGeom *g, const double *r, RA_(RoiBox) *bx) {
  double off = g->aligned ? 0.5 : 0.0;
  /* torchvision computes these in the input's type */
  RA_T sw = (RA_T)((RA_T)r[1] * (RA_T)g->scale - (RA_T)off), sh = (RA_T)((RA_T)r[2] * (RA_T)g->scale - (RA_T)off);
  RA_T ew = (RA_T)((RA_T)r[3] * (RA_T)g->scale - (RA_T)off), eh = (RA_T)((RA_T)r[4] * (RA_T)g->scale - (RA_T)off);
  RA_T rw = ew - sw, rh = eh - sh;
  if (!g->aligned) {
    if (rw < 1) rw = 1;
    if (rh < 1) rh = 1;
  }
  bx->y0 = sh; bx->x0 = sw;
  bx->bh = (RA_T)(rh / (RA_T)g->PH); bx->bw = (RA_T)(rw / (RA_T)g->PW);
  bx->gh = roi_grid(g->ratio > 0 ? (double)g->ratio : ceil((double)(RA_T)(rh / (RA_T)g->PH)));
  bx->gw = roi_grid(g->ratio > 0 ? (double)g->ratio : ceil((double)(RA_T)(rw / (RA_T)g->PW)));
  int64_t c = bx->gh * bx->gw;
  bx->count = (double)(c > 1 ? c : 1);
}

static inline double RA_(sample_y)(const RA_(RoiBox) *bx, int64_t ph, int64_t iy) {
  return (RA_T)((RA_T)bx->y0 + (RA_T)ph * (RA_T)bx->bh + ((RA_T)iy + (RA_T)0.5) * (RA_T)bx->bh / (RA_T)bx->gh);
}
static inline double RA_(sample_x)(const RA_(RoiBox) *bx, int64_t pw, int64_t ix) {
  return (RA_T)((RA_T)bx->x0 + (RA_T)pw * (RA_T)bx->bw + ((RA_T)ix + (RA_T)0.5) * (RA_T)bx->bw / (RA_T)bx->gw);
}

static void RA_(roi_align_fwd)(const RoiGeom *g, const RA_T *x, const double *boxes, RA_T *y) {
  int64_t plane = g->H * g->W;
#pragma omp parallel for if (g->K * g->Co * g->PH * g->PW > 4096)
  for (int64_t k = 0; k < g->K; k++) {
    RA_(RoiBox) bx;
    RA_(roi_box)(g, boxes + k * 5, &bx);
    const RA_T *xb = x + (int64_t)boxes[k * 5] * g->C * plane;
    for (int64_t c = 0; c < g->Co; c++) {
      RA_T *yp = y + (k * g->Co + c) * g->PH * g->PW;
      for (int64_t ph = 0; ph < g->PH; ph++)
        for (int64_t pw = 0; pw < g->PW; pw++) {
          const RA_T *xp = xb + roi_in_channel(g, c, ph, pw) * plane;
          RA_T acc = 0;
          for (int64_t iy = 0; iy < bx.gh; iy++) {
            double sy = RA_(sample_y)(&bx, ph, iy);
            for (int64_t ix = 0; ix < bx.gw; ix++) {
              RoiSample s;
              if (!roi_sample(g->H, g->W, sy, RA_(sample_x)(&bx, pw, ix), &s)) continue;
              acc += (RA_T)s.w[0] * xp[s.o[0]] + (RA_T)s.w[1] * xp[s.o[1]] + (RA_T)s.w[2] * xp[s.o[2]] +
                     (RA_T)s.w[3] * xp[s.o[3]];
            }
          }
          yp[ph * g->PW + pw] = acc / (RA_T)bx.count;
        }
    }
  }
}

/* parallel over output channels: each writes its own input planes (one, or its PH * PW for ps) */
static void RA_(roi_align_bwd)(const RoiGeom *g, const RA_T *go, const double *boxes, RA_T *gi) {
  int64_t plane = g->H * g->W;
#pragma omp parallel for if (g->K * g->Co * g->PH * g->PW > 4096)
  for (int64_t c = 0; c < g->Co; c++)
    for (int64_t k = 0; k < g->K; k++) {
      RA_(RoiBox) bx;
      RA_(roi_box)(g, boxes + k * 5, &bx);
      RA_T *gb = gi + (int64_t)boxes[k * 5] * g->C * plane;
      const RA_T *op = go + (k * g->Co + c) * g->PH * g->PW;
      for (int64_t ph = 0; ph < g->PH; ph++)
        for (int64_t pw = 0; pw < g->PW; pw++) {
          RA_T *gp = gb + roi_in_channel(g, c, ph, pw) * plane;
          RA_T gv = op[ph * g->PW + pw] / (RA_T)bx.count;
          for (int64_t iy = 0; iy < bx.gh; iy++) {
            double sy = RA_(sample_y)(&bx, ph, iy);
            for (int64_t ix = 0; ix < bx.gw; ix++) {
              RoiSample s;
              if (!roi_sample(g->H, g->W, sy, RA_(sample_x)(&bx, pw, ix), &s)) continue;
              for (int j = 0; j < 4; j++) gp[s.o[j]] += gv * (RA_T)s.w[j];
            }
          }
        }
    }
}

static void RA_(roi_pool_fwd)(const RoiGeom *g, const RA_T *x, const double *boxes, RA_T *y, int64_t *am) {
  int64_t plane = g->H * g->W;
#pragma omp parallel for if (g->K * g->C * g->PH * g->PW > 4096)
  for (int64_t k = 0; k < g->K; k++) {
    const double *r = boxes + k * 5;
    /* torchvision rounds the scaled corners half away from zero, in the input's type */
    int64_t sw = roi_to_i64(round((RA_T)r[1] * (RA_T)g->scale)), sh = roi_to_i64(round((RA_T)r[2] * (RA_T)g->scale));
    int64_t ew = roi_to_i64(round((RA_T)r[3] * (RA_T)g->scale)), eh = roi_to_i64(round((RA_T)r[4] * (RA_T)g->scale));
    int64_t rw = ew - sw + 1 > 1 ? ew - sw + 1 : 1, rh = eh - sh + 1 > 1 ? eh - sh + 1 : 1;
    RA_T bh = (RA_T)rh / (RA_T)g->PH, bw = (RA_T)rw / (RA_T)g->PW;
    const RA_T *xb = x + (int64_t)r[0] * g->C * plane;
    for (int64_t ph = 0; ph < g->PH; ph++)
      for (int64_t pw = 0; pw < g->PW; pw++) {
        int64_t hs = roi_to_i64(floor((RA_T)ph * bh)) + sh, he = roi_to_i64(ceil((RA_T)(ph + 1) * bh)) + sh;
        int64_t ws = roi_to_i64(floor((RA_T)pw * bw)) + sw, we = roi_to_i64(ceil((RA_T)(pw + 1) * bw)) + sw;
        hs = hs < 0 ? 0 : hs > g->H ? g->H : hs; he = he < 0 ? 0 : he > g->H ? g->H : he;
        ws = ws < 0 ? 0 : ws > g->W ? g->W : ws; we = we < 0 ? 0 : we > g->W ? g->W : we;
        bool empty = he <= hs || we <= ws;
        for (int64_t c = 0; c < g->C; c++) {
          const RA_T *xp = xb + c * plane;
          RA_T m = empty ? 0 : -(RA_T)FLT_MAX;
          int64_t mi = -1;
          for (int64_t h = hs; h < he; h++)
            for (int64_t w = ws; w < we; w++)
              if (xp[h * g->W + w] > m) { m = xp[h * g->W + w]; mi = h * g->W + w; }
          int64_t o = ((k * g->C + c) * g->PH + ph) * g->PW + pw;
          y[o] = m;
          am[o] = mi;
        }
      }
  }
}

static void RA_(roi_pool_bwd)(const RoiGeom *g, const RA_T *go, const double *boxes, const int64_t *am, RA_T *gi) {
  int64_t plane = g->H * g->W, bins = g->PH * g->PW;
#pragma omp parallel for if (g->K * g->C * bins > 4096)
  for (int64_t c = 0; c < g->C; c++)
    for (int64_t k = 0; k < g->K; k++) {
      RA_T *gp = gi + ((int64_t)boxes[k * 5] * g->C + c) * plane;
      const RA_T *op = go + (k * g->C + c) * bins;
      const int64_t *ap = am + (k * g->C + c) * bins;
      for (int64_t i = 0; i < bins; i++)
        if (ap[i] >= 0) gp[ap[i]] += op[i];
    }
}
/* ps_roi_pool's bin [hs, he) x [ws, we) of box r, bin (ph, pw): torchvision rounds the scaled corners and,
 * unlike roi_pool, takes the box's size without the +1 */
static bool RA_(ps_bin)(const RoiGeom *g, const double *r, int64_t ph, int64_t pw, int64_t *hs, int64_t *he,
                        int64_t *ws, int64_t *we) {
  int64_t sw = roi_to_i64(round((RA_T)r[1] * (RA_T)g->scale)), sh = roi_to_i64(round((RA_T)r[2] * (RA_T)g->scale));
  int64_t ew = roi_to_i64(round((RA_T)r[3] * (RA_T)g->scale)), eh = roi_to_i64(round((RA_T)r[4] * (RA_T)g->scale));
  int64_t rw = ew - sw > 1 ? ew - sw : 1, rh = eh - sh > 1 ? eh - sh : 1;
  RA_T bh = (RA_T)rh / (RA_T)g->PH, bw = (RA_T)rw / (RA_T)g->PW;
  int64_t a = roi_to_i64(floor((RA_T)ph * bh)) + sh, b = roi_to_i64(ceil((RA_T)(ph + 1) * bh)) + sh;
  int64_t c = roi_to_i64(floor((RA_T)pw * bw)) + sw, d = roi_to_i64(ceil((RA_T)(pw + 1) * bw)) + sw;
  /* torchvision's CPU forward clips to the last row and column's index, so a bin never takes them; its
   * backward clips to the sizes */
  int64_t H = g->clip_last ? g->H - 1 : g->H, W = g->clip_last ? g->W - 1 : g->W;
  *hs = a < 0 ? 0 : a > H ? H : a; *he = b < 0 ? 0 : b > H ? H : b;
  *ws = c < 0 ? 0 : c > W ? W : c; *we = d < 0 ? 0 : d > W ? W : d;
  return *he > *hs && *we > *ws;
}

static void RA_(ps_roi_pool_fwd)(const RoiGeom *g, const RA_T *x, const double *boxes, RA_T *y) {
  int64_t plane = g->H * g->W;
#pragma omp parallel for if (g->K * g->Co * g->PH * g->PW > 4096)
  for (int64_t k = 0; k < g->K; k++) {
    const RA_T *xb = x + (int64_t)boxes[k * 5] * g->C * plane;
    for (int64_t ph = 0; ph < g->PH; ph++)
      for (int64_t pw = 0; pw < g->PW; pw++) {
        int64_t hs, he, ws, we;
        bool full = RA_(ps_bin)(g, boxes + k * 5, ph, pw, &hs, &he, &ws, &we);
        for (int64_t c = 0; c < g->Co; c++) {
          const RA_T *xp = xb + roi_in_channel(g, c, ph, pw) * plane;
          RA_T sum = 0;
          for (int64_t h = hs; h < he; h++)
            for (int64_t w = ws; w < we; w++) sum += xp[h * g->W + w];
          y[((k * g->Co + c) * g->PH + ph) * g->PW + pw] = full ? sum / (RA_T)((he - hs) * (we - ws)) : 0;
        }
      }
  }
}

static void RA_(ps_roi_pool_bwd)(const RoiGeom *g, const RA_T *go, const double *boxes, RA_T *gi) {
  int64_t plane = g->H * g->W;
#pragma omp parallel for if (g->K * g->Co * g->PH * g->PW > 4096)
  for (int64_t c = 0; c < g->Co; c++)
    for (int64_t k = 0; k < g->K; k++) {
      RA_T *gb = gi + (int64_t)boxes[k * 5] * g->C * plane;
      for (int64_t ph = 0; ph < g->PH; ph++)
        for (int64_t pw = 0; pw < g->PW; pw++) {
          int64_t hs, he, ws, we;
          if (!RA_(ps_bin)(g, boxes + k * 5, ph, pw, &hs, &he, &ws, &we)) continue;
          RA_T *gp = gb + roi_in_channel(g, c, ph, pw) * plane;
          RA_T gv = go[((k * g->Co + c) * g->PH + ph) * g->PW + pw] / (RA_T)((he - hs) * (we - ws));
          for (int64_t h = hs; h < he; h++)
            for (int64_t w = ws; w < we; w++) gp[h * g->W + w] += gv;
        }
    }
}
#endif
