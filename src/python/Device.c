/* torch.device: a (type, index) pair. "cuda" devices can always be named;
 * putting a tensor on one first initialises CUDA (Cuda.c), which raises where
 * libTHC or a GPU is missing. Every other device type torch knows can be
 * named too (programs test torch.device("mps") and the like), but a tensor
 * cannot go there (unsupported_device). */
#include "THP.h"
#include <ctype.h>
#include <errno.h>
#include <limits.h>

/* cpu, cuda and meta keep numbers 0, 1, 2: the C layer tests those */
static const char *type_names[] = {"cpu", "cuda", "meta", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep",
                                   "hip", "ve", "fpga", "maia", "xla", "lazy", "vulkan", "mps", "hpu", "mtia",
                                   "privateuseone"};
#define N_TYPES ((int)(sizeof type_names / sizeof *type_names))
static PyObject *cpu_device;

static int parse_type(const char *s, Py_ssize_t n, int *type) {
  for (int i = 0; i < N_TYPES; i++)
    if ((Py_ssize_t)strlen(type_names[i]) == n && !strncmp(s, type_names[i], n)) { *type = i; return 0; }
  PyObject *name = PyUnicode_FromStringAndSize(s, n);
  if (!name) return -1;
  PyErr_Format(PyExc_RuntimeError,   /* torch's list, in its order */
               "Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, lazy, "
               "vulkan, mps, meta, hpu, mtia, privateuseone device type at start of device string: %U", name);
  Py_DECREF(name);
  return -1;
}

/* A tensor asked for on a device type cthtorch has no tensors for: xpu and
 * mtia raise torch's "not compiled" AssertionError, the rest say what works. */
static int unsupported_device(int type) {
  const char *name = type_names[type];
  if (!strcmp(name, "xpu") || !strcmp(name, "mtia")) {
    PyErr_Format(PyExc_AssertionError, "Torch not compiled with %s enabled", !strcmp(name, "xpu") ? "XPU" : "MTIA");
    return -1;
  }
  PyErr_Format(PyExc_NotImplementedError,
               "cthtorch has no '%s' device: tensors can be made on cpu (and on cuda where a GPU is present)", name);
  return -1;
}

/* A device index fits PyTorch's DeviceIndex (int8): out of range raises
 * rather than wrap or truncate. */
static int check_index(long long v, int *index) {
  if (v < 0) { PyErr_SetString(PyExc_RuntimeError, "Device index must not be negative"); return -1; }
  if (v > INT8_MAX) { PyErr_Format(PyExc_RuntimeError, "Device index %lld is out of range", v); return -1; }
  *index = (int)v;
  return 0;
}

/* torch's form: a name of letters and underscores, then optionally ':' and
 * an index without leading zeros; the form is checked before the name. */
static int parse_string(PyObject *str, int *type, int *index) {
  Py_ssize_t n;
  const char *s = PyUnicode_AsUTF8AndSize(str, &n);
  if (!s) return -1;
  if (n == 0) { PyErr_SetString(PyExc_RuntimeError, "Device string must not be empty"); return -1; }
  Py_ssize_t k = 0;
  while (k < n && (isalpha((unsigned char)s[k]) || s[k] == '_')) k++;
  bool ok = k > 0, has_index = ok && k < n;
  if (has_index) {
    const char *d = s + k + 1;
    Py_ssize_t nd = n - k - 1;
    ok = s[k] == ':' && nd > 0 && !(d[0] == '0' && nd > 1);
    for (Py_ssize_t j = 0; ok && j < nd; j++) ok = isdigit((unsigned char)d[j]) != 0;
  }
  if (!ok) { PyErr_Format(PyExc_RuntimeError, "Invalid device string: '%s'", s); return -1; }
  if (parse_type(s, k, type) < 0) return -1;
  *index = -1;
  if (!has_index) return 0;
  errno = 0;
  long long v = strtoll(s + k + 1, NULL, 10);
  if (errno == ERANGE) v = LLONG_MAX;   /* out of range below, as any index past int8 */
  return check_index(v, index);
}

/* A device index given as a Python int (torch.device(1), torch.device('cuda', 1)). */
static int index_from_int(PyObject *o, int *index) {
  int overflow;
  long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
  if (overflow) { PyErr_SetString(PyExc_ValueError, "Overflow when unpacking long long"); return -1; }
  if (v == -1 && PyErr_Occurred()) return -1;
  return check_index(v, index);
}

static PyObject *make(PyTypeObject *tp, int type, int index) {
  THPDevice *d = (THPDevice *)tp->tp_alloc(tp, 0);
  if (!d) return NULL;
  d->type = type;
  d->index = index;
  return (PyObject *)d;
}

static PyObject *device_new(PyTypeObject *tp, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"type", "index", NULL};
  PyObject *t, *idx = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O:device", kwlist, &t, &idx)) return NULL;
  if (THPDevice_Check(t)) { Py_INCREF(t); return t; }
  int type, index = -1;
  if (PyLong_Check(t)) {
    if (index_from_int(t, &index) < 0) return NULL;
    return make(tp, 1, index);
  }
  if (!PyUnicode_Check(t)) {
    PyErr_Format(PyExc_TypeError, "device() received an invalid combination of arguments - got (%s)",
                 Py_TYPE(t)->tp_name);
    return NULL;
  }
  if (parse_string(t, &type, &index) < 0) return NULL;
  static int warned_mkldnn;   /* once per process, as torch's */
  if (!strcmp(type_names[type], "mkldnn") && !warned_mkldnn) {
    warned_mkldnn = 1;
    if (PyErr_WarnEx(PyExc_UserWarning, "'mkldnn' is no longer used as device type. So torch.device('mkldnn') "
                     "will be deprecated and removed in the future. Please use other valid device types instead.",
                     1) < 0)
      return NULL;
  }
  if (idx != Py_None) {
    if (index >= 0) {
      PyErr_SetString(PyExc_RuntimeError, "type (string) must not include an index because index was passed explicitly");
      return NULL;
    }
    if (PyBool_Check(idx) || !PyIndex_Check(idx)) {
      PyErr_Format(PyExc_TypeError, "device(): argument 'index' (position 2) must be int, not %s",
                   Py_TYPE(idx)->tp_name);
      return NULL;
    }
    PyObject *i = PyNumber_Index(idx);   /* a 0-d integer tensor too */
    int rc = i ? index_from_int(i, &index) : -1;
    Py_XDECREF(i);
    if (rc < 0) return NULL;
  }
  return make(tp, type, index);
}

static PyObject *device_repr(THPDevice *d) {
  if (d->index >= 0) return PyUnicode_FromFormat("device(type='%s', index=%d)", type_names[d->type], d->index);
  return PyUnicode_FromFormat("device(type='%s')", type_names[d->type]);
}
static PyObject *device_str(THPDevice *d) {
  if (d->index >= 0) return PyUnicode_FromFormat("%s:%d", type_names[d->type], d->index);
  return PyUnicode_FromString(type_names[d->type]);
}
static PyObject *device_type(THPDevice *d, void *c) { return PyUnicode_FromString(type_names[d->type]); }
static PyObject *device_index(THPDevice *d, void *c) {
  if (d->index < 0) Py_RETURN_NONE;
  return PyLong_FromLong(d->index);
}
static PyObject *device_richcompare(PyObject *a, PyObject *b, int op) {
  if (!THPDevice_Check(a) || !THPDevice_Check(b) || (op != Py_EQ && op != Py_NE)) Py_RETURN_NOTIMPLEMENTED;
  THPDevice *x = (THPDevice *)a, *y = (THPDevice *)b;
  bool eq = x->type == y->type && x->index == y->index;
  return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}
static Py_hash_t device_hash(THPDevice *d) { return (Py_hash_t)(d->type * 1000003 + d->index + 2); }
static PyObject *device_reduce(THPDevice *d, PyObject *u) {
  PyObject *args = d->index >= 0 ? Py_BuildValue("(si)", type_names[d->type], d->index)
                                 : Py_BuildValue("(s)", type_names[d->type]);
  if (!args) return NULL;
  return Py_BuildValue("(ON)", Py_TYPE(d), args);
}

static PyGetSetDef device_getset[] = {
  {"type", (getter)device_type, NULL, NULL, NULL},
  {"index", (getter)device_index, NULL, NULL, NULL},
  {NULL}
};
/* `with torch.device(d):` makes d the default device for factories inside the block; leaving restores the
   default the block found (nested blocks unwind). The state and the check of which devices can be defaults
   live in cthtorch/_ops/torch_api.py, next to set_default_device. */
static PyObject *call_device_context(const char *fn, PyObject *arg) {
  PyObject *mod = PyImport_ImportModule("cthtorch._ops.torch_api");
  if (!mod) return NULL;
  PyObject *r = arg ? PyObject_CallMethod(mod, fn, "O", arg) : PyObject_CallMethod(mod, fn, NULL);
  Py_DECREF(mod);
  return r;
}

static PyObject *device_enter(PyObject *self, PyObject *noargs) {
  (void)noargs;
  PyObject *r = call_device_context("_device_context_enter", self);
  if (!r) return NULL;
  Py_DECREF(r);
  return Py_NewRef(self);
}

static PyObject *device_exit(PyObject *self, PyObject *args) {
  (void)self; (void)args;
  PyObject *r = call_device_context("_device_context_exit", NULL);
  if (!r) return NULL;
  Py_DECREF(r);
  Py_RETURN_NONE;
}

static PyMethodDef device_methods[] = {
  {"__reduce__", (PyCFunction)device_reduce, METH_NOARGS, NULL},
  {"__enter__", (PyCFunction)device_enter, METH_NOARGS, NULL},
  {"__exit__", (PyCFunction)device_exit, METH_VARARGS, NULL},
  {NULL}
};

PyTypeObject THPDeviceType = {
  PyVarObject_HEAD_INIT(NULL, 0)
  .tp_name = "torch.device",
  .tp_basicsize = sizeof(THPDevice),
  .tp_flags = Py_TPFLAGS_DEFAULT,
  .tp_new = device_new,
  .tp_repr = (reprfunc)device_repr,
  .tp_str = (reprfunc)device_str,
  .tp_richcompare = device_richcompare,
  .tp_hash = (hashfunc)device_hash,
  .tp_getset = device_getset,
  .tp_methods = device_methods,
};

PyObject *THPDevice_cpu(void) { return cpu_device; }

PyObject *THPDevice_of(int device) {
  if (device == TH_DEVICE_META) return make(&THPDeviceType, 2, -1);
  if (device < 0) return Py_NewRef(cpu_device);
  return make(&THPDeviceType, 1, device);
}

int THPDevice_index(PyObject *o, int *device) {
  int type, index;
  if (THPDevice_parse(o, &type, &index) < 0) return -1;
  *device = type == 1 ? index : type == 2 ? TH_DEVICE_META : -1;
  return 0;
}

int THPDevice_parse(PyObject *o, int *type, int *index) {
  *type = 0; *index = -1;
  if (!o || o == Py_None) return 0;
  if (THPDevice_Check(o)) { *type = ((THPDevice *)o)->type; *index = ((THPDevice *)o)->index; }
  else if (PyUnicode_Check(o)) { if (parse_string(o, type, index) < 0) return -1; }
  else if (PyLong_Check(o)) {   /* an int is a CUDA index, as in PyTorch */
    if (index_from_int(o, index) < 0) return -1;
    *type = 1;
  }
  else {
    PyErr_Format(PyExc_TypeError, "expected a torch.device, a string or an int, got %s", Py_TYPE(o)->tp_name);
    return -1;
  }
  if (*type == 1) return THP_cuda_resolve(index);
  if (*type > 2) return unsupported_device(*type);
  return 0;
}

int THP_initDevice(PyObject *m) {
  if (PyType_Ready(&THPDeviceType) < 0) return -1;
  cpu_device = make(&THPDeviceType, 0, -1);
  if (!cpu_device) return -1;
  return PyModule_AddObjectRef(m, "device", (PyObject *)&THPDeviceType);
}
