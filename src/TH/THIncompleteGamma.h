/* The regularized incomplete gamma functions P(a, x) (igamma) and
 * Q(a, x) = 1 - P(a, x) (igammac), in double, for every floating dtype
 * (float, half and bfloat16 round the double result).
 *
 * Both are x^a e^-x / Gamma(a) times a factor that converges fast on one
 * side of x = a + 1:
 *   P = pre / a * (1 + x/(a+1) + x^2/((a+1)(a+2)) + ...)   (the power series, x < a + 1)
 *   Q = pre * 1/(x+1-a - 1(1-a)/(x+3-a - 2(2-a)/(x+5-a - ...)))   (Legendre's
 *       continued fraction, x >= a + 1, evaluated by the modified Lentz method)
 * and the other function is one minus it. The edge values follow torch:
 * a < 0 or x < 0 is NaN, a = 0 makes P 1 for x > 0 (NaN at x = 0), x = 0 makes
 * P 0, an infinite a makes P 0 (NaN when x is infinite too), an infinite x
 * makes P 1. */
#ifndef TH_INCOMPLETE_GAMMA_H
#define TH_INCOMPLETE_GAMMA_H

#include <float.h>
#include <math.h>

/* x^a e^-x / Gamma(a), through logs so large a and x do not overflow; lgamma_r
 * because lgamma writes the global signgam from OpenMP threads */
extern double lgamma_r(double, int *);
static inline double th_igam_prefix(double a, double x) {
  int sg;
  double l = a * log(x) - x - lgamma_r(a, &sg);
  return l < -745.2 ? 0.0 : exp(l);
}

/* P by its power series; converges for every x, fast for x < a + 1 */
static inline double th_igam_series(double a, double x) {
  double pre = th_igam_prefix(a, x);
  if (pre == 0.0) return 0.0;
  double r = a, term = 1.0, sum = 1.0;
  for (int i = 0; i < 100000; i++) {
    r += 1.0;
    term *= x / r;
    sum += term;
    if (term <= sum * DBL_EPSILON) break;
  }
  return pre * sum / a;
}

/* Q by the continued fraction; converges for x >= a + 1 */
static inline double th_igam_cfrac(double a, double x) {
  double pre = th_igam_prefix(a, x);
  if (pre == 0.0) return 0.0;
  const double tiny = 1e-300;
  double b = x + 1.0 - a, c = 1.0 / tiny, d = 1.0 / b, h = d;
  for (int i = 1; i < 100000; i++) {
    double an = -i * (i - a);
    b += 2.0;
    d = an * d + b;
    if (fabs(d) < tiny) d = tiny;
    c = b + an / c;
    if (fabs(c) < tiny) c = tiny;
    d = 1.0 / d;
    double del = d * c;
    h *= del;
    if (fabs(del - 1.0) <= DBL_EPSILON) break;
  }
  return pre * h;
}

/* shared edge cases: returns 1 and sets *p (the value of P) when one applies */
static inline int th_igam_edge(double a, double x, double *p) {
  if (isnan(a) || isnan(x) || a < 0 || x < 0) { *p = NAN; return 1; }
  if (a == 0) { *p = x > 0 ? 1.0 : NAN; return 1; }
  if (x == 0) { *p = 0.0; return 1; }
  if (isinf(a)) { *p = isinf(x) ? NAN : 0.0; return 1; }
  if (isinf(x)) { *p = 1.0; return 1; }
  return 0;
}

static inline double th_igamma(double a, double x) {
  double p;
  if (th_igam_edge(a, x, &p)) return p;
  return x < a + 1.0 ? th_igam_series(a, x) : 1.0 - th_igam_cfrac(a, x);
}

static inline double th_igammac(double a, double x) {
  double p;
  if (th_igam_edge(a, x, &p)) return 1.0 - p;   /* NaN stays NaN */
  return x < a + 1.0 ? 1.0 - th_igam_series(a, x) : th_igam_cfrac(a, x);
}

#endif
