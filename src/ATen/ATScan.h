/* The scan family: cumsum/cumprod, logcumsumexp, cummax/cummin (running
 * values along one dim) and the backward helpers of cumprod. Kernels in
 * src/TH/generic/THTensorScan.c. */
#ifndef AT_SCAN_H
#define AT_SCAN_H
#include "ATen.h"
#include "../TH/THKernelsScan.h"

/* op: TH_SCAN_SUM / PROD / SUM_REVERSE / LOGSUMEXP / LOGSUMEXP_REVERSE.
 * dtype (sum/prod): the input is cast to it first; TH_Undefined keeps
 * floating dtypes and turns bool/integers into int64. out: NULL allocates. */
AT_API THTensor *at_cumulative(const THTensor *self, int64_t dim, THDtype dtype, THScanOp op, THTensor *out);
/* cummax (is_max) / cummin: outs[0] values, outs[1] int64 indices */
AT_API int at_cumextreme(THTensor **outs, const THTensor *self, int64_t dim, bool is_max);
AT_API THTensor *at_cumprod_backward(const THTensor *grad, const THTensor *self, int64_t dim);
/* The derivatives of cumprod_backward for an incoming ggI: with respect to
 * grad (grad's shape) and to self (self's shape). */
AT_API THTensor *at_cumprod_backward_ggrad(const THTensor *ggI, const THTensor *grad, const THTensor *self, int64_t dim);
AT_API THTensor *at_cumprod_backward_gself(const THTensor *ggI, const THTensor *grad, const THTensor *self, int64_t dim);
#endif
