/* Pointwise losses fused into one pass each way (ATLoss.c): smooth L1 / Huber and
 * binary cross entropy with logits, with their first and second derivatives.
 * A reduction is numbered as ATReduction (ATNN.h). */
#ifndef AT_LOSS_H
#define AT_LOSS_H

#include "ATen.h"

/* smooth_l1(self - target, beta); Huber(delta) is delta * smooth_l1(self - target, delta) */
AT_API THTensor *at_smooth_l1_loss(const THTensor *self, const THTensor *target, int64_t reduction, double beta);
AT_API THTensor *at_huber_loss(const THTensor *self, const THTensor *target, int64_t reduction, double delta);
/* scale * smooth_l1 (scale 1: smooth L1; scale = beta = delta: Huber): d loss / d self, times grad_output (a number for a reduced loss, else the loss's shape) */
AT_API THTensor *at_smooth_l1_loss_backward(const THTensor *grad_output, const THTensor *self, const THTensor *target,
                                            int64_t reduction, double beta, double scale);
/* grad times d2 loss / d self2 (the double backward) */
AT_API THTensor *at_smooth_l1_loss_second(const THTensor *grad, const THTensor *self, const THTensor *target,
                                          int64_t reduction, double beta, double scale);

/* weight and pos_weight may be NULL */
AT_API THTensor *at_bce_logits(const THTensor *self, const THTensor *target, const THTensor *weight,
                               const THTensor *pos_weight, int64_t reduction);
/* which 0: d loss / d self; 1: d loss / d target (times grad_output) */
AT_API THTensor *at_bce_logits_backward(const THTensor *grad_output, const THTensor *self, const THTensor *target,
                                        const THTensor *weight, const THTensor *pos_weight, int64_t reduction,
                                        int64_t which);
/* grad times a second derivative: which 0: d2/d self2; 1: d2/d self d target (d2/d target2 is 0) */
AT_API THTensor *at_bce_logits_second(const THTensor *grad, const THTensor *self, const THTensor *target,
                                      const THTensor *weight, const THTensor *pos_weight, int64_t reduction,
                                      int64_t which);

#endif
