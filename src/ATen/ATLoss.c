/* Pointwise losses in one pass each way (see ATLoss.h). The composites they
 * replace took 6-8 passes and as many temporaries per direction.
 *
 * Operands broadcast together and are read as contiguous float (double for
 * float64) copies of the broadcast shape, except grad_output, weight and
 * pos_weight when they hold one element (a reduced loss's grad_output): those
 * are read once as a number. Sums run over fixed chunks added in order, so a
 * reduced loss has the same bits at any thread count. */
#include "ATLoss.h"
#include "ATNN.h"
#include "../TH/THMath.h"   /* simd declarations of expf/log1pf */

#include <omp.h>
#include <stdlib.h>
#include <string.h>

enum { L_G, L_X, L_T, L_W, L_P, L_N };

typedef struct {
  THTensor *c[L_N];   /* contiguous compute-type copies at the broadcast shape; NULL: absent or a number */
  double num[L_N];    /* the value of an operand read as a number (1 for an absent weight/pos_weight) */
  THDtype dt, ct;     /* result dtype, compute dtype */
  int ndim;
  int64_t shape[TH_MAX_DIMS];
  int64_t n;
  double s;           /* 1/n for a mean, else 1 */
} LossOps;

static void ops_free(LossOps *o) {
  for (int i = 0; i < L_N; i++) THTensor_free(o->c[i]);
}

static THTensor *expanded(const THTensor *t, const LossOps *o) {
  THTensor *c = at_to_dtype(t, o->ct, false);
  if (!c) return NULL;
  ATIntList size = {o->ndim, {0}};
  memcpy(size.v, o->shape, sizeof(int64_t) * o->ndim);
  THTensor *e = at_expand(c, &size);
  THTensor_free(c);
  if (!e) return NULL;
  THTensor *r = at_contiguous(e);
  THTensor_free(e);
  return r;
}

/* in: grad_output (or NULL for a forward), self, target, weight, pos_weight (NULL: absent) */
static int ops_prepare(LossOps *o, const char *kname, const THTensor *const in[L_N], int64_t reduction) {
  memset(o, 0, sizeof *o);
  o->num[L_W] = o->num[L_P] = 1;
  if (at_check_reduction((ATReduction)reduction) < 0) return -1;
  const THTensor *all[L_N];
  int k = 0;
  for (int i = 0; i < L_N; i++) {
    if (!in[i]) continue;
    if (at_off_host(in[i])) {
      THError_set(TH_ERR_NOTIMPL, "%s: the fused loss kernel runs on CPU tensors only", kname);
      return -1;
    }
    all[k++] = in[i];
  }
  const THTensor *xt[2] = {in[L_X], in[L_T]};
  o->dt = at_result_type(2, xt);
  if (!THDtype_isFloating(o->dt)) {
    THError_set(TH_ERR_NOTIMPL, "\"%s_cpu\" not implemented for '%s'", kname, THDtype_info[o->dt].legacy);
    return -1;
  }
  o->ct = o->dt == TH_Double ? TH_Double : TH_Float;
  if (at_broadcast_shape(k, all, &o->ndim, o->shape) < 0) return -1;
  o->n = 1;
  for (int d = 0; d < o->ndim; d++) o->n *= o->shape[d];
  o->s = reduction == AT_REDUCTION_MEAN ? 1.0 / (double)o->n : 1.0;
  for (int i = 0; i < L_N; i++) {
    if (!in[i]) continue;
    if (i != L_X && i != L_T && THTensor_numel(in[i]) == 1) {
      o->num[i] = at_item_double(in[i]);
      continue;
    }
    if (!(o->c[i] = expanded(in[i], o))) { ops_free(o); return -1; }
  }
  return 0;
}

/* a kernel over elements [lo, hi): writes out[i] when out is not NULL, else returns their sum */
typedef double (*LossFn)(const LossOps *o, int64_t lo, int64_t hi, void *out, const void *par);

#define LOSS_CHUNK 32768

static int run_chunks(const LossOps *o, LossFn f, const void *par, void *out, double *sum) {
  int64_t nc = (o->n + LOSS_CHUNK - 1) / LOSS_CHUNK;
  if (nc <= 1) {
    double a = f(o, 0, o->n, out, par);
    if (sum) *sum = a;
    return 0;
  }
  double *part = malloc(sizeof(double) * nc);
  if (!part) { THError_set(TH_ERR_MEMORY, "loss: out of memory"); return -1; }
#pragma omp parallel for schedule(static) if (nc >= 4 && !omp_in_parallel())
  for (int64_t c = 0; c < nc; c++) {
    int64_t lo = c * LOSS_CHUNK, hi = lo + LOSS_CHUNK < o->n ? lo + LOSS_CHUNK : o->n;
    part[c] = f(o, lo, hi, out, par);
  }
  double a = 0;
  for (int64_t c = 0; c < nc; c++) a += part[c];
  free(part);
  if (sum) *sum = a;
  return 0;
}

static THTensor *cast_result(THTensor *r, THDtype dt) {
  if (!r || r->dtype == dt) return r;
  THTensor *c = at_to_dtype(r, dt, false);
  THTensor_free(r);
  return c;
}

/* the loss: elementwise (reduction none) or its mean/sum as a 0-d tensor */
static THTensor *run_forward(LossOps *o, LossFn f, const void *par, int64_t reduction) {
  THTensor *r;
  if (reduction == AT_REDUCTION_NONE) {
    r = at_new_on(-1, o->ct, o->ndim, o->shape, NULL);
    if (r && run_chunks(o, f, par, THTensor_data(r), NULL) < 0) { THTensor_free(r); r = NULL; }
  } else {
    double a = 0;
    r = run_chunks(o, f, par, NULL, &a) < 0 ? NULL : at_new_on(-1, o->ct, 0, NULL, NULL);
    if (r) {
      a = reduction == AT_REDUCTION_MEAN ? a / (double)o->n : a;
      if (o->ct == TH_Double) *(double *)THTensor_data(r) = a;
      else *(float *)THTensor_data(r) = (float)a;
    }
  }
  ops_free(o);
  return cast_result(r, o->dt);
}

/* a derivative: always elementwise at the broadcast shape */
static THTensor *run_elementwise(LossOps *o, LossFn f, const void *par) {
  THTensor *r = at_new_on(-1, o->ct, o->ndim, o->shape, NULL);
  if (r && run_chunks(o, f, par, THTensor_data(r), NULL) < 0) { THTensor_free(r); r = NULL; }
  ops_free(o);
  return cast_result(r, o->dt);
}

#define LOSS_PTR(T, i) (o->c[i] ? (const T *)THTensor_data(o->c[i]) : NULL)

/* a kernel: VALUE computed from the element's operands, written or summed. It runs over blocks; an
 * operand read as a number is a block of copies, so every load is unconditional and the loops vectorize. */
#define LOSS_BLOCK 256
#define LOSS_FN(NAME, T, PRE, VALUE)                                                           \
  static double NAME##_##T(const LossOps *o, int64_t lo, int64_t hi, void *outv, const void *par) { \
    const T *x = LOSS_PTR(T, L_X), *t = LOSS_PTR(T, L_T), *g = LOSS_PTR(T, L_G);               \
    const T *w = LOSS_PTR(T, L_W), *pw = LOSS_PTR(T, L_P);                                     \
    T gc[LOSS_BLOCK], wc[LOSS_BLOCK], pc[LOSS_BLOCK];                                          \
    for (int j = 0; j < LOSS_BLOCK; j++) {                                                     \
      gc[j] = (T)o->num[L_G]; wc[j] = (T)o->num[L_W]; pc[j] = (T)o->num[L_P];                  \
    }                                                                                          \
    const T s = (T)o->s; (void)s;                                                              \
    PRE                                                                                        \
    T *out = outv;                                                                             \
    double acc = 0;                                                                            \
    for (int64_t b = lo; b < hi; b += LOSS_BLOCK) {                                            \
      const int64_t m = hi - b < LOSS_BLOCK ? hi - b : LOSS_BLOCK;                             \
      const T *xb = x + b, *tb = t + b;                                                        \
      const T *gb = g ? g + b : gc, *wb = w ? w + b : wc, *pb = pw ? pw + b : pc;              \
      (void)gb; (void)wb; (void)pb;                                                            \
      if (out) {                                                                               \
        T *ob = out + b;                                                                       \
        _Pragma("omp simd")                                                                    \
        for (int64_t j = 0; j < m; j++) {                                                      \
          const T xi = xb[j], ti = tb[j], gi = gb[j], wi = wb[j], pi = pb[j];                  \
          (void)gi; (void)wi; (void)pi;                                                        \
          ob[j] = (VALUE);                                                                     \
        }                                                                                      \
      } else {                                                                                 \
        double a = 0;                                                                          \
        _Pragma("omp simd reduction(+:a)")                                                     \
        for (int64_t j = 0; j < m; j++) {                                                      \
          const T xi = xb[j], ti = tb[j], gi = gb[j], wi = wb[j], pi = pb[j];                  \
          (void)gi; (void)wi; (void)pi;                                                        \
          a += (VALUE);                                                                        \
        }                                                                                      \
        acc += a;                                                                              \
      }                                                                                        \
    }                                                                                          \
    return acc;                                                                                \
  }
#define LOSS_PICK(NAME, o) ((o)->ct == TH_Double ? NAME##_double : NAME##_float)

/* ---- smooth L1 / Huber: scale * (|d| < beta ? d^2 / (2 beta) : |d| - beta / 2), d = x - t ---- */
typedef struct { double beta, scale; } SL1Par;

#define SL1_PRE                                                                                \
  const SL1Par *sp = par;                                                                      \
  const T beta = (T)sp->beta, hb = (T)(0.5 * sp->beta), sc = (T)sp->scale;                     \
  const T hib = (T)(sp->beta > 0 ? 0.5 / sp->beta : 0), ib = (T)(sp->beta > 0 ? 1 / sp->beta : 0); \
  (void)hb; (void)hib; (void)ib; (void)beta;
#define SL1_D const T d = xi - ti, a = d < 0 ? -d : d;
/* the derivative tests |d| >= beta, so a NaN difference takes the d / beta branch: a NaN gradient, as torch's */

#undef T
#define T float
LOSS_FN(sl1_fwd, float, SL1_PRE, ({ SL1_D sc * (a < beta ? hib * d * d : a - hb); }))
LOSS_FN(sl1_bwd, float, SL1_PRE, ({ SL1_D sc * s * gi * (a >= beta ? (d > 0 ? (T)1 : (d < 0 ? (T)-1 : (T)0)) : d * ib); }))
LOSS_FN(sl1_second, float, SL1_PRE, ({ SL1_D sc * s * gi * (a < beta ? ib : (T)0); }))
#undef T
#define T double
LOSS_FN(sl1_fwd, double, SL1_PRE, ({ SL1_D sc * (a < beta ? hib * d * d : a - hb); }))
LOSS_FN(sl1_bwd, double, SL1_PRE, ({ SL1_D sc * s * gi * (a >= beta ? (d > 0 ? (T)1 : (d < 0 ? (T)-1 : (T)0)) : d * ib); }))
LOSS_FN(sl1_second, double, SL1_PRE, ({ SL1_D sc * s * gi * (a < beta ? ib : (T)0); }))
#undef T

static THTensor *sl1_forward(const char *kname, const THTensor *self, const THTensor *target, int64_t reduction,
                             double beta, double scale) {
  LossOps o;
  const THTensor *in[L_N] = {NULL, self, target, NULL, NULL};
  if (ops_prepare(&o, kname, in, reduction) < 0) return NULL;
  SL1Par p = {beta, scale};
  return run_forward(&o, LOSS_PICK(sl1_fwd, &o), &p, reduction);
}

THTensor *at_smooth_l1_loss(const THTensor *self, const THTensor *target, int64_t reduction, double beta) {
  if (beta < 0) {
    THError_set(TH_ERR_RUNTIME, "smooth_l1_loss does not support negative values for beta.");
    return NULL;
  }
  return sl1_forward("smooth_l1", self, target, reduction, beta, 1.0);
}

THTensor *at_huber_loss(const THTensor *self, const THTensor *target, int64_t reduction, double delta) {
  if (!(delta > 0)) {
    THError_set(TH_ERR_RUNTIME, "huber_loss does not support non-positive values for delta.");
    return NULL;
  }
  return sl1_forward("huber", self, target, reduction, delta, delta);
}

/* second: grad * d2 loss / d self2 instead of grad_output * d loss / d self */
static THTensor *sl1_derivative(const THTensor *g, const THTensor *self, const THTensor *target, int64_t reduction,
                                double beta, double scale, bool second) {
  LossOps o;
  const THTensor *in[L_N] = {g, self, target, NULL, NULL};
  if (ops_prepare(&o, scale == beta && scale != 1.0 ? "huber" : "smooth_l1", in, reduction) < 0) return NULL;
  SL1Par p = {beta, scale};
  return run_elementwise(&o, second ? LOSS_PICK(sl1_second, &o) : LOSS_PICK(sl1_bwd, &o), &p);
}

THTensor *at_smooth_l1_loss_backward(const THTensor *grad_output, const THTensor *self, const THTensor *target,
                                     int64_t reduction, double beta, double scale) {
  return sl1_derivative(grad_output, self, target, reduction, beta, scale, false);
}

THTensor *at_smooth_l1_loss_second(const THTensor *grad, const THTensor *self, const THTensor *target,
                                   int64_t reduction, double beta, double scale) {
  return sl1_derivative(grad, self, target, reduction, beta, scale, true);
}

/* ---- binary cross entropy with logits ----
 * loss = w ((1 - t) x + lw softplus(-x)), lw = 1 + (pos_weight - 1) t; softplus(-x) = log1p(e) + max(-x, 0)
 * and sigmoid(-x) from e = exp(-|x|), which never overflows. The exp's argument is held at the lowest with
 * a normal result (TH_EXP_NONPOS): libmvec's exp is ~10x slower on a lane it would make subnormal. */
#define BCE_PRE const T elo = TH_EXP_NONPOS_LO(T); (void)par;
#define BCE_E                                                                                  \
  const T e = TH_EXP_NONPOS(xi < 0 ? xi : -xi, elo), lw = 1 + (pi - 1) * ti;                   \
  const T sneg = xi >= 0 ? e / (1 + e) : 1 / (1 + e);                                          \
  (void)lw; (void)sneg;
#define BCE_SP (TH_LOG1P(e) + (xi < 0 ? -xi : (T)0))
/* softplus(x): d loss / d target = pos_weight softplus(-x) - softplus(x) (= (pos_weight - 1) softplus(-x) - x,
 * which is inf - inf at x = -inf where torch's is inf) */
#define BCE_SPP (TH_LOG1P(e) + (xi > 0 ? xi : (T)0))

#define T float
LOSS_FN(bce_fwd, float, BCE_PRE, ({ BCE_E wi * ((1 - ti) * xi + lw * BCE_SP); }))
LOSS_FN(bce_dx, float, BCE_PRE, ({ BCE_E s * gi * wi * ((1 - ti) - lw * sneg); }))
LOSS_FN(bce_dt, float, BCE_PRE, ({ BCE_E s * gi * wi * (pi * BCE_SP - BCE_SPP); }))
LOSS_FN(bce_hxx, float, BCE_PRE, ({ BCE_E s * gi * wi * lw * (e / ((1 + e) * (1 + e))); }))
LOSS_FN(bce_hxt, float, BCE_PRE, ({ BCE_E -s * gi * wi * (1 + (pi - 1) * sneg); }))
#undef T
#define T double
LOSS_FN(bce_fwd, double, BCE_PRE, ({ BCE_E wi * ((1 - ti) * xi + lw * BCE_SP); }))
LOSS_FN(bce_dx, double, BCE_PRE, ({ BCE_E s * gi * wi * ((1 - ti) - lw * sneg); }))
LOSS_FN(bce_dt, double, BCE_PRE, ({ BCE_E s * gi * wi * (pi * BCE_SP - BCE_SPP); }))
LOSS_FN(bce_hxx, double, BCE_PRE, ({ BCE_E s * gi * wi * lw * (e / ((1 + e) * (1 + e))); }))
LOSS_FN(bce_hxt, double, BCE_PRE, ({ BCE_E -s * gi * wi * (1 + (pi - 1) * sneg); }))
#undef T

THTensor *at_bce_logits(const THTensor *self, const THTensor *target, const THTensor *weight,
                        const THTensor *pos_weight, int64_t reduction) {
  LossOps o;
  const THTensor *in[L_N] = {NULL, self, target, weight, pos_weight};
  if (ops_prepare(&o, "binary_cross_entropy_with_logits", in, reduction) < 0) return NULL;
  return run_forward(&o, LOSS_PICK(bce_fwd, &o), NULL, reduction);
}

THTensor *at_bce_logits_backward(const THTensor *grad_output, const THTensor *self, const THTensor *target,
                                 const THTensor *weight, const THTensor *pos_weight, int64_t reduction,
                                 int64_t which) {
  LossOps o;
  const THTensor *in[L_N] = {grad_output, self, target, weight, pos_weight};
  if (ops_prepare(&o, "binary_cross_entropy_with_logits_backward", in, reduction) < 0) return NULL;
  return run_elementwise(&o, which ? LOSS_PICK(bce_dt, &o) : LOSS_PICK(bce_dx, &o), NULL);
}

THTensor *at_bce_logits_second(const THTensor *grad, const THTensor *self, const THTensor *target,
                               const THTensor *weight, const THTensor *pos_weight, int64_t reduction,
                               int64_t which) {
  LossOps o;
  const THTensor *in[L_N] = {grad, self, target, weight, pos_weight};
  if (ops_prepare(&o, "binary_cross_entropy_with_logits_backward", in, reduction) < 0) return NULL;
  return run_elementwise(&o, which ? LOSS_PICK(bce_hxt, &o) : LOSS_PICK(bce_hxx, &o), NULL);
}
