/* Derivative helpers of the indexing family. Each is written in terms of
 * declared ops (F_*), so gradients of gradients are recorded too. */
#include "FormulasIndexing.h"
#include "Functions.h"

/* zeros of the given sizes and t's dtype (new ref) */
static PyObject *zeros_of(int ndim, const int64_t *sizes, PyObject *t) {
  return THP_zeros_on(ndim, sizes, ((THPTensor *)t)->t);
}

PyObject *F_index_put_self_grad(PyObject *grad, PyObject *indices, PyObject *accumulate) {
  if (PyObject_IsTrue(accumulate)) return Py_NewRef(grad);
  PyObject *zero = zeros_of(0, NULL, grad);
  PyObject *r = zero ? F_index_put(grad, indices, zero, Py_False) : NULL;
  Py_XDECREF(zero);
  return r;
}

PyObject *F_put_self_grad(PyObject *grad, PyObject *index, PyObject *accumulate) {
  if (PyObject_IsTrue(accumulate)) return Py_NewRef(grad);
  THTensor *ix = ((THPTensor *)index)->t;
  PyObject *zero = zeros_of(ix->ndim, ix->sizes, grad);
  PyObject *r = zero ? F_put(grad, index, zero, Py_False) : NULL;
  Py_XDECREF(zero);
  return r;
}

PyObject *F_masked_select_backward(PyObject *grad, PyObject *self, PyObject *mask) {
  THTensor *s = ((THPTensor *)self)->t, *m = ((THPTensor *)mask)->t;
  int nd;
  int64_t shape[TH_MAX_DIMS];
  if (at_broadcast_sizes(s->ndim, s->sizes, m->ndim, m->sizes, &nd, shape) < 0) return THP_raise();
  PyObject *z = zeros_of(nd, shape, grad);
  PyObject *r = z ? F_masked_scatter(z, mask, grad) : NULL;
  Py_XDECREF(z);
  return r;
}

PyObject *F_masked_scatter_source_grad(PyObject *grad, PyObject *mask, PyObject *sizes) {
  ATIntList l;
  if (fa_intlist(sizes, &l, 0) < 0) return NULL;
  int64_t total = 1;
  for (int i = 0; i < l.n; i++) total *= l.v[i];
  PyObject *sel = F_masked_select(grad, mask);
  if (!sel) return NULL;
  int64_t n = THTensor_numel(((THPTensor *)sel)->t);
  PyObject *flat = NULL;
  if (n == total) {
    flat = Py_NewRef(sel);
  } else {   /* source elements past the mask's count get no gradient */
    PyObject *z = zeros_of(1, &total, grad);
    PyObject *pos = z ? THPTensor_wrap(at_arange(at_scalar_int(0), at_scalar_int(n), at_scalar_int(1), TH_Int64, true)) : NULL;
    PyObject *idx = pos ? PyList_New(1) : NULL;
    if (idx) PyList_SET_ITEM(idx, 0, Py_NewRef(pos));
    flat = idx ? F_index_put(z, idx, sel, Py_False) : NULL;
    Py_XDECREF(z); Py_XDECREF(pos); Py_XDECREF(idx);
  }
  Py_DECREF(sel);
  PyObject *r = flat ? F_reshape(flat, sizes) : NULL;
  Py_XDECREF(flat);
  return r;
}
