/* AVX2+FMA float32 transcendentals (see THVecMath.h).
 *
 * Each block of 8 floats is widened to two vectors of 4 doubles and the function is evaluated
 * in double: Cody-Waite range reduction with FMA, then polynomials (Taylor series where they
 * converge fast enough on the reduced range, Chebyshev fits for erf/erfc) whose error is about
 * 1e-12 relative. Rounding that to float gives the correctly rounded float, or its neighbour
 * when the exact value lies within ~1e-12 of halfway: at most 1 ulp from double libm rounded to
 * float. The arithmetic is twice libm-free float SIMD's, but needs no per-op error analysis in
 * float and stays exact through cancellations float would suffer (log1p, tanh near 0).
 *
 * A block where any lane is outside the op's fast domain (NaN, +-inf, |x| > 2^24 for sin/cos/tan
 * where the 3-part pi/2 reduction would lose bits, x <= 0 for log, |x| > 1 for asin) is
 * computed lane by lane with double libm, so special values get libm's answers.
 *
 * The vector code is compiled for avx2/fma/f16c by a target pragma and used only when the cpu
 * has them (__builtin_cpu_supports), so the library still runs on older x86 cpus. */
#include "THVecMath.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* the scalar answer of a lane outside the fast domain, and of every element on a cpu without
 * AVX2: double libm, as the generic kernels compute float32 */
static double scalar_op(THVecOp op, double x) {
  switch (op) {
  case TH_VEC_SIN: return sin(x);
  case TH_VEC_COS: return cos(x);
  case TH_VEC_TAN: return tan(x);
  case TH_VEC_EXP: return exp(x);
  case TH_VEC_EXPM1: return expm1(x);
  case TH_VEC_LOG: return log(x);
  case TH_VEC_LOG1P: return log1p(x);
  case TH_VEC_LOG2: return log2(x);
  case TH_VEC_TANH: return tanh(x);
  case TH_VEC_SIGMOID: return 1 / (1 + exp(-x));
  case TH_VEC_ERF: return erf(x);
  case TH_VEC_ERFC: return erfc(x);
  case TH_VEC_ATAN: return atan(x);
  case TH_VEC_ASIN: return asin(x);
  case TH_VEC_SQRT: return sqrt(x);
  case TH_VEC_RSQRT: return 1 / sqrt(x);
  case TH_VEC_GELU: {   /* torch's float formula, see apply8 */
    const float xf = (float)x, e = (float)erf(xf * 0.70710678118654752440f);
    return xf * 0.5f * (1.0f + e);
  }
  case TH_VEC_SILU: return x / (1 + exp(-x));
  case TH_VEC_MISH: return x * tanh(log1p(exp(x)));
  default: return NAN;
  }
}

#if defined(__x86_64__) && !defined(__CUDACC__)
#include <immintrin.h>

static int all_ops;   /* CTHTORCH_VEC_MATH=all: every op here, for the tests of those not dispatched */
static int use_vec(void) {
  static int chosen = -1;   /* a benign race: every thread picks the same */
  if (chosen < 0) {
    const char *force = getenv("CTHTORCH_VEC_MATH");
    all_ops = force && strcmp(force, "all") == 0;
    __builtin_cpu_init();
    chosen = !(force && strcmp(force, "scalar") == 0) && __builtin_cpu_supports("avx2") &&
             __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
  }
  return chosen;
}

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
#define INLINE static inline __attribute__((always_inline))
typedef __m256d D;
typedef __m256 F;
#define K(c) _mm256_set1_pd(c)
#define FMA(a, b, c) _mm256_fmadd_pd(a, b, c)
#define MUL(a, b) _mm256_mul_pd(a, b)
#define ADD(a, b) _mm256_add_pd(a, b)
#define SUB(a, b) _mm256_sub_pd(a, b)
#define DIV(a, b) _mm256_div_pd(a, b)
#define LT(a, b) _mm256_cmp_pd(a, b, _CMP_LT_OQ)
#define GT(a, b) _mm256_cmp_pd(a, b, _CMP_GT_OQ)
#define BLEND(a, b, m) _mm256_blendv_pd(a, b, m)   /* m ? b : a */
#define SIGNBIT K(-0.0)

/* Horner over c[0] + c[1] x + ... + c[n-1] x^(n-1) */
INLINE D poly(D x, const double *c, int n) {
  D r = K(c[n - 1]);
#pragma GCC unroll 32
  for (int i = n - 2; i >= 0; i--) r = FMA(r, x, K(c[i]));
  return r;
}
INLINE D vabs(D x) { return _mm256_andnot_pd(SIGNBIT, x); }
/* |a| with x's sign */
INLINE D with_sign(D a, D x) { return _mm256_or_pd(a, _mm256_and_pd(x, SIGNBIT)); }
/* an int64 lane (|e| < 2^51) as a double: through the 1.5*2^52 bias */
INLINE D i64_to_d(__m256i e) {
  const D magic = K(6755399441055744.0);
  return SUB(_mm256_castsi256_pd(_mm256_add_epi64(e, _mm256_castpd_si256(magic))), magic);
}
INLINE __m256i d_to_i64(D integral) { return _mm256_cvtepi32_epi64(_mm256_cvtpd_epi32(integral)); }
INLINE D round_even(D x) { return _mm256_round_pd(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }

static const double LN2_HI = 0.6931471805599453, LN2_LO = 2.3190468138462996e-17;
/* 1/k!, k = 0..13 */
static const double INV_FACT[14] = { 1.0, 1.0, 1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040,
                                     1.0 / 40320, 1.0 / 362880, 1.0 / 3628800, 1.0 / 39916800,
                                     1.0 / 479001600, 1.0 / 6227020800.0 };

/* exp: x = n ln2 + r, |r| <= ln2/2, Taylor to r^12 (next term < 3e-17), times 2^n. The clamp
 * to +-700 keeps 2^n a normal double; a float result is 0 or inf long before. */
INLINE D v_exp(D x) {
  x = _mm256_max_pd(_mm256_min_pd(x, K(700.0)), K(-700.0));
  D n = round_even(MUL(x, K(M_LOG2E)));
  D r = FMA(n, K(-LN2_HI), x);
  r = FMA(n, K(-LN2_LO), r);
  D p = poly(r, INV_FACT, 13);
  __m256i e = _mm256_slli_epi64(_mm256_add_epi64(d_to_i64(n), _mm256_set1_epi64x(1023)), 52);
  return MUL(p, _mm256_castsi256_pd(e));
}
/* expm1: exp(x) - 1 has no cancellation worth a float ulp once |x| >= 0.35; below, the
 * Taylor series x (1 + x/2 + ... + x^12/13!) (next term < 1e-17 relative) */
INLINE D v_expm1(D x) {
  D small = MUL(x, poly(x, INV_FACT + 1, 13));
  D big = SUB(v_exp(x), K(1.0));
  return BLEND(big, small, LT(vabs(x), K(0.35)));
}
/* log of a positive normal double: x = 2^e m, m in [sqrt(1/2), sqrt(2)), log m = 2 atanh(s)
 * with s = (m-1)/(m+1), |s| < 0.172, series to s^21 (next term < 1e-17). Gives e and log m
 * apart, so log2 adds e exactly. */
INLINE D v_log_parts(D x, D *e_out) {
  __m256i b = _mm256_castpd_si256(x);
  __m256i e = _mm256_sub_epi64(_mm256_srli_epi64(b, 52), _mm256_set1_epi64x(1023));
  D m = _mm256_castsi256_pd(_mm256_or_si256(_mm256_and_si256(b, _mm256_set1_epi64x(0x000fffffffffffffLL)),
                                            _mm256_set1_epi64x(0x3ff0000000000000LL)));
  D big = GT(m, K(M_SQRT2));
  m = BLEND(m, MUL(m, K(0.5)), big);
  e = _mm256_sub_epi64(e, _mm256_castpd_si256(big));   /* big lanes are all ones: -1 */
  D f = SUB(m, K(1.0));
  D s = DIV(f, ADD(f, K(2.0)));
  static const double C[11] = { 2.0, 2.0 / 3, 2.0 / 5, 2.0 / 7, 2.0 / 9, 2.0 / 11, 2.0 / 13, 2.0 / 15,
                                2.0 / 17, 2.0 / 19, 2.0 / 21 };
  *e_out = i64_to_d(e);
  return MUL(s, poly(MUL(s, s), C, 11));
}
INLINE D v_log(D x) {
  D e, lm = v_log_parts(x, &e);
  return FMA(e, K(LN2_HI), FMA(e, K(LN2_LO), lm));
}
INLINE D v_log2(D x) {
  D e, lm = v_log_parts(x, &e);
  return FMA(lm, K(M_LOG2E), e);
}
/* log1p of a float x > -1: 1 + x is exact in double when |x| >= 2^-29; below, log1p(x) is x
 * to well under half a float ulp */
INLINE D v_log1p(D x) { return BLEND(v_log(ADD(x, K(1.0))), x, LT(vabs(x), K(0x1p-29))); }
/* tanh = e / (e + 2) with e = expm1(2|x|): no cancellation near 0; |x| held at 20, where tanh
 * is 1 in double */
INLINE D v_tanh(D x) {
  D e = v_expm1(MUL(K(2.0), _mm256_min_pd(vabs(x), K(20.0))));
  return with_sign(DIV(e, ADD(e, K(2.0))), x);
}

/* sin/cos/tan: q = round(x 2/pi), r = x - q pi/2 by a 3-part pi/2 with FMA (exact enough for
 * |x| <= 2^24, q < 2^24), r in [-pi/4, pi/4]; Taylor series to r^15 / r^16 there */
static const double PIO2_1 = 1.5707963267948966, PIO2_2 = 6.123233995736766e-17, PIO2_3 = -1.4973849048591698e-33;
INLINE D reduce_pio2(D x, __m256i *q) {
  D qd = ADD(round_even(MUL(x, K(M_2_PI))), K(0.0));   /* +0: a -0 q would turn -0 into +0 */
  D r = FMA(qd, K(-PIO2_1), x);
  r = FMA(qd, K(-PIO2_2), r);
  r = FMA(qd, K(-PIO2_3), r);
  r = BLEND(r, x, _mm256_cmp_pd(x, K(0.0), _CMP_EQ_OQ));   /* -0: the last step's +0 * -PIO2_3 made +0 */
  *q = d_to_i64(qd);
  return r;
}
INLINE D sin_poly(D r, D r2) {
  static const double S[7] = { -1.0 / 6, 1.0 / 120, -1.0 / 5040, 1.0 / 362880, -1.0 / 39916800,
                               1.0 / 6227020800.0, -1.0 / 1307674368000.0 };
  return FMA(MUL(r, r2), poly(r2, S, 7), r);
}
INLINE D cos_poly(D r2) {
  static const double C[8] = { -1.0 / 2, 1.0 / 24, -1.0 / 720, 1.0 / 40320, -1.0 / 3628800, 1.0 / 479001600,
                               -1.0 / 87178291200.0, 1.0 / 20922789888000.0 };
  return FMA(r2, poly(r2, C, 8), K(1.0));
}
INLINE D mask_of_bit(__m256i q, int64_t bit) {
  __m256i b = _mm256_set1_epi64x(bit);
  return _mm256_castsi256_pd(_mm256_cmpeq_epi64(_mm256_and_si256(q, b), b));
}
/* sin(r + q pi/2): quadrants 0..3 give s, c, -s, -c; cos is sin's quadrant q + 1 */
INLINE D v_sincos(D x, int cosine) {
  __m256i q;
  D r = reduce_pio2(x, &q), r2 = MUL(r, r);
  if (cosine) q = _mm256_add_epi64(q, _mm256_set1_epi64x(1));
  D v = BLEND(sin_poly(r, r2), cos_poly(r2), mask_of_bit(q, 1));
  v = _mm256_xor_pd(v, _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_and_si256(q, _mm256_set1_epi64x(2)), 62)));
  /* sin(+-0) = +-0: sin_poly's r + r^3 p sums -0 and +0 to +0 */
  return cosine ? v : BLEND(v, x, _mm256_cmp_pd(x, K(0.0), _CMP_EQ_OQ));
}
INLINE D v_tan(D x) {
  __m256i q;
  D r = reduce_pio2(x, &q), r2 = MUL(r, r);
  D s = sin_poly(r, r2), c = cos_poly(r2), odd = mask_of_bit(q, 1);
  D t = DIV(BLEND(s, _mm256_xor_pd(c, SIGNBIT), odd), BLEND(c, s, odd));
  return BLEND(t, x, _mm256_cmp_pd(x, K(0.0), _CMP_EQ_OQ));   /* tan(+-0) = +-0, as sin above */
}

/* atan of |x|: 1/|x| above 1, then tan(pi/12) < t <= 1 shifted by pi/6 to
 * (t sqrt3 - 1) / (t + sqrt3), so |t| <= tan(pi/12) and the Taylor series to t^27 (next
 * term < 1e-17) converges */
static const double ATAN_SQRT3 = 1.7320508075688772, ATAN_TAN_PI_12 = 0.2679491924311227;
/* atan(t) + (shift ? pi/6 : 0) for the reduced |t| <= tan(pi/12) */
INLINE D atan_reduced(D t, D shift) {
  static const double C[14] = { 1.0, -1.0 / 3, 1.0 / 5, -1.0 / 7, 1.0 / 9, -1.0 / 11, 1.0 / 13, -1.0 / 15,
                                1.0 / 17, -1.0 / 19, 1.0 / 21, -1.0 / 23, 1.0 / 25, -1.0 / 27 };
  D v = MUL(t, poly(MUL(t, t), C, 14));
  return ADD(v, _mm256_and_pd(shift, K(0.5235987755982989)));
}
INLINE D v_atan_abs(D a) {
  D inv = GT(a, K(1.0));
  D t = BLEND(a, DIV(K(1.0), a), inv);
  D shift = GT(t, K(ATAN_TAN_PI_12));
  t = BLEND(t, DIV(FMA(t, K(ATAN_SQRT3), K(-1.0)), ADD(t, K(ATAN_SQRT3))), shift);
  return BLEND(atan_reduced(t, shift), SUB(K(M_PI_2), atan_reduced(t, shift)), inv);
}
INLINE D v_atan(D x) { return with_sign(v_atan_abs(vabs(x)), x); }
/* asin x = atan(x / sqrt((1-x)(1+x))) for |x| <= 1: the product is exact for a float x */
INLINE D v_asin(D x) {
  D a = vabs(x);
  D t = DIV(a, _mm256_sqrt_pd(MUL(SUB(K(1.0), a), ADD(K(1.0), a))));
  return with_sign(v_atan_abs(t), x);
}

/* erf on [0, 1]: a P(a^2), P a degree-10 Chebyshev fit of erf(a)/a (relative error 2e-15);
 * erfc on [1, 11]: exp(-a^2) t G(t), t = 1/a, G a degree-20 fit of erfc(a) exp(a^2) a on t in
 * [0, 1] (2e-12); erfc is 0 in float (and in gelu's product) past 11 */
static const double ERF_P[11] = { 1.1283791670955106, -0.37612638903154932, 0.1128379167008296,
                                  -0.026866170532293156, 0.0052239768369110552, -0.00085482938207416157,
                                  0.00012054441948417993, -1.4910024509101111e-05, 1.6283027600200681e-06,
                                  -1.5061099971221256e-07, 9.175644002177498e-09 };
static const double ERFC_G[21] = {
  0.56418958354664406, 9.8797955233598245e-10, -0.28209494231937265, 9.3738171524637703e-06,
  0.42282546316377806, 0.0066814143785239727, -1.1532807388359343, 0.97001134789589083,
  -3.5330094535028871, 40.230310460395899, -183.59647821325962, 507.95987401880518,
  -987.58647010678476, 1430.1140789219812, -1576.7212574248695, 1326.2904090088409,
  -840.00891859405101, 388.64494359794031, -124.12368031025734, 24.475681646270296,
  -2.2462414779882378 };
INLINE D erf_small(D a) { return MUL(a, poly(MUL(a, a), ERF_P, 11)); }
INLINE D erfc_big(D a) {
  D c = _mm256_min_pd(_mm256_max_pd(a, K(1.0)), K(11.0));
  D t = DIV(K(1.0), c);
  D v = MUL(MUL(v_exp(MUL(c, _mm256_xor_pd(c, SIGNBIT))), t), poly(t, ERFC_G, 21));
  return _mm256_andnot_pd(GT(a, K(11.0)), v);
}
INLINE D v_erf(D x) {
  D a = vabs(x);
  return with_sign(BLEND(SUB(K(1.0), erfc_big(a)), erf_small(a), LT(a, K(1.0))), x);
}
INLINE D v_erfc(D x) {
  D a = vabs(x), small = LT(a, K(1.0)), neg = LT(x, K(0.0));
  D e = erf_small(a), c = erfc_big(a);
  D pos = BLEND(c, SUB(K(1.0), e), small);                            /* erfc(|x|) */
  D negv = BLEND(SUB(K(2.0), c), ADD(K(1.0), e), small);              /* erfc(-|x|) */
  return BLEND(pos, negv, neg);
}

INLINE D apply_d(THVecOp op, D x) {
  switch (op) {
  case TH_VEC_SIN: return v_sincos(x, 0);
  case TH_VEC_COS: return v_sincos(x, 1);
  case TH_VEC_TAN: return v_tan(x);
  case TH_VEC_EXP: return v_exp(x);
  case TH_VEC_EXPM1: return v_expm1(x);
  case TH_VEC_LOG: return v_log(x);
  case TH_VEC_LOG1P: return v_log1p(x);
  case TH_VEC_LOG2: return v_log2(x);
  case TH_VEC_TANH: return v_tanh(x);
  case TH_VEC_SIGMOID: return DIV(K(1.0), ADD(K(1.0), v_exp(_mm256_xor_pd(x, SIGNBIT))));
  case TH_VEC_ERF: return v_erf(x);
  case TH_VEC_ERFC: return v_erfc(x);
  case TH_VEC_ATAN: return v_atan(x);
  case TH_VEC_ASIN: return v_asin(x);
  case TH_VEC_MISH: {
    /* x tanh(log(1 + t)) with t = e^x is x n / (n + 2), n = t (t + 2): one exp instead of
     * torch's exp, log1p and tanh. Past x = 30 the ratio is 1 in double (and t t would overflow) */
    D t = v_exp(_mm256_min_pd(x, K(30.0)));
    D n = MUL(t, ADD(t, K(2.0)));
    return MUL(x, DIV(n, ADD(n, K(2.0))));
  }
  default: return x;
  }
}

/* silu in float, 8 lanes, as torch evaluates it, but from t = e^-|x|: x / (1 + t) for x >= 0,
 * x t / (1 + t) for x < 0. e^r = h + l exactly (r = -|x| - n ln2 by a 2-part reduction, Taylor
 * to r^7 by Estrin, 0.1 ulp), 1 + t = d_hi + d_lo, x t = its rounding + the FMA remainder, and
 * the quotient takes one correction step from its exact FMA residual: max error 0.94 ulp over
 * tests/test_unary_vector_math.py's inputs, 1% of results past half an ulp, against torch's
 * x / (1 + expf(-x)) (2 ulp, 11%). Without the x t remainder it is 2.3 ulp.
 * Its domain starts at -87, where e^x is still a normal float; below, double libm (x e^x is
 * normal down to -91, subnormal to -108, where torch's float formula gives 0). Double evaluation
 * would round correctly nearly always but cost 2x torch's time; this is 1.0x. */
INLINE F silu8(F x) {
  const F one = _mm256_set1_ps(1.0f), sign = _mm256_set1_ps(-0.0f);
  const F na = _mm256_max_ps(_mm256_or_ps(x, sign), _mm256_set1_ps(-87.0f));   /* -|x|; e^-87 no longer moves 1 + t */
  const F n = _mm256_round_ps(_mm256_mul_ps(na, _mm256_set1_ps(1.44269504f)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  /* ln2 = L1 + L2, L1 with 16 significant bits: n L1 is exact and so (Sterbenz) is -|x| - n L1;
   * r's own rounding (0.25 ulp of e^r) did not move the error bound above */
  const F rh = _mm256_fmadd_ps(n, _mm256_set1_ps(-0.693145751953125f), na);
  const F t2 = _mm256_mul_ps(n, _mm256_set1_ps(1.4286068202862268e-06f));
  const F r = _mm256_sub_ps(rh, t2);
  const F r2 = _mm256_mul_ps(r, r);
  const F c01 = _mm256_fmadd_ps(r, _mm256_set1_ps(1.0f / 6), _mm256_set1_ps(0.5f));
  const F c23 = _mm256_fmadd_ps(r, _mm256_set1_ps(1.0f / 120), _mm256_set1_ps(1.0f / 24));
  const F c45 = _mm256_fmadd_ps(r, _mm256_set1_ps(1.0f / 5040), _mm256_set1_ps(1.0f / 720));
  const F c = _mm256_fmadd_ps(r2, _mm256_fmadd_ps(r2, c45, c23), c01);
  const F pm = _mm256_fmadd_ps(r2, c, r);         /* e^(r + rl) - 1 */
  const F h = _mm256_add_ps(one, pm), l = _mm256_add_ps(_mm256_sub_ps(one, h), pm);
  const F s = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23));
  const F th = _mm256_mul_ps(s, h), tl = _mm256_mul_ps(s, l);        /* t = e^-|x| */
  const F dh = _mm256_add_ps(one, th), dl = _mm256_add_ps(_mm256_add_ps(_mm256_sub_ps(one, dh), th), tl);
  const F neg = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ);
  const F xh = _mm256_mul_ps(x, th);
  const F nh = _mm256_blendv_ps(x, xh, neg);
  const F nl = _mm256_and_ps(neg, _mm256_fmadd_ps(x, tl, _mm256_fmsub_ps(x, th, xh)));
  const F q0 = _mm256_div_ps(nh, dh);
  F res = _mm256_add_ps(_mm256_fnmadd_ps(q0, dh, nh), nl);   /* the first term exact */
  res = _mm256_fmadd_ps(_mm256_fnmadd_ps(q0, dl, res), _mm256_rcp_ps(dh), q0);
  return _mm256_or_ps(res, _mm256_and_ps(x, sign));   /* silu(-0) = -0 */
}

INLINE F apply8(THVecOp op, F x) {
  /* sqrt and 1/sqrt in float, as torch: IEEE sqrt is correctly rounded and needs no domain */
  if (op == TH_VEC_SQRT) return _mm256_sqrt_ps(x);
  if (op == TH_VEC_RSQRT) return _mm256_div_ps(_mm256_set1_ps(1.0f), _mm256_sqrt_ps(x));
  if (op == TH_VEC_SILU) return silu8(x);
  /* gelu as torch (and the scalar kernel) compute it in float, x 0.5 (1 + erf(x sqrt(1/2))),
   * with the vector erf: 1 + erf cancels for x < -3, where torch's answer is that float sum's */
  if (op == TH_VEC_GELU) {
    F e = apply8(TH_VEC_ERF, _mm256_mul_ps(x, _mm256_set1_ps(0.70710678118654752440f)));
    return _mm256_mul_ps(_mm256_mul_ps(x, _mm256_set1_ps(0.5f)), _mm256_add_ps(_mm256_set1_ps(1.0f), e));
  }
  D lo = apply_d(op, _mm256_cvtps_pd(_mm256_castps256_ps128(x)));
  D hi = apply_d(op, _mm256_cvtps_pd(_mm256_extractf128_ps(x, 1)));
  return _mm256_set_m128(_mm256_cvtpd_ps(hi), _mm256_cvtpd_ps(lo));
}

/* the fast domain [lo, hi] of each op (NaN is outside every one) */
INLINE void domain(THVecOp op, float *lo, float *hi) {
  switch (op) {
  case TH_VEC_SIN: case TH_VEC_COS: case TH_VEC_TAN: *lo = -0x1p24f; *hi = 0x1p24f; return;
  case TH_VEC_LOG: case TH_VEC_LOG2: *lo = 0x1p-149f; *hi = 3.4028235e38f; return;  /* > 0 */
  case TH_VEC_LOG1P: *lo = -0.99999994f; *hi = 3.4028235e38f; return;              /* > -1 */
  case TH_VEC_ASIN: *lo = -1.0f; *hi = 1.0f; return;
  case TH_VEC_SILU: *lo = -87.0f; *hi = 3.4028235e38f; return;
  case TH_VEC_MISH: *lo = -87.0f; *hi = 3.4028235e38f; return;   /* below, x e^x leaves the normals */
  default: *lo = -3.4028235e38f; *hi = 3.4028235e38f; return;                       /* finite */
  }
}

INLINE void block8(THVecOp op, float *o, const float *a, F lo, F hi) {
  F x = _mm256_loadu_ps(a);
  if (op != TH_VEC_SQRT && op != TH_VEC_RSQRT) {
    F ok = _mm256_and_ps(_mm256_cmp_ps(x, lo, _CMP_GE_OQ), _mm256_cmp_ps(x, hi, _CMP_LE_OQ));
    if (_mm256_movemask_ps(ok) != 0xff) {
      float t[8];
      _mm256_storeu_ps(t, x);
      for (int k = 0; k < 8; k++) o[k] = (float)scalar_op(op, t[k]);
      return;
    }
  }
  _mm256_storeu_ps(o, apply8(op, x));
}

INLINE void run(THVecOp op, float *o, const float *a, int64_t n) {
  float l, h;
  domain(op, &l, &h);
  const F lo = _mm256_set1_ps(l), hi = _mm256_set1_ps(h);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) block8(op, o + i, a + i, lo, hi);
  if (i < n) {   /* the tail through a zero-padded block (0 is in every fast domain but log's) */
    float t[8] = { 0 }, r[8];
    memcpy(t, a + i, (size_t)(n - i) * sizeof(float));
    block8(op, r, t, lo, hi);
    memcpy(o + i, r, (size_t)(n - i) * sizeof(float));
  }
}

typedef void (*kernel_fn)(float *, const float *, int64_t);
#define KERNEL(OP) static void kernel_##OP(float *o, const float *a, int64_t n) { run(OP, o, a, n); }
KERNEL(TH_VEC_SIN) KERNEL(TH_VEC_COS) KERNEL(TH_VEC_TAN) KERNEL(TH_VEC_EXP) KERNEL(TH_VEC_EXPM1)
KERNEL(TH_VEC_LOG) KERNEL(TH_VEC_LOG1P) KERNEL(TH_VEC_LOG2) KERNEL(TH_VEC_TANH) KERNEL(TH_VEC_SIGMOID)
KERNEL(TH_VEC_ERF) KERNEL(TH_VEC_ERFC) KERNEL(TH_VEC_ATAN) KERNEL(TH_VEC_ASIN) KERNEL(TH_VEC_SQRT)
KERNEL(TH_VEC_RSQRT) KERNEL(TH_VEC_GELU) KERNEL(TH_VEC_SILU) KERNEL(TH_VEC_MISH)
static const kernel_fn kernels[TH_VEC_NOPS] = {
#define ENTRY(OP) [OP] = kernel_##OP
  ENTRY(TH_VEC_SIN), ENTRY(TH_VEC_COS), ENTRY(TH_VEC_TAN), ENTRY(TH_VEC_EXP), ENTRY(TH_VEC_EXPM1),
  ENTRY(TH_VEC_LOG), ENTRY(TH_VEC_LOG1P), ENTRY(TH_VEC_LOG2), ENTRY(TH_VEC_TANH), ENTRY(TH_VEC_SIGMOID),
  ENTRY(TH_VEC_ERF), ENTRY(TH_VEC_ERFC), ENTRY(TH_VEC_ATAN), ENTRY(TH_VEC_ASIN), ENTRY(TH_VEC_SQRT),
  ENTRY(TH_VEC_RSQRT), ENTRY(TH_VEC_GELU), ENTRY(TH_VEC_SILU), ENTRY(TH_VEC_MISH),
#undef ENTRY
};

/* The ops whose contiguous loops take these kernels. exp, sigmoid, erf and gelu keep their
 * `omp simd` loops over glibc's float vector libm (libmvec), and sqrt its plain loop: measured
 * beside torch (per-thread cpu time, 1M elements, one thread), those were as fast or faster than
 * the double-evaluated kernels here (exp 1.3 vs 1.5x torch, sigmoid 0.7 vs 2.3x, erf 1.1 vs
 * 2.5x, gelu 0.8 vs 4.8x). Their kernels stay for a float-evaluated version, and
 * CTHTORCH_VEC_MATH=all dispatches them (tests/test_unary_vector_math.py checks them so). */
static const bool dispatched[TH_VEC_NOPS] = {
  [TH_VEC_SIN] = true, [TH_VEC_COS] = true, [TH_VEC_TAN] = true, [TH_VEC_EXPM1] = true,
  [TH_VEC_LOG] = true, [TH_VEC_LOG1P] = true, [TH_VEC_LOG2] = true, [TH_VEC_TANH] = true,
  [TH_VEC_ERFC] = true, [TH_VEC_ATAN] = true, [TH_VEC_ASIN] = true, [TH_VEC_RSQRT] = true,
  /* silu's loop over float expf would be 0.6x torch, but x * sigmoid(x) in float is 0 below
   * x = -88, where silu is still a normal float (-89 e^-89 = -2e-37): silu8 is 1.0x, 1 ulp */
  [TH_VEC_SILU] = true,
  /* mish in double from one exp (apply_d): 1.15x torch as x tanh(softplus(x)) in libm */
  [TH_VEC_MISH] = true,
};

/* float16/bfloat16 blocks go through a float buffer, converted 8 at a time */
#define BLOCK 256
static void half_run(kernel_fn k, THHalf *o, const THHalf *a, int64_t n) {
  float buf[BLOCK];
  for (int64_t i0 = 0; i0 < n; i0 += BLOCK) {
    const int64_t m = n - i0 < BLOCK ? n - i0 : BLOCK;
    int64_t i = 0;
    for (; i + 8 <= m; i += 8) _mm256_storeu_ps(buf + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(a + i0 + i))));
    for (; i < m; i++) buf[i] = _cvtsh_ss(a[i0 + i].x);
    k(buf, buf, m);
    for (i = 0; i + 8 <= m; i += 8)
      _mm_storeu_si128((__m128i *)(o + i0 + i), _mm256_cvtps_ph(_mm256_loadu_ps(buf + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    for (; i < m; i++) o[i0 + i].x = _cvtss_sh(buf[i], _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }
}
/* float to bfloat16, rounding to nearest even; NaN becomes the quiet 0x7fc0 as th_float2bf */
INLINE __m128i f2bf8(F f) {
  __m256i u = _mm256_castps_si256(f);
  __m256i r = _mm256_add_epi32(u, _mm256_add_epi32(_mm256_set1_epi32(0x7fff),
                                                   _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1))));
  r = _mm256_srli_epi32(r, 16);
  r = _mm256_blendv_epi8(r, _mm256_set1_epi32(0x7fc0), _mm256_castps_si256(_mm256_cmp_ps(f, f, _CMP_UNORD_Q)));
  __m256i p = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0xd8);
  return _mm256_castsi256_si128(p);
}
static void bf16_run(kernel_fn k, THBFloat16 *o, const THBFloat16 *a, int64_t n) {
  float buf[BLOCK];
  for (int64_t i0 = 0; i0 < n; i0 += BLOCK) {
    const int64_t m = n - i0 < BLOCK ? n - i0 : BLOCK;
    int64_t i = 0;
    for (; i + 8 <= m; i += 8)
      _mm256_storeu_ps(buf + i, _mm256_castsi256_ps(_mm256_slli_epi32(
                                  _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(a + i0 + i))), 16)));
    for (; i < m; i++) buf[i] = th_bf2float(a[i0 + i]);
    k(buf, buf, m);
    for (i = 0; i + 8 <= m; i += 8) _mm_storeu_si128((__m128i *)(o + i0 + i), f2bf8(_mm256_loadu_ps(buf + i)));
    for (; i < m; i++) o[i0 + i] = th_float2bf(buf[i]);
  }
}
/* atan2(y, x) of floats in double: atan of the ratio min/max of |y|, |x| (<= 1, the quotient
 * good to 1e-16), then pi/2 - v when |y| > |x|, pi - v when x is negative (its sign bit, so x = -0
 * counts: atan2(1, -0) is pi/2 either way), y's sign last. A block with a non-finite lane or both
 * zero (atan2(+-0, -0) = +-pi) is computed lane by lane with double libm, as the scalar loop. */
INLINE D v_atan2(D y, D x) {
  D ay = vabs(y), ax = vabs(x), a = _mm256_min_pd(ay, ax), b = _mm256_max_pd(ay, ax);
  /* v_atan_abs's shift by pi/6 on the ratio r = a / b, (r sqrt3 - 1) / (r + sqrt3), taken as
   * (a sqrt3 - b) / (a + b sqrt3): one division */
  D shift = GT(a, MUL(b, K(ATAN_TAN_PI_12)));
  D t = DIV(BLEND(a, FMA(a, K(ATAN_SQRT3), _mm256_xor_pd(b, SIGNBIT)), shift), BLEND(b, FMA(b, K(ATAN_SQRT3), a), shift));
  D v = atan_reduced(t, shift);
  v = BLEND(v, SUB(K(M_PI_2), v), GT(ay, ax));
  v = BLEND(v, SUB(K(M_PI), v), _mm256_and_pd(x, SIGNBIT));   /* blendv reads the sign bit alone */
  return with_sign(v, y);
}
static void atan2_run(float *o, const float *y, int64_t incy, const float *x, int64_t incx, int64_t n) {
  const F fmax = _mm256_set1_ps(3.4028235e38f), fsign = _mm256_set1_ps(-0.0f), zero = _mm256_setzero_ps();
  float ty[8], tx[8];
  for (int64_t i = 0; i < n; i += 8) {
    const int m = n - i < 8 ? (int)(n - i) : 8;
    F vy, vx;
    if (m == 8) {   /* a broadcast side (inc 0) as one value in every lane */
      vy = incy ? _mm256_loadu_ps(y + i) : _mm256_set1_ps(*y);
      vx = incx ? _mm256_loadu_ps(x + i) : _mm256_set1_ps(*x);
    } else {
      for (int k = 0; k < 8; k++) {   /* the tail (and a broadcast side) padded with 1 */
        ty[k] = k < m ? y[(i + k) * incy] : 1.f;
        tx[k] = k < m ? x[(i + k) * incx] : 1.f;
      }
      vy = _mm256_loadu_ps(ty);
      vx = _mm256_loadu_ps(tx);
    }
    F ay = _mm256_andnot_ps(fsign, vy), ax = _mm256_andnot_ps(fsign, vx);
    F ok = _mm256_and_ps(_mm256_and_ps(_mm256_cmp_ps(ay, fmax, _CMP_LE_OQ), _mm256_cmp_ps(ax, fmax, _CMP_LE_OQ)),
                         _mm256_or_ps(_mm256_cmp_ps(ay, zero, _CMP_NEQ_OQ), _mm256_cmp_ps(ax, zero, _CMP_NEQ_OQ)));
    if (_mm256_movemask_ps(ok) != 0xff) {
      _mm256_storeu_ps(ty, vy);
      _mm256_storeu_ps(tx, vx);
      for (int k = 0; k < m; k++) o[i + k] = (float)atan2((double)ty[k], (double)tx[k]);
      continue;
    }
    D lo = v_atan2(_mm256_cvtps_pd(_mm256_castps256_ps128(vy)), _mm256_cvtps_pd(_mm256_castps256_ps128(vx)));
    D hi = v_atan2(_mm256_cvtps_pd(_mm256_extractf128_ps(vy, 1)), _mm256_cvtps_pd(_mm256_extractf128_ps(vx, 1)));
    F r = _mm256_set_m128(_mm256_cvtpd_ps(hi), _mm256_cvtpd_ps(lo));
    if (m == 8) {
      _mm256_storeu_ps(o + i, r);
    } else {
      float t[8];
      _mm256_storeu_ps(t, r);
      memcpy(o + i, t, (size_t)m * sizeof(float));
    }
  }
}
#pragma GCC pop_options

int th_vec_unary_float(THVecOp op, float *o, const float *a, int64_t n) {
  if (op < 0 || op >= TH_VEC_NOPS || !use_vec() || !(dispatched[op] || all_ops)) return 0;
  kernels[op](o, a, n);
  return 1;
}
int th_vec_unary_half(THVecOp op, THHalf *o, const THHalf *a, int64_t n) {
  if (op < 0 || op >= TH_VEC_NOPS || !use_vec() || !(dispatched[op] || all_ops)) return 0;
  half_run(kernels[op], o, a, n);
  return 1;
}
int th_vec_unary_bf16(THVecOp op, THBFloat16 *o, const THBFloat16 *a, int64_t n) {
  if (op < 0 || op >= TH_VEC_NOPS || !use_vec() || !(dispatched[op] || all_ops)) return 0;
  bf16_run(kernels[op], o, a, n);
  return 1;
}
const char *th_vec_math_kernel(void) { return use_vec() ? "avx2" : "scalar"; }
int th_vec_atan2_float(float *o, const float *y, int64_t incy, const float *x, int64_t incx, int64_t n) {
  if (!use_vec()) return 0;
  atan2_run(o, y, incy, x, incx, n);
  return 1;
}

#else   /* not x86-64: the callers keep their scalar loops */
int th_vec_unary_float(THVecOp op, float *o, const float *a, int64_t n) { (void)op; (void)o; (void)a; (void)n; return 0; }
int th_vec_unary_half(THVecOp op, THHalf *o, const THHalf *a, int64_t n) { (void)op; (void)o; (void)a; (void)n; return 0; }
int th_vec_unary_bf16(THVecOp op, THBFloat16 *o, const THBFloat16 *a, int64_t n) { (void)op; (void)o; (void)a; (void)n; return 0; }
const char *th_vec_math_kernel(void) { (void)scalar_op; return "scalar"; }
int th_vec_atan2_float(float *o, const float *y, int64_t incy, const float *x, int64_t incx, int64_t n) {
  (void)o; (void)y; (void)incy; (void)x; (void)incx; (void)n;
  return 0;
}
#endif
