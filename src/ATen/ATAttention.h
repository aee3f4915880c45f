/* Scaled dot-product attention as one fused kernel (forward and backward),
 * the CPU path behind F.scaled_dot_product_attention. q: (B, Hq, L, E) or
 * (B, L, E); k: (B, Hk, S, E); v: (B, Hk, S, Ev), Hq a multiple of Hk (grouped
 * query attention); float32 or float64, any strides. attn_mask: NULL, bool
 * (true = attend) or q's dtype (added to the scores), broadcastable to
 * (B, Hq, L, S). Dropout keeps a score with probability 1 - dropout_p from a
 * counter-based hash of (seed, position), so the backward replays the forward's
 * mask without storing it. */
#ifndef AT_ATTENTION_H
#define AT_ATTENTION_H

#include "ATen.h"

/* outs: output (B, Hq, L, Ev) laid out in q's dimension order, logsumexp (B, Hq, L) of each row's scores
 * (contiguous) */
AT_API int at_sdpa_fused(THTensor **outs, const THTensor *q, const THTensor *k, const THTensor *v,
                         const THTensor *attn_mask, double dropout_p, bool is_causal, double scale, int64_t seed);
/* outs: grad q, grad k, grad v (each in its input's dimension order), grad attn_mask (of the broadcast shape
 * (B, Hq, L, S); NULL unless the mask is a float one and output_mask, when given, asks for it) */
AT_API int at_sdpa_fused_backward(THTensor **outs, const THTensor *grad, const THTensor *q, const THTensor *k,
                                  const THTensor *v, const THTensor *attn_mask, const THTensor *out,
                                  const THTensor *lse, double dropout_p, bool is_causal, double scale, int64_t seed,
                                  const ATIntList *output_mask);
#endif
