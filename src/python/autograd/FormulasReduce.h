/* Formula helpers for the reduce family (src/ATen/declarations/reduce.yaml) */
#ifndef THP_FORMULAS_REDUCE_H
#define THP_FORMULAS_REDUCE_H
#include "THP.h"
PyObject *F_evenly_distribute(PyObject *grad, PyObject *self, PyObject *result);
PyObject *F_amax_grad(PyObject *grad, PyObject *self, PyObject *result, PyObject *dims, PyObject *keepdim);
PyObject *F_var_grad(PyObject *grad, PyObject *self, PyObject *dims, PyObject *correction, PyObject *keepdim);
PyObject *F_std_grad(PyObject *grad, PyObject *self, PyObject *result, PyObject *dims, PyObject *correction, PyObject *keepdim);
PyObject *F_logsumexp_grad(PyObject *grad, PyObject *self, PyObject *result, PyObject *dims, PyObject *keepdim);
#endif
