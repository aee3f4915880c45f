/* Scan kernels (generic/THTensorScan.c): cumulative sum/product/log-sum-exp
 * and running max/min with indices, driven by src/ATen/ATScan.c. */
#ifndef TH_KERNELS_SCAN_H
#define TH_KERNELS_SCAN_H
#include "THGeneral.h"

typedef enum {
  TH_SCAN_SUM, TH_SCAN_PROD, TH_SCAN_SUM_REVERSE, TH_SCAN_LOGSUMEXP, TH_SCAN_LOGSUMEXP_REVERSE,
  TH_SCAN_MAX, TH_SCAN_MIN
} THScanOp;

/* x and out (and idx for MAX/MIN) are contiguous [outer, D, inner] blocks of
 * one dtype; the scan runs along D. A call handles outer rows [o0, o1) and
 * inner columns [i0, i1), so callers can split the work between threads. */
typedef struct {
  THScanOp op;
  const char *x;
  char *out;
  int64_t *idx;
  int64_t D, inner;
} THScanArgs;

typedef void (*THScanFn)(const THScanArgs *a, int64_t o0, int64_t o1, int64_t i0, int64_t i1);

#define TH_DECLARE_SCAN(R) void TH##R##Tensor_scan(const THScanArgs *a, int64_t o0, int64_t o1, int64_t i0, int64_t i1);
TH_DECLARE_SCAN(Bool) TH_DECLARE_SCAN(Byte) TH_DECLARE_SCAN(Char) TH_DECLARE_SCAN(Short)
TH_DECLARE_SCAN(Int) TH_DECLARE_SCAN(Long) TH_DECLARE_SCAN(Half) TH_DECLARE_SCAN(BFloat16)
TH_DECLARE_SCAN(Float) TH_DECLARE_SCAN(Double)
#undef TH_DECLARE_SCAN
#endif
