/* torchvision's region-of-interest kernels (ops.roi_align, ops.roi_pool): each
 * box of rois [K, 5] (batch index, x1, y1, x2, y2 in input coordinates before
 * spatial_scale) is cut into pooled_height x pooled_width bins, and each bin is
 * the mean of bilinear samples (roi_align) or the max (roi_pool) of the input
 * plane of its batch item; and their backward. */
#ifndef AT_ROI_H
#define AT_ROI_H
#include "ATen.h"

AT_API THTensor *at_roi_align(const THTensor *input, const THTensor *rois, double spatial_scale,
                              int64_t pooled_height, int64_t pooled_width, int64_t sampling_ratio, bool aligned);
/* grad_output [K, C, PH, PW] -> grad_input of input_sizes (N, C, H, W) */
AT_API THTensor *at_roi_align_backward(const THTensor *grad_output, const THTensor *rois, double spatial_scale,
                                       int64_t pooled_height, int64_t pooled_width, const ATIntList *input_sizes,
                                       int64_t sampling_ratio, bool aligned);
/* outs[0] the pooled maxima, outs[1] (int64) each one's index in its H*W plane, -1 for an empty bin */
AT_API int at_roi_pool(THTensor **outs, const THTensor *input, const THTensor *rois, double spatial_scale,
                       int64_t pooled_height, int64_t pooled_width);
AT_API THTensor *at_roi_pool_backward(const THTensor *grad_output, const THTensor *rois, const THTensor *argmax,
                                      const ATIntList *input_sizes);
/* the position-sensitive variants (R-FCN): input channels C = Co * PH * PW, output [K, Co, PH, PW] whose
 * bin (ph, pw) of channel c reads input channel (c * PH + ph) * PW + pw; ps_roi_align samples as roi_align
 * with aligned=True, ps_roi_pool averages each bin */
AT_API THTensor *at_ps_roi_align(const THTensor *input, const THTensor *rois, double spatial_scale,
                                 int64_t pooled_height, int64_t pooled_width, int64_t sampling_ratio);
AT_API THTensor *at_ps_roi_align_backward(const THTensor *grad_output, const THTensor *rois, double spatial_scale,
                                          int64_t pooled_height, int64_t pooled_width, const ATIntList *input_sizes,
                                          int64_t sampling_ratio);
/* clip_last: the bins stop before the last row and column, as torchvision's CPU forward clips them (its
 * backward does not; false gives the transpose of that backward, for the double backward) */
AT_API THTensor *at_ps_roi_pool(const THTensor *input, const THTensor *rois, double spatial_scale,
                                int64_t pooled_height, int64_t pooled_width, bool clip_last);
AT_API THTensor *at_ps_roi_pool_backward(const THTensor *grad_output, const THTensor *rois, double spatial_scale,
                                         int64_t pooled_height, int64_t pooled_width, const ATIntList *input_sizes);
#endif
