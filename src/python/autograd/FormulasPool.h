/* Pooling under autograd recorded as torch records it: adaptive average pooling to one value per channel
 * is torch's mean over the pooled dims (MeanBackward1); other sizes keep the pool op's own node */
#ifndef THP_FORMULAS_POOL_H
#define THP_FORMULAS_POOL_H
#include "THP.h"
/* whether every output size is 1 (global pooling) on an input the pool op takes (one or two more dims,
 * channels and pooled dims not empty): elsewhere the op itself runs, and raises its own error */
bool THP_pool_is_global(PyObject *self, const ATIntList *output_size);
/* mean of self over its last output_size->n dims, kept as size-1 dims */
PyObject *THP_global_avg_pool_graph(PyObject *self, const ATIntList *output_size);
#endif
