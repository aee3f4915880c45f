/* Upsampling: F.interpolate's separable modes (nearest, nearest-exact,
 * linear, bilinear, trilinear, bicubic) over the trailing nsp (1..3) dims of
 * an (N, C, *spatial) tensor, and their backwards (the adjoint: each output's
 * gradient added back to the inputs it read, with the same weights). */
#ifndef AT_UPSAMPLE_H
#define AT_UPSAMPLE_H
#include "ATen.h"
#include "../TH/THUpsample.h"

/* an absent scale factor (the impl of a declaration without that dim) */
#define AT_NO_SCALE ((ATOptDouble){ false, 0 })

/* or'ed onto TH_UP_LINEAR / TH_UP_CUBIC: torch's antialiased modes (_upsample_*2d_aa), CPU only */
#define AT_UP_AA 0x10

/* mode: a THUpsampleMode (| AT_UP_AA); scales (d, h, w): the user's scale factors, given
 * only where F.interpolate was asked for scale_factor and kept it; name:
 * torch's op name, for errors */
AT_API THTensor *at_upsample(const THTensor *self, int mode, int nsp, const ATIntList *output_size, bool align_corners,
                             ATOptDouble scales_d, ATOptDouble scales_h, ATOptDouble scales_w, const char *name);
/* input_size: the forward input's sizes (N, C, *spatial) */
AT_API THTensor *at_upsample_backward(const THTensor *grad, int mode, int nsp, const ATIntList *output_size,
                                      const ATIntList *input_size, bool align_corners, ATOptDouble scales_d,
                                      ATOptDouble scales_h, ATOptDouble scales_w, const char *name);
#endif
