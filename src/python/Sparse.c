/* _C._sparse_coalesce and _C._sparse_add: ATSparse.c's kernels for the
 * Python sparse COO class (cthtorch/_sparse_tensor.py), and the sparse side
 * of gradient accumulation (THP_sparse_accumulate, for Formulas.c). */
#include "THP.h"
#include "../ATen/ATSparse.h"

/* (indices, values) from the kernel's results, or None when the values'
 * dtype has no kernel (the caller then takes its dense-op path) */
static PyObject *pair_or_none(int rc, THTensor *i, THTensor *v) {
  if (rc < 0) {
    if (THError_kind() == TH_ERR_NOTIMPL) { THError_clear(); Py_RETURN_NONE; }
    return THP_raise();
  }
  PyObject *pi = THPTensor_wrap(i), *pv = pi ? THPTensor_wrap(v) : NULL;
  if (!pi) THTensor_free(v);
  if (!pv) { Py_XDECREF(pi); return NULL; }
  return Py_BuildValue("(NN)", pi, pv);
}

/* _sparse_coalesce(indices, values, sparse_sizes) -> (indices, values) | None */
PyObject *THP_sparse_coalesce(PyObject *m, PyObject *args) {
  PyObject *i, *v, *sizes;
  if (!PyArg_ParseTuple(args, "O!O!O:_sparse_coalesce", &THPTensorType, &i, &THPTensorType, &v, &sizes)) return NULL;
  PyObject *seq = PySequence_Fast(sizes, "_sparse_coalesce: sparse_sizes must be a sequence of ints");
  if (!seq) return NULL;
  ATIntList ss = {.n = (int)PySequence_Fast_GET_SIZE(seq)};
  if (ss.n > TH_MAX_DIMS) { Py_DECREF(seq); PyErr_SetString(PyExc_ValueError, "_sparse_coalesce: too many dims"); return NULL; }
  for (int k = 0; k < ss.n; k++) {
    ss.v[k] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, k));
    if (ss.v[k] == -1 && PyErr_Occurred()) { Py_DECREF(seq); return NULL; }
  }
  Py_DECREF(seq);
  THTensor *ri, *rv;
  int rc;
  Py_BEGIN_ALLOW_THREADS
  rc = at_sparse_coalesce(((THPTensor *)i)->t, ((THPTensor *)v)->t, &ss, &ri, &rv);
  Py_END_ALLOW_THREADS
  return pair_or_none(rc, ri, rv);
}

/* _sparse_add(t_indices, t_values, s_indices, s_values, alpha) -> (indices, values) | None */
PyObject *THP_sparse_add(PyObject *m, PyObject *args) {
  PyObject *ti, *tv, *si, *sv;
  double alpha;
  if (!PyArg_ParseTuple(args, "O!O!O!O!d:_sparse_add", &THPTensorType, &ti, &THPTensorType, &tv, &THPTensorType, &si,
                        &THPTensorType, &sv, &alpha))
    return NULL;
  THTensor *ri, *rv;
  int rc;
  Py_BEGIN_ALLOW_THREADS
  rc = at_sparse_add(((THPTensor *)ti)->t, ((THPTensor *)tv)->t, ((THPTensor *)si)->t, ((THPTensor *)sv)->t, alpha,
                     &ri, &rv);
  Py_END_ALLOW_THREADS
  return pair_or_none(rc, ri, rv);
}

/* .grad of v after a gradient g arrives when either is sparse: what torch's
 * AccumulateGrad does for the sparse layout (cthtorch/_sparse_ops.py's
 * accumulate_grad). Returns 0 with v->grad updated, -1 with an error set. */
int THP_sparse_accumulate(THPTensor *v, PyObject *g) {
  PyObject *mod = PyImport_ImportModule("cthtorch._sparse_ops");
  if (!mod) return -1;
  PyObject *r = PyObject_CallMethod(mod, "accumulate_grad", "OOOO", (PyObject *)v, v->grad ? v->grad : Py_None, g,
                                    THP_grad_enabled() ? Py_True : Py_False);
  Py_DECREF(mod);
  if (!r) return -1;
  Py_XSETREF(v->grad, r);
  return 0;
}

/* THP_validate_grad for a sparse gradient: its shape must be the input's
 * (torch does not reduce broadcast dims of a sparse gradient). */
PyObject *THP_validate_sparse_grad(PyObject *grad, const THPInputMeta *m, THPNode *from) {
  PyObject *shape = PyObject_GetAttrString(grad, "shape");
  if (!shape) return NULL;
  bool same = PyTuple_Check(shape) && PyTuple_GET_SIZE(shape) == m->ndim;
  for (int d = 0; same && d < m->ndim; d++) same = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, d)) == m->sizes[d];
  Py_DECREF(shape);
  if (PyErr_Occurred()) return NULL;
  if (!same) {
    PyErr_Format(PyExc_RuntimeError, "Function %s returned an invalid gradient at index 0 - got a sparse gradient "
                 "of another shape than the input's", Py_TYPE(from)->tp_name);
    return NULL;
  }
  return Py_NewRef(grad);
}
