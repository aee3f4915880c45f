/* The reduction driver: any reduction over a set of dims becomes a 2-d
 * problem out[m] = reduce_k x[m*sm + k*sk] (M outputs, K elements each),
 * with kept dims (in order) forming m and reduced dims forming k. */
#ifndef AT_REDUCE_H
#define AT_REDUCE_H

#include "ATen.h"

typedef struct {
  int64_t M, K, sm, sk;            /* strides in elements */
  const char *data;                /* first element */
  THTensor *holder;                /* a contiguous copy when the view could not be collapsed */
  int out_ndim;
  int64_t out_sizes[TH_MAX_DIMS];  /* with keepdim applied */
  bool reduced[TH_MAX_DIMS];       /* which input dims are reduced */
  THDtype dtype;
  /* k runs over rows of row_len elements that torch's iteration visits as its inner loop
   * (the input's innermost mergeable reduced dims, unit-stride when row_vec); a full sum
   * adds their sums in order (K itself when the dims collapsed) */
  int64_t row_len;
  bool row_vec;
} ATReduce2D;

/* dims NULL or empty: all dims. -1 on error (dim out of range, repeated dim). */
AT_API int at_reduce_prepare(const THTensor *self, const ATIntList *dims, bool keepdim, ATReduce2D *r);
AT_API void at_reduce_release(ATReduce2D *r);
/* The output tensor for a reduction (out= checked/resized), new ref. */
AT_API THTensor *at_reduce_output(const ATReduce2D *r, THDtype dtype, THTensor *out);

/* ---- reductions beyond sum/mean: max/min (with indices), amax/amin, argmax, all/any, prod,
 * var/std, logsumexp, and the backward helpers that scatter gradients to selected positions ---- */
AT_API THTensor *at_max_all(const THTensor *self, bool is_max);
AT_API int at_max_dim(THTensor **outs, const THTensor *self, int64_t dim, bool keepdim, bool is_max);
AT_API THTensor *at_amax(const THTensor *self, const ATIntList *dims, bool keepdim, bool is_max);
AT_API THTensor *at_argmax(const THTensor *self, ATOptInt dim, bool keepdim, bool is_max);
AT_API THTensor *at_all_any(const THTensor *self, const ATIntList *dims, bool keepdim, bool is_all);
AT_API THTensor *at_prod(const THTensor *self, const ATIntList *dims, bool keepdim, THDtype dtype);
AT_API THTensor *at_var(const THTensor *self, const ATIntList *dims, double correction, bool keepdim, bool take_sqrt);
AT_API THTensor *at_logsumexp(const THTensor *self, const ATIntList *dims, bool keepdim);
/* zeros of `sizes` with grad written (accumulated) at `indices` along dim */
AT_API THTensor *at_scatter_grad(const THTensor *grad, int64_t dim, const THTensor *indices, const ATIntList *sizes,
                                 bool keepdim);
AT_API THTensor *at_gather_grad(const THTensor *self, int64_t dim, const THTensor *indices, bool keepdim);
AT_API THTensor *at_prod_backward(const THTensor *grad, const THTensor *self, const ATIntList *dims, bool keepdim);
/* The derivatives of prod_backward for an incoming ggI:
 * with respect to grad (grad's shape) and to self (self's shape). */
AT_API THTensor *at_prod_backward_ggrad(const THTensor *ggI, const THTensor *grad, const THTensor *self,
                                        const ATIntList *dims, bool keepdim);
AT_API THTensor *at_prod_backward_gself(const THTensor *ggI, const THTensor *grad, const THTensor *self,
                                        const ATIntList *dims, bool keepdim);

#endif
