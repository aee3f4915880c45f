/* Stride-1 convolution without im2col. The image is copied once into a
 * zero-padded buffer (channel stride CS); the output is computed on rows as
 * wide as the padded input (Wp), so tap (kh, kw) reads the padded image at a
 * constant offset: out_ext += W_tap (O x C) @ xp[:, shift : shift + OH*Wp].
 * KH*KW GEMMs with K = C replace one GEMM with K = C*KH*KW and the 9x column
 * copy; the extra Wp - OW columns per row are dropped (forward) or held at
 * zero (backward). CS leaves (KW-1)*DW spare elements after each channel so
 * no two GEMM rows ever touch the same address. */
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

int64_t at_conv_shift_xp_elems(const ConvGeom *g) { return g->C * shift_of(g).CS; }
int64_t at_conv_shift_ext_elems(const ConvGeom *g) { return g->O * shift_of(g).NE; }

#define DEFINE_SHIFT(T)                                                                          \
  static void pack_##T(const T *w, T *wt, const ConvGeom *g) {                                  \
    int64_t taps = g->KH * g->KW;                                                                \
    for (int64_t o = 0; o < g->O; o++)                                                           \
      for (int64_t c = 0; c < g->C; c++)                                                         \
        for (int64_t t = 0; t < taps; t++) wt[(t * g->O + o) * g->C + c] = w[(o * g->C + c) * taps + t]; \
  }                                                                                              \
  static void unpack_add_##T(const T *wt, T *w, const ConvGeom *g) {                            \
    int64_t taps = g->KH * g->KW;                                                                \
    for (int64_t o = 0; o < g->O; o++)                                                           \
      for (int64_t c = 0; c < g->C; c++)                                                         \
        for (int64_t t = 0; t < taps; t++) w[(o * g->C + c) * taps + t] += wt[(t * g->O + o) * g->C + c]; \
  }                                                                                              \
  static void pad_##T(const T *x, T *xp, const ConvGeom *g, const Shift *s) {                   \
    for (int64_t c = 0; c < g->C; c++) {                                                         \
      T *d = xp + c * s->CS;                                                                     \
      const T *src = x + c * g->H * g->W;                                                        \
      memset(d, 0, (size_t)(g->PH * s->Wp) * sizeof(T));                                         \
      for (int64_t h = 0; h < g->H; h++) {                                                       \
        T *row = d + (h + g->PH) * s->Wp;                                                        \
        for (int64_t i = 0; i < g->PW; i++) row[i] = 0;                                          \
        memcpy(row + g->PW, src + h * g->W, (size_t)g->W * sizeof(T));                           \
        for (int64_t i = g->PW + g->W; i < s->Wp; i++) row[i] = 0;                               \
      }                                                                                          \
      memset(d + (g->PH + g->H) * s->Wp, 0, (size_t)(s->CS - (g->PH + g->H) * s->Wp) * sizeof(T)); \
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

static int64_t tap_shift(const ConvGeom *g, const Shift *s, int64_t kh, int64_t kw) {
  return kh * g->DH * s->Wp + kw * g->DW;
}

void at_conv_shift_fwd(bool dbl, const void *x, const void *wt, void *out, void *xp, void *ext, const ConvGeom *g) {
  Shift s = shift_of(g);
  int es = dbl ? 8 : 4;
  if (dbl) pad_double(x, xp, g, &s); else pad_float(x, xp, g, &s);
  for (int64_t kh = 0; kh < g->KH; kh++)
    for (int64_t kw = 0; kw < g->KW; kw++) {
      int64_t t = kh * g->KW + kw;
      at_gemm(dbl, false, false, g->O, s.NE, g->C, 1.0, (const char *)wt + t * g->O * g->C * es, g->C,
              (const char *)xp + tap_shift(g, &s, kh, kw) * es, s.CS, t ? 1.0 : 0.0, ext, s.NE);
    }
  for (int64_t o = 0; o < g->O; o++)   /* drop the extra columns */
    for (int64_t oh = 0; oh < g->OH; oh++)
      memcpy((char *)out + ((o * g->OH + oh) * g->OW) * es, (const char *)ext + (o * s.NE + oh * s.Wp) * es,
             (size_t)(g->OW * es));
}

void at_conv_shift_bwd(bool dbl, const void *x, const void *wt, const void *gy, void *gi, void *gwt, void *xp,
                       void *ext, const ConvGeom *g) {
  Shift s = shift_of(g);
  int es = dbl ? 8 : 4;
  /* grad_output on padded-width rows, extra columns zero */
  memset(ext, 0, (size_t)(g->O * s.NE * es));
  for (int64_t o = 0; o < g->O; o++)
    for (int64_t oh = 0; oh < g->OH; oh++)
      memcpy((char *)ext + (o * s.NE + oh * s.Wp) * es, (const char *)gy + ((o * g->OH + oh) * g->OW) * es,
             (size_t)(g->OW * es));
  if (gwt) {   /* gW_tap += gy_ext (O x NE) @ xp_shifted^T (NE x C) */
    if (dbl) pad_double(x, xp, g, &s); else pad_float(x, xp, g, &s);
    for (int64_t kh = 0; kh < g->KH; kh++)
      for (int64_t kw = 0; kw < g->KW; kw++) {
        int64_t t = kh * g->KW + kw;
        at_gemm(dbl, false, true, g->O, g->C, s.NE, 1.0, ext, s.NE, (const char *)xp + tap_shift(g, &s, kh, kw) * es,
                s.CS, 1.0, (char *)gwt + t * g->O * g->C * es, g->C);
      }
  }
  if (gi) {    /* gxp[:, shift:] += W_tap^T (C x O) @ gy_ext, then the interior is grad_input */
    memset(xp, 0, (size_t)(g->C * s.CS * es));
    for (int64_t kh = 0; kh < g->KH; kh++)
      for (int64_t kw = 0; kw < g->KW; kw++) {
        int64_t t = kh * g->KW + kw;
        at_gemm(dbl, true, false, g->C, s.NE, g->O, 1.0, (const char *)wt + t * g->O * g->C * es, g->C, ext, s.NE,
                1.0, (char *)xp + tap_shift(g, &s, kh, kw) * es, s.CS);
      }
    for (int64_t c = 0; c < g->C; c++)
      for (int64_t h = 0; h < g->H; h++)
        memcpy((char *)gi + ((c * g->H + h) * g->W) * es, (const char *)xp + (c * s.CS + (h + g->PH) * s.Wp + g->PW) * es,
               (size_t)(g->W * es));
  }
}
