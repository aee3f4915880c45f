/* Derivative helpers of the indexing family (src/ATen/declarations/indexing.yaml). */
#ifndef THP_FORMULAS_INDEXING_H
#define THP_FORMULAS_INDEXING_H
#include "Formulas.h"

/* index_put's gradient for self: grad, or grad with the written slots zeroed */
PyObject *F_index_put_self_grad(PyObject *grad, PyObject *indices, PyObject *accumulate);
/* put's gradient for self: the same for a flat index */
PyObject *F_put_self_grad(PyObject *grad, PyObject *index, PyObject *accumulate);
/* masked_select's gradient for self: grad scattered into zeros of the broadcast shape */
PyObject *F_masked_select_backward(PyObject *grad, PyObject *self, PyObject *mask);
/* masked_scatter's gradient for source: the masked grad, zero-padded to source's sizes */
PyObject *F_masked_scatter_source_grad(PyObject *grad, PyObject *mask, PyObject *sizes);
#endif
