/* torch.dtype objects, torch.layout and torch.memory_format. */
#include "THP.h"

PyObject *THPDtype_objs[TH_NDTYPES];

static PyObject *dtype_repr(THPDtype *self) {
  return PyUnicode_FromFormat("torch.%s", self->name);
}
static PyObject *dtype_is_floating(THPDtype *self, void *c) { return PyBool_FromLong(THDtype_isFloating(self->dtype)); }
static PyObject *dtype_is_signed(THPDtype *self, void *c) { return PyBool_FromLong(THDtype_info[self->dtype].is_signed); }
static PyObject *dtype_is_complex(THPDtype *self, void *c) { return PyBool_FromLong(THDtype_isComplex(self->dtype)); }
static PyObject *dtype_itemsize(THPDtype *self, void *c) { return PyLong_FromLong(THDtype_size(self->dtype)); }
static PyObject *dtype_reduce(THPDtype *self, PyObject *unused) {
  /* pickles as the module attribute, like torch.float32 */
  return PyUnicode_FromString(self->name);
}
static PyObject *dtype_to_real(THPDtype *self, PyObject *u) { return Py_NewRef(THPDtype_objs[THDtype_toReal(self->dtype)]); }
/* torch: float32 -> complex64, float64 -> complex128, complex unchanged, others refused */
static PyObject *dtype_to_complex(THPDtype *self, PyObject *u) {
  THDtype t = self->dtype;
  if (THDtype_isComplex(t)) return Py_NewRef(self);
  if (t == TH_Float || t == TH_Double) return Py_NewRef(THPDtype_objs[THDtype_toComplex(t)]);
  if (t == TH_Half) { PyErr_SetString(PyExc_NotImplementedError, "cthtorch: complex32 is not implemented"); return NULL; }
  PyErr_Format(PyExc_RuntimeError, "to_complex is not supported for %s", THDtype_info[t].legacy);
  return NULL;
}

static PyGetSetDef dtype_getset[] = {
  {"is_floating_point", (getter)dtype_is_floating, NULL, NULL, NULL},
  {"is_signed", (getter)dtype_is_signed, NULL, NULL, NULL},
  {"is_complex", (getter)dtype_is_complex, NULL, NULL, NULL},
  {"itemsize", (getter)dtype_itemsize, NULL, NULL, NULL},
  {NULL}
};
static PyMethodDef dtype_methods[] = {
  {"__reduce__", (PyCFunction)dtype_reduce, METH_NOARGS, NULL},
  {"to_real", (PyCFunction)dtype_to_real, METH_NOARGS, NULL},
  {"to_complex", (PyCFunction)dtype_to_complex, METH_NOARGS, NULL},
  {NULL}
};

PyTypeObject THPDtypeType = {
  PyVarObject_HEAD_INIT(NULL, 0)
  .tp_name = "torch.dtype",
  .tp_basicsize = sizeof(THPDtype),
  .tp_flags = Py_TPFLAGS_DEFAULT,
  .tp_repr = (reprfunc)dtype_repr,
  .tp_getset = dtype_getset,
  .tp_methods = dtype_methods,
};

PyObject *THPDtype_get(THDtype t) { return THPDtype_objs[t]; }

/* ---- layout and memory_format: named singletons ---- */
typedef struct { PyObject_HEAD const char *name; } THPNamed;
static PyObject *named_repr(THPNamed *self) { return PyUnicode_FromFormat("torch.%s", self->name); }
static PyObject *named_reduce(THPNamed *self, PyObject *u) { return PyUnicode_FromString(self->name); }
static PyMethodDef named_methods[] = { {"__reduce__", (PyCFunction)named_reduce, METH_NOARGS, NULL}, {NULL} };
static PyTypeObject THPLayoutType = {
  PyVarObject_HEAD_INIT(NULL, 0)
  .tp_name = "torch.layout", .tp_basicsize = sizeof(THPNamed), .tp_flags = Py_TPFLAGS_DEFAULT,
  .tp_repr = (reprfunc)named_repr, .tp_methods = named_methods,
};
static PyTypeObject THPMemoryFormatType = {
  PyVarObject_HEAD_INIT(NULL, 0)
  .tp_name = "torch.memory_format", .tp_basicsize = sizeof(THPNamed), .tp_flags = Py_TPFLAGS_DEFAULT,
  .tp_repr = (reprfunc)named_repr, .tp_methods = named_methods,
};
PyObject *THPLayout_strided;
PyObject *THPMemoryFormat_objs[4];

static PyObject *make_named(PyTypeObject *type, const char *name) {
  THPNamed *o = PyObject_New(THPNamed, type);
  if (o) o->name = name;
  return (PyObject *)o;
}

int THP_initDtypes(PyObject *m) {
  if (PyType_Ready(&THPDtypeType) < 0 || PyType_Ready(&THPLayoutType) < 0 ||
      PyType_Ready(&THPMemoryFormatType) < 0)
    return -1;
  for (int i = 0; i < TH_NDTYPES; i++) {
    THPDtype *d = PyObject_New(THPDtype, &THPDtypeType);
    if (!d) return -1;
    d->dtype = (THDtype)i;
    d->name = THDtype_info[i].name;
    THPDtype_objs[i] = (PyObject *)d;
    if (PyModule_AddObjectRef(m, d->name, (PyObject *)d) < 0) return -1;
  }
  static const char *aliases[][2] = {
    {"float", "float32"}, {"double", "float64"}, {"half", "float16"}, {"long", "int64"},
    {"int", "int32"}, {"short", "int16"}, {"uint8", "uint8"}, {"bool", "bool"},
    {"cfloat", "complex64"}, {"cdouble", "complex128"},
  };
  for (size_t i = 0; i < sizeof aliases / sizeof *aliases; i++) {
    PyObject *o = PyObject_GetAttrString(m, aliases[i][1]);
    if (!o || PyModule_AddObject(m, aliases[i][0], o) < 0) return -1;
  }
  THPLayout_strided = make_named(&THPLayoutType, "strided");
  static const char *mf[] = {"contiguous_format", "preserve_format", "channels_last", "channels_last_3d"};
  for (int i = 0; i < 4; i++) {
    THPMemoryFormat_objs[i] = make_named(&THPMemoryFormatType, mf[i]);
    if (!THPMemoryFormat_objs[i] || PyModule_AddObjectRef(m, mf[i], THPMemoryFormat_objs[i]) < 0) return -1;
  }
  if (!THPLayout_strided || PyModule_AddObjectRef(m, "strided", THPLayout_strided) < 0) return -1;
  /* torch's other layouts; only sparse_coo has tensors (cthtorch/_sparse_tensor.py) */
  static const char *layouts[] = {"sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc", "_mkldnn", "jagged"};
  for (size_t i = 0; i < sizeof layouts / sizeof *layouts; i++) {
    PyObject *o = make_named(&THPLayoutType, layouts[i]);
    if (!o || PyModule_AddObject(m, layouts[i], o) < 0) { Py_XDECREF(o); return -1; }
  }
  if (PyModule_AddObjectRef(m, "dtype", (PyObject *)&THPDtypeType) < 0) return -1;
  if (PyModule_AddObjectRef(m, "layout", (PyObject *)&THPLayoutType) < 0) return -1;
  if (PyModule_AddObjectRef(m, "memory_format", (PyObject *)&THPMemoryFormatType) < 0) return -1;
  return 0;
}
