/* gather / scatter / index_add kernels (the private _gather_c, _scatter_c,
 * _index_add_c ops behind cthtorch/_ops/shape.py). Each returns a new tensor, or with out == self
 * with out == self (_scatter_c(..., out=self)) writes into self and returns it. */
#ifndef AT_SCATTER_H
#define AT_SCATTER_H
#include "ATen.h"

/* out[p] = self[p with p[dim] = index[p]]; out has index's shape. */
AT_API THTensor *at_gather_c(const THTensor *self, int64_t dim, const THTensor *index);
/* A copy of self with src (or value, if src is NULL) scattered along dim at
 * index; reduce: "none", "sum"/"add", "prod"/"multiply", "amax", "amin". */
AT_API THTensor *at_scatter_c(const THTensor *self, int64_t dim, const THTensor *index, const THTensor *src,
                              ATScalar value, const char *reduce, THTensor *out);
/* A copy of self with alpha * source[.., k, ..] added at self[.., index[k], ..]. */
AT_API THTensor *at_index_add_c(const THTensor *self, int64_t dim, const THTensor *index, const THTensor *source,
                                ATScalar alpha, THTensor *out);
#endif
