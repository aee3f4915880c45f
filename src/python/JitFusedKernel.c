/* The JIT's fused kernels, called from C: `_C._JitFusedKernel`, what a
 * prim::FusionGroup / prim::TensorExprGroup node runs (cthtorch/jit/_fuser.py
 * makes one per group; the C interpreter calls it as any other callable).
 *
 * Per call it reads its inputs' layouts (dtype, device, sizes, strides) into
 * a key. A plan per key (rows, columns, the layout array, the compiled loop's
 * address and the outputs' shapes) is made once by the Python planner and
 * kept here, so a steady-state call allocates the outputs and calls the loop
 * with no Python frame in between. Where the planner has no plan (another
 * dtype, a layout the loop does not take, no compiler), where autograd must
 * record (grad mode on and an input requires grad) or where an observer
 * (tracer, profiler) watches the dispatch point, the group's subgraph runs
 * instead: the fallback, whose results and autograd are eager's. */
#include "THP.h"
#include <structmember.h>

/* the generated loop: rows, columns, the layout array, then the inputs' and outputs' addresses */
typedef void (*FusedFn)(int64_t R, int64_t C, const int64_t *L, const uintptr_t *a);

#define MAX_FUSED_ARGS 64
#define KEY_PER_TENSOR (3 + 2 * TH_MAX_DIMS)

typedef struct {
  int64_t R, C;
  const int64_t *L;
  FusedFn fn;
  int nout;
  PyObject *keep;             /* what keeps L and the loaded library alive */
  int ndim[1];                /* nout of them, then the sizes (TH_MAX_DIMS per output) */
} Plan;

static int64_t *plan_sizes(Plan *p) { return (int64_t *)(p->ndim + p->nout + (p->nout & 1)); }

typedef struct {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  PyObject *planner;      /* planner(args: tuple) -> None or (R, C, L address, loop address, shapes, keep) */
  PyObject *fallback;     /* the subgraph: fallback(*args) */
  PyObject *observers;    /* dispatch._observers (a list): non-empty means every op must reach dispatch */
  PyObject *plans;        /* layout key (bytes) -> plan capsule, or None where the fallback runs */
  PyObject *last_key;     /* the last key looked up and its entry: most calls repeat a layout */
  PyObject *last_plan;
  int nout;
  long long kernel_runs, fallback_runs;
} JitFused;

static void plan_free(PyObject *cap) {
  Plan *p = PyCapsule_GetPointer(cap, "cthtorch.jit.fused_plan");
  if (!p) { PyErr_Clear(); return; }
  Py_XDECREF(p->keep);
  PyMem_Free(p);
}

/* The planner's answer as a capsule (new reference), or None. */
static PyObject *plan_from(JitFused *k, PyObject *r) {
  if (r == Py_None) return Py_NewRef(Py_None);
  long long R, C;
  unsigned long long L, fn;
  PyObject *shapes, *keep;
  if (!PyTuple_Check(r) || !PyArg_ParseTuple(r, "LLKKO!O", &R, &C, &L, &fn, &PyTuple_Type, &shapes, &keep)) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "_JitFusedKernel: the planner must return a 6-tuple or None");
    return NULL;
  }
  if (PyTuple_GET_SIZE(shapes) != k->nout || !fn || R < 0 || C < 0) {
    PyErr_Format(PyExc_ValueError, "_JitFusedKernel: a plan needs a loop and %d output shapes", k->nout);
    return NULL;
  }
  int nout = k->nout;
  size_t head = offsetof(Plan, ndim) + sizeof(int) * (size_t)(nout + (nout & 1));
  Plan *p = PyMem_Calloc(1, head + sizeof(int64_t) * (size_t)nout * TH_MAX_DIMS);
  if (!p) return PyErr_NoMemory();
  p->R = R;
  p->C = C;
  p->L = (const int64_t *)(uintptr_t)L;
  p->fn = (FusedFn)(uintptr_t)fn;
  p->nout = nout;
  int64_t *sizes = plan_sizes(p);
  for (int o = 0; o < nout; o++) {
    PyObject *s = PyTuple_GET_ITEM(shapes, o);
    if (!PyTuple_Check(s) || PyTuple_GET_SIZE(s) > TH_MAX_DIMS) {
      PyErr_SetString(PyExc_ValueError, "_JitFusedKernel: an output shape must be a tuple of at most TH_MAX_DIMS ints");
      PyMem_Free(p);
      return NULL;
    }
    p->ndim[o] = (int)PyTuple_GET_SIZE(s);
    for (int d = 0; d < p->ndim[o]; d++) {
      long long v = PyLong_AsLongLong(PyTuple_GET_ITEM(s, d));
      if (v < 0) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "_JitFusedKernel: negative output size");
        PyMem_Free(p);
        return NULL;
      }
      sizes[o * TH_MAX_DIMS + d] = v;
    }
  }
  PyObject *cap = PyCapsule_New(p, "cthtorch.jit.fused_plan", plan_free);
  if (!cap) { PyMem_Free(p); return NULL; }
  p->keep = Py_NewRef(keep);   /* after the capsule exists: its destructor releases it */
  return cap;
}

/* The entry for key (borrowed from plans), asking the planner on a miss; NULL on error. */
static PyObject *lookup(JitFused *k, const int64_t *key, Py_ssize_t nk, PyObject *const *args, Py_ssize_t n) {
  Py_ssize_t nbytes = nk * (Py_ssize_t)sizeof(int64_t);
  if (k->last_key && PyBytes_GET_SIZE(k->last_key) == nbytes && !memcmp(PyBytes_AS_STRING(k->last_key), key, nbytes))
    return k->last_plan;
  PyObject *kb = PyBytes_FromStringAndSize((const char *)key, nbytes);
  if (!kb) return NULL;
  PyObject *entry = PyDict_GetItemWithError(k->plans, kb);
  if (!entry) {
    if (PyErr_Occurred()) { Py_DECREF(kb); return NULL; }
    PyObject *t = PyTuple_New(n);
    if (!t) { Py_DECREF(kb); return NULL; }
    for (Py_ssize_t i = 0; i < n; i++) PyTuple_SET_ITEM(t, i, Py_NewRef(args[i]));
    PyObject *r = PyObject_CallOneArg(k->planner, t);
    Py_DECREF(t);
    PyObject *made = r ? plan_from(k, r) : NULL;
    Py_XDECREF(r);
    if (!made || PyDict_SetItem(k->plans, kb, made) < 0) { Py_XDECREF(made); Py_DECREF(kb); return NULL; }
    entry = made;
    Py_DECREF(made);   /* the dict holds it */
  }
  Py_XSETREF(k->last_key, kb);
  Py_XSETREF(k->last_plan, Py_NewRef(entry));
  return entry;
}

static PyObject *run_fallback(JitFused *k, PyObject *const *args, Py_ssize_t n) {
  k->fallback_runs++;
  return PyObject_Vectorcall(k->fallback, args, n, NULL);
}

static PyObject *fused_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
  JitFused *k = (JitFused *)self;
  Py_ssize_t n = PyVectorcall_NARGS(nargsf);
  if (kwnames && PyTuple_GET_SIZE(kwnames)) {
    PyErr_SetString(PyExc_TypeError, "_JitFusedKernel takes no keyword arguments");
    return NULL;
  }
  if (n > MAX_FUSED_ARGS || PyList_GET_SIZE(k->observers) > 0) return run_fallback(k, args, n);
  int64_t key[MAX_FUSED_ARGS * KEY_PER_TENSOR];
  Py_ssize_t nk = 0;
  for (Py_ssize_t i = 0; i < n; i++) {
    if (!THPTensor_Check(args[i])) return run_fallback(k, args, n);
    const THTensor *t = ((THPTensor *)args[i])->t;
    key[nk++] = t->dtype;
    key[nk++] = THTensor_device(t);
    key[nk++] = t->ndim;
    for (int d = 0; d < t->ndim; d++) key[nk++] = t->sizes[d];
    for (int d = 0; d < t->ndim; d++) key[nk++] = t->strides[d];
  }
  if (THP_any_requires_grad((int)n, args)) return run_fallback(k, args, n);
  PyObject *entry = lookup(k, key, nk, args, n);
  if (!entry) return NULL;
  if (entry == Py_None) return run_fallback(k, args, n);
  Py_INCREF(entry);   /* held while the loop runs without the GIL */
  Plan *p = PyCapsule_GetPointer(entry, "cthtorch.jit.fused_plan");
  PyObject *outs[MAX_FUSED_ARGS] = {NULL}, *result = NULL;
  uintptr_t addr[2 * MAX_FUSED_ARGS];
  if (!p) goto done;
  if (p->nout > MAX_FUSED_ARGS) { PyErr_SetString(PyExc_ValueError, "_JitFusedKernel: too many outputs"); goto done; }
  for (Py_ssize_t i = 0; i < n; i++) addr[i] = (uintptr_t)THTensor_data(((THPTensor *)args[i])->t);
  const int64_t *sizes = plan_sizes(p);
  for (int o = 0; o < p->nout; o++) {
    if (!(outs[o] = THPTensor_wrap(THTensor_new(TH_Float, p->ndim[o], sizes + o * TH_MAX_DIMS)))) goto done;
    addr[n + o] = (uintptr_t)THTensor_data(((THPTensor *)outs[o])->t);
  }
  if (p->R > 0 && p->C > 0) {
    if (p->R * p->C >= 65536) {
      Py_BEGIN_ALLOW_THREADS
      p->fn(p->R, p->C, p->L, addr);
      Py_END_ALLOW_THREADS
    } else {
      p->fn(p->R, p->C, p->L, addr);
    }
  }
  k->kernel_runs++;
  if (p->nout == 1) {
    result = outs[0];
    outs[0] = NULL;
  } else if ((result = PyTuple_New(p->nout))) {
    for (int o = 0; o < p->nout; o++) {
      PyTuple_SET_ITEM(result, o, outs[o]);
      outs[o] = NULL;
    }
  }
done:
  for (int o = 0; o < MAX_FUSED_ARGS && p && o < p->nout; o++) Py_XDECREF(outs[o]);
  Py_DECREF(entry);
  return result;
}

/* _JitFusedKernel(planner, fallback, nout, observers) */
static PyObject *fused_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  PyObject *planner, *fallback, *observers;
  int nout;
  static char *kw[] = {"planner", "fallback", "nout", "observers", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOiO!", kw, &planner, &fallback, &nout, &PyList_Type, &observers))
    return NULL;
  if (!PyCallable_Check(planner) || !PyCallable_Check(fallback)) {
    PyErr_SetString(PyExc_TypeError, "_JitFusedKernel: planner and fallback must be callable");
    return NULL;
  }
  if (nout < 1 || nout > MAX_FUSED_ARGS) {
    PyErr_Format(PyExc_ValueError, "_JitFusedKernel: nout must be 1 to %d", MAX_FUSED_ARGS);
    return NULL;
  }
  JitFused *k = (JitFused *)type->tp_alloc(type, 0);
  if (!k) return NULL;
  k->vectorcall = fused_vectorcall;
  k->planner = Py_NewRef(planner);
  k->fallback = Py_NewRef(fallback);
  k->observers = Py_NewRef(observers);
  k->nout = nout;
  if (!(k->plans = PyDict_New())) { Py_DECREF(k); return NULL; }
  return (PyObject *)k;
}

static int fused_traverse(JitFused *k, visitproc visit, void *arg) {
  Py_VISIT(k->planner);
  Py_VISIT(k->fallback);
  Py_VISIT(k->observers);
  Py_VISIT(k->plans);
  Py_VISIT(k->last_plan);
  return 0;
}

static int fused_clear(JitFused *k) {
  Py_CLEAR(k->planner);
  Py_CLEAR(k->fallback);
  Py_CLEAR(k->observers);
  Py_CLEAR(k->plans);
  Py_CLEAR(k->last_key);
  Py_CLEAR(k->last_plan);
  return 0;
}

static void fused_dealloc(JitFused *k) {
  PyObject_GC_UnTrack(k);
  fused_clear(k);
  Py_TYPE(k)->tp_free((PyObject *)k);
}

static PyObject *fused_call(PyObject *self, PyObject *args, PyObject *kwargs) {
  if (kwargs && PyDict_GET_SIZE(kwargs)) {
    PyErr_SetString(PyExc_TypeError, "_JitFusedKernel takes no keyword arguments");
    return NULL;
  }
  return fused_vectorcall(self, &PyTuple_GET_ITEM(args, 0), PyTuple_GET_SIZE(args), NULL);
}

static PyMemberDef fused_members[] = {
    {"plans", T_OBJECT, offsetof(JitFused, plans), READONLY, "layout key -> plan (a capsule), or None where the fallback runs"},
    {"kernel_runs", T_LONGLONG, offsetof(JitFused, kernel_runs), READONLY, "calls that ran the compiled loop"},
    {"fallback_runs", T_LONGLONG, offsetof(JitFused, fallback_runs), READONLY, "calls that ran the subgraph"},
    {NULL}};

PyTypeObject THPJitFusedKernelType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "torch._C._JitFusedKernel",
    .tp_basicsize = sizeof(JitFused),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "A fusion group's compiled loops, one per input layout, called from C (cthtorch/jit/_fuser.py).",
    .tp_new = fused_new,
    .tp_dealloc = (destructor)fused_dealloc,
    .tp_traverse = (traverseproc)fused_traverse,
    .tp_clear = (inquiry)fused_clear,
    .tp_call = fused_call,
    .tp_vectorcall_offset = offsetof(JitFused, vectorcall),
    .tp_members = fused_members,
};

int THP_initJitFusedKernel(PyObject *m) {
  if (PyType_Ready(&THPJitFusedKernelType) < 0) return -1;
  return PyModule_AddObjectRef(m, "_JitFusedKernel", (PyObject *)&THPJitFusedKernelType);
}
