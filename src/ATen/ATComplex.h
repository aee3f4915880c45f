/* Complex dtypes: the views between complex and real (view_as_real,
 * view_as_complex), the ops whose result dtype differs from their input's
 * (abs, angle: complex in, real out), the complex paths of the unary table
 * and the reductions, and the DFT (ATComplex.c). */
#ifndef AT_COMPLEX_H
#define AT_COMPLEX_H
#include "ATen.h"

/* -1 with torch's "\"<kernel>\" not implemented for 'ComplexFloat'" when t is complex: the
 * guard of kernels whose dtype tables have no complex entry */
/* a complex128 element as plain bytes, for kernels that move elements by size */
typedef struct { uint64_t lo, hi; } at_bytes16;
AT_API int at_no_complex(const THTensor *t, const char *kernel);
AT_API THTensor *at_view_as_real(const THTensor *t);
AT_API THTensor *at_view_as_complex(const THTensor *t);
AT_API THTensor *at_conj_physical(const THTensor *t, THTensor *out);
AT_API THTensor *at_angle(const THTensor *t, THTensor *out);
AT_API THTensor *at_angle_backward(const THTensor *grad, const THTensor *self);
/* the complex kernel of unary op `name` (exp, log, ...), or NULL + error */
AT_API THTensor *at_complex_unary(const char *name, const THTensor *a, THTensor *out);
AT_API THTensor *at_complex_abs(const THTensor *a, THTensor *out);
AT_API THTensor *at_sgn(const THTensor *a, THTensor *out);
/* sum/mean of a complex tensor: the same reduction of its real view */
AT_API THTensor *at_complex_sum(const THTensor *self, const ATIntList *dims, bool keepdim, THDtype dtype, THTensor *out,
                                bool mean);
/* Unnormalized DFT along dim, times scale; forward: exp(-2 pi i jk/n), else exp(+...).
 * Complex input only; the result is a new contiguous tensor. */
AT_API THTensor *at_fft_c2c(const THTensor *self, int64_t dim, bool forward, double scale);
#endif
