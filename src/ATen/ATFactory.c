/* Factory functions: new tensors from sizes and values. */
#include "ATen.h"

#include <math.h>
#include <string.h>

THTensor *at_empty(const ATIntList *size, THDtype dtype) {
  return THTensor_new(dtype, size->n, size->v);
}

THTensor *at_empty_strided(const ATIntList *size, const ATIntList *stride, THDtype dtype) {
  if (size->n != stride->n) {
    THError_set(TH_ERR_RUNTIME, "mismatch in length of strides and shape");
    return NULL;
  }
  return THTensor_newStrided(dtype, size->n, size->v, stride->v);
}

THTensor *at_full(const ATIntList *size, ATScalar value, THDtype dtype) {
  THTensor *t = THTensor_new(dtype, size->n, size->v);
  if (!t) return NULL;
  if (at_fill_(t, value) < 0) { THTensor_free(t); return NULL; }
  return t;
}

static double sval(ATScalar s) { return s.kind == AT_SCALAR_FLOAT ? s.d : (double)s.i; }

/* Values are computed as start + i*step in double (int64 for integer
 * dtypes), then converted, as PyTorch does. */
static void fill_linear(THTensor *t, double start, double step, int64_t istart, int64_t istep, bool integral) {
  int64_t n = THTensor_numel(t);
  char *p = THTensor_data(t);
  for (int64_t i = 0; i < n; i++) {
    double v = start + (double)i * step;
    int64_t iv = istart + i * istep;
    switch (t->dtype) {
      case TH_Bool: ((bool *)p)[i] = integral ? iv != 0 : v != 0; break;
      case TH_UInt8: ((uint8_t *)p)[i] = integral ? (uint8_t)iv : (uint8_t)v; break;
      case TH_Int8: ((int8_t *)p)[i] = integral ? (int8_t)iv : (int8_t)v; break;
      case TH_Int16: ((int16_t *)p)[i] = integral ? (int16_t)iv : (int16_t)v; break;
      case TH_Int32: ((int32_t *)p)[i] = integral ? (int32_t)iv : (int32_t)v; break;
      case TH_Int64: ((int64_t *)p)[i] = integral ? iv : (int64_t)v; break;
      case TH_Half: ((THHalf *)p)[i] = th_float2half((float)v); break;
      case TH_BFloat16: ((THBFloat16 *)p)[i] = th_float2bf((float)v); break;
      case TH_Float: ((float *)p)[i] = (float)v; break;
      case TH_Double: ((double *)p)[i] = v; break;
      default: break;
    }
  }
}

THTensor *at_arange(ATScalar start, ATScalar end, ATScalar step, THDtype dtype, bool dtype_given) {
  bool any_float = start.kind == AT_SCALAR_FLOAT || end.kind == AT_SCALAR_FLOAT || step.kind == AT_SCALAR_FLOAT;
  if (!dtype_given) dtype = any_float ? at_default_dtype() : TH_Int64;
  double s = sval(start), e = sval(end), st = sval(step);
  if (st == 0) { THError_set(TH_ERR_RUNTIME, "step must be nonzero"); return NULL; }
  if (!isfinite(s) || !isfinite(e)) {
    THError_set(TH_ERR_RUNTIME, "unsupported range: %g -> %g", s, e);
    return NULL;
  }
  if ((st > 0 && e < s) || (st < 0 && e > s)) {
    THError_set(TH_ERR_RUNTIME, "upper bound and lower bound inconsistent with step sign");
    return NULL;
  }
  int64_t n;
  bool integral = !any_float && !THDtype_isFloating(dtype);
  if (integral) {
    int64_t is = start.i, ie = end.i, ist = step.i;
    n = ist > 0 ? (ie - is + ist - 1) / ist : (is - ie + (-ist) - 1) / (-ist);
  } else {
    n = (int64_t)ceil((e - s) / st);
  }
  if (n < 0) n = 0;
  ATIntList size = { 1, { n } };
  THTensor *t = at_empty(&size, dtype);
  if (!t) return NULL;
  fill_linear(t, s, st, start.i, step.i, integral);
  return t;
}

THTensor *at_linspace(ATScalar start, ATScalar end, int64_t steps, THDtype dtype) {
  if (steps < 0) { THError_set(TH_ERR_RUNTIME, "number of steps must be non-negative"); return NULL; }
  ATIntList size = { 1, { steps } };
  THTensor *t = at_empty(&size, dtype);
  if (!t || steps == 0) return t;
  double s = sval(start), e = sval(end);
  double step = steps > 1 ? (e - s) / (double)(steps - 1) : 0;
  /* symmetric formula (from both ends) keeps the last value exact */
  THTensor *tmp = THTensor_new(TH_Double, 1, &steps);
  if (!tmp) { THTensor_free(t); return NULL; }
  double *v = (double *)THTensor_data(tmp);
  int64_t half = steps / 2;
  for (int64_t i = 0; i < steps; i++) v[i] = (i < half || steps == 1) ? s + step * (double)i : e - step * (double)(steps - 1 - i);
  if (!THDtype_isFloating(dtype))
    for (int64_t i = 0; i < steps; i++) v[i] = trunc(v[i]);
  int rc = at_copy_(t, tmp);
  THTensor_free(tmp);
  if (rc < 0) { THTensor_free(t); return NULL; }
  return t;
}

THTensor *at_logspace(ATScalar start, ATScalar end, int64_t steps, double base, THDtype dtype) {
  THTensor *lin = at_linspace(start, end, steps, TH_Double);
  if (!lin) return NULL;
  double *v = (double *)THTensor_data(lin);
  for (int64_t i = 0; i < steps; i++) v[i] = pow(base, v[i]);
  THTensor *r = at_to_dtype(lin, dtype, false);
  THTensor_free(lin);
  return r;
}

THTensor *at_eye(int64_t n, int64_t m, THDtype dtype) {
  if (n < 0) { THError_set(TH_ERR_RUNTIME, "n must be greater or equal to 0, got %lld", (long long)n); return NULL; }
  if (m < 0) m = n;
  ATIntList size = { 2, { n, m } };
  THTensor *t = at_full(&size, at_scalar_int(0), dtype);
  if (!t) return NULL;
  THTensor *d = at_diagonal(t, 0, 0, 1);
  if (!d) { THTensor_free(t); return NULL; }
  int rc = at_fill_(d, at_scalar_int(1));
  THTensor_free(d);
  if (rc < 0) { THTensor_free(t); return NULL; }
  return t;
}
