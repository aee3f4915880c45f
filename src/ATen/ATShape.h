/* The shape family: ops that move elements without arithmetic (cat, stack,
 * flip, roll, repeat_interleave) and F.unfold/F.fold (im2col/col2im of the
 * convolution code, ATConv.c). Every output is a new contiguous tensor. */
#ifndef AT_SHAPE_H
#define AT_SHAPE_H
#include "ATen.h"

/* torch.cat: inputs promoted to one dtype; legacy empty (0,) tensors are
 * skipped; out may be given (resized). */
AT_API THTensor *at_cat(const ATTensorList *tensors, int64_t dim, THTensor *out);
/* torch.stack: each input unsqueezed at dim, then cat */
AT_API THTensor *at_stack(const ATTensorList *tensors, int64_t dim, THTensor *out);
AT_API THTensor *at_flip(const THTensor *self, const ATIntList *dims);
AT_API THTensor *at_fliplr(const THTensor *self);   /* flip dim 1 */
AT_API THTensor *at_flipud(const THTensor *self);   /* flip dim 0 */
/* dims NULL or empty: roll the flattened tensor by shifts[0] */
AT_API THTensor *at_roll(const THTensor *self, const ATIntList *shifts, const ATIntList *dims);
/* diag_embed: self's last dim laid on the diagonal (offset) of dims dim1, dim2 of a new zero tensor */
AT_API THTensor *at_diag_embed(const THTensor *self, int64_t offset, int64_t dim1, int64_t dim2);
/* Each slice i of self along dim repeated repeats[i] times (repeats a 0-d/1-d
 * int32/int64 tensor) or `repeat` times when repeats is NULL. dim absent:
 * over the flattened input. */
AT_API THTensor *at_repeat_interleave(const THTensor *self, const THTensor *repeats, int64_t repeat, ATOptInt dim,
                                      ATOptInt output_size);
/* torch.repeat_interleave(repeats): i repeated repeats[i] times */
AT_API THTensor *at_repeat_interleave_index(const THTensor *repeats, ATOptInt output_size);
/* The gradient of at_repeat_interleave: grad summed over each slice's copies,
 * shaped like the input (sizes). */
AT_API THTensor *at_repeat_interleave_backward(const THTensor *grad, const ATIntList *sizes, ATOptInt dim,
                                               const THTensor *repeats, int64_t repeat);
/* F.unfold (im2col: (N, C, H, W) -> (N, C*KH*KW, L)) and F.fold (col2im, the
 * sum of overlapping blocks). 3-d/2-d unbatched inputs are accepted. */
AT_API THTensor *at_im2col(const THTensor *self, const ATIntList *kernel_size, const ATIntList *dilation,
                           const ATIntList *padding, const ATIntList *stride);
AT_API THTensor *at_col2im(const THTensor *self, const ATIntList *output_size, const ATIntList *kernel_size,
                           const ATIntList *dilation, const ATIntList *padding, const ATIntList *stride);
/* F.pad's constant mode: pad holds (before, after) pairs from the last dim back; negative ones crop */
AT_API THTensor *at_constant_pad_nd(const THTensor *self, const ATIntList *pad, ATScalar value);
/* its gradient: grad cropped (or zero-padded) back by the negated pads */
AT_API THTensor *at_constant_pad_nd_backward(const THTensor *grad, const ATIntList *pad);
/* F.pad's other modes over the last nsp dims (1-3) of a (nsp+1)- or (nsp+2)-d input: mode 0 reflect
 * (reflection_pad{nsp}d), 1 replicate (replication_pad{nsp}d), 2 circular (_pad_circular, nsp from the
 * padding's length); and their backward (self: the forward's input, for its sizes) */
AT_API THTensor *at_pad_mode(const THTensor *self, const ATIntList *padding, int mode, int nsp);
AT_API THTensor *at_pad_mode_backward(const THTensor *grad_output, const THTensor *self, const ATIntList *padding,
                                      int mode, int nsp);
#endif
