/* Samplers: values are drawn in double (or int64) in element order into a
 * contiguous buffer, then copied into the target with dtype conversion.
 * Serial by design: the stream must not depend on the thread count. */
#include "ATRandom.h"

#include <math.h>
#include <string.h>

typedef double (*Draw)(THGenerator *g, const double *a);

/* Fills t elementwise from draw(a); a holds the parameters. */
static THTensor *fill_with(THTensor *t, Draw draw, const double *a, THGenerator *g) {
  if (!THDtype_isFloating(t->dtype) && draw) {
    /* float samplers on integer tensors: PyTorch only allows some; keep the values */
  }
  int64_t n = THTensor_numel(t);
  THTensor *buf = THTensor_new(TH_Double, t->ndim, t->sizes);
  if (!buf) return NULL;
  double *v = (double *)THTensor_data(buf);
  pthread_mutex_lock(&g->mutex);
  for (int64_t i = 0; i < n; i++) v[i] = draw(g, a);
  pthread_mutex_unlock(&g->mutex);
  int rc = at_copy_(t, buf);
  THTensor_free(buf);
  return rc < 0 ? NULL : THTensor_retain(t);
}

static double d_uniform(THGenerator *g, const double *a) { return a[0] + (a[1] - a[0]) * THRandom_uniform(g); }
static double d_uniform_f(THGenerator *g, const double *a) {
  /* float32 targets use 24 random bits, so values stay inside [from, to) after rounding */
  double v = a[0] + (a[1] - a[0]) * (double)THRandom_uniformFloat(g);
  return v;
}
static double d_normal(THGenerator *g, const double *a) { return a[0] + a[1] * THRandom_normal(g); }
static double d_bernoulli(THGenerator *g, const double *a) { return THRandom_uniform(g) < a[0] ? 1.0 : 0.0; }
static double d_exponential(THGenerator *g, const double *a) { return -log1p(-THRandom_uniform(g)) / a[0]; }
static double d_geometric(THGenerator *g, const double *a) {
  return ceil(log1p(-THRandom_uniform(g)) / log1p(-a[0]));
}
static double d_log_normal(THGenerator *g, const double *a) { return exp(a[0] + a[1] * THRandom_normal(g)); }
static double d_cauchy(THGenerator *g, const double *a) { return a[0] + a[1] * tan(M_PI * (THRandom_uniform(g) - 0.5)); }

static int check_float(const THTensor *t, const char *name) {
  if (THDtype_isFloating(t->dtype)) return 0;
  THError_set(TH_ERR_NOTIMPL, "\"%s_kernel_cpu\" not implemented for '%s'", name, THDtype_info[t->dtype].legacy);
  return -1;
}

THTensor *at_uniform_(THTensor *t, double from, double to, THGenerator *g) {
  if (from > to) {
    THError_set(TH_ERR_RUNTIME, "uniform_ expects to return a [from, to) range, but found from=%g > to=%g", from, to);
    return NULL;
  }
  if (check_float(t, "uniform") < 0) return NULL;
  double a[2] = { from, to };
  return fill_with(t, t->dtype == TH_Double ? d_uniform : d_uniform_f, a, g);
}

THTensor *at_normal_(THTensor *t, double mean, double std, THGenerator *g) {
  if (std < 0) { THError_set(TH_ERR_RUNTIME, "normal expects std >= 0.0, but found std %g", std); return NULL; }
  if (check_float(t, "normal") < 0) return NULL;
  double a[2] = { mean, std };
  return fill_with(t, d_normal, a, g);
}

THTensor *at_bernoulli_p_(THTensor *t, double p, THGenerator *g) {
  if (!(p >= 0 && p <= 1)) { THError_set(TH_ERR_RUNTIME, "bernoulli_ expects p to be in [0, 1], but got p=%g", p); return NULL; }
  double a[1] = { p };
  return fill_with(t, d_bernoulli, a, g);
}

THTensor *at_bernoulli_t_(THTensor *t, const THTensor *p, THGenerator *g) {
  THTensor *pe = THTensor_new(TH_Double, t->ndim, t->sizes);
  if (!pe) return NULL;
  if (at_copy_(pe, p) < 0) { THTensor_free(pe); return NULL; }   /* broadcasts p to t */
  double *v = (double *)THTensor_data(pe);
  int64_t n = THTensor_numel(pe);
  for (int64_t i = 0; i < n; i++)
    if (!(v[i] >= 0 && v[i] <= 1)) {
      THTensor_free(pe);
      THError_set(TH_ERR_RUNTIME, "Expected p_in >= 0 && p_in <= 1 to be true, but got false.");
      return NULL;
    }
  pthread_mutex_lock(&g->mutex);
  for (int64_t i = 0; i < n; i++) v[i] = THRandom_uniform(g) < v[i] ? 1.0 : 0.0;
  pthread_mutex_unlock(&g->mutex);
  int rc = at_copy_(t, pe);
  THTensor_free(pe);
  return rc < 0 ? NULL : THTensor_retain(t);
}

THTensor *at_exponential_(THTensor *t, double lambd, THGenerator *g) {
  if (!(lambd > 0)) { THError_set(TH_ERR_RUNTIME, "exponential_ expects lambda > 0.0, but found lambda=%g", lambd); return NULL; }
  if (check_float(t, "exponential") < 0) return NULL;
  double a[1] = { lambd };
  return fill_with(t, d_exponential, a, g);
}

THTensor *at_geometric_(THTensor *t, double p, THGenerator *g) {
  if (!(p > 0 && p < 1)) { THError_set(TH_ERR_RUNTIME, "geometric_ expects p to be in (0, 1), but got p=%g", p); return NULL; }
  double a[1] = { p };
  return fill_with(t, d_geometric, a, g);
}

THTensor *at_log_normal_(THTensor *t, double mean, double std, THGenerator *g) {
  if (!(std > 0)) { THError_set(TH_ERR_RUNTIME, "log_normal_ expects std > 0.0, but found std=%g", std); return NULL; }
  if (check_float(t, "log_normal") < 0) return NULL;
  double a[2] = { mean, std };
  return fill_with(t, d_log_normal, a, g);
}

THTensor *at_cauchy_(THTensor *t, double median, double sigma, THGenerator *g) {
  if (check_float(t, "cauchy") < 0) return NULL;
  double a[2] = { median, sigma };
  return fill_with(t, d_cauchy, a, g);
}

/* the largest integer a dtype holds exactly (floats: the mantissa) */
static int64_t dtype_max(THDtype dt) {
  switch (dt) {
    case TH_Bool: return 1;
    case TH_UInt8: return 255;
    case TH_Int8: return 127;
    case TH_Int16: return 32767;
    case TH_Int32: return 2147483647;
    case TH_Half: return 2048;
    case TH_BFloat16: return 256;
    case TH_Float: return 16777216;
    case TH_Double: return 9007199254740992LL;
    default: return INT64_MAX;
  }
}

THTensor *at_random_(THTensor *t, int64_t from, ATOptInt to, THGenerator *g) {
  int64_t hi = to.has ? to.v : dtype_max(t->dtype) + (t->dtype == TH_Int64 ? 0 : 1);
  if (to.has && from >= hi) {
    THError_set(TH_ERR_RUNTIME, "random_ expects 'from' to be less than 'to', but got from=%lld >= to=%lld",
                (long long)from, (long long)hi);
    return NULL;
  }
  uint64_t range = (uint64_t)hi - (uint64_t)from;
  int64_t n = THTensor_numel(t);
  THTensor *buf = THTensor_new(TH_Int64, t->ndim, t->sizes);
  if (!buf) return NULL;
  int64_t *v = (int64_t *)THTensor_data(buf);
  pthread_mutex_lock(&g->mutex);
  for (int64_t i = 0; i < n; i++) {
    uint64_t r = range <= 0xffffffffu ? THRandom_random(g) : THRandom_random64(g);
    v[i] = from + (int64_t)(range ? r % range : r);
  }
  pthread_mutex_unlock(&g->mutex);
  int rc = at_copy_(t, buf);
  THTensor_free(buf);
  return rc < 0 ? NULL : THTensor_retain(t);
}

THTensor *at_bernoulli(const THTensor *p, THGenerator *g) {
  THTensor *r = THTensor_new(p->dtype, p->ndim, p->sizes);
  if (!r) return NULL;
  THTensor *x = at_bernoulli_t_(r, p, g);
  THTensor_free(r);
  return x;
}

THTensor *at_bernoulli_float(const THTensor *self, double p, THGenerator *g) {
  THTensor *r = THTensor_new(self->dtype, self->ndim, self->sizes);
  if (!r) return NULL;
  THTensor *x = at_bernoulli_p_(r, p, g);
  THTensor_free(r);
  return x;
}

THTensor *at_normal_tensors(const THTensor *mean, const THTensor *std, THGenerator *g) {
  const THTensor *in[2] = { mean, std };
  int nd;
  int64_t shape[TH_MAX_DIMS];
  if (at_broadcast_shape(2, in, &nd, shape) < 0) return NULL;
  THDtype dt = at_result_type(2, in);
  if (!THDtype_isFloating(dt)) dt = at_default_dtype();
  THTensor *z = THTensor_new(TH_Double, nd, shape);
  if (!z) return NULL;
  THTensor *ok = at_normal_(z, 0, 1, g);
  THTensor_free(ok);
  THTensor *s = ok ? at_mul(z, std, NULL) : NULL;
  THTensor *r = s ? at_add(s, mean, at_scalar_int(1), NULL) : NULL;
  THTensor *out = r ? at_to_dtype(r, dt, false) : NULL;
  THTensor_free(z); THTensor_free(s); THTensor_free(r);
  return out;
}

THTensor *at_randperm(int64_t n, THDtype dtype, THGenerator *g) {
  if (n < 0) { THError_set(TH_ERR_RUNTIME, "n must be non-negative, got%lld", (long long)n); return NULL; }
  THTensor *buf = THTensor_new(TH_Int64, 1, &n);
  if (!buf) return NULL;
  int64_t *v = (int64_t *)THTensor_data(buf);
  for (int64_t i = 0; i < n; i++) v[i] = i;
  pthread_mutex_lock(&g->mutex);
  /* Fisher-Yates walking forward with 32-bit draws below 2^32/20, as PyTorch's
   * CPU randperm does, so a seeded generator gives PyTorch's permutation. */
  bool small = n < (int64_t)(UINT32_MAX / 20);
  for (int64_t i = 0; i < n - 1; i++) {
    uint64_t r = small ? (uint64_t)THRandom_random(g) : THRandom_random64(g);
    int64_t j = i + (int64_t)(r % (uint64_t)(n - i));
    int64_t tmp = v[i]; v[i] = v[j]; v[j] = tmp;
  }
  pthread_mutex_unlock(&g->mutex);
  THTensor *r = at_to_dtype(buf, dtype, false);
  THTensor_free(buf);
  return r;
}

THTensor *at_multinomial(const THTensor *probs, int64_t ns, bool replacement, THGenerator *g) {
  if (probs->ndim < 1 || probs->ndim > 2) {
    THError_set(TH_ERR_RUNTIME, "prob_dist must be 1 or 2 dim");
    return NULL;
  }
  int64_t rows = probs->ndim == 2 ? probs->sizes[0] : 1, k = probs->sizes[probs->ndim - 1];
  if (ns <= 0) { THError_set(TH_ERR_RUNTIME, "cannot sample n_sample <= 0 samples"); return NULL; }
  if (!replacement && ns > k) {
    THError_set(TH_ERR_RUNTIME, "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
    return NULL;
  }
  THTensor *p = at_to_dtype(probs, TH_Double, true);
  if (!p) return NULL;
  THTensor *pc = at_contiguous(p);
  THTensor_free(p);
  if (!pc) return NULL;
  int64_t osz[2] = { rows, ns };
  THTensor *out = THTensor_new(TH_Int64, probs->ndim, probs->ndim == 2 ? osz : &ns);
  if (!out) { THTensor_free(pc); return NULL; }
  double *pv = (double *)THTensor_data(pc);
  int64_t *ov = (int64_t *)THTensor_data(out);
  int err = 0;
  pthread_mutex_lock(&g->mutex);
  for (int64_t r = 0; r < rows && !err; r++) {
    double *w = pv + r * k, total = 0;
    for (int64_t i = 0; i < k; i++) {
      if (!(w[i] >= 0) || isinf(w[i])) { err = 1; break; }
      total += w[i];
    }
    if (err || total <= 0) { err = err ? 1 : 2; break; }
    for (int64_t s = 0; s < ns; s++) {
      double u = THRandom_uniform(g) * total, acc = 0;
      int64_t pick = k - 1;
      for (int64_t i = 0; i < k; i++) { acc += w[i]; if (u < acc && w[i] > 0) { pick = i; break; } }
      while (pick > 0 && w[pick] == 0) pick--;
      ov[r * ns + s] = pick;
      if (!replacement) { total -= w[pick]; w[pick] = 0; if (total <= 0 && s + 1 < ns) { err = 2; break; } }
    }
  }
  pthread_mutex_unlock(&g->mutex);
  THTensor_free(pc);
  if (err) {
    THTensor_free(out);
    THError_set(TH_ERR_RUNTIME, err == 1 ? "probability tensor contains either `inf`, `nan` or element < 0"
                                         : "invalid multinomial distribution (sum of probabilities <= 0)");
    return NULL;
  }
  return out;
}

THTensor *at_poisson(const THTensor *rates, THGenerator *g) {
  THTensor *r = at_to_dtype(rates, TH_Double, true);
  if (!r) return NULL;
  THTensor *rc = at_contiguous(r);
  THTensor_free(r);
  if (!rc) return NULL;
  double *v = (double *)THTensor_data(rc);
  int64_t n = THTensor_numel(rc);
  pthread_mutex_lock(&g->mutex);
  for (int64_t i = 0; i < n; i++) {
    double lam = v[i];
    if (lam <= 0) { v[i] = 0; continue; }
    if (lam < 30) {   /* Knuth: multiply uniforms until below e^-lambda */
      double L = exp(-lam), p = 1;
      int64_t k = 0;
      do { k++; p *= THRandom_uniform(g); } while (p > L);
      v[i] = (double)(k - 1);
    } else {          /* transformed rejection (Hormann) for large rates */
      double slam = sqrt(lam), loglam = log(lam), b = 0.931 + 2.53 * slam, a = -0.059 + 0.02483 * b;
      double inv_alpha = 1.1239 + 1.1328 / (b - 3.4), vr = 0.9277 - 3.6224 / (b - 2);
      for (;;) {
        double U = THRandom_uniform(g) - 0.5, V = THRandom_uniform(g), us = 0.5 - fabs(U);
        double k = floor((2 * a / us + b) * U + lam + 0.43);
        if (us >= 0.07 && V <= vr) { v[i] = k; break; }
        if (k < 0 || (us < 0.013 && V > us)) continue;
        if (log(V) + log(inv_alpha) - log(a / (us * us) + b) <= -lam + k * loglam - lgamma(k + 1)) { v[i] = k; break; }
      }
    }
  }
  pthread_mutex_unlock(&g->mutex);
  THTensor *out = at_to_dtype(rc, rates->dtype, false);
  THTensor_free(rc);
  return out;
}
