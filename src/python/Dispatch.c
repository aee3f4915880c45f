/* The dispatch point's observer and the `_C._Op` registry entry (Dispatch.h). */
#include "Dispatch.h"
#include "TorchFunction.h"

PyObject *THP_dispatch_observer = NULL;
_Thread_local int THP_dispatch_busy = 0;

PyObject *THP_dispatch_enter(const char *name) {
  PyObject *obs = Py_NewRef(THP_dispatch_observer);   /* the observer may be swapped while it runs */
  THP_dispatch_busy++;
  PyObject *tok = PyObject_CallMethod(obs, "enter", "s", name);
  THP_dispatch_busy--;
  Py_DECREF(obs);
  return tok;
}

/* The op's pending error, kept aside while the observer runs (Python 3.11
 * has no PyErr_GetRaisedException). */
typedef struct { PyObject *type, *value, *tb; } SavedErr;
static bool save_err(SavedErr *e) { PyErr_Fetch(&e->type, &e->value, &e->tb); return e->type != NULL; }
static void restore_err(SavedErr *e) { PyErr_Restore(e->type, e->value, e->tb); }

/* The common tail of exit for VT ops and _Op entries: inputs as a tuple. */
static PyObject *exit_with(PyObject *tok, const char *name, PyObject *schema, PyObject *args, PyObject *kwargs,
                           PyObject *result) {
  SavedErr exc = {0};
  bool failed = !result && save_err(&exc);
  PyObject *r = NULL;
  if (THP_dispatch_observer && args) {
    THP_dispatch_busy++;
    r = PyObject_CallMethod(THP_dispatch_observer, "exit", "OsOOOO", tok, name, schema, args,
                            kwargs ? kwargs : Py_None, result ? result : Py_None);
    THP_dispatch_busy--;
  }
  Py_DECREF(tok);
  if (!result) {                  /* the op's own error wins over an observer's */
    if (!r && PyErr_Occurred()) PyErr_WriteUnraisable(NULL);
    Py_XDECREF(r);
    if (failed) restore_err(&exc);
    return NULL;
  }
  if (!r && (PyErr_Occurred() || !args)) { Py_XDECREF(result); return NULL; }
  Py_XDECREF(r);
  return result;
}

PyObject *THP_dispatch_exit(PyObject *tok, const char *name, const char *schema, int n, PyObject **inputs,
                            PyObject *result) {
  /* boxing an input for the observer failed after the op ran: report the op
   * as failed with that error rather than call the observer with one pending */
  if (result && PyErr_Occurred()) Py_CLEAR(result);
  SavedErr exc = {0};
  bool failed = !result && save_err(&exc);
  PyObject *args = PyTuple_New(n);
  PyObject *sch = args ? PyUnicode_FromString(schema) : NULL;
  if (args)
    for (int i = 0; i < n; i++) PyTuple_SET_ITEM(args, i, Py_NewRef(inputs[i] ? inputs[i] : Py_None));
  if (!sch) { Py_CLEAR(args); }
  if (failed) { PyErr_Clear(); restore_err(&exc); }
  PyObject *r = exit_with(tok, name, sch ? sch : Py_None, args, NULL, result);
  Py_XDECREF(args);
  Py_XDECREF(sch);
  return r;
}

/* observer.int_from_tensor(t), for an observer that has it: the argument
 * parser turned the 0-dim tensor t into an int argument of the call being
 * parsed (the JIT tracer keeps size arithmetic in its graph this way). */
int THP_dispatch_note_int(PyObject *t) {
  PyObject *obs = Py_NewRef(THP_dispatch_observer);
  int rc = 0;
  if (PyObject_HasAttrString(obs, "int_from_tensor")) {
    THP_dispatch_busy++;
    PyObject *r = PyObject_CallMethod(obs, "int_from_tensor", "O", t);
    THP_dispatch_busy--;
    rc = r ? 0 : -1;
    Py_XDECREF(r);
  }
  Py_DECREF(obs);
  return rc;
}

/* Checked here, once: every op call after this would otherwise raise from
 * deep inside the dispatch point (AttributeError on each call). */
static PyObject *set_observer(PyObject *self, PyObject *obs) {
  if (obs != Py_None) {
    static const char *const methods[] = {"enter", "exit"};
    for (int i = 0; i < 2; i++) {
      PyObject *m = PyObject_GetAttrString(obs, methods[i]);
      bool ok = m && PyCallable_Check(m);
      Py_XDECREF(m);
      if (!ok) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "_set_dispatch_observer(): the observer must be None or have callable enter "
                     "and exit methods, but %s has no callable '%s'", Py_TYPE(obs)->tp_name, methods[i]);
        return NULL;
      }
    }
  }
  Py_XSETREF(THP_dispatch_observer, obs == Py_None ? NULL : Py_NewRef(obs));
  Py_RETURN_NONE;
}

static PyObject *get_observer(PyObject *self, PyObject *unused) {
  return Py_NewRef(THP_dispatch_observer ? THP_dispatch_observer : Py_None);
}

/* ---- _C._Op ---- */
typedef struct {
  PyObject_HEAD
  PyObject *name;       /* "aten::<name>" */
  PyObject *fn;         /* what runs */
  PyObject *dict;
  PyObject *weakreflist;
  vectorcallfunc vectorcall;
} THPOp;

static PyObject *op_vectorcall(PyObject *self_, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
  THPOp *self = (THPOp *)self_;
  /* an argument overriding __torch_function__ (an fx Proxy) takes the call */
  PyObject *over = THP_torch_function_dispatch(self_, args, nargsf, kwnames);
  if (over != Py_NotImplemented) return over;
  Py_DECREF(over);
  if (!THP_dispatch_active()) return PyObject_Vectorcall(self->fn, args, nargsf, kwnames);
  const char *name = PyUnicode_AsUTF8(self->name);
  if (!name) return NULL;
  PyObject *tok = THP_dispatch_enter(name);
  if (!tok) return NULL;
  PyObject *result = PyObject_Vectorcall(self->fn, args, nargsf, kwnames);
  SavedErr exc = {0};
  bool failed = !result && save_err(&exc);
  Py_ssize_t n = PyVectorcall_NARGS(nargsf);
  PyObject *targs = PyTuple_New(n), *kw = NULL;
  if (targs) for (Py_ssize_t i = 0; i < n; i++) PyTuple_SET_ITEM(targs, i, Py_NewRef(args[i]));
  if (targs && kwnames && PyTuple_GET_SIZE(kwnames)) {
    kw = PyDict_New();
    for (Py_ssize_t i = 0; kw && i < PyTuple_GET_SIZE(kwnames); i++)
      if (PyDict_SetItem(kw, PyTuple_GET_ITEM(kwnames, i), args[n + i]) < 0) Py_CLEAR(kw);
    if (!kw) Py_CLEAR(targs);
  }
  if (failed) { PyErr_Clear(); restore_err(&exc); }
  PyObject *r = exit_with(tok, name, Py_None, targs, kw, result);
  Py_XDECREF(targs);
  Py_XDECREF(kw);
  return r;
}

static PyObject *op_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  PyObject *name, *fn;
  if (!PyArg_ParseTuple(args, "UO:_Op", &name, &fn)) return NULL;
  if (!PyCallable_Check(fn)) { PyErr_SetString(PyExc_TypeError, "_Op: fn must be callable"); return NULL; }
  THPOp *self = (THPOp *)type->tp_alloc(type, 0);
  if (!self) return NULL;
  self->name = Py_NewRef(name);
  self->fn = Py_NewRef(fn);
  self->vectorcall = op_vectorcall;
  return (PyObject *)self;
}

PyObject *THPOp_new(const char *name, PyObject *fn) {
  PyObject *n = PyUnicode_FromString(name);
  if (!n) return NULL;
  PyObject *args = PyTuple_Pack(2, n, fn);
  Py_DECREF(n);
  if (!args) return NULL;
  PyObject *r = op_new(&THPOpType, args, NULL);
  Py_DECREF(args);
  return r;
}

static int op_traverse(THPOp *self, visitproc visit, void *arg) {
  Py_VISIT(self->fn);
  Py_VISIT(self->dict);
  return 0;
}

static int op_clear(THPOp *self) {
  Py_CLEAR(self->fn);
  Py_CLEAR(self->dict);
  return 0;
}

static void op_dealloc(THPOp *self) {
  PyObject_GC_UnTrack(self);
  if (self->weakreflist) PyObject_ClearWeakRefs((PyObject *)self);
  op_clear(self);
  Py_CLEAR(self->name);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

/* As a class attribute it binds like a function: x.op(...) is op(x, ...). */
static PyObject *op_descr_get(PyObject *self, PyObject *obj, PyObject *type) {
  if (!obj || obj == Py_None) return Py_NewRef(self);
  return PyMethod_New(self, obj);
}

/* Attributes it lacks (__name__, __doc__, __module__, __qualname__, ...) are
 * the wrapped function's, so it reads like the function it registers. */
static PyObject *op_getattro(PyObject *self, PyObject *attr) {
  PyObject *r = PyObject_GenericGetAttr(self, attr);
  if (r || !PyErr_ExceptionMatches(PyExc_AttributeError)) return r;
  PyErr_Clear();
  return PyObject_GetAttr(((THPOp *)self)->fn, attr);
}

static PyObject *op_repr(THPOp *self) {
  return PyUnicode_FromFormat("<op %U>", self->name);
}

static PyObject *op_reduce(THPOp *self, PyObject *unused) {
  /* pickled by reference, as functions are: module + qualified name */
  return PyObject_GetAttrString(self->fn, "__qualname__");
}

static PyMemberDef op_members[] = {
  {"__wrapped__", T_OBJECT, offsetof(THPOp, fn), READONLY, "the function this op runs"},
  {"_op_name", T_OBJECT, offsetof(THPOp, name), READONLY, "its aten:: name"},
  {NULL}
};

static PyMethodDef op_methods[] = {
  {"__reduce__", (PyCFunction)op_reduce, METH_NOARGS, NULL},
  {NULL}
};

PyTypeObject THPOpType = {
  PyVarObject_HEAD_INIT(NULL, 0)
  .tp_name = "torch._C._Op",
  .tp_basicsize = sizeof(THPOp),
  .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
  .tp_doc = "An op's registry entry: runs `fn` and reports the call to the dispatch observer.",
  .tp_new = op_new,
  .tp_dealloc = (destructor)op_dealloc,
  .tp_traverse = (traverseproc)op_traverse,
  .tp_clear = (inquiry)op_clear,
  .tp_call = PyVectorcall_Call,
  .tp_vectorcall_offset = offsetof(THPOp, vectorcall),
  .tp_descr_get = op_descr_get,
  .tp_getattro = op_getattro,
  .tp_setattro = PyObject_GenericSetAttr,
  .tp_repr = (reprfunc)op_repr,
  .tp_members = op_members,
  .tp_methods = op_methods,
  .tp_dictoffset = offsetof(THPOp, dict),
  .tp_weaklistoffset = offsetof(THPOp, weakreflist),
};

static PyMethodDef dispatch_functions[] = {
  {"_set_dispatch_observer", set_observer, METH_O, "Sets (None: clears) the object told of every op call."},
  {"_get_dispatch_observer", get_observer, METH_NOARGS, NULL},
  {NULL}
};

int THP_initDispatch(PyObject *m) {
  if (PyType_Ready(&THPOpType) < 0) return -1;
  if (PyModule_AddObjectRef(m, "_Op", (PyObject *)&THPOpType) < 0) return -1;
  if (THP_initTorchFunction(m) < 0) return -1;
  return PyModule_AddFunctions(m, dispatch_functions);
}
