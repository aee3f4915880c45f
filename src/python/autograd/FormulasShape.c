/* Formula helpers for shape.yaml (see FormulasShape.h). The gradients are
 * built from declared ops (narrow, select, reshape), so they are
 * differentiable again. */
#include "autograd/FormulasShape.h"
#include "autograd/Formulas.h"
#include "Functions.h"

static bool legacy_empty_sizes(PyObject *s) {
  return PyTuple_GET_SIZE(s) == 1 && PyLong_AsLongLong(PyTuple_GET_ITEM(s, 0)) == 0;
}

PyObject *F_cat_backward(PyObject *grad, PyObject *sizes, PyObject *dim) {
  Py_ssize_t n = PyTuple_GET_SIZE(sizes);
  PyObject *out = PyTuple_New(n), *zero = PyLong_FromLong(0);
  if (!out || !zero) goto fail;
  int nd = ((THPTensor *)grad)->t->ndim;
  long long d = PyLong_AsLongLong(dim), start = 0;
  if (d < 0) d += nd;
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *s = PyTuple_GET_ITEM(sizes, i), *g;
    if (legacy_empty_sizes(s) && nd != 1) {
      /* an empty (0,) gradient: the first 0 elements of grad flattened */
      PyObject *f, *m1 = PyLong_FromLong(-1);
      PyObject *shape = m1 ? PyTuple_Pack(1, m1) : NULL;
      Py_XDECREF(m1);
      f = shape ? F_reshape(grad, shape) : NULL;
      Py_XDECREF(shape);
      g = f ? F_narrow(f, zero, zero, zero) : NULL;
      Py_XDECREF(f);
    } else {
      PyObject *len = PyTuple_GET_ITEM(s, d), *st = PyLong_FromLongLong(start), *dd = PyLong_FromLongLong(d);
      g = st && dd ? F_narrow(grad, dd, st, len) : NULL;
      start += PyLong_AsLongLong(len);
      Py_XDECREF(st);
      Py_XDECREF(dd);
    }
    if (!g) goto fail;
    PyTuple_SET_ITEM(out, i, g);
  }
  Py_DECREF(zero);
  return out;
fail:
  Py_XDECREF(out);
  Py_XDECREF(zero);
  return NULL;
}

PyObject *F_stack_backward(PyObject *grad, PyObject *sizes, PyObject *dim) {
  Py_ssize_t n = PyTuple_GET_SIZE(sizes);
  PyObject *out = PyTuple_New(n);
  for (Py_ssize_t i = 0; out && i < n; i++) {
    PyObject *idx = PyLong_FromSsize_t(i), *g = idx ? F_select_int(grad, dim, idx) : NULL;
    Py_XDECREF(idx);
    if (!g) Py_CLEAR(out);
    else PyTuple_SET_ITEM(out, i, g);
  }
  return out;
}

PyObject *F_negate_ints(PyObject *ints) {
  PyObject *f = PySequence_Fast(ints, "negate_ints: expected a sequence"), *out = NULL;
  if (!f) return NULL;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(f);
  out = PyTuple_New(n);
  for (Py_ssize_t i = 0; out && i < n; i++) {
    PyObject *v = PyNumber_Negative(PySequence_Fast_GET_ITEM(f, i));
    if (!v) Py_CLEAR(out);
    else PyTuple_SET_ITEM(out, i, v);
  }
  Py_DECREF(f);
  return out;
}

PyObject *F_spatial_sizes(PyObject *sizes) {
  Py_ssize_t n = PyTuple_GET_SIZE(sizes);
  return PyTuple_GetSlice(sizes, n - 2, n);
}
