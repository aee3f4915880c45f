/* The indexing family: advanced indexing (x[idx] and x[idx] = v), index_select,
 * nonzero, masked_select / masked_scatter, take / put, index_fill / index_copy.
 * All run through one plan (ATIndexing.c): the indexed self slots are
 * pre[p] + off[j] + post[q] over the dims before the indexed block (p), the
 * broadcast index positions (j) and the dims after it (q). */
#ifndef AT_INDEXING_H
#define AT_INDEXING_H
#include "ATen.h"

/* self[indices]: NULL entries leave a dim alone; bool/uint8 masks stand for
 * their nonzero coordinates; PyTorch's broadcasting and placement rules. */
AT_API THTensor *at_index(const THTensor *self, const ATTensorList *indices);
/* A copy of self (or out == self, in place) with values put at indices,
 * added when accumulate (duplicates all add up). */
AT_API THTensor *at_index_put(const THTensor *self, const ATTensorList *indices, const THTensor *values,
                              bool accumulate, THTensor *out);
AT_API THTensor *at_index_select(const THTensor *self, int64_t dim, const THTensor *index, THTensor *out);
/* zeros(self_sizes) with grad added at index along dim (index_select's backward) */
AT_API THTensor *at_index_select_backward(const THTensor *grad, const ATIntList *self_sizes, int64_t dim,
                                          const THTensor *index);
AT_API THTensor *at_nonzero(const THTensor *self, THTensor *out);
AT_API THTensor *at_masked_select(const THTensor *self, const THTensor *mask, THTensor *out);
AT_API THTensor *at_masked_scatter(const THTensor *self, const THTensor *mask, const THTensor *source,
                                   THTensor *out);
AT_API THTensor *at_take(const THTensor *self, const THTensor *index, THTensor *out);
AT_API THTensor *at_put(const THTensor *self, const THTensor *index, const THTensor *source, bool accumulate,
                        THTensor *out);
AT_API THTensor *at_index_fill(const THTensor *self, int64_t dim, const THTensor *index, const THTensor *value,
                               THTensor *out);
AT_API THTensor *at_index_copy(const THTensor *self, int64_t dim, const THTensor *index, const THTensor *source,
                               THTensor *out);
#endif
