/* pdist: the p-norm distance of every pair of rows i < j of an (n, m) matrix,
 * and its backward (see ATDistance.h). Float and double compute in their own
 * type (torch has no half/bfloat16 pdist on the CPU).
 *
 * The forward splits the rows i over threads (row i has n-1-i pairs, so the
 * split is dynamic). The backward gives each thread whole rows of the input
 * gradient: row i sums the gradient of every pair it is in, (i, j) with +1
 * and (j, i) with -1, and since each pair's term is odd in the difference,
 * both are g_ij * f(x_i - x_j, d_ij); no two threads write one row. */
#include "ATArgChecks.h"
#include "ATDistance.h"
#include "ATConv.h"   /* at_contiguous_as */

#include <math.h>
#include <string.h>

typedef enum { PD_ZERO, PD_ONE, PD_TWO, PD_INF, PD_GENERAL } PdistKind;

static PdistKind pdist_kind(double p) {
  return p == 0 ? PD_ZERO : p == 1 ? PD_ONE : p == 2 ? PD_TWO : isinf(p) ? PD_INF : PD_GENERAL;
}

/* the flat index of pair (i, j), i < j, in the upper triangle by rows */
static inline int64_t pair_index(int64_t i, int64_t j, int64_t n) { return i * n - i * (i + 1) / 2 + (j - i - 1); }

static int pdist_check(const THTensor *self, double p) {
  if (self->ndim != 2) {
    THError_set(TH_ERR_RUNTIME, "pdist only supports 2D tensors, got: %dD", self->ndim);
    return -1;
  }
  if (!THDtype_isFloating(self->dtype)) {
    THError_set(TH_ERR_RUNTIME, "pdist only supports floating-point dtypes");
    return -1;
  }
  if (!(p >= 0)) {
    THError_set(TH_ERR_RUNTIME, "pdist only supports non-negative p values");
    return -1;
  }
  if (self->dtype != TH_Float && self->dtype != TH_Double) {
    THError_set(TH_ERR_NOTIMPL, "\"pdist\" not implemented for '%s'", THDtype_info[self->dtype].legacy);
    return -1;
  }
  return 0;
}

/* The distances of row i to rows i+1..n-1 for p = 1, 2, inf: TERM of each
 * difference folded by ACC (a RED reduction), FIN of the result. Four rows j
 * go at once, so each element of row i is loaded once for four pairs and the
 * four reductions run side by side. */
#define PD_PRAGMA(x) _Pragma(#x)
#define PD_ABS(d) ((d) < 0 ? -(d) : (d))
#define PD_SQUARE(d) ((d) * (d))
#define PD_ADD(s, t) ((s) + (t))
#define PD_MAX(s, t) ((t) > (s) ? (t) : (s))
#define PD_SAME(s) (s)
#define PDIST_ROW(T, NAME, RED, TERM, ACC, FIN)                                                     \
  static void pdist_row_##NAME##_##T(const T *x, T *o, int64_t i, int64_t n, int64_t m) {           \
    const T *a = x + i * m;                                                                         \
    int64_t j = i + 1;                                                                              \
    for (; j + 4 <= n; j += 4) {                                                                    \
      const T *b0 = x + j * m, *b1 = b0 + m, *b2 = b1 + m, *b3 = b2 + m;                            \
      T s0 = 0, s1 = 0, s2 = 0, s3 = 0;                                                             \
      PD_PRAGMA(omp simd reduction(RED:s0, s1, s2, s3))                                             \
      for (int64_t c = 0; c < m; c++) {                                                             \
        T v = a[c], d0 = v - b0[c], d1 = v - b1[c], d2 = v - b2[c], d3 = v - b3[c];                 \
        s0 = ACC(s0, TERM(d0)); s1 = ACC(s1, TERM(d1));                                             \
        s2 = ACC(s2, TERM(d2)); s3 = ACC(s3, TERM(d3));                                             \
      }                                                                                             \
      *o++ = FIN(s0); *o++ = FIN(s1); *o++ = FIN(s2); *o++ = FIN(s3);                               \
    }                                                                                               \
    for (; j < n; j++) {                                                                            \
      const T *b = x + j * m;                                                                       \
      T s = 0;                                                                                      \
      PD_PRAGMA(omp simd reduction(RED:s))                                                          \
      for (int64_t c = 0; c < m; c++) { T d = a[c] - b[c]; s = ACC(s, TERM(d)); }                   \
      *o++ = FIN(s);                                                                                \
    }                                                                                               \
  }

#define PDIST_KERNELS(T, FABS, POW, SQRT)                                                           \
  /* one pair's distance for p = 0 and the general p (the others go a row at a time) */            \
  static T pdist_pair_##T(const T *a, const T *b, int64_t m, PdistKind k, T p) {                    \
    T s = 0;                                                                                        \
    if (k == PD_ZERO) {                                                                             \
      for (int64_t c = 0; c < m; c++) s += (T)(a[c] != b[c]);                                       \
      return s;                                                                                     \
    }                                                                                               \
    for (int64_t c = 0; c < m; c++) s += POW(FABS(a[c] - b[c]), p);                                 \
    return POW(s, 1 / p);                                                                           \
  }                                                                                                 \
  PDIST_ROW(T, one, +, PD_ABS, PD_ADD, PD_SAME)                                                     \
  PDIST_ROW(T, two, +, PD_SQUARE, PD_ADD, SQRT)                                                     \
  PDIST_ROW(T, inf, max, PD_ABS, PD_MAX, PD_SAME)                                                   \
  static void pdist_fwd_##T(const T *x, T *out, int64_t n, int64_t m, double p) {                   \
    PdistKind k = pdist_kind(p);                                                                    \
    _Pragma("omp parallel for schedule(dynamic, 4) if (n * (n - 1) / 2 * m > 32768)")               \
    for (int64_t i = 0; i < n - 1; i++) {                                                           \
      T *o = out + pair_index(i, i + 1, n);                                                         \
      if (k == PD_ONE) pdist_row_one_##T(x, o, i, n, m);                                            \
      else if (k == PD_TWO) pdist_row_two_##T(x, o, i, n, m);                                       \
      else if (k == PD_INF) pdist_row_inf_##T(x, o, i, n, m);                                       \
      else                                                                                          \
        for (int64_t j = i + 1; j < n; j++)                                                         \
          *o++ = pdist_pair_##T(x + i * m, x + j * m, m, k, (T)p);                                  \
    }                                                                                               \
  }                                                                                                 \
  /* gx[i] += g * d dist / d x_i for one pair at the difference a - b, distance dist; torch's        \
   * subgradients: 0 where dist is 0, and inf-norm ties each take the whole gradient */             \
  static void pdist_pair_bwd_##T(T *gx, const T *a, const T *b, int64_t m, PdistKind k, T p, T g, T dist) { \
    if (k == PD_ZERO || dist == 0) return;                                                          \
    switch (k) {                                                                                    \
      case PD_ONE:                                                                                  \
        _Pragma("omp simd")                                                                         \
        for (int64_t c = 0; c < m; c++) { T d = a[c] - b[c]; gx[c] += d > 0 ? g : d < 0 ? -g : 0; } \
        break;                                                                                      \
      case PD_TWO: {                                                                                \
        T s = g / dist;                                                                             \
        _Pragma("omp simd")                                                                         \
        for (int64_t c = 0; c < m; c++) gx[c] += s * (a[c] - b[c]);                                 \
        break;                                                                                      \
      }                                                                                             \
      case PD_INF:                                                                                  \
        _Pragma("omp simd")                                                                         \
        for (int64_t c = 0; c < m; c++) {                                                           \
          T d = a[c] - b[c];                                                                        \
          gx[c] += FABS(d) != dist ? 0 : d > 0 ? g : -g;                                            \
        }                                                                                           \
        break;                                                                                      \
      default: {                                                                                    \
        T s = g / POW(dist, p - 1);                                                                 \
        for (int64_t c = 0; c < m; c++) {                                                           \
          T d = a[c] - b[c];                                                                        \
          if (d != 0) gx[c] += s * (T)((d > 0) - (d < 0)) * POW(FABS(d), p - 1);                    \
        }                                                                                           \
      }                                                                                             \
    }                                                                                               \
  }                                                                                                 \
  static void pdist_bwd_##T(const T *g, const T *x, const T *dist, T *gx, int64_t n, int64_t m, double p) { \
    PdistKind k = pdist_kind(p);                                                                    \
    _Pragma("omp parallel for schedule(dynamic, 4) if (n * (n - 1) * m > 32768)")                   \
    for (int64_t i = 0; i < n; i++) {                                                               \
      T *row = gx + i * m;                                                                          \
      memset(row, 0, m * sizeof(T));                                                                \
      for (int64_t j = 0; j < n; j++) {                                                             \
        if (j == i) continue;                                                                       \
        int64_t q = i < j ? pair_index(i, j, n) : pair_index(j, i, n);                              \
        pdist_pair_bwd_##T(row, x + i * m, x + j * m, m, k, (T)p, g[q], dist[q]);                   \
      }                                                                                             \
    }                                                                                               \
  }
PDIST_KERNELS(float, fabsf, powf, sqrtf)
PDIST_KERNELS(double, fabs, pow, sqrt)

THTensor *at_pdist_forward(const THTensor *self, double p) {
  if (pdist_check(self, p) < 0) return NULL;
  int64_t n = self->sizes[0], m = self->sizes[1];
  int64_t np = n >= 2 ? n * (n - 1) / 2 : 0;
  THTensor *x = at_contiguous(self), *out = x ? THTensor_new(self->dtype, 1, &np) : NULL;
  if (out && np > 0) {
    if (self->dtype == TH_Double)
      pdist_fwd_double((const double *)THTensor_data(x), (double *)THTensor_data(out), n, m, p);
    else
      pdist_fwd_float((const float *)THTensor_data(x), (float *)THTensor_data(out), n, m, p);
  }
  THTensor_free(x);
  return out;
}

THTensor *at_pdist_backward(const THTensor *grad, const THTensor *self, double p, const THTensor *pdist) {
  if (pdist_check(self, p) < 0) return NULL;
  int64_t n = self->sizes[0], m = self->sizes[1], pairs[1] = { n * (n - 1) / 2 };
  /* the kernel reads n(n-1)/2 distances and gradients */
  if (at_check_shape(grad, 1, pairs, "_pdist_backward", "grad") < 0 ||
      at_check_shape(pdist, 1, pairs, "_pdist_backward", "pdist") < 0)
    return NULL;
  THTensor *x = at_contiguous(self), *g = x ? at_contiguous_as(grad, self->dtype) : NULL;
  THTensor *d = g ? at_contiguous_as(pdist, self->dtype) : NULL, *gx = d ? THTensor_new(self->dtype, 2, self->sizes) : NULL;
  if (gx) {
    if (self->dtype == TH_Double)
      pdist_bwd_double((const double *)THTensor_data(g), (const double *)THTensor_data(x),
                       (const double *)THTensor_data(d), (double *)THTensor_data(gx), n, m, p);
    else
      pdist_bwd_float((const float *)THTensor_data(g), (const float *)THTensor_data(x),
                      (const float *)THTensor_data(d), (float *)THTensor_data(gx), n, m, p);
  }
  THTensor_free(x); THTensor_free(g); THTensor_free(d);
  return gx;
}
