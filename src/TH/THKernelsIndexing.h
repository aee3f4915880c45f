/* Typed kernels of the indexing family (generic/THTensorIndexing.c); the
 * untyped moves (gathers, plain puts) are done by element size in ATen. */
#ifndef TH_KERNELS_INDEXING_H
#define TH_KERNELS_INDEXING_H
#include "THGeneral.h"

/* dst[pre[p] + off[j] + post[q]] += v[(p*nb + j)*vs + q] for q < npost
 * (offsets in elements; post NULL: post[q] == q, a vectorised row add; v
 * does not overlap dst). Serial in j, so repeated offsets all add up. */
typedef void (*THIndexAccumFn)(char *dst, const char *v, const int64_t *pre, int64_t npre, const int64_t *off,
                               int64_t nb, const int64_t *post, int64_t npost, int64_t vs);
/* Number of nonzero elements of contiguous data[lo, hi). */
typedef int64_t (*THCountNonzeroFn)(const char *data, int64_t lo, int64_t hi);
/* Writes the coordinates (ndim per hit) of the nonzeros of contiguous
 * data[lo, hi) with the given sizes, or the flat positions when ndim == 0. */
typedef void (*THListNonzeroFn)(const char *data, int64_t lo, int64_t hi, int ndim, const int64_t *sizes,
                                int64_t *out);

#define TH_DECLARE_INDEXING(R) \
  void TH##R##Tensor_index_accum(char *dst, const char *v, const int64_t *pre, int64_t npre, const int64_t *off, \
                                 int64_t nb, const int64_t *post, int64_t npost, int64_t vs); \
  int64_t TH##R##Tensor_count_nonzero(const char *data, int64_t lo, int64_t hi); \
  void TH##R##Tensor_list_nonzero(const char *data, int64_t lo, int64_t hi, int ndim, const int64_t *sizes, \
                                  int64_t *out);
TH_DECLARE_INDEXING(Bool) TH_DECLARE_INDEXING(Byte) TH_DECLARE_INDEXING(Char) TH_DECLARE_INDEXING(Short)
TH_DECLARE_INDEXING(Int) TH_DECLARE_INDEXING(Long) TH_DECLARE_INDEXING(Half) TH_DECLARE_INDEXING(BFloat16)
TH_DECLARE_INDEXING(Float) TH_DECLARE_INDEXING(Double)
#undef TH_DECLARE_INDEXING
#endif
