/* Formula helpers for linalg.yaml */
#ifndef THP_FORMULAS_LINALG_H
#define THP_FORMULAS_LINALG_H
#include "THP.h"
/* lu_unpack: the gradient of the packed LU (sizes: its shape) from L's and U's
 * gradients (either may be None): tril(gL, -1) and triu(gU) laid into LU's
 * lower and upper parts, PyTorch's formula */
PyObject *F_lu_unpack_backward(PyObject *grad_L, PyObject *grad_U, PyObject *sizes);
#endif
