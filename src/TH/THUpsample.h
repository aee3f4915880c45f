/* Where an upsampled output reads its input, along one dim: the source
 * indices and weights ("taps") of output index o, for every mode of
 * F.interpolate that is a separable filter (nearest, nearest-exact, linear,
 * cubic). Written once for gcc (src/ATen/ATUpsample.c) and nvcc
 * (src/THC/THCUpsample.cu), so the GPU reads what the CPU reads.
 *
 * The arithmetic is PyTorch's, step for step, so indices agree with torch at
 * every size (a float rounding moves a nearest pick by a whole pixel):
 *  - nearest: float scale (1/scale_factor when given, else in/out) times o,
 *    floored; out == in and out == 2*in are exact copies, as torch special-cases;
 *  - nearest-exact: floor((o + 0.5) * scale);
 *  - linear and cubic compute in T (float for every dtype but double): the
 *    source coordinate scale * (o + 0.5) - 0.5 (linear clamps it at 0), or
 *    scale * o with align_corners and scale (in-1)/(out-1); the index is
 *    floorf of it (torch's guard_index_and_lambda), the fraction clamped to [0, 1];
 *  - cubic: Keys' kernel with A = -0.75, taps at index-1 .. index+2 clamped to
 *    the border.
 * Plain C and C++. */
#ifndef TH_UPSAMPLE_H
#define TH_UPSAMPLE_H

#include "THScalarOps.h"

typedef enum { TH_UP_NEAREST, TH_UP_NEAREST_EXACT, TH_UP_LINEAR, TH_UP_CUBIC } THUpsampleMode;

#define TH_UPSAMPLE_MAXTAPS 4

static inline TH_HOSTDEV int th_upsample_ntaps(int mode) {
  return mode == TH_UP_CUBIC ? 4 : mode == TH_UP_LINEAR ? 2 : 1;
}

/* the source index of output o in a nearest mode */
static inline TH_HOSTDEV int64_t th_upsample_nearest(int mode, int64_t in, int64_t out, double scale, int64_t o) {
  if (mode == TH_UP_NEAREST && out == in) return o;
  if (mode == TH_UP_NEAREST && out == 2 * in) return o >> 1;
  float s = scale > 0 ? (float)(1.0 / scale) : (float)in / (float)out;
  float f = mode == TH_UP_NEAREST ? floorf((float)o * s) : floorf((float)((o + 0.5) * s));
  int64_t i = (int64_t)f;
  return i < in - 1 ? i : in - 1;
}

/* taps of output o: writes idx[0..n) and w[0..n), returns n. scale is the
 * user's scale factor of this dim, <= 0 for none. */
#define TH_DEFINE_UPSAMPLE_TAPS(T, SUF)                                                                   \
  static inline TH_HOSTDEV T th_upsample_cc1##SUF(T x) { /* |x| <= 1 */                                  \
    const T A = (T)-0.75;                                                                                \
    return ((A + 2) * x - (A + 3)) * x * x + 1;                                                          \
  }                                                                                                      \
  static inline TH_HOSTDEV T th_upsample_cc2##SUF(T x) { /* 1 < |x| < 2 */                               \
    const T A = (T)-0.75;                                                                                \
    return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;                                                    \
  }                                                                                                      \
  static inline TH_HOSTDEV int th_upsample_taps##SUF(int mode, bool align, int64_t in, int64_t out,       \
                                                     double scale, int64_t o, int64_t *idx, T *w) {       \
    if (mode == TH_UP_NEAREST || mode == TH_UP_NEAREST_EXACT) {                                          \
      idx[0] = th_upsample_nearest(mode, in, out, scale, o);                                             \
      w[0] = 1;                                                                                          \
      return 1;                                                                                          \
    }                                                                                                    \
    T s = align ? (out > 1 ? (T)(in - 1) / (T)(out - 1) : (T)0)                                          \
                : (scale > 0 ? (T)(1.0 / scale) : (T)in / (T)out);                                       \
    T real = align ? s * (T)o : s * ((T)o + (T)0.5) - (T)0.5;                                            \
    if (mode == TH_UP_LINEAR && real < 0) real = 0;                                                      \
    int64_t i0 = (int64_t)floorf((float)real);                                                           \
    if (i0 > in - 1) i0 = in - 1;                                                                        \
    T t = real - (T)i0;                                                                                  \
    t = t < 0 ? (T)0 : t > 1 ? (T)1 : t;                                                                 \
    if (mode == TH_UP_LINEAR) {                                                                          \
      idx[0] = i0;                                                                                       \
      idx[1] = i0 < in - 1 ? i0 + 1 : i0;                                                                \
      w[0] = (T)1 - t;                                                                                   \
      w[1] = t;                                                                                          \
      return 2;                                                                                          \
    }                                                                                                    \
    T t2 = (T)1 - t;                                                                                     \
    w[0] = th_upsample_cc2##SUF(t + 1);                                                                  \
    w[1] = th_upsample_cc1##SUF(t);                                                                      \
    w[2] = th_upsample_cc1##SUF(t2);                                                                     \
    w[3] = th_upsample_cc2##SUF(t2 + 1);                                                                 \
    for (int k = 0; k < 4; k++) {                                                                        \
      int64_t i = i0 - 1 + k;                                                                            \
      idx[k] = i < 0 ? 0 : i > in - 1 ? in - 1 : i;                                                      \
    }                                                                                                    \
    return 4;                                                                                            \
  }
TH_DEFINE_UPSAMPLE_TAPS(float, _float)
TH_DEFINE_UPSAMPLE_TAPS(double, _double)

#endif
