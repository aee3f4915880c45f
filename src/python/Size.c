/* torch.Size: a tuple of ints that prints as torch.Size([2, 3]). */
#include "THP.h"

PyObject *THPSize_new(int ndim, const int64_t *sizes) {
  PyObject *s = THPSizeType.tp_alloc(&THPSizeType, ndim);
  if (!s) return NULL;
  for (int i = 0; i < ndim; i++) {
    PyObject *v = PyLong_FromLongLong(sizes[i]);
    if (!v) { Py_DECREF(s); return NULL; }
    PyTuple_SET_ITEM(s, i, v);
  }
  return s;
}

static PyObject *size_new(PyTypeObject *tp, PyObject *args, PyObject *kw) {
  PyObject *self = PyTuple_Type.tp_new(tp, args, kw);
  if (!self) return NULL;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(self); i++) {
    PyObject *v = PyTuple_GET_ITEM(self, i);
    if (!PyLong_Check(v) && !PyIndex_Check(v)) {
      PyErr_Format(PyExc_TypeError, "torch.Size() takes an iterable of 'int' (item %zd is '%s')", i,
                   Py_TYPE(v)->tp_name);
      Py_DECREF(self);
      return NULL;
    }
    if (!PyLong_Check(v) || THPTensor_Check(v)) {   /* normalise 0-d tensors / numpy ints */
      PyObject *iv = PyNumber_Index(v);
      if (!iv) { Py_DECREF(self); return NULL; }
      Py_SETREF(((PyTupleObject *)self)->ob_item[i], iv);
    }
  }
  return self;
}

static PyObject *size_repr(PyObject *self) {
  Py_ssize_t n = PyTuple_GET_SIZE(self);
  PyObject *parts = PyList_New(n);
  if (!parts) return NULL;
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *r = PyObject_Repr(PyTuple_GET_ITEM(self, i));
    if (!r) { Py_DECREF(parts); return NULL; }
    PyList_SET_ITEM(parts, i, r);
  }
  PyObject *sep = PyUnicode_FromString(", ");
  PyObject *joined = sep ? PyUnicode_Join(sep, parts) : NULL;
  Py_XDECREF(sep);
  Py_DECREF(parts);
  if (!joined) return NULL;
  PyObject *r = PyUnicode_FromFormat("torch.Size([%U])", joined);
  Py_DECREF(joined);
  return r;
}

static PyObject *wrap_tuple(PyObject *t) {
  if (!t || !PyTuple_Check(t)) return t;
  PyObject *args = PyTuple_Pack(1, t);
  Py_DECREF(t);
  if (!args) return NULL;
  PyObject *s = PyTuple_Type.tp_new(&THPSizeType, args, NULL);
  Py_DECREF(args);
  return s;
}

static PyObject *size_subscript(PyObject *self, PyObject *item) {
  PyObject *r = PyTuple_Type.tp_as_mapping->mp_subscript(self, item);
  return PySlice_Check(item) ? wrap_tuple(r) : r;
}
static PyObject *size_concat(PyObject *a, PyObject *b) {
  return wrap_tuple(PyTuple_Type.tp_as_sequence->sq_concat(a, b));
}
static PyObject *size_repeat(PyObject *a, Py_ssize_t n) {
  return wrap_tuple(PyTuple_Type.tp_as_sequence->sq_repeat(a, n));
}

/* torch's: items beyond int64 are its ValueError; the product wraps as int64 */
static PyObject *size_numel(PyObject *self, PyObject *u) {
  uint64_t n = 1;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(self); i++) {
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(PyTuple_GET_ITEM(self, i), &overflow);
    if (overflow) { PyErr_SetString(PyExc_ValueError, "Overflow when unpacking long long"); return NULL; }
    if (v == -1 && PyErr_Occurred()) return NULL;
    n *= (uint64_t)v;
  }
  return PyLong_FromLongLong((long long)n);
}
static PyObject *size_reduce(PyObject *self, PyObject *u) {
  PyObject *t = PySequence_Tuple(self);
  if (!t) return NULL;
  return Py_BuildValue("(O(N))", Py_TYPE(self), t);
}

static PyMethodDef size_methods[] = {
  {"numel", size_numel, METH_NOARGS, "Number of elements a tensor of this size holds."},
  {"__reduce__", size_reduce, METH_NOARGS, NULL},
  {NULL}
};
static PyMappingMethods size_as_mapping = { .mp_subscript = size_subscript };
static PySequenceMethods size_as_sequence;

PyTypeObject THPSizeType = {
  PyVarObject_HEAD_INIT(NULL, 0)
  .tp_name = "torch.Size",
  .tp_basicsize = sizeof(PyTupleObject) - sizeof(PyObject *),
  .tp_itemsize = sizeof(PyObject *),
  .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_TUPLE_SUBCLASS,
  .tp_new = size_new,
  .tp_repr = size_repr,
  .tp_methods = size_methods,
  .tp_as_mapping = &size_as_mapping,
  .tp_as_sequence = &size_as_sequence,
};

int THP_initSize(PyObject *m) {
  THPSizeType.tp_base = &PyTuple_Type;
  size_as_sequence = *PyTuple_Type.tp_as_sequence;
  size_as_sequence.sq_concat = size_concat;
  size_as_sequence.sq_repeat = size_repeat;
  if (PyType_Ready(&THPSizeType) < 0) return -1;
  return PyModule_AddObjectRef(m, "Size", (PyObject *)&THPSizeType);
}
