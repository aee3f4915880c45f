/* The bucketize family (PyTorch's Bucketization.cpp and SummaryOps.cpp in
 * one place): searchsorted, bucketize, bincount, histc, histogram. Kernels
 * in src/TH/generic/THTensorBucketize.c. */
#ifndef AT_BUCKETIZE_H
#define AT_BUCKETIZE_H
#include "ATen.h"

/* side: NULL, "left" or "right"; sorter: NULL or int64 indices sorting each row */
AT_API THTensor *at_searchsorted(const THTensor *sorted, const THTensor *self, bool out_int32, bool right,
                                 const char *side, const THTensor *sorter, THTensor *out);
AT_API THTensor *at_searchsorted_scalar(const THTensor *sorted, ATScalar self, bool out_int32, bool right,
                                        const char *side, const THTensor *sorter);
AT_API THTensor *at_bucketize(const THTensor *self, const THTensor *boundaries, bool out_int32, bool right,
                              THTensor *out);
AT_API THTensor *at_bucketize_scalar(ATScalar self, const THTensor *boundaries, bool out_int32, bool right);
AT_API THTensor *at_bincount(const THTensor *self, const THTensor *weights, int64_t minlength);
AT_API THTensor *at_histc(const THTensor *self, int64_t bins, ATScalar min, ATScalar max, THTensor *out);
/* outs[0] hist, outs[1] bin edges. bin_edges NULL: `bins` equal bins over
 * [min, max] (both given) or over the data's range. */
AT_API int at_histogram(THTensor **outs, const THTensor *self, int64_t bins, const THTensor *bin_edges,
                        ATOptDouble min, ATOptDouble max, const THTensor *weight, bool density);
#endif
