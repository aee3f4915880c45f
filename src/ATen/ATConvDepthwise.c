/* Depthwise conv2d (groups == in_channels, each output channel reading one
 * input channel), direct. Through im2col + GEMM each group is a GEMM of one
 * output row with K = KH*KW (9 or 25): the copy dominates and the GEMM is too
 * thin to run well, so MobileNet/EfficientNet/ConvNeXt spent 3-5x torch's
 * time here. The loops below run along output rows: for each tap, a row of
 * the output is an axpy of an input row (contiguous when the stride is 1),
 * which the compiler vectorizes; rows stay in L1. Planes (forward) or input
 * channels (backward) are shared out across threads. */
#include "ATConv.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* (the tap table holds up to 64 kernel columns) */
bool at_conv_depthwise_ok(const ConvGeom *g) { return g->G > 1 && g->C == g->G && g->KW <= 64; }

/* each tap's first input column and valid output columns, once per call */
typedef struct { int64_t iw0[64], lo[64], hi[64]; } TapCols;

static void tap_cols(const ConvGeom *g, TapCols *t) {
  for (int64_t kw = 0; kw < g->KW; kw++) {
    t->iw0[kw] = kw * g->DW - g->PW;
    at_window_cols(t->iw0[kw], g->W, g->SW, g->OW, &t->lo[kw], &t->hi[kw]);
  }
}

/* worth a parallel region: the taps times outputs of the whole call */
static bool parallel_worth(const ConvGeom *g) {
  return omp_get_max_threads() > 1 && g->N * g->O * g->OH * g->OW * g->KH * g->KW >= 65536;
}

#define DEFINE_DEPTHWISE(T)                                                                         \
  /* y (OH x OW) = x (H x W) correlated with w (KH x KW) */                                         \
  static void fwd_plane_##T(const T *restrict x, const T *restrict w, T *restrict y, const ConvGeom *g, \
                            const TapCols *tc) {                                                    \
    int64_t OW = g->OW, SW = g->SW;                                                                 \
    for (int64_t oh = 0; oh < g->OH; oh++) {                                                        \
      T *restrict yr = y + oh * OW;                                                                 \
      memset(yr, 0, (size_t)OW * sizeof(T));                                                        \
      for (int64_t kh = 0; kh < g->KH; kh++) {                                                      \
        int64_t ih = oh * g->SH - g->PH + kh * g->DH;                                               \
        if (ih < 0 || ih >= g->H) continue;                                                         \
        for (int64_t kw = 0; kw < g->KW; kw++) {                                                    \
          const T *restrict xr = x + ih * g->W + tc->iw0[kw];                                       \
          T wv = w[kh * g->KW + kw];                                                                \
          if (SW == 1)                                                                              \
            for (int64_t ow = tc->lo[kw]; ow < tc->hi[kw]; ow++) yr[ow] += wv * xr[ow];             \
          else                                                                                      \
            for (int64_t ow = tc->lo[kw]; ow < tc->hi[kw]; ow++) yr[ow] += wv * xr[ow * SW];        \
        }                                                                                           \
      }                                                                                             \
    }                                                                                               \
  }                                                                                                 \
  /* gi (H x W) += w scattered by gy (OH x OW), when gi is not NULL; gw (KH x KW) += gy \
   * correlated with x, when gw is not NULL */                                                      \
  static void bwd_plane_##T(const T *restrict x, const T *restrict w, const T *restrict gy,         \
                            T *restrict gi, T *restrict gw, const ConvGeom *g, const TapCols *tc) { \
    int64_t OW = g->OW, SW = g->SW;                                                                 \
    for (int64_t oh = 0; oh < g->OH; oh++) {                                                        \
      const T *restrict gr = gy + oh * OW;                                                          \
      for (int64_t kh = 0; kh < g->KH; kh++) {                                                      \
        int64_t ih = oh * g->SH - g->PH + kh * g->DH;                                               \
        if (ih < 0 || ih >= g->H) continue;                                                         \
        for (int64_t kw = 0; kw < g->KW; kw++) {                                                    \
          int64_t lo = tc->lo[kw], hi = tc->hi[kw], off = ih * g->W + tc->iw0[kw];                  \
          if (gi) {                                                                                 \
            T wv = w[kh * g->KW + kw];                                                              \
            T *restrict ir = gi + off;                                                              \
            if (SW == 1) for (int64_t ow = lo; ow < hi; ow++) ir[ow] += wv * gr[ow];                \
            else for (int64_t ow = lo; ow < hi; ow++) ir[ow * SW] += wv * gr[ow];                   \
          }                                                                                         \
          if (gw) {                                                                                 \
            const T *restrict xr = x + off;                                                         \
            T s = 0;                                                                                \
            if (SW == 1) for (int64_t ow = lo; ow < hi; ow++) s += gr[ow] * xr[ow];                 \
            else for (int64_t ow = lo; ow < hi; ow++) s += gr[ow] * xr[ow * SW];                    \
            gw[kh * g->KW + kw] += s;                                                               \
          }                                                                                         \
        }                                                                                           \
      }                                                                                             \
    }                                                                                               \
  }                                                                                                 \
  static void fwd_##T(const T *x, const T *w, T *y, const ConvGeom *g, const TapCols *tc) {         \
    int64_t m = g->O / g->C, L = g->OH * g->OW, HW = g->H * g->W, KK = g->KH * g->KW;               \
    _Pragma("omp parallel for schedule(static) if (parallel_worth(g))")                             \
    for (int64_t p = 0; p < g->N * g->O; p++) {                                                     \
      int64_t n = p / g->O, o = p % g->O;                                                           \
      fwd_plane_##T(x + (n * g->C + o / m) * HW, w + o * KK, y + p * L, g, tc);                     \
    }                                                                                               \
  }                                                                                                 \
  /* by input channel: its grad_input planes and its outputs' weights belong \
   * to one thread */                                                                               \
  static void bwd_##T(const T *x, const T *w, const T *gy, T *gi, T *gw, const ConvGeom *g,         \
                      const TapCols *tc) {                                                          \
    int64_t m = g->O / g->C, L = g->OH * g->OW, HW = g->H * g->W, KK = g->KH * g->KW;               \
    _Pragma("omp parallel for schedule(static) if (parallel_worth(g))")                             \
    for (int64_t c = 0; c < g->C; c++) {                                                            \
      if (gw) memset(gw + c * m * KK, 0, (size_t)(m * KK) * sizeof(T));                             \
      for (int64_t n = 0; n < g->N; n++) {                                                          \
        const T *xp = x + (n * g->C + c) * HW;                                                      \
        T *ip = gi ? gi + (n * g->C + c) * HW : NULL;                                               \
        if (ip) memset(ip, 0, (size_t)HW * sizeof(T));                                              \
        for (int64_t j = 0; j < m; j++) {                                                           \
          int64_t o = c * m + j;                                                                    \
          bwd_plane_##T(xp, w + o * KK, gy + (n * g->O + o) * L, ip, gw ? gw + o * KK : NULL, g, tc); \
        }                                                                                           \
      }                                                                                             \
    }                                                                                               \
  }

DEFINE_DEPTHWISE(float)
DEFINE_DEPTHWISE(double)

/* ---- float32, register-blocked: each output vector (8 columns, two at a time) sums all its
 * taps in registers and is stored once; the old loops above read and wrote the output row once
 * per tap. Input vectors are unaligned loads at each tap's offset (stride 2: two loads, even
 * lanes). Columns whose window leaves the row go through the scalar loop with bounds. ---- */
typedef float v8f __attribute__((vector_size(32)));
typedef int v8i __attribute__((vector_size(32)));
static inline v8f ld8(const float *p) { v8f v; memcpy(&v, p, sizeof v); return v; }
static inline void st8(float *p, v8f v) { memcpy(p, &v, sizeof v); }
/* p[0], p[S], ..., p[7 S] for S = 1 or 2 */
static inline __attribute__((always_inline)) v8f lds(const float *p, int64_t S) {
  if (S == 1) return ld8(p);
  return __builtin_shuffle(ld8(p), ld8(p + 8), (v8i){ 0, 2, 4, 6, 8, 10, 12, 14 });
}

/* out (n_rows x n_cols) = sum over kh, kw of w[kh][kw] src[o RA + RB + kh RC][j S + off[kw]],
 * src (sh x sw) zero outside. src goes once into a zero-padded copy (buf, corr_buf_elems), so
 * every column of a row is vector blocks: on 14x14 and 28x28 planes the edge columns were half
 * the row. KW a constant in the specialized copies, so the taps unroll. */
static inline int64_t corr_pad(const int64_t *off, int64_t KW) {
  int64_t mn = 0;
  for (int64_t t = 0; t < KW; t++) if (off[t] < mn) mn = off[t];
  return -mn;
}
static int64_t corr_row_len(int64_t n_cols, int64_t sw, const int64_t *off, int64_t KW, int64_t S) {
  int64_t mx = off[0];
  for (int64_t t = 1; t < KW; t++) if (off[t] > mx) mx = off[t];
  const int64_t ncr = (n_cols + 15) / 16 * 16, P = corr_pad(off, KW);   /* blocks of 16 columns */
  int64_t len = (ncr - 1) * S + mx + P + S;
  return len > P + sw ? len : P + sw;
}
static inline __attribute__((always_inline)) void corr_plane_k(float *restrict out, int64_t n_rows, int64_t n_cols,
                                                               const float *src, int64_t sh, int64_t sw,
                                                               const float *w, int64_t KH, int KW, int64_t RA,
                                                               int64_t RB, int64_t RC, const int64_t *off, int64_t S,
                                                               float *restrict buf) {
  const int64_t P = corr_pad(off, KW), Lp = corr_row_len(n_cols, sw, off, KW, S);
  memset(buf, 0, (size_t)(sh * Lp) * sizeof(float));
  for (int64_t r = 0; r < sh; r++) memcpy(buf + r * Lp + P, src + r * sw, (size_t)sw * sizeof(float));
  int64_t po[64];
  for (int t = 0; t < KW; t++) po[t] = off[t] + P;
  int64_t o = 0;
  /* consecutive rows (row step 1, dilation 1; the forward's RC = 1, grad_input's -1): rows o
   * and o + 1 share all but one source row, so each source vector is loaded once for both;
   * each output's taps stay in kh, kw order */
  if (RA == 1 && (RC == 1 || RC == -1) && S == 1)
    for (; o + 2 <= n_rows; o += 2) {
      const float *rows[65];
      for (int64_t k = 0; k <= KH; k++) {
        const int64_t r = o + RB + (RC == 1 ? k : 1 - k);
        rows[k] = r >= 0 && r < sh ? buf + r * Lp : NULL;
      }
      float *o0 = out + o * n_cols, *o1 = o0 + n_cols;
      for (int64_t j = 0; j < n_cols; j += 16) {
        v8f s0 = { 0 }, s1 = { 0 }, u0 = { 0 }, u1 = { 0 };
        for (int64_t k = 0; k <= KH; k++) {
          if (!rows[k]) continue;
          /* the source row is row o's kh = k (row o + 1's k - 1) going down, the reverse going up */
          const int64_t ko = RC == 1 ? k : k - 1, ki = RC == 1 ? k - 1 : k;
          const float *wa = w + ko * KW, *wb = w + ki * KW;
          for (int t = 0; t < KW; t++) {
            const float *p = rows[k] + j + po[t];
            const v8f a = ld8(p), b = ld8(p + 8);
            if (ko >= 0 && ko < KH) { s0 += wa[t] * a; s1 += wa[t] * b; }
            if (ki >= 0 && ki < KH) { u0 += wb[t] * a; u1 += wb[t] * b; }
          }
        }
        if (j + 16 <= n_cols) {
          st8(o0 + j, s0); st8(o0 + j + 8, s1); st8(o1 + j, u0); st8(o1 + j + 8, u1);
          continue;
        }
        float tmp[32];
        st8(tmp, s0); st8(tmp + 8, s1); st8(tmp + 16, u0); st8(tmp + 24, u1);
        memcpy(o0 + j, tmp, (size_t)(n_cols - j) * sizeof(float));
        memcpy(o1 + j, tmp + 16, (size_t)(n_cols - j) * sizeof(float));
      }
    }
  for (; o < n_rows; o++) {
    const float *rows[64], *wt[64];
    int R = 0;
    for (int64_t kh = 0; kh < KH; kh++) {
      const int64_t r = o * RA + RB + kh * RC;
      if (r < 0 || r >= sh) continue;
      rows[R] = buf + r * Lp;
      wt[R++] = w + kh * KW;
    }
    float *orow = out + o * n_cols;
    for (int64_t j = 0; j < n_cols; j += 16) {
      v8f s0 = { 0 }, s1 = { 0 };
      const bool two = j + 8 < n_cols;
      for (int r = 0; r < R; r++)
        for (int t = 0; t < KW; t++) {
          const float *p = rows[r] + j * S + po[t];
          const float wv = wt[r][t];
          s0 += wv * lds(p, S);
          if (two) s1 += wv * lds(p + 8 * S, S);
        }
      if (j + 16 <= n_cols) { st8(orow + j, s0); st8(orow + j + 8, s1); continue; }
      float tmp[16];
      st8(tmp, s0);
      st8(tmp + 8, s1);
      memcpy(orow + j, tmp, (size_t)(n_cols - j) * sizeof(float));
    }
  }
}
static int64_t corr_buf_elems(int64_t n_cols, int64_t sh, int64_t sw, const int64_t *off, int64_t KW, int64_t S) {
  return sh * corr_row_len(n_cols, sw, off, KW, S);
}
static void corr_plane(float *out, int64_t n_rows, int64_t n_cols, const float *src, int64_t sh, int64_t sw,
                       const float *w, int64_t KH, int64_t KW, int64_t RA, int64_t RB, int64_t RC, const int64_t *off,
                       int64_t S, float *buf) {
  switch (KW) {
  case 3: corr_plane_k(out, n_rows, n_cols, src, sh, sw, w, KH, 3, RA, RB, RC, off, S, buf); break;
  case 5: corr_plane_k(out, n_rows, n_cols, src, sh, sw, w, KH, 5, RA, RB, RC, off, S, buf); break;
  case 7: corr_plane_k(out, n_rows, n_cols, src, sh, sw, w, KH, 7, RA, RB, RC, off, S, buf); break;
  default: corr_plane_k(out, n_rows, n_cols, src, sh, sw, w, KH, (int)KW, RA, RB, RC, off, S, buf); break;
  }
}

/* the fast float path takes column strides 1 and 2 and kernels of up to 64 rows */
static bool fast_float(const ConvGeom *g) { return (g->SW == 1 || g->SW == 2) && g->KH <= 64; }

/* gw[kh][kw] += sum over oh, ow of gy[oh][ow] x[ih][ow SW + iw0[kw]]: 8-lane partial sums
 * per tap over the whole plane, added up at the end */
static void bwd_weight_plane_fast(const float *x, const float *gy, float *gw, const ConvGeom *g, const TapCols *tc) {
  const int64_t KK = g->KH * g->KW, S = g->SW;
  v8f acc[64 * 4];
  float tail[64 * 4];
  const bool vec = KK <= 64 * 4;
  for (int64_t k = 0; vec && k < KK; k++) { acc[k] = (v8f){ 0 }; tail[k] = 0; }
  for (int64_t oh = 0; oh < g->OH; oh++) {
    const float *gr = gy + oh * g->OW;
    for (int64_t kh = 0; kh < g->KH; kh++) {
      int64_t ih = oh * g->SH - g->PH + kh * g->DH;
      if (ih < 0 || ih >= g->H) continue;
      for (int64_t kw = 0; kw < g->KW; kw++) {
        const float *xr = x + ih * g->W + tc->iw0[kw];
        int64_t ow = tc->lo[kw];
        const int64_t hi = tc->hi[kw];
        if (!vec) {
          float s = 0;
          for (; ow < hi; ow++) s += gr[ow] * xr[ow * S];
          gw[kh * g->KW + kw] += s;
          continue;
        }
        v8f a0 = { 0 }, a1 = { 0 };
        /* stride 2 loads the odd element after the last one: the vector part stops short of W */
        const int64_t hv = S == 1 || (hi - 1) * 2 + tc->iw0[kw] + 1 < g->W ? hi : hi - 1;
        for (; ow + 16 <= hv; ow += 16) {
          a0 += ld8(gr + ow) * lds(xr + ow * S, S);
          a1 += ld8(gr + ow + 8) * lds(xr + (ow + 8) * S, S);
        }
        for (; ow + 8 <= hv; ow += 8) a0 += ld8(gr + ow) * lds(xr + ow * S, S);
        float s = 0;
        for (; ow < hi; ow++) s += gr[ow] * xr[ow * S];
        acc[kh * g->KW + kw] += a0 + a1;
        tail[kh * g->KW + kw] += s;
      }
    }
  }
  for (int64_t k = 0; vec && k < KK; k++) {
    float s = tail[k];
    for (int l = 0; l < 8; l++) s += acc[k][l];
    gw[k] += s;
  }
}


/* each thread's padded-plane scratch; NULL (out of memory) sends its planes to the loops above */
static void fwd_fast(const float *x, const float *w, float *y, const ConvGeom *g, const TapCols *tc) {
  int64_t m = g->O / g->C, L = g->OH * g->OW, HW = g->H * g->W, KK = g->KH * g->KW;
  const int64_t nb = corr_buf_elems(g->OW, g->H, g->W, tc->iw0, g->KW, g->SW);
#pragma omp parallel if (parallel_worth(g))
  {
    float *buf = malloc((size_t)nb * sizeof(float));
#pragma omp for schedule(static)
    for (int64_t p = 0; p < g->N * g->O; p++) {
      int64_t n = p / g->O, o = p % g->O;
      const float *xp = x + (n * g->C + o / m) * HW;
      if (buf)
        corr_plane(y + p * L, g->OH, g->OW, xp, g->H, g->W, w + o * KK, g->KH, g->KW, g->SH, -g->PH, g->DH,
                   tc->iw0, g->SW, buf);
      else
        fwd_plane_float(xp, w + o * KK, y + p * L, g, tc);
    }
    free(buf);
  }
}

/* by input channel, as bwd_##T. grad_input with stride 1 and one output per channel: the
 * forward's correlation read from gy, gi[ih][iw] = sum of w[kh][kw] gy[ih + PH - kh DH]
 * [iw + PW - kw DW]; else the scatter loop of bwd_plane_float */
static void bwd_fast(const float *x, const float *w, const float *gy, float *gi, float *gw, const ConvGeom *g,
                     const TapCols *tc) {
  int64_t m = g->O / g->C, L = g->OH * g->OW, HW = g->H * g->W, KK = g->KH * g->KW;
  int64_t off[64];
  for (int64_t kw = 0; kw < g->KW; kw++) off[kw] = g->PW - kw * g->DW;
  const bool gather = gi && m == 1 && g->SH == 1 && g->SW == 1;
  const int64_t nb = gather ? corr_buf_elems(g->W, g->OH, g->OW, off, g->KW, 1) : 0;
#pragma omp parallel if (parallel_worth(g))
  {
    float *buf = gather ? malloc((size_t)nb * sizeof(float)) : NULL;
#pragma omp for schedule(static)
    for (int64_t c = 0; c < g->C; c++) {
      if (gw) memset(gw + c * m * KK, 0, (size_t)(m * KK) * sizeof(float));
      for (int64_t n = 0; n < g->N; n++) {
        const float *xp = x + (n * g->C + c) * HW;
        float *ip = gi ? gi + (n * g->C + c) * HW : NULL;
        const bool gathered = ip && buf;
        if (gathered)
          corr_plane(ip, g->H, g->W, gy + (n * g->O + c) * L, g->OH, g->OW, w + c * KK, g->KH, g->KW, 1, g->PH,
                     -g->DH, off, 1, buf);
        else if (ip) memset(ip, 0, (size_t)HW * sizeof(float));
        for (int64_t j = 0; j < m; j++) {
          int64_t o = c * m + j;
          if (ip && !gathered) bwd_plane_float(xp, w + o * KK, gy + (n * g->O + o) * L, ip, NULL, g, tc);
          if (gw) bwd_weight_plane_fast(xp, gy + (n * g->O + o) * L, gw + o * KK, g, tc);
        }
      }
    }
    free(buf);
  }
}

void at_conv_depthwise_fwd(bool dbl, const void *x, const void *w, void *y, const ConvGeom *g) {
  TapCols tc;
  tap_cols(g, &tc);
  if (dbl) fwd_double(x, w, y, g, &tc);
  else if (fast_float(g)) fwd_fast(x, w, y, g, &tc);
  else fwd_float(x, w, y, g, &tc);
}

void at_conv_depthwise_bwd(bool dbl, const void *x, const void *w, const void *gy, void *gi, void *gw,
                           const ConvGeom *g) {
  TapCols tc;
  tap_cols(g, &tc);
  if (dbl) bwd_double(x, w, gy, gi, gw, g, &tc);
  else if (fast_float(g)) bwd_fast(x, w, gy, gi, gw, g, &tc);
  else bwd_float(x, w, gy, gi, gw, g, &tc);
}
