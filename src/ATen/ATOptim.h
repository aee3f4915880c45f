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
