/* Instantiates TH_GENERIC_FILE for: COMPLEX (complex64 = float _Complex,
 * complex128 = double _Complex; C99's complex types have the interleaved
 * (re, im) layout torch and numpy use, so storages are shared bit for bit).
 * Kept apart from THGenerateTypes.h: most generic kernels (comparisons,
 * rounding, bit ops) have no complex meaning, so only files written for
 * complex include this one. */
#ifndef TH_GENERIC_FILE
#error "define TH_GENERIC_FILE before including THGenerate*Types.h"
#endif

#include "THGeneral.h"
#include <math.h>
#include <complex.h>

#define TH_CONCAT_4_(a, b, c, d) a##b##c##d
#define TH_CONCAT_4(a, b, c, d) TH_CONCAT_4_(a, b, c, d)
#define THTensor_(NAME) TH_CONCAT_4(TH, Real, Tensor_, NAME)

#define TH_REAL_IS_COMPLEX 1
#define TOC(x) (x)
#define FROMC(v) ((scalar_t)(v))

#define Real ComplexFloat
#define scalar_t float _Complex
#define compute_t float _Complex
#define part_t float
#define TH_DTYPE TH_ComplexFloat
#define TH_PART_DTYPE TH_Float
#include TH_GENERIC_FILE
#undef Real
#undef scalar_t
#undef compute_t
#undef part_t
#undef TH_DTYPE
#undef TH_PART_DTYPE

#define Real ComplexDouble
#define scalar_t double _Complex
#define compute_t double _Complex
#define part_t double
#define TH_DTYPE TH_ComplexDouble
#define TH_PART_DTYPE TH_Double
#include TH_GENERIC_FILE
#undef Real
#undef scalar_t
#undef compute_t
#undef part_t
#undef TH_DTYPE
#undef TH_PART_DTYPE

#undef TOC
#undef FROMC
#undef TH_REAL_IS_COMPLEX
#undef TH_GENERIC_FILE
