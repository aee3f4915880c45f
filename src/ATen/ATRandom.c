/* Samplers: values are drawn in double (or int64) in element order into a
 * contiguous buffer, then copied into the target with dtype conversion.
 * Serial by design: the stream must not depend on the thread count. */
#include "ATRandom.h"
#include "ATCuda.h"
#include "ATComplex.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef double (*Draw)(THGenerator *g, const double *a);

/* A buffer laid out like t (dims ordered by t's strides, outermost first),
 * so values are drawn in t's memory order as torch's TensorIterator does;
 * *view is the buffer seen in t's logical dim order. */
static THTensor *memory_order_buffer(const THTensor *t, THDtype dt, THTensor **view) {
  ATIntList perm = { t->ndim, {0} }, inv = { t->ndim, {0} };
  int64_t sz[TH_MAX_DIMS];
  for (int i = 0; i < t->ndim; i++) perm.v[i] = i;
  for (int i = 1; i < t->ndim; i++)   /* stable insertion sort, larger strides first */
    for (int j = i; j > 0 && t->strides[perm.v[j]] > t->strides[perm.v[j - 1]]; j--) {
      int64_t x = perm.v[j]; perm.v[j] = perm.v[j - 1]; perm.v[j - 1] = x;
    }
  for (int i = 0; i < t->ndim; i++) { sz[i] = t->sizes[perm.v[i]]; inv.v[perm.v[i]] = i; }
  THTensor *buf = THTensor_new(dt, t->ndim, sz);
  if (!buf) return NULL;
  *view = at_permute(buf, &inv);
  if (!*view) { THTensor_free(buf); return NULL; }
  return buf;
}

/* A draw into a meta tensor is a no-op after the argument checks (as torch's
 * nn.init on meta modules): there is nowhere to write. */
#define META_NOOP(t) do { if (THTensor_isMeta(t)) return THTensor_retain(t); } while (0)

/* Fills t elementwise from draw(a), in t's memory order. */
static THTensor *fill_with(THTensor *t, Draw draw, const double *a, THGenerator *g) {
  META_NOOP(t);
  int64_t n = THTensor_numel(t);
  if (THTensor_isContiguous(t) && (t->dtype == TH_Float || t->dtype == TH_Double)) {
    /* straight into t: no buffer, no copy pass */
    pthread_mutex_lock(&g->mutex);
    if (t->dtype == TH_Double) { double *v = (double *)THTensor_data(t); for (int64_t i = 0; i < n; i++) v[i] = draw(g, a); }
    else { float *v = (float *)THTensor_data(t); for (int64_t i = 0; i < n; i++) v[i] = (float)draw(g, a); }
    pthread_mutex_unlock(&g->mutex);
    return THTensor_retain(t);
  }
  THTensor *view = NULL;
  THTensor *buf = memory_order_buffer(t, TH_Double, &view);
  if (!buf) return NULL;
  double *v = (double *)THTensor_data(buf);
  pthread_mutex_lock(&g->mutex);
  for (int64_t i = 0; i < n; i++) v[i] = draw(g, a);
  pthread_mutex_unlock(&g->mutex);
  int rc = at_copy_(t, view);
  THTensor_free(view);
  THTensor_free(buf);
  return rc < 0 ? NULL : THTensor_retain(t);
}

/* fma: the bulk forms' (THRandom.c) rounding, which is torch's */
static double d_uniform(THGenerator *g, const double *a) { return fma(THRandom_uniform(g), a[1] - a[0], a[0]); }
static double d_uniform_f(THGenerator *g, const double *a) {
  float f = (float)a[0], t = (float)a[1];
  return (double)fmaf(THRandom_uniformFloat(g), t - f, f);
}
/* half and bfloat16 draw as float (24 bits) between bounds rounded to the dtype */
static double d_uniform_h(THGenerator *g, const double *a) {
  double r[2] = { th_half2float(th_float2half((float)a[0])), th_half2float(th_float2half((float)a[1])) };
  return d_uniform_f(g, r);
}
static double d_uniform_bf(THGenerator *g, const double *a) {
  double r[2] = { th_bf2float(th_float2bf((float)a[0])), th_bf2float(th_float2bf((float)a[1])) };
  return d_uniform_f(g, r);
}
static Draw uniform_draw(THDtype dt) {
  switch (dt) {
    case TH_Double: return d_uniform;
    case TH_Half: return d_uniform_h;
    case TH_BFloat16: return d_uniform_bf;
    default: return d_uniform_f;
  }
}
static double d_normal(THGenerator *g, const double *a) { return THRandom_normal(g) * a[1] + a[0]; }
static double d_bernoulli(THGenerator *g, const double *a) { return THRandom_uniform(g) < a[0] ? 1.0 : 0.0; }
static double d_exponential(THGenerator *g, const double *a) { return -1.0 / a[0] * log1p(-THRandom_uniform(g)); }
static double d_geometric(THGenerator *g, const double *a) {
  return ceil(log(THRandom_uniform(g)) / log1p(-a[0]));
}
static double d_log_normal(THGenerator *g, const double *a) { return exp(a[0] + a[1] * THRandom_normal(g)); }
static double d_cauchy(THGenerator *g, const double *a) { return a[0] + a[1] * tan(M_PI * (THRandom_uniform(g) - 0.5)); }

static int check_float(const THTensor *t, const char *name) {
  if (THDtype_isFloating(t->dtype)) return 0;
  THError_set(TH_ERR_NOTIMPL, "\"%s_kernel_cpu\" not implemented for '%s'", name, THDtype_info[t->dtype].legacy);
  return -1;
}

/* A complex tensor draws both parts of each element through its real view
 * (torch's rule; normal_ gives each part std / sqrt(2), so |z| has variance std^2). */
static THTensor *complex_draw(THTensor *t, THTensor *(*fill)(THTensor *, double, double, THGenerator *), double a,
                              double b, THGenerator *g) {
  THTensor *rv = at_view_as_real(t);
  THTensor *r = rv ? fill(rv, a, b, g) : NULL;
  THTensor_free(rv);
  if (!r) return NULL;
  THTensor_free(r);
  return THTensor_retain(t);
}

/* ---- the CUDA generator: Philox at (seed, offset), drawn on the device
 * (src/THC/THCRandom.cu). Each call takes the next offset, so no two calls
 * share numbers; manual_seed restarts the sequence. ---- */
static _Atomic uint64_t cuda_seed = 67280421310721ULL, cuda_offset = 0;

void at_cuda_manual_seed(uint64_t seed) { cuda_seed = seed; cuda_offset = 0; }
uint64_t at_cuda_initial_seed(void) { return cuda_seed; }
void at_cuda_rng_state(uint64_t *seed, uint64_t *offset) { *seed = cuda_seed; *offset = cuda_offset; }
void at_cuda_set_rng_state(uint64_t seed, uint64_t offset) { cuda_seed = seed; cuda_offset = offset; }

static THTensor *cuda_fill(THTensor *t, int kind, double a, double b) {
  int64_t n = THTensor_numel(t);
  if (n == 0) return THTensor_retain(t);
  int dev = THTensor_device(t);
  THTensor *c = THTensor_isContiguous(t) ? THTensor_retain(t) : at_new_on(dev, t->dtype, t->ndim, t->sizes, NULL);
  if (!c) return NULL;
  uint64_t off = atomic_fetch_add(&cuda_offset, 1);
  int rc = at_cuda->set_device(dev);
  if (rc == 0) rc = at_cuda->random(kind, t->dtype, THTensor_data(c), n, a, b, cuda_seed, off);
  if (rc == 0 && c != t) rc = at_copy_(t, c);
  THTensor_free(c);
  return rc < 0 ? NULL : THTensor_retain(t);
}

THTensor *at_uniform_(THTensor *t, double from, double to, THGenerator *g) {
  if (from > to) {
    THError_set(TH_ERR_RUNTIME, "uniform_ expects to return a [from, to) range, but found from=%g > to=%g", from, to);
    return NULL;
  }
  META_NOOP(t);
  if (THDtype_isComplex(t->dtype) && THTensor_device(t) < 0) return complex_draw(t, at_uniform_, from, to, g);
  if (check_float(t, "uniform") < 0) return NULL;
  if (THTensor_device(t) >= 0) return cuda_fill(t, 0, from, to);
  double a[2] = { from, to };
  if (THTensor_isContiguous(t) && (t->dtype == TH_Float || t->dtype == TH_Double)) {
    pthread_mutex_lock(&g->mutex);
    if (t->dtype == TH_Float) THRandom_fillUniformFloat(g, (float *)THTensor_data(t), THTensor_numel(t), (float)from, (float)to);
    else THRandom_fillUniform(g, (double *)THTensor_data(t), THTensor_numel(t), from, to);
    pthread_mutex_unlock(&g->mutex);
    return THTensor_retain(t);
  }
  return fill_with(t, uniform_draw(t->dtype), a, g);
}

/* torch's normal_fill (contiguous tensors of 16+ elements): uniforms for the
 * whole tensor first, then Box-Muller over blocks of 16 (u1 = 1 - x[j] gives
 * the radius, x[j + 8] the angle), in the target's precision; a ragged tail
 * redraws and transforms the last 16. */
#define DEFINE_NORMAL16(NAME, T, SQRT, LOG, COS, SIN)                     \
  static void NAME(T *d, T mean, T std) {                                 \
    for (int j = 0; j < 8; j++) {                                         \
      T u1 = 1 - d[j], u2 = d[j + 8];                                     \
      T radius = SQRT(-2 * LOG(u1)), theta = (T)(2.0 * M_PI * u2);        \
      d[j] = radius * COS(theta) * std + mean;                            \
      d[j + 8] = radius * SIN(theta) * std + mean;                        \
    }                                                                     \
  }
DEFINE_NORMAL16(normal16_d, double, sqrt, log, cos, sin)

/* float32 tensors: torch's x86 build (AVX2 capability) runs the Box-Muller
 * block through Cephes-style single-precision log and sincos (polynomials
 * after range reduction), with its compiler fusing some multiply-adds. The
 * values differ from libm's logf/cosf/sinf in the last bit for about a third
 * of draws, so randn would not equal torch's; this follows the same float
 * operations, each fused step written as fmaf, and agrees bit for bit. */
static float cephes_logf(float x) {
  if (x < FLT_MIN) x = FLT_MIN;   /* u1 is in (0, 1]: never reached by draws */
  uint32_t b;
  memcpy(&b, &x, 4);
  float e = (float)((int32_t)(b >> 23) - 127) + 1.0f;
  b = (b & ~0x7f800000u) | 0x3f000000u;   /* mantissa m in [0.5, 1) */
  float m;
  memcpy(&m, &b, 4);
  float t = 0.0f;
  if (m < 0.707106781186547524f) { e -= 1.0f; t = m; }   /* then log(2m) with e - 1 */
  m = (m - 1.0f) + t;
  float z = m * m;
  float y = 7.0376836292e-2f;
  y = fmaf(y, m, -1.1514610310e-1f);
  y = fmaf(y, m, 1.1676998740e-1f);
  y = fmaf(y, m, -1.2420140846e-1f);
  y = fmaf(y, m, 1.4249322787e-1f);
  y = fmaf(y, m, -1.6668057665e-1f);
  y = fmaf(y, m, 2.0000714765e-1f);
  y = fmaf(y, m, -2.4999993993e-1f);
  y = fmaf(y, m, 3.3333331174e-1f);
  y = y * m;
  y = fmaf(y, z, e * -2.12194440e-4f);
  y = y - z * 0.5f;
  m = m + y;
  return fmaf(e, 0.693359375f, m);   /* log 2 split in two parts */
}

static void cephes_sincosf(float x, float *s, float *c) {
  bool neg_s = x < 0;
  x = fabsf(x);
  int32_t q = (int32_t)(x * 1.27323954473516f);   /* octant, by 4/pi */
  q = (q + 1) & ~1;
  float fq = (float)q;
  neg_s ^= (q & 4) != 0;
  bool neg_c = (~(q - 2) & 4) != 0, cos_poly_is_cos = (q & 2) == 0;
  x = fmaf(fq, -0.78515625f, x);   /* x - q pi/4 with pi/4 in three parts */
  x = fmaf(fq, -2.4187564849853515625e-4f, x);
  x = fmaf(fq, -3.77489497744594108e-8f, x);
  float z = x * x;
  float yc = 2.443315711809948e-5f;
  yc = fmaf(yc, z, -1.388731625493765e-3f);
  yc = fmaf(yc, z, 4.166664568298827e-2f);
  yc = yc * z;
  yc = fmaf(yc, z, -(z * 0.5f));
  yc = yc + 1.0f;
  float ys = -1.9515295891e-4f;
  ys = fmaf(ys, z, 8.3321608736e-3f);
  ys = fmaf(ys, z, -1.6666654611e-1f);
  ys = ys * z;
  ys = fmaf(ys, x, x);
  float sv = cos_poly_is_cos ? ys : yc, cv = cos_poly_is_cos ? yc : ys;
  *s = neg_s ? -sv : sv;
  *c = neg_c ? -cv : cv;
}

static void normal16_f(float *d, float mean, float std) {
  for (int j = 0; j < 8; j++) {
    float u1 = 1.0f - d[j], u2 = d[j + 8];
    float radius = sqrtf(-2.0f * cephes_logf(u1)), s, c;
    cephes_sincosf((float)(2.0 * M_PI) * u2, &s, &c);
    d[j] = fmaf(radius * c, std, mean);
    d[j + 8] = fmaf(radius * s, std, mean);
  }
}

/* Uniforms for all n (serial: the stream order), Box-Muller per full block
 * (independent blocks, so threads may share them), then the ragged tail
 * redrawn. FILL01 is THRandom's bulk [0, 1) fill in T. */
#define NORMAL_FILL_BODY(T, FILL01, NORMAL16)                              \
  do {                                                                    \
    T *d = (T *)THTensor_data(buf);                                       \
    FILL01(g, d, n, 0, 1);                                                \
    _Pragma("omp parallel for if (n > 65536)")                            \
    for (int64_t i = 0; i < n / 16; i++) NORMAL16(d + 16 * i, (T)mean, (T)std); \
    if (n % 16) {                                                         \
      FILL01(g, d + n - 16, 16, 0, 1);                                    \
      NORMAL16(d + n - 16, (T)mean, (T)std);                              \
    }                                                                     \
  } while (0)
static THTensor *normal_fill(THTensor *t, double mean, double std, THGenerator *g) {
  int64_t n = THTensor_numel(t);
  bool dbl = t->dtype == TH_Double;
  /* float and double are filled in place (t is contiguous here); half and
   * bfloat16 go through a float buffer, drawn as torch draws them (in float) */
  bool direct = t->dtype == TH_Float || dbl;
  THTensor *buf = direct ? THTensor_retain(t) : THTensor_new(TH_Float, t->ndim, t->sizes);
  if (!buf) return NULL;
  pthread_mutex_lock(&g->mutex);
  if (dbl) NORMAL_FILL_BODY(double, THRandom_fillUniform, normal16_d);
  else NORMAL_FILL_BODY(float, THRandom_fillUniformFloat, normal16_f);
  pthread_mutex_unlock(&g->mutex);
  int rc = direct ? 0 : at_copy_(t, buf);
  THTensor_free(buf);
  return rc < 0 ? NULL : THTensor_retain(t);
}

THTensor *at_normal_(THTensor *t, double mean, double std, THGenerator *g) {
  if (std < 0) { THError_set(TH_ERR_RUNTIME, "normal expects std >= 0.0, but found std %g", std); return NULL; }
  META_NOOP(t);
  if (THDtype_isComplex(t->dtype) && THTensor_device(t) < 0) return complex_draw(t, at_normal_, mean, std / sqrt(2.0), g);
  if (check_float(t, "normal") < 0) return NULL;
  if (THTensor_device(t) >= 0) return cuda_fill(t, 1, mean, std);
  double a[2] = { mean, std };
  if (THTensor_numel(t) >= 16 && THTensor_isContiguous(t)) return normal_fill(t, mean, std, g);
  return fill_with(t, d_normal, a, g);
}

THTensor *at_bernoulli_p_(THTensor *t, double p, THGenerator *g) {
  if (!(p >= 0 && p <= 1)) { THError_set(TH_ERR_RUNTIME, "bernoulli_ expects p to be in [0, 1], but got p=%g", p); return NULL; }
  META_NOOP(t);
  if (THTensor_device(t) >= 0) return cuda_fill(t, 2, p, 0);
  if (THTensor_isContiguous(t) && (t->dtype == TH_Float || t->dtype == TH_Double)) {
    pthread_mutex_lock(&g->mutex);
    THRandom_fillBernoulli(g, THTensor_data(t), t->dtype == TH_Double, THTensor_numel(t), p);
    pthread_mutex_unlock(&g->mutex);
    return THTensor_retain(t);
  }
  double a[1] = { p };
  return fill_with(t, d_bernoulli, a, g);
}

THTensor *at_bernoulli_t_(THTensor *t, const THTensor *p, THGenerator *g) {
  META_NOOP(t);
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
  bool dbl = p->dtype == TH_Double;   /* torch: bernoulli_distribution<float> unless p is double */
  pthread_mutex_lock(&g->mutex);
  for (int64_t i = 0; i < n; i++)
    v[i] = (dbl ? THRandom_uniform(g) < v[i] : THRandom_uniformFloat(g) < (float)v[i]) ? 1.0 : 0.0;
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
  if (THDtype_isComplex(t->dtype)) {
    THError_set(TH_ERR_RUNTIME, "check_random_bounds handles only integral, floating-point and boolean types");
    return NULL;
  }
  int64_t hi = to.has ? to.v : dtype_max(t->dtype) + (t->dtype == TH_Int64 ? 0 : 1);
  if (to.has && from >= hi) {
    THError_set(TH_ERR_RUNTIME, "random_ expects 'from' to be less than 'to', but got from=%lld >= to=%lld",
                (long long)from, (long long)hi);
    return NULL;
  }
  META_NOOP(t);
  uint64_t range = (uint64_t)hi - (uint64_t)from;
  if (!to.has && t->dtype == TH_Int64) range = (1ULL << 63) - (uint64_t)from;   /* torch: val % 2^63 */
  int64_t n = THTensor_numel(t);
  /* the draws go in t's memory order, as torch's (channels_last along channels, a strided view too) */
  THTensor *view = NULL, *buf = memory_order_buffer(t, TH_Int64, &view);
  if (!buf) return NULL;
  int64_t *v = (int64_t *)THTensor_data(buf);
  pthread_mutex_lock(&g->mutex);
  for (int64_t i = 0; i < n; i++) {
    uint64_t r = range <= 0xffffffffu ? THRandom_random(g) : THRandom_random64(g);
    v[i] = from + (int64_t)(range ? r % range : r);
  }
  pthread_mutex_unlock(&g->mutex);
  int rc = at_copy_(t, view);
  THTensor_free(view);
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
  THTensor *z = THTensor_new(dt, nd, shape);   /* torch draws in the result dtype */
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
  if (n < 0) {   /* torch's text: its randperm makes the result tensor first */
    THError_set(TH_ERR_RUNTIME, "Trying to create tensor with negative dimension %lld: [%lld]", (long long)n, (long long)n);
    return NULL;
  }
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

/* torch's multinomial, draw for draw. Without replacement (or one sample):
 * q ~ Exp(1) per category, then the largest p / q (the Gumbel trick). */
#define MULTINOMIAL_TOP_INSERT 32
typedef struct { double key; int64_t i; } Keyed;
static int by_key_desc(const void *x, const void *y) {
  const Keyed *a = x, *b = y;
  if (a->key != b->key) return a->key > b->key ? -1 : 1;
  return a->i < b->i ? -1 : 1;
}
static int multinomial_exp_trick(double *pv, int64_t rows, int64_t k, int64_t ns, bool dbl, int64_t *ov,
                                 THGenerator *g) {
  for (int64_t r = 0; r < rows; r++) {   /* torch draws the whole exponential tensor first */
    double *w = pv + r * k;
    for (int64_t i = 0; i < k; i++) {
      double e = -log1p(-THRandom_uniform(g));
      w[i] = dbl ? w[i] / e : (double)((float)w[i] / (float)e);
    }
  }
  Keyed *kv = NULL;
  if (ns > 1 && !(kv = malloc((size_t)k * sizeof *kv))) {
    THError_set(TH_ERR_MEMORY, "multinomial: out of memory sorting %lld categories", (long long)k);
    return -1;
  }
  for (int64_t r = 0; r < rows; r++) {
    double *w = pv + r * k;
    if (ns == 1) {
      int64_t best = 0;
      for (int64_t i = 1; i < k; i++) if (w[i] > w[best] || isnan(w[i])) { best = i; if (isnan(w[i])) break; }
      ov[r] = best;
      continue;
    }
    if (ns <= MULTINOMIAL_TOP_INSERT) {
      /* a few samples: the best ns kept sorted by insertion, the sort's order (key descending,
       * index ascending); most keys fail against the current ns-th and cost one compare */
      int64_t cnt = 0;
      for (int64_t i = 0; i < k; i++) {
        Keyed c = { w[i], i };
        if (cnt == ns && by_key_desc(&c, &kv[ns - 1]) > 0) continue;
        int64_t j = cnt < ns ? cnt++ : ns - 1;
        for (; j > 0 && by_key_desc(&c, &kv[j - 1]) < 0; j--) kv[j] = kv[j - 1];
        kv[j] = c;
      }
    } else {
      for (int64_t i = 0; i < k; i++) kv[i] = (Keyed){ w[i], i };
      qsort(kv, (size_t)k, sizeof *kv, by_key_desc);
    }
    for (int64_t s = 0; s < ns; s++) ov[r * ns + s] = kv[s].i;
  }
  free(kv);
  return 0;
}

/* With replacement: a normalised running sum in the input's precision, one
 * 53-bit uniform per sample, and a binary search (torch's CPU kernel). */
static void multinomial_cdf(double *pv, int64_t rows, int64_t k, int64_t ns, bool dbl, int64_t *ov, THGenerator *g) {
  for (int64_t r = 0; r < rows; r++) {
    double *w = pv + r * k, sum = 0;
    float sumf = 0;
    for (int64_t i = 0; i < k; i++) {
      if (dbl) { sum += w[i]; w[i] = sum; }
      else { sumf += (float)w[i]; w[i] = sumf; }
    }
    if (!dbl) sum = sumf;
    for (int64_t i = 0; i < k; i++) w[i] = dbl ? w[i] / sum : (double)((float)w[i] / (float)sum);
    w[k - 1] = 1;
    for (int64_t s = 0; s < ns; s++) {
      double u = THRandom_uniform(g);
      int64_t lo = 0, hi = k;
      while (hi - lo > 0) {
        int64_t mid = lo + (hi - lo) / 2;
        if (w[mid] < u) lo = mid + 1; else hi = mid;
      }
      ov[r * ns + s] = lo;
    }
  }
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
  bool dbl = probs->dtype == TH_Double;   /* torch keeps float inputs in float */
  enum { OK, BAD_VALUE, BAD_SUM, ALREADY_SET } err = OK;
  for (int64_t r = 0; r < rows && !err; r++) {
    double *w = pv + r * k, total = 0;
    for (int64_t i = 0; i < k; i++) {
      if (!(w[i] >= 0) || isinf(w[i])) { err = BAD_VALUE; break; }
      total += w[i];
    }
    if (!err && total <= 0) err = BAD_SUM;
  }
  if (!err) {
    pthread_mutex_lock(&g->mutex);
    if (!replacement || ns == 1) err = multinomial_exp_trick(pv, rows, k, ns, dbl, ov, g) < 0 ? ALREADY_SET : OK;
    else multinomial_cdf(pv, rows, k, ns, dbl, ov, g);
    pthread_mutex_unlock(&g->mutex);
  }
  THTensor_free(pc);
  if (err == ALREADY_SET) { THTensor_free(out); return NULL; }
  if (err) {
    THTensor_free(out);
    THError_set(TH_ERR_RUNTIME, err == BAD_VALUE ? "probability tensor contains either `inf`, `nan` or element < 0"
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
  /* torch's check; a NaN rate also kept the rejection loop below from ever accepting */
  for (int64_t i = 0; i < n; i++)
    if (!(v[i] >= 0)) {
      THTensor_free(rc);
      THError_set(TH_ERR_RUNTIME, "invalid Poisson rate, expected rate to be non-negative");
      return NULL;
    }
  pthread_mutex_lock(&g->mutex);
  for (int64_t i = 0; i < n; i++) {
    double lam = v[i];
    if (lam == 0) { v[i] = 0; continue; }
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

/* One Gamma(alpha, 1) draw as torch's CPU sample_gamma makes it, step for
 * step, so a seed gives torch's numbers: alpha < 1 is boosted by
 * (1 - U)^(1/alpha) drawn first, then Marsaglia and Tsang's rejection loop
 * draws a normal (Box-Muller, its second value cached in g as torch's
 * generator caches it) and a uniform per try. With `single` the boost and d
 * are computed in float, as torch's float32 kernel does on alpha; the rest is
 * double. 1/3 and 0.0331 are torch's float literals. No contraction: torch's
 * build of this code rounds each product. */
__attribute__((optimize("fp-contract=off")))
static double gamma_draw(THGenerator *g, double alpha, bool single) {
  double scale = 1.0;
  if (alpha < 1.0) {
    if (alpha == 0.0) return 0.0;
    double inv = single ? (double)(1.0f / (float)alpha) : 1.0 / alpha;
    scale *= pow(1 - THRandom_uniform(g), inv);
    alpha = single ? (double)((float)alpha + 1.0f) : alpha + 1.0;
  }
  const double d = single ? (double)((float)alpha - 1.0f / 3.0f) : alpha - (double)(1.0f / 3.0f);
  const double c = 1.0 / sqrt(9.0 * d);
  for (;;) {
    double x, y;
    do {
      x = THRandom_normal(g);
      y = 1.0 + c * x;
    } while (y <= 0);
    const double v = y * y * y, u = 1 - THRandom_uniform(g), xx = x * x;
    if (u < 1.0 - (double)0.0331f * xx * xx) return scale * d * v;
    if (log(u) < 0.5 * xx + d * (1.0 - v + log(v))) return scale * d * v;
  }
}

/* alpha's values in double, contiguous in C order: the order torch's
 * TensorIterator draws in (its output is a fresh contiguous tensor) */
static THTensor *gamma_alphas(const THTensor *alpha, const char *kernel) {
  if (alpha->dtype != TH_Float && alpha->dtype != TH_Double) {
    THError_set(TH_ERR_NOTIMPL, "\"%s\" not implemented for '%s'", kernel, THDtype_info[alpha->dtype].legacy);
    return NULL;
  }
  THTensor *a = at_to_dtype(alpha, TH_Double, true);
  if (!a) return NULL;
  THTensor *ac = at_contiguous(a);
  THTensor_free(a);
  return ac;
}

/* a[i] becomes its gamma draw, floored at the smallest normal of the
 * sampling precision (torch's std::max(min, sample), which a NaN sample
 * also gives) */
static void gamma_fill(THGenerator *g, double *a, int64_t n, bool single) {
  pthread_mutex_lock(&g->mutex);
  for (int64_t i = 0; i < n; i++) {
    double s = gamma_draw(g, single ? (double)(float)a[i] : a[i], single);
    if (single) {
      float f = (float)s;
      a[i] = FLT_MIN < f ? f : FLT_MIN;
    } else {
      a[i] = DBL_MIN < s ? s : DBL_MIN;
    }
  }
  pthread_mutex_unlock(&g->mutex);
}

THTensor *at_standard_gamma(const THTensor *alpha, THGenerator *g) {
  THTensor *a = gamma_alphas(alpha, "gamma_cpu");
  if (!a) return NULL;
  gamma_fill(g, (double *)THTensor_data(a), THTensor_numel(a), alpha->dtype == TH_Float);
  THTensor *out = at_to_dtype(a, alpha->dtype, false);
  THTensor_free(a);
  return out;
}

/* torch's _sample_dirichlet: gamma draws in double (of alpha cast to double),
 * each divided by its row's sum over the last dim, cast to alpha's dtype and
 * kept within [smallest normal, the float below 1] */
THTensor *at_sample_dirichlet(const THTensor *alpha, THGenerator *g) {
  THTensor *a = gamma_alphas(alpha, "dirichlet");
  if (!a) return NULL;
  gamma_fill(g, (double *)THTensor_data(a), THTensor_numel(a), false);
  THTensor *sum = at_sum(a, &(ATIntList){ 1, { -1 } }, true, TH_Undefined, NULL);
  THTensor *q = sum ? at_div(a, sum, NULL, NULL) : NULL;
  THTensor_free(a);
  THTensor_free(sum);
  if (!q) return NULL;
  THTensor *out = at_to_dtype(q, alpha->dtype, false);
  THTensor_free(q);
  if (!out) return NULL;
  bool single = alpha->dtype == TH_Float;
  int64_t n = THTensor_numel(out);
  for (int64_t i = 0; i < n; i++) {   /* std::min(hi, std::max(lo, v)): a NaN becomes lo */
    if (single) {
      float *o = (float *)THTensor_data(out), lo = FLT_MIN, hi = nextafterf(1.0f, 0.0f), w = lo < o[i] ? o[i] : lo;
      o[i] = w < hi ? w : hi;
    } else {
      double *o = (double *)THTensor_data(out), lo = DBL_MIN, hi = nextafter(1.0, 0.0), w = lo < o[i] ? o[i] : lo;
      o[i] = w < hi ? w : hi;
    }
  }
  return out;
}
