/* Copy with dtype conversion: dst is this file's dtype, the source dtype
 * arrives in `extra` and is switched on once per inner loop. */
#include "../THLoops.h"

void THTensor_(copy_loop)(char **data, const int64_t *st, int64_t n, const void *extra) {
  const THDtype sd = *(const THDtype *)extra;
  char *po = data[0], *pa = data[1];
  const int64_t so = st[0], sa = st[1];
#ifdef TH_REAL_IS_HALF
  /* contiguous float32 -> float16 (x.half()): F16C eight at a time, the same rounding as
   * the per-element conversion, which gcc leaves scalar */
  if (sd == TH_Float && so == TH_S && sa == (int64_t)sizeof(float)) {
    th_float2half_n((const float *)pa, (THHalf *)po, n);
    return;
  }
#endif
#define TH_COPY_CASE(DT, ST, READ)                                               \
  case DT:                                                                       \
    if (so == TH_S && sa == (int64_t)sizeof(ST)) {                               \
      scalar_t *o = (scalar_t *)po; const ST *a = (const ST *)pa;                \
      for (int64_t i = 0; i < n; i++) o[i] = FROMC(READ(a[i]));                  \
    } else {                                                                     \
      for (int64_t i = 0; i < n; i++) TH_AT(po, so, i) = FROMC(READ(*(const ST *)(pa + sa * i))); \
    }                                                                            \
    break;
#define TH_ID(x) (x)
#define TH_BYTE_BOOL(x) ((x) != 0)   /* bool sources as bytes: empty() memory may hold any byte */
#define TH_CREAL(x) (__real__ (x))   /* to a real dtype: the real part (ATCopy warns) */
  switch (sd) {
    TH_COPY_CASE(TH_Bool, uint8_t, TH_BYTE_BOOL)
    TH_COPY_CASE(TH_UInt8, uint8_t, TH_ID)
    TH_COPY_CASE(TH_Int8, int8_t, TH_ID)
    TH_COPY_CASE(TH_Int16, int16_t, TH_ID)
    TH_COPY_CASE(TH_Int32, int32_t, TH_ID)
    TH_COPY_CASE(TH_Int64, int64_t, TH_ID)
    TH_COPY_CASE(TH_Half, THHalf, th_half2float)
    TH_COPY_CASE(TH_BFloat16, THBFloat16, th_bf2float)
    TH_COPY_CASE(TH_Float, float, TH_ID)
    TH_COPY_CASE(TH_Double, double, TH_ID)
    TH_COPY_CASE(TH_ComplexFloat, float _Complex, TH_CREAL)
    TH_COPY_CASE(TH_ComplexDouble, double _Complex, TH_CREAL)
    default: break;
  }
#undef TH_COPY_CASE
#undef TH_ID
#undef TH_BYTE_BOOL
#undef TH_CREAL
}

/* out = value (value in THOpArgs slot 0) */
void THTensor_(fill_loop)(char **data, const int64_t *st, int64_t n, const void *extra) {
  const scalar_t v = FROMC(TH_ARG(0));
  if (st[0] == TH_S) {
    scalar_t *o = (scalar_t *)data[0];
    for (int64_t i = 0; i < n; i++) o[i] = v;
  } else {
    for (int64_t i = 0; i < n; i++) TH_AT(data[0], st[0], i) = v;
  }
}
