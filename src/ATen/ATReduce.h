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
} ATReduce2D;

/* dims NULL or empty: all dims. -1 on error (dim out of range, repeated dim). */
AT_API int at_reduce_prepare(const THTensor *self, const ATIntList *dims, bool keepdim, ATReduce2D *r);
AT_API void at_reduce_release(ATReduce2D *r);
/* The output tensor for a reduction (out= checked/resized), new ref. */
AT_API THTensor *at_reduce_output(const ATReduce2D *r, THDtype dtype, THTensor *out);

#endif
