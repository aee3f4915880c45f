/* Binary pointwise kernels: out = f(a, b). Arithmetic happens in
 * compute_t (float for half/bfloat16); THOpArgs slot 0 carries alpha. */
#include "../THLoops.h"
#include <string.h>

#if defined(TH_REAL_IS_BOOL)
TH_BINARY_LOOP(add_loop, a || (TH_ARG(0) && b))
TH_BINARY_LOOP(sub_loop, a && !(TH_ARG(0) && b))
TH_BINARY_LOOP(mul_loop, a && b)
#else
TH_BINARY_LOOP(add_loop, TH_FMA(TH_ARG(0), b, a))
TH_BINARY_LOOP(sub_loop, TH_FMA(-TH_ARG(0), b, a))
TH_BINARY_LOOP(mul_loop, a * b)
#endif
TH_PREDICATE_LOOP(eq_loop, a == b)
TH_PREDICATE_LOOP(ne_loop, a != b)
TH_PREDICATE_LOOP(lt_loop, a < b)
TH_PREDICATE_LOOP(le_loop, a <= b)
TH_PREDICATE_LOOP(gt_loop, a > b)
TH_PREDICATE_LOOP(ge_loop, a >= b)
TH_PREDICATE_LOOP(logical_and_loop, (a != 0) && (b != 0))
TH_PREDICATE_LOOP(logical_or_loop, (a != 0) || (b != 0))
TH_PREDICATE_LOOP(logical_xor_loop, (a != 0) != (b != 0))

#if defined(TH_REAL_IS_FLOATING)
TH_BINARY_LOOP(div_loop, a / b)
TH_BINARY_LOOP(div_trunc_loop, trunc(a / b))
/* floor division and Python's modulo: THScalarOps.h, shared with THC */
TH_DEFINE_FLOORDIV(THTensor_(floordiv), compute_t)
TH_DEFINE_PYMOD(THTensor_(pymod), compute_t)
TH_BINARY_LOOP(div_floor_loop, THTensor_(floordiv)(a, b))
TH_BINARY_LOOP(remainder_loop, THTensor_(pymod)(a, b))
TH_BINARY_LOOP(fmod_loop, fmod(a, b))
TH_BINARY_LOOP(pow_general_loop, pow(a, b))
/* A scalar exponent of 1, 2, 3, 0.5, -0.5, -1 or -2 is computed as torch's
 * pow_tensor_scalar does (products, sqrt, reciprocals: one vectorizable
 * loop each) rather than by libm pow per element, 100x slower for x ** 2. */
void THTensor_(pow_loop)(char **data, const int64_t *st, int64_t n, const void *extra) {
  /* float and double only: torch rounds half/bfloat16 powers differently */
  if (sizeof(scalar_t) >= 4 && st[0] == TH_S && st[1] == TH_S && st[2] == 0) {
    scalar_t *o = (scalar_t *)data[0];
    const scalar_t *A = (const scalar_t *)data[1];
    const compute_t b = TOC(*(const scalar_t *)data[2]);
#define POW_CASE(V, EXPR) \
    if (b == (compute_t)(V)) { for (int64_t i = 0; i < n; i++) { compute_t a = TOC(A[i]); o[i] = FROMC(EXPR); } return; }
    POW_CASE(1, a)
    POW_CASE(2, a * a)
    POW_CASE(3, a * a * a)
    POW_CASE(0.5, sqrt(a))
    POW_CASE(-0.5, (compute_t)1 / sqrt(a))
    POW_CASE(-1, (compute_t)1 / a)
    POW_CASE(-2, (compute_t)1 / (a * a))
#undef POW_CASE
    /* any other exponent: one omp simd loop, so it runs on the vector pow
     * (libmvec), as torch's runs on Sleef's, instead of scalar double pow */
    _Pragma("omp simd") for (int64_t i = 0; i < n; i++) o[i] = FROMC(TH_POW(TOC(A[i]), b));
    return;
  }
  THTensor_(pow_general_loop)(data, st, n, extra);
}
TH_BINARY_LOOP(atan2_scalar_loop, atan2(a, b))
/* float32 with contiguous (or broadcast) operands: the AVX2 kernel of THVecMath.c; libm's
 * scalar atan2 took 9x torch's (vectorized) time */
void THTensor_(atan2_loop)(char **data, const int64_t *st, int64_t n, const void *extra) {
  const int64_t S = (int64_t)sizeof(float);
  if (TH_DTYPE == TH_Float && st[0] == S && (st[1] == S || st[1] == 0) && (st[2] == S || st[2] == 0) &&
      th_vec_atan2_float((float *)(void *)data[0], (const float *)(void *)data[1], st[1] / S,
                         (const float *)(void *)data[2], st[2] / S, n))
    return;
  THTensor_(atan2_scalar_loop)(data, st, n, extra);
}
TH_BINARY_LOOP(hypot_loop, hypot(a, b))
TH_BINARY_LOOP(copysign_loop, copysign(a, b))
/* ties (-0.0 beside 0.0) give a, as std::max/std::min do in torch */
TH_BINARY_LOOP(maximum_loop, (isnan(a) || isnan(b)) ? (compute_t)NAN : (a < b ? b : a))
TH_BINARY_LOOP(minimum_loop, (isnan(a) || isnan(b)) ? (compute_t)NAN : (b < a ? b : a))
TH_BINARY_LOOP(fmax_loop, isnan(a) ? b : isnan(b) ? a : (a < b ? b : a))
TH_BINARY_LOOP(fmin_loop, isnan(a) ? b : isnan(b) ? a : (b < a ? b : a))
#else
/* Integer division by zero would trap; flag it and let ATen raise. */
static inline compute_t THTensor_(idiv)(compute_t a, compute_t b, int mode) {
  if (b == 0) { th_kernel_fail(TH_KERR_ZERODIV); return 0; }
#if defined(TH_REAL_IS_SIGNED)
  if (b == -1) return (compute_t)(0 - (uint64_t)a);   /* avoids INT_MIN / -1 trap */
  compute_t q = a / b;
  if (mode == 1 && (a % b != 0) && ((a < 0) != (b < 0))) q -= 1;
  return q;
#else
  (void)mode;
  return a / b;
#endif
}
static inline compute_t THTensor_(imod)(compute_t a, compute_t b, int python) {
  if (b == 0) { th_kernel_fail(TH_KERR_ZERODIV); return 0; }
#if defined(TH_REAL_IS_SIGNED)
  if (b == -1) return 0;
  compute_t m = a % b;
  if (python && m != 0 && ((m < 0) != (b < 0))) m += b;
  return m;
#else
  (void)python;
  return a % b;
#endif
}
TH_BINARY_LOOP(div_trunc_loop, THTensor_(idiv)(a, b, 0))
TH_BINARY_LOOP(div_floor_loop, THTensor_(idiv)(a, b, 1))
TH_BINARY_LOOP(remainder_loop, THTensor_(imod)(a, b, 1))
TH_BINARY_LOOP(fmod_loop, THTensor_(imod)(a, b, 0))
TH_BINARY_LOOP(maximum_loop, a > b ? a : b)
TH_BINARY_LOOP(minimum_loop, a < b ? a : b)
TH_BINARY_LOOP(bitwise_and_loop, a & b)
TH_BINARY_LOOP(bitwise_or_loop, a | b)
TH_BINARY_LOOP(bitwise_xor_loop, a ^ b)
#if !defined(TH_REAL_IS_BOOL)
/* integer power by squaring (THScalarOps.h) */
#if defined(TH_REAL_IS_SIGNED)
TH_DEFINE_IPOW(THTensor_(ipow), compute_t, 1)
#else
TH_DEFINE_IPOW(THTensor_(ipow), compute_t, 0)
#endif
TH_BINARY_LOOP(pow_loop, THTensor_(ipow)(a, b))
/* Shifts as PyTorch: out-of-range shift counts give 0 (or -1 for negative >>). */
#define TH_NBITS ((compute_t)(sizeof(scalar_t) * 8))
TH_BINARY_LOOP(lshift_loop, (b < 0 || b >= TH_NBITS) ? 0 : (compute_t)((uint64_t)a << b))
TH_BINARY_LOOP(rshift_loop, (b < 0 || b >= TH_NBITS) ? (a < 0 ? -1 : 0) : (a >> b))
#undef TH_NBITS
#endif
#endif

/* where: data[1] is the bool condition, data[2]/data[3] the values.
 * Contiguous runs (each value contiguous or one broadcast scalar) select
 * on the values' bits with a mask made from the condition, which
 * vectorizes: GCC compiled the ternary to a branch per element, which
 * mispredicts on a random mask (~2 ns an element). */
#ifndef TH_WHERE_SELECT
#define TH_WHERE_SELECT
typedef uint8_t __attribute__((may_alias)) th_u8a;
typedef uint16_t __attribute__((may_alias)) th_u16a;
typedef uint32_t __attribute__((may_alias)) th_u32a;
typedef uint64_t __attribute__((may_alias)) th_u64a;
#define TH_WHERE_RUN(U, SA, SB)                                                   \
  {                                                                               \
    const U *au = (const U *)data[2], *bu = (const U *)data[3];                   \
    U *ou = (U *)data[0];                                                         \
    _Pragma("omp simd") for (int64_t i = 0; i < n; i++) {                         \
      U m = (U)((U)0 - (U)c[i]);                                                  \
      ou[i] = (U)((au[i * SA] & m) | (bu[i * SB] & (U)~m));                       \
    }                                                                             \
  }
#define TH_WHERE_STRIDES(U)                                                       \
  if (st[2] && st[3]) TH_WHERE_RUN(U, 1, 1)                                       \
  else if (st[3]) TH_WHERE_RUN(U, 0, 1)                                           \
  else if (st[2]) TH_WHERE_RUN(U, 1, 0)                                           \
  else TH_WHERE_RUN(U, 0, 0)
#endif
void THTensor_(where_loop)(char **data, const int64_t *st, int64_t n, const void *extra) {
  (void)extra;
  const int64_t es = (int64_t)sizeof(scalar_t);
  if (st[0] == es && st[1] == 1 && (st[2] == es || st[2] == 0) && (st[3] == es || st[3] == 0)) {
    const uint8_t *c = (const uint8_t *)data[1];   /* bools: 0 or 1 */
    switch (es) {
      case 1: TH_WHERE_STRIDES(th_u8a) return;
      case 2: TH_WHERE_STRIDES(th_u16a) return;
      case 4: TH_WHERE_STRIDES(th_u32a) return;
      case 8: TH_WHERE_STRIDES(th_u64a) return;
      default: break;
    }
  }
  for (int64_t i = 0; i < n; i++) {
    bool c = *(const uint8_t *)(data[1] + st[1] * i) != 0;   /* a byte: empty() memory may hold any */
    TH_AT(data[0], st[0], i) = c ? TH_AT(data[2], st[2], i) : TH_AT(data[3], st[3], i);
  }
}

/* ---- gcd, lcm, heaviside, nextafter, ldexp, logaddexp(2) (src/ATen/ATBinary.c) ---- */
TH_BINARY_LOOP(heaviside_loop, TH_OP_HEAVISIDE(a, b))
#if defined(TH_REAL_IS_INTEGRAL)
/* gcd as torch's calc_gcd, lcm wrapping as torch's (THScalarOps.h) */
#if defined(TH_REAL_IS_SIGNED)
TH_DEFINE_GCD(THTensor_(gcd), compute_t, 1)
#else
TH_DEFINE_GCD(THTensor_(gcd), compute_t, 0)
#endif
/* gcd(INT_MIN, b) can be -1 (abs(INT_MIN) stays negative, as in torch), and INT_MIN / -1
 * traps (SIGFPE; torch's CPU lcm dies there). lcm = |a / g * b| does not depend on g's
 * sign, so lcm divides by 1 instead: the same wrapped result, no trap. */
static inline compute_t THTensor_(lcm_gcd)(compute_t a, compute_t b) {
  compute_t g = THTensor_(gcd)(a, b);
  return g == (compute_t)-1 ? 1 : g;
}
TH_DEFINE_LCM(THTensor_(lcm), THTensor_(lcm_gcd), compute_t)
TH_BINARY_LOOP(gcd_loop, THTensor_(gcd)(a, b))
TH_BINARY_LOOP(lcm_loop, THTensor_(lcm)(a, b))
#endif
#if defined(TH_REAL_IS_FLOATING)
/* the next value from `from` towards `to`, on the bit patterns of the dtype
 * (c10's nextafter for half/bfloat16; for float/double as libm's, inline) */
#if defined(TH_REAL_IS_REDUCED)
/* half/bfloat16: c10's steps on the 16-bit patterns, read and written as
 * they are (no trip through float but for a NaN, whose result is a + b) */
/* (th_nextafter16 in THScalarOps.h is the GPU's copy of these steps: GCC
 * vectorizes the bfloat16 loop over this form, not over that one) */
static inline scalar_t THTensor_(nextafter_bits)(scalar_t from, scalar_t to) {
  const uint16_t sign = 0x8000, inf = TH_DTYPE == TH_Half ? 0x7c00 : 0x7f80;
  uint16_t af = from.x & (uint16_t)~sign, at = to.x & (uint16_t)~sign;
  if (af > inf || at > inf) return FROMC(TOC(from) + TOC(to));
  if (from.x == to.x) return from;
  if (af == 0) {
    if (at == 0) return to;
    from.x = (uint16_t)((to.x & sign) | 1);
  } else if (af > at || ((from.x ^ to.x) & sign)) {
    from.x--;
  } else {
    from.x++;
  }
  return from;
}
void THTensor_(nextafter_loop)(char **data, const int64_t *st, int64_t n, const void *extra) {
  (void)extra;
  if (st[0] == TH_S && st[1] == TH_S && st[2] == TH_S) {
    scalar_t *o = (scalar_t *)data[0];
    const scalar_t *a = (const scalar_t *)data[1], *b = (const scalar_t *)data[2];
    for (int64_t i = 0; i < n; i++) o[i] = THTensor_(nextafter_bits)(a[i], b[i]);
  } else {
    for (int64_t i = 0; i < n; i++)
      TH_AT(data[0], st[0], i) = THTensor_(nextafter_bits)(TH_AT(data[1], st[1], i), TH_AT(data[2], st[2], i));
  }
}
#else
/* float/double: selects only, so the loop vectorizes. In sign-magnitude bits
 * a step away from zero is +1; from +-0 the result is the smallest
 * subnormal with b's sign. */
#define TH_NA_BITS(T, U, NAME)                                                   \
  static inline T NAME(T a, T b) {                                              \
    U ua, ub, r;                                                                \
    memcpy(&ua, &a, sizeof a);                                                  \
    memcpy(&ub, &b, sizeof b);                                                  \
    const U sign = (U)1 << (sizeof(U) * 8 - 1);                                 \
    U stepped = ua + (((a > 0) == (b > a)) ? (U)1 : (U)-1);                     \
    r = a == 0 ? ((ub & sign) | 1) : stepped;                                   \
    T out;                                                                      \
    memcpy(&out, &r, sizeof out);                                               \
    return (a != a || b != b) ? a + b : (a == b ? b : out);                     \
  }
#ifndef TH_NEXTAFTER_BITS_DEFINED
#define TH_NEXTAFTER_BITS_DEFINED
TH_NA_BITS(float, uint32_t, th_nextafter_f32)
TH_NA_BITS(double, uint64_t, th_nextafter_f64)
#endif
#undef TH_NA_BITS
TH_SIMD_BINARY_LOOP(nextafter_loop, _Generic(a, float: th_nextafter_f32, default: th_nextafter_f64)(a, b))
#endif
/* 2 ** b: exact from the exponent bits for an integral b in the normal range,
 * else exp2 */
static inline compute_t THTensor_(pow2)(compute_t b) {
  if (sizeof(compute_t) == 8) {
    if (b >= -1022 && b <= 1023 && b == (compute_t)(int)b) {
      uint64_t u = (uint64_t)((int64_t)b + 1023) << 52; double r; memcpy(&r, &u, sizeof r); return (compute_t)r;
    }
    return (compute_t)exp2((double)b);
  }
  if (b >= -126 && b <= 127 && b == (compute_t)(int)b) {
    uint32_t u = (uint32_t)((int32_t)b + 127) << 23; float r; memcpy(&r, &u, sizeof r); return (compute_t)r;
  }
  return (compute_t)exp2f((float)b);
}
/* input * 2 ** other, the power rounded to the dtype first as torch's mul(self, pow(2, other)) */
TH_BINARY_LOOP(ldexp_loop, a * TOC(FROMC(THTensor_(pow2)(b))))
/* logaddexp(2): THScalarOps.h */
TH_SIMD_BINARY_LOOP(logaddexp_loop, TH_OP_LOGADDEXP(a, b))
TH_SIMD_BINARY_LOOP(logaddexp2_loop, TH_OP_LOGADDEXP2(a, b))
/* regularized incomplete gamma P(a, x), Q(a, x) (THIncompleteGamma.h), in double */
TH_BINARY_LOOP(igamma_loop, (compute_t)th_igamma((double)a, (double)b))
TH_BINARY_LOOP(igammac_loop, (compute_t)th_igammac((double)a, (double)b))
#endif
