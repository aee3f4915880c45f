/* Factory functions: new tensors from sizes and values; window functions. */
#include "ATen.h"
#include "ATFactory.h"
#include "../TH/THLoops.h"

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

/* A float or double range, rounded as torch's CPU kernel rounds it, so values match bit for bit
 * (start + i*step alone is off by an ulp in some elements): torch splits the range into one chunk
 * per thread (32768 elements at least), and in each chunk fills vectors of 32 bytes (its AVX2
 * kernels) from a base fma(step, i, start) rounded to the dtype, lane l being fma(l, step, base)
 * in double; the tail past the last pair of vectors is fma(step, i, start) each. */
static void fill_linear_torch(THTensor *t, double start, double step) {
  int64_t n = THTensor_numel(t), grain = 32768;
  int64_t tasks = at_get_num_threads();
  if (tasks > (n + grain - 1) / grain) tasks = (n + grain - 1) / grain;
  if (tasks < 1) tasks = 1;
  int64_t chunk = (n + tasks - 1) / tasks;
  bool f32 = t->dtype == TH_Float;
  int64_t V = f32 ? 8 : 4;
  float *of = f32 ? (float *)THTensor_data(t) : NULL;
  double *od = f32 ? NULL : (double *)THTensor_data(t);
  for (int64_t b = 0; b < n; b += chunk) {
    int64_t e = b + chunk < n ? b + chunk : n, i = b;
    for (; i <= e - 2 * V; i += 2 * V)   /* vectors come in pairs */
      for (int64_t g = i; g < i + 2 * V; g += V) {
        double base = fma(step, (double)g, start);
        if (f32) {
          double fb = (double)(float)base;
          for (int64_t l = 0; l < V; l++) of[g + l] = (float)fma((double)l, step, fb);
        } else {
          for (int64_t l = 0; l < V; l++) od[g + l] = fma((double)l, step, base);
        }
      }
    for (; i < e; i++) {
      double v = fma(step, (double)i, start);
      if (f32) of[i] = (float)v; else od[i] = v;
    }
  }
}

/* Values are computed as start + i*step in double (int64 for integer
 * dtypes), then converted, as PyTorch does. */
/* one loop per dtype (the switch once, not per element), so each vectorizes */
static void fill_linear(THTensor *t, double start, double step, int64_t istart, int64_t istep, bool integral) {
  int64_t n = THTensor_numel(t);
  char *p = THTensor_data(t);
#define FILL(T, CONV)                                                                              \
  if (integral) { _Pragma("omp simd") for (int64_t i = 0; i < n; i++) { int64_t iv = istart + i * istep; ((T *)p)[i] = CONV(iv); } } \
  else { _Pragma("omp simd") for (int64_t i = 0; i < n; i++) { double v = start + (double)i * step; ((T *)p)[i] = CONV(v); } } \
  break;
#define FILLF(T, CONV)                                                                             \
  { float fs = (float)start, fst = (float)step;                                                    \
    _Pragma("omp simd") for (int64_t i = 0; i < n; i++) ((T *)p)[i] = CONV(fs + (float)i * fst); } \
  break;
#define AS_BOOL(v) ((v) != 0)
#define AS_HALF(v) th_float2half((float)(v))
#define AS_BF16(v) th_float2bf((float)(v))
  if (!integral && (t->dtype == TH_Float || t->dtype == TH_Double)) { fill_linear_torch(t, start, step); return; }
  switch (t->dtype) {
    case TH_Bool: FILL(bool, AS_BOOL)
    case TH_UInt8: FILL(uint8_t, (uint8_t))
    case TH_Int8: FILL(int8_t, (int8_t))
    case TH_Int16: FILL(int16_t, (int16_t))
    case TH_Int32: FILL(int32_t, (int32_t))
    case TH_Int64: FILL(int64_t, (int64_t))
    /* half types count in float, as torch's accumulate type for them */
    case TH_Half: FILLF(THHalf, AS_HALF)
    case TH_BFloat16: FILLF(THBFloat16, AS_BF16)
    case TH_Float: FILL(float, (float))
    case TH_Double: FILL(double, (double))
    default: break;
  }
#undef FILL
#undef FILLF
#undef AS_BOOL
#undef AS_HALF
#undef AS_BF16
}

THTensor *at_arange(ATScalar start, ATScalar end, ATScalar step, THDtype dtype, bool dtype_given) {
  bool any_float = start.kind == AT_SCALAR_FLOAT || end.kind == AT_SCALAR_FLOAT || step.kind == AT_SCALAR_FLOAT;
  if (!dtype_given) dtype = any_float ? at_default_dtype() : TH_Int64;
  if (THDtype_isComplex(dtype)) {   /* torch has no complex arange either */
    THError_set(TH_ERR_NOTIMPL, "\"arange_cpu\" not implemented for '%s'",
                dtype == TH_ComplexFloat ? "ComplexFloat" : "ComplexDouble");
    return NULL;
  }
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
  } else if (dtype == TH_Int64) {
    /* torch sizes an int64 range from the bounds cast to int64 first */
    int64_t xs = (int64_t)s, xe = (int64_t)e, xst = (int64_t)st, sgn = (xst > 0) - (xst < 0);
    if (xst == 0) { THError_set(TH_ERR_VALUE, "step must be nonzero"); return NULL; }
    n = (xe - xs + xst - sgn) / xst;   /* integer division, as torch does it */
  } else {
    n = (int64_t)ceil((e - s) / st);
  }
  if (n < 0) n = 0;
  if (dtype == TH_Bool) {
    THError_set(TH_ERR_NOTIMPL, "\"arange_cpu\" not implemented for 'Bool'");
    return NULL;
  }
  ATIntList size = { 1, { n } };
  THTensor *t = at_empty(&size, dtype);
  if (!t) return NULL;
  if (!integral && !THDtype_isFloating(dtype))
    /* torch counts float bounds into an integer dtype from the start and
     * step cast to that dtype: arange(0, 2.5, 0.5, dtype=int32) is zeros */
    fill_linear(t, s, st, (int64_t)s, (int64_t)st, true);
  else
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
  int64_t half = steps / 2;
  /* float and double as torch computes them, so values match bit for bit: the step in the
   * dtype, then one fused multiply-add from the nearer end (which keeps the last value exact) */
  if (dtype == TH_Float) {
    float fs = (float)s, fe = (float)e, fstep = steps > 1 ? (fe - fs) / (float)(steps - 1) : 0.0f;
    float *o = (float *)THTensor_data(t);
    for (int64_t i = 0; i < steps; i++)
      o[i] = i < half || steps == 1 ? fmaf(fstep, (float)i, fs) : fmaf(-fstep, (float)(steps - 1 - i), fe);
    return t;
  }
  if (dtype == TH_Double) {
    double *o = (double *)THTensor_data(t);
    for (int64_t i = 0; i < steps; i++)
      o[i] = i < half || steps == 1 ? fma(step, (double)i, s) : fma(-step, (double)(steps - 1 - i), e);
    return t;
  }
  THTensor *tmp = THTensor_new(TH_Double, 1, &steps);
  if (!tmp) { THTensor_free(t); return NULL; }
  double *v = (double *)THTensor_data(tmp);
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

/* ---- window functions ---- */

static const THLoopFn window_loops[TH_NDTYPES] = TH_FLOATING_TABLE(window_loop);

THTensor *at_window(int kind, const char *name, int64_t window_length, bool periodic, double alpha, double beta,
                    THDtype dtype) {
  if (dtype == TH_Undefined) dtype = at_default_dtype();
  if (!THDtype_isFloating(dtype)) {
    THError_set(TH_ERR_RUNTIME, "%s expects floating point dtypes, got: TensorOptions(dtype=%s, device=cpu, "
                "layout=Strided (default), requires_grad=false (default), pinned_memory=false, "
                "memory_format=(nullopt))", name, at_cpp_dtype_name(dtype));
    return NULL;
  }
  if (window_length < 0) {
    THError_set(TH_ERR_RUNTIME, "%s requires non-negative window_length, got window_length=%lld", name,
                (long long)window_length);
    return NULL;
  }
  THTensor *t = THTensor_new(dtype, 1, &window_length);
  if (!t || window_length == 0) return t;
  if (window_length == 1) {
    if (at_fill_(t, at_scalar_int(1)) < 0) { THTensor_free(t); return NULL; }
    return t;
  }
  const int64_t N = periodic ? window_length + 1 : window_length, chunk = 32768;
  THOpArgs a = {{0}};
  a.i[0] = kind;
  a.i[1] = N;
  a.d[0] = kind == TH_WINDOW_HAMMING ? M_PI * 2.0 / (double)(N - 1)
         : kind == TH_WINDOW_BLACKMAN ? M_PI / (double)(N - 1) : 2.0 / (double)(N - 1);
  a.d[1] = alpha;
  a.d[2] = beta;
  char *p = THTensor_data(t);
  const int64_t es = THDtype_size(dtype);
  THLoopFn fn = window_loops[dtype];
  #pragma omp parallel for if (window_length > 2 * chunk)
  for (int64_t s = 0; s < window_length; s += chunk) {
    THOpArgs ca = a;
    ca.i[2] = s;
    char *data[1] = { p + s * es };
    int64_t st[1] = { es };
    fn(data, st, window_length - s < chunk ? window_length - s : chunk, &ca);
  }
  return t;
}
