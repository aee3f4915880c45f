/* The __torch_function__ protocol (TorchFunction.h). */
#include "TorchFunction.h"

#define TF_MAX_TYPES 8

static PyObject *tf_name;   /* interned "__torch_function__" */
static PyObject *kwargs_as_dict_name;   /* interned "_kwargs_as_dict" */
static PyObject *tf_disabled_impl;   /* _C._disabled_torch_function_impl: a subclass assigning it opts out */

int THP_tf_armed;
/* DisableTorchFunctionSubclass blocks this thread is in: a handler running func on the plain tensors */
static _Thread_local int tf_subclass_off;
/* DisableTorchFunction blocks (modes off too) and this thread's TorchFunctionMode stack (a list, top last) */
static _Thread_local int tf_all_off;
static _Thread_local PyObject *tf_modes;

static bool mode_on(void) { return tf_modes && PyList_GET_SIZE(tf_modes) > 0 && !tf_all_off; }

/* The types that never override: the common arguments of an op are rejected
 * by a pointer compare before any attribute lookup (cthtorch.Tensor, the most
 * common, first). */
static bool plain_type(PyTypeObject *t) {
  return (PyObject *)t == THPTensorClass || t == &PyLong_Type || t == &PyFloat_Type || t == &PyBool_Type || t == Py_TYPE(Py_None) ||
         t == &PyUnicode_Type || t == &PyComplex_Type || t == &PyList_Type || t == &PyTuple_Type ||
         t == &PyDict_Type || t == &THPDtypeType || t == &THPDeviceType || t == &THPSizeType ||
         t == &PySlice_Type || t == Py_TYPE(Py_Ellipsis);
}

/* A Tensor subclass takes the call when its __torch_function__ is not the
 * disabled one (nn.Parameter's), unless a handler of this thread is running
 * func itself; other types when they define __torch_function__ at all. */
static bool overrides(PyObject *o) {
  PyTypeObject *t = Py_TYPE(o);
  if (plain_type(t)) return false;
  if (PyType_IsSubtype(t, &THPTensorType)) {
    if (!THP_tf_armed || tf_subclass_off) return false;
    PyObject *f = _PyType_Lookup(t, tf_name);   /* borrowed */
    return f && f != tf_disabled_impl;
  }
  return _PyType_Lookup(t, tf_name) != NULL;   /* borrowed; no error set on a miss */
}

/* Adds o's type to types[] (once; a subclass goes before its bases, as the
 * protocol asks). Returns the new count. */
static int add_type(PyTypeObject **types, int n, PyObject *o) {
  PyTypeObject *t = Py_TYPE(o);
  for (int i = 0; i < n; i++)
    if (types[i] == t) return n;
  if (n == TF_MAX_TYPES) return n;
  int at = n;
  for (int i = 0; i < n; i++)
    if (PyType_IsSubtype(t, types[i])) { at = i; break; }
  memmove(types + at + 1, types + at, (size_t)(n - at) * sizeof *types);
  types[at] = t;
  return n + 1;
}

/* The overriding types among args (and the items of list/tuple args), added
 * to the nt already in types[]. */
static int collect_into(PyObject *const *args, Py_ssize_t n, PyTypeObject **types, int nt) {
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *o = args[i];
    if (PyList_CheckExact(o) || PyTuple_CheckExact(o)) {
      for (Py_ssize_t j = 0; j < PySequence_Fast_GET_SIZE(o); j++) {
        PyObject *it = PySequence_Fast_GET_ITEM(o, j);
        if (overrides(it)) nt = add_type(types, nt, it);
      }
    } else if (overrides(o)) {
      nt = add_type(types, nt, o);
    }
  }
  return nt;
}

static int collect(PyObject *const *args, Py_ssize_t n, PyTypeObject **types) { return collect_into(args, n, types, 0); }

bool THP_has_torch_function(PyObject *const *args, Py_ssize_t n) {
  PyTypeObject *types[TF_MAX_TYPES];
  return collect(args, n, types) > 0;
}

/* "torch.relu", "torch.nn.functional.relu": the func as torch names it in
 * its dispatch error (cthtorch's own modules read as torch's). */
static PyObject *func_display_name(PyObject *func) {
  PyObject *name = PyObject_GetAttrString(func, "__name__");
  if (!name) { PyErr_Clear(); return PyObject_Repr(func); }
  PyObject *mod = PyObject_GetAttrString(func, "__module__");
  if (!mod) PyErr_Clear();
  const char *m = (mod && PyUnicode_Check(mod)) ? PyUnicode_AsUTF8(mod) : NULL;
  if (!m) PyErr_Clear();   /* no usable __module__: plain torch.<name> */
  PyObject *r;
  if (m && strncmp(m, "cthtorch.", 9) == 0 && strncmp(m, "cthtorch._ops", 13) != 0)
    r = PyUnicode_FromFormat("torch.%s.%U", m + 9, name);
  else
    r = PyUnicode_FromFormat("torch.%U", name);
  Py_XDECREF(mod);
  Py_DECREF(name);
  return r;
}

/* Calls each type's __torch_function__(func, types, args, kwargs) in order;
 * the first result that is not NotImplemented wins. */
static PyObject *call_overrides(PyObject *func, PyTypeObject **types, int nt, PyObject *args, PyObject *kwargs) {
  PyObject *ttuple = PyTuple_New(nt);
  if (!ttuple) return NULL;
  for (int i = 0; i < nt; i++) PyTuple_SET_ITEM(ttuple, i, Py_NewRef((PyObject *)types[i]));
  PyObject *res = NULL;
  if (mode_on()) {   /* the innermost mode first, off its stack while it runs (its own ops go to the next) */
    Py_ssize_t top = PyList_GET_SIZE(tf_modes) - 1;
    PyObject *mode = Py_NewRef(PyList_GET_ITEM(tf_modes, top));
    if (PyList_SetSlice(tf_modes, top, top + 1, NULL) < 0) { Py_DECREF(mode); goto done; }
    res = PyObject_CallMethodObjArgs(mode, tf_name, func, ttuple, args, kwargs, NULL);
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb);
    if (PyList_Append(tf_modes, mode) < 0) PyErr_Clear();   /* the stack only grows back: no allocation */
    PyErr_Restore(et, ev, tb);
    Py_DECREF(mode);
    if (!res || res != Py_NotImplemented) goto done;
    Py_CLEAR(res);
  }
  for (int i = 0; i < nt; i++) {
    PyObject *tf = PyObject_GetAttr((PyObject *)types[i], tf_name);
    if (!tf) goto done;
    res = PyObject_CallFunctionObjArgs(tf, func, ttuple, args, kwargs, NULL);
    Py_DECREF(tf);
    if (!res) goto done;
    if (res != Py_NotImplemented) goto done;
    Py_CLEAR(res);
  }
  {   /* every handler declined: torch's message */
    PyObject *fname = func_display_name(func), *lines = PyUnicode_FromString("");
    for (int i = 0; fname && lines && i < nt; i++)
      Py_SETREF(lines, PyUnicode_FromFormat("%U  - tensor subclass %R\n", lines, (PyObject *)types[i]));
    if (fname && lines)
      PyErr_Format(PyExc_TypeError, "Multiple dispatch failed for '%U'; all __torch_function__ handlers returned "
                   "NotImplemented:\n\n%U\nFor more information, try re-running with TORCH_LOGS=not_implemented",
                   fname, lines);
    Py_XDECREF(fname);
    Py_XDECREF(lines);
  }
done:
  Py_DECREF(ttuple);
  return res;
}

/* args/kwargs of a vectorcall as a tuple and a dict (new references). */
static int box_call(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, PyObject **targs, PyObject **kw) {
  *targs = PyTuple_New(nargs);
  *kw = PyDict_New();
  if (!*targs || !*kw) goto fail;
  for (Py_ssize_t i = 0; i < nargs; i++) PyTuple_SET_ITEM(*targs, i, Py_NewRef(args[i]));
  for (Py_ssize_t k = 0; kwnames && k < PyTuple_GET_SIZE(kwnames); k++)
    if (PyDict_SetItem(*kw, PyTuple_GET_ITEM(kwnames, k), args[nargs + k]) < 0) goto fail;
  return 0;
fail:
  Py_CLEAR(*targs);
  Py_CLEAR(*kw);
  return -1;
}

PyObject *THP_torch_function_dispatch(PyObject *func, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
  Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  PyTypeObject *types[TF_MAX_TYPES];
  int nt = collect(args, nargs + (kwnames ? PyTuple_GET_SIZE(kwnames) : 0), types);
  if (!nt && !mode_on()) return Py_NewRef(Py_NotImplemented);
  PyObject *targs, *kw;
  if (box_call(args, nargs, kwnames, &targs, &kw) < 0) return NULL;
  /* called without keywords, an op that is a C binding in torch passes kwargs=None; one that is a Python
   * function there (marked _kwargs_as_dict) passes {} */
  PyObject *as_dict = NULL;
  int has = PyDict_GET_SIZE(kw) ? 1 : _PyObject_LookupAttr(func, kwargs_as_dict_name, &as_dict);
  if (has < 0) { Py_DECREF(targs); Py_DECREF(kw); return NULL; }
  bool dict = PyDict_GET_SIZE(kw) || (as_dict && PyObject_IsTrue(as_dict) == 1);
  Py_XDECREF(as_dict);
  PyObject *res = call_overrides(func, types, nt, targs, dict ? kw : Py_None);
  Py_DECREF(targs);
  Py_DECREF(kw);
  return res;
}

/* The public callable of a generated function binding: what `cthtorch.<name>`
 * (or cthtorch.<module>.<name>) is, falling back to the _C table itself. */
static PyObject *public_function(const char *module, const char *name) {
  PyObject *top = PyImport_ImportModule("cthtorch"), *ns = NULL, *f = NULL;
  if (!top) return NULL;
  if (!module[0]) {
    ns = Py_NewRef(top);
  } else if (strcmp(module, "nn") != 0) {   /* cthtorch.linalg / fft / special */
    ns = PyObject_GetAttrString(top, module);
    if (!ns) PyErr_Clear();
  }
  if (ns) {
    f = PyObject_GetAttrString(ns, name);
    if (!f) PyErr_Clear();
    Py_CLEAR(ns);
  }
  if (!f) {   /* the binding's own table: cthtorch._C._VariableFunctions / _nn / _linalg ... */
    char tname[64];
    snprintf(tname, sizeof tname, "_%s", module[0] ? module : "VariableFunctions");
    PyObject *c = PyObject_GetAttrString(top, "_C");
    ns = c ? PyObject_GetAttrString(c, tname) : NULL;
    Py_XDECREF(c);
    f = ns ? PyObject_GetAttrString(ns, name) : NULL;
    Py_XDECREF(ns);
  }
  Py_DECREF(top);
  return f;
}

/* Hands a binding's call to the overriding types: func is Tensor.<name> for
 * a method (self first in args), else the public function. */
static PyObject *dispatch_binding(const char *module, const char *name, PyObject *self, PyObject *const *args,
                                  Py_ssize_t nargs, PyObject *kwnames, PyTypeObject **types, int nt) {
  PyObject *func = self ? PyObject_GetAttrString(THPTensorClass, name) : public_function(module, name);
  if (!func) return NULL;
  PyObject *targs, *kw, *res = NULL;
  if (box_call(args, nargs, kwnames, &targs, &kw) < 0) { Py_DECREF(func); return NULL; }
  if (self) {   /* a method: Tensor.<name>(self, *args) */
    PyObject *full = PyTuple_New(nargs + 1);
    if (!full) goto done;
    PyTuple_SET_ITEM(full, 0, Py_NewRef(self));
    for (Py_ssize_t i = 0; i < nargs; i++) PyTuple_SET_ITEM(full, i + 1, Py_NewRef(args[i]));
    Py_SETREF(targs, full);
  }
  /* a binding called without keywords passes kwargs=None, as torch's */
  res = call_overrides(func, types, nt, targs, PyDict_GET_SIZE(kw) ? kw : Py_None);
done:
  Py_DECREF(func);
  Py_DECREF(targs);
  Py_DECREF(kw);
  return res;
}

PyObject *THP_torch_function_fallback(const char *module, const char *name, PyObject *self,
                                      PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
  Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  PyTypeObject *types[TF_MAX_TYPES];
  /* the type lookups must not see the pending parse error (they would clear it) */
  PyObject *et, *ev, *tb;
  PyErr_Fetch(&et, &ev, &tb);
  int nt = collect(args, nargs + nkw, types);
  if (!nt) {   /* the parse error stands */
    PyErr_Restore(et, ev, tb);
    return NULL;
  }
  Py_XDECREF(et);
  Py_XDECREF(ev);
  Py_XDECREF(tb);
  return dispatch_binding(module, name, self, args, nargs, kwnames, types, nt);
}

int THP_tf_binding(const char *module, const char *name, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                   PyObject *kwnames, PyObject **res) {
  PyTypeObject *types[TF_MAX_TYPES];
  int nt = 0;
  if (!tf_subclass_off) {
    nt = self && overrides(self) ? add_type(types, 0, self) : 0;
    nt = collect_into(args, nargs + (kwnames ? PyTuple_GET_SIZE(kwnames) : 0), types, nt);
  }
  if (!nt && !mode_on()) return 0;
  *res = dispatch_binding(module, name, self, args, nargs, kwnames, types, nt);
  return 1;
}

int THP_tf_method_kw(const char *name, PyObject *self, PyObject *args, PyObject *kw, PyObject **res) {
  bool sub = !tf_subclass_off && overrides(self);   /* these methods' arguments are never tensors */
  if (!sub && !mode_on()) return 0;
  Py_ssize_t n = args ? PyTuple_GET_SIZE(args) : 0, nkw = kw ? PyDict_GET_SIZE(kw) : 0;
  PyObject **flat = PyMem_Malloc((size_t)(n + nkw + 1) * sizeof(PyObject *));
  PyObject *kwnames = nkw ? PyTuple_New(nkw) : NULL;
  *res = NULL;
  if (!flat || (nkw && !kwnames)) {
    PyMem_Free(flat);
    Py_XDECREF(kwnames);
    if (!PyErr_Occurred()) PyErr_NoMemory();
    return 1;
  }
  for (Py_ssize_t i = 0; i < n; i++) flat[i] = PyTuple_GET_ITEM(args, i);
  Py_ssize_t pos = 0, k = 0;
  PyObject *key, *val;
  while (kw && PyDict_Next(kw, &pos, &key, &val)) {
    PyTuple_SET_ITEM(kwnames, k, Py_NewRef(key));
    flat[n + k++] = val;
  }
  PyTypeObject *types[TF_MAX_TYPES];
  int nt = sub ? add_type(types, 0, self) : 0;
  *res = dispatch_binding(NULL, name, self, flat, n, kwnames, types, nt);
  PyMem_Free(flat);
  Py_XDECREF(kwnames);
  return 1;
}

int THP_tf_getter(const char *name, PyObject *self, PyObject **res) {
  bool sub = !tf_subclass_off && overrides(self);
  if (!sub && !mode_on()) return 0;
  PyTypeObject *types[1] = {Py_TYPE(self)};
  PyObject *desc = PyObject_GetAttrString(THPTensorClass, name);
  PyObject *func = desc ? PyObject_GetAttrString(desc, "__get__") : NULL;
  PyObject *args = func ? PyTuple_Pack(1, self) : NULL;
  *res = args ? call_overrides(func, types, sub ? 1 : 0, args, Py_None) : NULL;
  Py_XDECREF(args);
  Py_XDECREF(func);
  Py_XDECREF(desc);
  return 1;
}

/* len(t): torch's Tensor.__len__ is Python, so its handler gets kwargs {} (the bindings' get None) */
int THP_tf_len(PyObject *self, Py_ssize_t *n) {
  bool sub = !tf_subclass_off && overrides(self);
  if (!sub && !mode_on()) return 0;
  PyTypeObject *types[1] = {Py_TYPE(self)};
  *n = -1;
  PyObject *func = PyObject_GetAttrString(THPTensorClass, "__len__");
  PyObject *args = func ? PyTuple_Pack(1, self) : NULL, *kw = args ? PyDict_New() : NULL;
  PyObject *r = kw ? call_overrides(func, types, sub ? 1 : 0, args, kw) : NULL;
  if (r) {
    *n = PyNumber_AsSsize_t(r, PyExc_OverflowError);
    if (*n < 0 && !PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "__len__() should return >= 0");
  }
  Py_XDECREF(r);
  Py_XDECREF(kw);
  Py_XDECREF(args);
  Py_XDECREF(func);
  return 1;
}

/* ---- DisableTorchFunctionSubclass / DisableTorchFunction ---- */
typedef struct { PyObject_HEAD } TFDisable;

static PyObject *tfd_enter(PyObject *self, PyObject *unused) {
  tf_subclass_off++;
  Py_RETURN_NONE;
}

static PyObject *tfd_exit(PyObject *self, PyObject *args) {
  if (tf_subclass_off > 0) tf_subclass_off--;
  Py_RETURN_FALSE;
}

static PyObject *tfd_all_enter(PyObject *self, PyObject *unused) {
  tf_all_off++;
  tf_subclass_off++;
  Py_RETURN_NONE;
}

static PyObject *tfd_all_exit(PyObject *self, PyObject *args) {
  if (tf_all_off > 0) tf_all_off--;
  if (tf_subclass_off > 0) tf_subclass_off--;
  Py_RETURN_FALSE;
}

static PyMethodDef tfd_methods[] = {
  {"__enter__", tfd_enter, METH_NOARGS, NULL},
  {"__exit__", tfd_exit, METH_VARARGS, NULL},
  {NULL}
};

static PyMethodDef tfd_all_methods[] = {
  {"__enter__", tfd_all_enter, METH_NOARGS, NULL},
  {"__exit__", tfd_all_exit, METH_VARARGS, NULL},
  {NULL}
};

static PyTypeObject TFDisableSubclassType = {
  PyVarObject_HEAD_INIT(NULL, 0)
  .tp_name = "torch._C.DisableTorchFunctionSubclass",
  .tp_basicsize = sizeof(TFDisable),
  .tp_flags = Py_TPFLAGS_DEFAULT,
  .tp_doc = "Within the block, Tensor subclasses' __torch_function__ is not called: ops see plain tensors.",
  .tp_methods = tfd_methods,
  .tp_new = PyType_GenericNew,
};

static PyTypeObject TFDisableType = {
  PyVarObject_HEAD_INIT(NULL, 0)
  .tp_name = "torch._C.DisableTorchFunction",
  .tp_basicsize = sizeof(TFDisable),
  .tp_flags = Py_TPFLAGS_DEFAULT,
  .tp_doc = "Within the block, neither torch function modes nor Tensor subclasses' __torch_function__ are called.",
  .tp_methods = tfd_all_methods,
  .tp_new = PyType_GenericNew,
};

/* ---- Python entry points (cthtorch/overrides.py) ---- */

static PyObject *py_has_torch_function(PyObject *m, PyObject *seq) {
  PyObject *fast = PySequence_Fast(seq, "has_torch_function: expected a sequence");
  if (!fast) return NULL;
  bool r = mode_on() || THP_has_torch_function(PySequence_Fast_ITEMS(fast), PySequence_Fast_GET_SIZE(fast));
  Py_DECREF(fast);
  return PyBool_FromLong(r);
}

static PyObject *py_has_torch_function_unary(PyObject *m, PyObject *o) {
  return PyBool_FromLong(mode_on() || overrides(o));
}

static PyObject *py_has_torch_function_variadic(PyObject *m, PyObject *const *args, Py_ssize_t nargs) {
  if (mode_on()) Py_RETURN_TRUE;
  for (Py_ssize_t i = 0; i < nargs; i++)
    if (overrides(args[i])) Py_RETURN_TRUE;
  Py_RETURN_FALSE;
}

/* _handle_torch_function(func, relevant_args, args, kwargs) */
static PyObject *py_handle_torch_function(PyObject *m, PyObject *a) {
  PyObject *func, *relevant, *args, *kwargs;
  if (!PyArg_ParseTuple(a, "OOO!O:_handle_torch_function", &func, &relevant, &PyTuple_Type, &args, &kwargs))
    return NULL;
  PyObject *fast = PySequence_Fast(relevant, "handle_torch_function: relevant_args must be a sequence");
  if (!fast) return NULL;
  PyTypeObject *types[TF_MAX_TYPES];
  int nt = collect(PySequence_Fast_ITEMS(fast), PySequence_Fast_GET_SIZE(fast), types);
  Py_DECREF(fast);
  if (!nt && !mode_on()) {
    PyErr_SetString(PyExc_TypeError, "handle_torch_function: no argument overrides __torch_function__");
    return NULL;
  }
  PyObject *kw = kwargs == Py_None ? PyDict_New() : Py_NewRef(kwargs);
  if (!kw) return NULL;
  PyObject *res = call_overrides(func, types, nt, args, kw);
  Py_DECREF(kw);
  return res;
}

/* _disabled_torch_function_impl(func, types, args=(), kwargs=None): func on the plain tensors, its result as is
 * (a class assigning this as its __torch_function__, as nn.Parameter does, takes no part in dispatch) */
static PyObject *py_disabled_impl(PyObject *m, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs < 2 || nargs > 4) {
    PyErr_SetString(PyExc_TypeError, "_disabled_torch_function_impl(func, types, args=(), kwargs=None)");
    return NULL;
  }
  PyObject *fargs = nargs > 2 ? args[2] : NULL, *kw = nargs > 3 && args[3] != Py_None ? args[3] : NULL;
  if (fargs && !PyTuple_Check(fargs)) {
    PyErr_SetString(PyExc_TypeError, "_disabled_torch_function_impl: args must be a tuple");
    return NULL;
  }
  if (kw && !PyDict_Check(kw)) {
    PyErr_SetString(PyExc_TypeError, "_disabled_torch_function_impl: kwargs must be a dict");
    return NULL;
  }
  PyObject *empty = fargs ? NULL : PyTuple_New(0);
  if (!fargs && !empty) return NULL;
  tf_subclass_off++;
  PyObject *r = PyObject_Call(args[0], fargs ? fargs : empty, kw);
  tf_subclass_off--;
  Py_XDECREF(empty);
  return r;
}

static PyObject *py_tf_enabled(PyObject *m, PyObject *unused) { return PyBool_FromLong(!tf_subclass_off); }
static PyObject *py_tf_mode_enabled(PyObject *m, PyObject *unused) { return PyBool_FromLong(!tf_all_off); }

/* Tensor.__init_subclass__: a subclass that takes part in dispatch exists, so bindings start asking */
static PyObject *py_tf_arm(PyObject *m, PyObject *unused) {
  THP_tf_armed = 1;
  Py_RETURN_NONE;
}

/* the mode stack (TorchFunctionMode.__enter__/__exit__) */
static PyObject *py_push_mode(PyObject *m, PyObject *mode) {
  if (!tf_modes && !(tf_modes = PyList_New(0))) return NULL;
  if (PyList_Append(tf_modes, mode) < 0) return NULL;
  THP_tf_armed = 1;
  Py_RETURN_NONE;
}

static PyObject *py_pop_mode(PyObject *m, PyObject *unused) {
  Py_ssize_t n = tf_modes ? PyList_GET_SIZE(tf_modes) : 0;
  if (!n) {
    PyErr_SetString(PyExc_RuntimeError, "Trying to pop from an empty mode stack");
    return NULL;
  }
  PyObject *mode = Py_NewRef(PyList_GET_ITEM(tf_modes, n - 1));
  if (PyList_SetSlice(tf_modes, n - 1, n, NULL) < 0) { Py_DECREF(mode); return NULL; }
  return mode;
}

static PyObject *py_len_modes(PyObject *m, PyObject *unused) {
  return PyLong_FromSsize_t(tf_modes ? PyList_GET_SIZE(tf_modes) : 0);
}

static PyObject *py_get_mode_at(PyObject *m, PyObject *idx) {
  Py_ssize_t i = PyLong_AsSsize_t(idx), n = tf_modes ? PyList_GET_SIZE(tf_modes) : 0;
  if (i == -1 && PyErr_Occurred()) return NULL;
  if (i < 0) i += n;
  if (i < 0 || i >= n) {
    PyErr_SetString(PyExc_IndexError, "mode stack index out of range");
    return NULL;
  }
  return Py_NewRef(PyList_GET_ITEM(tf_modes, i));
}

static PyObject *py_tf_is_armed(PyObject *m, PyObject *unused) { return PyBool_FromLong(THP_tf_armed); }

static PyMethodDef tf_functions[] = {
  {"_disabled_torch_function_impl", (PyCFunction)(void (*)(void))py_disabled_impl, METH_FASTCALL, NULL},
  {"_is_torch_function_enabled", py_tf_enabled, METH_NOARGS, NULL},
  {"_is_torch_function_mode_enabled", py_tf_mode_enabled, METH_NOARGS, NULL},
  {"_push_on_torch_function_stack", py_push_mode, METH_O, NULL},
  {"_pop_torch_function_stack", py_pop_mode, METH_NOARGS, NULL},
  {"_len_torch_function_stack", py_len_modes, METH_NOARGS, NULL},
  {"_get_function_stack_at", py_get_mode_at, METH_O, NULL},
  {"_tf_arm", py_tf_arm, METH_NOARGS, NULL},
  {"_tf_is_armed", py_tf_is_armed, METH_NOARGS, "Whether a Tensor subclass taking part in __torch_function__ exists."},
  {"_has_torch_function", py_has_torch_function, METH_O, "Whether an item of the sequence overrides __torch_function__."},
  {"_has_torch_function_unary", py_has_torch_function_unary, METH_O, NULL},
  {"_has_torch_function_variadic", (PyCFunction)(void (*)(void))py_has_torch_function_variadic, METH_FASTCALL, NULL},
  {"_handle_torch_function", py_handle_torch_function, METH_VARARGS, NULL},
  {NULL}
};

int THP_initTorchFunction(PyObject *m) {
  tf_name = PyUnicode_InternFromString("__torch_function__");
  kwargs_as_dict_name = PyUnicode_InternFromString("_kwargs_as_dict");
  if (!kwargs_as_dict_name) return -1;
  if (!tf_name) return -1;
  if (PyModule_AddFunctions(m, tf_functions) < 0) return -1;
  tf_disabled_impl = PyObject_GetAttrString(m, "_disabled_torch_function_impl");
  if (!tf_disabled_impl || PyType_Ready(&TFDisableSubclassType) < 0 || PyType_Ready(&TFDisableType) < 0) return -1;
  if (PyModule_AddObjectRef(m, "DisableTorchFunctionSubclass", (PyObject *)&TFDisableSubclassType) < 0) return -1;
  return PyModule_AddObjectRef(m, "DisableTorchFunction", (PyObject *)&TFDisableType);
}
