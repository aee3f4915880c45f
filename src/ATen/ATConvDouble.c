/* Double backward of conv2d (what a gradient penalty differentiates): the
 * backward's outputs are linear in grad_output and bilinear in (input,
 * weight), so each derivative is another convolution:
 *   d grad_output = conv2d(ggI, W) + conv2d(X, ggW) + ggB
 *   d input       = grad_input  of conv2d(X, ggW) at grad_output
 *   d weight      = grad_weight of conv2d(ggI, W) at grad_output
 * (ggI, ggW, ggB: the incoming gradients of grad_input, grad_weight,
 * grad_bias; any may be absent.) */
#include "ATConv.h"

static THTensor *add_into(THTensor *acc, THTensor *t) {   /* consumes both */
  if (!acc || !t) { THTensor_free(acc); return t ? t : acc; }
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
  if (want_go) {
    THTensor *acc = NULL;
    if (ggI) {
      THTensor *t = at_conv2d(ggI, weight, NULL, stride, padding, dilation, groups);
      if (!t) goto fail;
      acc = add_into(acc, t);
    }
    if (ggW) {
      THTensor *t = at_conv2d(input, ggW, NULL, stride, padding, dilation, groups);
      if (!t) { THTensor_free(acc); goto fail; }
      acc = add_into(acc, t);
    }
    if (ggB) {   /* broadcast over (N, *, H, W): view as (O, 1, 1) */
      THTensor *b = at_view(ggB, &(ATIntList){ 3, { ggB->sizes[0], 1, 1 } });
      if (!b) { THTensor_free(acc); goto fail; }
      if (acc) acc = add_into(acc, b);
      else {
        THTensor *z = at_conv2d(input, weight, NULL, stride, padding, dilation, groups);   /* output shape */
        THTensor *zz = z ? at_mul(z, &(THTensor){ .storage = &(THStorage){ .data = &(double){ 0.0 } },
                                                  .dtype = TH_Double, .wrapped_number = true }, NULL) : NULL;
        THTensor_free(z);
        acc = zz ? add_into(zz, b) : (THTensor_free(b), NULL);
      }
    }
    if ((ggI || ggW || ggB) && !acc) goto fail;
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
