/* Upsampling over contiguous (N*C) planes of 1 to 3 spatial dims, as torch's
 * upsample_{nearest,linear,bilinear,trilinear,bicubic}*d and
 * _upsample_nearest_exact*d. Every mode is separable: each output index of a
 * dim reads a few input indices of that dim ("taps", src/TH/THUpsample.h)
 * with weights, and an output is the nested weighted sum over its taps,
 * innermost dim first, as torch's CPU kernels nest it. The tables of taps
 * are built once per call; planes run in parallel. Nearest modes copy
 * elements of any width (uint8, float16, ...) without arithmetic; the
 * interpolating modes compute in float (double for double), as torch's
 * opmath. Antialiased bilinear/bicubic (torch's _upsample_*2d_aa) are the
 * same separable sums with torch's wider, normalized taps when downsampling.
 * The GPU path (src/THC/THCUpsample.cu) computes the taps itself from the
 * same header (no antialias there). */
#include "ATUpsample.h"
#include "ATArgChecks.h"
#include "ATConv.h"
#include "ATCuda.h"

#include <omp.h>
#ifdef __AVX2__
#include <immintrin.h>
#endif
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

/* The taps of every output index of one dim, in compute type T: n slots per
 * output, of which cnt[o] are read (cnt NULL: all n; antialias varies it).
 * ident: the forward leaves this dim as it is (an absent dim, or an
 * antialiased dim of unchanged size, which torch's separable kernel skips).
 * used[i]: some output reads input index i (the forward skips the rest). */
typedef struct {
  int n;
  bool ident;
  int64_t *idx;
  void *w;
  int *cnt;
  bool *used;
} UpDim;
typedef struct { UpDim d[3]; } UpTables;

static void up_tables_free(UpTables *t) {
  for (int k = 0; k < 3; k++) { free(t->d[k].idx); free(t->d[k].w); free(t->d[k].cnt); free(t->d[k].used); }
}

/* torch's antialiased taps (HelperInterpBase::_compute_indices_min_size_weights_aa):
 * the filter (triangle, or cubic with A = -0.5 as PIL) stretched by the scale
 * when downsampling, over the inputs within its support of the output's
 * centre, normalized to sum 1. The mixed float/double steps are torch's. */
#define UP_AA_TAPS(T)                                                                                  \
  static T up_aa_filter_##T(bool cubic, T x) {                                                         \
    x = x < 0 ? -x : x;                                                                                \
    if (!cubic) return x < 1 ? (T)(1.0 - x) : (T)0;                                                    \
    const T A = (T)-0.5;                                                                               \
    if (x < 1) return ((A + 2) * x - (A + 3)) * x * x + 1;                                             \
    if (x < 2) return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;                                       \
    return 0;                                                                                          \
  }                                                                                                    \
  static int up_aa_maxtaps_##T(bool cubic, bool align, int64_t in, int64_t out, double sc, T *scale,   \
                               T *support) {                                                           \
    int ntap = cubic ? 4 : 2;                                                                          \
    T s = align ? (out > 1 ? (T)(in - 1) / (T)(out - 1) : (T)0) : (sc > 0 ? (T)(1.0 / sc) : (T)in / (T)out); \
    *scale = s;                                                                                        \
    *support = s >= 1 ? (T)((ntap * 0.5) * s) : (T)(ntap * 0.5);                                      \
    return (int)ceil((double)*support) * 2 + 1;                                                        \
  }                                                                                                    \
  static void up_aa_taps_##T(bool cubic, int64_t in, T scale, T support, int maxn, int64_t o,          \
                             int64_t *idx, T *w, int *cnt) {                                           \
    T center = (T)(scale * (o + 0.5));                                                                 \
    T invscale = scale >= 1 ? (T)(1.0 / scale) : (T)1;                                                 \
    int64_t xmin = (int64_t)((double)(center - support) + 0.5);                                        \
    if (xmin < 0) xmin = 0;                                                                            \
    int64_t xmax = (int64_t)((double)(center + support) + 0.5);                                        \
    int64_t xsize = (xmax < in ? xmax : in) - xmin;                                                    \
    xsize = xsize < 0 ? 0 : xsize > maxn ? maxn : xsize;                                               \
    T total = 0;                                                                                       \
    for (int64_t j = 0; j < xsize; j++) {                                                              \
      w[j] = up_aa_filter_##T(cubic, (T)(((double)((T)(j + xmin) - center) + 0.5) * invscale));        \
      total += w[j];                                                                                   \
    }                                                                                                  \
    if (total != 0)                                                                                    \
      for (int64_t j = 0; j < xsize; j++) w[j] /= total;                                               \
    for (int j = 0; j < maxn; j++) {                                                                   \
      idx[j] = j < xsize ? xmin + j : xmin < in ? xmin : in - 1;                                        \
      if (j >= xsize) w[j] = 0;                                                                        \
    }                                                                                                  \
    *cnt = (int)xsize;                                                                                 \
  }
UP_AA_TAPS(float)
UP_AA_TAPS(double)

/* mode: a THUpsampleMode, with AT_UP_AA for the antialiased ones; fwd: the
 * tables of a forward (which skips identity dims) */
static int up_tables(UpTables *t, const UpGeom *g, int mode, bool align, const double *scales, THDtype ct, bool fwd) {
  memset(t, 0, sizeof *t);
  bool aa = mode & AT_UP_AA, cubic = (mode & ~AT_UP_AA) == TH_UP_CUBIC;
  mode &= ~AT_UP_AA;
  size_t ws = THDtype_size(ct);
  for (int k = 0; k < 3; k++) {
    UpDim *d = &t->d[k];
    /* a dim the op does not have: one tap of weight 1 (two taps there, one of weight 0, would
     * turn an inf into 0 * inf = NaN) */
    bool absent = k < 3 - g->nsp;
    double fscale = 0, fsupport = 0;
    float sscale = 0, ssupport = 0;
    int n = absent ? 1
            : !aa ? th_upsample_ntaps(mode)
            : ct == TH_Double ? up_aa_maxtaps_double(cubic, align, g->in[k], g->out[k], scales[k], &fscale, &fsupport)
                              : up_aa_maxtaps_float(cubic, align, g->in[k], g->out[k], scales[k], &sscale, &ssupport);
    d->n = n;
    d->ident = absent || (aa && fwd && g->in[k] == g->out[k]);
    d->idx = malloc(g->out[k] * n * sizeof(int64_t));
    d->w = malloc(g->out[k] * n * ws);
    d->used = calloc(g->in[k], sizeof(bool));
    d->cnt = aa && !absent ? malloc(g->out[k] * sizeof(int)) : NULL;
    if (!d->idx || !d->w || !d->used || (aa && !absent && !d->cnt)) {
      up_tables_free(t);
      THError_set(TH_ERR_MEMORY, "upsample: out of memory");
      return -1;
    }
    for (int64_t o = 0; o < g->out[k]; o++) {
      int64_t *ix = d->idx + o * n;
      if (absent) {
        ix[0] = 0;
        if (ct == TH_Double) ((double *)d->w)[0] = 1;
        else ((float *)d->w)[0] = 1;
      } else if (aa && ct == TH_Double)
        up_aa_taps_double(cubic, g->in[k], fscale, fsupport, n, o, ix, (double *)d->w + o * n, d->cnt + o);
      else if (aa)
        up_aa_taps_float(cubic, g->in[k], sscale, ssupport, n, o, ix, (float *)d->w + o * n, d->cnt + o);
      else if (ct == TH_Double)
        th_upsample_taps_double(mode, align, g->in[k], g->out[k], scales[k], o, ix, (double *)d->w + o * n);
      else
        th_upsample_taps_float(mode, align, g->in[k], g->out[k], scales[k], o, ix, (float *)d->w + o * n);
      int c = d->cnt ? d->cnt[o] : n;
      for (int j = 0; j < c; j++) d->used[ix[j]] = true;
    }
  }
  return 0;
}

/* One plane, separably: the W dim first, on each input row (into A, D x H
 * rows of OW), then H (into B, D x OH rows), then D (into y), skipping
 * identity dims; the last pass writes y. Each output is the sum over its
 * taps, innermost dim first, in the order torch's CPU kernels nest it, so
 * the values are those of the nested form at a fraction of its work (each
 * W-interpolated row is computed once, not once per output row reading it).
 * The H and D passes are whole-row weighted sums (vectorized); the W pass
 * gathers, with the tap count a constant (2 or 4) where it is fixed. The
 * backward is the adjoint, pass by pass in reverse. */
#define UP_KERNELS(T)                                                                                  \
  /* one row of the W pass: o[j] = sum over c < cnt of w[j][c] * row[idx[j][c]] */                    \
  static void up_wrow_##T(const T *row, T *o, const UpDim *d, int64_t OW) {                            \
    const int64_t *ix = d->idx;                                                                        \
    const T *w = (const T *)d->w;                                                                      \
    if (d->cnt) { /* antialias: the taps of an output are consecutive inputs */                       \
      int n = d->n;                                                                                    \
      for (int64_t j = 0; j < OW; j++, ix += n, w += n) {                                              \
        const T *r = row + ix[0];                                                                      \
        T s = w[0] * r[0];                                                                             \
        for (int c = 1, e = d->cnt[j]; c < e; c++) s += w[c] * r[c];                                   \
        o[j] = s;                                                                                      \
      }                                                                                                \
    } else if (d->n == 2) {                                                                            \
      for (int64_t j = 0; j < OW; j++) {                                                               \
        T s = w[2 * j] * row[ix[2 * j]];                                                               \
        o[j] = s + w[2 * j + 1] * row[ix[2 * j + 1]];                                                  \
      }                                                                                                \
    } else if (d->n == 4) {                                                                            \
      for (int64_t j = 0; j < OW; j++) {                                                               \
        const int64_t *i = ix + 4 * j;                                                                 \
        const T *v = w + 4 * j;                                                                        \
        T s = v[0] * row[i[0]];                                                                        \
        s += v[1] * row[i[1]];                                                                         \
        s += v[2] * row[i[2]];                                                                         \
        o[j] = s + v[3] * row[i[3]];                                                                   \
      }                                                                                                \
    } else                                                                                             \
      for (int64_t j = 0; j < OW; j++) o[j] = w[j] * row[ix[j]];                                       \
  }                                                                                                    \
  /* o = sum over the taps of output q of w * (the row at src + idx * stride), rows of len */         \
  static void up_vrow_##T(const T *src, int64_t stride, T *o, const UpDim *d, int64_t q, int64_t len) { \
    const int64_t *ix = d->idx + q * d->n;                                                             \
    const T *w = (const T *)d->w + q * d->n;                                                           \
    int c = d->cnt ? d->cnt[q] : d->n;                                                                 \
    const T *r = src + ix[0] * stride;                                                                 \
    T w0 = w[0];                                                                                       \
    for (int64_t j = 0; j < len; j++) o[j] = w0 * r[j];                                                \
    for (int b = 1; b < c; b++) {                                                                      \
      const T *rb = src + ix[b] * stride;                                                              \
      T wb = w[b];                                                                                     \
      for (int64_t j = 0; j < len; j++) o[j] = o[j] + wb * rb[j];                                      \
    }                                                                                                  \
  }                                                                                                    \
  /* the adjoint of up_vrow: each tap's row takes w * the row at g */                                 \
  static void up_vrow_adj_##T(const T *g, T *dst, int64_t stride, const UpDim *d, int64_t q, int64_t len) { \
    const int64_t *ix = d->idx + q * d->n;                                                             \
    const T *w = (const T *)d->w + q * d->n;                                                           \
    int c = d->cnt ? d->cnt[q] : d->n;                                                                 \
    for (int b = 0; b < c; b++) {                                                                      \
      T *rb = dst + ix[b] * stride;                                                                    \
      T wb = w[b];                                                                                     \
      for (int64_t j = 0; j < len; j++) rb[j] += wb * g[j];                                            \
    }                                                                                                  \
  }                                                                                                    \
  static void up_fwd_plane_##T(const T *x, T *y, const UpGeom *g, const UpTables *t, T *bufA, T *bufB) { \
    const int64_t D = g->in[0], H = g->in[1], W = g->in[2], OD = g->out[0], OH = g->out[1], OW = g->out[2]; \
    const UpDim *dd = &t->d[0], *dh = &t->d[1], *dw = &t->d[2];                                        \
    if (dd->ident && dh->ident && dw->ident) {                                                         \
      memcpy(y, x, D * H * W * sizeof(T));                                                             \
      return;                                                                                          \
    }                                                                                                  \
    const T *A = x; /* D x H rows of OW */                                                             \
    if (!dw->ident) {                                                                                  \
      T *dst = dh->ident && dd->ident ? y : bufA;                                                      \
      for (int64_t d = 0; d < D; d++)                                                                  \
        for (int64_t h = 0; h < H; h++)                                                                \
          if ((dd->ident || dd->used[d]) && (dh->ident || dh->used[h]))                                \
            up_wrow_##T(x + (d * H + h) * W, dst + (d * H + h) * OW, dw, OW);                          \
      A = dst;                                                                                         \
    }                                                                                                  \
    const T *B = A; /* D x OH rows of OW */                                                            \
    if (!dh->ident) {                                                                                  \
      T *dst = dd->ident ? y : bufB;                                                                   \
      for (int64_t d = 0; d < D; d++)                                                                  \
        if (dd->ident || dd->used[d])                                                                  \
          for (int64_t oh = 0; oh < OH; oh++) up_vrow_##T(A + d * H * OW, OW, dst + (d * OH + oh) * OW, dh, oh, OW); \
      B = dst;                                                                                         \
    }                                                                                                  \
    if (!dd->ident)                                                                                    \
      for (int64_t od = 0; od < OD; od++) up_vrow_##T(B, OH * OW, y + od * OH * OW, dd, od, OH * OW);  \
  }                                                                                                    \
  /* gx = the adjoint of the forward applied to gy; bufA (D x H x OW) and bufB (D x OH x OW) */      \
  static void up_bwd_plane_##T(const T *gy, T *gx, const UpGeom *g, const UpTables *t, T *bufA, T *bufB) { \
    const int64_t D = g->in[0], H = g->in[1], W = g->in[2], OD = g->out[0], OH = g->out[1], OW = g->out[2]; \
    const UpDim *dd = &t->d[0], *dh = &t->d[1], *dw = &t->d[2];                                        \
    if (dd->n == 1 && dh->n == 1 && dw->n == 1) {                                                      \
      /* nearest: weights 1. The output rows reading one input row are consecutive (the indices  \
       * do not decrease): summed as rows (vectorized), then scattered once. */                  \
      memset(gx, 0, D * H * W * sizeof(T));                                                            \
      for (int64_t od = 0; od < OD; od++)                                                              \
        for (int64_t oh = 0; oh < OH;) {                                                               \
          int64_t e = oh + 1;                                                                          \
          while (e < OH && dh->idx[e] == dh->idx[oh]) e++;                                             \
          const T *src = gy + (od * OH + oh) * OW;                                                     \
          if (e - oh > 1) {                                                                            \
            for (int64_t j = 0; j < OW; j++) bufA[j] = src[j];                                         \
            for (int64_t q = oh + 1; q < e; q++) {                                                     \
              const T *r = gy + (od * OH + q) * OW;                                                    \
              for (int64_t j = 0; j < OW; j++) bufA[j] += r[j];                                        \
            }                                                                                          \
            src = bufA;                                                                                \
          }                                                                                            \
          T *row = gx + (dd->idx[od] * H + dh->idx[oh]) * W;                                           \
          for (int64_t ow = 0; ow < OW; ow++) row[dw->idx[ow]] += src[ow];                             \
          oh = e;                                                                                      \
        }                                                                                              \
      return;                                                                                          \
    }                                                                                                  \
    const T *B = gy;                                                                                   \
    if (!dd->ident) {                                                                                  \
      memset(bufB, 0, D * OH * OW * sizeof(T));                                                        \
      for (int64_t od = 0; od < OD; od++) up_vrow_adj_##T(gy + od * OH * OW, bufB, OH * OW, dd, od, OH * OW); \
      B = bufB;                                                                                        \
    }                                                                                                  \
    const T *A = B;                                                                                    \
    if (!dh->ident) {                                                                                  \
      memset(bufA, 0, D * H * OW * sizeof(T));                                                         \
      for (int64_t d = 0; d < D; d++)                                                                  \
        for (int64_t oh = 0; oh < OH; oh++)                                                            \
          up_vrow_adj_##T(B + (d * OH + oh) * OW, bufA + d * H * OW, OW, dh, oh, OW);                  \
      A = bufA;                                                                                        \
    }                                                                                                  \
    memset(gx, 0, D * H * W * sizeof(T));                                                              \
    const int n = dw->n;                                                                               \
    for (int64_t r = 0; r < D * H; r++) {                                                              \
      const T *a = A + r * OW;                                                                         \
      T *row = gx + r * W;                                                                             \
      const int64_t *ix = dw->idx;                                                                     \
      const T *w = (const T *)dw->w;                                                                   \
      for (int64_t j = 0; j < OW; j++, ix += n, w += n) {                                              \
        int c = dw->cnt ? dw->cnt[j] : n;                                                              \
        for (int b = 0; b < c; b++) row[ix[b]] += w[b] * a[j];                                         \
      }                                                                                                \
    }                                                                                                  \
  }
UP_KERNELS(float)
UP_KERNELS(double)

/* nearest modes: a copy of elements of es bytes, one index per output; an
 * output row (or D slab) reading the same input row as the one before it is
 * a copy of that output row (upsampling repeats every row) */
#define UP_GATHER(T)                                                                                   \
  static void up_gather_plane_##T(const T *x, T *y, const UpGeom *g, const UpTables *t) {              \
    const int64_t H = g->in[1], W = g->in[2], OH = g->out[1], OW = g->out[2];                          \
    const int64_t *id = t->d[0].idx, *ih = t->d[1].idx, *iw = t->d[2].idx;                             \
    for (int64_t od = 0; od < g->out[0]; od++) {                                                       \
      T *slab = y + od * OH * OW;                                                                      \
      if (od > 0 && id[od] == id[od - 1]) {                                                            \
        memcpy(slab, slab - OH * OW, OH * OW * sizeof(T));                                             \
        continue;                                                                                      \
      }                                                                                                \
      for (int64_t oh = 0; oh < OH; oh++) {                                                            \
        T *o = slab + oh * OW;                                                                         \
        if (oh > 0 && ih[oh] == ih[oh - 1]) {                                                          \
          memcpy(o, o - OW, OW * sizeof(T));                                                           \
          continue;                                                                                    \
        }                                                                                              \
        const T *row = x + (id[od] * H + ih[oh]) * W;                                                  \
        for (int64_t ow = 0; ow < OW; ow++) o[ow] = row[iw[ow]];                                       \
      }                                                                                                \
    }                                                                                                  \
  }
UP_GATHER(uint8_t)
UP_GATHER(uint16_t)
UP_GATHER(uint32_t)
UP_GATHER(uint64_t)

/* uint8 antialias: torch's fixed-point kernel (_compute_index_ranges_int16_weights
 * and basic_loop_aa_{horizontal,vertical}<uint8_t>, the same arithmetic as its AVX2
 * path). The taps are the double ones; each dim's weights become int16 at the
 * largest precision (fraction bits, < 22) whose largest weight still fits in 15
 * bits, rounded half away from zero. A pass sums products in int32 from half a
 * unit, shifts right by the precision and clamps to 0..255: W first, then H,
 * each rounding to uint8, an identity dim skipped. */
typedef struct { int16_t *w[3]; unsigned prec[3]; } UpFixed;

static void up_fixed_free(UpFixed *f) {
  for (int k = 0; k < 3; k++) free(f->w[k]);
}

static int up_fixed(UpFixed *f, const UpGeom *g, const UpTables *t) {
  memset(f, 0, sizeof *f);
  for (int k = 0; k < 3; k++) {
    const UpDim *d = &t->d[k];
    if (d->ident) continue;
    const double *w = (const double *)d->w;
    int64_t nw = g->out[k] * d->n;
    double wmax = 0;
    for (int64_t i = 0; i < nw; i++) wmax = w[i] > wmax ? w[i] : wmax;
    unsigned p = 0;
    for (; p < 22; p++)
      if ((int)(0.5 + wmax * (double)(1 << (p + 1))) >= (1 << 15)) break;
    f->prec[k] = p;
    f->w[k] = malloc(nw * sizeof(int16_t));
    if (!f->w[k]) {
      up_fixed_free(f);
      THError_set(TH_ERR_MEMORY, "upsample: out of memory");
      return -1;
    }
    for (int64_t i = 0; i < nw; i++) {
      double v = w[i] * (double)(1 << p);
      f->w[k][i] = (int16_t)(v < 0 ? (int)(-0.5 + v) : (int)(0.5 + v));
    }
  }
  return 0;
}

static inline uint8_t up_u8_round(int32_t acc, unsigned prec) {
  acc >>= prec;   /* arithmetic shift, as torch's */
  return (uint8_t)(acc < 0 ? 0 : acc > 255 ? 255 : acc);
}

/* o[0..len) = the rounded sum over the cnt consecutive rows from src + i0 * len
 * (rows of len) with weights w: blocks of 64 columns summed in int32 (held in
 * vector registers), tap by tap */
static void up_u8_rows(const uint8_t *src, int64_t len, int64_t i0, const int16_t *w, int cnt, unsigned prec,
                       uint8_t *o) {
  const int32_t half = (int32_t)1 << prec >> 1;
  for (int64_t j0 = 0; j0 < len; j0 += 64) {
    int64_t n = len - j0 < 64 ? len - j0 : 64;
    int32_t a[64];
    if (n == 64) {
      for (int j = 0; j < 64; j++) a[j] = half;
      for (int c = 0; c < cnt; c++) {
        const uint8_t *r = src + (i0 + c) * len + j0;
        int32_t wc = w[c];
        for (int j = 0; j < 64; j++) a[j] += (int32_t)r[j] * wc;
      }
      for (int j = 0; j < 64; j++) o[j0 + j] = up_u8_round(a[j], prec);
    } else {
      for (int64_t j = 0; j < n; j++) a[j] = half;
      for (int c = 0; c < cnt; c++) {
        const uint8_t *r = src + (i0 + c) * len + j0;
        int32_t wc = w[c];
        for (int64_t j = 0; j < n; j++) a[j] += (int32_t)r[j] * wc;
      }
      for (int64_t j = 0; j < n; j++) o[j0 + j] = up_u8_round(a[j], prec);
    }
  }
}

/* the W pass of rows [h0, h0 + R), R <= 16, of a plane of width W: the strip is
 * transposed into T (W x 16) so that each output column is a sum of whole
 * 16-byte rows of T (vectorized), into O (OW x 16), then transposed back */
#define UP_U8_STRIP 16
#ifdef __AVX2__
/* dst[j * ds + i] = src[i * ss + j] over a 16 x 16 block of bytes: interleaving
 * bytes, then pairs, quads and eights of rows */
static void up_u8_transpose16(const uint8_t *src, int64_t ss, uint8_t *dst, int64_t ds) {
  __m128i a[16], b[16];
  for (int i = 0; i < 16; i++) a[i] = _mm_loadu_si128((const __m128i *)(src + i * ss));
  for (int k = 0; k < 8; k++) {   /* rows 2k, 2k+1: columns 0-7, 8-15 */
    b[2 * k] = _mm_unpacklo_epi8(a[2 * k], a[2 * k + 1]);
    b[2 * k + 1] = _mm_unpackhi_epi8(a[2 * k], a[2 * k + 1]);
  }
  for (int m = 0; m < 4; m++)     /* rows 4m..4m+3: column quarters q at a[4m + q] */
    for (int h = 0; h < 2; h++) {
      a[4 * m + 2 * h] = _mm_unpacklo_epi16(b[4 * m + h], b[4 * m + 2 + h]);
      a[4 * m + 2 * h + 1] = _mm_unpackhi_epi16(b[4 * m + h], b[4 * m + 2 + h]);
    }
  for (int n = 0; n < 2; n++)     /* rows 8n..8n+7: column pairs o at b[8n + o] */
    for (int q = 0; q < 4; q++) {
      b[8 * n + 2 * q] = _mm_unpacklo_epi32(a[8 * n + q], a[8 * n + 4 + q]);
      b[8 * n + 2 * q + 1] = _mm_unpackhi_epi32(a[8 * n + q], a[8 * n + 4 + q]);
    }
  for (int o = 0; o < 8; o++) {
    _mm_storeu_si128((__m128i *)(dst + (2 * o) * ds), _mm_unpacklo_epi64(b[o], b[8 + o]));
    _mm_storeu_si128((__m128i *)(dst + (2 * o + 1) * ds), _mm_unpackhi_epi64(b[o], b[8 + o]));
  }
}
#endif
static void up_u8_wstrip(const uint8_t *x, int64_t W, int64_t R, const UpDim *dw, const int16_t *w16, unsigned prec,
                         int64_t OW, uint8_t *dst, uint8_t *T, uint8_t *O) {
  int64_t c0 = 0;
#ifdef __AVX2__
  if (R == UP_U8_STRIP)
    for (; c0 + 16 <= W; c0 += 16) up_u8_transpose16(x + c0, W, T + c0 * UP_U8_STRIP, UP_U8_STRIP);
#endif
  for (int64_t c = c0; c < W; c++)
    for (int64_t r = 0; r < UP_U8_STRIP; r++) T[c * UP_U8_STRIP + r] = r < R ? x[r * W + c] : 0;
  const int32_t half = (int32_t)1 << prec >> 1;
  const int n = dw->n;
  for (int64_t j = 0; j < OW; j++) {
    const int16_t *w = w16 + j * n;
    const uint8_t *src = T + dw->idx[j * n] * UP_U8_STRIP;
    int e = dw->cnt[j];
#ifdef __AVX2__
    /* gcc leaves the plain 16-wide loop scalar: 2 x 8 int32 sums, then torch's shift and a
     * saturating pack (int32 -> int16 -> uint8 clamps to 0..255 as its clamp does) */
    __m256i a0 = _mm256_set1_epi32(half), a1 = a0;
    for (int c = 0; c < e; c++, src += UP_U8_STRIP) {
      __m128i v = _mm_loadu_si128((const __m128i *)src);
      __m256i wc = _mm256_set1_epi32(w[c]);
      a0 = _mm256_add_epi32(a0, _mm256_mullo_epi32(_mm256_cvtepu8_epi32(v), wc));
      a1 = _mm256_add_epi32(a1, _mm256_mullo_epi32(_mm256_cvtepu8_epi32(_mm_srli_si128(v, 8)), wc));
    }
    __m128i sh = _mm_cvtsi32_si128((int)prec);
    __m256i p16 = _mm256_permute4x64_epi64(_mm256_packs_epi32(_mm256_sra_epi32(a0, sh), _mm256_sra_epi32(a1, sh)), 0xD8);
    _mm_storeu_si128((__m128i *)(O + j * UP_U8_STRIP),
                     _mm_packus_epi16(_mm256_castsi256_si128(p16), _mm256_extracti128_si256(p16, 1)));
#else
    int32_t a[UP_U8_STRIP];
    for (int r = 0; r < UP_U8_STRIP; r++) a[r] = half;
    for (int c = 0; c < e; c++, src += UP_U8_STRIP)
      for (int r = 0; r < UP_U8_STRIP; r++) a[r] += (int32_t)src[r] * w[c];
    for (int r = 0; r < UP_U8_STRIP; r++) O[j * UP_U8_STRIP + r] = up_u8_round(a[r], prec);
#endif
  }
  int64_t j0 = 0;
#ifdef __AVX2__
  if (R == UP_U8_STRIP)
    for (; j0 + 16 <= OW; j0 += 16) up_u8_transpose16(O + j0 * UP_U8_STRIP, UP_U8_STRIP, dst + j0, OW);
#endif
  for (int64_t r = 0; r < R; r++)
    for (int64_t j = j0; j < OW; j++) dst[r * OW + j] = O[j * UP_U8_STRIP + r];
}

/* one plane of 1 x H x W (the antialiased ops are 2-d); bufA: H rows of OW,
 * T and O: the W pass's strips */
static void up_aa_plane_u8(const uint8_t *x, uint8_t *y, const UpGeom *g, const UpTables *t, const UpFixed *f,
                           uint8_t *bufA, uint8_t *T, uint8_t *O) {
  const int64_t H = g->in[1], W = g->in[2], OH = g->out[1], OW = g->out[2];
  const UpDim *dh = &t->d[1], *dw = &t->d[2];
  if (dh->ident && dw->ident) {
    memcpy(y, x, H * W);
    return;
  }
  const uint8_t *A = x;
  if (!dw->ident) {
    uint8_t *dst = dh->ident ? y : bufA;
    /* strips of 16 rows; rows no output row reads are skipped a strip at a time */
    for (int64_t h0 = 0; h0 < H; h0 += UP_U8_STRIP) {
      int64_t R = H - h0 < UP_U8_STRIP ? H - h0 : UP_U8_STRIP;
      bool any = dh->ident;
      for (int64_t r = 0; r < R && !any; r++) any = dh->used[h0 + r];
      if (any) up_u8_wstrip(x + h0 * W, W, R, dw, f->w[2], f->prec[2], OW, dst + h0 * OW, T, O);
    }
    A = dst;
  }
  if (!dh->ident)
    for (int64_t oh = 0; oh < OH; oh++)
      up_u8_rows(A, OW, dh->idx[oh * dh->n], f->w[1] + oh * dh->n, dh->cnt[oh], f->prec[1], y + oh * OW);
}

static int up_aa_planes_u8(const uint8_t *x, uint8_t *y, const UpGeom *g, const UpTables *t, const UpFixed *f) {
  int64_t nin = g->in[1] * g->in[2], nout = g->out[1] * g->out[2];
  size_t na = g->in[1] * g->out[2], nt = g->in[2] * UP_U8_STRIP, no = g->out[2] * UP_U8_STRIP;
  int failed = 0;
#pragma omp parallel if (g->P > 1 && g->P * (nin + nout) > 32768)
  {
    uint8_t *buf = malloc(na + nt + no);
    if (!buf) {
#pragma omp atomic write
      failed = 1;
    }
#pragma omp for
    for (int64_t p = 0; p < g->P; p++)
      if (buf) up_aa_plane_u8(x + p * nin, y + p * nout, g, t, f, buf, buf + na, buf + na + nt);
    free(buf);
  }
  if (failed) {
    THError_set(TH_ERR_MEMORY, "upsample: out of memory");
    return -1;
  }
  return 0;
}

static THTensor *up_aa_uint8(const THTensor *self, int mode, const UpGeom *g, bool align, const double *scales,
                             const int64_t *sz) {
  THTensor *y = THTensor_new(TH_UInt8, self->ndim, sz);
  THTensor *x = y ? at_contiguous(self) : NULL, *r = NULL;
  UpTables t;
  if (x && up_tables(&t, g, mode, align, scales, TH_Double, true) == 0) {
    UpFixed f;
    if (up_fixed(&f, g, &t) == 0) {
      if (up_aa_planes_u8((const uint8_t *)THTensor_data(x), (uint8_t *)THTensor_data(y), g, &t, &f) == 0) r = THTensor_retain(y);
      up_fixed_free(&f);
    }
    up_tables_free(&t);
  }
  THTensor_free(x); THTensor_free(y);
  return r;
}

typedef enum { UP_FWD, UP_BWD, UP_GATHER_ } UpKind;

/* the kernel over every plane; src/dst planes are the input/output of the
 * forward, grad_output/grad_input of the backward. Each thread has its own
 * pass buffers. Returns -1 (error set) when they cannot be allocated. */
static int up_planes(UpKind kind, THDtype ct, const void *src, void *dst, const UpGeom *g, const UpTables *t) {
  int64_t nin = g->in[0] * g->in[1] * g->in[2], nout = g->out[0] * g->out[1] * g->out[2];
  int64_t sin = kind == UP_BWD ? nout : nin, sout = kind == UP_BWD ? nin : nout;
  int64_t na = kind == UP_GATHER_ ? 0 : g->in[0] * g->in[1] * g->out[2];
  int64_t nb = kind == UP_GATHER_ ? 0 : g->in[0] * g->out[1] * g->out[2];
  size_t es = THDtype_size(ct);
  const char *s = (const char *)src;
  char *d = (char *)dst;
  int failed = 0;
#pragma omp parallel if (g->P > 1 && g->P * (nin + nout) > 32768)
  {
    char *buf = na + nb ? malloc((na + nb) * es) : NULL;
    if (na + nb && !buf) {
#pragma omp atomic write
      failed = 1;
    }
#pragma omp for
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
      } else if (!buf) {
        continue;
      } else if (ct == TH_Double) {
        double *A = (double *)buf, *B = A + na;
        if (kind == UP_FWD) up_fwd_plane_double(sp, dp, g, t, A, B);
        else up_bwd_plane_double(sp, dp, g, t, A, B);
      } else {
        float *A = (float *)buf, *B = A + na;
        if (kind == UP_FWD) up_fwd_plane_float(sp, dp, g, t, A, B);
        else up_bwd_plane_float(sp, dp, g, t, A, B);
      }
    }
    free(buf);
  }
  if (failed) {
    THError_set(TH_ERR_MEMORY, "upsample: out of memory");
    return -1;
  }
  return 0;
}

static const char *const KERNEL_NAME[] = { "compute_indices_weights_nearest", "compute_indices_weights_nearest",
                                           "compute_indices_weights_linear", "compute_indices_weights_cubic" };

/* the dtypes torch's CPU kernels take: floating ones, and uint8 for the nearest modes;
 * float, double and (forward only, fixed point) uint8 for the antialiased ones */
static int up_check_dtype(THDtype dt, int mode, const char *name, bool fwd) {
  if (mode & AT_UP_AA) {
    if (dt == TH_Float || dt == TH_Double || (fwd && dt == TH_UInt8)) return 0;
    if (dt == TH_UInt8)   /* torch's backward kernel name: upsample_bilinear2d_aa_backward_cpu */
      THError_set(TH_ERR_NOTIMPL, "\"%s_backward_cpu\" not implemented for 'Byte'", name + 1);
    else
      THError_set(TH_ERR_NOTIMPL, "\"compute_index_ranges_weights\" not implemented for '%s'", THDtype_info[dt].legacy);
    return -1;
  }
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
  if (mode & AT_UP_AA) {
    THError_set(TH_ERR_NOTIMPL, "cthtorch: %s on CUDA is not implemented", name);
    return NULL;
  }
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

static THTensor *upsample_nchw(const THTensor *self, int mode, int nsp, const ATIntList *output_size, bool align,
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
  if (up_check_dtype(self->dtype, mode, name, true) < 0) return NULL;
  double scales[3];
  up_scales(scales_d, scales_h, scales_w, scales);
  int64_t sz[5] = { self->sizes[0], self->sizes[1] };
  for (int d = 0; d < nsp; d++) sz[2 + d] = output_size->v[d];
  if (THTensor_device(self) >= 0) return up_cuda(false, self, self->ndim, sz, self->dtype, &g, mode, align, scales, name);
  if ((mode & AT_UP_AA) && self->dtype == TH_UInt8) return up_aa_uint8(self, mode, &g, align, scales, sz);
  bool nearest = mode == TH_UP_NEAREST || mode == TH_UP_NEAREST_EXACT;
  THDtype ct = nearest ? self->dtype : self->dtype == TH_Double ? TH_Double : TH_Float;
  /* the output first: an impossible size fails there, before its tables */
  THTensor *y = THTensor_new(ct, self->ndim, sz);
  THTensor *x = !y ? NULL : nearest ? at_contiguous(self) : at_contiguous_as(self, ct), *r = NULL;
  UpTables t;
  /* nearest tables hold indices only; their weights (1) are never read */
  if (x && up_tables(&t, &g, mode, align, scales, ct == TH_Double ? TH_Double : TH_Float, true) == 0) {
    int rc = up_planes(nearest ? UP_GATHER_ : UP_FWD, ct, THTensor_data(x), THTensor_data(y), &g, &t);
    up_tables_free(&t);
    if (rc == 0) r = ct == self->dtype ? THTensor_retain(y) : at_to_dtype(y, self->dtype, false);
  }
  THTensor_free(x); THTensor_free(y);
  return r;
}

/* the result keeps a channels-last input's layout, as torch's */
THTensor *at_upsample(const THTensor *self, int mode, int nsp, const ATIntList *output_size, bool align,
                      ATOptDouble scales_d, ATOptDouble scales_h, ATOptDouble scales_w, const char *name) {
  THTensor *out = upsample_nchw(self, mode, nsp, output_size, align, scales_d, scales_h, scales_w, name);
  return at_keep_format(self, &out) < 0 ? NULL : out;
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
  if ((mode & AT_UP_AA) && up_check_dtype(grad->dtype, mode, name, false) < 0) return NULL;
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
  if (gy && up_tables(&t, &g, mode, align, scales, ct, false) == 0) {
    int rc = up_planes(UP_BWD, ct, THTensor_data(gy), THTensor_data(gi), &g, &t);
    up_tables_free(&t);
    if (rc == 0) r = ct == grad->dtype ? THTensor_retain(gi) : at_to_dtype(gi, grad->dtype, false);
  }
  THTensor_free(gy); THTensor_free(gi);
  return r;
}
