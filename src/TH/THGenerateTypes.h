/* The generic/ trick. A kernel file is written once, in terms of
 *   scalar_t   the storage type          compute_t  the type arithmetic uses
 *   TOC(x)     scalar_t -> compute_t     FROMC(v)   compute_t -> scalar_t
 *   Real       the name part (Float ->  THFloatTensor_add_loop)
 *   TH_DTYPE   the THDtype enum value
 *   and one of TH_REAL_IS_{BOOL,INTEGRAL,FLOATING} (+ TH_REAL_IS_SIGNED),
 * and instantiated per dtype by
 *   #define TH_GENERIC_FILE "generic/THTensorFoo.c"
 *   #include "THGenerateAllTypes.h"      (or Float/Integral/... types)
 * Half and bfloat16 compute through float. */
#ifndef TH_GENERIC_FILE
#error "define TH_GENERIC_FILE before including THGenerate*Types.h"
#endif

#include "THGeneral.h"
#include <math.h>

#define TH_CONCAT_4_(a, b, c, d) a##b##c##d
#define TH_CONCAT_4(a, b, c, d) TH_CONCAT_4_(a, b, c, d)
#define THTensor_(NAME) TH_CONCAT_4(TH, Real, Tensor_, NAME)


#ifdef TH_GEN_BOOL
#define Real Bool
#define scalar_t bool
#define compute_t bool
#define TH_DTYPE TH_Bool
#define TOC(x) (x)
#define FROMC(v) ((bool)(v))
#define TH_REAL_IS_BOOL 1
#include TH_GENERIC_FILE
#undef TH_REAL_IS_BOOL
#undef Real
#undef scalar_t
#undef compute_t
#undef TH_DTYPE
#undef TOC
#undef FROMC
#endif

#ifdef TH_GEN_INTEGRAL
#define TOC(x) (x)
#define FROMC(v) ((scalar_t)(v))
#define TH_REAL_IS_INTEGRAL 1

#define Real Byte
#define scalar_t uint8_t
#define compute_t uint8_t
#define TH_DTYPE TH_UInt8
#include TH_GENERIC_FILE
#undef Real
#undef scalar_t
#undef compute_t
#undef TH_DTYPE

#define TH_REAL_IS_SIGNED 1
#define Real Char
#define scalar_t int8_t
#define compute_t int8_t
#define TH_DTYPE TH_Int8
#include TH_GENERIC_FILE
#undef Real
#undef scalar_t
#undef compute_t
#undef TH_DTYPE

#define Real Short
#define scalar_t int16_t
#define compute_t int16_t
#define TH_DTYPE TH_Int16
#include TH_GENERIC_FILE
#undef Real
#undef scalar_t
#undef compute_t
#undef TH_DTYPE

#define Real Int
#define scalar_t int32_t
#define compute_t int32_t
#define TH_DTYPE TH_Int32
#include TH_GENERIC_FILE
#undef Real
#undef scalar_t
#undef compute_t
#undef TH_DTYPE

#define Real Long
#define scalar_t int64_t
#define compute_t int64_t
#define TH_DTYPE TH_Int64
#include TH_GENERIC_FILE
#undef Real
#undef scalar_t
#undef compute_t
#undef TH_DTYPE
#undef TH_REAL_IS_SIGNED

#undef TH_REAL_IS_INTEGRAL
#undef TOC
#undef FROMC
#endif

#ifdef TH_GEN_FLOATING
#define TH_REAL_IS_FLOATING 1
#define TH_REAL_IS_SIGNED 1

#define Real Half
#define scalar_t THHalf
#define compute_t float
#define TH_DTYPE TH_Half
#define TH_REAL_IS_REDUCED 1
#define TH_REAL_IS_HALF 1
#define TOC(x) th_half2float(x)
#define FROMC(v) th_float2half((float)(v))
#include TH_GENERIC_FILE
#undef Real
#undef scalar_t
#undef compute_t
#undef TH_DTYPE
#undef TH_REAL_IS_HALF
#undef TOC
#undef FROMC

#define Real BFloat16
#define scalar_t THBFloat16
#define compute_t float
#define TH_DTYPE TH_BFloat16
#define TOC(x) th_bf2float(x)
#define FROMC(v) th_float2bf((float)(v))
#include TH_GENERIC_FILE
#undef Real
#undef scalar_t
#undef compute_t
#undef TH_DTYPE
#undef TOC
#undef FROMC
#undef TH_REAL_IS_REDUCED

#define TOC(x) (x)
#define FROMC(v) ((scalar_t)(v))
#define Real Float
#define scalar_t float
#define compute_t float
#define TH_DTYPE TH_Float
#include TH_GENERIC_FILE
#undef Real
#undef scalar_t
#undef compute_t
#undef TH_DTYPE

#define Real Double
#define scalar_t double
#define compute_t double
#define TH_DTYPE TH_Double
#include TH_GENERIC_FILE
#undef Real
#undef scalar_t
#undef compute_t
#undef TH_DTYPE
#undef TOC
#undef FROMC

#undef TH_REAL_IS_SIGNED
#undef TH_REAL_IS_FLOATING
#endif

#undef TH_GENERIC_FILE
