/* Formula helpers for blas.yaml */
#ifndef THP_FORMULAS_BLAS_H
#define THP_FORMULAS_BLAS_H
#include "THP.h"
PyObject *F_mm_mat2_backward(PyObject *grad, PyObject *mat1, PyObject *mat2);
#endif
