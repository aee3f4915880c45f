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

void at_conv_depthwise_fwd(bool dbl, const void *x, const void *w, void *y, const ConvGeom *g) {
  TapCols tc;
  tap_cols(g, &tc);
  if (dbl) fwd_double(x, w, y, g, &tc);
  else fwd_float(x, w, y, g, &tc);
}

void at_conv_depthwise_bwd(bool dbl, const void *x, const void *w, const void *gy, void *gi, void *gw,
                           const ConvGeom *g) {
  TapCols tc;
  tap_cols(g, &tc);
  if (dbl) bwd_double(x, w, gy, gi, gw, g, &tc);
  else bwd_float(x, w, gy, gi, gw, g, &tc);
}
