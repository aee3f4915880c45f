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

/* ---- the DFT: mixed radix 2/3/5 (recursive decimation in time), Bluestein
 * (a chirp convolution through a power-of-two transform) for lengths with
 * other prime factors. Both dtypes compute in double, so float rows lose no
 * accuracy to the twiddles; the core is shared, so it is written once. */
#ifndef TH_FFT_CORE
#define TH_FFT_CORE
#include <stdlib.h>
typedef double _Complex th_cd;

static bool th_fft_smooth(int64_t n) {
  while (n % 2 == 0) n /= 2;
  while (n % 3 == 0) n /= 3;
  while (n % 5 == 0) n /= 5;
  return n == 1;
}

/* out[0..n) = DFT of in[0], in[s], ... ; root[e] = exp(sign 2 pi i e / N),
 * rs = N / n (this level's twiddle step in the root table). tmp: n values. */
static void th_fft_rec(const th_cd *in, int64_t s, th_cd *out, int64_t n, const th_cd *root, int64_t rs, th_cd *tmp) {
  if (n == 1) { out[0] = in[0]; return; }
  int p = n % 2 == 0 ? 2 : (n % 3 == 0 ? 3 : 5);
  int64_t m = n / p;
  for (int r = 0; r < p; r++) th_fft_rec(in + r * s, s * p, out + r * m, m, root, rs * p, tmp);
  /* butterfly: X[k + q m] = sum_r w^(r (k + q m)) Y_r[k], w = root^rs */
  for (int64_t k = 0; k < m; k++) {
    th_cd y[5];
    for (int r = 0; r < p; r++) y[r] = out[r * m + k];
    for (int q = 0; q < p; q++) {
      int64_t e = k + q * m;
      th_cd acc = y[0];
      for (int r = 1; r < p; r++) acc += y[r] * root[((r * e) % n) * rs];
      tmp[e] = acc;
    }
  }
  for (int64_t e = 0; e < n; e++) out[e] = tmp[e];
}

static void th_fft_roots(th_cd *root, int64_t n, int sign) {
  for (int64_t e = 0; e < n; e++) {
    double a = sign * 2.0 * M_PI * (double)e / (double)n;
    root[e] = cos(a) + sin(a) * I;
  }
}

/* One row, in place, in double. work: see th_fft_work_size. */
typedef struct { int64_t n, m; int sign; th_cd *root, *chirp, *bconv; } th_fft_plan;

static int th_fft_plan_make(th_fft_plan *p, int64_t n, int sign) {
  p->n = n; p->sign = sign; p->root = p->chirp = p->bconv = NULL; p->m = n;
  if (th_fft_smooth(n)) {
    p->root = malloc(sizeof(th_cd) * n);
    if (!p->root) return -1;
    th_fft_roots(p->root, n, sign);
    return 0;
  }
  int64_t m = 1;
  while (m < 2 * n - 1) m *= 2;
  p->m = m;
  p->root = malloc(sizeof(th_cd) * m);
  p->chirp = malloc(sizeof(th_cd) * n);
  p->bconv = malloc(sizeof(th_cd) * m);
  th_cd *tmp = malloc(sizeof(th_cd) * 2 * m);
  if (!p->root || !p->chirp || !p->bconv || !tmp) { free(tmp); return -1; }
  th_fft_roots(p->root, m, -1);
  for (int64_t k = 0; k < n; k++) {   /* chirp w_k = exp(sign pi i k^2 / n), k^2 taken mod 2n */
    int64_t e = (int64_t)(((unsigned __int128)k * k) % (unsigned __int128)(2 * n));
    double a = sign * M_PI * (double)e / (double)n;
    p->chirp[k] = cos(a) + sin(a) * I;
  }
  for (int64_t j = 0; j < m; j++) tmp[j] = 0;
  for (int64_t k = 0; k < n; k++) {
    tmp[k] = conj(p->chirp[k]);
    if (k) tmp[m - k] = conj(p->chirp[k]);
  }
  th_fft_rec(tmp, 1, p->bconv, m, p->root, 1, tmp + m);   /* B = FFT(b) once per plan */
  free(tmp);
  return 0;
}
static void th_fft_plan_free(th_fft_plan *p) { free(p->root); free(p->chirp); free(p->bconv); }
static int64_t th_fft_work_size(const th_fft_plan *p) { return p->chirp ? 3 * p->m : 2 * p->n; }

static void th_fft_row(const th_fft_plan *p, th_cd *x, th_cd *work) {
  int64_t n = p->n, m = p->m;
  if (!p->chirp) {
    th_fft_rec(x, 1, work, n, p->root, 1, work + n);
    for (int64_t k = 0; k < n; k++) x[k] = work[k];
    return;
  }
  th_cd *a = work, *A = work + m, *tmp = work + 2 * m;
  for (int64_t k = 0; k < m; k++) a[k] = k < n ? x[k] * p->chirp[k] : 0;
  th_fft_rec(a, 1, A, m, p->root, 1, tmp);
  for (int64_t k = 0; k < m; k++) A[k] *= p->bconv[k];
  /* inverse power-of-two transform by conjugation: ifft(v) = conj(fft(conj v)) / m */
  for (int64_t k = 0; k < m; k++) A[k] = conj(A[k]);
  th_fft_rec(A, 1, a, m, p->root, 1, tmp);
  for (int64_t k = 0; k < n; k++) x[k] = conj(a[k]) / (double)m * p->chirp[k];
}
#endif

int THTensor_(fft_rows)(scalar_t *x, int64_t n, int64_t batch, int sign, double scale) {
  if (n <= 0 || batch <= 0) return 0;
  th_fft_plan plan;
  if (th_fft_plan_make(&plan, n, sign) < 0) {
    th_fft_plan_free(&plan);
    THError_set(TH_ERR_MEMORY, "fft: out of memory planning a transform of length %lld", (long long)n);
    return -1;
  }
  int64_t ws = th_fft_work_size(&plan) + n;
  int failed = 0;
#pragma omp parallel if (batch > 1 && batch * n > 32768)
  {
    th_cd *w = malloc(sizeof(th_cd) * ws);
    if (!w) {
#pragma omp atomic write
      failed = 1;
    }
#pragma omp for schedule(static)
    for (int64_t b = 0; b < batch; b++) {
      if (!w) continue;
      scalar_t *row = x + b * n;
      th_cd *v = w + th_fft_work_size(&plan);
      for (int64_t k = 0; k < n; k++) v[k] = row[k];
      th_fft_row(&plan, v, w);
      for (int64_t k = 0; k < n; k++) row[k] = (scalar_t)(v[k] * scale);
    }
    free(w);
  }
  th_fft_plan_free(&plan);
  if (failed) { THError_set(TH_ERR_MEMORY, "fft: out of memory"); return -1; }
  return 0;
}
#undef TH_CARG
