/* Formula helpers for src/ATen/declarations/binary.yaml */
#ifndef THP_FORMULAS_BINARY_H
#define THP_FORMULAS_BINARY_H
#include "THP.h"
/* raises torch's RuntimeError for an op whose derivative torch leaves undefined */
PyObject *F_aten_not_implemented(PyObject *name);
/* atan2's (grad_self, grad_other), each None where output_mask says so */
PyObject *F_atan2_grad(PyObject *grad, PyObject *self, PyObject *other, PyObject *output_mask);
#endif
