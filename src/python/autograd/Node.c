/* Autograd graph nodes: the Python-visible grad_fn objects.
 * Generated backward types (build/generated/Functions.c) extend THPNode
 * with their saved values; AccumulateGrad ends every path at a leaf. */
#include "THP.h"
#include "autograd/Formulas.h"
#include "Functions.h"
#include <string.h>

static uint64_t next_seq = 0;
uint64_t THPNode_nextSeq(void) { return next_seq++; }

THPNode *THPNode_new(PyTypeObject *type, int num_edges, int num_inputs) {
  THPNode *n = (THPNode *)type->tp_alloc(type, 0);
  if (!n) return NULL;
  n->num_edges = num_edges;
  n->num_inputs = num_inputs;
  n->edges = num_edges ? PyMem_Calloc(num_edges, sizeof(THPEdge)) : NULL;
  n->meta = PyMem_Calloc(num_inputs ? num_inputs : 1, sizeof(THPInputMeta));
  if ((num_edges && !n->edges) || !n->meta) { Py_DECREF(n); PyErr_NoMemory(); return NULL; }
  for (int i = 0; i < (num_inputs ? num_inputs : 1); i++) n->meta[i].device = -1;
  n->seq = THPNode_nextSeq();
  if (THP_anomaly_enabled) n->anomaly_trace = THP_current_traceback();
  return n;
}

int THPNode_setEdgeFor(THPNode *node, int i, PyObject *tensor) {
  THPEdge *e = &node->edges[i];
  e->fn = NULL;
  e->input_nr = 0;
  if (!tensor || tensor == Py_None || !THPTensor_Check(tensor)) return 0;
  THPTensor *t = (THPTensor *)tensor;
  PyObject *fn = THPTensor_gradFn(t);
  if (fn) {
    e->fn = Py_NewRef(fn);
    e->input_nr = t->output_nr;
  } else if (PyErr_Occurred()) {
    return -1;
  } else if (t->requires_grad) {
    e->fn = THPAccumulateGrad_get(tensor);
    if (!e->fn) return -1;
  }
  return 0;
}

static void record_meta(THPNode *node, int nr, THPTensor *t) {
  THPInputMeta *m = &node->meta[nr];
  m->dtype = t->t->dtype;
  m->device = THTensor_device(t->t);
  m->ndim = t->t->ndim;
  memcpy(m->sizes, t->t->sizes, t->t->ndim * sizeof(int64_t));
}

void THPNode_setOutput(THPNode *node, int nr, PyObject *tensor) {
  if (tensor == Py_None) return;   /* an output the op was asked not to compute */
  THPTensor *t = (THPTensor *)tensor;
  if (!THDtype_isFloating(t->t->dtype) && !THDtype_isComplex(t->t->dtype)) return;   /* integer outputs are not differentiable */
  record_meta(node, nr, t);
  Py_INCREF(node);
  Py_XSETREF(t->grad_fn, (PyObject *)node);
  t->output_nr = nr;
  t->requires_grad = false;
}

/* ---- views and in-place ops (PyTorch's CopySlices) ----
 * A view records its root base; an in-place op on a view changes the base
 * too, so the base's history becomes a CopySlices node wrapping the op's
 * node, and the view's grad_fn is regenerated from the base's new history
 * as as_strided(base, view geometry), whose backward is AsStridedBackward0
 * (it keeps the base's geometry, not the base: later in-place ops on the base
 * leave this history valid).
 * Other views of the same base see the version counter move and regenerate
 * theirs lazily (THPTensor_gradFn). */

/* A view whose gradient flows to its base: it shares the base's storage (a
 * `contiguous()` or `.to()` that copied is not one) and, when the base
 * requires grad, it was made with history (detach() was not). */
static bool is_diff_view(THPTensor *t) {
  if (!t->base) return false;
  THPTensor *b = (THPTensor *)t->base;
  if (t->t->storage != b->t->storage) return false;
  return t->grad_fn || !THPTensor_requiresGrad(t->base);
}

/* a view autograd could differentiate through: of a floating or complex dtype, on its base's memory */
static bool is_float_view(THPTensor *t) {
  return t->base && t->t->storage == ((THPTensor *)t->base)->t->storage &&
         (THDtype_isFloating(t->t->dtype) || THDtype_isComplex(t->t->dtype));
}

static PyObject *int_tuple(int n, const int64_t *v) {
  PyObject *r = PyTuple_New(n);
  for (int i = 0; r && i < n; i++) {
    PyObject *x = PyLong_FromLongLong(v[i]);
    if (!x) { Py_CLEAR(r); break; }
    PyTuple_SET_ITEM(r, i, x);
  }
  return r;
}

/* as_strided(base, view's sizes, strides, offset), recorded (grad mode on). */
static PyObject *view_of_base(THPTensor *v) {
  PyObject *size = int_tuple(v->t->ndim, v->t->sizes), *stride = int_tuple(v->t->ndim, v->t->strides);
  PyObject *off = PyLong_FromLongLong(v->t->offset), *r = NULL;
  if (size && stride && off) {
    bool was_off = THP_grad_enabled_off;
    THP_grad_enabled_off = false;
    r = F_as_strided(v->base, size, stride, off);
    THP_grad_enabled_off = was_off;
  }
  Py_XDECREF(size); Py_XDECREF(stride); Py_XDECREF(off);
  return r;
}

/* Points the view's grad_fn at its base's current history. */
static int regenerate_view_grad_fn(THPTensor *v) {
  v->view_version = v->version->version;
  if (!THPTensor_requiresGrad(v->base)) return 0;
  PyObject *r = view_of_base(v);
  if (!r) return -1;
  THPTensor *rt = (THPTensor *)r;
  Py_XSETREF(v->grad_fn, rt->grad_fn);
  rt->grad_fn = NULL;
  v->output_nr = 0;
  v->requires_grad = false;
  Py_DECREF(r);
  return 0;
}

static int multi_view_error(THPTensor *t, const char *what);

static int view_mode_error(THPTensor *t, const char *what);

PyObject *THPTensor_gradFn(THPTensor *t) {
  /* a view made with grad mode off whose base (or another view of it) changed in place since: torch refuses
   * its history at every read, whatever the mode of the change */
  if (t->view_mode && t->base && t->view_version != t->version->version &&
      (t->grad_fn || THPTensor_requiresGrad(t->base)) && is_float_view(t)) {
    view_mode_error(t, "its base or another view of its base has been modified inplace");
    return NULL;
  }
  if (t->base && t->grad_fn && t->view_version != t->version->version && is_diff_view(t)) {
    /* one of several views one op returned (split, unbind): its history cannot be rebuilt, as torch's */
    if (t->view_multi) {
      multi_view_error(t, "its base or another view of its base has been modified inplace");
      return NULL;
    }
    if (regenerate_view_grad_fn(t) < 0)
      PyErr_Clear();   /* only memory can fail here: the old history still describes the view's values' origin */
  }
  return t->grad_fn;
}

typedef struct {
  THPNode base;
  THPNode *fn;                       /* the in-place op's node */
  PyObject *base_size, *base_stride; /* the base's geometry */
  PyObject *view_size, *view_stride, *view_offset;   /* the view's, relative to the base's offset */
} THPCopySlices;
PyTypeObject THPCopySlicesType;

/* grad of the base = grad with the view's region replaced by what the op's
 * node makes of that region; the op's other inputs get its other outputs. */
static PyObject *copy_slices_apply(THPNode *n_, PyObject *const *grads) {
  THPCopySlices *n = (THPCopySlices *)n_;
  PyObject *out = PyTuple_New(n_->num_edges);
  if (!out) return NULL;
  for (int i = 0; i < n_->num_edges; i++) PyTuple_SET_ITEM(out, i, Py_NewRef(Py_None));
  if (grads[0] == Py_None) return out;
  PyObject *result = NULL, *slice = NULL, *sc = NULL, *res = NULL, *r;
  if (!(result = PyObject_CallMethod(grads[0], "new_empty_strided", "OO", n->base_size, n->base_stride))) goto fail;
  if (!(r = PyObject_CallMethod(result, "copy_", "O", grads[0]))) goto fail;
  Py_DECREF(r);
  if (!(slice = PyObject_CallMethod(result, "as_strided", "OOO", n->view_size, n->view_stride, n->view_offset))) goto fail;
  if (!(sc = PyObject_CallMethod(slice, "clone", NULL))) goto fail;
  if (!(res = n->fn->apply(n->fn, &sc))) goto fail;
  if (THP_grad_enabled()) {
    /* create_graph: the as_strided above saved `result` for its backward;
     * write into a copy so that saved tensor keeps its version */
    Py_SETREF(result, PyObject_CallMethod(result, "clone", NULL));
    if (!result) goto fail;
    Py_SETREF(slice, PyObject_CallMethod(result, "as_strided", "OOO", n->view_size, n->view_stride, n->view_offset));
    if (!slice) goto fail;
  }
  PyObject *g0 = PyTuple_GET_SIZE(res) ? PyTuple_GET_ITEM(res, 0) : Py_None;
  r = g0 == Py_None ? PyObject_CallMethod(slice, "zero_", NULL) : PyObject_CallMethod(slice, "copy_", "O", g0);
  if (!r) goto fail;
  Py_DECREF(r);
  PyTuple_SetItem(out, 0, Py_NewRef(result));
  for (Py_ssize_t i = 1; i < PyTuple_GET_SIZE(res) && i < n_->num_edges; i++)
    PyTuple_SetItem(out, i, Py_NewRef(PyTuple_GET_ITEM(res, i)));
  Py_DECREF(res); Py_DECREF(sc); Py_DECREF(slice); Py_DECREF(result);
  return out;
fail:
  Py_XDECREF(res); Py_XDECREF(sc); Py_XDECREF(slice); Py_XDECREF(result); Py_DECREF(out);
  return NULL;
}
static int copy_slices_traverse(THPNode *n_, visitproc visit, void *arg) {
  THPCopySlices *n = (THPCopySlices *)n_;
  Py_VISIT(n->fn);
  return 0;
}
static void copy_slices_release(THPNode *n_, bool final) {
  THPCopySlices *n = (THPCopySlices *)n_;
  if (n->fn && n->fn->release_saved) n->fn->release_saved(n->fn, final);
  if (!final) return;
  Py_CLEAR(n->fn);
  Py_CLEAR(n->base_size); Py_CLEAR(n->base_stride);
  Py_CLEAR(n->view_size); Py_CLEAR(n->view_stride); Py_CLEAR(n->view_offset);
}
PyTypeObject THPCopySlicesType = {
  PyVarObject_HEAD_INIT(NULL, 0)
  .tp_name = "CopySlices",
  .tp_basicsize = sizeof(THPCopySlices),
  .tp_flags = Py_TPFLAGS_DEFAULT,
};

void THP_rebase_history(PyObject *self, THPNode *node) {
  THPTensor *v = (THPTensor *)self;
  if (!is_diff_view(v) || (!THDtype_isFloating(v->t->dtype) && !THDtype_isComplex(v->t->dtype))) { THPNode_setOutput(node, 0, self); return; }
  THPTensor *b = (THPTensor *)v->base;
  int ne = node->num_edges ? node->num_edges : 1;
  THPCopySlices *cs = (THPCopySlices *)THPNode_new(&THPCopySlicesType, ne, 1);
  if (!cs) goto fallback;
  cs->base.apply = copy_slices_apply;
  cs->base.traverse_saved = copy_slices_traverse;
  cs->base.release_saved = copy_slices_release;
  cs->fn = (THPNode *)Py_NewRef(node);
  cs->base_size = int_tuple(b->t->ndim, b->t->sizes);
  cs->base_stride = int_tuple(b->t->ndim, b->t->strides);
  cs->view_size = int_tuple(v->t->ndim, v->t->sizes);
  cs->view_stride = int_tuple(v->t->ndim, v->t->strides);
  cs->view_offset = PyLong_FromLongLong(v->t->offset - b->t->offset);
  if (!cs->base_size || !cs->base_stride || !cs->view_size || !cs->view_stride || !cs->view_offset ||
      THPNode_setEdgeFor(&cs->base, 0, v->base) < 0) { Py_DECREF(cs); goto fallback; }
  for (int i = 1; i < node->num_edges; i++) {
    cs->base.edges[i].fn = Py_XNewRef(node->edges[i].fn);
    cs->base.edges[i].input_nr = node->edges[i].input_nr;
  }
  record_meta(node, 0, v);
  THPNode_setOutput(&cs->base, 0, v->base);
  Py_DECREF(cs);
  if (regenerate_view_grad_fn(v) == 0) return;
  PyErr_Clear();
fallback:   /* out of memory: the view keeps the op's history, as before views were tracked */
  PyErr_Clear();
  THPNode_setOutput(node, 0, self);
}

/* ---- base type: name(), next_functions, hooks, metadata ---- */
static int node_traverse(THPNode *n, visitproc visit, void *arg) {
  for (int i = 0; i < n->num_edges; i++) Py_VISIT(n->edges[i].fn);
  Py_VISIT(n->pre_hooks);
  Py_VISIT(n->post_hooks);
  Py_VISIT(n->dict);
  if (n->traverse_saved) { int r = n->traverse_saved(n, visit, arg); if (r) return r; }
  return 0;
}

static int node_clear(THPNode *n) {
  for (int i = 0; i < n->num_edges; i++) Py_CLEAR(n->edges[i].fn);
  Py_CLEAR(n->pre_hooks);
  Py_CLEAR(n->post_hooks);
  Py_CLEAR(n->dict);
  Py_CLEAR(n->anomaly_trace);
  if (n->release_saved) n->release_saved(n, true);
  return 0;
}

/* Freeing a long chain (x -> 150,000 ops -> y) recursively would overflow
 * the C stack: each node's dealloc would free the next. Instead, nodes
 * whose last reference drops while another node is being freed are queued
 * and freed by the outermost dealloc in a loop. */
static PyObject **free_queue;
static Py_ssize_t free_len, free_cap;
static int freeing;

/* Queues a dying node reference instead of freeing it recursively; false
 * when no node is being freed (the caller decrefs normally). */
static bool defer(PyObject *fn) {
  if (free_len == free_cap) {
    Py_ssize_t cap = free_cap ? free_cap * 2 : 256;
    PyObject **q = PyMem_Realloc(free_queue, cap * sizeof(PyObject *));
    if (!q) return false;
    free_queue = q;
    free_cap = cap;
  }
  free_queue[free_len++] = fn;
  return true;
}

bool THPNode_deferDecref(PyObject *fn) {
  if (!freeing || !fn || Py_REFCNT(fn) != 1 || !THPNode_Check(fn)) return false;
  return defer(fn);
}

static void node_dealloc_now(THPNode *n) {
  PyTypeObject *tp = Py_TYPE(n);
  PyObject_GC_UnTrack(n);
  if (n->weakreflist) PyObject_ClearWeakRefs((PyObject *)n);
  /* move edges out so their decrefs are deferred, not recursive */
  for (int i = 0; i < n->num_edges; i++) {
    PyObject *fn = n->edges[i].fn;
    n->edges[i].fn = NULL;
    if (!fn) continue;
    if (!(Py_REFCNT(fn) == 1 && THPNode_Check(fn) && defer(fn))) Py_DECREF(fn);
  }
  node_clear(n);
  PyMem_Free(n->edges);
  PyMem_Free(n->meta);
  tp->tp_free((PyObject *)n);   /* subclasses' type refs are dropped by subtype_dealloc */
}

static void node_dealloc(THPNode *n) {
  if (freeing) { node_dealloc_now(n); return; }
  freeing = 1;
  node_dealloc_now(n);
  while (free_len > 0) {
    PyObject *o = free_queue[--free_len];
    Py_DECREF(o);   /* may call node_dealloc -> node_dealloc_now, which queues */
  }
  freeing = 0;
}

static PyObject *node_name(PyObject *self, PyObject *u) { return PyUnicode_FromString(Py_TYPE(self)->tp_name); }

static PyObject *node_next_functions(THPNode *n, void *c) {
  PyObject *t = PyTuple_New(n->num_edges);
  if (!t) return NULL;
  for (int i = 0; i < n->num_edges; i++) {
    PyObject *pair = Py_BuildValue("(Oi)", n->edges[i].fn ? n->edges[i].fn : Py_None, n->edges[i].input_nr);
    if (!pair) { Py_DECREF(t); return NULL; }
    PyTuple_SET_ITEM(t, i, pair);
  }
  return t;
}

static PyObject *node_metadata(THPNode *n, void *c) {
  if (!n->dict && !(n->dict = PyDict_New())) return NULL;
  return Py_NewRef(n->dict);
}

static PyObject *add_hook(PyObject **list, PyObject *hook) {
  if (!PyCallable_Check(hook)) { PyErr_SetString(PyExc_TypeError, "hook must be callable"); return NULL; }
  if (!*list && !(*list = PyList_New(0))) return NULL;
  if (PyList_Append(*list, hook) < 0) return NULL;
  return THP_make_removable_handle(*list, hook);
}
static PyObject *node_register_hook(THPNode *n, PyObject *hook) { return add_hook(&n->post_hooks, hook); }
static PyObject *node_register_prehook(THPNode *n, PyObject *hook) { return add_hook(&n->pre_hooks, hook); }

static PyObject *node_call(PyObject *self, PyObject *args, PyObject *kw) {
  THPNode *n = (THPNode *)self;
  Py_ssize_t k = PyTuple_GET_SIZE(args);
  if (k != n->num_inputs) {
    PyErr_Format(PyExc_TypeError, "%s expects %d gradients, got %zd", Py_TYPE(self)->tp_name, n->num_inputs, k);
    return NULL;
  }
  return n->apply(n, &PyTuple_GET_ITEM(args, 0));
}

static PyObject *node_seq(THPNode *n, PyObject *u) { return PyLong_FromUnsignedLongLong(n->seq); }

PyObject *THPNode_registerTensorPrehook(PyObject *self, PyObject *args);
static PyMethodDef node_methods[] = {
  {"_register_tensor_prehook", THPNode_registerTensorPrehook, METH_VARARGS, NULL},
  {"name", node_name, METH_NOARGS, "The node's class name, e.g. AddBackward0."},
  {"register_hook", (PyCFunction)node_register_hook, METH_O, "hook(grad_inputs, grad_outputs) after the node runs."},
  {"register_prehook", (PyCFunction)node_register_prehook, METH_O, "hook(grad_outputs) before the node runs."},
  {"_sequence_nr", (PyCFunction)node_seq, METH_NOARGS, NULL},
  {NULL}
};
static PyGetSetDef node_getset[] = {
  {"next_functions", (getter)node_next_functions, NULL, NULL, NULL},
  {"metadata", (getter)node_metadata, NULL, NULL, NULL},
  {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
  {NULL}
};

PyTypeObject THPNodeType = {
  PyVarObject_HEAD_INIT(NULL, 0)
  .tp_name = "torch._C._FunctionBase",
  .tp_basicsize = sizeof(THPNode),
  .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
  .tp_dealloc = (destructor)node_dealloc,
  .tp_traverse = (traverseproc)node_traverse,
  .tp_clear = (inquiry)node_clear,
  .tp_methods = node_methods,
  .tp_getset = node_getset,
  .tp_call = node_call,
  .tp_weaklistoffset = offsetof(THPNode, weakreflist),
  .tp_dictoffset = offsetof(THPNode, dict),
};

/* ---- AccumulateGrad ---- */
typedef struct { THPNode base; PyObject *variable; } THPAccumulateGrad;
PyTypeObject THPAccumulateGradType;

/* Tensor.register_post_accumulate_grad_hook: each hook(tensor) runs once .grad
 * holds the new sum. The hooks dict lives on the tensor (class default None). */
static int run_post_accumulate_hooks(PyObject *var) {
  PyObject *hooks = PyObject_GetAttrString(var, "_post_accumulate_grad_hooks");
  if (!hooks) return -1;
  int rc = 0;
  if (PyDict_Check(hooks) && PyDict_GET_SIZE(hooks)) {
    PyObject *fns = PyDict_Values(hooks);   /* a copy: a hook may remove itself */
    for (Py_ssize_t i = 0; fns && i < PyList_GET_SIZE(fns); i++) {
      PyObject *hook = PyList_GET_ITEM(fns, i);
      PyObject *r = PyObject_CallOneArg(hook, var);
      if (!r || THP_check_hook_result(hook, var, r) < 0) { Py_XDECREF(r); rc = -1; break; }
      Py_DECREF(r);
    }
    if (!fns) rc = -1;
    Py_XDECREF(fns);
  }
  Py_DECREF(hooks);
  return rc;
}

static PyObject *accumulate_apply(THPNode *n_, PyObject *const *grads) {
  THPAccumulateGrad *n = (THPAccumulateGrad *)n_;
  PyObject *g = grads[0];
  if (g != Py_None && n->variable) {
    THPTensor *v = (THPTensor *)n->variable;
    if (THP_run_tensor_hooks(n->variable, &g) < 0) return NULL;
    if (g != Py_None) {
      int rc = THP_accumulate_into_grad(v, g);
      Py_DECREF(g);
      if (rc < 0 || run_post_accumulate_hooks(n->variable) < 0) return NULL;
    } else {
      Py_DECREF(g);
    }
  }
  return PyTuple_New(0);
}
static int accumulate_traverse(THPNode *n, visitproc visit, void *arg) {
  Py_VISIT(((THPAccumulateGrad *)n)->variable);
  return 0;
}
static void accumulate_release(THPNode *n, bool final) {
  (void)final;
  THPAccumulateGrad *a = (THPAccumulateGrad *)n;
  if (a->variable) {
    THPTensor *v = (THPTensor *)a->variable;
    if (v->grad_acc == (PyObject *)n) v->grad_acc = NULL;
    Py_CLEAR(a->variable);
  }
}
static PyObject *accumulate_variable(THPAccumulateGrad *n, void *c) {
  return Py_NewRef(n->variable ? n->variable : Py_None);
}
static PyGetSetDef accumulate_getset[] = { {"variable", (getter)accumulate_variable, NULL, NULL, NULL}, {NULL} };

PyTypeObject THPAccumulateGradType = {
  PyVarObject_HEAD_INIT(NULL, 0)
  .tp_name = "AccumulateGrad",
  .tp_basicsize = sizeof(THPAccumulateGrad),
  .tp_flags = Py_TPFLAGS_DEFAULT,   /* GC flag and traverse/clear come from the base */
  .tp_getset = accumulate_getset,
};

PyObject *THPAccumulateGrad_get(PyObject *leaf) {
  THPTensor *t = (THPTensor *)leaf;
  if (t->grad_acc) return Py_NewRef(t->grad_acc);
  THPAccumulateGrad *n = (THPAccumulateGrad *)THPNode_new(&THPAccumulateGradType, 0, 1);
  if (!n) return NULL;
  n->base.apply = accumulate_apply;
  n->base.traverse_saved = accumulate_traverse;
  n->base.release_saved = accumulate_release;
  n->base.seq = UINT64_MAX;   /* as PyTorch: runs as soon as its gradient is complete */
  n->variable = Py_NewRef(leaf);
  record_meta(&n->base, 0, t);
  t->grad_acc = (PyObject *)n;
  return (PyObject *)n;
}

/* ---- saved variables ---- */
/* The stack of torch.autograd.graph.saved_tensors_hooks: (pack, unpack) pairs, innermost last. Only the innermost applies, as in torch. One stack for
 * the process (under the GIL), where torch keeps one per thread. */
static PyObject *saved_hooks;

PyObject *THP_push_saved_tensors_hooks(PyObject *m, PyObject *args) {
  (void)m;
  PyObject *pack, *unpack;
  if (!PyArg_ParseTuple(args, "OO", &pack, &unpack)) return NULL;
  if (!saved_hooks && !(saved_hooks = PyList_New(0))) return NULL;
  PyObject *pair = PyTuple_Pack(2, pack, unpack);
  if (!pair) return NULL;
  int rc = PyList_Append(saved_hooks, pair);
  Py_DECREF(pair);
  if (rc < 0) return NULL;
  Py_RETURN_NONE;
}

PyObject *THP_pop_saved_tensors_hooks(PyObject *m, PyObject *noargs) {
  (void)m; (void)noargs;
  Py_ssize_t n = saved_hooks ? PyList_GET_SIZE(saved_hooks) : 0;
  if (n == 0) {
    PyErr_SetString(PyExc_RuntimeError, "no saved tensors hooks to pop");
    return NULL;
  }
  if (PyList_SetSlice(saved_hooks, n - 1, n, NULL) < 0) return NULL;
  Py_RETURN_NONE;
}

/* the innermost (pack, unpack) pair, or None: custom Functions pack their saved tensors in Python */
PyObject *THP_saved_tensors_hooks_top(PyObject *m, PyObject *noargs) {
  (void)m; (void)noargs;
  Py_ssize_t n = saved_hooks ? PyList_GET_SIZE(saved_hooks) : 0;
  return Py_NewRef(n ? PyList_GET_ITEM(saved_hooks, n - 1) : Py_None);
}

/* tensor through pack (sv->data is NULL): 0, or -1 with the hook's error and nothing held */
static int pack_into(THPSavedVar *sv, PyObject *tensor, PyObject *pack, PyObject *unpack) {
  PyObject *packed = PyObject_CallOneArg(pack, tensor);
  if (!packed) return -1;
  sv->packed = packed;
  sv->unpack_hook = Py_NewRef(unpack);
  PyObject *fn = ((THPTensor *)tensor)->grad_fn;
  if (!sv->is_output && fn) {
    sv->data = Py_NewRef(fn);
  } else if (!sv->is_output && sv->requires_grad) {
    /* a leaf: its accumulator, so the unpacked tensor's history reaches the leaf (double backward) */
    if (!(sv->data = THPAccumulateGrad_get(tensor))) {
      Py_CLEAR(sv->packed);
      Py_CLEAR(sv->unpack_hook);
      return -1;
    }
  }
  return 0;
}

/* tensor through the innermost pack hook: 1 when packed, 0 without hooks, -1 on error */
static int pack_with_hooks(THPSavedVar *sv, PyObject *tensor) {
  Py_ssize_t n = saved_hooks ? PyList_GET_SIZE(saved_hooks) : 0;
  /* a Python scalar an op wrapped as a tensor is an argument, not a saved tensor, in torch */
  if (n == 0 || ((THPTensor *)tensor)->t->wrapped_number) return 0;
  PyObject *pair = PyList_GET_ITEM(saved_hooks, n - 1);
  Py_INCREF(pair);   /* the hook may pop the stack */
  int rc = pack_into(sv, tensor, PyTuple_GET_ITEM(pair, 0), PyTuple_GET_ITEM(pair, 1));
  Py_DECREF(pair);
  return rc < 0 ? -1 : 1;
}

int THPSavedVar_save(THPSavedVar *sv, PyObject *tensor, bool is_output) {
  sv->was_none = !tensor || tensor == Py_None;
  sv->packed = sv->unpack_hook = NULL;
  if (sv->was_none) { sv->data = NULL; return 0; }
  THPTensor *t = (THPTensor *)tensor;
  if (t->is_inference) {
    sv->was_none = true;   /* nothing held: the node's release skips it */
    PyErr_SetString(PyExc_RuntimeError,
                    "Inference tensors cannot be saved for backward. Please do not use Tensors created in inference "
                    "mode in computation tracked by autograd. To work around this, you can make a clone to get a "
                    "normal tensor and use it in autograd, or use `torch.no_grad()` instead of "
                    "`torch.inference_mode()`.");
    return -1;
  }
  sv->version = t->version->version;
  sv->is_output = is_output;
  sv->output_nr = t->output_nr;
  sv->requires_grad = THPTensor_requiresGrad(tensor);
  sv->data = NULL;
  int hooked = pack_with_hooks(sv, tensor);
  if (hooked) return hooked < 0 ? -1 : 0;
  if (!is_output) { sv->data = Py_NewRef(tensor); return 0; }
  /* An output is saved without its grad_fn (that would be a cycle through
   * this node); unpack puts the node back. It shares the version counter. */
  THPTensor *alias;
  if (is_diff_view(t)) {
    /* an in-place op's result on a view: its history at backward time is the
     * base's (CopySlices), so the alias stays a view of that base */
    alias = (THPTensor *)THPTensor_wrapView(at_alias(t->t), tensor);
  } else {
    alias = (THPTensor *)THPTensor_wrap(at_alias(t->t));
    if (alias) { THPVersion_free(alias->version); alias->version = THPVersion_retain(t->version); }
  }
  if (!alias) { PyErr_Clear(); sv->data = NULL; return 0; }
  sv->data = (PyObject *)alias;
  return 0;
}

/* What the unpack hook gives back; a saved output that requires grad gets this node as its grad_fn again */
static PyObject *unpack_with_hook(THPSavedVar *sv, THPNode *owner) {
  PyObject *r = PyObject_CallOneArg(sv->unpack_hook, sv->packed);
  if (!r) return NULL;
  if (!THPTensor_Check(r)) {
    PyErr_Format(PyExc_TypeError, "Output of saved tensor unpack_hook expected to be a Tensor but got result of "
                 "type %s", Py_TYPE(r)->tp_name);
    Py_DECREF(r);
    return NULL;
  }
  if (!sv->requires_grad) return r;
  /* as torch: the unpacked tensor carries the saved one's history (its grad_fn, or is a leaf requiring grad) */
  THPTensor *a = (THPTensor *)THPTensor_wrap(at_alias(((THPTensor *)r)->t));
  Py_DECREF(r);
  if (!a) return NULL;
  /* the node for a saved output, the input's grad_fn, or a saved leaf's accumulator (held strongly: a
   * tensor's own grad_acc is borrowed), so gradients through the unpacked tensor reach the leaf. Unlike
   * torch's, that unpacked leaf shows the accumulator as its grad_fn. */
  a->grad_fn = Py_NewRef(sv->is_output ? (PyObject *)owner : sv->data);
  a->output_nr = sv->output_nr;
  return (PyObject *)a;
}

/* torch's text for a saved tensor changed in place: names the node that made it as "Add" for AddBackward0
 * (a view of a changed base is "AsStrided", its regenerated node), and nothing for a leaf */
static PyObject *modified_error(THPSavedVar *sv, THPNode *owner, THPTensor *t) {
  char sizes[256], which[128] = "";
  PyObject *fn = NULL;
  if (sv->is_output) fn = Py_NewRef((PyObject *)owner);
  else if (t->grad_fn || t->base) {
    fn = PyObject_GetAttrString((PyObject *)t, "grad_fn");   /* the getter regenerates a view's node */
    if (!fn) return NULL;
  }
  if (fn && fn != Py_None) {
    const char *name = Py_TYPE(fn)->tp_name, *dot = strrchr(name, '.');
    if (dot) name = dot + 1;
    size_t n = strlen(name);
    while (n > 0 && name[n - 1] >= '0' && name[n - 1] <= '9') n--;
    if (n > 8 && !strncmp(name + n - 8, "Backward", 8)) n -= 8;
    snprintf(which, sizeof which, ", which is output %d of %.*s,", sv->output_nr, (int)n, name);
  }
  Py_XDECREF(fn);
  PyErr_Format(PyExc_RuntimeError,
               "one of the variables needed for gradient computation has been modified by an inplace operation: "
               "[torch.%sTensor %s]%s is at version %lld; expected version %lld instead. "
               "Hint: enable anomaly detection to find the operation that failed to compute its gradient, with "
               "torch.autograd.set_detect_anomaly(True, check_nan=False).",
               THDtype_info[t->t->dtype].legacy, THTensor_sizeStr(t->t->ndim, t->t->sizes, sizes, sizeof sizes),
               which, (long long)t->version->version, (long long)sv->version);
  return NULL;
}

PyObject *THPSavedVar_unpack(THPSavedVar *sv, THPNode *owner) {
  if (sv->was_none) return Py_NewRef(Py_None);
  if (sv->packed) return unpack_with_hook(sv, owner);
  if (!sv->data) {
    PyErr_SetString(PyExc_RuntimeError,
                    "Trying to backward through the graph a second time (or directly access saved tensors after "
                    "they have already been freed). Saved intermediate values of the graph are freed when you call "
                    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
                    "graph a second time or if you need to access saved tensors after calling backward.");
    return NULL;
  }
  THPTensor *t = (THPTensor *)sv->data;
  if (t->version->version != sv->version) return modified_error(sv, owner, t);
  if (!sv->is_output) return Py_NewRef(sv->data);
  if (t->base) {   /* saved by an in-place op on a view: regenerated from the base's history */
    THPTensor *r = (THPTensor *)THPTensor_wrapView(at_alias(t->t), sv->data);
    if (!r) return NULL;
    if (sv->requires_grad && regenerate_view_grad_fn(r) < 0) { Py_DECREF(r); return NULL; }
    return (PyObject *)r;
  }
  THPTensor *r = (THPTensor *)THPTensor_wrap(at_alias(t->t));
  if (!r) return NULL;
  THPVersion_free(r->version);
  r->version = THPVersion_retain(t->version);
  if (sv->requires_grad) {
    r->grad_fn = Py_NewRef((PyObject *)owner);
    r->output_nr = sv->output_nr;
  }
  return (PyObject *)r;
}

void THPSavedVar_release(THPSavedVar *sv) {
  Py_CLEAR(sv->data);
  Py_CLEAR(sv->packed);
  Py_CLEAR(sv->unpack_hook);
}

/* grad_fn._raw_saved_<name>: torch._C._autograd.SavedTensor, a handle on one saved variable of a node (which
 * it keeps alive) whose register_hooks packs that one tensor as saved_tensors_hooks would have */
typedef struct {
  PyObject_HEAD
  PyObject *owner;
  THPSavedVar *sv;   /* inside owner */
} THPSavedTensor;

static void SavedTensor_dealloc(THPSavedTensor *self) {
  PyObject_GC_UnTrack(self);
  Py_CLEAR(self->owner);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static int SavedTensor_traverse(THPSavedTensor *self, visitproc visit, void *arg) {
  Py_VISIT(self->owner);
  return 0;
}

static int SavedTensor_clear(THPSavedTensor *self) {
  Py_CLEAR(self->owner);
  return 0;
}

static PyObject *SavedTensor_register_hooks(THPSavedTensor *self, PyObject *args) {
  PyObject *pack, *unpack;
  if (!PyArg_ParseTuple(args, "OO:register_hooks", &pack, &unpack)) return NULL;
  if (!PyCallable_Check(pack) || !PyCallable_Check(unpack)) {
    PyErr_SetString(PyExc_TypeError, "Expected pack_hook and unpack_hook to be callable");
    return NULL;
  }
  THPSavedVar *sv = self->sv;
  if (!self->owner) {
    PyErr_SetString(PyExc_RuntimeError, "Calling register_hooks on a saved tensor that no longer exists");
    return NULL;
  }
  if (!sv->packed && !sv->data && !sv->was_none) {   /* released by a backward */
    PyErr_SetString(PyExc_RuntimeError, "Calling register_hooks on a saved tensor after it has been freed. Saved "
                    "intermediate values of the graph are freed when you call .backward() or autograd.grad(). Specify "
                    "retain_graph=True if you need to backward through the graph a second time or if you need to "
                    "access saved variables after calling backward.");
    return NULL;
  }
  if (sv->packed) {
    PyErr_SetString(PyExc_RuntimeError, "Calling register_hooks on a saved tensor whose hooks have already been "
                    "set. Hint: only one pair of hooks is allowed at a time.");
    return NULL;
  }
  if (sv->was_none) {
    PyErr_SetString(PyExc_RuntimeError, "Calling register_hooks on a saved tensor with value None is forbidden");
    return NULL;
  }
  /* the tensor as unpacking gives it (version-checked; the backward-twice error once released) */
  PyObject *tensor = THPSavedVar_unpack(sv, (THPNode *)self->owner);
  if (!tensor) return NULL;
  PyObject *old = sv->data;
  sv->data = NULL;
  if (pack_into(sv, tensor, pack, unpack) < 0) {
    sv->data = old;
    Py_DECREF(tensor);
    return NULL;
  }
  Py_XDECREF(old);
  Py_DECREF(tensor);
  Py_RETURN_NONE;
}

static PyMethodDef SavedTensor_methods[] = {
  {"register_hooks", (PyCFunction)SavedTensor_register_hooks, METH_VARARGS, NULL},
  {NULL}
};

static PyTypeObject THPSavedTensorType = {
  PyVarObject_HEAD_INIT(NULL, 0)
  .tp_name = "torch._C._autograd.SavedTensor",
  .tp_basicsize = sizeof(THPSavedTensor),
  .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
  .tp_dealloc = (destructor)SavedTensor_dealloc,
  .tp_traverse = (traverseproc)SavedTensor_traverse,
  .tp_clear = (inquiry)SavedTensor_clear,
  .tp_methods = SavedTensor_methods,
};

PyObject *THPSavedVar_raw(THPSavedVar *sv, PyObject *owner) {
  THPSavedTensor *r = PyObject_GC_New(THPSavedTensor, &THPSavedTensorType);
  if (!r) return NULL;
  r->owner = Py_NewRef(owner);
  r->sv = sv;
  PyObject_GC_Track(r);
  return (PyObject *)r;
}

/* ---- recording helpers ---- */
bool THP_any_requires_grad(int n, PyObject *const *ts) {
  if (!THP_grad_enabled()) return false;
  for (int i = 0; i < n; i++)
    if (ts[i] && ts[i] != Py_None && THPTensor_Check(ts[i]) && THPTensor_requiresGrad(ts[i])) return true;
  return false;
}

/* torch's error for a view one of several an op returned: "Output 1 of Unbind is a view and <what>. ..."
 * (the op's name is its grad_fn's, UnbindBackward0, less "Backward0") */
static int multi_view_error(THPTensor *t, const char *what) {
  const char *name = Py_TYPE(t->grad_fn)->tp_name, *end = strstr(name, "Backward");
  int len = end ? (int)(end - name) : (int)strlen(name), nr = t->output_nr;
  PyObject *op = PyUnicode_FromStringAndSize(name, len);
  if (!op) return -1;
  PyErr_Format(PyExc_RuntimeError,
               "Output %d of %U is a view and %s. This view is the output of a function that returns multiple views. "
               "Such functions do not allow the output views to be modified inplace. You should replace the inplace "
               "operation by an out-of-place one.", nr, op, what);
  Py_DECREF(op);
  return -1;
}

/* torch's error for a view made in no_grad (or inference) mode modified in place where autograd records:
 * "A view was created in no_grad mode and <what> with grad mode enabled. ...", or for a view of such a view
 * made with history, "Output 0 of Slice is a view of a view which was created in no_grad mode ..." */
static int view_mode_error(THPTensor *t, const char *what) {
  PyObject *prefix;
  if (t->grad_fn) {
    const char *name = Py_TYPE(t->grad_fn)->tp_name, *end = strstr(name, "Backward");
    PyObject *op = PyUnicode_FromStringAndSize(name, end ? end - name : (Py_ssize_t)strlen(name));
    if (!op) return -1;
    prefix = PyUnicode_FromFormat("Output %d of %U is a view of a view which was created in", t->output_nr, op);
    Py_DECREF(op);
  } else {
    prefix = PyUnicode_FromString("A view was created in");
  }
  if (!prefix) return -1;
  bool inf = t->view_mode == THP_VIEW_INFERENCE;
  PyErr_Format(PyExc_RuntimeError,
               "%U %s mode and %s %s. Given that this use case is ambiguous and error-prone, it is forbidden. You "
               "can clarify your code by moving both the view and the inplace either both inside the %s block (if "
               "you don't want the inplace to be tracked) or both outside (if you want the inplace to be tracked).",
               prefix, inf ? "inference" : "no_grad", what, inf ? "in normal mode" : "with grad mode enabled",
               inf ? "inference_mode" : "no_grad");
  Py_DECREF(prefix);
  return -1;
}

int THP_check_inplace(PyObject *o) {
  return THP_check_inplace_rg(o, THP_grad_enabled() && THPTensor_requiresGrad(o));
}

int THP_check_inplace_rg(PyObject *o, bool rg) {
  THPTensor *t = (THPTensor *)o;
  if (rg && THP_grad_enabled() && t->view_mode && is_float_view(t)) return view_mode_error(t, "is being modified inplace");
  if (t->is_inference && !THP_inference_mode) {
    PyErr_SetString(PyExc_RuntimeError,
                    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to "
                    "get a normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for "
                    "more details.");
    return -1;
  }
  if (THP_grad_enabled() && t->view_multi && t->grad_fn) return multi_view_error(t, "is being modified inplace");
  if (THP_grad_enabled() && is_diff_view(t) && t->grad_fn && ((THPTensor *)t->base)->requires_grad &&
      !((THPTensor *)t->base)->grad_fn) {
    PyErr_SetString(PyExc_RuntimeError, "a view of a leaf Variable that requires grad is being used in an in-place operation.");
    return -1;
  }
  if (THP_grad_enabled() && t->requires_grad && !t->grad_fn) {
    PyErr_SetString(PyExc_RuntimeError,
                    "a leaf Variable that requires grad is being used in an in-place operation.");
    return -1;
  }
  return 0;
}

void THP_bump_version(PyObject *o) { ((THPTensor *)o)->version->version++; }

int THP_initPyFunction(PyObject *m);
int THP_initNodes(PyObject *m) {
  if (THP_initPyFunction(m) < 0) return -1;
  if (PyType_Ready(&THPNodeType) < 0) return -1;
  THPAccumulateGradType.tp_base = &THPNodeType;
  if (PyType_Ready(&THPAccumulateGradType) < 0) return -1;
  THPCopySlicesType.tp_base = &THPNodeType;
  if (PyType_Ready(&THPCopySlicesType) < 0) return -1;
  if (PyType_Ready(&THPSavedTensorType) < 0) return -1;
  extern PyTypeObject *THP_generated_node_types[];
  extern void THP_generated_init_nodes(void);
  THP_generated_init_nodes();
  for (PyTypeObject **tp = THP_generated_node_types; *tp; tp++)
    if (PyType_Ready(*tp) < 0) return -1;
  if (PyModule_AddObjectRef(m, "_FunctionBase", (PyObject *)&THPNodeType) < 0) return -1;
  return 0;
}
