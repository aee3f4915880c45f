/* Fused optimizer updates: one pass over a parameter instead of the four or
 * five elementwise ops the textbook step takes (each a full read and write
 * of tensors the size of the model). */
#pragma once
#include "ATen.h"

/* SGD, as torch's single-tensor step, rounding op by op:
 *   d = grad (negated if maximize); d = d + wd*p
 *   buf = first ? d : buf*momentum + (1-dampening)*d
 *   d = nesterov ? d + momentum*buf : buf      (momentum != 0)
 *   p = p - lr*d
 * p, grad and buf (NULL when momentum == 0) must be contiguous float32 or
 * float64 tensors of one dtype and size; returns -1 otherwise, with the
 * tensors untouched, so the caller can take the unfused path. */
AT_API int at_sgd_step(THTensor *p, const THTensor *grad, THTensor *buf, double lr, double momentum,
                       double dampening, double weight_decay, bool nesterov, bool maximize, bool first);

/* Adam/AdamW, as torch's single-tensor step with its CPU kernels' vector
 * rounding (lerp as one fma, addcmul and addcdiv as separately rounded
 * products and sums):
 *   g = grad (negated if maximize); Adam: g = g + wd*p; AdamW: p = p*(1-lr*wd)
 *   m = lerp(m, g, 1-beta1); v = v*beta2 + (1-beta2)*g*g
 *   vmax = max(vmax, v) (amsgrad, vmax != NULL)
 *   p = p + (-lr/bc1)*m / (sqrt(v or vmax)/sqrt(bc2) + eps)
 * with bc1 = 1-beta1^step, bc2 = 1-beta2^step. Same tensor requirements
 * and failure contract as at_sgd_step. */
AT_API int at_adam_step(THTensor *p, const THTensor *grad, THTensor *m, THTensor *v, THTensor *vmax, double lr,
                        double beta1, double beta2, double eps, double weight_decay, double step, bool maximize,
                        bool decoupled);
