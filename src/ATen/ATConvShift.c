/* Stride-1 convolution without im2col. The image is copied once into a
 * zero-padded buffer (channel stride CS); the output is computed on rows as
 * wide as the padded input (Wp), so tap (kh, kw) reads the padded image at a
 * constant offset. The KW taps of a kernel row are stacked: xk holds KW
 * copies of the padded image, copy kw shifted left by kw*DW, so for each kh
 *   out_ext += W_kh (O x KW*C) @ xk[:, kh*DH*Wp : kh*DH*Wp + OH*Wp]
 * KH GEMMs with K = KW*C (3 GEMMs with K = 3C for 3x3) replace one GEMM with
 * K = C*KH*KW and the 9x column copy of im2col, and run better than KH*KW
 * thin GEMMs with K = C. The extra Wp - OW columns per row are dropped
 * (forward) or held at zero (backward). CS leaves (KW-1)*DW spare elements
 * after each channel so no two GEMM rows ever touch the same address.
 * Weights are packed [KH][O][KW*C]. */
#include "ATConv.h"
#include "ATBlas.h"

#include <string.h>

typedef struct { int64_t Hp, Wp, CS, NE; } Shift;

static Shift shift_of(const ConvGeom *g) {
  Shift s;
  s.Hp = g->H + 2 * g->PH;
  s.Wp = g->W + 2 * g->PW;
  s.CS = s.Hp * s.Wp + (g->KW - 1) * g->DW;
  s.NE = g->OH * s.Wp;
  return s;
}

bool at_conv_shift_ok(const ConvGeom *g) {
  /* K = C per tap must be wide enough for GEMM to run well */
  return g->SH == 1 && g->SW == 1 && g->G == 1 && g->C >= 16 && g->KH * g->KW > 1;
}

int64_t at_conv_shift_xp_elems(const ConvGeom *g) { return g->KW * g->C * shift_of(g).CS; }
int64_t at_conv_shift_ext_elems(const ConvGeom *g) { return g->O * shift_of(g).NE; }

#define DEFINE_SHIFT(T)                                                                          \
  static void pack_##T(const T *w, T *wt, const ConvGeom *g) {                                  \
    int64_t KC = g->KW * g->C;                                                                   \
    for (int64_t o = 0; o < g->O; o++)                                                           \
      for (int64_t c = 0; c < g->C; c++)                                                         \
        for (int64_t kh = 0; kh < g->KH; kh++)                                                   \
          for (int64_t kw = 0; kw < g->KW; kw++)                                                 \
            wt[(kh * g->O + o) * KC + kw * g->C + c] = w[((o * g->C + c) * g->KH + kh) * g->KW + kw]; \
  }                                                                                              \
  /* the weight grad comes as [KH][KW*C][O] (the GEMM runs better that way round) */              \
  static void unpack_add_##T(const T *wt, T *w, const ConvGeom *g) {                            \
    int64_t KC = g->KW * g->C;                                                                   \
    for (int64_t o = 0; o < g->O; o++)                                                           \
      for (int64_t c = 0; c < g->C; c++)                                                         \
        for (int64_t kh = 0; kh < g->KH; kh++)                                                   \
          for (int64_t kw = 0; kw < g->KW; kw++)                                                 \
            w[((o * g->C + c) * g->KH + kh) * g->KW + kw] += wt[(kh * KC + kw * g->C + c) * g->O + o]; \
  }                                                                                              \
  /* copies kw = 1..KW-1 of the padded image (copy 0), shifted by kw*DW */                      \
  static void stack_##T(T *xk, const ConvGeom *g, const Shift *s) {                             \
    for (int64_t kw = 1; kw < g->KW; kw++)                                                       \
      for (int64_t c = 0; c < g->C; c++) {                                                       \
        T *d = xk + (kw * g->C + c) * s->CS;                                                     \
        int64_t sh = kw * g->DW;                                                                 \
        memcpy(d, xk + c * s->CS + sh, (size_t)(s->CS - sh) * sizeof(T));                       \
        memset(d + s->CS - sh, 0, (size_t)sh * sizeof(T));                                      \
      }                                                                                          \
  }                                                                                              \
  /* each channel zero-padded into a plane of CS elements */                                   \
  static void pad_##T(const T *x, T *xp, const ConvGeom *g, int64_t CS) {                       \
    int64_t Wp = g->W + 2 * g->PW;                                                               \
    for (int64_t c = 0; c < g->C; c++) {                                                         \
      T *d = xp + c * CS;                                                                        \
      const T *src = x + c * g->H * g->W;                                                        \
      memset(d, 0, (size_t)(g->PH * Wp) * sizeof(T));                                            \
      for (int64_t h = 0; h < g->H; h++) {                                                       \
        T *row = d + (h + g->PH) * Wp;                                                           \
        for (int64_t i = 0; i < g->PW; i++) row[i] = 0;                                          \
        memcpy(row + g->PW, src + h * g->W, (size_t)g->W * sizeof(T));                           \
        for (int64_t i = g->PW + g->W; i < Wp; i++) row[i] = 0;                                  \
      }                                                                                          \
      memset(d + (g->PH + g->H) * Wp, 0, (size_t)(CS - (g->PH + g->H) * Wp) * sizeof(T));        \
    }                                                                                            \
  }                                                                                              \
  /* rows (c, kh, kw) of gcol, for channels c0 .. c0+cb, added into the padded \
   * grad image at their taps' offsets */                                                        \
  static void tap_add_##T(const T *gcol, T *gxp, int64_t c0, int64_t cb, const ConvGeom *g, const Shift *s) { \
    for (int64_t c = 0; c < cb; c++) {                                                           \
      T *d = gxp + (c0 + c) * s->CS;                                                             \
      for (int64_t kh = 0; kh < g->KH; kh++)                                                     \
        for (int64_t kw = 0; kw < g->KW; kw++) {                                                 \
          const T *r = gcol + ((c * g->KH + kh) * g->KW + kw) * s->NE;                           \
          T *dd = d + kh * g->DH * s->Wp + kw * g->DW;                                           \
          _Pragma("omp simd") for (int64_t j = 0; j < s->NE; j++) dd[j] += r[j];                 \
        }                                                                                        \
    }                                                                                            \
  }
DEFINE_SHIFT(float)
DEFINE_SHIFT(double)

void at_conv_shift_pack_w(bool dbl, const void *w, void *wt, const ConvGeom *g) {
  if (dbl) pack_double(w, wt, g); else pack_float(w, wt, g);
}

void at_conv_shift_unpack_add(bool dbl, const void *gwt, void *gw, const ConvGeom *g) {
  if (dbl) unpack_add_double(gwt, gw, g); else unpack_add_float(gwt, gw, g);
}

void at_conv_pad_float(const float *x, float *xp, const ConvGeom *g, int64_t CS) { pad_float(x, xp, g, CS); }

/* the padded image in copy 0 of xk, and the shifted copies */
static void fill_stack(bool dbl, const void *x, void *xk, const ConvGeom *g, const Shift *s) {
  if (dbl) { pad_double(x, xk, g, s->CS); stack_double(xk, g, s); }
  else { pad_float(x, xk, g, s->CS); stack_float(xk, g, s); }
}

void at_conv_shift_fwd(bool dbl, const void *x, const void *wt, void *out, void *xk, void *ext, const ConvGeom *g) {
  Shift s = shift_of(g);
  int es = dbl ? 8 : 4;
  int64_t KC = g->KW * g->C;
  fill_stack(dbl, x, xk, g, &s);
  for (int64_t kh = 0; kh < g->KH; kh++)
    at_gemm(dbl, false, false, g->O, s.NE, KC, 1.0, (const char *)wt + kh * g->O * KC * es, KC,
            (const char *)xk + kh * g->DH * s.Wp * es, s.CS, kh ? 1.0 : 0.0, ext, s.NE);
  for (int64_t o = 0; o < g->O; o++)   /* drop the extra columns */
    for (int64_t oh = 0; oh < g->OH; oh++)
      memcpy((char *)out + ((o * g->OH + oh) * g->OW) * es, (const char *)ext + (o * s.NE + oh * s.Wp) * es,
             (size_t)(g->OW * es));
}

void at_conv_shift_bwd(bool dbl, const void *x, const void *w, const void *wt, const void *gy, void *gi, void *gwt,
                       void *xk, void *ext, const ConvGeom *g) {
  Shift s = shift_of(g);
  int es = dbl ? 8 : 4;
  int64_t KC = g->KW * g->C;
  /* grad_output on padded-width rows, extra columns zero */
  memset(ext, 0, (size_t)(g->O * s.NE * es));
  for (int64_t o = 0; o < g->O; o++)
    for (int64_t oh = 0; oh < g->OH; oh++)
      memcpy((char *)ext + (o * s.NE + oh * s.Wp) * es, (const char *)gy + ((o * g->OH + oh) * g->OW) * es,
             (size_t)(g->OW * es));
  if (gwt) {   /* gW_kh^T (KW*C x O) += xk_kh (KW*C x NE) @ gy_ext^T (NE x O): ~13% faster than gW_kh = gy_ext @ xk_kh^T */
    fill_stack(dbl, x, xk, g, &s);
    for (int64_t kh = 0; kh < g->KH; kh++)
      at_gemm(dbl, false, true, KC, g->O, s.NE, 1.0, (const char *)xk + kh * g->DH * s.Wp * es, s.CS, ext, s.NE, 1.0,
              (char *)gwt + kh * KC * g->O * es, g->O);
  }
  if (gi) {
    /* grad of the padded image, in copy 0 of xk. Per chunk of channels, one
     * GEMM gives every tap's rows, gcol = W^T (cb*KH*KW x O) @ gy_ext, in
     * the spare copies of xk; each row is then added in at its tap's offset.
     * (KH*KW GEMMs with K = O, one per tap, each repacked gy_ext.) */
    memset(xk, 0, (size_t)(g->C * s.CS * es));
    int64_t taps = g->KH * g->KW, cb = (g->KW - 1) * g->C * s.CS / (taps * s.NE);
    if (cb > g->C) cb = g->C;
    if (cb >= 8 && w) {
      char *gcol = (char *)xk + g->C * s.CS * es;
      for (int64_t c0 = 0; c0 < g->C; c0 += cb) {
        int64_t n = g->C - c0 < cb ? g->C - c0 : cb;
        at_gemm(dbl, true, false, n * taps, s.NE, g->O, 1.0, (const char *)w + c0 * taps * es, g->C * taps, ext, s.NE,
                0.0, gcol, s.NE);
        if (dbl) tap_add_double((const double *)gcol, xk, c0, n, g, &s);
        else tap_add_float((const float *)gcol, xk, c0, n, g, &s);
      }
    } else
      for (int64_t kh = 0; kh < g->KH; kh++)
        for (int64_t kw = 0; kw < g->KW; kw++)
          at_gemm(dbl, true, false, g->C, s.NE, g->O, 1.0, (const char *)wt + (kh * g->O * KC + kw * g->C) * es, KC,
                  ext, s.NE, 1.0, (char *)xk + (kh * g->DH * s.Wp + kw * g->DW) * es, s.CS);
    for (int64_t c = 0; c < g->C; c++)
      for (int64_t h = 0; h < g->H; h++)
        memcpy((char *)gi + ((c * g->H + h) * g->W) * es, (const char *)xk + (c * s.CS + (h + g->PH) * s.Wp + g->PW) * es,
               (size_t)(g->W * es));
  }
}
