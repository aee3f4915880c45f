/* Custom autograd functions (cthtorch.autograd.Function). The ctx object
 * of a custom function is its backward node: a Python subclass of
 * _FunctionBase whose apply calls the class's backward in Python. */
#include "THP.h"
#include "autograd/Formulas.h"

/* backward's gradients, one per forward argument, reduced to the node's edges: the arguments in skip (a
 * tuple of ascending positions, see function_record) have none, and must get None, as in PyTorch. Steals r. */
static PyObject *drop_skipped(THPNode *n, PyObject *r, PyObject *skip) {
  Py_ssize_t ns = PyTuple_GET_SIZE(skip), nargs = n->num_edges + ns, got = PyTuple_GET_SIZE(r);
  for (Py_ssize_t i = nargs; i < got && got > nargs; i++)
    if (PyTuple_GET_ITEM(r, i) != Py_None) { got = -got; break; }
  if (got < nargs) {
    PyErr_Format(PyExc_RuntimeError, "function %s returned an incorrect number of gradients (expected %zd, got %zd)",
                 Py_TYPE(n)->tp_name, nargs, got < 0 ? -got : got);
    Py_DECREF(r);
    return NULL;
  }
  for (Py_ssize_t k = 0; k < ns; k++) {
    Py_ssize_t i = PyLong_AsSsize_t(PyTuple_GET_ITEM(skip, k));
    if (PyTuple_GET_ITEM(r, i) != Py_None) {
      PyErr_Format(PyExc_RuntimeError, "function %s returned a gradient different than None at position %zd, but the "
                   "corresponding forward input was not a Variable", Py_TYPE(n)->tp_name, i + 1);
      Py_DECREF(r);
      return NULL;
    }
  }
  PyObject *out = PyTuple_New(n->num_edges);
  if (!out) { Py_DECREF(r); return NULL; }
  for (Py_ssize_t i = 0, j = 0, k = 0; i < nargs; i++) {
    if (k < ns && PyLong_AsSsize_t(PyTuple_GET_ITEM(skip, k)) == i) { k++; continue; }
    PyObject *g = PyTuple_GET_ITEM(r, i);
    Py_INCREF(g);
    PyTuple_SET_ITEM(out, j++, g);
  }
  Py_DECREF(r);
  return out;
}

static PyObject *py_apply(THPNode *n, PyObject *const *grads) {
  PyObject *t = PyTuple_New(n->num_inputs);
  if (!t) return NULL;
  PyObject *mat = PyObject_GetAttrString((PyObject *)n, "_materialize_grads");
  int materialize = mat ? PyObject_IsTrue(mat) : 1;
  Py_XDECREF(mat);
  PyErr_Clear();
  for (int i = 0; i < n->num_inputs; i++) {
    PyObject *g = grads[i];
    if (g == Py_None && materialize) {
      g = THP_zeros_for(n, i);
      if (!g) { Py_DECREF(t); return NULL; }
    } else {
      Py_INCREF(g);
    }
    PyTuple_SET_ITEM(t, i, g);
  }
  PyObject *r = PyObject_CallMethod((PyObject *)n, "_do_backward", "(O)", t);
  Py_DECREF(t);
  if (!r) return NULL;
  if (!PyTuple_Check(r)) {
    PyObject *tt = PyTuple_Pack(1, r);
    Py_DECREF(r);
    if (!tt) return NULL;
    r = tt;
  }
  PyObject *skip = n->dict ? PyDict_GetItemString(n->dict, "_skip_args") : NULL;   /* borrowed */
  if (skip && !(r = drop_skipped(n, r, skip))) return NULL;
  Py_ssize_t got = PyTuple_GET_SIZE(r);
  if (got < n->num_edges) {
    PyErr_Format(PyExc_RuntimeError, "function %s returned an incorrect number of gradients (expected %d, got %zd)",
                 Py_TYPE(n)->tp_name, n->num_edges, got);
    Py_DECREF(r);
    return NULL;
  }
  /* extra trailing Nones are allowed, as PyTorch does */
  for (Py_ssize_t i = n->num_edges; i < got; i++)
    if (PyTuple_GET_ITEM(r, i) != Py_None) {
      PyErr_Format(PyExc_RuntimeError, "function %s returned an incorrect number of gradients (expected %d, got %zd)",
                   Py_TYPE(n)->tp_name, n->num_edges, got);
      Py_DECREF(r);
      return NULL;
    }
  for (int i = 0; i < n->num_edges; i++) {
    PyObject *g = PyTuple_GET_ITEM(r, i);
    if (g != Py_None && !n->edges[i].fn) {
      /* a gradient for an input that needs none: drop it */
      Py_INCREF(Py_None);
      PyTuple_SetItem(r, i, Py_None);
    }
  }
  return r;
}

static void py_release(THPNode *n, bool final) {
  (void)final;
  if (n->dict && PyDict_GetItemString(n->dict, "_saved_store")) {
    PyDict_SetItemString(n->dict, "_saved_store", Py_None);
  }
}

static PyObject *node_py_new(PyTypeObject *tp, PyObject *args, PyObject *kw) {
  THPNode *n = THPNode_new(tp, 0, 0);
  if (!n) return NULL;
  n->apply = py_apply;
  n->release_saved = py_release;
  return (PyObject *)n;
}

/* Whether seq holds o itself. By identity: `in` would call Tensor.__eq__,
 * which compares elementwise. -1 on error. */
static int holds(PyObject *seq, PyObject *o) {
  PyObject *fast = PySequence_Fast(seq, "expected a sequence of tensors");
  if (!fast) return -1;
  int found = 0;
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(fast) && !found; i++)
    found = PySequence_Fast_GET_ITEM(fast, i) == o;
  Py_DECREF(fast);
  return found;
}

/* Whether forward argument a gets an edge: a tensor, as in PyTorch (next_functions has no entry for a number
 * or None); of a Function standing for one of torch's nodes (native), a floating or complex one only (none for
 * an index or a mask). */
static bool has_edge(PyObject *a, int native) {
  if (!THPTensor_Check(a)) return false;
  THDtype dt = ((THPTensor *)a)->t->dtype;
  return !native || THDtype_isFloating(dt) || THDtype_isComplex(dt);
}

/* _function_record(ctx, inputs, outputs, non_differentiable, dirty, native=False):
 * edges from the tensor inputs (see has_edge), ctx as grad_fn of the outputs. The positions of the inputs
 * without one go to ctx._skip_args, for backward's gradients (drop_skipped). */
static PyObject *function_record(PyObject *m, PyObject *args) {
  PyObject *ctx, *inputs, *outputs, *nondiff, *dirty;
  int native = 0;
  if (!PyArg_ParseTuple(args, "OO!O!OO|p", &ctx, &PyTuple_Type, &inputs, &PyTuple_Type, &outputs, &nondiff, &dirty,
                        &native))
    return NULL;
  THPNode *n = (THPNode *)ctx;
  Py_ssize_t nargs = PyTuple_GET_SIZE(inputs), ni = 0, no = PyTuple_GET_SIZE(outputs);
  for (Py_ssize_t i = 0; i < nargs; i++) ni += has_edge(PyTuple_GET_ITEM(inputs, i), native);
  if (ni != nargs) {
    PyObject *skip = PyTuple_New(nargs - ni);
    if (!skip) return NULL;
    for (Py_ssize_t i = 0, k = 0; i < nargs; i++) {
      if (has_edge(PyTuple_GET_ITEM(inputs, i), native)) continue;
      PyObject *pos = PyLong_FromSsize_t(i);
      if (!pos) { Py_DECREF(skip); return NULL; }
      PyTuple_SET_ITEM(skip, k++, pos);
    }
    int rc = PyObject_SetAttrString(ctx, "_skip_args", skip);
    Py_DECREF(skip);
    if (rc < 0) return NULL;
  }
  PyMem_Free(n->edges);
  PyMem_Free(n->meta);
  n->edges = PyMem_Calloc(ni ? ni : 1, sizeof(THPEdge));
  n->meta = PyMem_Calloc(no ? no : 1, sizeof(THPInputMeta));
  if (!n->edges || !n->meta) return PyErr_NoMemory();
  for (Py_ssize_t i = 0; i < (no ? no : 1); i++) n->meta[i].device = -1;
  n->num_edges = (int)ni;
  n->num_inputs = (int)no;
  for (Py_ssize_t i = 0, j = 0; i < nargs; i++) {
    PyObject *a = PyTuple_GET_ITEM(inputs, i);
    if (!has_edge(a, native)) continue;
    if (THPTensor_requiresGrad(a) && THPNode_setEdgeFor(n, (int)j, a) < 0) return NULL;
    j++;
  }
  for (Py_ssize_t i = 0; i < no; i++) {
    PyObject *o = PyTuple_GET_ITEM(outputs, i);
    if (!THPTensor_Check(o)) continue;
    int nd = holds(nondiff, o);
    if (nd < 0) return NULL;
    THPTensor *t = (THPTensor *)o;
    n->meta[i].dtype = t->t->dtype;
    n->meta[i].device = THTensor_device(t->t);
    n->meta[i].ndim = t->t->ndim;
    memcpy(n->meta[i].sizes, t->t->sizes, t->t->ndim * sizeof(int64_t));
    if (nd) continue;
    int isdirty = holds(dirty, o);
    if (isdirty < 0) return NULL;
    if (isdirty && THP_check_inplace(o) < 0) return NULL;
    THPNode_setOutput(n, (int)i, o);
  }
  Py_RETURN_NONE;
}

/* node._register_tensor_prehook(output_nr, hook): a hook on one gradient
 * (Tensor.register_hook / retain_grad on non-leaves). */
PyObject *THPNode_registerTensorPrehook(PyObject *self, PyObject *args) {
  THPNode *n = (THPNode *)self;
  int nr;
  PyObject *hook;
  if (!PyArg_ParseTuple(args, "iO", &nr, &hook)) return NULL;
  if (nr < 0 || nr >= n->num_inputs) {
    PyErr_Format(PyExc_IndexError, "output_nr %d out of range for a node of %d outputs", nr, n->num_inputs);
    return NULL;
  }
  if (!n->pre_hooks && !(n->pre_hooks = PyList_New(0))) return NULL;
  PyObject *entry = Py_BuildValue("(iO)", nr, hook);
  if (!entry || PyList_Append(n->pre_hooks, entry) < 0) { Py_XDECREF(entry); return NULL; }
  PyObject *h = THP_make_removable_handle(n->pre_hooks, entry);
  Py_DECREF(entry);
  return h;
}

static PyMethodDef methods[] = {
  {"_function_record", function_record, METH_VARARGS, NULL},
  {NULL}
};

int THP_initPyFunction(PyObject *m) {
  THPNodeType.tp_new = node_py_new;
  return PyModule_AddFunctions(m, methods);
}
