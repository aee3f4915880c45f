/* NN kernels (see ATNN.h). Inputs are made contiguous and viewed as
 * [outer, D, inner] (softmax) or [N, C, S] (batch norm) so loops are plain. */
#include "ATNN.h"
#include "ATArgChecks.h"
#include "ATComplex.h"
#include "ATCuda.h"
#include "ATEmbedding.h"   /* the GPU embedding */
#include "../TH/THMath.h"   /* simd declarations of expf/logf */

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* t as a contiguous tensor of compute type ct (new ref) */
static THTensor *as_type(const THTensor *t, THDtype ct) {
  THTensor *c = at_to_dtype(t, ct, false);
  if (!c) return NULL;
  THTensor *r = at_contiguous(c);
  THTensor_free(c);
  return r;
}

/* float or double contiguous copy of t (compute type), new ref */
static THTensor *as_compute(const THTensor *t, THDtype *ct) {
  *ct = t->dtype == TH_Double ? TH_Double : TH_Float;
  return as_type(t, *ct);
}

static void split_dims(const THTensor *t, int64_t d, int64_t *outer, int64_t *D, int64_t *inner) {
  *outer = 1; *inner = 1; *D = t->ndim ? t->sizes[d] : 1;
  for (int i = 0; i < d; i++) *outer *= t->sizes[i];
  for (int i = d + 1; i < t->ndim; i++) *inner *= t->sizes[i];
}


/* softmax over a contiguous row (inner == 1, the common case): each pass is
 * an omp simd loop, so exp runs vectorized (libmvec); sums stay in double.
 * A NaN anywhere in the row makes the sum, and so the whole row, NaN.
 * log_softmax is (x - max) - log(sum), as torch's: x - (max + log(sum)) lost
 * log(sum) beside a large max (1e30 logits gave 0 where torch gives -log(D)). */
#define SOFTMAX_ROW(T)                                                            \
  static void softmax_row_##T(const T *xs, T *ys, int64_t D, bool islog) {            \
    T mx = -INFINITY;                                                                  \
    const T lo = TH_EXP_NONPOS_LO(T);                                                        \
    _Pragma("omp simd reduction(max:mx)")                                              \
    for (int64_t d = 0; d < D; d++) mx = xs[d] > mx ? xs[d] : mx;                      \
    if (isinf(mx) && mx < 0) mx = 0;                                                   \
    double sum = 0;                                                                    \
    if (islog) {                                                                       \
      _Pragma("omp simd reduction(+:sum)")                                             \
      for (int64_t d = 0; d < D; d++) sum += TH_EXP_NONPOS(xs[d] - mx, lo); \
      T ls = (T)log(sum);                                                              \
      _Pragma("omp simd")                                                              \
      for (int64_t d = 0; d < D; d++) ys[d] = (xs[d] - mx) - ls;                       \
    } else {                                                                           \
      _Pragma("omp simd reduction(+:sum)")                                             \
      for (int64_t d = 0; d < D; d++) { T e = TH_EXP_NONPOS(xs[d] - mx, lo); ys[d] = e; sum += e; } \
      T inv = (T)(1.0 / sum);                                                          \
      _Pragma("omp simd")                                                              \
      for (int64_t d = 0; d < D; d++) ys[d] *= inv;                                    \
    }                                                                                  \
  }
SOFTMAX_ROW(float)
SOFTMAX_ROW(double)

/* short float rows (D <= 16, a classifier's logits): eight rows at a time, transposed so that
 * every step (max, exp, sum, log, scale) is one vector over the eight rows. Row by row, each
 * vector loop ran in its scalar remainder and every row paid a scalar log: 1.6x (softmax) and
 * 2.5x (log_softmax) torch's time on (4096, 10). Per row the steps of softmax_row (float exp, double
 * sum, log in double), the sum in index order; rows never span blocks, so threads do not change bits. */
#define SOFTMAX_SHORT_D 16
static void softmax_rows8_float(const float *x, float *y, int64_t D, bool islog) {
  float t[SOFTMAX_SHORT_D][8], mx[8];
  double sum[8];
  const float lo = TH_EXP_NONPOS_LO(float);
  for (int r = 0; r < 8; r++)
    for (int64_t d = 0; d < D; d++) t[d][r] = x[r * D + d];
  for (int r = 0; r < 8; r++) { mx[r] = -INFINITY; sum[r] = 0; }
  for (int64_t d = 0; d < D; d++)
    _Pragma("omp simd") for (int r = 0; r < 8; r++) mx[r] = t[d][r] > mx[r] ? t[d][r] : mx[r];
  for (int r = 0; r < 8; r++) if (isinf(mx[r]) && mx[r] < 0) mx[r] = 0;
  for (int64_t d = 0; d < D; d++)
    _Pragma("omp simd") for (int r = 0; r < 8; r++) {
      float e = TH_EXP_NONPOS(t[d][r] - mx[r], lo);
      if (!islog) t[d][r] = e;
      sum[r] += e;
    }
  float k[8];
  if (islog) {
    _Pragma("omp simd") for (int r = 0; r < 8; r++) k[r] = (float)log(sum[r]);
    for (int r = 0; r < 8; r++)
      for (int64_t d = 0; d < D; d++) y[r * D + d] = (t[d][r] - mx[r]) - k[r];
  } else {
    for (int r = 0; r < 8; r++) k[r] = (float)(1.0 / sum[r]);
    for (int r = 0; r < 8; r++)
      for (int64_t d = 0; d < D; d++) y[r * D + d] = t[d][r] * k[r];
  }
}
static void softmax_short_float(const float *x, float *y, int64_t outer, int64_t D, bool islog) {
  const int64_t o8 = outer / 8 * 8;
#pragma omp parallel for if (outer * D > 32768)
  for (int64_t o = 0; o < o8; o += 8) softmax_rows8_float(x + o * D, y + o * D, D, islog);
  for (int64_t o = o8; o < outer; o++) softmax_row_float(x + o * D, y + o * D, D, islog);
}

#define SOFTMAX_COLS 256
/* fewer columns than this: one column at a time, scalar. The tiles' vector passes are as long as the
 * columns are few, and below 8 their per-pass cost made (64,1000,2) or (4096,3,3) over dim 1 1.4-2x torch */
#define SOFTMAX_NARROW 8
#define SOFTMAX_COLUMN(T)                                                              \
  static void softmax_column_##T(const T *xs, T *ys, int64_t D, int64_t inner, bool islog) { \
    T mx = -INFINITY;                                                                  \
    for (int64_t d = 0; d < D; d++) if (xs[d * inner] > mx || isnan(xs[d * inner])) mx = xs[d * inner]; \
    if (isinf(mx) && mx < 0) mx = 0;                                                   \
    const T lo = TH_EXP_NONPOS_LO(T);                                                  \
    double sum = 0;                                                                    \
    if (islog) {                                                                       \
      for (int64_t d = 0; d < D; d++) sum += TH_EXP_NONPOS(xs[d * inner] - mx, lo);     \
      const T ls = (T)log(sum);                                                        \
      for (int64_t d = 0; d < D; d++) ys[d * inner] = (xs[d * inner] - mx) - ls;       \
    } else {                                                                           \
      for (int64_t d = 0; d < D; d++) { T e = TH_EXP_NONPOS(xs[d * inner] - mx, lo); ys[d * inner] = e; sum += e; } \
      const T inv = (T)(1.0 / sum);                                                    \
      for (int64_t d = 0; d < D; d++) ys[d * inner] *= inv;                            \
    }                                                                                  \
  }
SOFTMAX_COLUMN(float)
SOFTMAX_COLUMN(double)
#define SOFTMAX_FWD(T)                                                                 \
  static void softmax_fwd_##T(const T *x, T *y, int64_t outer, int64_t D, int64_t inner, bool islog) { \
    if (inner == 1) {                                                                  \
      _Pragma("omp parallel for if (outer * D > 32768)")                              \
      for (int64_t o = 0; o < outer; o++) softmax_row_##T(x + o * D, y + o * D, D, islog); \
      return;                                                                          \
    }                                                                                  \
    if (inner < SOFTMAX_NARROW) {                                                      \
      _Pragma("omp parallel for if (outer * inner * D > 32768)")                      \
      for (int64_t o = 0; o < outer; o++)                                              \
        for (int64_t i = 0; i < inner; i++)                                            \
          softmax_column_##T(x + o * D * inner + i, y + o * D * inner + i, D, inner, islog); \
      return;                                                                          \
    }                                                                                  \
    /* a column per inner index: tiles of SOFTMAX_COLS columns, each step one simd pass \
     * along the contiguous inner dim (per column the row path's steps, in d order) */  \
    const int64_t nt = (inner + SOFTMAX_COLS - 1) / SOFTMAX_COLS;                      \
    const T lo = TH_EXP_NONPOS_LO(T);                                                  \
    _Pragma("omp parallel for if (outer * inner * D > 32768)")                        \
    for (int64_t ot = 0; ot < outer * nt; ot++) {                                      \
      const int64_t o = ot / nt, i0 = ot % nt * SOFTMAX_COLS;                          \
      const int64_t w = inner - i0 < SOFTMAX_COLS ? inner - i0 : SOFTMAX_COLS;         \
      const T *xs = x + o * D * inner + i0; T *ys = y + o * D * inner + i0;           \
      T mx[SOFTMAX_COLS], k[SOFTMAX_COLS];                                             \
      double sum[SOFTMAX_COLS];                                                        \
      for (int64_t i = 0; i < w; i++) { mx[i] = -INFINITY; sum[i] = 0; }               \
      for (int64_t d = 0; d < D; d++) {                                                \
        const T *xr = xs + d * inner;                                                  \
        _Pragma("omp simd")                                                            \
        for (int64_t i = 0; i < w; i++) mx[i] = (xr[i] > mx[i] || isnan(xr[i])) ? xr[i] : mx[i]; \
      }                                                                                \
      for (int64_t i = 0; i < w; i++) if (isinf(mx[i]) && mx[i] < 0) mx[i] = 0;        \
      for (int64_t d = 0; d < D; d++) {                                                \
        const T *xr = xs + d * inner; T *yr = ys + d * inner;                          \
        if (islog) {                                                                   \
          _Pragma("omp simd")                                                          \
          for (int64_t i = 0; i < w; i++) sum[i] += TH_EXP_NONPOS(xr[i] - mx[i], lo);  \
        } else {                                                                       \
          _Pragma("omp simd")                                                          \
          for (int64_t i = 0; i < w; i++) { T e = TH_EXP_NONPOS(xr[i] - mx[i], lo); yr[i] = e; sum[i] += e; } \
        }                                                                              \
      }                                                                                \
      for (int64_t i = 0; i < w; i++) k[i] = islog ? (T)log(sum[i]) : (T)(1.0 / sum[i]); \
      for (int64_t d = 0; d < D; d++) {                                                \
        const T *xr = xs + d * inner; T *yr = ys + d * inner;                          \
        if (islog) {                                                                   \
          _Pragma("omp simd")                                                          \
          for (int64_t i = 0; i < w; i++) yr[i] = (xr[i] - mx[i]) - k[i];              \
        } else {                                                                       \
          _Pragma("omp simd")                                                          \
          for (int64_t i = 0; i < w; i++) yr[i] *= k[i];                               \
        }                                                                              \
      }                                                                                \
    }                                                                                  \
  }
SOFTMAX_FWD(float)
SOFTMAX_FWD(double)

/* torch's log_softmax over the last dim of a half/bfloat16 tensor keeps each row's sum of exps and its log in
 * that dtype (its kernel stores them as scalar_t) before subtracting in float: rounded the same way here, the
 * results are torch's to the bit (exact rounding differed by an ulp in a third of the elements, and a bf16
 * cross-entropy loss by an ulp). Other dims and dtypes are exact, as torch's. */
static float round_to(float v, THDtype dt) {
  return dt == TH_Half ? th_half2float(th_float2half(v)) : th_bf2float(th_float2bf(v));
}

static void log_softmax_rows_reduced(const float *x, float *y, int64_t outer, int64_t D, THDtype dt) {
  /* rows are independent, as in the float kernels (a bf16 LM's logits over its vocabulary ran on one thread) */
#pragma omp parallel for if (outer * D > 32768)
  for (int64_t o = 0; o < outer; o++) {
    const float *xs = x + o * D;
    float *ys = y + o * D;
    float mx = -INFINITY;
    for (int64_t d = 0; d < D; d++) mx = xs[d] > mx ? xs[d] : mx;
    if (isinf(mx) && mx < 0) mx = 0;
    double sum = 0;
    for (int64_t d = 0; d < D; d++) sum += expf(xs[d] - mx);
    const float ls = round_to(logf(round_to((float)sum, dt)), dt);
    for (int64_t d = 0; d < D; d++) ys[d] = (xs[d] - mx) - ls;
  }
}

THTensor *at_softmax(const THTensor *self, int64_t dim, THDtype dtype, bool log) {
  int64_t d;
  if (at_wrap_dim(dim, self->ndim, &d) < 0) return NULL;
  THDtype out_dt = dtype != TH_Undefined ? dtype : self->dtype;
  if (!THDtype_isFloating(out_dt)) {
    THError_set(TH_ERR_NOTIMPL, "\"%s_lastdim_kernel_impl\" not implemented for '%s'", log ? "log_softmax" : "softmax",
                THDtype_info[out_dt].legacy);
    return NULL;
  }
  THTensor *src = dtype != TH_Undefined ? at_to_dtype(self, dtype, false) : THTensor_retain((THTensor *)self);
  if (!src) return NULL;
  THDtype ct;
  THTensor *x = as_compute(src, &ct);
  THTensor_free(src);
  if (!x) return NULL;
  int dev = THTensor_device(x);
  THTensor *y = at_new_on(dev, ct, x->ndim, x->sizes, NULL);
  if (!y) { THTensor_free(x); return NULL; }
  int64_t outer, D, inner;
  split_dims(x, d, &outer, &D, &inner);
  if (dev == TH_DEVICE_META) {
    /* y's shape is the result */
  } else if (dev >= 0) {
    if (at_cuda->softmax(ct, THTensor_data(x), THTensor_data(y), outer, D, inner, log) < 0) {
      THTensor_free(x);
      THTensor_free(y);
      return NULL;
    }
  } else if (THTensor_numel(x)) {
    if (log && (out_dt == TH_Half || out_dt == TH_BFloat16) && ct == TH_Float && d == x->ndim - 1 &&
        THTensor_isContiguous(x))
      log_softmax_rows_reduced((float *)THTensor_data(x), (float *)THTensor_data(y), outer, D, out_dt);
    else if (ct == TH_Float && inner == 1 && D <= SOFTMAX_SHORT_D)
      softmax_short_float((float *)THTensor_data(x), (float *)THTensor_data(y), outer, D, log);
    else if (ct == TH_Float) softmax_fwd_float((float *)THTensor_data(x), (float *)THTensor_data(y), outer, D, inner, log);
    else softmax_fwd_double((double *)THTensor_data(x), (double *)THTensor_data(y), outer, D, inner, log);
  }
  THTensor_free(x);
  if (ct == out_dt) return y;
  THTensor *r = at_to_dtype(y, out_dt, false);
  THTensor_free(y);
  return r;
}

/* softmax: dx = y * (dy - sum(dy * y)); log_softmax: dx = dy - exp(y) * sum(dy) */
#define SOFTMAX_BWD(T)                                                                 \
  static void softmax_bwd_##T(const T *g, const T *y, T *dx, int64_t outer, int64_t D, int64_t inner, bool islog) { \
    if (inner == 1) {   /* contiguous rows: simd passes, as the forward */            \
      _Pragma("omp parallel for if (outer * D > 32768)")                              \
      for (int64_t o = 0; o < outer; o++) {                                            \
        const T *gr = g + o * D, *yr = y + o * D; T *dr = dx + o * D;                  \
        double s = 0;                                                                  \
        if (islog) {                                                                   \
          const T lo = TH_EXP_NONPOS_LO(T);                                                  \
          _Pragma("omp simd reduction(+:s)")                                           \
          for (int64_t d = 0; d < D; d++) s += gr[d];                                  \
          T st = (T)s;                                                                 \
          _Pragma("omp simd")                                                          \
          for (int64_t d = 0; d < D; d++) dr[d] = gr[d] - TH_EXP_NONPOS(yr[d], lo) * st; \
        } else {                                                                       \
          _Pragma("omp simd reduction(+:s)")                                           \
          for (int64_t d = 0; d < D; d++) s += (double)gr[d] * yr[d];                  \
          T st = (T)s;                                                                 \
          _Pragma("omp simd")                                                          \
          for (int64_t d = 0; d < D; d++) dr[d] = yr[d] * (gr[d] - st);                \
        }                                                                              \
      }                                                                                \
      return;                                                                          \
    }                                                                                  \
    _Pragma("omp parallel for if (outer * inner * D > 32768)")                        \
    for (int64_t o = 0; o < outer; o++)                                                \
      for (int64_t i = 0; i < inner; i++) {                                            \
        int64_t base = o * D * inner + i;                                              \
        double s = 0;                                                                  \
        if (islog) {                                                                   \
          for (int64_t d = 0; d < D; d++) s += g[base + d * inner];                    \
          for (int64_t d = 0; d < D; d++)                                              \
            dx[base + d * inner] = g[base + d * inner] - (T)exp(y[base + d * inner]) * (T)s; \
        } else {                                                                       \
          for (int64_t d = 0; d < D; d++) s += (double)g[base + d * inner] * y[base + d * inner]; \
          for (int64_t d = 0; d < D; d++)                                              \
            dx[base + d * inner] = y[base + d * inner] * (g[base + d * inner] - (T)s); \
        }                                                                              \
      }                                                                                \
  }
SOFTMAX_BWD(float)
SOFTMAX_BWD(double)

THTensor *at_softmax_backward(const THTensor *grad, const THTensor *output, int64_t dim, bool log) {
  int64_t d;
  if (at_wrap_dim(dim, output->ndim, &d) < 0) return NULL;
  /* the kernel walks grad with output's sizes, in one compute type */
  if (grad->dtype != output->dtype) {
    THError_set(TH_ERR_RUNTIME, "expected scalar type %s but found %s", THDtype_info[grad->dtype].legacy,
                THDtype_info[output->dtype].legacy);
    return NULL;
  }
  if (at_check_same_shape(grad, output, log ? "_log_softmax_backward_data" : "_softmax_backward_data", "grad_output",
                          "output") < 0)
    return NULL;
  THDtype ct, ct2;
  THTensor *g = as_compute(grad, &ct), *y = g ? as_compute(output, &ct2) : NULL;
  int dev = THTensor_device(output);
  THTensor *dx = y ? at_new_on(dev, ct, y->ndim, y->sizes, NULL) : NULL, *r = NULL;
  if (dx && ct == ct2) {
    int64_t outer, D, inner;
    split_dims(y, d, &outer, &D, &inner);
    if (dev == TH_DEVICE_META) {
      /* dx's shape is the result */
    } else if (dev >= 0) {
      if (at_cuda->softmax_backward(ct, THTensor_data(g), THTensor_data(y), THTensor_data(dx), outer, D, inner, log) < 0)
        goto done;
    } else if (THTensor_numel(y)) {
      if (ct == TH_Float) softmax_bwd_float((float *)THTensor_data(g), (float *)THTensor_data(y), (float *)THTensor_data(dx), outer, D, inner, log);
      else softmax_bwd_double((double *)THTensor_data(g), (double *)THTensor_data(y), (double *)THTensor_data(dx), outer, D, inner, log);
    }
    r = ct == output->dtype ? THTensor_retain(dx) : at_to_dtype(dx, output->dtype, false);
  }
done:
  THTensor_free(g); THTensor_free(y); THTensor_free(dx);
  return r;
}

/* ---- nll_loss: input [N, C, *] or [C], target [N, *] ---- */
/* torch's kernels look at the target's dtype after its rank and batch size, before the sizes of the rest */
static int nll_target_dtype(const THTensor *target) {
  if (target->dtype != TH_Int64 && target->dtype != TH_UInt8) {
    THError_set(TH_ERR_RUNTIME, "expected target dtype to be Long or Byte, but got %s", THDtype_info[target->dtype].legacy);
    return -1;
  }
  return 0;
}

static int nll_shapes(const THTensor *self, const THTensor *target, int64_t *N, int64_t *C, int64_t *S) {
  char b1[128], b2[128];
  if (self->ndim < 1) { THError_set(TH_ERR_VALUE, "Expected 1 or more dimensions (got 0)"); return -1; }
  if (self->ndim == 1) {
    if (target->ndim > 1) {
      THError_set(TH_ERR_RUNTIME, "0D or 1D target tensor expected, multi-target not supported");
      return -1;
    }
    if (nll_target_dtype(target) < 0) return -1;
    if (target->ndim == 1 && target->sizes[0] != 1) {
      THError_set(TH_ERR_VALUE, "For 1D input, 1D target must have size 1, but got target size: %lld",
                  (long long)target->sizes[0]);
      return -1;
    }
    *N = 1; *C = self->sizes[0]; *S = 1;
    return 0;
  }
  *N = self->sizes[0]; *C = self->sizes[1]; *S = 1;
  for (int i = 2; i < self->ndim; i++) *S *= self->sizes[i];
  if (target->ndim != self->ndim - 1 || target->sizes[0] != *N) {
    int64_t tb = target->ndim ? target->sizes[0] : 0;   /* torch reads a 0-d target's batch as 0 */
    if (tb != *N)
      THError_set(TH_ERR_VALUE, "Expected input batch_size (%lld) to match target batch_size (%lld).",
                  (long long)*N, (long long)tb);
    else if (self->ndim == 2)
      THError_set(TH_ERR_RUNTIME, "0D or 1D target tensor expected, multi-target not supported");
    else if (self->ndim == 4)
      THError_set(TH_ERR_RUNTIME, "only batches of spatial targets supported (3D tensors) but got targets of "
                  "dimension: %d", target->ndim);
    else
      THError_set(TH_ERR_RUNTIME, "expected target of shape %s for input of shape %s", "...",
                  THTensor_sizeStr(self->ndim, self->sizes, b2, sizeof b2));
    return -1;
  }
  if (nll_target_dtype(target) < 0) return -1;
  for (int i = 2; i < self->ndim; i++)
    if (target->sizes[i - 1] != self->sizes[i]) {
      THError_set(TH_ERR_RUNTIME, "size mismatch (got input: %s, target: %s)",
                  THTensor_sizeStr(self->ndim, self->sizes, b1, sizeof b1),
                  THTensor_sizeStr(target->ndim, target->sizes, b2, sizeof b2));
      return -1;
    }
  return 0;
}

/* contiguous int64 targets and float/double weights */
typedef struct { THTensor *x, *t, *w; THDtype ct; int64_t N, C, S; int dev; } NLL;

static int nll_prepare(NLL *n, const THTensor *self, const THTensor *target, const THTensor *weight) {
  memset(n, 0, sizeof *n);
  if (nll_shapes(self, target, &n->N, &n->C, &n->S) < 0) return -1;
  if (at_common_device(3, (const THTensor *[]){ self, target, weight }, "nll_loss", &n->dev) < 0) return -1;
  if (weight && (weight->ndim != 1 || weight->sizes[0] != n->C)) {
    THError_set(TH_ERR_RUNTIME, "weight tensor should be defined either for all %lld classes or no classes but got "
                "weight tensor of shape: [%lld]", (long long)n->C, (long long)(weight->ndim ? weight->sizes[0] : 0));
    return -1;
  }
  if (!(n->x = as_compute(self, &n->ct))) return -1;
  THTensor *t64 = at_to_dtype(target, TH_Int64, false);
  n->t = t64 ? at_contiguous(t64) : NULL;
  THTensor_free(t64);
  if (!n->t) return -1;
  if (n->dev >= 0 && THTensor_device(n->t) != n->dev) {   /* a 0-d host target beside a GPU input */
    THTensor *td = at_to_device(n->t, n->dev, TH_Int64, false);
    THTensor_free(n->t);
    if (!(n->t = td)) return -1;
  }
  if (weight) {
    /* the GPU kernels read weights in the compute type, the CPU loops in double */
    THTensor *w = n->dev >= 0 ? as_type(weight, n->ct) : at_to_dtype(weight, TH_Double, true);
    n->w = w;
    if (!w) return -1;
  }
  /* targets are range-checked with ignore_index by the callers (on the GPU, by the kernels) */
  return 0;
}

static void nll_free(NLL *n) { THTensor_free(n->x); THTensor_free(n->t); THTensor_free(n->w); }

int at_check_reduction(ATReduction reduction) {
  if (reduction >= AT_REDUCTION_NONE && reduction <= AT_REDUCTION_SUM) return 0;
  THError_set(TH_ERR_VALUE, "%lld is not a valid value for reduction", (long long)reduction);
  return -1;
}

/* nll_loss on the GPU: the result in the compute type n->ct (new ref) */
static THTensor *nll_cuda(const NLL *n, const THTensor *target, ATReduction reduction, int64_t ignore_index) {
  if (at_check_reduction(reduction) < 0) return NULL;
  THTensor *out = reduction == AT_REDUCTION_NONE ? at_new_on(n->dev, n->ct, target->ndim, target->sizes, NULL)
                                                 : at_new_on(n->dev, n->ct, 0, NULL, NULL);
  if (out && n->dev != TH_DEVICE_META && at_cuda->nll_loss(n->ct, THTensor_data(n->x), (const int64_t *)THTensor_data(n->t),
                               n->w ? THTensor_data(n->w) : NULL, n->N, n->C, n->S, (int)reduction, ignore_index,
                               THTensor_data(out)) < 0) {
    THTensor_free(out);
    return NULL;
  }
  return out;
}

static THTensor *nll_backward_cuda(const NLL *n, const THTensor *grad, const THTensor *self, ATReduction reduction,
                                   int64_t ignore_index) {
  if (at_check_reduction(reduction) < 0) return NULL;
  if (THTensor_numel(grad) != (reduction == AT_REDUCTION_NONE ? n->N * n->S : 1)) {
    char b[256];
    THError_set(TH_ERR_RUNTIME, "nll_loss_backward: grad_output of size %s does not match reduction %s",
                THTensor_sizeStr(grad->ndim, grad->sizes, b, 256), reduction == AT_REDUCTION_NONE ? "'none'" : "'mean'/'sum'");
    return NULL;
  }
  if (THTensor_device(grad) != n->dev) {
    THError_set(TH_ERR_RUNTIME, "Expected all tensors to be on the same device (nll_loss_backward)");
    return NULL;
  }
  THTensor *g = as_type(grad, n->ct);
  THTensor *gi = g ? at_new_on(n->dev, n->ct, self->ndim, self->sizes, NULL) : NULL;
  if (gi && n->dev != TH_DEVICE_META && at_cuda->nll_loss_backward(n->ct, THTensor_data(g), (const int64_t *)THTensor_data(n->t),
                                       n->w ? THTensor_data(n->w) : NULL, n->N, n->C, n->S, (int)reduction,
                                       ignore_index, THTensor_data(gi)) < 0) {
    THTensor_free(gi);
    gi = NULL;
  }
  THTensor_free(g);
  return gi;
}

THTensor *at_nll_loss(const THTensor *self, const THTensor *target, const THTensor *weight, ATReduction reduction,
                      int64_t ignore_index) {
  NLL n;
  if (nll_prepare(&n, self, target, weight) < 0) { nll_free(&n); return NULL; }
  if (n.dev >= 0 || n.dev == TH_DEVICE_META) {   /* the GPU, or meta (the output alone) */
    THTensor *r = nll_cuda(&n, target, reduction, ignore_index);
    THTensor *res = !r ? NULL : r->dtype != self->dtype ? at_to_dtype(r, self->dtype, false) : THTensor_retain(r);
    THTensor_free(r);
    nll_free(&n);
    return res;
  }
  const int64_t *t = (const int64_t *)THTensor_data(n.t);
  const double *w = n.w ? (const double *)THTensor_data(n.w) : NULL;
  THTensor *out = NULL;
  THTensor *none = NULL;
  if (reduction == AT_REDUCTION_NONE) {
    none = THTensor_new(TH_Double, target->ndim, target->sizes);
    if (!none) goto done;
  }
  /* mean and sum add -w*x and w in the compute type in torch's order: an 8-level cascade
   * over the N*S targets whose level j flushes into j+1 after each index with no bits set
   * under its mask (level_power = max(4, ceil(log2(N*S)) / 8)), the levels then added up
   * from 0; targets equal to ignore_index count out of the unweighted mean */
  const bool isf = n.ct == TH_Float;
  /* half/bfloat16: torch's cascade adds in the dtype itself, each step rounded (its levels are scalar_t) */
  const THDtype rd = self->dtype == TH_Half || self->dtype == TH_BFloat16 ? self->dtype : TH_Undefined;
#define RND(v) (rd != TH_Undefined ? round_to((float)(v), rd) : (v))
  const int64_t NS = n.N * n.S;
  const int clog2 = NS <= 1 ? 0 : 64 - __builtin_clzll((uint64_t)(NS - 1));
  const int lp = clog2 / 8 > 4 ? clog2 / 8 : 4;
  const int64_t lmask = ((int64_t)1 << lp) - 1;
  float fl[8] = {0}, fw[8] = {0};
  double dl[8] = {0}, dw[8] = {0};
  int64_t ignored = 0;
  double *nv = none ? (double *)THTensor_data(none) : NULL;
  /* one loop per compute type T, accumulating into levels L (losses) and W (weights) */
#define NLL_CASCADE(T, L, W)                                                             \
  do {                                                                                   \
    const T *xd = (const T *)THTensor_data(n.x);                                         \
    for (int64_t b = 0; b < n.N; b++)                                                    \
      for (int64_t s = 0; s < n.S; s++) {                                                \
        const int64_t k = b * n.S + s, c = t[k];                                         \
        if (c == ignore_index) {                                                         \
          ignored++;                                                                     \
          if (nv) nv[k] = 0;                                                             \
          continue;                                                                      \
        }                                                                                \
        if (c < 0 || c >= n.C) {                                                         \
          THError_set(TH_ERR_INDEX, "Target %lld is out of bounds.", (long long)c);      \
          THTensor_free(none);                                                           \
          goto done;                                                                     \
        }                                                                                \
        T p = xd[(b * n.C + c) * n.S + s];                                               \
        if (w) { p = RND(p * (T)w[c]); W[0] = RND(W[0] + (T)w[c]); }                     \
        L[0] = RND(L[0] - p);                                                            \
        if (nv) nv[k] = -(double)p;                                                      \
        if (!(k & lmask))                                                                \
          for (int j = 0; j + 1 < 8 && !(k & (lmask << (j * lp))); j++) {                \
            L[j + 1] = RND(L[j + 1] + L[j]); W[j + 1] = RND(W[j + 1] + W[j]); L[j] = W[j] = 0; \
          }                                                                              \
      }                                                                                  \
  } while (0)
  if (isf) NLL_CASCADE(float, fl, fw);
  else NLL_CASCADE(double, dl, dw);
#undef NLL_CASCADE
  if (none) {
    out = at_to_dtype(none, self->dtype, false);
    THTensor_free(none);
  } else {
    double r;
    if (isf) {
      float tl = 0, tw = 0;
      for (int j = 0; j < 8; j++) { tl = RND(tl + fl[j]); tw = RND(tw + fw[j]); }
      if (!w) tw = RND((float)(NS - ignored));
      r = reduction == AT_REDUCTION_MEAN ? tl / tw : tl;
    } else {
      double tl = 0, tw = 0;
      for (int j = 0; j < 8; j++) { tl += dl[j]; tw += dw[j]; }
      if (!w) tw = (double)(NS - ignored);
      r = reduction == AT_REDUCTION_MEAN ? tl / tw : tl;
    }
    out = at_scalar_tensor(at_scalar_float(r), self->dtype);
  }
#undef RND
done:
  nll_free(&n);
  return out;
}

THTensor *at_nll_loss_backward(const THTensor *grad, const THTensor *self, const THTensor *target,
                               const THTensor *weight, ATReduction reduction, int64_t ignore_index) {
  NLL n;
  if (nll_prepare(&n, self, target, weight) < 0) { nll_free(&n); return NULL; }
  if (n.dev >= 0 || n.dev == TH_DEVICE_META) {   /* the GPU, or meta (the output alone) */
    THTensor *r = nll_backward_cuda(&n, grad, self, reduction, ignore_index);
    THTensor *res = !r ? NULL : r->dtype != self->dtype ? at_to_dtype(r, self->dtype, false) : THTensor_retain(r);
    THTensor_free(r);
    nll_free(&n);
    return res;
  }
  const int64_t *t = (const int64_t *)THTensor_data(n.t);
  const double *w = n.w ? (const double *)THTensor_data(n.w) : NULL;
  THTensor *gi = THTensor_new(TH_Double, self->ndim, self->sizes), *out = NULL, *gc = NULL;
  if (!gi) goto done;
  memset(THTensor_data(gi), 0, THTensor_numel(gi) * sizeof(double));
  double *gv = (double *)THTensor_data(gi);
  gc = at_to_dtype(grad, TH_Double, true);
  if (!gc) goto done;
  THTensor *gcc = at_contiguous(gc);
  THTensor_free(gc);
  gc = gcc;
  if (!gc) goto done;
  const double *g = (const double *)THTensor_data(gc);
  /* a bad call (targets out of range, grad_output of the wrong size) must not read past w or g */
  if (reduction < AT_REDUCTION_NONE || reduction > AT_REDUCTION_SUM) {
    THError_set(TH_ERR_VALUE, "%lld is not a valid value for reduction", (long long)reduction);
    goto done;
  }
  if (THTensor_numel(gc) != (reduction == AT_REDUCTION_NONE ? n.N * n.S : 1)) {
    char b[256];
    THError_set(TH_ERR_RUNTIME, "nll_loss_backward: grad_output of size %s does not match reduction %s",
                THTensor_sizeStr(grad->ndim, grad->sizes, b, 256), reduction == AT_REDUCTION_NONE ? "'none'" : "'mean'/'sum'");
    goto done;
  }
  for (int64_t k = 0; k < n.N * n.S; k++)
    if (t[k] != ignore_index && (t[k] < 0 || t[k] >= n.C)) {
      THError_set(TH_ERR_INDEX, "Target %lld is out of bounds.", (long long)t[k]);
      goto done;
    }
  double wsum = 0;
  if (reduction == AT_REDUCTION_MEAN)
    for (int64_t k = 0; k < n.N * n.S; k++)
      if (t[k] != ignore_index) wsum += w ? w[t[k]] : 1.0;
  for (int64_t b = 0; b < n.N; b++)
    for (int64_t s = 0; s < n.S; s++) {
      int64_t k = b * n.S + s, c = t[k];
      if (c == ignore_index) continue;
      if (c < 0 || c >= n.C) { THError_set(TH_ERR_INDEX, "Target %lld is out of bounds.", (long long)c); goto done; }
      double scale = reduction == AT_REDUCTION_NONE ? g[k] : (reduction == AT_REDUCTION_MEAN ? g[0] / wsum : g[0]);
      gv[(b * n.C + c) * n.S + s] = -(w ? w[c] : 1.0) * scale;
    }
  out = at_to_dtype(gi, self->dtype, false);
done:
  THTensor_free(gi);
  THTensor_free(gc);
  nll_free(&n);
  return out;
}

/* ---- batch norm over [N, C, S] ---- */
/* the compute type of the norms: double for double, else float */
static THDtype compute_of(const THTensor *t) { return t->dtype == TH_Double ? TH_Double : TH_Float; }

static int vec_double(const THTensor *t, int64_t C, double *out, double dflt) {
  if (!t) { for (int64_t c = 0; c < C; c++) out[c] = dflt; return 0; }
  if (THTensor_numel(t) != C) {
    THError_set(TH_ERR_RUNTIME, "running_mean should contain %lld elements not %lld", (long long)C,
                (long long)THTensor_numel(t));
    return -1;
  }
  THTensor *d = at_to_dtype(t, TH_Double, true);
  if (!d) return -1;
  if (C) memcpy(out, THTensor_data(d), C * sizeof(double));   /* an empty tensor's data is NULL */
  THTensor_free(d);
  return 0;
}

static THTensor *vec_tensor(const double *v, int64_t C, THDtype dt) {
  THTensor *d = THTensor_new(TH_Double, 1, &C);
  if (!d) return NULL;
  if (C) memcpy(THTensor_data(d), v, C * sizeof(double));
  THTensor *r = at_to_dtype(d, dt, false);
  THTensor_free(d);
  return r;
}

/* the C values of src (1-d) into dst, a vector of C elements (a running stat) */
static int copy_vec(THTensor *dst, const THTensor *src, int64_t C) {
  THTensor *view = THTensor_newView(dst, 1, &C, (int64_t[]){ dst->ndim ? dst->strides[0] : 1 }, dst->offset);
  int rc = view ? at_copy_(view, src) : -1;
  THTensor_free(view);
  return rc;
}

static int write_vec(THTensor *dst, const double *v, int64_t C) {
  THTensor *src = vec_tensor(v, C, TH_Double);
  if (!src) return -1;
  int rc = copy_vec(dst, src, C);
  THTensor_free(src);
  return rc;
}

/* ---- batch norm and layer norm of GPU tensors (src/THC/THCNorm.cu): the
 * operands as contiguous device copies in the compute type, the kernels, the
 * results cast back to the input's dtype. Nothing here reads device memory. ---- */
#define DPTR(t) ((t) ? THTensor_data(t) : NULL)

/* t (C elements, or NULL) as a contiguous vector of ct on its device: *out (new ref or NULL) */
static int vec_ct(const THTensor *t, int64_t C, THDtype ct, THTensor **out) {
  *out = NULL;
  if (!t) return 0;
  if (THTensor_numel(t) != C) {
    THError_set(TH_ERR_RUNTIME, "running_mean should contain %lld elements not %lld", (long long)C,
                (long long)THTensor_numel(t));
    return -1;
  }
  return (*out = as_type(t, ct)) ? 0 : -1;
}

/* y as dtype dt (new ref) */
static THTensor *cast_back(THTensor *y, THDtype dt) {
  return y->dtype == dt ? THTensor_retain(y) : at_to_dtype(y, dt, false);
}

/* a norm backward's results: dx as the input's dtype, dw and db as the weight's (all or none) */
static int grads_out(THTensor **outs, THTensor *dx, THTensor *dw, THTensor *db, THDtype in_dt, THDtype wdt) {
  outs[0] = cast_back(dx, in_dt);
  outs[1] = cast_back(dw, wdt);
  outs[2] = cast_back(db, wdt);
  if (outs[0] && outs[1] && outs[2]) return 0;
  for (int i = 0; i < 3; i++) { THTensor_free(outs[i]); outs[i] = NULL; }
  return -1;
}

static int batch_norm_cuda(THTensor **outs, const THTensor *input, const THTensor *const vecs[4], bool training,
                           double momentum, double eps, int64_t N, int64_t C, int64_t S) {
  const THTensor *all[5] = { input, vecs[0], vecs[1], vecs[2], vecs[3] };   /* weight, bias, running mean, var */
  int dev;
  if (at_common_device(5, all, "native_batch_norm", &dev) < 0) return -1;
  THDtype ct = compute_of(input);
  THTensor *x = as_type(input, ct), *v[4] = { NULL }, *y = NULL, *mean = NULL, *invstd = NULL, *nrm = NULL, *nrv = NULL;
  int rc = -1;
  if (!x) return -1;
  for (int i = 0; i < 4; i++)
    if (vec_ct(vecs[i], C, ct, &v[i]) < 0) goto done;
  if (!(y = at_new_on(dev, ct, x->ndim, x->sizes, NULL)) || !(mean = at_new_on(dev, ct, 1, &C, NULL)) ||
      !(invstd = at_new_on(dev, ct, 1, &C, NULL)))
    goto done;
  if (training && v[2] && !(nrm = at_new_on(dev, ct, 1, &C, NULL))) goto done;
  if (training && v[3] && !(nrv = at_new_on(dev, ct, 1, &C, NULL))) goto done;
  if (dev == TH_DEVICE_META) goto results;   /* meta: the shapes alone */
  /* cuDNN first (as PyTorch: 3-d or more input, float; it declines the rest), then the own kernels */
  int by_cudnn = 0;
  if (at_cudnn_flags.enabled && at_cuda->cudnn_batch_norm && input->ndim >= 3) {
    by_cudnn = at_cuda->cudnn_batch_norm(ct, THTensor_data(x), DPTR(v[0]), DPTR(v[1]), DPTR(v[2]), DPTR(v[3]),
                                         THTensor_data(y), THTensor_data(mean), THTensor_data(invstd), DPTR(nrm),
                                         DPTR(nrv), N, C, S, training, momentum, eps);
    if (by_cudnn < 0) goto done;
    if (by_cudnn) at_cudnn_taken++; else at_cudnn_declined++;
  }
  if (!by_cudnn && at_cuda->batch_norm(ct, THTensor_data(x), DPTR(v[0]), DPTR(v[1]), DPTR(v[2]), DPTR(v[3]),
                                       THTensor_data(y), THTensor_data(mean), THTensor_data(invstd), DPTR(nrm),
                                       DPTR(nrv), N, C, S, training, momentum, eps) < 0)
    goto done;
  if (nrm && copy_vec((THTensor *)vecs[2], nrm, C) < 0) goto done;
  if (nrv && copy_vec((THTensor *)vecs[3], nrv, C) < 0) goto done;
results:
  if (!(outs[0] = cast_back(y, input->dtype))) goto done;
  outs[1] = THTensor_retain(mean);
  outs[2] = THTensor_retain(invstd);
  rc = 0;
done:
  THTensor_free(x); THTensor_free(y); THTensor_free(mean); THTensor_free(invstd); THTensor_free(nrm); THTensor_free(nrv);
  for (int i = 0; i < 4; i++) THTensor_free(v[i]);
  return rc;
}

/* torch's CPU norms (its mixed_data_type.h): the first parameter given decides. Of the input's dtype, every
 * other one must match too (its kernels' "expected scalar type"); of another dtype, it is the mixed-type kernel,
 * which takes float32 parameters for a half/bfloat16 input only. Any other pairing is an error, in torch's words */
int at_norm_dtype_check(const THTensor *input, int n, const THTensor *const *params) {
  const THTensor *first = NULL;
  if (at_off_host(input)) return 0;
  for (int i = 0; i < n && !first; i++) first = params[i];
  if (!first) return 0;
  if (first->dtype == input->dtype) {
    for (int i = 0; i < n; i++)
      if (params[i] && params[i]->dtype != input->dtype) {
        THError_set(TH_ERR_RUNTIME, "expected scalar type %s but found %s", THDtype_info[input->dtype].legacy,
                    THDtype_info[params[i]->dtype].legacy);
        return -1;
      }
    return 0;
  }
  for (int i = 0; i < n; i++)
    if (params[i] && params[i]->dtype != TH_Float) {
      THError_set(TH_ERR_RUNTIME, "mixed dtype (CPU): expect parameter to have scalar type of Float");
      return -1;
    }
  if (input->dtype != TH_Half && input->dtype != TH_BFloat16) {
    THError_set(TH_ERR_RUNTIME, "mixed dtype (CPU): all inputs must share same datatype.");
    return -1;
  }
  return 0;
}

/* group_norm is a composite over layer_norm (cthtorch/_ops/nn.py); its parameters and input pass torch's
 * native_group_norm checks here first, so the pairings torch refuses do not promote. 1 when they pass */
int at_group_norm_check(const THTensor *input, const THTensor *weight, const THTensor *bias) {
  if (at_norm_dtype_check(input, 2, (const THTensor *[]){ weight, bias }) < 0) return -1;
  if (!at_off_host(input) && !THDtype_isFloating(input->dtype)) {
    THError_set(TH_ERR_NOTIMPL, "\"GroupNormKernelImpl\" not implemented for '%s'", THDtype_info[input->dtype].legacy);
    return -1;
  }
  return 1;
}

static int batch_norm_nchw(THTensor **outs, const THTensor *input, const THTensor *weight, const THTensor *bias,
                           const THTensor *running_mean, const THTensor *running_var, bool training,
                           double momentum, double eps) {
  if (at_norm_dtype_check(input, 4, (const THTensor *[]){ weight, bias, running_mean, running_var }) < 0) return -1;
  if (input->ndim < 2) {
    THError_set(TH_ERR_VALUE, "Expected 2D or more input to batch_norm (got %dD input)", input->ndim);
    return -1;
  }
  int64_t N = input->sizes[0], C = input->sizes[1], S = (N * C != 0) ? THTensor_numel(input) / (N * C) : 1;
  if (training && N * S <= 1) {
    THError_set(TH_ERR_VALUE, "Expected more than 1 value per channel when training, got input size [%lld, %lld]",
                (long long)N, (long long)C);
    return -1;
  }
  if (at_off_host(input)) {   /* the GPU, or meta (shapes only) */
    const THTensor *vecs[4] = { weight, bias, running_mean, running_var };
    return batch_norm_cuda(outs, input, vecs, training, momentum, eps, N, C, S);
  }
  THDtype ct;
  THTensor *x = as_compute(input, &ct);
  if (!x) return -1;
  double *mean = calloc(C, sizeof(double)), *invstd = calloc(C, sizeof(double)), *w = calloc(C, sizeof(double)),
         *b = calloc(C, sizeof(double)), *rm = calloc(C, sizeof(double)), *rv = calloc(C, sizeof(double));
  THTensor *y = NULL;
  int rc = -1;
  if (!mean || !invstd || !w || !b || !rm || !rv) { THError_set(TH_ERR_MEMORY, "out of memory"); goto done; }
  if (vec_double(weight, C, w, 1) < 0 || vec_double(bias, C, b, 0) < 0 || vec_double(running_mean, C, rm, 0) < 0 ||
      vec_double(running_var, C, rv, 1) < 0)
    goto done;
  if (!(y = THTensor_new(ct, x->ndim, x->sizes))) goto done;
  const char *xd = THTensor_data(x);
  char *yd = THTensor_data(y);
  bool f32 = ct == TH_Float;
  /* Threads split the (n, c) planes as elementwise ops split the elements
   * (first images to thread 0), summing per channel into partials of their
   * own: each thread reads and writes the planes it and its neighbours in the
   * graph touch, which matters when the two cores do not share an L3. */
  int nth = N * C * S > 32768 ? at_get_num_threads() : 1;
  int64_t pc = (2 * C + 7) / 8 * 8;   /* a thread's partials start on a fresh cache line */
  double *part = calloc((size_t)nth * pc + 8, sizeof(double));
  if (!part) { THError_set(TH_ERR_MEMORY, "out of memory"); goto done; }
  int64_t NC = N * C;
#pragma omp parallel num_threads(nth) if (nth > 1)
  {
    double *ps = part + (size_t)omp_get_thread_num() * pc;
    if (training) {
#pragma omp for schedule(static)
      for (int64_t p = 0; p < NC; p++) {
        double s = 0;
        if (f32) { const float *xs = (const float *)xd + p * S; _Pragma("omp simd reduction(+:s)") for (int64_t k = 0; k < S; k++) s += xs[k]; }
        else { const double *xs = (const double *)xd + p * S; _Pragma("omp simd reduction(+:s)") for (int64_t k = 0; k < S; k++) s += xs[k]; }
        ps[p % C] += s;
      }
#pragma omp single
      for (int64_t c = 0; c < C; c++) {
        double t = 0;
        for (int i = 0; i < nth; i++) t += part[(size_t)i * pc + c];
        mean[c] = t / (double)(N * S);
      }
#pragma omp for schedule(static)
      for (int64_t p = 0; p < NC; p++) {
        double s2 = 0, m = mean[p % C];
        if (f32) { const float *xs = (const float *)xd + p * S; _Pragma("omp simd reduction(+:s2)") for (int64_t k = 0; k < S; k++) { double v = xs[k] - m; s2 += v * v; } }
        else { const double *xs = (const double *)xd + p * S; _Pragma("omp simd reduction(+:s2)") for (int64_t k = 0; k < S; k++) { double v = xs[k] - m; s2 += v * v; } }
        ps[C + p % C] += s2;
      }
#pragma omp single
      for (int64_t c = 0; c < C; c++) {
        double s2 = 0, m = mean[c];
        for (int i = 0; i < nth; i++) s2 += part[(size_t)i * pc + C + c];
        double var = s2 / (double)(N * S);
        invstd[c] = 1.0 / sqrt(var + eps);
        rm[c] = (1 - momentum) * rm[c] + momentum * m;
        rv[c] = (1 - momentum) * rv[c] + momentum * (N * S > 1 ? s2 / (double)(N * S - 1) : var);
      }
    } else {
#pragma omp for schedule(static)
      for (int64_t c = 0; c < C; c++) { mean[c] = rm[c]; invstd[c] = 1.0 / sqrt(rv[c] + eps); }
    }
#pragma omp for schedule(static)
    for (int64_t p = 0; p < NC; p++) {
      int64_t c = p % C;
      double a = w[c] * invstd[c], bb = b[c] - mean[c] * a;
      if (f32) {
        const float *xs = (const float *)xd + p * S; float *ys = (float *)yd + p * S;
        float af = (float)a, bf = (float)bb;
        for (int64_t k = 0; k < S; k++) ys[k] = xs[k] * af + bf;
      } else {
        const double *xs = (const double *)xd + p * S; double *ys = (double *)yd + p * S;
        for (int64_t k = 0; k < S; k++) ys[k] = xs[k] * a + bb;
      }
    }
  }
  free(part);
  if (training && running_mean && write_vec((THTensor *)running_mean, rm, C) < 0) goto done;
  if (training && running_var && write_vec((THTensor *)running_var, rv, C) < 0) goto done;
  outs[0] = ct == input->dtype ? THTensor_retain(y) : at_to_dtype(y, input->dtype, false);
  outs[1] = vec_tensor(mean, C, ct);
  outs[2] = vec_tensor(invstd, C, ct);
  if (!outs[0] || !outs[1] || !outs[2]) {
    for (int i = 0; i < 3; i++) { THTensor_free(outs[i]); outs[i] = NULL; }
    goto done;
  }
  rc = 0;
done:
  free(mean); free(invstd); free(w); free(b); free(rm); free(rv);
  THTensor_free(x);
  THTensor_free(y);
  return rc;
}

/* the result keeps a channels-last input's layout, as torch's */
int at_batch_norm(THTensor **outs, const THTensor *input, const THTensor *weight, const THTensor *bias,
                  const THTensor *running_mean, const THTensor *running_var, bool training, double momentum,
                  double eps) {
  if (batch_norm_nchw(outs, input, weight, bias, running_mean, running_var, training, momentum, eps) < 0) return -1;
  if (at_keep_format(input, &outs[0]) < 0) {
    THTensor_free(outs[1]); THTensor_free(outs[2]);
    outs[1] = outs[2] = NULL;
    return -1;
  }
  return 0;
}

/* The norm backwards read grad_output (and the saved statistics) in the
 * compute type of input (float, or double for double input), element for
 * element with input: a bad call must not make them read past an end. */

static int norm_backward_check(const THTensor *grad, const THTensor *input, const THTensor **stats, int nstats,
                               const char *op) {
  if (at_check_same_shape(grad, input, op, "grad_out", "input") < 0) return -1;
  for (int i = -1; i < nstats; i++) {
    const THTensor *t = i < 0 ? grad : stats[i];
    if (t && compute_of(t) != compute_of(input)) {
      THError_set(TH_ERR_RUNTIME, "%s: expected %s to have the same dtype as input, but got %s and %s", op,
                  i < 0 ? "grad_out" : "the saved statistics", THDtype_info[t->dtype].name,
                  THDtype_info[input->dtype].name);
      return -1;
    }
  }
  return 0;
}

/* vecs: weight, running_mean, running_var, save_mean, save_invstd; eval mode
 * reads the running stats (the kernel adds eps to the variance) */
static int batch_norm_backward_cuda(THTensor **outs, const THTensor *grad, const THTensor *input,
                                    const THTensor *const vecs[5], bool training, double eps, int64_t N, int64_t C,
                                    int64_t S) {
  const THTensor *all[7] = { grad, input, vecs[0], vecs[1], vecs[2], vecs[3], vecs[4] };
  int dev;
  if (at_common_device(7, all, "native_batch_norm_backward", &dev) < 0) return -1;
  THDtype ct = compute_of(input), wdt = vecs[0] ? vecs[0]->dtype : input->dtype;
  THTensor *x = as_type(input, ct), *g = x ? as_type(grad, ct) : NULL, *w = NULL, *m = NULL, *s1 = NULL;
  THTensor *dx = NULL, *dw = NULL, *db = NULL;
  int rc = -1;
  if (!g || vec_ct(vecs[0], C, ct, &w) < 0 || vec_ct(vecs[training ? 3 : 1], C, ct, &m) < 0 ||
      vec_ct(vecs[training ? 4 : 2], C, ct, &s1) < 0)
    goto done;
  if (!(dx = at_new_on(dev, ct, x->ndim, x->sizes, NULL)) || !(dw = at_new_on(dev, ct, 1, &C, NULL)) ||
      !(db = at_new_on(dev, ct, 1, &C, NULL)))
    goto done;
  int by_cudnn = 0;
  if (at_cudnn_flags.enabled && at_cuda->cudnn_batch_norm_backward && input->ndim >= 3) {
    by_cudnn = at_cuda->cudnn_batch_norm_backward(ct, THTensor_data(g), THTensor_data(x), DPTR(w), DPTR(m),
                                                  DPTR(s1), !training, THTensor_data(dx), THTensor_data(dw),
                                                  THTensor_data(db), N, C, S, training, eps);
    if (by_cudnn < 0) goto done;
    if (by_cudnn) at_cudnn_taken++; else at_cudnn_declined++;
  }
  if (!by_cudnn && at_cuda->batch_norm_backward(ct, THTensor_data(g), THTensor_data(x), DPTR(w), DPTR(m), DPTR(s1),
                                                !training, THTensor_data(dx), THTensor_data(dw), THTensor_data(db), N,
                                                C, S, training, eps) < 0)
    goto done;
  rc = grads_out(outs, dx, dw, db, input->dtype, wdt);
done:
  THTensor_free(x); THTensor_free(g); THTensor_free(w); THTensor_free(m); THTensor_free(s1);
  THTensor_free(dx); THTensor_free(dw); THTensor_free(db);
  return rc;
}

int at_batch_norm_backward(THTensor **outs, const THTensor *grad, const THTensor *input, const THTensor *weight,
                           const THTensor *running_mean, const THTensor *running_var, const THTensor *save_mean,
                           const THTensor *save_invstd, bool training, double eps) {
  if (at_check_ndim(input, 2, TH_MAX_DIMS, "native_batch_norm_backward", "input") < 0 ||
      norm_backward_check(grad, input, NULL, 0, "native_batch_norm_backward") < 0)
    return -1;
  int64_t N = input->sizes[0], C = input->sizes[1], S = (N * C != 0) ? THTensor_numel(input) / (N * C) : 1;
  if (THTensor_device(input) >= 0) {
    const THTensor *vecs[5] = { weight, running_mean, running_var, save_mean, save_invstd };
    return batch_norm_backward_cuda(outs, grad, input, vecs, training, eps, N, C, S);
  }
  THDtype ct, ct2;
  THTensor *x = as_compute(input, &ct), *g = x ? as_compute(grad, &ct2) : NULL, *dx = NULL;
  double *mean = calloc(C, sizeof(double)), *is = calloc(C, sizeof(double)), *w = calloc(C, sizeof(double)),
         *dw = calloc(C, sizeof(double)), *db = calloc(C, sizeof(double));
  int rc = -1;
  if (!x || !g || !mean || !is || !w || !dw || !db) goto done;
  if (vec_double(weight, C, w, 1) < 0) goto done;
  if (training) {
    if (vec_double(save_mean, C, mean, 0) < 0 || vec_double(save_invstd, C, is, 1) < 0) goto done;
  } else {
    double *rv = calloc(C, sizeof(double));
    if (!rv || vec_double(running_mean, C, mean, 0) < 0 || vec_double(running_var, C, rv, 1) < 0) { free(rv); goto done; }
    for (int64_t c = 0; c < C; c++) is[c] = 1.0 / sqrt(rv[c] + eps);
    free(rv);
  }
  if (!(dx = THTensor_new(ct, x->ndim, x->sizes))) goto done;
  const char *xd = THTensor_data(x), *gd = THTensor_data(g);
  char *dd = THTensor_data(dx);
  bool f32 = ct == TH_Float;
  double M = (double)(N * S);
  /* sums of g and g*x per channel, then dx = k1*g + k2*x + k0; threads split
   * the (n, c) planes as in the forward, with partial sums of their own */
  int nth = N * C * S > 32768 ? at_get_num_threads() : 1;
  int64_t pc = (2 * C + 7) / 8 * 8, NC = N * C;
  double *part = calloc((size_t)nth * pc + 8, sizeof(double)), *k0s = malloc((3 * C + 1) * sizeof(double));
  if (!part || !k0s) { free(part); free(k0s); THError_set(TH_ERR_MEMORY, "out of memory"); goto done; }
  double *k1s = k0s + C, *k2s = k0s + 2 * C;
#pragma omp parallel num_threads(nth) if (nth > 1)
  {
    double *ps = part + (size_t)omp_get_thread_num() * pc;
#pragma omp for schedule(static)
    for (int64_t p = 0; p < NC; p++) {
      double sg = 0, sgx = 0;
      int64_t o = p * S;
      if (f32) {
        const float *gs = (const float *)gd + o, *xs = (const float *)xd + o;
        _Pragma("omp simd reduction(+:sg, sgx)") for (int64_t k = 0; k < S; k++) { sg += gs[k]; sgx += (double)gs[k] * xs[k]; }
      } else {
        const double *gs = (const double *)gd + o, *xs = (const double *)xd + o;
        _Pragma("omp simd reduction(+:sg, sgx)") for (int64_t k = 0; k < S; k++) { sg += gs[k]; sgx += gs[k] * xs[k]; }
      }
      ps[p % C] += sg;
      ps[C + p % C] += sgx;
    }
#pragma omp single
    for (int64_t c = 0; c < C; c++) {
      double sg = 0, sgx = 0;
      for (int i = 0; i < nth; i++) { sg += part[(size_t)i * pc + c]; sgx += part[(size_t)i * pc + C + c]; }
      sgx -= mean[c] * sg;   /* sum g * (x - mean) */
      db[c] = sg;
      dw[c] = sgx * is[c];
      double k1 = w[c] * is[c], k2 = 0, k0 = 0;
      if (training) {
        k2 = -k1 * is[c] * is[c] * sgx / M;
        k0 = -k2 * mean[c] - k1 * sg / M;
      }
      k0s[c] = k0; k1s[c] = k1; k2s[c] = k2;
    }
#pragma omp for schedule(static)
    for (int64_t p = 0; p < NC; p++) {
      int64_t c = p % C, o = p * S;
      if (f32) {
        const float *gs = (const float *)gd + o, *xs = (const float *)xd + o;
        float *ds = (float *)dd + o, f1 = (float)k1s[c], f2 = (float)k2s[c], f0 = (float)k0s[c];
        for (int64_t k = 0; k < S; k++) ds[k] = f1 * gs[k] + f2 * xs[k] + f0;
      } else {
        const double *gs = (const double *)gd + o, *xs = (const double *)xd + o;
        double *ds = (double *)dd + o, k1 = k1s[c], k2 = k2s[c], k0 = k0s[c];
        for (int64_t k = 0; k < S; k++) ds[k] = k1 * gs[k] + k2 * xs[k] + k0;
      }
    }
  }
  free(part); free(k0s);
  outs[0] = ct == input->dtype ? THTensor_retain(dx) : at_to_dtype(dx, input->dtype, false);
  outs[1] = vec_tensor(dw, C, weight ? weight->dtype : input->dtype);
  outs[2] = vec_tensor(db, C, weight ? weight->dtype : input->dtype);
  if (!outs[0] || !outs[1] || !outs[2]) {
    for (int i = 0; i < 3; i++) { THTensor_free(outs[i]); outs[i] = NULL; }
    goto done;
  }
  rc = 0;
done:
  free(mean); free(is); free(w); free(dw); free(db);
  THTensor_free(x); THTensor_free(g); THTensor_free(dx);
  return rc;
}

/* ---- layer norm: rows of M = prod(normalized_shape) elements ---- */
static int ln_rows(const THTensor *input, const ATIntList *shape, int64_t *R, int64_t *M) {
  char b1[256], b2[256], b3[256];
  int k = shape->n;
  bool ok = k <= input->ndim;
  for (int i = 0; ok && i < k; i++) ok = input->sizes[input->ndim - k + i] == shape->v[i];
  if (!ok) {
    /* b2: the shape's list without its brackets, as torch's [*, 5, 6] */
    THTensor_sizeStr(shape->n, shape->v, b2, 256);
    size_t len = strlen(b2);
    if (len >= 2) b2[len - 1] = '\0';
    THError_set(TH_ERR_RUNTIME, "Given normalized_shape=%s, expected input with shape [*, %s], but got input of size%s",
                THTensor_sizeStr(shape->n, shape->v, b1, 256), b2 + 1,
                THTensor_sizeStr(input->ndim, input->sizes, b3, 256));
    return -1;
  }
  *M = 1;
  for (int i = 0; i < k; i++) *M *= shape->v[i];
  *R = 1;   /* the leading dims' product (not numel / M: M may be 0 with rows left) */
  for (int i = 0; i < input->ndim - k; i++) *R *= input->sizes[i];
  return 0;
}

/* One row per iteration, each pass an omp simd loop over the row (which stays
 * in cache): mean, then the centered sum of squares (two passes: no
 * cancellation), then the output. Row statistics sum in double. */
#define LN_FWD(T)                                                                                   \
  static void ln_fwd_##T(const T *x, const T *w, const T *b, T *y, T *mean, T *rstd, int64_t R,    \
                         int64_t M, double eps) {                                                   \
    _Pragma("omp parallel for if (R * M > 32768)")                                                 \
    for (int64_t r = 0; r < R; r++) {                                                              \
      const T *xr = x + r * M;                                                                     \
      T *yr = y + r * M;                                                                           \
      double s = 0, s2 = 0;                                                                        \
      _Pragma("omp simd reduction(+:s)")                                                           \
      for (int64_t j = 0; j < M; j++) s += xr[j];                                                  \
      double md = s / (double)M;                                                                   \
      _Pragma("omp simd reduction(+:s2)")                                                          \
      for (int64_t j = 0; j < M; j++) { double v = xr[j] - md; s2 += v * v; }                      \
      T m = (T)md, is = (T)(1.0 / sqrt(s2 / (double)M + eps));                                     \
      mean[r] = m;                                                                                 \
      rstd[r] = is;                                                                                \
      if (w && b) {                                                                                \
        _Pragma("omp simd")                                                                        \
        for (int64_t j = 0; j < M; j++) yr[j] = (xr[j] - m) * is * w[j] + b[j];                    \
      } else {                                                                                     \
        _Pragma("omp simd")                                                                        \
        for (int64_t j = 0; j < M; j++) yr[j] = (xr[j] - m) * is * (w ? w[j] : (T)1) + (b ? b[j] : (T)0); \
      }                                                                                            \
    }                                                                                              \
  }
LN_FWD(double)

/* float rows: the same two passes and output, each sum in four 8-float
 * vector accumulators (so no add waits on the one before) that are emptied
 * into double every LN_BLOCK elements, so no float chain is longer than
 * LN_BLOCK / 32 terms: half the work of widening every element to double. */
#define LN_BLOCK 1024
typedef float ln_v8f __attribute__((vector_size(32), aligned(4)));   /* unaligned loads */
static inline double ln_v8f_sum(ln_v8f a) {
  double s = 0;
  for (int k = 0; k < 8; k++) s += a[k];
  return s;
}
/* sum of (x[j] - c)^2 (square) or of x[j] (c unused) over [0, n) */
static inline __attribute__((always_inline)) double ln_row_sum_float(const float *x, int64_t n, float c,
                                                                     const bool square) {
  double s = 0;
  const ln_v8f cv = { c, c, c, c, c, c, c, c };
  for (int64_t j0 = 0; j0 < n; j0 += LN_BLOCK) {
    int64_t j1 = j0 + LN_BLOCK < n ? j0 + LN_BLOCK : n, j = j0;
    ln_v8f a0 = { 0 }, a1 = { 0 }, a2 = { 0 }, a3 = { 0 };
    for (; j + 32 <= j1; j += 32) {
      ln_v8f v0 = *(const ln_v8f *)(x + j), v1 = *(const ln_v8f *)(x + j + 8);
      ln_v8f v2 = *(const ln_v8f *)(x + j + 16), v3 = *(const ln_v8f *)(x + j + 24);
      if (square) {
        v0 -= cv; v1 -= cv; v2 -= cv; v3 -= cv;
        a0 += v0 * v0; a1 += v1 * v1; a2 += v2 * v2; a3 += v3 * v3;
      } else {
        a0 += v0; a1 += v1; a2 += v2; a3 += v3;
      }
    }
    for (; j + 8 <= j1; j += 8) {
      ln_v8f v = *(const ln_v8f *)(x + j);
      if (square) { v -= cv; a0 += v * v; } else a0 += v;
    }
    float t = 0;
    for (; j < j1; j++) t += square ? (x[j] - c) * (x[j] - c) : x[j];
    s += ln_v8f_sum((a0 + a1) + (a2 + a3)) + t;
  }
  return s;
}
static void ln_fwd_float(const float *x, const float *w, const float *b, float *y, float *mean, float *rstd,
                         int64_t R, int64_t M, double eps) {
#pragma omp parallel for if (R * M > 32768)
  for (int64_t r = 0; r < R; r++) {
    const float *xr = x + r * M;
    float *yr = y + r * M;
    float m = (float)(ln_row_sum_float(xr, M, 0, false) / (double)M);
    float is = (float)(1.0 / sqrt(ln_row_sum_float(xr, M, m, true) / (double)M + eps));
    mean[r] = m;
    rstd[r] = is;
    if (w && b) {
#pragma omp simd
      for (int64_t j = 0; j < M; j++) yr[j] = (xr[j] - m) * is * w[j] + b[j];
    } else {
#pragma omp simd
      for (int64_t j = 0; j < M; j++) yr[j] = (xr[j] - m) * is * (w ? w[j] : 1.0f) + (b ? b[j] : 0.0f);
    }
  }
}

/* dx = rstd * (dxh - mean(dxh) - xhat * mean(dxh * xhat)), dxh = g * w, per row;
 * dw = sum_rows g * xhat, db = sum_rows g: each thread sums its rows into its
 * own pair of double rows (part), added up after. */
#define LN_BWD(T)                                                                                   \
  static void ln_bwd_##T(const T *g, const T *x, const T *mean, const T *rstd, const T *w, T *dx,  \
                         double *part, int nt, int64_t R, int64_t M) {                              \
    _Pragma("omp parallel num_threads(nt)")                                                        \
    {                                                                                              \
      double *pw = part + 2 * M * omp_get_thread_num(), *pb = pw + M;                              \
      _Pragma("omp for schedule(static)")                                                          \
      for (int64_t r = 0; r < R; r++) {                                                            \
        const T *xr = x + r * M, *gr = g + r * M;                                                  \
        T *dr = dx + r * M, m = mean[r], is = rstd[r];                                             \
        double a = 0, bsum = 0;                                                                    \
        _Pragma("omp simd reduction(+:a, bsum)")                                                   \
        for (int64_t j = 0; j < M; j++) {                                                          \
          T xh = (xr[j] - m) * is, dxh = gr[j] * (w ? w[j] : (T)1);                                \
          a += dxh;                                                                                \
          bsum += dxh * xh;                                                                        \
          pw[j] += gr[j] * xh;                                                                     \
          pb[j] += gr[j];                                                                          \
        }                                                                                          \
        T ca = (T)(a / (double)M), cb = (T)(bsum / (double)M);                                     \
        _Pragma("omp simd")                                                                        \
        for (int64_t j = 0; j < M; j++) {                                                          \
          T xh = (xr[j] - m) * is;                                                                 \
          dr[j] = is * (gr[j] * (w ? w[j] : (T)1) - ca - xh * cb);                                 \
        }                                                                                          \
      }                                                                                            \
    }                                                                                              \
  }
LN_BWD(double)

/* float rows: the row sums in float over LN_BLOCK elements at a time, and
 * each thread's dw/db terms in a pair of float rows emptied into its double
 * rows at the end of each block of LN_BWD_ROWS rows (part holds both: 2M
 * doubles then 2M floats per thread), instead of widening every term to
 * double. The blocks are fixed by row index and handed out whole, so every
 * float partial is the same at any thread count and dw/db keep their bits
 * (only whole floats meet in double, where their sums are exact). */
#define LN_BWD_ROWS 16
static void ln_bwd_float(const float *g, const float *x, const float *mean, const float *rstd, const float *w,
                         float *dx, double *part, int nt, int64_t R, int64_t M) {
#pragma omp parallel num_threads(nt)
  {
    int tid = omp_get_thread_num();
    double *pw = part + 2 * M * tid, *pb = pw + M;
    float *fw = (float *)(part + 2 * M * nt) + 2 * M * tid, *fb = fw + M;
#pragma omp for schedule(static, LN_BWD_ROWS)
    for (int64_t r = 0; r < R; r++) {
      const float *xr = x + r * M, *gr = g + r * M;
      float *dr = dx + r * M, m = mean[r], is = rstd[r];
      double a = 0, bsum = 0;
      for (int64_t j0 = 0; j0 < M; j0 += LN_BLOCK) {
        int64_t j1 = j0 + LN_BLOCK < M ? j0 + LN_BLOCK : M;
        float fa = 0, fbs = 0;
#pragma omp simd reduction(+:fa, fbs)
        for (int64_t j = j0; j < j1; j++) {
          float xh = (xr[j] - m) * is, dxh = gr[j] * (w ? w[j] : 1.0f);
          fa += dxh;
          fbs += dxh * xh;
          fw[j] += gr[j] * xh;
          fb[j] += gr[j];
        }
        a += fa;
        bsum += fbs;
      }
      if ((r + 1) % LN_BWD_ROWS == 0 || r == R - 1)
        for (int64_t j = 0; j < M; j++) { pw[j] += fw[j]; pb[j] += fb[j]; fw[j] = fb[j] = 0; }
      float ca = (float)(a / (double)M), cb = (float)(bsum / (double)M);
#pragma omp simd
      for (int64_t j = 0; j < M; j++) {
        float xh = (xr[j] - m) * is;
        dr[j] = is * (gr[j] * (w ? w[j] : 1.0f) - ca - xh * cb);
      }
    }
  }
}

/* mean and rstd keep input's leading dims, 1 for the normalized ones */
static void ln_stat_sizes(const THTensor *input, const ATIntList *shape, int64_t *rs) {
  int rn = input->ndim - shape->n;
  for (int i = 0; i < input->ndim; i++) rs[i] = i < rn ? input->sizes[i] : 1;
}

/* weight/bias of layer norm have normalized_shape: the kernels (CPU and GPU)
 * read M contiguous values of each, so any other shape (a 0-d weight made
 * from a Python number, say) would read past its end */
static int ln_param_check(const THTensor *t, const ATIntList *shape, const char *what) {
  bool ok = !t || t->ndim == shape->n;
  for (int i = 0; ok && t && i < shape->n; i++) ok = t->sizes[i] == shape->v[i];
  if (ok) return 0;
  char a[256], b[256];
  THError_set(TH_ERR_RUNTIME, "Expected %s to be of same shape as normalized_shape, but got %s of shape %s and "
              "normalized_shape = %s", what, what, THTensor_sizeStr(t->ndim, t->sizes, a, 256),
              THTensor_sizeStr(shape->n, shape->v, b, 256));
  return -1;
}

static int layer_norm_cuda(THTensor **outs, const THTensor *input, const ATIntList *shape, const THTensor *weight,
                           const THTensor *bias, double eps, int64_t R, int64_t M) {
  const THTensor *all[3] = { input, weight, bias };
  int dev;
  if (at_common_device(3, all, "native_layer_norm", &dev) < 0) return -1;
  THDtype ct = compute_of(input);
  int64_t rs[TH_MAX_DIMS];
  ln_stat_sizes(input, shape, rs);
  THTensor *x = as_type(input, ct), *wt = NULL, *bt = NULL, *y = NULL, *mean = NULL, *rstd = NULL;
  int rc = -1;
  if (!x || (weight && !(wt = as_type(weight, ct))) || (bias && !(bt = as_type(bias, ct)))) goto done;
  if (!(y = at_new_on(dev, ct, x->ndim, x->sizes, NULL)) || !(mean = at_new_on(dev, ct, input->ndim, rs, NULL)) ||
      !(rstd = at_new_on(dev, ct, input->ndim, rs, NULL)))
    goto done;
  if ((dev != TH_DEVICE_META &&   /* meta: the shapes alone */
       at_cuda->layer_norm(ct, THTensor_data(x), DPTR(wt), DPTR(bt), THTensor_data(y), THTensor_data(mean),
                           THTensor_data(rstd), R, M, eps) < 0) || !(outs[0] = cast_back(y, input->dtype)))
    goto done;
  outs[1] = THTensor_retain(mean);
  outs[2] = THTensor_retain(rstd);
  rc = 0;
done:
  THTensor_free(x); THTensor_free(wt); THTensor_free(bt); THTensor_free(y); THTensor_free(mean); THTensor_free(rstd);
  return rc;
}

static int layer_norm_backward_cuda(THTensor **outs, const THTensor *grad, const THTensor *input,
                                    const ATIntList *shape, const THTensor *mean, const THTensor *rstd,
                                    const THTensor *weight, int64_t R, int64_t M) {
  const THTensor *all[5] = { grad, input, mean, rstd, weight };
  int dev;
  if (at_common_device(5, all, "native_layer_norm_backward", &dev) < 0) return -1;
  THDtype ct = compute_of(input), wdt = weight ? weight->dtype : input->dtype;
  THTensor *x = as_type(input, ct), *g = NULL, *mt = NULL, *st = NULL, *wt = NULL, *dx = NULL, *dw = NULL, *db = NULL;
  int rc = -1;
  if (!x || !(g = as_type(grad, ct)) || !(mt = as_type(mean, ct)) || !(st = as_type(rstd, ct)) ||
      (weight && !(wt = as_type(weight, ct))))
    goto done;
  if (!(dx = at_new_on(dev, ct, x->ndim, x->sizes, NULL)) || !(dw = at_new_on(dev, ct, shape->n, shape->v, NULL)) ||
      !(db = at_new_on(dev, ct, shape->n, shape->v, NULL)))
    goto done;
  if (at_cuda->layer_norm_backward(ct, THTensor_data(g), THTensor_data(x), THTensor_data(mt), THTensor_data(st),
                                   DPTR(wt), THTensor_data(dx), THTensor_data(dw), THTensor_data(db), R, M) < 0)
    goto done;
  rc = grads_out(outs, dx, dw, db, input->dtype, wdt);
done:
  THTensor_free(x); THTensor_free(g); THTensor_free(mt); THTensor_free(st); THTensor_free(wt);
  THTensor_free(dx); THTensor_free(dw); THTensor_free(db);
  return rc;
}

int at_layer_norm(THTensor **outs, const THTensor *input, const ATIntList *shape, const THTensor *weight,
                  const THTensor *bias, double eps) {
  int64_t R, M;
  if (at_no_complex(input, "LayerNormKernelImpl") < 0) return -1;   /* computed in a real dtype, it dropped the imaginary part */
  if (ln_param_check(weight, shape, "weight") < 0 || ln_param_check(bias, shape, "bias") < 0) return -1;
  if (ln_rows(input, shape, &R, &M) < 0) return -1;
  if (at_norm_dtype_check(input, 2, (const THTensor *[]){ weight, bias }) < 0) return -1;
  if (at_off_host(input)) return layer_norm_cuda(outs, input, shape, weight, bias, eps, R, M);   /* GPU or meta */
  THDtype ct;
  THTensor *x = as_compute(input, &ct), *wt = NULL, *bt = NULL, *y = NULL, *mean = NULL, *rstd = NULL;
  int rc = -1;
  if (!x) return -1;
  if (weight && !(wt = as_type(weight, ct))) goto done;
  if (bias && !(bt = as_type(bias, ct))) goto done;
  y = THTensor_new(ct, x->ndim, x->sizes);
  int64_t rs[TH_MAX_DIMS];
  ln_stat_sizes(input, shape, rs);
  mean = THTensor_new(ct, input->ndim, rs);
  rstd = THTensor_new(ct, input->ndim, rs);
  if (!y || !mean || !rstd) goto done;
  const void *wd = wt ? THTensor_data(wt) : NULL, *bd = bt ? THTensor_data(bt) : NULL;
  if (M == 0) {   /* rows of nothing: torch's statistics, mean 0 and rstd NaN (the output is empty) */
    if (at_fill_(mean, at_scalar_int(0)) < 0 || at_fill_(rstd, at_scalar_float(NAN)) < 0) goto done;
  } else if (ct == TH_Float)
    ln_fwd_float((const float *)THTensor_data(x), wd, bd, (float *)THTensor_data(y), (float *)THTensor_data(mean),
                 (float *)THTensor_data(rstd), R, M, eps);
  else
    ln_fwd_double((const double *)THTensor_data(x), wd, bd, (double *)THTensor_data(y),
                  (double *)THTensor_data(mean), (double *)THTensor_data(rstd), R, M, eps);
  outs[0] = ct == input->dtype ? THTensor_retain(y) : at_to_dtype(y, input->dtype, false);
  outs[1] = THTensor_retain(mean);
  outs[2] = THTensor_retain(rstd);
  rc = outs[0] ? 0 : -1;
done:
  THTensor_free(x); THTensor_free(wt); THTensor_free(bt); THTensor_free(y); THTensor_free(mean); THTensor_free(rstd);
  return rc;
}

int at_layer_norm_backward(THTensor **outs, const THTensor *grad, const THTensor *input, const ATIntList *shape,
                           const THTensor *mean, const THTensor *rstd, const THTensor *weight) {
  int64_t R, M;
  if (ln_rows(input, shape, &R, &M) < 0) return -1;
  const THTensor *stats[3] = { mean, rstd, weight };
  if (norm_backward_check(grad, input, stats, 3, "native_layer_norm_backward") < 0) return -1;
  if (THTensor_numel(mean) != R || THTensor_numel(rstd) != R || (weight && THTensor_numel(weight) != M)) {
    THError_set(TH_ERR_RUNTIME, "native_layer_norm_backward: expected mean and rstd of %lld elements and weight of "
                "%lld, got %lld, %lld and %lld", (long long)R, (long long)M, (long long)THTensor_numel(mean),
                (long long)THTensor_numel(rstd), (long long)(weight ? THTensor_numel(weight) : M));
    return -1;
  }
  if (THTensor_device(input) >= 0) return layer_norm_backward_cuda(outs, grad, input, shape, mean, rstd, weight, R, M);
  THDtype ct;
  THTensor *x = as_compute(input, &ct), *g = NULL, *mt = NULL, *st = NULL, *wt = NULL, *dx = NULL;
  int nt = R * M > 32768 ? at_get_num_threads() : 1;
  if (nt > R) nt = R > 0 ? (int)R : 1;
  /* per thread: dw and db rows in double, and (float kernel) in float */
  double *part = calloc(3 * (M ? M : 1) * nt, sizeof(double)), *dw = NULL, *db = NULL;
  int rc = -1;
  if (!x || !part) goto done;
  if (!(g = as_type(grad, ct)) || !(mt = as_type(mean, ct)) || !(st = as_type(rstd, ct))) goto done;
  if (weight && !(wt = as_type(weight, ct))) goto done;
  if (!(dx = THTensor_new(ct, x->ndim, x->sizes))) goto done;
  const void *wd = wt ? THTensor_data(wt) : NULL;
  if (ct == TH_Float)
    ln_bwd_float((const float *)THTensor_data(g), (const float *)THTensor_data(x), (const float *)THTensor_data(mt),
                 (const float *)THTensor_data(st), wd, (float *)THTensor_data(dx), part, nt, R, M);
  else
    ln_bwd_double((const double *)THTensor_data(g), (const double *)THTensor_data(x),
                  (const double *)THTensor_data(mt), (const double *)THTensor_data(st), wd,
                  (double *)THTensor_data(dx), part, nt, R, M);
  dw = part;   /* thread 0's rows collect the others' */
  db = part + M;
  for (int t = 1; t < nt; t++)
    for (int64_t j = 0; j < M; j++) {
      dw[j] += part[2 * M * t + j];
      db[j] += part[2 * M * t + M + j];
    }
  outs[0] = ct == input->dtype ? THTensor_retain(dx) : at_to_dtype(dx, input->dtype, false);
  {
    ATIntList s = *shape;
    THTensor *dwt = THTensor_new(TH_Double, s.n, s.v), *dbt = THTensor_new(TH_Double, s.n, s.v);
    if (dwt && dbt) {
      if (M) memcpy(THTensor_data(dwt), dw, M * sizeof(double));
      if (M) memcpy(THTensor_data(dbt), db, M * sizeof(double));
      outs[1] = at_to_dtype(dwt, weight ? weight->dtype : input->dtype, false);
      outs[2] = at_to_dtype(dbt, weight ? weight->dtype : input->dtype, false);
    }
    THTensor_free(dwt);
    THTensor_free(dbt);
  }
  if (!outs[0] || !outs[1] || !outs[2]) {
    for (int i = 0; i < 3; i++) { THTensor_free(outs[i]); outs[i] = NULL; }
    goto done;
  }
  rc = 0;
done:
  free(part);
  THTensor_free(x); THTensor_free(g); THTensor_free(mt); THTensor_free(st); THTensor_free(wt); THTensor_free(dx);
  return rc;
}

/* ---- embedding ---- */
THTensor *at_embedding(const THTensor *weight, const THTensor *indices) {
  if (weight->ndim != 2) { THError_set(TH_ERR_RUNTIME, "'weight' must be 2-D"); return NULL; }
  if (indices->dtype != TH_Int64 && indices->dtype != TH_Int32) {
    THError_set(TH_ERR_RUNTIME, "Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                "Long, Int; but got torch.%sTensor instead (while checking arguments for embedding)",
                THDtype_info[indices->dtype].legacy);
    return NULL;
  }
  /* indices' shape, then D: one past TH_MAX_DIMS fits, so THTensor_new reports the limit */
  int64_t sizes[TH_MAX_DIMS + 1];
  memcpy(sizes, indices->sizes, indices->ndim * sizeof(int64_t));
  sizes[indices->ndim] = weight->sizes[1];
  if (THTensor_isMeta(weight) || THTensor_isMeta(indices)) {   /* the shape alone: indices cannot be checked */
    int dev;
    if (at_common_device(2, (const THTensor *[]){ weight, indices }, "embedding", &dev) < 0) return NULL;
    return at_new_on(dev, weight->dtype, indices->ndim + 1, sizes, NULL);
  }
  if (THTensor_device(weight) >= 0) return at_embedding_cuda(weight, indices);
  THTensor *idx = at_to_dtype(indices, TH_Int64, false);
  THTensor *ic = idx ? at_contiguous(idx) : NULL;
  THTensor_free(idx);
  if (!ic) return NULL;
  int64_t n = THTensor_numel(ic), V = weight->sizes[0], D = weight->sizes[1];
  THTensor *out = THTensor_new(weight->dtype, ic->ndim + 1, sizes);
  const int64_t *iv = (const int64_t *)THTensor_data(ic);
  for (int64_t i = 0; out && i < n; i++)
    if (iv[i] < 0 || iv[i] >= V) {
      THError_set(TH_ERR_INDEX, "index out of range in self");
      THTensor_free(out);
      out = NULL;
    }
  if (out) {
    int es = THDtype_size(weight->dtype);
    THTensor *wc = at_contiguous(weight);
    if (!wc) { THTensor_free(out); out = NULL; }
    else {
      const char *wd = THTensor_data(wc);
      char *od = THTensor_data(out);
      for (int64_t i = 0; i < n; i++) memcpy(od + i * D * es, wd + iv[i] * D * es, D * es);
      THTensor_free(wc);
    }
  }
  THTensor_free(ic);
  return out;
}

/* embedding_dense_backward's arguments agree: it writes rows indices[i] of a
 * (V, D) buffer from rows of grad, viewed as (numel(indices), D). */
static int embedding_backward_check(const THTensor *grad, const THTensor *indices, const ATIntList *ws) {
  const char *op = "embedding_dense_backward";
  if (indices->dtype != TH_Int64 && indices->dtype != TH_Int32) {
    THError_set(TH_ERR_RUNTIME, "Expected tensor for argument #2 'indices' to have one of the following scalar types: "
                "Long, Int; but got %s instead (while checking arguments for embedding_backward)",
                THDtype_info[indices->dtype].name);
    return -1;
  }
  if (ws->n != 2 || ws->v[0] < 0 || ws->v[1] < 0) {
    THError_set(TH_ERR_RUNTIME, "%s: weight_sizes must be two non-negative sizes (num_weights, embedding_dim)", op);
    return -1;
  }
  int64_t rows = THTensor_numel(indices), D = ws->v[1];
  if (grad->ndim < 1 || grad->sizes[grad->ndim - 1] != D || (D && THTensor_numel(grad) / D != rows)) {
    char b[256];
    THError_set(TH_ERR_RUNTIME, "%s: grad_output of size %s does not match %lld indices of embedding_dim %lld", op,
                THTensor_sizeStr(grad->ndim, grad->sizes, b, 256), (long long)rows, (long long)D);
    return -1;
  }
  /* a GPU's indices are checked by the kernel that reads them */
  if (THTensor_device(indices) < 0 && at_check_index_range(indices, 0, ws->v[0], op, "index") < 0) {
    THError_set(TH_ERR_INDEX, "index out of range in self");
    return -1;
  }
  return 0;
}

/* grad_weight[iv[i]] += grad[i] * scale for the rows [r0, r1): each thread
 * owns a block of rows, zeroes it and scans all indices for its own, so rows
 * are summed without atomics, in index order (as torch's index_add_). */
#define EMB_ACCUMULATE(T)                                                                                    \
  static void emb_acc_##T(T *av, const T *gv, const int64_t *iv, int64_t n, int64_t V, int64_t D,            \
                          int64_t padding_idx, const int64_t *freq) {                                        \
    _Pragma("omp parallel if (n * D > 32768)")                                                              \
    {                                                                                                        \
      int t = omp_get_thread_num(), k = omp_get_num_threads();                                               \
      int64_t r0 = V * t / k, r1 = V * (t + 1) / k;                                                          \
      memset(av + r0 * D, 0, (size_t)((r1 - r0) * D) * sizeof(T));                                          \
      for (int64_t i = 0; i < n; i++) {                                                                      \
        int64_t r = iv[i];                                                                                   \
        if (r < r0 || r >= r1 || r == padding_idx) continue;                                                 \
        T *dst = av + r * D;                                                                                 \
        const T *src = gv + i * D;                                                                           \
        if (freq) {                                                                                          \
          T sc = (T)(1.0 / (double)freq[r]);                                                                 \
          for (int64_t j = 0; j < D; j++) dst[j] += src[j] * sc;                                             \
        } else {                                                                                             \
          for (int64_t j = 0; j < D; j++) dst[j] += src[j];                                                  \
        }                                                                                                    \
      }                                                                                                      \
    }                                                                                                        \
  }
EMB_ACCUMULATE(float)
EMB_ACCUMULATE(double)
#undef EMB_ACCUMULATE

THTensor *at_embedding_backward(const THTensor *grad, const THTensor *indices, const ATIntList *ws,
                                int64_t padding_idx, bool scale_grad_by_freq) {
  if (embedding_backward_check(grad, indices, ws) < 0) return NULL;
  int64_t V = ws->v[0], D = ws->v[1];
  if (THTensor_device(grad) >= 0) return at_embedding_backward_cuda(grad, indices, V, D, padding_idx, scale_grad_by_freq);
  THTensor *idx = at_to_dtype(indices, TH_Int64, false);
  THTensor *ic = idx ? at_contiguous(idx) : NULL;
  THTensor_free(idx);
  /* float32/float64 accumulate in their own dtype straight into the result;
   * the half types through a float64 buffer */
  THDtype acc_t = grad->dtype == TH_Float ? TH_Float : TH_Double;
  THTensor *g = ic ? at_to_dtype(grad, acc_t, false) : NULL;
  THTensor *gc = g ? at_contiguous(g) : NULL;
  THTensor_free(g);
  THTensor *acc = gc ? THTensor_new(acc_t, 2, (int64_t[]){ V, D }) : NULL, *out = NULL;
  int64_t n = ic ? THTensor_numel(ic) : 0;
  int64_t *freq = acc && scale_grad_by_freq ? calloc(V ? V : 1, sizeof(int64_t)) : NULL;
  if (acc && (!scale_grad_by_freq || freq)) {
    const int64_t *iv = (const int64_t *)THTensor_data(ic);
    if (freq) for (int64_t i = 0; i < n; i++) freq[iv[i]]++;
    if (acc_t == TH_Float)
      emb_acc_float((float *)THTensor_data(acc), (const float *)THTensor_data(gc), iv, n, V, D, padding_idx, freq);
    else
      emb_acc_double((double *)THTensor_data(acc), (const double *)THTensor_data(gc), iv, n, V, D, padding_idx, freq);
    out = acc_t == grad->dtype ? THTensor_retain(acc) : at_to_dtype(acc, grad->dtype, false);
  } else if (acc) {
    THError_set(TH_ERR_MEMORY, "embedding_backward: out of memory");
  }
  free(freq);
  THTensor_free(acc); THTensor_free(gc); THTensor_free(ic);
  return out;
}
