/* generic/THTensorUnary.c: sinc, i0, i0e, i1, i1e and frexp (the other unary kernels are in THKernels.h) */
#ifndef TH_KERNELS_UNARY_H
#define TH_KERNELS_UNARY_H
#include "THDispatch.h"
TH_DECLARE_FLOATING(sinc_loop) TH_DECLARE_FLOATING(i0_loop) TH_DECLARE_FLOATING(i1_loop) TH_DECLARE_FLOATING(i1e_loop)
TH_DECLARE_FLOATING(i0e_loop)

/* frexp over n contiguous elements: mantissas in the input's dtype, int32 exponents */
typedef void (*THFrexpFn)(const void *in, void *mant, int32_t *expo, int64_t n);
void THHalfTensor_frexp_contig(const void *, void *, int32_t *, int64_t);
void THBFloat16Tensor_frexp_contig(const void *, void *, int32_t *, int64_t);
void THFloatTensor_frexp_contig(const void *, void *, int32_t *, int64_t);
void THDoubleTensor_frexp_contig(const void *, void *, int32_t *, int64_t);
#endif
