/* Complex kernels: C99 _Complex arithmetic in the usual loop shapes, the
 * conversions in and out of the real dtypes, and the DFT (fft_rows).
 * Op arguments arrive in THOpArgs: a real alpha in d[0]; a fill value as
 * (d[0], d[1]) = (re, im). */
#include "../THLoops.h"

#define TH_CARG(k) (((const THOpArgs *)extra)->d[k])

void THTensor_(copy_loop)(char **data, const int64_t *st, int64_t n, const void *extra) {
  const THDtype sd = *(const THDtype *)extra;
  char *po = data[0], *pa = data[1];
  const int64_t so = st[0], sa = st[1];
#define TH_CCOPY_CASE(DT, ST, READ) \
  case DT: for (int64_t i = 0; i < n; i++) TH_AT(po, so, i) = (scalar_t)READ(*(const ST *)(pa + sa * i)); break;
#define TH_ID(x) (x)
  switch (sd) {
    TH_CCOPY_CASE(TH_Bool, bool, TH_ID)
    TH_CCOPY_CASE(TH_UInt8, uint8_t, TH_ID)
    TH_CCOPY_CASE(TH_Int8, int8_t, TH_ID)
    TH_CCOPY_CASE(TH_Int16, int16_t, TH_ID)
    TH_CCOPY_CASE(TH_Int32, int32_t, TH_ID)
    TH_CCOPY_CASE(TH_Int64, int64_t, TH_ID)
    TH_CCOPY_CASE(TH_Half, THHalf, th_half2float)
    TH_CCOPY_CASE(TH_BFloat16, THBFloat16, th_bf2float)
    TH_CCOPY_CASE(TH_Float, float, TH_ID)
    TH_CCOPY_CASE(TH_Double, double, TH_ID)
    TH_CCOPY_CASE(TH_ComplexFloat, float _Complex, TH_ID)
    TH_CCOPY_CASE(TH_ComplexDouble, double _Complex, TH_ID)
    default: break;
  }
#undef TH_CCOPY_CASE
#undef TH_ID
}

void THTensor_(fill_loop)(char **data, const int64_t *st, int64_t n, const void *extra) {
  scalar_t v;
  __real__ v = (part_t)TH_CARG(0);
  __imag__ v = (part_t)TH_CARG(1);
  for (int64_t i = 0; i < n; i++) TH_AT(data[0], st[0], i) = v;
}

TH_BINARY_LOOP(add_loop, a + (part_t)TH_CARG(0) * b)
TH_BINARY_LOOP(sub_loop, a - (part_t)TH_CARG(0) * b)
TH_BINARY_LOOP(mul_loop, a * b)
TH_BINARY_LOOP(div_loop, a / b)
TH_BINARY_LOOP(pow_loop, (b == 0 ? (compute_t)1 : (a == 0 ? (compute_t)0 : cpow(a, b))))
TH_PREDICATE_LOOP(eq_loop, a == b)
TH_PREDICATE_LOOP(ne_loop, a != b)
TH_UNARY_LOOP(neg_loop, -x)
TH_UNARY_LOOP(conj_loop, conj(x))
TH_UNARY_LOOP(exp_loop, cexp(x))
TH_UNARY_LOOP(log_loop, clog(x))
TH_UNARY_LOOP(sqrt_loop, csqrt(x))
TH_UNARY_LOOP(sin_loop, csin(x))
TH_UNARY_LOOP(cos_loop, ccos(x))
TH_UNARY_LOOP(tanh_loop, ctanh(x))
TH_UNARY_LOOP(reciprocal_loop, (compute_t)1 / x)
TH_UNARY_LOOP(sgn_loop, x == 0 ? (compute_t)0 : x / cabs(x))
/* the rest of torch's complex unary math: C99's complex functions, and the compositions torch's own
 * kernels use (log10/log2 as log scaled, exp2 as exp(x ln 2), sigmoid as 1 / (1 + exp(-x))) */
TH_UNARY_LOOP(tan_loop, ctan(x))
TH_UNARY_LOOP(sinh_loop, csinh(x))
TH_UNARY_LOOP(cosh_loop, ccosh(x))
TH_UNARY_LOOP(asin_loop, casin(x))
TH_UNARY_LOOP(acos_loop, cacos(x))
TH_UNARY_LOOP(atan_loop, catan(x))
TH_UNARY_LOOP(asinh_loop, casinh(x))
TH_UNARY_LOOP(acosh_loop, cacosh(x))
TH_UNARY_LOOP(atanh_loop, catanh(x))
TH_UNARY_LOOP(log10_loop, clog(x) / 2.302585092994045684)
TH_UNARY_LOOP(log2_loop, clog(x) / 0.693147180559945309)
TH_UNARY_LOOP(log1p_loop, clog(1 + x))
TH_UNARY_LOOP(expm1_loop, cexp(x) - 1)
TH_UNARY_LOOP(exp2_loop, cexp(x * 0.693147180559945309))
TH_UNARY_LOOP(rsqrt_loop, 1 / csqrt(x))
TH_UNARY_LOOP(sigmoid_loop, 1 / (1 + cexp(-x)))

/* the predicates: a complex number is nan (inf) when either part is; finite when both are */
#define TH_CPRED_LOOP(NAME, EXPR)                                                       \
  void THTensor_(NAME)(char **data, const int64_t *st, int64_t n, const void *extra) {  \
    (void)extra;                                                                        \
    for (int64_t i = 0; i < n; i++) {                                                   \
      const compute_t x = TH_AT(data[1], st[1], i);                                     \
      *(bool *)(data[0] + st[0] * i) = (EXPR);                                          \
    }                                                                                   \
  }
TH_CPRED_LOOP(isnan_loop, isnan(creal(x)) || isnan(cimag(x)))
TH_CPRED_LOOP(isinf_loop, isinf(creal(x)) || isinf(cimag(x)))
TH_CPRED_LOOP(isfinite_loop, isfinite(creal(x)) && isfinite(cimag(x)))
#undef TH_CPRED_LOOP
/* torch's complex lerp, addcmul and addcdiv: the weight's modulus picks lerp's side (so weight 1 gives end
 * exactly); value (real here: a Scalar holds no imaginary part) scales the product or quotient */
TH_TERNARY_LOOP(lerp_loop, cabs(c) < 0.5 ? a + c * (b - a) : b - (b - a) * ((compute_t)1 - c))
TH_TERNARY_LOOP(addcmul_loop, a + (part_t)TH_CARG(0) * b * c)
TH_TERNARY_LOOP(addcdiv_loop, a + (part_t)TH_CARG(0) * b / c)

/* out = cond ? a : b (data[1] the bool condition) */
void THTensor_(where_loop)(char **data, const int64_t *st, int64_t n, const void *extra) {
  for (int64_t i = 0; i < n; i++)
    TH_AT(data[0], st[0], i) = *(const uint8_t *)(data[1] + st[1] * i) ? TH_AT(data[2], st[2], i) : TH_AT(data[3], st[3], i);
}

/* isclose: |a - b| <= atol + rtol * |b| (d[0] = rtol, d[1] = atol, i[2] = equal_nan) */
void THTensor_(isclose_loop)(char **data, const int64_t *st, int64_t n, const void *extra) {
  const double rtol = TH_CARG(0), atol = TH_CARG(1);
  const bool equal_nan = ((const THOpArgs *)extra)->i[2];
  for (int64_t i = 0; i < n; i++) {
    compute_t a = TH_AT(data[1], st[1], i), b = TH_AT(data[2], st[2], i);
    bool r = a == b;
    if (!r && equal_nan && (isnan(creal(a)) || isnan(cimag(a))) && (isnan(creal(b)) || isnan(cimag(b)))) r = true;
    if (!r && isfinite(cabs(a)) && isfinite(cabs(b))) r = cabs(a - b) <= atol + rtol * cabs(b);
    *(bool *)(data[0] + st[0] * i) = r;
  }
}

/* real out (part_t) = EXPR(x) */
#define TH_TO_PART_LOOP(NAME, EXPR)                                             \
  void THTensor_(NAME)(char **data, const int64_t *st, int64_t n, const void *extra) { \
    for (int64_t i = 0; i < n; i++) {                                           \
      compute_t x = TH_AT(data[1], st[1], i);                                   \
      *(part_t *)(data[0] + st[0] * i) = (part_t)(EXPR);                        \
    }                                                                           \
  }
TH_TO_PART_LOOP(abs_loop, sizeof(part_t) == sizeof(float) ? cabsf(x) : cabs(x))
TH_TO_PART_LOOP(angle_loop, sizeof(part_t) == sizeof(float) ? cargf(x) : carg(x))
#undef TH_TO_PART_LOOP

/* ---- the DFT rows: each row widened to double, run through the plan
 * (THFFT.c), scaled and narrowed back. */
#ifndef TH_FFT_ROWS_INCLUDED
#define TH_FFT_ROWS_INCLUDED
#include <stdlib.h>
#include "../THFFT.h"
#endif

int THTensor_(fft_rows)(scalar_t *x, int64_t n, int64_t batch, int sign, double scale) {
  if (n <= 0 || batch <= 0) return 0;
  THFFTPlan *plan = THFFT_plan(n, sign);
  if (!plan) {
    THError_set(TH_ERR_MEMORY, "fft: out of memory planning a transform of length %lld", (long long)n);
    return -1;
  }
  const int64_t ws = THFFT_work_size(plan) + 2 * n;
  int failed = 0;
#pragma omp parallel if (batch > 1 && batch * n > 32768)
  {
    double *w = malloc(sizeof(double) * ws);
    if (!w) {
#pragma omp atomic write
      failed = 1;
    }
#pragma omp for schedule(static)
    for (int64_t b = 0; b < batch; b++) {
      if (!w) continue;
      scalar_t *row = x + b * n;
      double *v = w + THFFT_work_size(plan);
      for (int64_t k = 0; k < n; k++) { v[2 * k] = __real__ row[k]; v[2 * k + 1] = __imag__ row[k]; }
      THFFT_run(plan, v, w);
      for (int64_t k = 0; k < n; k++) {
        scalar_t z;
        __real__ z = (part_t)(v[2 * k] * scale);
        __imag__ z = (part_t)(v[2 * k + 1] * scale);
        row[k] = z;
      }
    }
    free(w);
  }
  THFFT_plan_free(plan);
  if (failed) { THError_set(TH_ERR_MEMORY, "fft: out of memory"); return -1; }
  return 0;
}
#undef TH_CARG
