/* Scalar math PyTorch has and libm lacks. */
#ifndef TH_MATH_H
#define TH_MATH_H

#include <math.h>

/* Vector variants of libm from glibc's libmvec, so `#pragma omp simd` loops
 * over exp/log/sin/cos/tanh/erf/pow vectorize (glibc only declares these under
 * -ffast-math, which would also break NaN checks). */
#pragma omp declare simd notinbranch
extern float expf(float);
#pragma omp declare simd notinbranch
extern double exp(double);
#pragma omp declare simd notinbranch
extern float logf(float);
#pragma omp declare simd notinbranch
extern double log(double);
#pragma omp declare simd notinbranch
extern float sinf(float);
#pragma omp declare simd notinbranch
extern float cosf(float);
#pragma omp declare simd notinbranch
extern float tanhf(float);
#pragma omp declare simd notinbranch
extern double tanh(double);
#pragma omp declare simd notinbranch
extern float erff(float);
#pragma omp declare simd notinbranch
extern double erf(double);
#pragma omp declare simd notinbranch
extern float log1pf(float);
#pragma omp declare simd notinbranch
extern double log1p(double);
#pragma omp declare simd notinbranch
extern float powf(float, float);
#pragma omp declare simd notinbranch
extern double pow(double, double);

/* libm by argument type, so float kernels call the float (and vector)
 * variants instead of widening to double */
#define TH_ERF(x) _Generic((x), float: erff, default: erf)(x)
#define TH_EXP(x) _Generic((x), float: expf, default: exp)(x)
#define TH_LOG1P(x) _Generic((x), float: log1pf, default: log1p)(x)
#define TH_POW(x, y) _Generic((x), float: powf, default: pow)(x, y)
#define TH_TANH(x) _Generic((x), float: tanhf, default: tanh)(x)

static inline double th_erfinv(double y) {
  if (y <= -1) return y == -1 ? -INFINITY : NAN;
  if (y >= 1) return y == 1 ? INFINITY : NAN;
  /* Giles' single-precision approximation, then two Newton steps. */
  double w = -log((1.0 - y) * (1.0 + y)), x;
  if (w < 5.0) {
    w -= 2.5;
    x = 2.81022636e-08; x = 3.43273939e-07 + x * w; x = -3.5233877e-06 + x * w;
    x = -4.39150654e-06 + x * w; x = 0.00021858087 + x * w; x = -0.00125372503 + x * w;
    x = -0.00417768164 + x * w; x = 0.246640727 + x * w; x = 1.50140941 + x * w;
  } else {
    w = sqrt(w) - 3.0;
    x = -0.000200214257; x = 0.000100950558 + x * w; x = 0.00134934322 + x * w;
    x = -0.00367342844 + x * w; x = 0.00573950773 + x * w; x = -0.0076224613 + x * w;
    x = 0.00943887047 + x * w; x = 1.00167406 + x * w; x = 2.83297682 + x * w;
  }
  x *= y;
  for (int i = 0; i < 2; i++) x -= (erf(x) - y) / (2.0 / sqrt(M_PI) * exp(-x * x));
  return x;
}

static inline double th_digamma(double x) {
  if (x == 0) return copysign(INFINITY, -x);
  if (x < 0) {
    if (x == floor(x)) return NAN;
    /* reflection: psi(1-x) - psi(x) = pi cot(pi x) */
    return th_digamma(1 - x) - M_PI / tan(M_PI * x);
  }
  double r = 0;
  while (x < 6) { r -= 1 / x; x += 1; }
  double f = 1 / (x * x);
  return r + log(x) - 0.5 / x -
         f * (1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240 - f * (1.0 / 132)))));
}

/* round half to even, as torch.round */
static inline double th_round_even(double x) { return nearbyint(x); }

#endif
