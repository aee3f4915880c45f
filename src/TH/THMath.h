/* Scalar math PyTorch has and libm lacks. */
#ifndef TH_MATH_H
#define TH_MATH_H

#include <math.h>
#include "THScalarOps.h"   /* TH_HOSTDEV: THC's kernels call these helpers too */

#ifndef __CUDACC__
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
extern double cos(double);
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
#define TH_SIN(x) _Generic((x), float: sinf, default: sin)(x)

/* exp(a) for a <= 0: an entry minus its row's max (softmax, log_softmax, attention scores).
 * libmvec's vector exp leaves its fast path, ~10x slower, for a lane whose result is not a
 * normal number (a masked entry's -inf, a score far below the max). So the argument is held at
 * or above the lowest whose exp is still normal, and a result at that floor gives 0: values
 * under 1.7e-38 (float) or 3.4e-308 (double) become 0 where libm would give subnormals, which
 * a row sum of at least 1 cannot tell apart. Callers read the bound once per row with
 * TH_EXP_NONPOS_LO(T): it comes through a volatile because, as a constant, the compiler folds
 * exp(bound) to the floor's 0 and calls exp on the unclamped argument. */
static inline float th_exp_nonpos_lo_float(void) { static volatile float lo = -87.0f; return lo; }
static inline double th_exp_nonpos_lo_double(void) { static volatile double lo = -708.0; return lo; }
#define TH_EXP_NONPOS_LO(T) _Generic((T)0, float: th_exp_nonpos_lo_float, default: th_exp_nonpos_lo_double)()
static inline float th_exp_nonpos_float(float a, float lo) {
  float e = expf(a < lo ? lo : a);
  return e < 1.7e-38f ? 0 : e;
}
static inline double th_exp_nonpos_double(double a, double lo) {
  double e = exp(a < lo ? lo : a);
  return e < 3.4e-308 ? 0 : e;
}
#define TH_EXP_NONPOS(a, lo) _Generic((a), float: th_exp_nonpos_float, default: th_exp_nonpos_double)(a, lo)
#else
/* nvcc: C++ overloads pick the float or double function */
#define TH_ERF(x) erf(x)
#define TH_EXP(x) exp(x)
#define TH_LOG1P(x) log1p(x)
#define TH_POW(x, y) pow(x, y)
#define TH_TANH(x) tanh(x)
#define TH_SIN(x) sin(x)
#endif

static inline TH_HOSTDEV double th_erfinv(double y) {
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

static inline TH_HOSTDEV double th_digamma(double x) {
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
static inline TH_HOSTDEV double th_round_even(double x) { return nearbyint(x); }

/* Modified Bessel functions I0 and I1 by Cephes' Chebyshev expansions of
 * exp(-|x|) I(x) on [0, 8] and (8, inf), as PyTorch's calc_i0/calc_i1: the
 * float versions run in float with float coefficients, like torch's. */
#define TH_BESSEL_COEFFS(T)                                                             \
  static const T i0_A[30] = {                                                           \
    -4.41534164647933937950E-18, 3.33079451882223809783E-17, -2.43127984654795469359E-16, \
    1.71539128555513303061E-15, -1.16853328779934516808E-14, 7.67618549860493561688E-14, \
    -4.85644678311192946090E-13, 2.95505266312963983461E-12, -1.72682629144155570723E-11, \
    9.67580903537323691224E-11, -5.18979560163526290666E-10, 2.65982372468238665035E-9, \
    -1.30002500998624804212E-8, 6.04699502254191894932E-8, -2.67079385394061173391E-7, \
    1.11738753912010371815E-6, -4.41673835845875056359E-6, 1.64484480707288970893E-5, \
    -5.75419501008210370398E-5, 1.88502885095841655729E-4, -5.76375574538582365885E-4, \
    1.63947561694133579842E-3, -4.32430999505057594430E-3, 1.05464603945949983183E-2, \
    -2.37374148058994688156E-2, 4.93052842396707084878E-2, -9.49010970480476444210E-2, \
    1.71620901522208775349E-1, -3.04682672343198398683E-1, 6.76795274409476084995E-1 }; \
  static const T i0_B[30] = { 0, 0, 0, 0, 0,                                            \
    -7.23318048787475395456E-18, -4.83050448594418207126E-18, 4.46562142029675999901E-17, \
    3.46122286769746109310E-17, -2.82762398051658348494E-16, -3.42548561967721913462E-16, \
    1.77256013305652638360E-15, 3.81168066935262242075E-15, -9.55484669882830764870E-15, \
    -4.15056934728722208663E-14, 1.54008621752140982691E-14, 3.85277838274214270114E-13, \
    7.18012445138366623367E-13, -1.79417853150680611778E-12, -1.32158118404477131188E-11, \
    -3.14991652796324136454E-11, 1.18891471078464383424E-11, 4.94060238822496958910E-10, \
    3.39623202570838634515E-9, 2.26666899049817806459E-8, 2.04891858946906374183E-7, \
    2.89137052083475648297E-6, 6.88975834691682398426E-5, 3.36911647825569408990E-3, \
    8.04490411014108831608E-1 };                                                        \
  static const T i1_A[29] = {                                                           \
    2.77791411276104639959E-18, -2.11142121435816608115E-17, 1.55363195773620046921E-16, \
    -1.10559694773538630805E-15, 7.60068429473540693410E-15, -5.04218550472791168711E-14, \
    3.22379336594557470981E-13, -1.98397439776494371520E-12, 1.17361862988909016308E-11, \
    -6.66348972350202774223E-11, 3.62559028155211703701E-10, -1.88724975172282928790E-9, \
    9.38153738649577178388E-9, -4.44505912879632808065E-8, 2.00329475355213526229E-7, \
    -8.56872026469545474066E-7, 3.47025130813767847674E-6, -1.32731636560394358279E-5, \
    4.78156510755005422638E-5, -1.61760815825896745588E-4, 5.12285956168575772895E-4, \
    -1.51357245063125314899E-3, 4.15642294431288815669E-3, -1.05640848946261981558E-2, \
    2.47264490306265168283E-2, -5.29459812080949914269E-2, 1.02643658689847095384E-1, \
    -1.76416518357834055153E-1, 2.52587186443633654823E-1 };                             \
  static const T i1_B[29] = { 0, 0, 0, 0,                                               \
    7.51729631084210481353E-18, 4.41434832307170791151E-18, -4.65030536848935832153E-17, \
    -3.20952592199342395980E-17, 2.96262899764595013876E-16, 3.30820231092092828324E-16, \
    -1.88035477551078244854E-15, -3.81440307243700780478E-15, 1.04202769841288027642E-14, \
    4.27244001671195135429E-14, -2.10154184277266431302E-14, -4.08355111109219731823E-13, \
    -7.19855177624590851209E-13, 2.03562854414708950722E-12, 1.41258074366137813316E-11, \
    3.25260358301548823856E-11, -1.89749581235054123450E-11, -5.58974346219658380687E-10, \
    -3.83538038596423702205E-9, -2.63146884688951950684E-8, -2.51223623787020892529E-7, \
    -3.88256480887769039346E-6, -1.10588938762623716291E-4, -9.76109749136146840777E-3, \
    7.78576235018280120474E-1 };

#ifdef __CUDACC__
#define TH_UNROLL32 _Pragma("unroll")
#else
#define TH_UNROLL32 _Pragma("GCC unroll 32")
#endif
/* The B tables carry leading zeros up to the A tables' lengths (a zero
 * leading coefficient leaves Clenshaw's sum unchanged), so both ranges run
 * one branch-free recurrence with per-element coefficients and the callers'
 * `omp simd` loops vectorize. The *e variants are exp(-|x|) I(x), computed
 * without the exponential (so they stay finite where I(x) overflows).
 * I1_SKIP drops I1's leading coefficients that are below the type's
 * precision: float keeps the last 17 terms, as Cephes' i1f and PyTorch do. */
#define TH_BESSEL_FUNCS(T, SUF, EXP, SQRT, I1_SKIP)                                     \
  static inline TH_HOSTDEV T th_chbevl##SUF(T t, int small, const T *A, const T *B, int n) {       \
    T b0 = 0, b1 = 0, b2 = 0;                                                           \
    TH_UNROLL32   /* unrolled, the element loop around it vectorizes */   \
    for (int i = 0; i < n; i++) { b2 = b1; b1 = b0; b0 = t * b1 - b2 + (small ? A[i] : B[i]); } \
    return (T)0.5 * (b0 - b2);                                                          \
  }                                                                                     \
  static inline TH_HOSTDEV T th_i0_core##SUF(T x_in, int scaled) {                                \
    TH_BESSEL_COEFFS(T)                                                                 \
    (void)i1_A; (void)i1_B;                                                             \
    const T x = x_in < 0 ? -x_in : x_in;                                                \
    const int small = x <= (T)8;                                                        \
    const T c = th_chbevl##SUF(small ? x / (T)2 - (T)2 : (T)32 / x - (T)2, small, i0_A, i0_B, 30); \
    const T e = scaled ? (T)1 : EXP(x);                                                 \
    return small ? e * c : e * c / SQRT(x);                                             \
  }                                                                                     \
  static inline TH_HOSTDEV T th_i0##SUF(T x) { return th_i0_core##SUF(x, 0); }                     \
  static inline TH_HOSTDEV T th_i0e##SUF(T x) { return th_i0_core##SUF(x, 1); }                    \
  static inline TH_HOSTDEV T th_i1_core##SUF(T x_in, int scaled) {                                 \
    TH_BESSEL_COEFFS(T)                                                                 \
    (void)i0_A; (void)i0_B;                                                             \
    const T x = x_in < 0 ? -x_in : x_in;                                                \
    const int small = x <= (T)8;                                                        \
    const T c = th_chbevl##SUF(small ? x / (T)2 - (T)2 : (T)32 / x - (T)2, small, i1_A + I1_SKIP, i1_B + I1_SKIP, \
                               29 - I1_SKIP);                                           \
    const T e = scaled ? (T)1 : EXP(x);                                                 \
    const T r = small ? e * x * c : e * c / SQRT(x);                                    \
    return x_in < 0 ? -r : r;                                                           \
  }                                                                                     \
  static inline TH_HOSTDEV T th_i1##SUF(T x) { return th_i1_core##SUF(x, 0); }                     \
  static inline TH_HOSTDEV T th_i1e##SUF(T x) { return th_i1_core##SUF(x, 1); }
TH_BESSEL_FUNCS(float, f, expf, sqrtf, 12)
TH_BESSEL_FUNCS(double, , exp, sqrt, 0)
#ifndef __CUDACC__
#define TH_I0(x) _Generic((x), float: th_i0f, default: th_i0)(x)
#define TH_I0E(x) _Generic((x), float: th_i0ef, default: th_i0e)(x)
#define TH_I1(x) _Generic((x), float: th_i1f, default: th_i1)(x)
#define TH_I1E(x) _Generic((x), float: th_i1ef, default: th_i1e)(x)
#else
static inline __device__ float th_i0_any(float x) { return th_i0f(x); }
static inline __device__ double th_i0_any(double x) { return th_i0(x); }
static inline __device__ float th_i1_any(float x) { return th_i1f(x); }
static inline __device__ double th_i1_any(double x) { return th_i1(x); }
static inline __device__ float th_i1e_any(float x) { return th_i1ef(x); }
static inline __device__ float th_i0e_any(float x) { return th_i0ef(x); }
static inline __device__ double th_i0e_any(double x) { return th_i0e(x); }
static inline __device__ double th_i1e_any(double x) { return th_i1e(x); }
#define TH_I0(x) th_i0_any(x)
#define TH_I1(x) th_i1_any(x)
#define TH_I1E(x) th_i1e_any(x)
#define TH_I0E(x) th_i0e_any(x)
#endif

#endif
