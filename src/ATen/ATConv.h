/* Convolution (im2col + GEMM) and pooling kernels for NCHW float tensors. */
#ifndef AT_CONV_H
#define AT_CONV_H
#include "ATen.h"

/* The output columns [*lo, *hi) of a window tap whose column 0 reads input
 * column iw0: those with 0 <= ow*SW + iw0 < W (im2col, col2im, max pooling). */
static inline void at_window_cols(int64_t iw0, int64_t W, int64_t SW, int64_t OW, int64_t *lo, int64_t *hi) {
  *lo = iw0 >= 0 ? 0 : (-iw0 + SW - 1) / SW;
  *hi = W - iw0 <= 0 ? 0 : (W - iw0 + SW - 1) / SW;
  if (*hi > OW) *hi = OW;
  if (*lo > *hi) *lo = *hi;
}

/* conv2d geometry (NCHW input, OIHW weight) */
typedef struct {
  int64_t N, C, H, W, O, KH, KW, SH, SW, PH, PW, DH, DW, OH, OW, G;
} ConvGeom;

/* Stride-1 convolution as a sum of shifted GEMMs (ATConvShift.c): per image,
 * no im2col. wt holds the weights by kernel row, [KH][O][KW*C]. Scratch
 * sizes in elements: xp (KW shifted copies of the padded image)
 * at_conv_shift_xp_elems, ext (output rows widened to the padded width)
 * at_conv_shift_ext_elems. */
AT_API bool at_conv_shift_ok(const ConvGeom *g);
AT_API int64_t at_conv_shift_xp_elems(const ConvGeom *g);
AT_API int64_t at_conv_shift_ext_elems(const ConvGeom *g);
AT_API void at_conv_shift_pack_w(bool dbl, const void *w, void *wt, const ConvGeom *g);
/* grad of the packed weights back into [O][C][KH][KW], added */
AT_API void at_conv_shift_unpack_add(bool dbl, const void *gwt, void *gw, const ConvGeom *g);
AT_API void at_conv_shift_fwd(bool dbl, const void *x, const void *wt, void *out, void *xp, void *ext,
                              const ConvGeom *g);
/* gi (may be NULL) = grad_input of one image; gwt (may be NULL) += grad of
 * the weights as [KH][KW*C][O] (at_conv_shift_unpack_add adds it into
 * [O][C][KH][KW]). w is the weight in [O][C][KH][KW], wt packed. */
AT_API void at_conv_shift_bwd(bool dbl, const void *x, const void *w, const void *wt, const void *gy, void *gi,
                              void *gwt, void *xp, void *ext, const ConvGeom *g);

/* Direct stride-1 float32 convolution, register-blocked for AVX-512 (when
 * built for it) or AVX2+FMA (chosen at run time) (ATConvDirect.c;
 * at_conv_direct_ok is false on other CPUs or with CTHTORCH_CONV_DIRECT=off).
 * at_conv_direct_run computes out for all g->N images of x on nt threads
 * (a contiguous share each), with weight w of g's shape, or, when wg is
 * given, w of wg's shape flipped and transposed: grad_input of wg, whose
 * geometry g at_conv_direct_grad_input_geom gives (false when the kernel
 * does not apply). -1 (error set) if its scratch cannot be allocated. */
AT_API bool at_conv_direct_ok(const ConvGeom *g);
AT_API bool at_conv_direct_grad_input_geom(const ConvGeom *g, ConvGeom *g2);
AT_API int at_conv_direct_run(const float *x, const float *w, float *out, const ConvGeom *g, const ConvGeom *wg, int nt);
/* Depthwise conv2d (groups == C; ATConvDepthwise.c), float or double,
 * contiguous NCHW / OIHW: y = all N*O output planes (bias not added);
 * backward writes all of gi and gw, each when not NULL. */
AT_API bool at_conv_depthwise_ok(const ConvGeom *g);
AT_API void at_conv_depthwise_fwd(bool dbl, const void *x, const void *w, void *y, const ConvGeom *g);
AT_API void at_conv_depthwise_bwd(bool dbl, const void *x, const void *w, const void *gy, void *gi, void *gw,
                                  const ConvGeom *g);
/* each channel of x zero-padded into xp, planes of CS floats (ATConvShift.c) */
AT_API void at_conv_pad_float(const float *x, float *xp, const ConvGeom *g, int64_t CS);

/* F.unfold / F.fold kernels (ATShape.c drives them): g->N contiguous NCHW
 * images (g->C channels) <-> columns laid out image-major, (N, C*KH*KW, L).
 * col2im writes every element of x (overlapping blocks summed). */
AT_API void at_im2col_images(bool dbl, const void *x, void *col, const ConvGeom *g);
AT_API void at_col2im_images(bool dbl, const void *col, void *x, const ConvGeom *g);
/* conv2d on GPU tensors (ATConvCuda.c): input batched (4-d), geometry checked */
AT_API THTensor *at_conv2d_cuda(const THTensor *input, const THTensor *weight, const THTensor *bias, const ConvGeom *g);
AT_API int at_conv2d_backward_cuda(THTensor **outs, const THTensor *grad, const THTensor *input, const THTensor *weight,
                                   const ConvGeom *g, bool need_i, bool need_w, bool need_b);
/* a contiguous copy of t in dtype ct (t itself, retained, when it already is) */
AT_API THTensor *at_contiguous_as(const THTensor *t, THDtype ct);
AT_API THTensor *at_conv2d(const THTensor *input, const THTensor *weight, const THTensor *bias,
                           const ATIntList *stride, const ATIntList *padding, const ATIntList *dilation, int64_t groups);
/* outs: grad_input, grad_weight, grad_bias; an output that output_mask
 * (NULL = all) does not ask for is left NULL (None in Python) */
AT_API int at_conv2d_backward(THTensor **outs, const THTensor *grad, const THTensor *input, const THTensor *weight,
                              const ATIntList *stride, const ATIntList *padding, const ATIntList *dilation,
                              int64_t groups, const ATIntList *output_mask);
/* outs: d grad_output, d input, d weight of conv2d_backward, given the
 * gradients ggI/ggW/ggB (each may be NULL) of its three outputs */
AT_API int at_conv2d_double_backward(THTensor **outs, const THTensor *ggI, const THTensor *ggW, const THTensor *ggB,
                                     const THTensor *grad, const THTensor *input, const THTensor *weight,
                                     const ATIntList *stride, const ATIntList *padding, const ATIntList *dilation,
                                     int64_t groups, const ATIntList *output_mask);
/* outs: output, indices (flat h*W+w within each plane, as PyTorch) */
AT_API int at_max_pool2d(THTensor **outs, const THTensor *input, const ATIntList *kernel, const ATIntList *stride,
                         const ATIntList *padding, const ATIntList *dilation, bool ceil_mode);
AT_API THTensor *at_max_pool2d_backward(const THTensor *grad, const THTensor *input, const THTensor *indices);
/* F.max_pool1d's values alone (no indices, no gradient; torch's max_pool1d_impl): one-element lists, stride may be empty */
AT_API THTensor *at_max_pool1d_values(const THTensor *input, const ATIntList *kernel, const ATIntList *stride,
                                      const ATIntList *padding, const ATIntList *dilation, bool ceil_mode);
AT_API THTensor *at_avg_pool2d(const THTensor *input, const ATIntList *kernel, const ATIntList *stride,
                               const ATIntList *padding, bool ceil_mode, bool count_include_pad, ATOptInt divisor);
AT_API THTensor *at_avg_pool2d_backward(const THTensor *grad, const THTensor *input, const ATIntList *kernel,
                                        const ATIntList *stride, const ATIntList *padding, bool ceil_mode,
                                        bool count_include_pad, ATOptInt divisor);
AT_API THTensor *at_adaptive_avg_pool2d(const THTensor *input, const ATIntList *output_size);
AT_API THTensor *at_adaptive_avg_pool2d_backward(const THTensor *grad, const THTensor *input);
/* double-backward helpers: out[p, j] = self[p, indices[p, j]]; adaptive
 * average pooling of self to like's trailing sizes */
AT_API THTensor *at_max_pool2d_take(const THTensor *self, const THTensor *indices);
AT_API THTensor *at_adaptive_avg_pool2d_like(const THTensor *self, const THTensor *like);
AT_API int at_adaptive_max_pool2d(THTensor **outs, const THTensor *input, const ATIntList *output_size);
/* adaptive pooling over the trailing three dims of (N, )C, D, H, W; max's
 * indices are flat d*H*W + h*W + w within each plane */
AT_API THTensor *at_adaptive_avg_pool3d(const THTensor *input, const ATIntList *output_size);
AT_API THTensor *at_adaptive_avg_pool3d_backward(const THTensor *grad, const THTensor *input);
AT_API THTensor *at_adaptive_avg_pool3d_like(const THTensor *self, const THTensor *like);
AT_API int at_adaptive_max_pool3d(THTensor **outs, const THTensor *input, const ATIntList *output_size);
AT_API THTensor *at_adaptive_max_pool3d_backward(const THTensor *grad, const THTensor *input, const THTensor *indices);
AT_API THTensor *at_max_pool3d_take(const THTensor *self, const THTensor *indices);
/* max and average pooling over the trailing three dims of (N, )C, D, H, W;
 * max's indices are flat d*H*W + h*W + w within each plane, as torch */
AT_API int at_max_pool3d(THTensor **outs, const THTensor *input, const ATIntList *kernel, const ATIntList *stride,
                         const ATIntList *padding, const ATIntList *dilation, bool ceil_mode);
AT_API THTensor *at_max_pool3d_backward(const THTensor *grad, const THTensor *input, const THTensor *indices);
AT_API THTensor *at_avg_pool3d(const THTensor *input, const ATIntList *kernel, const ATIntList *stride,
                               const ATIntList *padding, bool ceil_mode, bool count_include_pad, ATOptInt divisor);
AT_API THTensor *at_avg_pool3d_backward(const THTensor *grad, const THTensor *input, const ATIntList *kernel,
                                        const ATIntList *stride, const ATIntList *padding, bool ceil_mode,
                                        bool count_include_pad, ATOptInt divisor);
#endif
