/* Argument checks for the entry points our own derivative formulas and
 * composites call (the _C._internal helpers: *_backward, the LAPACK
 * primitives, ...). Their callers pass consistent arguments; these checks
 * turn a bad call (a bug of ours, or a user reaching into _C._internal)
 * into an error instead of a read or write out of bounds. Each is O(ndim)
 * except at_check_index_range, one read pass over the indices.
 * All return 0, or -1 with a THError set. */
#ifndef AT_ARG_CHECKS_H
#define AT_ARG_CHECKS_H

#include "ATen.h"

/* t has exactly the n sizes given */
AT_API int at_check_shape(const THTensor *t, int n, const int64_t *sizes, const char *op, const char *arg);
/* a and b have the same sizes */
AT_API int at_check_same_shape(const THTensor *a, const THTensor *b, const char *op, const char *an, const char *bn);
/* t has lo <= ndim <= hi */
AT_API int at_check_ndim(const THTensor *t, int lo, int hi, const char *op, const char *arg);
/* t has an integer dtype (bool excluded) */
AT_API int at_check_integral(const THTensor *t, const char *op, const char *arg);
/* t is int64 (the kernels read index buffers as int64_t) */
AT_API int at_check_int64(const THTensor *t, const char *op, const char *arg);
/* every value of the integer tensor idx lies in [lo, hi) */
AT_API int at_check_index_range(const THTensor *idx, int64_t lo, int64_t hi, const char *op, const char *arg);

#endif
