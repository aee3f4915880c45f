/* grid_sampler_2d / grid_sampler_3d (F.grid_sample's kernels): each output
 * point reads the input at a location given by the grid, normalized to
 * [-1, 1], with bilinear/trilinear or nearest interpolation and zeros,
 * border or reflection padding; and their backward (grad_input, grad_grid). */
#ifndef AT_SAMPLING_H
#define AT_SAMPLING_H
#include "ATen.h"

/* interpolation_mode 0 bilinear, 1 nearest, 2 bicubic (4-d only);
 * padding_mode 0 zeros, 1 border, 2 reflection; nsp: 2 or 3 spatial dims */
AT_API THTensor *at_grid_sampler(const THTensor *input, const THTensor *grid, int64_t interpolation_mode,
                                 int64_t padding_mode, bool align_corners, int nsp);
/* outs[0] grad_input, outs[1] grad_grid (NULL where output_mask says 0; NULL mask: both) */
AT_API int at_grid_sampler_backward(THTensor **outs, const THTensor *grad_output, const THTensor *input,
                                    const THTensor *grid, int64_t interpolation_mode, int64_t padding_mode,
                                    bool align_corners, const ATIntList *output_mask, int nsp);
#endif
