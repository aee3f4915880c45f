/* Formula helpers for src/ATen/declarations/unary.yaml */
#ifndef THP_FORMULAS_UNARY_H
#define THP_FORMULAS_UNARY_H
#include "THP.h"
PyObject *F_sinc_grad(PyObject *grad, PyObject *self);
PyObject *F_i1_grad(PyObject *grad, PyObject *self, PyObject *result);
PyObject *F_i1e_grad(PyObject *grad, PyObject *self, PyObject *result);
#endif
