/* conv2d as GEMM per image: out[n] (O x OH*OW) = W (O x C*kh*kw) @ col(x[n]),
 * with col built by im2col (skipped for 1x1/stride-1/no-padding convs).
 * Backward: grad_input via W^T @ grad then col2im; grad_weight accumulates
 * grad[n] @ col(x[n])^T over the batch. Float32 uses sgemm, float64 dgemm;
 * other dtypes compute in float32. Pooling loops run over planes in parallel. */
#include "ATConv.h"

#include <cblas.h>
#include <float.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  int64_t N, C, H, W, O, KH, KW, SH, SW, PH, PW, DH, DW, OH, OW, G;
} ConvGeom;

static int geom(const THTensor *x, const THTensor *w, const ATIntList *st, const ATIntList *pd, const ATIntList *dl,
                int64_t groups, ConvGeom *g) {
  char b1[256], b2[256];
  if (x->ndim != 4) {
    THError_set(TH_ERR_RUNTIME, "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: %s",
                THTensor_sizeStr(x->ndim, x->sizes, b1, 256));
    return -1;
  }
  if (w->ndim != 4) {
    THError_set(TH_ERR_RUNTIME, "weight should have at least three dimensions");
    return -1;
  }
  if (groups < 1) { THError_set(TH_ERR_RUNTIME, "non-positive groups is not supported"); return -1; }
  g->N = x->sizes[0]; g->C = x->sizes[1]; g->H = x->sizes[2]; g->W = x->sizes[3];
  g->O = w->sizes[0]; g->KH = w->sizes[2]; g->KW = w->sizes[3]; g->G = groups;
  g->SH = st->v[0]; g->SW = st->n > 1 ? st->v[1] : st->v[0];
  g->PH = pd->v[0]; g->PW = pd->n > 1 ? pd->v[1] : pd->v[0];
  g->DH = dl->v[0]; g->DW = dl->n > 1 ? dl->v[1] : dl->v[0];
  if (w->sizes[1] * groups != g->C) {
    THError_set(TH_ERR_RUNTIME, "Given groups=%lld, weight of size %s, expected input%s to have %lld channels, but "
                "got %lld channels instead", (long long)groups, THTensor_sizeStr(w->ndim, w->sizes, b1, 256),
                THTensor_sizeStr(x->ndim, x->sizes, b2, 256), (long long)(w->sizes[1] * groups), (long long)g->C);
    return -1;
  }
  if (g->O % groups) {
    THError_set(TH_ERR_RUNTIME, "Given groups=%lld, expected weight to be divisible by %lld at dimension 0, but got "
                "weight of size %s instead", (long long)groups, (long long)groups,
                THTensor_sizeStr(w->ndim, w->sizes, b1, 256));
    return -1;
  }
  if (g->SH <= 0 || g->SW <= 0) { THError_set(TH_ERR_RUNTIME, "non-positive stride is not supported"); return -1; }
  if (g->PH < 0 || g->PW < 0) { THError_set(TH_ERR_RUNTIME, "negative padding is not supported"); return -1; }
  if (g->DH <= 0 || g->DW <= 0) { THError_set(TH_ERR_RUNTIME, "dilation should be greater than zero"); return -1; }
  g->OH = (g->H + 2 * g->PH - g->DH * (g->KH - 1) - 1) / g->SH + 1;
  g->OW = (g->W + 2 * g->PW - g->DW * (g->KW - 1) - 1) / g->SW + 1;
  if (g->H + 2 * g->PH < g->DH * (g->KH - 1) + 1 || g->W + 2 * g->PW < g->DW * (g->KW - 1) + 1) {
    THError_set(TH_ERR_RUNTIME, "Calculated padded input size per channel: (%lld x %lld). Kernel size: (%lld x %lld). "
                "Kernel size can't be greater than actual input size", (long long)(g->H + 2 * g->PH),
                (long long)(g->W + 2 * g->PW), (long long)(g->DH * (g->KH - 1) + 1), (long long)(g->DW * (g->KW - 1) + 1));
    return -1;
  }
  return 0;
}

static bool is_pointwise(const ConvGeom *g) {
  return g->KH == 1 && g->KW == 1 && g->SH == 1 && g->SW == 1 && g->PH == 0 && g->PW == 0;
}

#define DEFINE_IM2COL(T)                                                                         \
  static void im2col_##T(const T *x, T *col, const ConvGeom *g, int64_t C) {                    \
    int64_t rows = C * g->KH * g->KW, L = g->OH * g->OW;                                         \
    _Pragma("omp parallel for if (rows * L > 65536)")                                            \
    for (int64_t r = 0; r < rows; r++) {                                                         \
      int64_t c = r / (g->KH * g->KW), kh = (r / g->KW) % g->KH, kw = r % g->KW;                 \
      T *dst = col + r * L;                                                                      \
      const T *src = x + c * g->H * g->W;                                                        \
      for (int64_t oh = 0; oh < g->OH; oh++) {                                                   \
        int64_t ih = oh * g->SH - g->PH + kh * g->DH;                                            \
        T *d = dst + oh * g->OW;                                                                 \
        if (ih < 0 || ih >= g->H) { memset(d, 0, g->OW * sizeof(T)); continue; }                \
        const T *s = src + ih * g->W;                                                            \
        int64_t iw0 = -g->PW + kw * g->DW;                                                       \
        if (g->SW == 1 && iw0 >= 0 && iw0 + g->OW <= g->W) { memcpy(d, s + iw0, g->OW * sizeof(T)); continue; } \
        for (int64_t ow = 0; ow < g->OW; ow++) {                                                 \
          int64_t iw = ow * g->SW + iw0;                                                         \
          d[ow] = (iw >= 0 && iw < g->W) ? s[iw] : (T)0;                                         \
        }                                                                                        \
      }                                                                                          \
    }                                                                                            \
  }                                                                                              \
  /* adds col back into the image (overlapping windows accumulate) */                           \
  static void col2im_##T(const T *col, T *x, const ConvGeom *g, int64_t C) {                    \
    int64_t L = g->OH * g->OW;                                                                   \
    _Pragma("omp parallel for if (C * g->H * g->W > 65536)")                                     \
    for (int64_t c = 0; c < C; c++) {                                                            \
      T *dst = x + c * g->H * g->W;                                                              \
      for (int64_t kh = 0; kh < g->KH; kh++)                                                     \
        for (int64_t kw = 0; kw < g->KW; kw++) {                                                 \
          const T *s = col + ((c * g->KH + kh) * g->KW + kw) * L;                                \
          for (int64_t oh = 0; oh < g->OH; oh++) {                                               \
            int64_t ih = oh * g->SH - g->PH + kh * g->DH;                                        \
            if (ih < 0 || ih >= g->H) continue;                                                  \
            for (int64_t ow = 0; ow < g->OW; ow++) {                                             \
              int64_t iw = ow * g->SW - g->PW + kw * g->DW;                                      \
              if (iw >= 0 && iw < g->W) dst[ih * g->W + iw] += s[oh * g->OW + ow];               \
            }                                                                                    \
          }                                                                                      \
        }                                                                                        \
    }                                                                                            \
  }
DEFINE_IM2COL(float)
DEFINE_IM2COL(double)

static void gemm(bool dbl, bool ta, bool tb, int64_t M, int64_t N, int64_t K, const void *A, int64_t lda,
                 const void *B, int64_t ldb, double beta, void *C, int64_t ldc) {
  if (dbl)
    scipy_cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)M, (int)N,
                      (int)K, 1.0, A, (int)lda, B, (int)ldb, beta, C, (int)ldc);
  else
    scipy_cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)M, (int)N,
                      (int)K, 1.0f, A, (int)lda, B, (int)ldb, (float)beta, C, (int)ldc);
}

static THTensor *compute_copy(const THTensor *t, THDtype ct) {
  THTensor *c = at_to_dtype(t, ct, false);
  if (!c) return NULL;
  THTensor *r = at_contiguous(c);
  THTensor_free(c);
  return r;
}

static THDtype compute_type(const THTensor *x, const THTensor *w) {
  return (x->dtype == TH_Double || w->dtype == TH_Double) ? TH_Double : TH_Float;
}

/* 3-d input: run as a batch of one */
static THTensor *batched(const THTensor *x) {
  if (x->ndim != 3) return THTensor_retain((THTensor *)x);
  return at_unsqueeze(x, 0);
}

THTensor *at_conv2d(const THTensor *input, const THTensor *weight, const THTensor *bias, const ATIntList *stride,
                    const ATIntList *padding, const ATIntList *dilation, int64_t groups) {
  if (input->dtype != weight->dtype) {
    THError_set(TH_ERR_RUNTIME, "Input type (%s) and weight type (%s) should be the same",
                THDtype_info[input->dtype].legacy, THDtype_info[weight->dtype].legacy);
    return NULL;
  }
  if (!THDtype_isFloating(input->dtype)) {
    THError_set(TH_ERR_NOTIMPL, "\"slow_conv2d_cpu\" not implemented for '%s'", THDtype_info[input->dtype].legacy);
    return NULL;
  }
  THTensor *xb = batched(input);
  if (!xb) return NULL;
  ConvGeom g;
  if (geom(xb, weight, stride, padding, dilation, groups, &g) < 0) { THTensor_free(xb); return NULL; }
  THDtype ct = compute_type(input, weight);
  bool dbl = ct == TH_Double;
  int es = THDtype_size(ct);
  THTensor *x = compute_copy(xb, ct), *w = x ? compute_copy(weight, ct) : NULL, *out = NULL, *b = NULL;
  THTensor_free(xb);
  int64_t Cg = g.C / g.G, Og = g.O / g.G, K = Cg * g.KH * g.KW, L = g.OH * g.OW;
  void *col = NULL;
  if (!w) goto done;
  out = THTensor_new(ct, 4, (int64_t[]){ g.N, g.O, g.OH, g.OW });
  if (!out) goto done;
  if (bias) {
    if (bias->ndim != 1 || bias->sizes[0] != g.O) {
      THError_set(TH_ERR_RUNTIME, "Given weight of size [%lld, ...], expected bias to be 1-dimensional with %lld "
                  "elements, but got bias of size [%lld] instead", (long long)g.O, (long long)g.O,
                  (long long)THTensor_numel(bias));
      THTensor_free(out); out = NULL;
      goto done;
    }
    if (!(b = compute_copy(bias, ct))) { THTensor_free(out); out = NULL; goto done; }
  }
  bool pw = is_pointwise(&g);
  if (!pw && !(col = malloc((size_t)K * L * es + 64))) { THError_set(TH_ERR_MEMORY, "out of memory"); THTensor_free(out); out = NULL; goto done; }
  const char *xd = THTensor_data(x), *wd = THTensor_data(w);
  char *od = THTensor_data(out);
  for (int64_t n = 0; n < g.N; n++)
    for (int64_t gr = 0; gr < g.G; gr++) {
      const char *xs = xd + ((n * g.C + gr * Cg) * g.H * g.W) * es;
      const void *src = xs;
      if (!pw) {
        if (dbl) im2col_double((const double *)xs, col, &g, Cg); else im2col_float((const float *)xs, col, &g, Cg);
        src = col;
      }
      gemm(dbl, false, false, Og, L, K, wd + gr * Og * K * es, K, src, L, 0.0, od + ((n * g.O + gr * Og) * L) * es, L);
    }
  if (b) {
    const char *bd = THTensor_data(b);
#pragma omp parallel for if (g.N * g.O * L > 65536)
    for (int64_t p = 0; p < g.N * g.O; p++) {
      int64_t o = p % g.O;
      if (dbl) { double *y = (double *)od + p * L, bv = ((const double *)bd)[o]; for (int64_t i = 0; i < L; i++) y[i] += bv; }
      else { float *y = (float *)od + p * L, bv = ((const float *)bd)[o]; for (int64_t i = 0; i < L; i++) y[i] += bv; }
    }
  }
  if (input->ndim == 3) {
    THTensor *sq = at_squeeze_dims(out, &(ATIntList){ 1, { 0 } });
    THTensor_free(out);
    out = sq;
  }
  if (out && ct != input->dtype) {
    THTensor *c = at_to_dtype(out, input->dtype, false);
    THTensor_free(out);
    out = c;
  }
done:
  free(col);
  THTensor_free(x); THTensor_free(w); THTensor_free(b);
  return out;
}

int at_conv2d_backward(THTensor **outs, const THTensor *grad, const THTensor *input, const THTensor *weight,
                       const ATIntList *stride, const ATIntList *padding, const ATIntList *dilation, int64_t groups) {
  THTensor *xb = batched(input), *gb = xb ? batched(grad) : NULL;
  if (!gb) { THTensor_free(xb); return -1; }
  ConvGeom g;
  int rc = -1;
  THTensor *x = NULL, *w = NULL, *gy = NULL, *gi = NULL, *gw = NULL, *gbias = NULL;
  void *col = NULL;
  if (geom(xb, weight, stride, padding, dilation, groups, &g) < 0) goto done;
  THDtype ct = compute_type(input, weight);
  bool dbl = ct == TH_Double;
  int es = THDtype_size(ct);
  int64_t Cg = g.C / g.G, Og = g.O / g.G, K = Cg * g.KH * g.KW, L = g.OH * g.OW;
  if (!(x = compute_copy(xb, ct)) || !(w = compute_copy(weight, ct)) || !(gy = compute_copy(gb, ct))) goto done;
  gi = THTensor_new(ct, 4, xb->sizes);
  gw = THTensor_new(ct, 4, weight->sizes);
  gbias = THTensor_new(ct, 1, &g.O);
  if (!gi || !gw || !gbias) goto done;
  memset(THTensor_data(gi), 0, THTensor_numel(gi) * es);
  memset(THTensor_data(gw), 0, THTensor_numel(gw) * es);
  bool pw = is_pointwise(&g);
  if (!(col = malloc((size_t)K * L * es + 64))) { THError_set(TH_ERR_MEMORY, "out of memory"); goto done; }
  const char *xd = THTensor_data(x), *wd = THTensor_data(w), *gd = THTensor_data(gy);
  char *gid = THTensor_data(gi), *gwd = THTensor_data(gw);
  for (int64_t n = 0; n < g.N; n++)
    for (int64_t gr = 0; gr < g.G; gr++) {
      const char *gs = gd + ((n * g.O + gr * Og) * L) * es;
      const char *xs = xd + ((n * g.C + gr * Cg) * g.H * g.W) * es;
      char *gis = gid + ((n * g.C + gr * Cg) * g.H * g.W) * es;
      const char *wg = wd + gr * Og * K * es;
      /* grad_weight += gy[n] (Og x L) @ col^T (L x K) */
      const void *cx = xs;
      if (!pw) {
        if (dbl) im2col_double((const double *)xs, col, &g, Cg); else im2col_float((const float *)xs, col, &g, Cg);
        cx = col;
      }
      gemm(dbl, false, true, Og, K, L, gs, L, cx, L, 1.0, gwd + gr * Og * K * es, K);
      /* grad_input: col = W^T (K x Og) @ gy[n] (Og x L), then col2im */
      if (pw) {
        gemm(dbl, true, false, K, L, Og, wg, K, gs, L, 1.0, gis, L);
      } else {
        gemm(dbl, true, false, K, L, Og, wg, K, gs, L, 0.0, col, L);
        if (dbl) col2im_double(col, (double *)gis, &g, Cg); else col2im_float(col, (float *)gis, &g, Cg);
      }
    }
  {
    char *bd = THTensor_data(gbias);
    for (int64_t o = 0; o < g.O; o++) {
      double s = 0;
      for (int64_t n = 0; n < g.N; n++) {
        const char *p = gd + ((n * g.O + o) * L) * es;
        if (dbl) for (int64_t i = 0; i < L; i++) s += ((const double *)p)[i];
        else for (int64_t i = 0; i < L; i++) s += ((const float *)p)[i];
      }
      if (dbl) ((double *)bd)[o] = s; else ((float *)bd)[o] = (float)s;
    }
  }
  THTensor *gi_out = gi;
  if (input->ndim == 3) gi_out = at_squeeze_dims(gi, &(ATIntList){ 1, { 0 } });
  outs[0] = gi_out ? at_to_dtype(gi_out, input->dtype, false) : NULL;
  if (gi_out != gi) THTensor_free(gi_out);
  outs[1] = at_to_dtype(gw, weight->dtype, false);
  outs[2] = at_to_dtype(gbias, weight->dtype, false);
  if (!outs[0] || !outs[1] || !outs[2]) {
    for (int i = 0; i < 3; i++) { THTensor_free(outs[i]); outs[i] = NULL; }
    goto done;
  }
  rc = 0;
done:
  free(col);
  THTensor_free(xb); THTensor_free(gb); THTensor_free(x); THTensor_free(w); THTensor_free(gy);
  THTensor_free(gi); THTensor_free(gw); THTensor_free(gbias);
  return rc;
}

/* ---- pooling ---- */
static int64_t pool_out(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode) {
  int64_t num = in + 2 * p - d * (k - 1) - 1 + (ceil_mode ? s - 1 : 0);
  int64_t out = num / s + 1;
  if (ceil_mode && (out - 1) * s >= in + p) out--;
  return out;
}

typedef struct { int64_t P, H, W, OH, OW, KH, KW, SH, SW, PH, PW, DH, DW; } PoolGeom;

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

int at_max_pool2d(THTensor **outs, const THTensor *input, const ATIntList *k, const ATIntList *s, const ATIntList *p,
                  const ATIntList *d, bool ceil_mode) {
  PoolGeom g;
  if (pool_geom(input, k, s, p, d, ceil_mode, &g, "max_pool2d") < 0) return -1;
  THDtype ct = input->dtype == TH_Double ? TH_Double : TH_Float;
  THTensor *x = compute_copy(input, ct);
  if (!x) return -1;
  int64_t sz[4];
  out_sizes(input, g.OH, g.OW, sz);
  THTensor *y = THTensor_new(ct, input->ndim, sz), *idx = THTensor_new(TH_Int64, input->ndim, sz);
  if (!y || !idx) { THTensor_free(x); THTensor_free(y); THTensor_free(idx); return -1; }
  const char *xd = THTensor_data(x);
  char *yd = THTensor_data(y);
  int64_t *id = (int64_t *)THTensor_data(idx);
  bool dbl = ct == TH_Double;
#pragma omp parallel for if (g.P * g.OH * g.OW > 16384)
  for (int64_t pl = 0; pl < g.P; pl++)
    for (int64_t oh = 0; oh < g.OH; oh++)
      for (int64_t ow = 0; ow < g.OW; ow++) {
        int64_t best = -1;
        double bv = -INFINITY;
        for (int64_t kh = 0; kh < g.KH; kh++) {
          int64_t ih = oh * g.SH - g.PH + kh * g.DH;
          if (ih < 0 || ih >= g.H) continue;
          for (int64_t kw = 0; kw < g.KW; kw++) {
            int64_t iw = ow * g.SW - g.PW + kw * g.DW;
            if (iw < 0 || iw >= g.W) continue;
            int64_t at = pl * g.H * g.W + ih * g.W + iw;
            double v = dbl ? ((const double *)xd)[at] : ((const float *)xd)[at];
            if (v > bv || isnan(v) || best < 0) { bv = v; best = ih * g.W + iw; if (isnan(v)) goto found; }
          }
        }
      found:;
        int64_t o = (pl * g.OH + oh) * g.OW + ow;
        if (dbl) ((double *)yd)[o] = bv; else ((float *)yd)[o] = (float)bv;
        id[o] = best;
      }
  THTensor_free(x);
  outs[0] = ct == input->dtype ? y : at_to_dtype(y, input->dtype, false);
  if (outs[0] != y) THTensor_free(y);
  outs[1] = idx;
  if (!outs[0]) { THTensor_free(idx); outs[1] = NULL; return -1; }
  return 0;
}

THTensor *at_max_pool2d_backward(const THTensor *grad, const THTensor *input, const THTensor *indices) {
  int64_t H = input->sizes[input->ndim - 2], W = input->sizes[input->ndim - 1];
  int64_t P = THTensor_numel(input) / ((H * W != 0) ? H * W : 1);
  THTensor *gi = THTensor_new(TH_Double, input->ndim, input->sizes);
  THTensor *g = gi ? compute_copy(grad, TH_Double) : NULL, *ic = g ? at_contiguous(indices) : NULL, *r = NULL;
  if (ic) {
    double *gid = (double *)THTensor_data(gi);
    const double *gd = (const double *)THTensor_data(g);
    const int64_t *id = (const int64_t *)THTensor_data(ic);
    int64_t L = THTensor_numel(g) / (P ? P : 1);
    memset(gid, 0, THTensor_numel(gi) * sizeof(double));
#pragma omp parallel for if (P * L > 16384)
    for (int64_t pl = 0; pl < P; pl++)
      for (int64_t j = 0; j < L; j++) {
        int64_t t = id[pl * L + j];
        if (t >= 0) gid[pl * H * W + t] += gd[pl * L + j];
      }
    r = at_to_dtype(gi, input->dtype, false);
  }
  THTensor_free(gi); THTensor_free(g); THTensor_free(ic);
  return r;
}

static int64_t avg_div(const PoolGeom *g, int64_t oh, int64_t ow, bool cip, ATOptInt divisor) {
  if (divisor.has) return divisor.v;
  int64_t h0 = oh * g->SH - g->PH, w0 = ow * g->SW - g->PW;
  int64_t h1 = h0 + g->KH, w1 = w0 + g->KW;
  int64_t ph1 = h1 < g->H + g->PH ? h1 : g->H + g->PH, pw1 = w1 < g->W + g->PW ? w1 : g->W + g->PW;
  int64_t pool_size = (ph1 - h0) * (pw1 - w0);
  if (cip) return pool_size;
  int64_t a0 = h0 > 0 ? h0 : 0, b0 = w0 > 0 ? w0 : 0, a1 = h1 < g->H ? h1 : g->H, b1 = w1 < g->W ? w1 : g->W;
  return (a1 - a0) * (b1 - b0);
}

THTensor *at_avg_pool2d(const THTensor *input, const ATIntList *k, const ATIntList *s, const ATIntList *p,
                        bool ceil_mode, bool cip, ATOptInt divisor) {
  PoolGeom g;
  if (pool_geom(input, k, s, p, NULL, ceil_mode, &g, "avg_pool2d") < 0) return NULL;
  if (divisor.has && divisor.v == 0) { THError_set(TH_ERR_RUNTIME, "divisor must be not zero"); return NULL; }
  THTensor *x = compute_copy(input, TH_Double);
  if (!x) return NULL;
  int64_t sz[4];
  out_sizes(input, g.OH, g.OW, sz);
  THTensor *y = THTensor_new(TH_Double, input->ndim, sz), *r = NULL;
  if (y) {
    const double *xd = (const double *)THTensor_data(x);
    double *yd = (double *)THTensor_data(y);
#pragma omp parallel for if (g.P * g.OH * g.OW > 16384)
    for (int64_t pl = 0; pl < g.P; pl++)
      for (int64_t oh = 0; oh < g.OH; oh++)
        for (int64_t ow = 0; ow < g.OW; ow++) {
          double sum = 0;
          int64_t h0 = oh * g.SH - g.PH, w0 = ow * g.SW - g.PW;
          for (int64_t ih = h0 < 0 ? 0 : h0; ih < h0 + g.KH && ih < g.H; ih++)
            for (int64_t iw = w0 < 0 ? 0 : w0; iw < w0 + g.KW && iw < g.W; iw++) sum += xd[pl * g.H * g.W + ih * g.W + iw];
          int64_t dv = avg_div(&g, oh, ow, cip, divisor);
          yd[(pl * g.OH + oh) * g.OW + ow] = dv ? sum / (double)dv : 0;
        }
    r = at_to_dtype(y, input->dtype, false);
  }
  THTensor_free(x); THTensor_free(y);
  return r;
}

THTensor *at_avg_pool2d_backward(const THTensor *grad, const THTensor *input, const ATIntList *k, const ATIntList *s,
                                 const ATIntList *p, bool ceil_mode, bool cip, ATOptInt divisor) {
  PoolGeom g;
  if (pool_geom(input, k, s, p, NULL, ceil_mode, &g, "avg_pool2d") < 0) return NULL;
  THTensor *gy = compute_copy(grad, TH_Double), *gi = gy ? THTensor_new(TH_Double, input->ndim, input->sizes) : NULL, *r = NULL;
  if (gi) {
    const double *gd = (const double *)THTensor_data(gy);
    double *gid = (double *)THTensor_data(gi);
    memset(gid, 0, THTensor_numel(gi) * sizeof(double));
#pragma omp parallel for if (g.P * g.OH * g.OW > 16384)
    for (int64_t pl = 0; pl < g.P; pl++)
      for (int64_t oh = 0; oh < g.OH; oh++)
        for (int64_t ow = 0; ow < g.OW; ow++) {
          int64_t dv = avg_div(&g, oh, ow, cip, divisor);
          double v = dv ? gd[(pl * g.OH + oh) * g.OW + ow] / (double)dv : 0;
          int64_t h0 = oh * g.SH - g.PH, w0 = ow * g.SW - g.PW;
          for (int64_t ih = h0 < 0 ? 0 : h0; ih < h0 + g.KH && ih < g.H; ih++)
            for (int64_t iw = w0 < 0 ? 0 : w0; iw < w0 + g.KW && iw < g.W; iw++) gid[pl * g.H * g.W + ih * g.W + iw] += v;
        }
    r = at_to_dtype(gi, input->dtype, false);
  }
  THTensor_free(gy); THTensor_free(gi);
  return r;
}

static int adaptive_sizes(const THTensor *x, const ATIntList *os, int64_t *OH, int64_t *OW, int64_t *P) {
  char b[256];
  if (x->ndim != 3 && x->ndim != 4) {
    THError_set(TH_ERR_RUNTIME, "adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got %s",
                THTensor_sizeStr(x->ndim, x->sizes, b, 256));
    return -1;
  }
  int64_t H = x->sizes[x->ndim - 2], W = x->sizes[x->ndim - 1];
  *OH = os->v[0] >= 0 ? os->v[0] : H;
  *OW = os->n > 1 ? (os->v[1] >= 0 ? os->v[1] : W) : *OH;
  *P = THTensor_numel(x) / ((H * W != 0) ? H * W : 1);
  return 0;
}

#define START(i, in, out) (((i) * (in)) / (out))
#define END(i, in, out) ((((i) + 1) * (in) + (out) - 1) / (out))

THTensor *at_adaptive_avg_pool2d(const THTensor *input, const ATIntList *os) {
  int64_t OH, OW, P;
  if (adaptive_sizes(input, os, &OH, &OW, &P) < 0) return NULL;
  int64_t H = input->sizes[input->ndim - 2], W = input->sizes[input->ndim - 1];
  THTensor *x = compute_copy(input, TH_Double);
  if (!x) return NULL;
  int64_t sz[4];
  out_sizes(input, OH, OW, sz);
  THTensor *y = THTensor_new(TH_Double, input->ndim, sz), *r = NULL;
  if (y) {
    const double *xd = (const double *)THTensor_data(x);
    double *yd = (double *)THTensor_data(y);
#pragma omp parallel for if (P * H * W > 16384)
    for (int64_t pl = 0; pl < P; pl++)
      for (int64_t oh = 0; oh < OH; oh++)
        for (int64_t ow = 0; ow < OW; ow++) {
          int64_t h0 = START(oh, H, OH), h1 = END(oh, H, OH), w0 = START(ow, W, OW), w1 = END(ow, W, OW);
          double sum = 0;
          for (int64_t ih = h0; ih < h1; ih++)
            for (int64_t iw = w0; iw < w1; iw++) sum += xd[pl * H * W + ih * W + iw];
          yd[(pl * OH + oh) * OW + ow] = sum / (double)((h1 - h0) * (w1 - w0));
        }
    r = at_to_dtype(y, input->dtype, false);
  }
  THTensor_free(x); THTensor_free(y);
  return r;
}

THTensor *at_adaptive_avg_pool2d_backward(const THTensor *grad, const THTensor *input) {
  int64_t H = input->sizes[input->ndim - 2], W = input->sizes[input->ndim - 1];
  int64_t OH = grad->sizes[grad->ndim - 2], OW = grad->sizes[grad->ndim - 1];
  int64_t P = THTensor_numel(input) / ((H * W != 0) ? H * W : 1);
  THTensor *gy = compute_copy(grad, TH_Double), *gi = gy ? THTensor_new(TH_Double, input->ndim, input->sizes) : NULL, *r = NULL;
  if (gi) {
    const double *gd = (const double *)THTensor_data(gy);
    double *gid = (double *)THTensor_data(gi);
    memset(gid, 0, THTensor_numel(gi) * sizeof(double));
#pragma omp parallel for if (P * H * W > 16384)
    for (int64_t pl = 0; pl < P; pl++)
      for (int64_t oh = 0; oh < OH; oh++)
        for (int64_t ow = 0; ow < OW; ow++) {
          int64_t h0 = START(oh, H, OH), h1 = END(oh, H, OH), w0 = START(ow, W, OW), w1 = END(ow, W, OW);
          double v = gd[(pl * OH + oh) * OW + ow] / (double)((h1 - h0) * (w1 - w0));
          for (int64_t ih = h0; ih < h1; ih++)
            for (int64_t iw = w0; iw < w1; iw++) gid[pl * H * W + ih * W + iw] += v;
        }
    r = at_to_dtype(gi, input->dtype, false);
  }
  THTensor_free(gy); THTensor_free(gi);
  return r;
}

int at_adaptive_max_pool2d(THTensor **outs, const THTensor *input, const ATIntList *os) {
  int64_t OH, OW, P;
  if (adaptive_sizes(input, os, &OH, &OW, &P) < 0) return -1;
  int64_t H = input->sizes[input->ndim - 2], W = input->sizes[input->ndim - 1];
  THTensor *x = compute_copy(input, TH_Double);
  if (!x) return -1;
  int64_t sz[4];
  out_sizes(input, OH, OW, sz);
  THTensor *y = THTensor_new(TH_Double, input->ndim, sz), *idx = THTensor_new(TH_Int64, input->ndim, sz);
  if (!y || !idx) { THTensor_free(x); THTensor_free(y); THTensor_free(idx); return -1; }
  const double *xd = (const double *)THTensor_data(x);
  double *yd = (double *)THTensor_data(y);
  int64_t *id = (int64_t *)THTensor_data(idx);
  for (int64_t pl = 0; pl < P; pl++)
    for (int64_t oh = 0; oh < OH; oh++)
      for (int64_t ow = 0; ow < OW; ow++) {
        int64_t h0 = START(oh, H, OH), h1 = END(oh, H, OH), w0 = START(ow, W, OW), w1 = END(ow, W, OW), best = -1;
        double bv = -INFINITY;
        for (int64_t ih = h0; ih < h1; ih++)
          for (int64_t iw = w0; iw < w1; iw++) {
            double v = xd[pl * H * W + ih * W + iw];
            if (best < 0 || v > bv || isnan(v)) { bv = v; best = ih * W + iw; }
          }
        yd[(pl * OH + oh) * OW + ow] = bv;
        id[(pl * OH + oh) * OW + ow] = best;
      }
  THTensor_free(x);
  outs[0] = at_to_dtype(y, input->dtype, false);
  THTensor_free(y);
  outs[1] = idx;
  if (!outs[0]) { THTensor_free(idx); outs[1] = NULL; return -1; }
  return 0;
}
