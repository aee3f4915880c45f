/* embedding_bag: sums, means or maxima of bags of embedding rows, and the
 * gradients of the rows and of per_sample_weights. */
#ifndef AT_EMBEDDING_H
#define AT_EMBEDDING_H
#include "ATen.h"

/* outs: output (bags, dim), offset2bag (each index's bag), bag_size (indices
 * of each bag that are not padding; zeros for sum), max_indices (the row each
 * output element came from for max, bag_size for mean, zeros for sum), as
 * torch's CPU kernel returns them (offset2bag empty for sum over a float
 * type other than double without padding). mode 0 sum, 1 mean, 2 max. padding_idx may
 * be negative (counted from the end). */
AT_API int at_embedding_bag(THTensor **outs, const THTensor *weight, const THTensor *indices, const THTensor *offsets,
                            bool scale_grad_by_freq, int64_t mode, bool sparse, const THTensor *per_sample_weights,
                            bool include_last_offset, ATOptInt padding_idx);
/* d weight, dense, of the output; offset2bag may be empty (sum's fast path), then
 * offsets give the bags */
AT_API THTensor *at_embedding_bag_backward(const THTensor *grad, const THTensor *indices, const THTensor *offsets,
                                           const THTensor *offset2bag,
                                           const THTensor *bag_size, const THTensor *max_indices,
                                           const ATIntList *weight_sizes, bool scale_grad_by_freq, int64_t mode,
                                           const THTensor *per_sample_weights, ATOptInt padding_idx);
/* d per_sample_weights (mode sum): each index's bag gradient dotted with its row */
AT_API THTensor *at_embedding_bag_per_sample_weights_backward(const THTensor *grad, const THTensor *weight,
                                                              const THTensor *indices, const THTensor *offsets,
                                                              const THTensor *offset2bag, int64_t mode,
                                                              ATOptInt padding_idx);
/* embedding and its dense backward on a GPU (ATNN.c's at_embedding* call them
 * for CUDA tensors, after their own argument checks) */
AT_API THTensor *at_embedding_cuda(const THTensor *weight, const THTensor *indices);
AT_API THTensor *at_embedding_backward_cuda(const THTensor *grad, const THTensor *indices, int64_t V, int64_t D,
                                            int64_t padding_idx, bool scale_grad_by_freq);
#endif
