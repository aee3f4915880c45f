/* Conversions between C values and Python objects for the generated and
 * hand-written bindings (see Bindings.h). */
#include "Bindings.h"
#include "Functions.h"
#include "../TH/THRandom.h"

#include <string.h>

PyObject *THP_scalar_to_py(ATScalar s) {
  switch (s.kind) {
    case AT_SCALAR_BOOL: return PyBool_FromLong(s.i != 0);
    case AT_SCALAR_INT: return PyLong_FromLongLong(s.i);
    default: return PyFloat_FromDouble(s.d);
  }
}

PyObject *THP_intlist_to_py(const ATIntList *l) {
  if (!l) return Py_NewRef(Py_None);
  PyObject *t = PyTuple_New(l->n);
  if (!t) return NULL;
  for (int i = 0; i < l->n; i++) {
    PyObject *v = PyLong_FromLongLong(l->v[i]);
    if (!v) { Py_DECREF(t); return NULL; }
    PyTuple_SET_ITEM(t, i, v);
  }
  return t;
}

PyObject *THP_dtype_to_py(THDtype t) {
  if (t == TH_Undefined) return Py_NewRef(Py_None);
  return Py_NewRef(THPDtype_get(t));
}

PyObject *THP_tensor_attr(PyObject *o, const char *attr) {
  if (!THPTensor_Check(o)) {   /* a Tensor[] argument: a tuple of each item's attribute */
    PyObject *f = PySequence_Fast(o, "formula attribute of a non-tensor"), *r = NULL;
    if (!f) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(f);
    r = PyTuple_New(n);
    for (Py_ssize_t i = 0; r && i < n; i++) {
      PyObject *v = THP_tensor_attr(PySequence_Fast_GET_ITEM(f, i), attr);
      if (!v) Py_CLEAR(r);
      else PyTuple_SET_ITEM(r, i, v);
    }
    Py_DECREF(f);
    return r;
  }
  THTensor *t = ((THPTensor *)o)->t;
  if (!strcmp(attr, "sizes")) return THPSize_new(t->ndim, t->sizes);
  if (!strcmp(attr, "dtype")) return THP_dtype_to_py(t->dtype);
  if (!strcmp(attr, "ndim")) return PyLong_FromLong(t->ndim);
  if (!strcmp(attr, "numel")) return PyLong_FromLongLong(THTensor_numel(t));
  if (!strcmp(attr, "strides")) return THPSize_new(t->ndim, t->strides);
  if (!strcmp(attr, "storage_offset")) return PyLong_FromLongLong(t->offset);
  if (!strcmp(attr, "storage_numel"))
    return PyLong_FromLongLong(t->storage ? (int64_t)(t->storage->nbytes / THDtype_size(t->dtype)) : 0);
  if (!strcmp(attr, "device")) return THPDevice_of(THTensor_device(t));
  PyErr_Format(PyExc_SystemError, "formula attribute .%s is not recorded", attr);
  return NULL;
}

static int tensorlist_from_py(PyObject *seq, ATTensorList *out, bool allow_none) {
  PyObject *f = PySequence_Fast(seq, "expected a sequence of tensors");
  if (!f) return -1;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(f);
  out->n = (int)n;
  out->v = PyMem_Malloc((n ? n : 1) * sizeof(THTensor *));
  if (!out->v) { Py_DECREF(f); PyErr_NoMemory(); return -1; }
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *o = PySequence_Fast_GET_ITEM(f, i);
    if (allow_none && o == Py_None) { out->v[i] = NULL; continue; }
    if (!THPTensor_Check(o)) {
      PyErr_Format(PyExc_TypeError, "expected Tensor as element %zd in argument 0, but got %s", i, Py_TYPE(o)->tp_name);
      PyMem_Free(out->v);
      out->v = NULL;
      Py_DECREF(f);
      return -1;
    }
    out->v[i] = ((THPTensor *)o)->t;
  }
  Py_DECREF(f);   /* the tensors stay alive: the caller's sequence holds them */
  return 0;
}

int THP_tensorlist_from_py(PyObject *seq, ATTensorList *out) { return tensorlist_from_py(seq, out, false); }
int THP_opttensorlist_from_py(PyObject *seq, ATTensorList *out) { return tensorlist_from_py(seq, out, true); }

PyObject *THP_wrap_tensorlist(ATTensorList *l, PyObject *view_base) {
  PyObject *t = PyTuple_New(l->n);
  int i = 0;
  if (!t) goto fail;
  for (; i < l->n; i++) {
    PyObject *w = view_base ? THPTensor_wrapView(l->v[i], view_base) : THPTensor_wrap(l->v[i]);
    l->v[i] = NULL;
    if (!w) { i++; goto fail; }
    if (view_base) ((THPTensor *)w)->view_multi = true;
    PyTuple_SET_ITEM(t, i, w);
  }
  free(l->v);
  return t;
fail:
  for (; i < l->n; i++) THTensor_free(l->v[i]);
  free(l->v);
  Py_XDECREF(t);
  return NULL;
}

static PyObject *return_types;   /* torch.return_types-like namespace of structseq types */

PyObject *THP_make_return(const char *name, int n, PyObject **outs) {
  PyObject *tp = NULL;
  if (name && return_types) tp = PyObject_GetAttrString(return_types, name);
  if (!tp) {
    PyErr_Clear();
    PyObject *t = PyTuple_New(n);
    if (!t) { for (int i = 0; i < n; i++) Py_DECREF(outs[i]); return NULL; }
    for (int i = 0; i < n; i++) PyTuple_SET_ITEM(t, i, outs[i]);
    return t;
  }
  PyObject *args = PyTuple_New(n);
  if (!args) { Py_DECREF(tp); for (int i = 0; i < n; i++) Py_DECREF(outs[i]); return NULL; }
  for (int i = 0; i < n; i++) PyTuple_SET_ITEM(args, i, outs[i]);
  PyObject *r = PyObject_Call(tp, args, NULL);
  Py_DECREF(tp);
  Py_DECREF(args);
  return r;
}

int THP_check_out_tuple(PyObject *out, int n) {
  Py_ssize_t k = PySequence_Fast_GET_SIZE(out);
  if (k == n) return 0;
  PyErr_Format(PyExc_TypeError, "expected tuple of %d elements but got %zd", n, k);
  return -1;
}

PyObject *THP_write_outs(const char *name, int n, THTensor **r, PyObject *out) {
  int rc = 0;
  for (int i = 0; i < n; i++) {
    if (rc == 0 && r[i]) rc = at_write_out(((THPTensor *)PySequence_Fast_GET_ITEM(out, i))->t, r[i]);
    THTensor_free(r[i]);
  }
  if (rc < 0) return THP_raise();
  PyObject *outs[n];
  for (int i = 0; i < n; i++) {
    outs[i] = Py_NewRef(PySequence_Fast_GET_ITEM(out, i));
    if (r[i]) THP_bump_version(outs[i]);
  }
  if (THP_flush_warnings() < 0) { for (int i = 0; i < n; i++) Py_DECREF(outs[i]); return NULL; }
  return THP_make_return(name, n, outs);
}

/* return_types: registered from Python (cthtorch/return_types.py) as
 * name -> structseq type, so generated code can build named tuples. */
PyObject *THP_set_return_types(PyObject *m, PyObject *ns) {
  Py_XINCREF(ns);
  Py_XSETREF(return_types, ns);
  Py_RETURN_NONE;
}

struct THGenerator *fa_generator(PyObject *o) {
  if (!o || o == Py_None || !PyObject_TypeCheck(o, &THPGeneratorType)) return THGenerator_default();
  return ((THPGenerator *)o)->gen;
}
struct THGenerator *ap_generator(APResult *r, int i) { return fa_generator(ap_object(r, i)); }

THTensor *THP_complex_number(PyObject *o) {
  Py_complex c = PyComplex_AsCComplex(o);
  if (c.real == -1.0 && PyErr_Occurred()) return NULL;
  THTensor *t = THTensor_new(TH_ComplexDouble, 0, NULL);
  if (!t) { THP_raise(); return NULL; }
  double *v = (double *)THTensor_data(t);
  v[0] = c.real; v[1] = c.imag;
  t->wrapped_number = true;
  return t;
}

PyObject *fa_tensor(PyObject *o) {
  if (THPTensor_Check(o)) return Py_NewRef(o);
  if (PyComplex_Check(o)) { THTensor *c = THP_complex_number(o); return c ? THPTensor_wrap(c) : NULL; }
  ATScalar s;
  if (ap_to_scalar(o, &s) < 0) return NULL;
  THTensor *t = at_scalar_tensor(s, s.kind == AT_SCALAR_FLOAT ? TH_Double : (s.kind == AT_SCALAR_INT ? TH_Int64 : TH_Bool));
  if (!t) return THP_raise();
  t->wrapped_number = true;
  return THPTensor_wrap(t);
}

int fa_intlist(PyObject *o, ATIntList *out, int size) {
  if (PyTuple_Check(o) || PyList_Check(o)) {
    if (ap_to_intlist(o, out, "formula", "dims") < 0) return -1;
    if (size > 1 && out->n == 1) { for (int i = 1; i < size; i++) out->v[i] = out->v[0]; out->n = size; }
    return 0;
  }
  int64_t v;
  if (ap_to_int(o, &v) < 0) return -1;
  out->n = size > 0 ? size : 1;
  for (int i = 0; i < out->n; i++) out->v[i] = v;
  return 0;
}

THDtype fa_dtype(PyObject *o) {
  if (o && THPDtype_Check(o)) return ((THPDtype *)o)->dtype;
  return TH_Undefined;
}

/* ---- the device key ---- */
static int collect_devices(PyObject *o, const THTensor **ts, int *n, int cap) {
  if (!o || o == Py_None) return 0;
  if (THPTensor_Check(o)) { if (*n < cap) ts[(*n)++] = ((THPTensor *)o)->t; return 0; }
  if (PyList_Check(o) || PyTuple_Check(o)) {
    Py_ssize_t k = PySequence_Fast_GET_SIZE(o);
    for (Py_ssize_t i = 0; i < k; i++) {
      PyObject *x = PySequence_Fast_GET_ITEM(o, i);
      if (THPTensor_Check(x) && *n < cap) ts[(*n)++] = ((THPTensor *)x)->t;
    }
  }
  return 0;
}

int THP_meta_notimpl(const char *name) {
  PyErr_Format(PyExc_NotImplementedError,
               "Could not run '%s' with arguments from the 'Meta' backend: %s is not implemented for the meta device "
               "in cthtorch", name, name);
  return -1;
}

int THP_op_device(const char *name, int n, PyObject *const *tensors, PyObject *device_arg, bool cuda_ok,
                  bool factory, bool meta_ok, int *device) {
  *device = -1;
  enum { CAP = 64 };
  const THTensor *ts[CAP];
  int k = 0;
  bool any_gpu = false, any_meta = false;
  for (int i = 0; i < n; i++) collect_devices(tensors[i], ts, &k, CAP);
  for (int i = 0; i < k; i++) {
    any_meta |= THTensor_isMeta(ts[i]);
    any_gpu |= THTensor_device(ts[i]) >= 0;
  }
  if (any_meta && !meta_ok) return THP_meta_notimpl(name);
  /* meta ops check their operands' devices themselves (copy_ and _to_copy cross devices) */
  if (device_arg && device_arg != Py_None) {
    if (THPDevice_index(device_arg, device) < 0) return -1;
    if (*device == TH_DEVICE_META && !meta_ok) return THP_meta_notimpl(name);
    if (*device >= 0 && !cuda_ok && !factory) goto notimpl;
    return 0;
  }
  if (any_meta) { *device = TH_DEVICE_META; return 0; }
  if (!any_gpu) return 0;   /* the common case: all on the host */
  if (at_common_device(k, ts, name, device) < 0) return THP_raise_int();
  if (*device >= 0 && !cuda_ok && !factory) goto notimpl;
  return 0;
notimpl:
  PyErr_Format(PyExc_NotImplementedError,
               "Could not run '%s' with arguments from the 'CUDA' backend: cthtorch has no CUDA kernel for it yet "
               "(move the tensors to the CPU with .cpu() for this op)", name);
  return -1;
}

PyObject *THP_move_result(PyObject *r, int device) {
  if (!r || !THPTensor_Check(r)) return r;
  THPTensor *t = (THPTensor *)r;
  if (THTensor_device(t->t) == device) return r;
  THTensor *m = at_to_device(t->t, device, t->t->dtype, false);
  if (!m) { Py_DECREF(r); return THP_raise(); }
  PyObject *w = THPTensor_wrap(m);
  if (w) ((THPTensor *)w)->requires_grad = t->requires_grad;
  Py_DECREF(r);
  return w;
}

int THP_device_or(PyObject *device_arg, const THTensor *self) {
  int d;
  if (!device_arg || device_arg == Py_None) return THTensor_device(self);
  if (THPDevice_index(device_arg, &d) < 0) { PyErr_Clear(); return THTensor_device(self); }
  return d;
}

/* ---- autocast (CUDA and CPU) ---- */
_Thread_local int THP_autocast_cuda = 0;
_Thread_local THDtype THP_autocast_cuda_dtype = TH_Half;
_Thread_local int THP_autocast_cpu = 0;
_Thread_local THDtype THP_autocast_cpu_dtype = TH_BFloat16;

/* Casts an autocast-eligible op's tensor arguments on `device` (-1: the CPU) in place in args (new
 * references; the caller frees them): policy 1 ("lower") takes floating tensors other than float64 to
 * `lower`, policy 2 ("fp32") takes float16/bfloat16 ones to float32, as torch's autocast does. */
int THP_autocast_args(int policy, int n, PyObject **args, bool on_cpu, THDtype lower) {
  for (int i = 0; i < n; i++) {
    PyObject *a = args[i];
    args[i] = NULL;
    if (!a || !THPTensor_Check(a)) { args[i] = Py_XNewRef(a); continue; }
    THTensor *t = ((THPTensor *)a)->t;
    bool floating = t->dtype == TH_Float || t->dtype == TH_Half || t->dtype == TH_BFloat16;
    bool down = policy == 1 && floating && t->dtype != lower;
    bool up = policy == 2 && (t->dtype == TH_Half || t->dtype == TH_BFloat16);
    int d = THTensor_device(t);   /* meta tensors are never cast: torch has no meta autocast */
    if (!(on_cpu ? d == -1 : d >= 0) || !(down || up)) { args[i] = Py_NewRef(a); continue; }
    PyObject *dt = THP_dtype_to_py(down ? lower : TH_Float);
    PyObject *c = dt ? F__to_copy(a, dt, NULL, NULL, NULL) : NULL;   /* differentiable: grads flow back in a's dtype */
    Py_XDECREF(dt);
    if (!c) { for (int j = 0; j < i; j++) Py_CLEAR(args[j]); return -1; }
    args[i] = c;
  }
  return 0;
}

/* _set_autocast(enabled, dtype) for one device's state (the CUDA one in Cuda.c, the CPU one below) */
PyObject *THP_set_autocast_state(PyObject *args, const char *fmt, int *enabled, THDtype *dtype) {
  int on;
  PyObject *dt;
  if (!PyArg_ParseTuple(args, fmt, &on, &dt)) return NULL;
  if (!THPDtype_Check(dt)) { PyErr_SetString(PyExc_TypeError, "_set_autocast: expected a dtype"); return NULL; }
  *enabled = on;
  *dtype = ((THPDtype *)dt)->dtype;
  Py_RETURN_NONE;
}

/* torch.autocast('cpu') state for the dispatch point (cthtorch/amp/autocast_mode.py sets it) */
PyObject *THP_set_autocast_cpu(PyObject *m, PyObject *args) {
  (void)m;
  return THP_set_autocast_state(args, "pO:_set_autocast_cpu", &THP_autocast_cpu, &THP_autocast_cpu_dtype);
}
