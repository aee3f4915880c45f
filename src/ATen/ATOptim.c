/* Fused optimizer updates (see ATOptim.h). Contraction is off so that each
 * product rounds where torch's separate ops round; the fmas written out are
 * the ones torch's `add(x, alpha=a)` kernels perform. */
#pragma GCC optimize("fp-contract=off")
#include "ATOptim.h"

#include <math.h>

/* One loop per variant, the flags compile-time constants inside it (a
 * branch per element keeps the loop from vectorizing). */
#define DEFINE_SGD(T, FMA)                                                                        \
  static inline __attribute__((always_inline)) void sgd_loop_##T(                                 \
      T *restrict p, const T *restrict g, T *restrict buf, int64_t n, T lr, T mom, T damp1, T wd,  \
      const bool neg, const bool decay, const bool has_buf, const bool first, const bool nesterov) { \
    _Pragma("omp parallel for simd if (n > 65536)")                                                \
    for (int64_t i = 0; i < n; i++) {                                                              \
      T d = neg ? -g[i] : g[i];                                                                    \
      if (decay) d = FMA(wd, p[i], d);                                                             \
      if (has_buf) {                                                                               \
        T b = first ? d : FMA(damp1, d, buf[i] * mom);                                             \
        buf[i] = b;                                                                                \
        d = nesterov ? FMA(mom, b, d) : b;                                                         \
      }                                                                                            \
      p[i] = FMA(-lr, d, p[i]);                                                                    \
    }                                                                                              \
  }                                                                                                \
  static void sgd_##T(T *p, const T *g, T *buf, int64_t n, T lr, T mom, T damp1, T wd, bool nesterov, \
                      bool maximize, bool first) {                                                 \
    bool decay = wd != 0;                                                                          \
    if (!buf) {                                                                                    \
      if (maximize) sgd_loop_##T(p, g, buf, n, lr, mom, damp1, wd, true, decay, false, false, false); \
      else if (decay) sgd_loop_##T(p, g, buf, n, lr, mom, damp1, wd, false, true, false, false, false); \
      else sgd_loop_##T(p, g, buf, n, lr, mom, damp1, wd, false, false, false, false, false);      \
    } else if (first)                                                                              \
      sgd_loop_##T(p, g, buf, n, lr, mom, damp1, wd, maximize, decay, true, true, nesterov);       \
    else if (maximize || nesterov)                                                                 \
      sgd_loop_##T(p, g, buf, n, lr, mom, damp1, wd, maximize, decay, true, false, nesterov);      \
    else if (decay) /* the common case: momentum + weight decay */                                 \
      sgd_loop_##T(p, g, buf, n, lr, mom, damp1, wd, false, true, true, false, false);             \
    else                                                                                           \
      sgd_loop_##T(p, g, buf, n, lr, mom, damp1, wd, false, false, true, false, false);            \
  }
DEFINE_SGD(float, fmaf)
DEFINE_SGD(double, fma)

static bool fusable(const THTensor *p, const THTensor *t) {
  return t && t->dtype == p->dtype && THTensor_isContiguous(t) && THTensor_numel(t) == THTensor_numel(p);
}

int at_sgd_step(THTensor *p, const THTensor *grad, THTensor *buf, double lr, double momentum, double dampening,
                double weight_decay, bool nesterov, bool maximize, bool first) {
  if ((p->dtype != TH_Float && p->dtype != TH_Double) || !THTensor_isContiguous(p) || !fusable(p, grad) ||
      (momentum != 0 && !fusable(p, buf))) {
    THError_set(TH_ERR_RUNTIME, "_sgd_step: needs contiguous float32/float64 tensors of one dtype and size");
    return -1;
  }
  int64_t n = THTensor_numel(p);
  void *b = momentum != 0 ? THTensor_data(buf) : NULL;
  if (p->dtype == TH_Float)
    sgd_float((float *)THTensor_data(p), (const float *)THTensor_data(grad), b, n, (float)lr, (float)momentum,
              (float)(1 - dampening), (float)weight_decay, nesterov, maximize, first);
  else
    sgd_double((double *)THTensor_data(p), (const double *)THTensor_data(grad), b, n, lr, momentum, 1 - dampening,
               weight_decay, nesterov, maximize, first);
  return 0;
}
