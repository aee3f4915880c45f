/* Double backward of conv2d (what a gradient penalty differentiates): the
 * backward's outputs are linear in grad_output and bilinear in (input,
 * weight), so each derivative is another convolution:
 *   d grad_output = conv2d(ggI, W) + conv2d(X, ggW) + ggB
 *   d input       = grad_input  of conv2d(X, ggW) at grad_output
 *   d weight      = grad_weight of conv2d(ggI, W) at grad_output
 * (ggI, ggW, ggB: the incoming gradients of grad_input, grad_weight,
 * grad_bias; any may be absent.) */
#include "ATConv.h"

#include <string.h>

/* acc + t, consuming both; a NULL acc means "nothing yet" (t is taken as is) */
static THTensor *add_into(THTensor *acc, THTensor *t) {
  if (!acc) return t;
  THTensor *r = at_add(acc, t, at_scalar_int(1), NULL);
  THTensor_free(acc); THTensor_free(t);
  return r;
}

int at_conv2d_double_backward(THTensor **outs, const THTensor *ggI, const THTensor *ggW, const THTensor *ggB,
                              const THTensor *grad, const THTensor *input, const THTensor *weight,
                              const ATIntList *stride, const ATIntList *padding, const ATIntList *dilation,
                              int64_t groups, const ATIntList *output_mask) {
  outs[0] = outs[1] = outs[2] = NULL;
  bool want_go = !output_mask || (output_mask->n > 0 && output_mask->v[0]);
  bool want_x = !output_mask || (output_mask->n > 1 && output_mask->v[1]);
  bool want_w = !output_mask || (output_mask->n > 2 && output_mask->v[2]);
  ATIntList only_i = { 3, { 1, 0, 0 } }, only_w = { 3, { 0, 1, 0 } };
  THTensor *tmp[3];
  if (want_go && (ggI || ggW || ggB)) {
    THTensor *acc = NULL;
    if (ggI && !(acc = add_into(acc, at_conv2d(ggI, weight, NULL, stride, padding, dilation, groups)))) goto fail;
    if (ggW) {
      THTensor *t = at_conv2d(input, ggW, NULL, stride, padding, dilation, groups);
      if (!t || !(acc = add_into(acc, t))) { THTensor_free(acc); goto fail; }
    }
    if (ggB) {   /* broadcast over (N, O, H, W): view as (O, 1, 1) onto zeros shaped like grad_output */
      if (!acc && (acc = THTensor_new(grad->dtype, grad->ndim, grad->sizes)))
        memset(THTensor_data(acc), 0, THTensor_numel(acc) * THDtype_size(grad->dtype));
      THTensor *b = acc ? at_reshape(ggB, &(ATIntList){ 3, { ggB->sizes[0], 1, 1 } }) : NULL;
      if (!b || !(acc = add_into(acc, b))) { THTensor_free(acc); goto fail; }
    }
    outs[0] = acc;
  }
  if (want_x && ggW) {
    if (at_conv2d_backward(tmp, grad, input, ggW, stride, padding, dilation, groups, &only_i) < 0) goto fail;
    outs[1] = tmp[0];
    THTensor_free(tmp[1]); THTensor_free(tmp[2]);
  }
  if (want_w && ggI) {
    if (at_conv2d_backward(tmp, grad, ggI, weight, stride, padding, dilation, groups, &only_w) < 0) goto fail;
    outs[2] = tmp[1];
    THTensor_free(tmp[0]); THTensor_free(tmp[2]);
  }
  return 0;
fail:
  for (int i = 0; i < 3; i++) { THTensor_free(outs[i]); outs[i] = NULL; }
  return -1;
}
