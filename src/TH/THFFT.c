/* The DFT: an iterative Stockham transform (each stage reads one buffer and
 * writes the other in natural order, so no bit reversal) with radix-4/2/3
 * butterflies written out and a generic butterfly for 5, 7, 11 and 13; other
 * prime factors go through Bluestein (the DFT as a chirp convolution done with
 * a power-of-two transform). Twiddles are tabled per stage once per plan, so a
 * row costs O(n log n) multiply-adds and no trigonometry. */
#include "THFFT.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TH_FFT_MAXST 64

struct THFFTPlan {
  int64_t n;
  int sign, nst;
  int r[TH_FFT_MAXST];
  int64_t m[TH_FFT_MAXST];    /* length after the stage's split: n_cur = r m */
  double *tw[TH_FFT_MAXST];   /* W^(p u), W = exp(sign 2 pi i / (r m)), p < m, 1 <= u < r: pair 2 (p (r-1) + u-1) */
  double *om[TH_FFT_MAXST];   /* generic radix: exp(sign 2 pi i k / r), k < r */
  double *mem;
  int64_t bm;                 /* Bluestein: power-of-two length of the convolution, 0 when unused */
  double *chirp, *bconv;
  THFFTPlan *inner;
};

static void th_fft_root(double *out, int64_t e, int64_t n, int sign) {
  double a = sign * 2.0 * M_PI * (double)(e % n) / (double)n;
  out[0] = cos(a);
  out[1] = sin(a);
}

static int th_fft_factor(int64_t n, int *r, int *nst) {
  static const int rad[] = {4, 2, 3, 5, 7, 11, 13};
  *nst = 0;
  for (size_t i = 0; i < sizeof rad / sizeof rad[0]; i++)
    while (n % rad[i] == 0) { r[(*nst)++] = rad[i]; n /= rad[i]; }
  /* the one radix-2 stage (if any) first: it runs at stride 1, so every radix-4 stage after it
   * has an even stride, pairs of columns for the vector butterfly */
  for (int k = 1; k < *nst; k++)
    if (r[k] == 2) { memmove(r + 1, r, sizeof(int) * k); r[0] = 2; break; }
  return n == 1;
}

THFFTPlan *THFFT_plan(int64_t n, int sign) {
  THFFTPlan *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  p->n = n;
  p->sign = sign;
  if (th_fft_factor(n, p->r, &p->nst)) {
    int64_t total = 0, cur = n;
    for (int k = 0; k < p->nst; k++) {
      cur /= p->r[k];
      total += 2 * (p->r[k] - 1) * cur + 2 * p->r[k];
    }
    p->mem = malloc(sizeof(double) * (total ? total : 1));
    if (!p->mem) { free(p); return NULL; }
    double *q = p->mem;
    cur = n;
    for (int k = 0; k < p->nst; k++) {
      int r = p->r[k];
      int64_t m = cur / r;
      p->m[k] = m;
      p->tw[k] = q;
      for (int64_t j = 0; j < m; j++)
        for (int u = 1; u < r; u++, q += 2) th_fft_root(q, j * u, cur, sign);
      p->om[k] = q;
      for (int u = 0; u < r; u++, q += 2) th_fft_root(q, u, r, sign);
      cur = m;
    }
    return p;
  }
  /* Bluestein: X_k = c_k sum_j (x_j c_j) conj(c_(k-j)), c_k = exp(sign pi i k^2 / n) */
  p->nst = 0;
  int64_t bm = 1;
  while (bm < 2 * n - 1) bm *= 2;
  p->bm = bm;
  p->inner = THFFT_plan(bm, -1);
  p->chirp = malloc(sizeof(double) * 2 * n);
  p->bconv = calloc(2 * bm, sizeof(double));
  double *work = malloc(sizeof(double) * 2 * bm);
  if (!p->inner || !p->chirp || !p->bconv || !work) { free(work); THFFT_plan_free(p); return NULL; }
  for (int64_t k = 0; k < n; k++) {   /* k^2 taken mod 2n so the angle stays small and exact */
    int64_t e = (int64_t)(((unsigned __int128)k * k) % (unsigned __int128)(2 * n));
    double a = sign * M_PI * (double)e / (double)n;
    p->chirp[2 * k] = cos(a);
    p->chirp[2 * k + 1] = sin(a);
  }
  for (int64_t k = 0; k < n; k++) {
    p->bconv[2 * k] = p->chirp[2 * k];
    p->bconv[2 * k + 1] = -p->chirp[2 * k + 1];
    if (k) {
      p->bconv[2 * (bm - k)] = p->chirp[2 * k];
      p->bconv[2 * (bm - k) + 1] = -p->chirp[2 * k + 1];
    }
  }
  THFFT_run(p->inner, p->bconv, work);
  for (int64_t k = 0; k < 2 * bm; k++) p->bconv[k] /= (double)bm;   /* the inverse transform's 1/bm, folded in */
  free(work);
  return p;
}

void THFFT_plan_free(THFFTPlan *p) {
  if (!p) return;
  free(p->mem);
  free(p->chirp);
  free(p->bconv);
  THFFT_plan_free(p->inner);
  free(p);
}

int64_t THFFT_work_size(const THFFTPlan *p) {
  return p->bm ? 2 * p->bm + THFFT_work_size(p->inner) : 2 * p->n;
}

/* complex multiply-by-twiddle on (re, im) pairs */
#define TH_CMUL(or_, oi, ar, ai, w) do { double _r = (ar), _i = (ai); \
  (or_) = _r * (w)[0] - _i * (w)[1]; (oi) = _r * (w)[1] + _i * (w)[0]; } while (0)

#ifdef __AVX2__
#include <immintrin.h>
/* the radix-4 stage at an even stride: two columns (q, q + 1) per 256-bit vector of (re, im, re, im);
 * one twiddle per p, broadcast. The same operations in the same order as the scalar butterfly. */
static void th_fft_r4_avx2(int64_t m, int64_t s, const double *a, double *b, const double *tw, int sign) {
  const int64_t is = 2 * s * m, os = 2 * s;
  /* sign i (re, im) = (-sign im, sign re): swap the halves, negate the even (sign +1) or odd lanes */
  const __m256d flip = sign > 0 ? _mm256_set_pd(0.0, -0.0, 0.0, -0.0) : _mm256_set_pd(-0.0, 0.0, -0.0, 0.0);
  for (int64_t p = 0; p < m; p++) {
    const double *w = tw + 6 * p, *ai = a + 2 * s * p;
    double *bo = b + 2 * s * 4 * p;
    const __m256d w1r = _mm256_set1_pd(w[0]), w1i = _mm256_set1_pd(w[1]), w2r = _mm256_set1_pd(w[2]),
                  w2i = _mm256_set1_pd(w[3]), w3r = _mm256_set1_pd(w[4]), w3i = _mm256_set1_pd(w[5]);
    for (int64_t q = 0; q < 2 * s; q += 4) {
      const double *x = ai + q;
      __m256d x0 = _mm256_loadu_pd(x), x1 = _mm256_loadu_pd(x + is), x2 = _mm256_loadu_pd(x + 2 * is),
              x3 = _mm256_loadu_pd(x + 3 * is);
      __m256d t0 = _mm256_add_pd(x0, x2), t1 = _mm256_sub_pd(x0, x2), t2 = _mm256_add_pd(x1, x3),
              t3 = _mm256_sub_pd(x1, x3);
      __m256d u = _mm256_xor_pd(_mm256_permute_pd(t3, 0x5), flip);
      __m256d y0 = _mm256_add_pd(t0, t2), y1 = _mm256_add_pd(t1, u), y2 = _mm256_sub_pd(t0, t2),
              y3 = _mm256_sub_pd(t1, u);
      double *y = bo + q;
      _mm256_storeu_pd(y, y0);
      if (p) {   /* (re, im) w: re wr - im wi, im wr + re wi */
        y1 = _mm256_addsub_pd(_mm256_mul_pd(y1, w1r), _mm256_mul_pd(_mm256_permute_pd(y1, 0x5), w1i));
        y2 = _mm256_addsub_pd(_mm256_mul_pd(y2, w2r), _mm256_mul_pd(_mm256_permute_pd(y2, 0x5), w2i));
        y3 = _mm256_addsub_pd(_mm256_mul_pd(y3, w3r), _mm256_mul_pd(_mm256_permute_pd(y3, 0x5), w3i));
      }
      _mm256_storeu_pd(y + os, y1);
      _mm256_storeu_pd(y + 2 * os, y2);
      _mm256_storeu_pd(y + 3 * os, y3);
    }
  }
}
#endif

/* One Stockham stage: input a, n_cur = r m, stride s (= n / n_cur); out b.
 * b[q + s (r p + u)] = W^(p u) sum_t a[q + s (p + t m)] w_r^(t u). */
static void th_fft_stage(const THFFTPlan *P, int k, int64_t s, const double *a, double *b) {
  const int r = P->r[k];
  const int64_t m = P->m[k], is = 2 * s * m, os = 2 * s;
  const double sg = P->sign;
#ifdef __AVX2__
  if (r == 4 && s % 2 == 0) { th_fft_r4_avx2(m, s, a, b, P->tw[k], P->sign); return; }
#endif
  for (int64_t p = 0; p < m; p++) {
    const double *w = P->tw[k] + 2 * p * (r - 1);
    const double *ai = a + 2 * s * p;
    double *bo = b + 2 * s * r * p;
    if (r == 4) {
      for (int64_t q = 0; q < 2 * s; q += 2) {
        const double *x = ai + q;
        double t0r = x[0] + x[2 * is], t0i = x[1] + x[2 * is + 1];
        double t1r = x[0] - x[2 * is], t1i = x[1] - x[2 * is + 1];
        double t2r = x[is] + x[3 * is], t2i = x[is + 1] + x[3 * is + 1];
        double t3r = x[is] - x[3 * is], t3i = x[is + 1] - x[3 * is + 1];
        /* w_4 t3 = sign i t3 */
        double ur = -sg * t3i, ui = sg * t3r;
        double *y = bo + q;
        y[0] = t0r + t2r;
        y[1] = t0i + t2i;
        if (p == 0) {
          y[os] = t1r + ur; y[os + 1] = t1i + ui;
          y[2 * os] = t0r - t2r; y[2 * os + 1] = t0i - t2i;
          y[3 * os] = t1r - ur; y[3 * os + 1] = t1i - ui;
        } else {
          TH_CMUL(y[os], y[os + 1], t1r + ur, t1i + ui, w);
          TH_CMUL(y[2 * os], y[2 * os + 1], t0r - t2r, t0i - t2i, w + 2);
          TH_CMUL(y[3 * os], y[3 * os + 1], t1r - ur, t1i - ui, w + 4);
        }
      }
    } else if (r == 2) {
      for (int64_t q = 0; q < 2 * s; q += 2) {
        const double *x = ai + q;
        double *y = bo + q;
        double dr = x[0] - x[is], di = x[1] - x[is + 1];
        y[0] = x[0] + x[is];
        y[1] = x[1] + x[is + 1];
        if (p == 0) { y[os] = dr; y[os + 1] = di; }
        else TH_CMUL(y[os], y[os + 1], dr, di, w);
      }
    } else if (r == 3) {
      const double sn = sg * 0.86602540378443864676;   /* sign sin(2 pi / 3) */
      for (int64_t q = 0; q < 2 * s; q += 2) {
        const double *x = ai + q;
        double *y = bo + q;
        double tr = x[is] + x[2 * is], ti = x[is + 1] + x[2 * is + 1];
        double dr = x[is] - x[2 * is], di = x[is + 1] - x[2 * is + 1];
        double mr = x[0] - 0.5 * tr, mi = x[1] - 0.5 * ti;
        y[0] = x[0] + tr;
        y[1] = x[1] + ti;
        /* m +- i sn d */
        double b1r = mr - sn * di, b1i = mi + sn * dr, b2r = mr + sn * di, b2i = mi - sn * dr;
        if (p == 0) { y[os] = b1r; y[os + 1] = b1i; y[2 * os] = b2r; y[2 * os + 1] = b2i; }
        else { TH_CMUL(y[os], y[os + 1], b1r, b1i, w); TH_CMUL(y[2 * os], y[2 * os + 1], b2r, b2i, w + 2); }
      }
    } else {
      const double *om = P->om[k];
      for (int64_t q = 0; q < 2 * s; q += 2) {
        const double *x = ai + q;
        double *y = bo + q;
        for (int u = 0; u < r; u++) {
          double accr = x[0], acci = x[1];
          for (int t = 1; t < r; t++) {
            const double *o = om + 2 * ((t * u) % r);
            double xr = x[t * is], xi = x[t * is + 1];
            accr += xr * o[0] - xi * o[1];
            acci += xr * o[1] + xi * o[0];
          }
          if (p == 0 || u == 0) { y[u * os] = accr; y[u * os + 1] = acci; }
          else TH_CMUL(y[u * os], y[u * os + 1], accr, acci, w + 2 * (u - 1));
        }
      }
    }
  }
}

static void th_fft_stages(const THFFTPlan *P, double *x, double *y) {
  double *a = x, *b = y;
  int64_t s = 1;
  for (int k = 0; k < P->nst; k++) {
    th_fft_stage(P, k, s, a, b);
    s *= P->r[k];
    double *t = a; a = b; b = t;
  }
  if (a != x) memcpy(x, a, sizeof(double) * 2 * P->n);
}

void THFFT_run(const THFFTPlan *P, double *x, double *work) {
  if (!P->bm) { th_fft_stages(P, x, work); return; }
  const int64_t n = P->n, bm = P->bm;
  double *a = work, *iw = work + 2 * bm;
  const double *c = P->chirp, *B = P->bconv;
  for (int64_t k = 0; k < n; k++) TH_CMUL(a[2 * k], a[2 * k + 1], x[2 * k], x[2 * k + 1], c + 2 * k);
  memset(a + 2 * n, 0, sizeof(double) * 2 * (bm - n));
  th_fft_stages(P->inner, a, iw);
  /* pointwise product with FFT(b), conjugated: the inverse transform as conj(FFT(conj .)) */
  for (int64_t k = 0; k < bm; k++) {
    double re, im;
    TH_CMUL(re, im, a[2 * k], a[2 * k + 1], B + 2 * k);
    a[2 * k] = re;
    a[2 * k + 1] = -im;
  }
  th_fft_stages(P->inner, a, iw);
  for (int64_t k = 0; k < n; k++) TH_CMUL(x[2 * k], x[2 * k + 1], a[2 * k], -a[2 * k + 1], c + 2 * k);
}
