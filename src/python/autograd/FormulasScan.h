/* Formula helpers for scan.yaml */
#ifndef THP_FORMULAS_SCAN_H
#define THP_FORMULAS_SCAN_H
#include "THP.h"
PyObject *F_logcumsumexp_grad(PyObject *grad, PyObject *self, PyObject *result, PyObject *dim, PyObject *reverse);
#endif
