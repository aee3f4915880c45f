/* Neural-network kernels that are not plain pointwise ops: softmax,
 * negative log likelihood, batch/layer normalization, embedding backward.
 * Each forward has a backward kernel; both compute in float (double for
 * float64 inputs) on a contiguous copy of the input. */
#ifndef AT_NN_H
#define AT_NN_H

#include "ATen.h"

AT_API THTensor *at_softmax(const THTensor *self, int64_t dim, THDtype dtype, bool log);
AT_API THTensor *at_softmax_backward(const THTensor *grad, const THTensor *output, int64_t dim, bool log);
/* A loss's reduction, numbered as PyTorch's (the int the Python side passes). */
typedef enum { AT_REDUCTION_NONE = 0, AT_REDUCTION_MEAN = 1, AT_REDUCTION_SUM = 2 } ATReduction;
/* -1 with torch's ValueError for a number that is not a reduction */
AT_API int at_check_reduction(ATReduction reduction);
AT_API THTensor *at_nll_loss(const THTensor *self, const THTensor *target, const THTensor *weight, ATReduction reduction,
                             int64_t ignore_index);
AT_API THTensor *at_nll_loss_backward(const THTensor *grad, const THTensor *self, const THTensor *target,
                                      const THTensor *weight, ATReduction reduction, int64_t ignore_index);
/* outs: output, save_mean, save_invstd (per channel) */
AT_API int at_batch_norm(THTensor **outs, const THTensor *input, const THTensor *weight, const THTensor *bias,
                         const THTensor *running_mean, const THTensor *running_var, bool training,
                         double momentum, double eps);
/* outs: grad_input, grad_weight, grad_bias */
AT_API int at_batch_norm_backward(THTensor **outs, const THTensor *grad, const THTensor *input,
                                  const THTensor *weight, const THTensor *running_mean,
                                  const THTensor *running_var, const THTensor *save_mean,
                                  const THTensor *save_invstd, bool training, double eps);
/* torch's parameter dtype rules of the CPU norms: 0, or -1 with its error */
AT_API int at_norm_dtype_check(const THTensor *input, int n, const THTensor *const *params);
/* group_norm's checks of dtypes (returns 1, or -1 with the error): the op itself is a composite over layer_norm */
AT_API int at_group_norm_check(const THTensor *input, const THTensor *weight, const THTensor *bias);
/* outs: output, mean, rstd (one per normalized row) */
AT_API int at_layer_norm(THTensor **outs, const THTensor *input, const ATIntList *shape, const THTensor *weight,
                         const THTensor *bias, double eps);
/* d grad_out, d input, d weight of layer_norm's backward (ATNormDoubleBackward.c) */
AT_API int at_layer_norm_double_backward(THTensor **outs, const THTensor *ggI, const THTensor *ggW,
                                         const THTensor *ggB, const THTensor *grad, const THTensor *input,
                                         const ATIntList *shape, const THTensor *mean, const THTensor *rstd,
                                         const THTensor *weight, const ATIntList *output_mask);
AT_API int at_batch_norm_double_backward(THTensor **outs, const THTensor *ggI, const THTensor *ggW,
                                         const THTensor *ggB, const THTensor *grad, const THTensor *input,
                                         const THTensor *weight, const THTensor *running_mean,
                                         const THTensor *running_var, const THTensor *save_mean,
                                         const THTensor *save_invstd, bool training, double eps,
                                         const ATIntList *output_mask);
AT_API int at_layer_norm_backward(THTensor **outs, const THTensor *grad, const THTensor *input,
                                  const ATIntList *shape, const THTensor *mean, const THTensor *rstd,
                                  const THTensor *weight);
AT_API THTensor *at_embedding(const THTensor *weight, const THTensor *indices);
AT_API THTensor *at_embedding_backward(const THTensor *grad, const THTensor *indices, const ATIntList *weight_sizes,
                                       int64_t padding_idx, bool scale_grad_by_freq);

#endif
