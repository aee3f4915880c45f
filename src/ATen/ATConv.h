/* Convolution (im2col + GEMM) and pooling kernels for NCHW float tensors. */
#ifndef AT_CONV_H
#define AT_CONV_H
#include "ATen.h"

/* a contiguous copy of t in dtype ct (t itself, retained, when it already is) */
AT_API THTensor *at_contiguous_as(const THTensor *t, THDtype ct);
AT_API THTensor *at_conv2d(const THTensor *input, const THTensor *weight, const THTensor *bias,
                           const ATIntList *stride, const ATIntList *padding, const ATIntList *dilation, int64_t groups);
/* outs: grad_input, grad_weight, grad_bias; an output that output_mask
 * (NULL = all) does not ask for is left NULL (None in Python) */
AT_API int at_conv2d_backward(THTensor **outs, const THTensor *grad, const THTensor *input, const THTensor *weight,
                              const ATIntList *stride, const ATIntList *padding, const ATIntList *dilation,
                              int64_t groups, const ATIntList *output_mask);
/* outs: output, indices (flat h*W+w within each plane, as PyTorch) */
AT_API int at_max_pool2d(THTensor **outs, const THTensor *input, const ATIntList *kernel, const ATIntList *stride,
                         const ATIntList *padding, const ATIntList *dilation, bool ceil_mode);
AT_API THTensor *at_max_pool2d_backward(const THTensor *grad, const THTensor *input, const THTensor *indices);
AT_API THTensor *at_avg_pool2d(const THTensor *input, const ATIntList *kernel, const ATIntList *stride,
                               const ATIntList *padding, bool ceil_mode, bool count_include_pad, ATOptInt divisor);
AT_API THTensor *at_avg_pool2d_backward(const THTensor *grad, const THTensor *input, const ATIntList *kernel,
                                        const ATIntList *stride, const ATIntList *padding, bool ceil_mode,
                                        bool count_include_pad, ATOptInt divisor);
AT_API THTensor *at_adaptive_avg_pool2d(const THTensor *input, const ATIntList *output_size);
AT_API THTensor *at_adaptive_avg_pool2d_backward(const THTensor *grad, const THTensor *input);
AT_API int at_adaptive_max_pool2d(THTensor **outs, const THTensor *input, const ATIntList *output_size);
#endif
