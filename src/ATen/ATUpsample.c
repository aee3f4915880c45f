/* Upsampling over contiguous (N*C) planes of 1 to 3 spatial dims, as torch's
 * upsample_{nearest,linear,bilinear,trilinear,bicubic}*d and
 * _upsample_nearest_exact*d. Every mode is separable: each output index of a
 * dim reads a few input indices of that dim ("taps", src/TH/THUpsample.h)
 * with weights, and an output is the nested weighted sum over its taps,
 * innermost dim first, as torch's CPU kernels nest it. The tables of taps
 * are built once per call; planes run in parallel. Nearest modes copy
 * elements of any width (uint8, float16, ...) without arithmetic; the
 * interpolating modes compute in float (double for double), as torch's
 * opmath. The GPU path (src/THC/THCUpsample.cu) computes the taps itself
 * from the same header. */
#include "ATUpsample.h"
#include "ATArgChecks.h"
#include "ATConv.h"
#include "ATCuda.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* geometry: P planes of D x H x W to OD x OH x OW (missing leading dims are 1) */
typedef struct { int64_t P, in[3], out[3], nsp; } UpGeom;

static const char *const DIMNAME[3] = { "D", "H", "W" };

/* torch's upsample_Nd_common_check: output_size and input_size's lengths,
 * then every size positive */
static int up_common_check(int nsp, const ATIntList *osz, int in_ndim, const int64_t *in_sizes, UpGeom *g) {
  if (osz->n != nsp) {
    THError_set(TH_ERR_RUNTIME, "It is expected output_size equals to %d, but got size %d", nsp, osz->n);
    return -1;
  }
  if (in_ndim != nsp + 2) {
    THError_set(TH_ERR_RUNTIME, "It is expected input_size equals to %d, but got size %d", nsp + 2, in_ndim);
    return -1;
  }
  bool ok = true;
  for (int k = 0; k < 3; k++) {
    int d = k - (3 - nsp);   /* index among the spatial dims; < 0: absent */
    g->in[k] = d < 0 ? 1 : in_sizes[2 + d];
    g->out[k] = d < 0 ? 1 : osz->v[d];
    ok = ok && g->in[k] > 0 && g->out[k] > 0;
  }
  if (!ok) {
    char a[128] = "", b[128] = "";
    size_t na = 0, nb = 0;
    for (int d = 0; d < nsp; d++) {
      int k = 3 - nsp + d;
      na += snprintf(a + na, sizeof a - na, "%s%s: %lld", d ? ", " : "", DIMNAME[k], (long long)g->in[k]);
      nb += snprintf(b + nb, sizeof b - nb, "%s%s: %lld", d ? ", " : "", DIMNAME[k], (long long)g->out[k]);
    }
    THError_set(TH_ERR_RUNTIME, "Input and output sizes should be greater than 0, but got input (%s)%s output (%s)", a,
                nsp == 1 ? " and" : "", b);   /* sic: torch's 1-d text has the "and" */
    return -1;
  }
  g->P = in_sizes[0] * in_sizes[1];
  g->nsp = nsp;
  return 0;
}

/* the taps of every output index of the three dims, in compute type T */
typedef struct {
  int n[3];
  int64_t *idx[3];   /* out[k] * n[k] each */
  void *w[3];
} UpTables;

static void up_tables_free(UpTables *t) {
  for (int k = 0; k < 3; k++) { free(t->idx[k]); free(t->w[k]); }
}

static int up_tables(UpTables *t, const UpGeom *g, int mode, bool align, const double *scales, THDtype ct) {
  memset(t, 0, sizeof *t);
  size_t ws = THDtype_size(ct);
  for (int k = 0; k < 3; k++) {
    /* a dim the op does not have: one tap of weight 1 (two taps there, one of weight 0, would
     * turn an inf into 0 * inf = NaN) */
    bool absent = k < 3 - g->nsp;
    int n = absent ? 1 : th_upsample_ntaps(mode);
    t->n[k] = n;
    t->idx[k] = malloc(g->out[k] * n * sizeof(int64_t));
    t->w[k] = malloc(g->out[k] * n * ws);
    if (!t->idx[k] || !t->w[k]) {
      up_tables_free(t);
      THError_set(TH_ERR_MEMORY, "upsample: out of memory");
      return -1;
    }
    for (int64_t o = 0; o < g->out[k]; o++) {
      if (absent) {
        t->idx[k][0] = 0;
        if (ct == TH_Double) ((double *)t->w[k])[0] = 1;
        else ((float *)t->w[k])[0] = 1;
      } else if (ct == TH_Double)
        th_upsample_taps_double(mode, align, g->in[k], g->out[k], scales[k], o, t->idx[k] + o * n, (double *)t->w[k] + o * n);
      else
        th_upsample_taps_float(mode, align, g->in[k], g->out[k], scales[k], o, t->idx[k] + o * n, (float *)t->w[k] + o * n);
    }
  }
  return 0;
}

/* One plane: the forward (nested weighted sums) and its adjoint (each
 * gradient spread over the taps; the plane's gx is zeroed first). A dim
 * with one tap of weight 1 multiplies exactly, so 1-d and 2-d need no
 * other loop. The forward runs along output rows in blocks of UP_BLOCK
 * columns, each (d, h) tap's row weighted into a block of sums on the
 * stack, with the number of W taps a constant (1, 2 or 4) so the column
 * loop is straight-line code. */
#define UP_BLOCK 256
#define UP_ROW_TAPS(T, NW)                                                                             \
  static void up_row_##T##_##NW(const T *row, const int64_t *iw, const T *ww, int64_t n, T wh, bool first, \
                                T *acc) {                                                              \
    for (int64_t j = 0; j < n; j++) {                                                                  \
      const int64_t *i = iw + j * NW;                                                                  \
      const T *w = ww + j * NW;                                                                        \
      T s = w[0] * row[i[0]];                                                                          \
      for (int c = 1; c < NW; c++) s += w[c] * row[i[c]];                                              \
      acc[j] = first ? wh * s : acc[j] + wh * s;                                                       \
    }                                                                                                  \
  }
#define UP_KERNELS(T)                                                                                  \
  UP_ROW_TAPS(T, 1)                                                                                    \
  UP_ROW_TAPS(T, 2)                                                                                    \
  UP_ROW_TAPS(T, 4)                                                                                    \
  static void up_fwd_plane_##T(const T *x, T *y, const UpGeom *g, const UpTables *t) {                 \
    const int64_t H = g->in[1], W = g->in[2], OW = g->out[2];                                          \
    const int nd = t->n[0], nh = t->n[1], nw = t->n[2];                                                \
    T acch[UP_BLOCK];                                                                                  \
    for (int64_t od = 0; od < g->out[0]; od++) {                                                       \
      const int64_t *id = t->idx[0] + od * nd;                                                         \
      const T *wd = (const T *)t->w[0] + od * nd;                                                      \
      for (int64_t oh = 0; oh < g->out[1]; oh++, y += OW) {                                            \
        const int64_t *ih = t->idx[1] + oh * nh;                                                       \
        const T *wh = (const T *)t->w[1] + oh * nh;                                                    \
        for (int64_t ow0 = 0; ow0 < OW; ow0 += UP_BLOCK) {                                             \
          int64_t n = OW - ow0 < UP_BLOCK ? OW - ow0 : UP_BLOCK;                                       \
          const int64_t *iw = t->idx[2] + ow0 * nw;                                                    \
          const T *ww = (const T *)t->w[2] + ow0 * nw;                                                 \
          for (int a = 0; a < nd; a++) {                                                               \
            for (int b = 0; b < nh; b++) {                                                             \
              const T *row = x + (id[a] * H + ih[b]) * W;                                              \
              if (nw == 1) up_row_##T##_1(row, iw, ww, n, wh[b], b == 0, acch);                        \
              else if (nw == 2) up_row_##T##_2(row, iw, ww, n, wh[b], b == 0, acch);                   \
              else up_row_##T##_4(row, iw, ww, n, wh[b], b == 0, acch);                                \
            }                                                                                          \
            T *yb = y + ow0;                                                                           \
            if (a == 0) for (int64_t j = 0; j < n; j++) yb[j] = wd[0] * acch[j];                       \
            else for (int64_t j = 0; j < n; j++) yb[j] = yb[j] + wd[a] * acch[j];                      \
          }                                                                                            \
        }                                                                                              \
      }                                                                                                \
    }                                                                                                  \
  }                                                                                                    \
  /* the adjoint, per output row: each (d, h) tap's input row takes every column's share */          \
  static void up_bwd_plane_##T(const T *gy, T *gx, const UpGeom *g, const UpTables *t) {               \
    const int64_t H = g->in[1], W = g->in[2], OW = g->out[2];                                          \
    const int nd = t->n[0], nh = t->n[1], nw = t->n[2];                                                \
    memset(gx, 0, g->in[0] * H * W * sizeof(T));                                                       \
    for (int64_t od = 0; od < g->out[0]; od++) {                                                       \
      const int64_t *id = t->idx[0] + od * nd;                                                         \
      const T *wd = (const T *)t->w[0] + od * nd;                                                      \
      for (int64_t oh = 0; oh < g->out[1]; oh++, gy += OW) {                                           \
        const int64_t *ih = t->idx[1] + oh * nh;                                                       \
        const T *wh = (const T *)t->w[1] + oh * nh;                                                    \
        for (int a = 0; a < nd; a++)                                                                   \
          for (int b = 0; b < nh; b++) {                                                               \
            T wdh = wd[a] * wh[b];                                                                     \
            T *row = gx + (id[a] * H + ih[b]) * W;                                                     \
            const int64_t *iw = t->idx[2];                                                             \
            const T *ww = (const T *)t->w[2];                                                          \
            if (nw == 1)                                                                               \
              for (int64_t ow = 0; ow < OW; ow++) row[iw[ow]] += wdh * ww[ow] * gy[ow];                \
            else if (nw == 2)                                                                          \
              for (int64_t ow = 0; ow < OW; ow++) {                                                    \
                T v = gy[ow];                                                                          \
                row[iw[2 * ow]] += wdh * ww[2 * ow] * v;                                               \
                row[iw[2 * ow + 1]] += wdh * ww[2 * ow + 1] * v;                                       \
              }                                                                                        \
            else                                                                                       \
              for (int64_t ow = 0; ow < OW; ow++) {                                                    \
                T v = gy[ow];                                                                          \
                for (int c = 0; c < 4; c++) row[iw[4 * ow + c]] += wdh * ww[4 * ow + c] * v;           \
              }                                                                                        \
          }                                                                                            \
      }                                                                                                \
    }                                                                                                  \
  }
UP_KERNELS(float)
UP_KERNELS(double)

/* nearest modes: a copy of elements of es bytes, one index per output */
#define UP_GATHER(T)                                                                                   \
  static void up_gather_plane_##T(const T *x, T *y, const UpGeom *g, const UpTables *t) {              \
    const int64_t H = g->in[1], W = g->in[2];                                                          \
    for (int64_t od = 0; od < g->out[0]; od++)                                                         \
      for (int64_t oh = 0; oh < g->out[1]; oh++) {                                                     \
        const T *row = x + (t->idx[0][od] * H + t->idx[1][oh]) * W;                                    \
        const int64_t *iw = t->idx[2];                                                                 \
        for (int64_t ow = 0; ow < g->out[2]; ow++) *y++ = row[iw[ow]];                                 \
      }                                                                                                \
  }
UP_GATHER(uint8_t)
UP_GATHER(uint16_t)
UP_GATHER(uint32_t)
UP_GATHER(uint64_t)

typedef enum { UP_FWD, UP_BWD, UP_GATHER_ } UpKind;

/* the kernel over every plane; src/dst planes are the input/output of the
 * forward, grad_output/grad_input of the backward */
static void up_planes(UpKind kind, THDtype ct, const void *src, void *dst, const UpGeom *g, const UpTables *t) {
  int64_t nin = g->in[0] * g->in[1] * g->in[2], nout = g->out[0] * g->out[1] * g->out[2];
  int64_t sin = kind == UP_BWD ? nout : nin, sout = kind == UP_BWD ? nin : nout;
  size_t es = THDtype_size(ct);
  const char *s = (const char *)src;
  char *d = (char *)dst;
#pragma omp parallel for if (g->P * (nin + nout) > 32768)
  for (int64_t p = 0; p < g->P; p++) {
    const void *sp = s + p * sin * es;
    void *dp = d + p * sout * es;
    if (kind == UP_GATHER_) {
      switch (es) {
        case 1: up_gather_plane_uint8_t(sp, dp, g, t); break;
        case 2: up_gather_plane_uint16_t(sp, dp, g, t); break;
        case 4: up_gather_plane_uint32_t(sp, dp, g, t); break;
        default: up_gather_plane_uint64_t(sp, dp, g, t); break;
      }
    } else if (ct == TH_Double) {
      if (kind == UP_FWD) up_fwd_plane_double(sp, dp, g, t);
      else up_bwd_plane_double(sp, dp, g, t);
    } else {
      if (kind == UP_FWD) up_fwd_plane_float(sp, dp, g, t);
      else up_bwd_plane_float(sp, dp, g, t);
    }
  }
}

static const char *const KERNEL_NAME[] = { "compute_indices_weights_nearest", "compute_indices_weights_nearest",
                                           "compute_indices_weights_linear", "compute_indices_weights_cubic" };

/* the dtypes torch's CPU kernels take: floating ones, and uint8 for the nearest modes */
static int up_check_dtype(THDtype dt, int mode) {
  bool nearest = mode == TH_UP_NEAREST || mode == TH_UP_NEAREST_EXACT;
  if (THDtype_isFloating(dt) || (nearest && dt == TH_UInt8)) return 0;
  THError_set(TH_ERR_NOTIMPL, "\"%s\" not implemented for '%s'", KERNEL_NAME[mode], THDtype_info[dt].legacy);
  return -1;
}

static void up_scales(ATOptDouble sd, ATOptDouble sh, ATOptDouble sw, double *scales) {
  scales[0] = sd.has ? sd.v : 0;
  scales[1] = sh.has ? sh.v : 0;
  scales[2] = sw.has ? sw.v : 0;
}

/* The GPU path: src (the input, or the grad of the output) as a contiguous
 * float/double copy; the kernel writes every element of a fresh dst of
 * dst_sizes, cast back to out_dt. */
static THTensor *up_cuda(bool backward, const THTensor *src, int ndim, const int64_t *dst_sizes, THDtype out_dt,
                         const UpGeom *g, int mode, bool align, const double *scales, const char *name) {
  if (!THDtype_isFloating(out_dt)) {
    THError_set(TH_ERR_NOTIMPL, "\"%s\" on CUDA is not implemented for '%s'", name, THDtype_info[out_dt].legacy);
    return NULL;
  }
  THDtype ct = out_dt == TH_Double ? TH_Double : TH_Float;
  int64_t geom[8] = { g->P, g->in[0], g->in[1], g->in[2], g->out[0], g->out[1], g->out[2], g->nsp };
  THTensor *x = at_contiguous_as(src, ct);
  THTensor *y = x ? at_new_on(THTensor_device(src), ct, ndim, dst_sizes, NULL) : NULL, *r = NULL;
  int rc = -1;
  if (y) {
    rc = backward ? at_cuda->upsample_backward(ct, THTensor_data(x), THTensor_data(y), geom, mode, align, scales)
                  : at_cuda->upsample(ct, THTensor_data(x), THTensor_data(y), geom, mode, align, scales);
  }
  if (rc == 0) r = ct == out_dt ? THTensor_retain(y) : at_to_dtype(y, out_dt, false);
  THTensor_free(x); THTensor_free(y);
  return r;
}

THTensor *at_upsample(const THTensor *self, int mode, int nsp, const ATIntList *output_size, bool align,
                      ATOptDouble scales_d, ATOptDouble scales_h, ATOptDouble scales_w, const char *name) {
  UpGeom g;
  if (up_common_check(nsp, output_size, self->ndim, self->sizes, &g) < 0) return NULL;
  int64_t rest = 1;
  for (int i = 1; i < self->ndim; i++) rest *= self->sizes[i];
  if (rest == 0) {
    char b[256];
    THError_set(TH_ERR_RUNTIME, "Non-empty %dD data tensor expected but got a tensor with sizes %s", nsp + 2,
                THTensor_sizeStr(self->ndim, self->sizes, b, 256));
    return NULL;
  }
  if (up_check_dtype(self->dtype, mode) < 0) return NULL;
  double scales[3];
  up_scales(scales_d, scales_h, scales_w, scales);
  int64_t sz[5] = { self->sizes[0], self->sizes[1] };
  for (int d = 0; d < nsp; d++) sz[2 + d] = output_size->v[d];
  if (THTensor_device(self) >= 0) return up_cuda(false, self, self->ndim, sz, self->dtype, &g, mode, align, scales, name);
  bool nearest = mode == TH_UP_NEAREST || mode == TH_UP_NEAREST_EXACT;
  THDtype ct = nearest ? self->dtype : self->dtype == TH_Double ? TH_Double : TH_Float;
  /* the output first: an impossible size fails there, before its tables */
  THTensor *y = THTensor_new(ct, self->ndim, sz);
  THTensor *x = !y ? NULL : nearest ? at_contiguous(self) : at_contiguous_as(self, ct), *r = NULL;
  UpTables t;
  /* nearest tables hold indices only; their weights (1) are never read */
  if (x && up_tables(&t, &g, mode, align, scales, ct == TH_Double ? TH_Double : TH_Float) == 0) {
    up_planes(nearest ? UP_GATHER_ : UP_FWD, ct, THTensor_data(x), THTensor_data(y), &g, &t);
    up_tables_free(&t);
    r = ct == self->dtype ? THTensor_retain(y) : at_to_dtype(y, self->dtype, false);
  }
  THTensor_free(x); THTensor_free(y);
  return r;
}

THTensor *at_upsample_backward(const THTensor *grad, int mode, int nsp, const ATIntList *output_size,
                               const ATIntList *input_size, bool align, ATOptDouble scales_d, ATOptDouble scales_h,
                               ATOptDouble scales_w, const char *name) {
  UpGeom g;
  if (up_common_check(nsp, output_size, input_size->n, input_size->v, &g) < 0) return NULL;
  if (grad->ndim != nsp + 2) {
    THError_set(TH_ERR_RUNTIME, "Expected grad_output to be a tensor of dimension %d but got: dimension %d", nsp + 2,
                grad->ndim);
    return NULL;
  }
  for (int i = 0; i < nsp + 2; i++) {
    int64_t want = i < 2 ? input_size->v[i] : output_size->v[i - 2];
    if (grad->sizes[i] != want) {
      THError_set(TH_ERR_RUNTIME, "Expected grad_output to have the same shape as output; output.size(%d) = %lld but "
                  "got grad_output.size(%d) = %lld", i, (long long)want, i, (long long)grad->sizes[i]);
      return NULL;
    }
  }
  if (!THDtype_isFloating(grad->dtype)) {
    THError_set(TH_ERR_NOTIMPL, "\"%s_backward\" not implemented for '%s'", name, THDtype_info[grad->dtype].legacy);
    return NULL;
  }
  double scales[3];
  up_scales(scales_d, scales_h, scales_w, scales);
  if (THTensor_device(grad) >= 0)
    return up_cuda(true, grad, input_size->n, input_size->v, grad->dtype, &g, mode, align, scales, name);
  THDtype ct = grad->dtype == TH_Double ? TH_Double : TH_Float;
  THTensor *gi = THTensor_new(ct, input_size->n, input_size->v);
  THTensor *gy = gi ? at_contiguous_as(grad, ct) : NULL, *r = NULL;
  UpTables t;
  if (gy && up_tables(&t, &g, mode, align, scales, ct) == 0) {
    up_planes(UP_BWD, ct, THTensor_data(gy), THTensor_data(gi), &g, &t);
    up_tables_free(&t);
    r = ct == grad->dtype ? THTensor_retain(gi) : at_to_dtype(gi, grad->dtype, false);
  }
  THTensor_free(gy); THTensor_free(gi);
  return r;
}
