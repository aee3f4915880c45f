/* torch.special's Bessel, Airy and zeta functions and its classical
 * orthogonal polynomials, in double for every floating dtype (the kernels in
 * generic/THTensorSpecial.c cast in and out).
 *
 * The methods, chosen so that one short routine covers the whole real line:
 * - J0, J1, Y0, Y1: power series for x <= 2; Miller's backward recurrence for
 *   J_k (normalized by J0 + 2 sum J_2k = 1) up to x = 25, with Y0 and Y1
 *   from Neumann's series over the same J_k; Hankel's asymptotic expansion
 *   beyond (its smallest term is below e^-2x there).
 * - K0, K1 (and e^x K): the logarithmic power series for x <= 2; beyond, the
 *   trapezoidal rule on e^x K_v(x) = int_0^inf exp(-x (cosh t - 1)) cosh(v t) dt,
 *   whose integrand is entire and decays double-exponentially, so the rule
 *   converges geometrically in the step.
 * - Ai: Maclaurin series on [-8, 2]; K_1/3 through the integral above for
 *   x > 2; the oscillatory asymptotic expansion below -8.
 * - zeta(x, q): Hurwitz's zeta by Euler-Maclaurin summation.
 * - polynomials: their three-term recurrences in n (truncated to an integer;
 *   n < 0 gives 0), and for the Chebyshev kinds on |x| < 1 with large n the
 *   trigonometric closed forms. */
#ifndef TH_SPECIAL_FUNCTIONS_H
#define TH_SPECIAL_FUNCTIONS_H
#include <math.h>
#include <stdint.h>
#include "THMath.h"

#define TH_SF_PI 3.14159265358979323846
#define TH_SF_EULER 0.57721566490153286061
#define TH_SF_EPS 1.1102230246251565e-16

/* ---- J0, J1, Y0, Y1 ---- */

/* sum_k c_k (-x^2/4)^k / (k! (k+nu)!) with c_k = 1 (J) or the digamma sums (Y) */
static inline double th_sf_jy_series(double x, int nu, int which_y) {
  const double z = -x * x / 4;
  double term = nu ? x / 2 : 1, sum = 0;
  double hk = 0, hk1 = nu ? 1 : 0;   /* H_k and H_(k+nu), harmonic numbers */
  for (int k = 0; k < 60; k++) {
    if (k) {
      term *= z / ((double)k * (k + nu));
      hk += 1.0 / k;
      hk1 += 1.0 / (k + nu);
    }
    double t = which_y ? term * (hk + hk1 - 2 * TH_SF_EULER) : term;
    sum += t;
    if (fabs(t) < TH_SF_EPS * fabs(sum) && k > 2) break;
  }
  return sum;
}

/* the oscillatory asymptotic expansions' two series: even terms to P, odd to Q, signs alternating in pairs */
static inline void th_sf_add_pq(double term, int k, double *P, double *Q) {
  if (k & 1) *Q += (k & 2) ? -term : term;
  else *P += (k & 2) ? -term : term;
}

/* Hankel's expansion: J_nu = s (P cos chi - Q sin chi), Y_nu = s (P sin chi + Q cos chi) */
static inline void th_sf_jy_asymptotic(double x, int nu, double *j, double *y) {
  const double mu = 4.0 * nu * nu;
  double P = 0, Q = 0, term = 1, prev = INFINITY;
  for (int k = 0; k < 60; k++) {
    if (k) term *= (mu - (2.0 * k - 1) * (2.0 * k - 1)) / (k * 8.0 * x);
    if (fabs(term) > prev) break;      /* the series is asymptotic: stop at its smallest term */
    prev = fabs(term);
    th_sf_add_pq(term, k, &P, &Q);
    if (prev < 1e-17) break;
  }
  const double chi = x - (nu / 2.0 + 0.25) * TH_SF_PI, s = sqrt(2 / (TH_SF_PI * x));
  const double c = cos(chi), sn = sin(chi);
  *j = s * (P * c - Q * sn);
  *y = s * (P * sn + Q * c);
}

/* J0, J1, Y0, Y1 at x > 2 (x < 25: Miller's recurrence; beyond: asymptotic) */
static inline void th_sf_jy_all(double x, double out[4]) {
  if (x >= 25) {
    th_sf_jy_asymptotic(x, 0, &out[0], &out[2]);
    th_sf_jy_asymptotic(x, 1, &out[1], &out[3]);
    return;
  }
  int N = (int)x + 40;
  N += N & 1;                             /* even, so J_N's neighbours pair up in the norm */
  double jk1 = 0, jk = 1e-300, norm = 0, ysum0 = 0, ysum1 = 0, j0 = 0, j1 = 0;
  double jodd_above = 0;                  /* J_(2k+1), for Y1's sum over k */
  for (int k = N; k >= 1; k--) {
    double jm = 2.0 * k / x * jk - jk1;  /* J_(k-1) */
    jk1 = jk;
    jk = jm;
    const int m = k - 1;                  /* jk now holds J_m */
    if (m > 0 && (m & 1) == 0) {
      const int kk = m / 2;               /* J_2kk */
      norm += 2 * jk;
      ysum0 += (kk & 1 ? -1.0 : 1.0) * jk / kk;
    }
    if (m & 1) {
      /* (J_(2kk-1) - J_(2kk+1)) / kk with 2kk - 1 = m */
      const int kk = (m + 1) / 2;
      ysum1 += (kk & 1 ? -1.0 : 1.0) * (jk - jodd_above) / kk;
      jodd_above = jk;
    }
    if (m == 1) j1 = jk;
    if (m == 0) j0 = jk;
    if (fabs(jk) > 1e250) {               /* keep the unnormalized values in range */
      jk *= 1e-250; jk1 *= 1e-250; norm *= 1e-250; ysum0 *= 1e-250; ysum1 *= 1e-250;
      j1 *= 1e-250; jodd_above *= 1e-250;
    }
  }
  norm += j0;
  j0 /= norm; j1 /= norm; ysum0 /= norm; ysum1 /= norm;
  const double L = log(x / 2) + TH_SF_EULER;
  out[0] = j0;
  out[1] = j1;
  /* Y0 = (2/pi) (L J0 - 2 sum (-1)^k J_2k / k); Y1 = -Y0' */
  out[2] = 2 / TH_SF_PI * (L * j0 - 2 * ysum0);
  out[3] = -2 / TH_SF_PI * (j0 / x - L * j1 - ysum1);
}

/* at +-inf torch's J, Y and Ai are NaN (not their limit 0): kept, so results agree */
static inline double th_bessel_j0(double x) {
  x = fabs(x);
  if (isinf(x)) return NAN;
  if (x <= 2) return th_sf_jy_series(x, 0, 0);
  double r[4];
  th_sf_jy_all(x, r);
  return r[0];
}

static inline double th_bessel_j1(double x) {
  const double ax = fabs(x);
  if (isinf(ax)) return NAN;
  double v;
  if (ax <= 2) v = th_sf_jy_series(ax, 1, 0);
  else { double r[4]; th_sf_jy_all(ax, r); v = r[1]; }
  return x < 0 ? -v : v;
}

static inline double th_bessel_y0(double x) {
  if (isnan(x) || x < 0) return NAN;
  if (x == 0) return -INFINITY;
  if (isinf(x)) return NAN;
  /* A&S 9.1.13: the digamma series carries the Euler constant's share of the log term */
  if (x <= 2) return 2 / TH_SF_PI * (log(x / 2) * th_sf_jy_series(x, 0, 0) - 0.5 * th_sf_jy_series(x, 0, 1));
  double r[4];
  th_sf_jy_all(x, r);
  return r[2];
}

static inline double th_bessel_y1(double x) {
  if (isnan(x) || x < 0) return NAN;
  if (x == 0) return -INFINITY;
  if (isinf(x)) return NAN;
  if (x <= 2)
    return -2 / (TH_SF_PI * x) + 2 / TH_SF_PI * log(x / 2) * th_sf_jy_series(x, 1, 0)
           - 1 / TH_SF_PI * th_sf_jy_series(x, 1, 1);
  double r[4];
  th_sf_jy_all(x, r);
  return r[3];
}

/* ---- K0, K1 and their scaled forms ---- */

/* e^x K_nu(x) for x > 2 by the trapezoidal rule (see the top) */
static inline double th_sf_k_scaled_integral(double x, double nu) {
  const double h = fmin(0.15, 0.5 / sqrt(x));
  double sum = 0.5;                        /* the t = 0 node, halved */
  for (int j = 1; j < 100000; j++) {
    const double t = j * h, f = exp(-x * (cosh(t) - 1)) * cosh(nu * t);
    sum += f;
    if (f < 1e-18 * sum) break;
  }
  return h * sum;
}

/* K0, K1 for 0 < x <= 2: the logarithmic series (Abramowitz and Stegun 9.6.13, 9.6.11) */
static inline double th_sf_k_series(double x, int nu) {
  const double z = x * x / 4, L = log(x / 2);
  double term = nu ? x / 2 : 1, sum = 0, hk = 0, hk1 = nu ? 1 : 0;
  for (int k = 0; k < 60; k++) {
    if (k) {
      term *= z / ((double)k * (k + nu));
      hk += 1.0 / k;
      hk1 += 1.0 / (k + nu);
    }
    /* psi(k+1) + psi(k+nu+1) = H_k + H_(k+nu) - 2 gamma */
    const double t = term * (hk + hk1 - 2 * TH_SF_EULER);
    sum += t;
    if (fabs(t) < TH_SF_EPS * fabs(sum) && k > 2) break;
  }
  if (nu == 0) return -L * th_i0(x) + sum / 2;
  return 1 / x + L * th_i1(x) - sum / 2;
}

static inline double th_modified_bessel_k(double x, int nu, int scaled) {
  if (isnan(x) || x < 0) return NAN;
  if (x == 0) return INFINITY;
  if (isinf(x)) return 0;
  if (x <= 2) return th_sf_k_series(x, nu) * (scaled ? exp(x) : 1);
  const double s = th_sf_k_scaled_integral(x, nu);
  return scaled ? s : s * exp(-x);
}

static inline double th_modified_bessel_k0(double x) { return th_modified_bessel_k(x, 0, 0); }
static inline double th_modified_bessel_k1(double x) { return th_modified_bessel_k(x, 1, 0); }
static inline double th_scaled_modified_bessel_k0(double x) { return th_modified_bessel_k(x, 0, 1); }
static inline double th_scaled_modified_bessel_k1(double x) { return th_modified_bessel_k(x, 1, 1); }

static inline double th_spherical_bessel_j0(double x) {
  if (isinf(x)) return 0;
  if (fabs(x) < 1e-4) return 1 - x * x / 6;   /* sin(x)/x's series: the next term is below 2^-53 */
  return sin(x) / x;
}

/* ---- Airy Ai ---- */

static inline double th_airy_ai(double x) {
  if (isnan(x) || isinf(x)) return NAN;
  if (x > 2) {
    /* Ai(x) = sqrt(x/3) K_1/3(zeta) / pi, zeta = 2/3 x^3/2 */
    const double zeta = 2.0 / 3.0 * x * sqrt(x);
    return sqrt(x / 3) / TH_SF_PI * exp(-zeta) * th_sf_k_scaled_integral(zeta, 1.0 / 3.0);
  }
  if (x >= -8) {
    /* Ai = c1 f - c2 g, f = sum 3^k (1/3)_k x^3k / (3k)!, g = sum 3^k (2/3)_k x^(3k+1) / (3k+1)! */
    const double c1 = 0.355028053887817239260, c2 = 0.258819403792806798405, x3 = x * x * x;
    double f = 1, g = x, tf = 1, tg = x;
    for (int k = 1; k < 200; k++) {
      tf *= x3 / ((3.0 * k - 1) * (3.0 * k));
      tg *= x3 / ((3.0 * k) * (3.0 * k + 1));
      f += tf;
      g += tg;
      if (fabs(tf) < 1e-18 * fabs(f) && fabs(tg) < 1e-18 * (fabs(g) + 1e-300)) break;
    }
    return c1 * f - c2 * g;
  }
  /* Ai(-z) = z^-1/4 / sqrt(pi) (sin(zeta + pi/4) P - cos(zeta + pi/4) Q), with u_k the expansion's coefficients */
  const double z = -x, zeta = 2.0 / 3.0 * z * sqrt(z);
  double P = 0, Q = 0, u = 1, term = 1, prev = INFINITY;
  for (int k = 0; k < 100; k++) {
    if (k) {
      u *= (6.0 * k - 5) * (6.0 * k - 3) * (6.0 * k - 1) / ((2.0 * k - 1) * 216.0 * k);
      term = u / pow(zeta, k);
    }
    if (fabs(term) > prev) break;
    prev = fabs(term);
    th_sf_add_pq(term, k, &P, &Q);
    if (prev < 1e-17) break;
  }
  const double a = zeta + TH_SF_PI / 4;
  return pow(z, -0.25) / sqrt(TH_SF_PI) * (sin(a) * P - cos(a) * Q);
}

/* ---- Hurwitz zeta ---- */

/* zeta(s, q) for s > 1 (special.zeta, and polygamma of order >= 2 in ATPointwise.c): the
 * direct sum up to q + N > 9, then the Euler-Maclaurin tail with Bernoulli numbers (the
 * Cephes scheme, as torch's CPU kernel). */
static inline double th_zeta(double s, double q) {
  static const double B[12] = { 12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
                                7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
                                -4.5979787224074726105e15, 1.8152105401943546773e17, -7.1661652561756670113e18 };
  if (s == 1) return INFINITY;   /* the pole, and outside the domain below it (as Cephes) */
  if (s < 1) return NAN;
  if (q <= 0) {
    if (q == floor(q)) return INFINITY;
    if (s != floor(s)) return NAN;   /* (q + k)^-s of a negative base */
  }
  double sum = pow(q, -s), a = q, b = 0;
  int i = 0;
  while (i < 9 || a <= 9) {
    i++; a += 1; b = pow(a, -s); sum += b;
    if (fabs(b / sum) < TH_SF_EPS) return sum;
  }
  double w = a;
  sum += b * w / (s - 1) - 0.5 * b;
  double fac = 1, k = 0;
  for (i = 0; i < 12; i++) {
    fac *= s + k; b /= w;
    double t = fac * b / B[i];
    sum += t;
    if (fabs(t / sum) < TH_SF_EPS) break;
    k += 1; fac *= s + k; b /= w; k += 1;
  }
  return sum;
}

/* ---- orthogonal polynomials ---- */

/* n from the tensor (truncated toward zero as torch's integer cast); -1 marks NaN or too large to recur over */
static inline int64_t th_sf_degree(double n) {
  if (isnan(n) || n > 2147483647.0) return -1;
  return n < 0 ? -2 : (int64_t)n;
}

/* the three-term recurrence p_(k+1) = (a_k x + b_k) p_k - c_k p_(k-1) from p0, p1 */
#define TH_SF_RECUR(P0, P1, NEXT)                                            \
  do {                                                                       \
    if (n == 0) return (P0);                                                 \
    double p = (P0), q = (P1);                                               \
    for (int64_t k = 1; k < n; k++) { double r = (NEXT); p = q; q = r; }     \
    return q;                                                                \
  } while (0)

static inline double th_chebyshev_t(double x, double nd) {
  const int64_t n = th_sf_degree(nd);
  if (n == -1) return NAN;
  if (n < 0) return 0;
  if (fabs(x) == 1) return (x > 0 || n % 2 == 0) ? 1 : -1;
  if (n > 6 && fabs(x) < 1) return cos(n * acos(x));
  TH_SF_RECUR(1, x, 2 * x * q - p);
}

static inline double th_chebyshev_u(double x, double nd) {
  const int64_t n = th_sf_degree(nd);
  if (n == -1) return NAN;
  if (n < 0) return 0;
  if (fabs(x) == 1) return (x > 0 || n % 2 == 0) ? (double)(n + 1) : -(double)(n + 1);
  if (n > 8 && fabs(x) < 1) {
    const double th = acos(x);
    return sin((n + 1) * th) / sin(th);
  }
  TH_SF_RECUR(1, 2 * x, 2 * x * q - p);
}

static inline double th_chebyshev_v(double x, double nd) {
  const int64_t n = th_sf_degree(nd);
  if (n == -1) return NAN;
  if (n < 0) return 0;
  if (x == 1) return 1;
  if (x == -1) return (n % 2 == 0) ? (double)(2 * n + 1) : -(double)(2 * n + 1);
  if (n > 8 && fabs(x) < 1) {
    const double th = acos(x);
    return cos((n + 0.5) * th) / cos(th / 2);
  }
  TH_SF_RECUR(1, 2 * x - 1, 2 * x * q - p);
}

static inline double th_chebyshev_w(double x, double nd) {
  const int64_t n = th_sf_degree(nd);
  if (n == -1) return NAN;
  if (n < 0) return 0;
  if (x == 1) return (double)(2 * n + 1);
  if (x == -1) return (n % 2 == 0) ? 1 : -1;
  if (n > 8 && fabs(x) < 1) {
    const double th = acos(x);
    return sin((n + 0.5) * th) / sin(th / 2);
  }
  TH_SF_RECUR(1, 2 * x + 1, 2 * x * q - p);
}

static inline double th_shifted_chebyshev_t(double x, double n) { return th_chebyshev_t(2 * x - 1, n); }
static inline double th_shifted_chebyshev_u(double x, double n) { return th_chebyshev_u(2 * x - 1, n); }
static inline double th_shifted_chebyshev_v(double x, double n) { return th_chebyshev_v(2 * x - 1, n); }
static inline double th_shifted_chebyshev_w(double x, double n) { return th_chebyshev_w(2 * x - 1, n); }

static inline double th_hermite_h(double x, double nd) {
  const int64_t n = th_sf_degree(nd);
  if (n == -1) return NAN;
  if (n < 0) return 0;
  TH_SF_RECUR(1, 2 * x, 2 * x * q - 2.0 * k * p);
}

static inline double th_hermite_he(double x, double nd) {
  const int64_t n = th_sf_degree(nd);
  if (n == -1) return NAN;
  if (n < 0) return 0;
  TH_SF_RECUR(1, x, x * q - (double)k * p);
}

static inline double th_laguerre_l(double x, double nd) {
  const int64_t n = th_sf_degree(nd);
  if (n == -1) return NAN;
  if (n < 0) return 0;
  if (x == 0) return 1;
  TH_SF_RECUR(1, 1 - x, ((2.0 * k + 1 - x) * q - (double)k * p) / (k + 1.0));
}

static inline double th_legendre_p(double x, double nd) {
  const int64_t n = th_sf_degree(nd);
  if (n == -1) return NAN;
  if (n < 0) return 0;
  if (fabs(x) == 1) return (x > 0 || n % 2 == 0) ? 1 : -1;
  TH_SF_RECUR(1, x, ((2.0 * k + 1) * x * q - (double)k * p) / (k + 1.0));
}
#undef TH_SF_RECUR
#endif
