/* Fused optimizer updates (see ATOptim.h). Contraction is off so that each
 * product rounds where torch's separate ops round; the fmas written out are
 * the ones torch's kernels perform (its vector code is plain arithmetic on
 * GCC vector types, contracted where a product feeds a sum: add with alpha,
 * lerp, addcmul). */
#pragma GCC optimize("fp-contract=off")
#include "ATOptim.h"
#include "ATCuda.h"

#include <math.h>
#include <omp.h>

/* elements per zero test of the plain SGD step: a 128-wide embedding row is two */
#define SGD_BLOCK 64
/* a float's and a double's bits, read through the same pointer */
typedef uint32_t __attribute__((may_alias)) bits_float;
typedef uint64_t __attribute__((may_alias)) bits_double;

/* [*b, *e): this thread's share of n elements, whole cache lines each */
static inline void thread_range(int64_t n, int64_t *b, int64_t *e) {
  int tid = omp_get_thread_num(), nth = omp_get_num_threads();
  int64_t chunk = ((n + nth - 1) / nth + 15) & ~(int64_t)15;
  *b = tid * chunk < n ? tid * chunk : n;
  *e = *b + chunk < n ? *b + chunk : n;
}

/* One loop per variant, the flags compile-time constants inside it (a
 * branch per element keeps the loop from vectorizing). The parallel region
 * is the caller's, around the choice of variant: a region inside the
 * inlined loop is outlined once with the flags as runtime values, which
 * left every variant scalar. */
#define DEFINE_SGD(T, FMA)                                                                        \
  static inline __attribute__((always_inline)) void sgd_loop_##T(                                 \
      T *restrict p, const T *restrict g, T *restrict buf, int64_t i0, int64_t i1, T lr, T mom, T damp1, T wd, \
      const bool neg, const bool decay, const bool has_buf, const bool first, const bool nesterov) { \
    _Pragma("omp simd")                                                                            \
    for (int64_t i = i0; i < i1; i++) {                                                            \
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
  /* Plain SGD (no momentum, decay or maximize) with finite lr >= 0 leaves p bit for \
   * bit as it is where g is +0.0 (p + -0.0 == p, -0.0 included), so blocks \
   * of g that are all +0.0 bits are skipped without reading or writing p: \
   * an embedding's dense gradient is zero outside the rows looked up. A    \
   * dense g costs one extra pass over each block while it is in L1. */                       \
  static void sgd_plain_##T(T *restrict p, const T *restrict g, int64_t n, T lr) {                \
    int64_t nb = (n + SGD_BLOCK - 1) / SGD_BLOCK;                                                  \
    _Pragma("omp parallel for if (n > 65536) schedule(static)")                                    \
    for (int64_t b = 0; b < nb; b++) {                                                             \
      int64_t i0 = b * SGD_BLOCK, i1 = i0 + SGD_BLOCK < n ? i0 + SGD_BLOCK : n;                   \
      const bits_##T *gb = (const bits_##T *)g;   /* OR of the bits: vectorizes, unlike an early exit */ \
      bits_##T any = 0;                                                                            \
      for (int64_t i = i0; i < i1; i++) any |= gb[i];                                              \
      if (!any) continue;                                                                          \
      _Pragma("omp simd")                                                                          \
      for (int64_t i = i0; i < i1; i++) p[i] = FMA(-lr, g[i], p[i]);                               \
    }                                                                                              \
  }                                                                                                \
  static void sgd_##T(T *p, const T *g, T *buf, int64_t n, T lr, T mom, T damp1, T wd, bool nesterov, \
                      bool maximize, bool first) {                                                 \
    bool decay = wd != 0;                                                                          \
    if (!buf && !maximize && !decay && lr >= 0 && isfinite(lr)) { /* inf * 0 is nan */             \
      sgd_plain_##T(p, g, n, lr);                                                                  \
      return;                                                                                      \
    }                                                                                              \
    _Pragma("omp parallel if (n > 65536)")                                                         \
    {                                                                                              \
      int64_t b, e;                                                                                \
      thread_range(n, &b, &e);                                                                     \
      if (!buf) {                                                                                  \
        if (maximize) sgd_loop_##T(p, g, buf, b, e, lr, mom, damp1, wd, true, decay, false, false, false); \
        else if (decay) sgd_loop_##T(p, g, buf, b, e, lr, mom, damp1, wd, false, true, false, false, false); \
        else sgd_loop_##T(p, g, buf, b, e, lr, mom, damp1, wd, false, false, false, false, false);  \
      } else if (first)                                                                            \
        sgd_loop_##T(p, g, buf, b, e, lr, mom, damp1, wd, maximize, decay, true, true, nesterov);  \
      else if (maximize || nesterov)                                                               \
        sgd_loop_##T(p, g, buf, b, e, lr, mom, damp1, wd, maximize, decay, true, false, nesterov); \
      else if (decay) /* the common case: momentum + weight decay */                               \
        sgd_loop_##T(p, g, buf, b, e, lr, mom, damp1, wd, false, true, true, false, false);        \
      else                                                                                         \
        sgd_loop_##T(p, g, buf, b, e, lr, mom, damp1, wd, false, false, true, false, false);       \
    }                                                                                              \
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
  int dev;
  if (at_common_device(3, (const THTensor *[]){ p, grad, momentum != 0 ? buf : NULL }, "_sgd_step", &dev) < 0)
    return -1;
  if (dev >= 0)
    return at_cuda->sgd_step(p->dtype, THTensor_data(p), THTensor_data(grad), b, n, lr, momentum, dampening,
                             weight_decay, nesterov, maximize, first);
  if (p->dtype == TH_Float)
    sgd_float((float *)THTensor_data(p), (const float *)THTensor_data(grad), b, n, (float)lr, (float)momentum,
              (float)(1 - dampening), (float)weight_decay, nesterov, maximize, first);
  else
    sgd_double((double *)THTensor_data(p), (const double *)THTensor_data(grad), b, n, lr, momentum, 1 - dampening,
               weight_decay, nesterov, maximize, first);
  return 0;
}

#define DEFINE_ADAM(T, FMA, SQRT)                                                                 \
  static inline __attribute__((always_inline)) void adam_loop_##T(                                \
      T *restrict p, const T *restrict gr, T *restrict m, T *restrict v, T *restrict vmax, int64_t i0, \
      int64_t i1, T w1, T beta2, T c2, T wd, T pdecay, T bc2s, T eps, T neg_step, const bool neg,  \
      const bool l2, const bool decay_p, const bool ams, const bool small) {                      \
    T coef = small ? w1 : w1 - 1;                                                                  \
    _Pragma("omp simd")                                                                            \
    for (int64_t i = i0; i < i1; i++) {                                                            \
      T g = neg ? -gr[i] : gr[i], pi = p[i];                                                       \
      if (l2) g = FMA(wd, pi, g);                                                                  \
      if (decay_p) pi = pi * pdecay;                                                               \
      T mi = m[i], diff = g - mi;                                                                  \
      mi = FMA(coef, diff, small ? mi : g);                                                        \
      m[i] = mi;                                                                                   \
      T vi = FMA(c2 * g, g, v[i] * beta2);                                                         \
      v[i] = vi;                                                                                   \
      if (ams) { vi = vmax[i] > vi ? vmax[i] : vi; vmax[i] = vi; }                                 \
      T denom = SQRT(vi) / bc2s + eps;                                                             \
      p[i] = pi + (neg_step * mi) / denom;                                                         \
    }                                                                                              \
  }                                                                                                \
  static void adam_##T(T *p, const T *g, T *m, T *v, T *vmax, int64_t n, T w1, T beta2, T c2, T wd, T pdecay, \
                       T bc2s, T eps, T neg_step, bool neg, bool l2, bool decay_p) {                  \
    /* lerp's two formulas (torch's), chosen by weight as in its kernel */                       \
    bool small = w1 < (T)0.5 && w1 > (T)-0.5;                                                      \
    _Pragma("omp parallel if (n > 65536)")                                                         \
    {                                                                                              \
      int64_t b, e;                                                                                \
      thread_range(n, &b, &e);                                                                     \
      if (vmax || neg || !small)                                                                   \
        adam_loop_##T(p, g, m, v, vmax, b, e, w1, beta2, c2, wd, pdecay, bc2s, eps, neg_step, neg, l2, decay_p, \
                      vmax != NULL, small);                                                        \
      else if (l2)                                                                                 \
        adam_loop_##T(p, g, m, v, vmax, b, e, w1, beta2, c2, wd, pdecay, bc2s, eps, neg_step, false, true, false, \
                      false, true);                                                                \
      else if (decay_p)                                                                            \
        adam_loop_##T(p, g, m, v, vmax, b, e, w1, beta2, c2, wd, pdecay, bc2s, eps, neg_step, false, false, true, \
                      false, true);                                                                \
      else                                                                                         \
        adam_loop_##T(p, g, m, v, vmax, b, e, w1, beta2, c2, wd, pdecay, bc2s, eps, neg_step, false, false, false, \
                      false, true);                                                                \
    }                                                                                              \
  }
DEFINE_ADAM(float, fmaf, sqrtf)
DEFINE_ADAM(double, fma, sqrt)

int at_adam_step(THTensor *p, const THTensor *grad, THTensor *m, THTensor *v, THTensor *vmax, double lr,
                 double beta1, double beta2, double eps, double weight_decay, double step, bool maximize,
                 bool decoupled) {
  if ((p->dtype != TH_Float && p->dtype != TH_Double) || !THTensor_isContiguous(p) || !fusable(p, grad) ||
      !fusable(p, m) || !fusable(p, v) || (vmax && !fusable(p, vmax))) {
    THError_set(TH_ERR_RUNTIME, "_adam_step: needs contiguous float32/float64 tensors of one dtype and size");
    return -1;
  }
  int64_t n = THTensor_numel(p);
  int dev;
  if (at_common_device(5, (const THTensor *[]){ p, grad, m, v, vmax }, "_adam_step", &dev) < 0) return -1;
  if (dev >= 0)
    return at_cuda->adam_step(p->dtype, THTensor_data(p), THTensor_data(grad), THTensor_data(m), THTensor_data(v),
                              vmax ? THTensor_data(vmax) : NULL, n, lr, beta1, beta2, eps, weight_decay, step,
                              maximize, decoupled);
  /* the scalars as torch's Python step computes them, in double */
  double bc1 = 1 - pow(beta1, step), bc2 = 1 - pow(beta2, step);
  double neg_step = -(lr / bc1), bc2s = pow(bc2, 0.5), pdecay = 1 - lr * weight_decay;
  bool l2 = weight_decay != 0 && !decoupled, decay_p = weight_decay != 0 && decoupled;
  void *vm = vmax ? THTensor_data(vmax) : NULL;
  if (p->dtype == TH_Float)
    adam_float((float *)THTensor_data(p), (const float *)THTensor_data(grad), (float *)THTensor_data(m),
               (float *)THTensor_data(v), vm, n, (float)(1 - beta1), (float)beta2, (float)(1 - beta2),
               (float)weight_decay, (float)pdecay, (float)bc2s, (float)eps, (float)neg_step, maximize, l2, decay_p);
  else
    adam_double((double *)THTensor_data(p), (const double *)THTensor_data(grad), (double *)THTensor_data(m),
                (double *)THTensor_data(v), vm, n, 1 - beta1, beta2, 1 - beta2, weight_decay, pdecay, bc2s, eps,
                neg_step, maximize, l2, decay_p);
  return 0;
}
