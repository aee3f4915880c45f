/* Formula helpers for the pointwise, unary and binary families (src/ATen/declarations/{pointwise,unary,binary}.yaml) */
#ifndef THP_FORMULAS_POINTWISE_H
#define THP_FORMULAS_POINTWISE_H
#include "THP.h"
PyObject *F_clamp_grad(PyObject *grad, PyObject *self, PyObject *min, PyObject *max);
PyObject *F_clamp_grad_bound(PyObject *grad, PyObject *self, PyObject *min, PyObject *max, PyObject *is_min);
PyObject *F_logit_grad(PyObject *grad, PyObject *self, PyObject *eps);
PyObject *F_xlogy_grad_self(PyObject *grad, PyObject *self, PyObject *other);
#endif
