/* The backward engine: _EngineBase.run_backward.
 *
 * 1. roots: each output's (grad_fn, output_nr), with its initial gradient;
 * 2. dependencies: how many edges point at each node reachable from roots;
 * 3. when inputs= is given, only nodes from which an input is reachable run,
 *    and gradients arriving at an input's edge are captured;
 * 4. a ready queue ordered by sequence number (latest forward op first; a C
 *    binary heap, see push_ready) runs
 *    nodes whose gradients are complete; each delivered gradient is reduced
 *    to the receiving input's shape/dtype (broadcast undo) and summed into
 *    that node's input buffer. */
#include "THP.h"
#include "autograd/Formulas.h"
#include "ArgParser.h"
#include "Functions.h"

typedef struct { PyObject_HEAD } THPEngine;

typedef struct {
  uint64_t seq;        /* the node's sequence number */
  uint64_t order;      /* push order: breaks ties first-in first-out */
  PyObject *node;      /* owned */
} ReadyItem;

typedef struct {
  ReadyItem *v;
  size_t len, cap;
  uint64_t pushed;
} ReadyQueue;

typedef struct {
  PyObject *deps;      /* node -> int remaining */
  PyObject *buffers;   /* node -> list of grads */
  PyObject *needed;    /* node -> bool (only with inputs=) */
  ReadyQueue ready;    /* nodes whose gradients are complete */
  PyObject **cap_fn;   /* capture edges for inputs= */
  int *cap_nr;
  PyObject **captured;
  int ncap;
  bool keep_graph, create_graph, accumulate;
} RunState;

/* Callbacks queued with queue_callback while a backward call runs on this
 * thread. They run in order once the ready queue has drained (DDP waits for
 * its gradient all-reduces there). A nested backward (from a hook or a custom
 * Function) gets its own list and restores the outer one when it returns. */
static _Thread_local PyObject *tls_final_callbacks;   /* borrowed from the running call */

static PyObject *engine_queue_callback(PyObject *self, PyObject *cb) {
  (void)self;
  if (!tls_final_callbacks) {
    PyErr_SetString(PyExc_RuntimeError, "Final callbacks can only be installed during backward pass.");
    return NULL;
  }
  if (PyList_Append(tls_final_callbacks, cb) < 0) return NULL;
  Py_RETURN_NONE;
}

/* Runs the queued callbacks; one may queue more, which run after it. */
static int run_final_callbacks(PyObject *cbs) {
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(cbs); i++) {
    PyObject *r = PyObject_CallNoArgs(PyList_GET_ITEM(cbs, i));
    if (!r) return -1;
    Py_DECREF(r);
  }
  return 0;
}

static PyObject *edge_of(PyObject *tensor, int *nr) {
  THPTensor *t = (THPTensor *)tensor;
  *nr = 0;
  PyObject *fn = THPTensor_gradFn(t);
  if (fn) { *nr = t->output_nr; return Py_NewRef(fn); }
  if (PyErr_Occurred()) return NULL;
  if (t->requires_grad) return THPAccumulateGrad_get(tensor);
  return NULL;
}

static int count_deps(RunState *s, PyObject *root) {
  PyObject *stack = PyList_New(0);
  if (!stack || PyList_Append(stack, root) < 0) { Py_XDECREF(stack); return -1; }
  PyObject *seen = PySet_New(NULL);
  if (!seen || PySet_Add(seen, root) < 0) goto fail;
  while (PyList_GET_SIZE(stack)) {
    Py_ssize_t last = PyList_GET_SIZE(stack) - 1;
    THPNode *n = (THPNode *)Py_NewRef(PyList_GET_ITEM(stack, last));
    PyList_SetSlice(stack, last, last + 1, NULL);
    for (int i = 0; i < n->num_edges; i++) {
      PyObject *fn = n->edges[i].fn;
      if (!fn) continue;
      PyObject *c = PyDict_GetItemWithError(s->deps, fn);
      long v = c ? PyLong_AsLong(c) : 0;
      PyObject *nv = PyLong_FromLong(v + 1);
      if (!nv || PyDict_SetItem(s->deps, fn, nv) < 0) { Py_XDECREF(nv); Py_DECREF(n); goto fail; }
      Py_DECREF(nv);
      int has = PySet_Contains(seen, fn);
      if (!has) {
        if (PySet_Add(seen, fn) < 0 || PyList_Append(stack, fn) < 0) { Py_DECREF(n); goto fail; }
      }
    }
    Py_DECREF(n);
  }
  Py_DECREF(stack);
  Py_DECREF(seen);
  return 0;
fail:
  Py_DECREF(stack);
  Py_XDECREF(seen);
  return -1;
}

/* needed[node] = node is a capture target or leads to one (memoised DFS). */
static int mark_needed(RunState *s, PyObject *node) {
  PyObject *v = PyDict_GetItemWithError(s->needed, node);
  if (v) return v == Py_True;
  if (PyErr_Occurred()) return -1;
  /* iterative post-order */
  PyObject *stack = PyList_New(0);
  if (!stack) return -1;
  if (PyList_Append(stack, node) < 0) { Py_DECREF(stack); return -1; }
  while (PyList_GET_SIZE(stack)) {
    Py_ssize_t last = PyList_GET_SIZE(stack) - 1;
    THPNode *n = (THPNode *)PyList_GET_ITEM(stack, last);
    if (PyDict_Contains(s->needed, (PyObject *)n)) { PyList_SetSlice(stack, last, last + 1, NULL); continue; }
    bool pending = false, need = false;
    for (int k = 0; k < s->ncap; k++) if (s->cap_fn[k] == (PyObject *)n) need = true;
    for (int i = 0; i < n->num_edges; i++) {
      PyObject *fn = n->edges[i].fn;
      if (!fn) continue;
      for (int k = 0; k < s->ncap; k++)
        if (s->cap_fn[k] == fn && s->cap_nr[k] == n->edges[i].input_nr) need = true;
      PyObject *r = PyDict_GetItemWithError(s->needed, fn);
      if (!r) { pending = true; if (PyList_Append(stack, fn) < 0) { Py_DECREF(stack); return -1; } }
      else if (r == Py_True) need = true;
    }
    if (!pending) {
      if (PyDict_SetItem(s->needed, (PyObject *)n, need ? Py_True : Py_False) < 0) { Py_DECREF(stack); return -1; }
      PyList_SetSlice(stack, PyList_GET_SIZE(stack) - 1, PyList_GET_SIZE(stack), NULL);
    } else {
      /* a cycle cannot happen in a DAG; avoid re-pushing n forever */
      PyDict_SetItem(s->needed, (PyObject *)n, Py_False);
      PyDict_DelItem(s->needed, (PyObject *)n);
    }
  }
  Py_DECREF(stack);
  v = PyDict_GetItemWithError(s->needed, node);
  return v == Py_True;
}

/* The ready queue: a binary max-heap on (seq, -order) in a growable array.
 * Later forward ops (higher sequence numbers) run first, as in PyTorch; among
 * equal sequence numbers the node pushed first runs first. Each entry owns a
 * reference to its node; ready_clear drops whatever is left (error paths). */
static bool ready_before(const ReadyItem *a, const ReadyItem *b) {
  return a->seq != b->seq ? a->seq > b->seq : a->order < b->order;
}

static int push_ready(RunState *s, PyObject *node) {
  ReadyQueue *q = &s->ready;
  if (q->len == q->cap) {
    size_t cap = q->cap ? 2 * q->cap : 64;
    ReadyItem *v = PyMem_Realloc(q->v, cap * sizeof(ReadyItem));
    if (!v) { PyErr_NoMemory(); return -1; }
    q->v = v;
    q->cap = cap;
  }
  ReadyItem it = {((THPNode *)node)->seq, q->pushed++, Py_NewRef(node)};
  size_t i = q->len++;
  while (i > 0) {
    size_t parent = (i - 1) / 2;
    if (!ready_before(&it, &q->v[parent])) break;
    q->v[i] = q->v[parent];
    i = parent;
  }
  q->v[i] = it;
  return 0;
}

/* Removes the first node to run and returns it (the queue's reference). */
static PyObject *pop_ready(RunState *s) {
  ReadyQueue *q = &s->ready;
  PyObject *top = q->v[0].node;
  ReadyItem last = q->v[--q->len];
  size_t i = 0, n = q->len;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && ready_before(&q->v[c + 1], &q->v[c])) c++;
    if (!ready_before(&q->v[c], &last)) break;
    q->v[i] = q->v[c];
    i = c;
  }
  if (n) q->v[i] = last;
  return top;
}

static void ready_clear(ReadyQueue *q) {
  for (size_t i = 0; i < q->len; i++) Py_DECREF(q->v[i].node);
  PyMem_Free(q->v);
  *q = (ReadyQueue){0};
}

/* Two gradients of one input, summed out of place; a sparse one (the Python
 * COO class) through its operator: sparse + sparse stays sparse, with a dense
 * one the sum is dense, as torch's InputBuffer gives. */
static PyObject *grad_sum(PyObject *a, PyObject *b) {
  if (ap_is_sparse(a) && !ap_is_sparse(b)) return PyNumber_Add(b, a);
  if (ap_is_sparse(b)) return PyNumber_Add(a, b);
  return F_add(a, b, NULL);
}

/* The gradient already in a slot can take the next one in place when nothing else can see it or its
 * memory (only the buffer holds it, its storage is its own, dense and on the host) and neither records
 * history: as torch's InputBuffer does. Several views' backwards into one base (chunk, split, unbind),
 * each a full-size gradient, then cost one pass each instead of a fresh sum each. The sum's bits are
 * those of old + grad. */
static bool can_sum_in_place(PyObject *old, PyObject *grad) {
  PyTypeObject *cls = THPTensorClass ? (PyTypeObject *)THPTensorClass : &THPTensorType;
  if (Py_REFCNT(old) != 1 || Py_TYPE(old) != cls || Py_TYPE(grad) != cls) return false;
  THPTensor *o = (THPTensor *)old, *g = (THPTensor *)grad;
  if (o->grad_fn || g->grad_fn || o->requires_grad || g->requires_grad || o->base || o->hooks) return false;
  const THTensor *a = o->t, *b = g->t;
  if (atomic_load(&a->refcount) != 1 || atomic_load(&a->storage->refcount) != 1 || a->storage->device != -1 ||
      b->storage->device != -1 || a->dtype != b->dtype || a->ndim != b->ndim || !THTensor_isContiguous(a))
    return false;
  for (int d = 0; d < a->ndim; d++)
    if (a->sizes[d] != b->sizes[d]) return false;
  return true;
}

/* Adds grad into node's buffer slot nr: in place where can_sum_in_place allows, else out of place. */
static int buffer_add(RunState *s, PyObject *node, int nr, PyObject *grad) {
  THPNode *n = (THPNode *)node;
  PyObject *buf = PyDict_GetItemWithError(s->buffers, node);
  if (!buf) {
    if (PyErr_Occurred()) return -1;
    buf = PyList_New(n->num_inputs);
    if (!buf) return -1;
    for (int i = 0; i < n->num_inputs; i++) PyList_SET_ITEM(buf, i, Py_NewRef(Py_None));
    if (PyDict_SetItem(s->buffers, node, buf) < 0) { Py_DECREF(buf); return -1; }
    Py_DECREF(buf);
  }
  PyObject *old = PyList_GET_ITEM(buf, nr);
  if (old == Py_None) return PyList_SetItem(buf, nr, Py_NewRef(grad));
  if (can_sum_in_place(old, grad)) {
    THTensor *r = at_add(((THPTensor *)old)->t, ((THPTensor *)grad)->t, at_scalar_int(1), ((THPTensor *)old)->t);
    if (!r) return THP_raise_int();
    THTensor_free(r);
    return 0;
  }
  PyObject *sum = grad_sum(old, grad);
  if (!sum) return -1;
  return PyList_SetItem(buf, nr, sum);
}

/* One more of fn's incoming edges has delivered (a gradient or None): its count of edges still to come,
 * or DEP_ERROR. A node outside the graph being run has no count and never becomes ready. */
#define DEP_ERROR (-1000000000L)
static long dep_delivered(RunState *s, PyObject *fn) {
  PyObject *c = PyDict_GetItemWithError(s->deps, fn);
  if (!c && PyErr_Occurred()) return DEP_ERROR;
  long left = c ? PyLong_AsLong(c) - 1 : 0;
  if (left == -2 && PyErr_Occurred()) return DEP_ERROR;
  PyObject *nv = PyLong_FromLong(left);
  if (!nv || PyDict_SetItem(s->deps, fn, nv) < 0) { Py_XDECREF(nv); return DEP_ERROR; }
  Py_DECREF(nv);
  return left;
}

/* fn has all its gradients: queue it, unless autograd.grad(inputs=...) does not need it or it is an
 * AccumulateGrad that this run must not write */
static int push_if_needed(RunState *s, PyObject *fn) {
  if (s->needed) {
    int need = mark_needed(s, fn);
    if (need < 0) return -1;
    if (!need) return 0;
  }
  if (!s->accumulate && Py_TYPE(fn) == &THPAccumulateGradType) return 0;
  return push_ready(s, fn);
}

static int deliver(RunState *s, THPNode *from, PyObject *fn, int nr, PyObject *grad) {
  THPNode *to = (THPNode *)fn;
  PyObject *g = THP_validate_grad(grad, &to->meta[nr], from);
  if (!g) return -1;
  for (int k = 0; k < s->ncap; k++)
    if (s->cap_fn[k] == fn && s->cap_nr[k] == nr) {
      PyObject *c = s->captured[k];
      if (c) {
        PyObject *sum = grad_sum(c, g);
        if (!sum) { Py_DECREF(g); return -1; }
        Py_SETREF(s->captured[k], sum);
      } else {
        s->captured[k] = Py_NewRef(g);
      }
    }
  int rc = buffer_add(s, fn, nr, g);
  Py_DECREF(g);
  if (rc < 0) return -1;
  long left = dep_delivered(s, fn);
  if (left == DEP_ERROR) return -1;
  if (left == 0) return push_if_needed(s, fn);
  return 0;
}

/* A None gradient along an edge still counts as delivered, so the receiver
 * can become ready. A receiver whose gradients were all None never runs, and
 * passes None on along its own edges: otherwise a node below it that also
 * gets a real gradient by another path (a weight's AccumulateGrad reached
 * both through a double-backward node and through the forward node whose
 * gradient is None) would wait for it forever. */
static int deliver_none(RunState *s, PyObject *first) {
  PyObject *stack = PyList_New(0);
  if (!stack || PyList_Append(stack, first) < 0) { Py_XDECREF(stack); return -1; }
  while (PyList_GET_SIZE(stack)) {
    Py_ssize_t last = PyList_GET_SIZE(stack) - 1;
    PyObject *fn = Py_NewRef(PyList_GET_ITEM(stack, last));
    PyList_SetSlice(stack, last, last + 1, NULL);
    long left = dep_delivered(s, fn);
    if (left == DEP_ERROR) goto fail;
    if (left == 0) {
      int has = PyDict_Contains(s->buffers, fn);
      if (has < 0) goto fail;
      if (has) {
        if (push_if_needed(s, fn) < 0) goto fail;
      } else {
        THPNode *n = (THPNode *)fn;
        for (int i = 0; i < n->num_edges; i++)
          if (n->edges[i].fn && PyList_Append(stack, n->edges[i].fn) < 0) goto fail;
      }
    }
    Py_DECREF(fn);
    continue;
  fail:
    Py_DECREF(fn);
    Py_DECREF(stack);
    return -1;
  }
  Py_DECREF(stack);
  return 0;
}

/* A sparse gradient reaching a C formula node (a weight computed from others
 * before embedding(sparse=True)) goes on dense: the formulas are dense ops.
 * AccumulateGrad and custom Functions (heap types) take it as it is. */
static int densify_for_formula(THPNode *n, PyObject *buf) {
  if (Py_TYPE(n) == &THPAccumulateGradType || PyType_HasFeature(Py_TYPE(n), Py_TPFLAGS_HEAPTYPE)) return 0;
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(buf); i++) {
    PyObject *g = PyList_GET_ITEM(buf, i);
    if (!ap_is_sparse(g)) continue;
    PyObject *d = PyObject_CallMethod(g, "to_dense", NULL);
    if (!d || PyList_SetItem(buf, i, d) < 0) return -1;
  }
  return 0;
}

/* One pre hook on a node's gradients (buf): a tensor hook (nr, fn) replaces one
 * gradient, a node prehook all of them; what it returns is checked as torch does. */
static int run_pre_hook(PyObject *hook, PyObject *buf) {
  if (PyTuple_Check(hook)) {
    Py_ssize_t nr = PyLong_AsSsize_t(PyTuple_GET_ITEM(hook, 0));
    if (nr < 0 || nr >= PyList_GET_SIZE(buf)) return PyErr_Occurred() ? -1 : 0;   /* registration refuses it */
    PyObject *g = PyList_GET_ITEM(buf, nr), *fn = PyTuple_GET_ITEM(hook, 1);
    if (g == Py_None) return 0;
    PyObject *r = PyObject_CallOneArg(fn, g);
    if (!r || THP_check_hook_result(fn, g, r) < 0) { Py_XDECREF(r); return -1; }
    if (r == Py_None) { Py_DECREF(r); return 0; }
    return PyList_SetItem(buf, nr, r);
  }
  PyObject *t = PyList_AsTuple(buf);
  if (!t) return -1;
  PyObject *r = PyObject_CallOneArg(hook, t);
  int rc = !r || (r != Py_None && THP_check_hook_results(hook, t, r) < 0) ? -1 : 0;
  Py_DECREF(t);
  if (rc == 0 && r != Py_None)
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(r); i++) PyList_SetItem(buf, i, Py_NewRef(PyTuple_GET_ITEM(r, i)));
  Py_XDECREF(r);
  return rc;
}

/* out (a node's gradients) with each one bound for an edge checked and summed to that input's shape */
static PyObject *validate_outputs(THPNode *n, PyObject *out) {
  Py_ssize_t k = PyTuple_GET_SIZE(out);
  PyObject *r = PyTuple_New(k);
  if (!r) return NULL;
  for (Py_ssize_t i = 0; i < k; i++) {
    PyObject *g = PyTuple_GET_ITEM(out, i);
    PyObject *fn = i < n->num_edges ? n->edges[i].fn : NULL;
    PyObject *v = (fn && g != Py_None) ? THP_validate_grad(g, &((THPNode *)fn)->meta[n->edges[i].input_nr], n)
                                       : Py_NewRef(g);
    if (!v) { Py_DECREF(r); return NULL; }
    PyTuple_SET_ITEM(r, i, v);
  }
  return r;
}

static PyObject *run_node(RunState *s, THPNode *n, PyObject *buf) {
  if (densify_for_formula(n, buf) < 0) return NULL;
  PyObject *const *grads = &PyList_GET_ITEM(buf, 0);
  if (n->pre_hooks) {
    /* a hook may remove itself (or others) from the list while it runs: each is held while called */
    for (Py_ssize_t h = 0; h < PyList_GET_SIZE(n->pre_hooks); h++) {
      PyObject *hook = Py_NewRef(PyList_GET_ITEM(n->pre_hooks, h));
      int rc = run_pre_hook(hook, buf);
      Py_DECREF(hook);
      if (rc < 0) return NULL;
    }
    grads = &PyList_GET_ITEM(buf, 0);
  }
  bool prev = THP_grad_enabled_off;
  THP_grad_enabled_off = !s->create_graph;
  PyObject *out = n->apply(n, grads);
  THP_grad_enabled_off = prev;
  if (!out) {
    if (n->anomaly_trace && PyErr_Occurred()) THP_anomaly_note(n);
    return NULL;
  }
  if (THP_anomaly_enabled && THP_anomaly_check_nan && THP_anomaly_check(n, out) < 0) { Py_DECREF(out); return NULL; }
  if (n->post_hooks && PyList_GET_SIZE(n->post_hooks)) {
    /* torch validates a node's outputs before its post hooks: a gradient broadcast in the forward is
     * already summed to its input's shape there (addmm's bias gradient a hook sees is [out], not [N, out]) */
    PyObject *valid = validate_outputs(n, out);
    Py_DECREF(out);
    if (!valid) return NULL;
    out = valid;
  }
  if (n->post_hooks) {
    for (Py_ssize_t h = 0; h < PyList_GET_SIZE(n->post_hooks); h++) {
      PyObject *args = PyList_AsTuple(buf);
      if (!args) { Py_DECREF(out); return NULL; }
      PyObject *hook = Py_NewRef(PyList_GET_ITEM(n->post_hooks, h));
      PyObject *r = PyObject_CallFunctionObjArgs(hook, out, args, NULL);
      Py_DECREF(args);
      int bad = !r || (r != Py_None && THP_check_hook_results(hook, out, r) < 0);
      Py_DECREF(hook);
      if (bad) { Py_XDECREF(r); Py_DECREF(out); return NULL; }
      if (r != Py_None) Py_SETREF(out, r); else Py_DECREF(r);
    }
  }
  if (!s->keep_graph && n->release_saved && Py_TYPE(n) != &THPAccumulateGradType) {
    n->release_saved(n, false);
    n->released = true;
  }
  return out;
}

static PyObject *engine_run_backward(PyObject *self, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"tensors", "grad_tensors", "keep_graph", "create_graph", "inputs",
                           "allow_unreachable", "accumulate_grad", NULL};
  PyObject *tensors, *grad_tensors, *inputs = NULL;
  int keep_graph = 0, create_graph = 0, allow_unreachable = 1, accumulate = 1;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|ppOpp:run_backward", kwlist, &tensors, &grad_tensors,
                                   &keep_graph, &create_graph, &inputs, &allow_unreachable, &accumulate))
    return NULL;
  PyObject *ts = PySequence_Fast(tensors, "tensors must be a sequence");
  if (!ts) return NULL;
  PyObject *gs = PySequence_Fast(grad_tensors, "grad_tensors must be a sequence");
  if (!gs) { Py_DECREF(ts); return NULL; }
  PyObject *ins = (inputs && inputs != Py_None) ? PySequence_Fast(inputs, "inputs must be a sequence") : NULL;
  RunState s = {0};
  PyObject *outer_callbacks = tls_final_callbacks, *callbacks = PyList_New(0);
  if (!callbacks) { Py_DECREF(ts); Py_DECREF(gs); Py_XDECREF(ins); return NULL; }
  tls_final_callbacks = callbacks;
  s.keep_graph = keep_graph;
  s.create_graph = create_graph;
  s.accumulate = accumulate;
  PyObject *result = NULL, *graph_root = NULL;
  Py_ssize_t nroots = PySequence_Fast_GET_SIZE(ts);
  if (PySequence_Fast_GET_SIZE(gs) != nroots) {
    PyErr_Format(PyExc_RuntimeError, "got %zd tensors and %zd gradients", nroots, PySequence_Fast_GET_SIZE(gs));
    goto done;
  }
  s.deps = PyDict_New();
  s.buffers = PyDict_New();
  if (!s.deps || !s.buffers) goto done;
  if (ins) {
    s.ncap = (int)PySequence_Fast_GET_SIZE(ins);
    s.cap_fn = PyMem_Calloc(s.ncap + 1, sizeof(PyObject *));
    s.cap_nr = PyMem_Calloc(s.ncap + 1, sizeof(int));
    s.captured = PyMem_Calloc(s.ncap + 1, sizeof(PyObject *));
    s.needed = PyDict_New();
    if (!s.cap_fn || !s.cap_nr || !s.captured || !s.needed) { PyErr_NoMemory(); goto done; }
    for (int k = 0; k < s.ncap; k++) {
      PyObject *t = PySequence_Fast_GET_ITEM(ins, k);
      if (!THPTensor_Check(t)) { PyErr_SetString(PyExc_TypeError, "inputs must be tensors"); goto done; }
      if (!THPTensor_requiresGrad(t)) {
        PyErr_Format(PyExc_RuntimeError, "One of the differentiated Tensors does not require grad");
        goto done;
      }
      s.cap_fn[k] = edge_of(t, &s.cap_nr[k]);
      if (!s.cap_fn[k] && PyErr_Occurred()) goto done;
    }
  }
  /* a synthetic root node whose edges are the outputs' grad_fns */
  graph_root = (PyObject *)THPNode_new(&THPNodeType, (int)nroots, 0);
  if (!graph_root) goto done;
  THPNode *root = (THPNode *)graph_root;
  root->seq = UINT64_MAX;
  for (Py_ssize_t i = 0; i < nroots; i++) {
    PyObject *t = PySequence_Fast_GET_ITEM(ts, i);
    if (!THPTensor_Check(t)) { PyErr_SetString(PyExc_TypeError, "backward: expected tensors"); goto done; }
    if (!THPTensor_requiresGrad(t)) {
      PyErr_Format(PyExc_RuntimeError, "element %zd of tensors does not require grad and does not have a grad_fn", i);
      goto done;
    }
    root->edges[i].fn = edge_of(t, &root->edges[i].input_nr);
    if (!root->edges[i].fn) goto done;
  }
  if (count_deps(&s, graph_root) < 0) goto done;
  for (Py_ssize_t i = 0; i < nroots; i++) {
    PyObject *g = PySequence_Fast_GET_ITEM(gs, i);
    PyObject *t = PySequence_Fast_GET_ITEM(ts, i);
    PyObject *made = NULL;
    if (g == Py_None) {
      if (THTensor_numel(((THPTensor *)t)->t) != 1) {
        PyErr_SetString(PyExc_RuntimeError, "grad can be implicitly created only for scalar outputs");
        goto done;
      }
      made = THP_ones_like(t);
      if (!made) goto done;
      g = made;
    }
    int rc = deliver(&s, root, root->edges[i].fn, root->edges[i].input_nr, g);
    Py_XDECREF(made);
    if (rc < 0) goto done;
  }
  while (s.ready.len) {
    PyObject *node = pop_ready(&s);
    THPNode *n = (THPNode *)node;
    PyObject *buf = PyDict_GetItemWithError(s.buffers, node);
    if (!buf) { Py_DECREF(node); if (PyErr_Occurred()) goto done; continue; }
    Py_INCREF(buf);
    PyDict_DelItem(s.buffers, node);
    PyObject *out = run_node(&s, n, buf);
    Py_DECREF(buf);
    if (!out) { Py_DECREF(node); goto done; }
    for (int i = 0; i < n->num_edges && i < PyTuple_GET_SIZE(out); i++) {
      PyObject *fn = n->edges[i].fn, *g = PyTuple_GET_ITEM(out, i);
      if (!fn) continue;
      if (g == Py_None) {
        if (deliver_none(&s, fn) < 0) { Py_DECREF(out); Py_DECREF(node); goto done; }
        continue;
      }
      if (deliver(&s, n, fn, n->edges[i].input_nr, g) < 0) { Py_DECREF(out); Py_DECREF(node); goto done; }
    }
    Py_DECREF(out);
    Py_DECREF(node);
  }
  if (run_final_callbacks(callbacks) < 0) goto done;
  if (ins) {
    result = PyTuple_New(s.ncap);
    if (!result) goto done;
    for (int k = 0; k < s.ncap; k++) {
      PyObject *c = s.captured[k] ? s.captured[k] : Py_None;
      PyTuple_SET_ITEM(result, k, Py_NewRef(c));
    }
  } else {
    result = PyTuple_New(0);
  }
done:
  tls_final_callbacks = outer_callbacks;
  Py_DECREF(callbacks);
  if (s.cap_fn) for (int k = 0; k < s.ncap; k++) { Py_XDECREF(s.cap_fn[k]); Py_XDECREF(s.captured[k]); }
  PyMem_Free(s.cap_fn);
  PyMem_Free(s.cap_nr);
  PyMem_Free(s.captured);
  Py_XDECREF(s.needed);
  Py_XDECREF(s.deps);
  Py_XDECREF(s.buffers);
  ready_clear(&s.ready);
  Py_XDECREF(graph_root);
  Py_DECREF(ts);
  Py_DECREF(gs);
  Py_XDECREF(ins);
  return result;
}

static PyMethodDef engine_methods[] = {
  {"run_backward", (PyCFunction)(void (*)(void))engine_run_backward, METH_VARARGS | METH_KEYWORDS,
   "run_backward(tensors, grad_tensors, keep_graph, create_graph, inputs, allow_unreachable, accumulate_grad)"},
  {"queue_callback", (PyCFunction)engine_queue_callback, METH_O,
   "queue_callback(fn): fn() runs once the current backward pass has finished."},
  {NULL}
};

PyTypeObject THPEngineType = {
  PyVarObject_HEAD_INIT(NULL, 0)
  .tp_name = "torch._C._EngineBase",
  .tp_basicsize = sizeof(THPEngine),
  .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
  .tp_methods = engine_methods,
  .tp_new = PyType_GenericNew,
};

int THP_initEngine(PyObject *m) {
  if (PyType_Ready(&THPEngineType) < 0) return -1;
  if (PyModule_AddObjectRef(m, "_EngineBase", (PyObject *)&THPEngineType) < 0) return -1;
  PyObject *eng = PyObject_CallNoArgs((PyObject *)&THPEngineType);
  if (!eng) return -1;
  return PyModule_AddObject(m, "_ImperativeEngine", eng);
}
