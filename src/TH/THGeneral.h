/* THGeneral: what every TH/ATen file needs — dtypes, half-precision
 * conversions, overflow-checked arithmetic and the error protocol.
 *
 * Error protocol (the one rule for everything below src/python):
 *   a function that fails records a message and a kind with THError_set()
 *   and returns NULL (pointer results) or -1 (int results). Nothing here
 *   prints, exits, aborts or longjmps. src/python turns the recorded kind
 *   into the matching Python exception.
 *
 * Ownership rule (the one rule for references):
 *   you own what a *_new*, *_retain or at_* function returned; free it
 *   (THTensor_free / THStorage_free) or return it. Arguments are borrowed.
 */
#ifndef TH_GENERAL_H
#define TH_GENERAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#define TH_API __attribute__((visibility("default")))

#ifdef __cplusplus
extern "C" {
#endif
#define TH_MAX_DIMS 25

typedef enum {
  TH_Bool = 0, TH_UInt8, TH_Int8, TH_Int16, TH_Int32, TH_Int64,
  TH_Half, TH_BFloat16, TH_Float, TH_Double,
  TH_ComplexFloat, TH_ComplexDouble,   /* float _Complex, double _Complex (interleaved re, im) */
  TH_NDTYPES,
  TH_Undefined = -1
} THDtype;

typedef struct {
  const char *name;       /* "float32" — torch.<name> on the Python side */
  const char *legacy;     /* "Float" — FloatTensor, THFloatTensor_* */
  int itemsize;
  bool is_floating;
  bool is_signed;
} THDtypeInfo;

TH_API extern const THDtypeInfo THDtype_info[TH_NDTYPES];
static inline int THDtype_size(THDtype t) { return THDtype_info[t].itemsize; }
static inline bool THDtype_isFloating(THDtype t) { return t >= TH_Half && t <= TH_Double; }
static inline bool THDtype_isComplex(THDtype t) { return t == TH_ComplexFloat || t == TH_ComplexDouble; }
/* complex64 <-> float32, complex128 <-> float64 (the dtype of .real/.abs()) */
static inline THDtype THDtype_toReal(THDtype t) {
  return t == TH_ComplexFloat ? TH_Float : (t == TH_ComplexDouble ? TH_Double : t);
}
static inline THDtype THDtype_toComplex(THDtype t) { return t == TH_Double ? TH_ComplexDouble : TH_ComplexFloat; }
static inline bool THDtype_isIntegral(THDtype t, bool include_bool) {
  return (t >= TH_UInt8 && t <= TH_Int64) || (include_bool && t == TH_Bool);
}

/* ---- errors ---- */
typedef enum {
  TH_ERR_NONE = 0, TH_ERR_RUNTIME, TH_ERR_VALUE, TH_ERR_TYPE, TH_ERR_INDEX,
  TH_ERR_MEMORY, TH_ERR_NOTIMPL
} THErrorKind;

TH_API void THError_set(THErrorKind kind, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
TH_API THErrorKind THError_kind(void);
TH_API const char *THError_message(void);
TH_API void THError_clear(void);
/* Warnings are queued (thread-local) and flushed by src/python as UserWarning. */
TH_API void THWarn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
TH_API const char *THWarn_pop(void);   /* NULL when empty; valid until next call */

/* ---- checked arithmetic: false on overflow ---- */
static inline bool th_mul_overflow(int64_t a, int64_t b, int64_t *r) {
  return __builtin_mul_overflow(a, b, r);
}
static inline bool th_add_overflow(int64_t a, int64_t b, int64_t *r) {
  return __builtin_add_overflow(a, b, r);
}
/* The element count of a shape; true when it does not fit int64. Every
 * tensor constructor checks it, so THTensor_numel() of a live tensor never
 * overflows (a zero size anywhere makes the count 0, whatever the others). */
static inline bool th_numel_overflow(int ndim, const int64_t *sizes, int64_t *numel) {
  int64_t n = 1;
  bool overflow = false;
  for (int i = 0; i < ndim; i++) {
    if (sizes[i] == 0) { *numel = 0; return false; }
    overflow |= th_mul_overflow(n, sizes[i], &n);
  }
  *numel = n;
  return overflow;
}

/* ---- half and bfloat16 live as uint16 bit patterns; arithmetic goes through float ---- */
typedef struct { uint16_t x; } THHalf;
typedef struct { uint16_t x; } THBFloat16;

#ifdef __F16C__
/* the F16C instructions: one instruction each way, and loops over them
 * vectorize (the bit-twiddling versions below ran ~70x slower than torch) */
#include <immintrin.h>
static inline float th_half2float(THHalf h) { return _cvtsh_ss(h.x); }
static inline THHalf th_float2half(float f) {
  THHalf h;
  h.x = (uint16_t)_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  return h;
}
#else
static inline float th_half2float(THHalf h) {
  uint32_t sign = (uint32_t)(h.x & 0x8000) << 16, exp = (h.x >> 10) & 0x1f, man = h.x & 0x3ff, bits;
  if (exp == 0) {
    if (man == 0) bits = sign;
    else { /* subnormal: normalise */
      exp = 127 - 15 + 1;
      while (!(man & 0x400)) { man <<= 1; exp--; }
      man &= 0x3ff;
      bits = sign | (exp << 23) | (man << 13);
    }
  } else if (exp == 0x1f) bits = sign | 0x7f800000u | (man << 13);
  else bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
  union { uint32_t u; float f; } v = { bits };
  return v.f;
}
static inline THHalf th_float2half(float f) {
  union { float f; uint32_t u; } v = { f };
  uint32_t x = v.u, sign = (x >> 16) & 0x8000, absx = x & 0x7fffffffu;
  THHalf h;
  if (absx >= 0x7f800000u) { h.x = (uint16_t)(sign | 0x7c00 | (absx > 0x7f800000u ? 0x200 : 0)); return h; }
  if (absx >= 0x477ff000u) { h.x = (uint16_t)(sign | 0x7c00); return h; } /* overflow -> inf */
  if (absx < 0x38800000u) { /* subnormal or zero: round to nearest even */
    union { uint32_t u; float f; } a = { absx };
    float scaled = a.f * 16777216.0f; /* 2^24 = 1/min subnormal */
    uint32_t m = (uint32_t)scaled; float rem = scaled - (float)m;
    if (rem > 0.5f || (rem == 0.5f && (m & 1))) m++;
    h.x = (uint16_t)(sign | m); return h;
  }
  uint32_t e = ((absx >> 23) - 127 + 15), man = absx & 0x7fffff;
  uint32_t r = (e << 10) | (man >> 13), rest = man & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (r & 1))) r++;
  h.x = (uint16_t)(sign | r);
  return h;
}
#endif
/* n halves to floats and back, eight per instruction with F16C: loops over the one-element
 * conversions above stay scalar (gcc does not vectorize them), so float16 elementwise loops
 * convert a chunk, compute in float, and convert back (THLoops.h) */
static inline void th_half2float_n(const THHalf *h, float *f, int64_t n) {
  int64_t i = 0;
#if defined(__F16C__) && !defined(__CUDACC__)
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(f + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(h + i))));
#endif
  for (; i < n; i++) f[i] = th_half2float(h[i]);
}
static inline void th_float2half_n(const float *f, THHalf *h, int64_t n) {
  int64_t i = 0;
#if defined(__F16C__) && !defined(__CUDACC__)
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128((__m128i *)(h + i), _mm256_cvtps_ph(_mm256_loadu_ps(f + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#endif
  for (; i < n; i++) h[i] = th_float2half(f[i]);
}
static inline float th_bf2float(THBFloat16 b) {
  union { uint32_t u; float f; } v = { (uint32_t)b.x << 16 };
  return v.f;
}
static inline THBFloat16 th_float2bf(float f) {
  union { float f; uint32_t u; } v = { f };
  THBFloat16 b;
  if ((v.u & 0x7fffffffu) > 0x7f800000u) { b.x = 0x7fc0; return b; }
  uint32_t rounding = 0x7fff + ((v.u >> 16) & 1);  /* round to nearest even */
  b.x = (uint16_t)((v.u + rounding) >> 16);
  return b;
}

static inline void th_bf2float_n(const THBFloat16 *b, float *f, int64_t n) {
  for (int64_t i = 0; i < n; i++) f[i] = th_bf2float(b[i]);
}

#ifdef __cplusplus
}
#endif

#endif
