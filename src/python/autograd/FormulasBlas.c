/* Gradients of the GEMM family, composed from recorded ops (see Formulas.h
 * for the conventions), so they are differentiable again. */
#include "autograd/Formulas.h"
#include "autograd/FormulasBlas.h"
#include "Functions.h"

/* d(mat1 @ mat2)/d mat2 = mat1^T @ grad, computed in mat2's layout as
 * PyTorch does: when mat2 is a transposed matrix (a Linear weight's t()), the
 * gradient is made as (grad^T @ mat1)^T, so that after the t() node the
 * weight's .grad is contiguous like the weight, with no transposing copy. */
PyObject *F_mm_mat2_backward(PyObject *grad, PyObject *mat1, PyObject *mat2) {
  const THTensor *m = ((THPTensor *)mat2)->t;
  bool transposed = m->ndim == 2 && m->strides[0] == 1 && m->strides[1] == m->sizes[0];
  if (!transposed) {
    PyObject *a = F_t(mat1);
    if (!a) return NULL;
    PyObject *r = F_mm(a, grad);
    Py_DECREF(a);
    return r;
  }
  PyObject *gt = F_t(grad);
  if (!gt) return NULL;
  PyObject *p = F_mm(gt, mat1);
  Py_DECREF(gt);
  if (!p) return NULL;
  PyObject *r = F_t(p);
  Py_DECREF(p);
  return r;
}
