/* The sort family: sort/argsort/msort, topk, kthvalue, median/nanmedian,
 * mode, unique/unique_consecutive, isin (src/ATen/ATSort.c). All of them
 * order values in the input's own dtype (TH kernels in generic/THTensorSort.c),
 * so int64 beyond 2**53 stays exact. Tuple results: outs[0] values,
 * outs[1] indices (new references). */
#ifndef AT_SORT_H
#define AT_SORT_H
#include "ATen.h"

AT_API int at_sort(THTensor **outs, const THTensor *self, int64_t dim, bool descending, bool stable);
AT_API THTensor *at_argsort(const THTensor *self, int64_t dim, bool descending, bool stable);
AT_API THTensor *at_msort(const THTensor *self);
AT_API int at_topk(THTensor **outs, const THTensor *self, int64_t k, int64_t dim, bool largest, bool sorted);
AT_API int at_kthvalue(THTensor **outs, const THTensor *self, int64_t k, int64_t dim, bool keepdim);
/* median/nanmedian along dim (values and indices as torch picks them) */
AT_API int at_median_dim(THTensor **outs, const THTensor *self, int64_t dim, bool keepdim, bool ignore_nan);
/* median/nanmedian of all elements: the lower median, 0-d; NaN when empty */
AT_API THTensor *at_median_all(const THTensor *self, bool ignore_nan);
AT_API int at_mode(THTensor **outs, const THTensor *self, int64_t dim, bool keepdim);
/* outs: the sorted unique values, the inverse (self's shape; empty unless
 * asked), the counts (empty unless asked) */
AT_API int at_unique(THTensor **outs, const THTensor *self, bool sorted, bool return_inverse, bool return_counts);
/* with dim: runs of equal slices along dim (torch's unique_dim); outs:
 * values, the inverse (size of dim) and the counts, all three always made */
AT_API int at_unique_consecutive(THTensor **outs, const THTensor *self, bool return_inverse, bool return_counts,
                                 ATOptInt dim);
AT_API int at_unique_dim(THTensor **outs, const THTensor *self, int64_t dim, bool sorted, bool return_inverse,
                         bool return_counts);
AT_API THTensor *at_isin(const THTensor *elements, const THTensor *test_elements, bool assume_unique, bool invert);
AT_API THTensor *at_isin_scalar(const THTensor *elements, ATScalar test_element, bool assume_unique, bool invert);
AT_API THTensor *at_isin_scalar_tensor(ATScalar element, const THTensor *test_elements, bool assume_unique,
                                       bool invert);
#endif
