/* Distances between the rows of one matrix (pdist) and their gradient. */
#ifndef AT_DISTANCE_H
#define AT_DISTANCE_H
#include "ATen.h"

/* the p-norm distances of rows i < j of the (n, m) self, in the order
 * (0,1), (0,2), ..., (n-2,n-1): n(n-1)/2 values; p = 0 counts differing
 * coordinates, p = inf takes the largest difference */
AT_API THTensor *at_pdist_forward(const THTensor *self, double p);
/* d self of at_pdist_forward, given its result pdist */
AT_API THTensor *at_pdist_backward(const THTensor *grad, const THTensor *self, double p, const THTensor *pdist);
#endif
