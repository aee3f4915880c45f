/* Engine support and the hand-written formula helpers (see Formulas.h). */
#include "autograd/Formulas.h"
#include "Functions.h"
#include "ArgParser.h"
#include "../../ATen/ATComplex.h"
#include <string.h>
#include <math.h>

/* ---- Tensor[] inputs of differentiable ops ---- */
bool THP_seq_requires_grad(PyObject *seq) {
  if (!THP_grad_enabled()) return false;
  PyObject *f = PySequence_Fast(seq, "expected a sequence of tensors");
  if (!f) { PyErr_Clear(); return false; }
  bool r = THP_any_requires_grad((int)PySequence_Fast_GET_SIZE(f), PySequence_Fast_ITEMS(f));
  Py_DECREF(f);
  return r;
}

int THP_set_edges_from_seq(THPNode *n, PyObject *seq) {
  PyObject *f = PySequence_Fast(seq, "expected a sequence of tensors");
  if (!f) { PyErr_Clear(); return 0; }
  int rc = 0;
  for (Py_ssize_t i = 0; rc == 0 && i < PySequence_Fast_GET_SIZE(f) && i < n->num_edges; i++)
    rc = THPNode_setEdgeFor(n, (int)i, PySequence_Fast_GET_ITEM(f, i));
  Py_DECREF(f);
  return rc;
}

/* ---- engine support ---- */
static PyObject *filled(int device, THDtype dtype, int ndim, const int64_t *sizes, int64_t value) {
  THTensor *t = at_new_on(device, dtype, ndim, sizes, NULL);
  if (!t) return THP_raise();
  if (at_fill_(t, at_scalar_int(value)) < 0) { THTensor_free(t); return THP_raise(); }
  return THPTensor_wrap(t);
}

PyObject *THP_zeros_on(int ndim, const int64_t *sizes, const THTensor *like) {
  return filled(THTensor_device(like), like->dtype, ndim, sizes, 0);
}

PyObject *THP_ones_like(PyObject *o) {
  THTensor *t = ((THPTensor *)o)->t;
  return filled(THTensor_device(t), t->dtype, t->ndim, t->sizes, 1);
}

PyObject *THP_zeros_for(THPNode *n, int nr) {
  THPInputMeta *m = &n->meta[nr];
  return filled(m->device, m->dtype, m->ndim, m->sizes, 0);
}

PyObject *THP_validate_grad(PyObject *grad, const THPInputMeta *m, THPNode *from) {
  if (ap_is_sparse(grad)) return THP_validate_sparse_grad(grad, m, from);
  if (!THPTensor_Check(grad)) {
    PyErr_Format(PyExc_RuntimeError, "Function %s returned an invalid gradient - expected a Tensor, got %s",
                 Py_TYPE(from)->tp_name, Py_TYPE(grad)->tp_name);
    return NULL;
  }
  THTensor *g = ((THPTensor *)grad)->t;
  if (THTensor_device(g) != m->device) {
    char a[32], b[32];
    PyErr_Format(PyExc_RuntimeError, "Function %s returned an invalid gradient at index 0 - expected device %s but got %s",
                 Py_TYPE(from)->tp_name, at_device_str(m->device, a, sizeof a), at_device_str(THTensor_device(g), b, sizeof b));
    return NULL;
  }
  PyObject *r = Py_NewRef(grad);
  if (g->ndim != m->ndim || memcmp(g->sizes, m->sizes, m->ndim * sizeof(int64_t))) {
    PyObject *sizes = THPSize_new(m->ndim, m->sizes);
    if (!sizes) { Py_DECREF(r); return NULL; }
    PyObject *red = F_sum_to(r, sizes);
    Py_DECREF(sizes);
    Py_DECREF(r);
    if (!red) {
      char b1[256], b2[256];
      PyErr_Clear();
      PyErr_Format(PyExc_RuntimeError, "Function %s returned an invalid gradient at index 0 - got %s but expected "
                   "shape compatible with %s", Py_TYPE(from)->tp_name,
                   THTensor_sizeStr(g->ndim, g->sizes, b1, 256), THTensor_sizeStr(m->ndim, m->sizes, b2, 256));
      return NULL;
    }
    r = red;
  }
  if (THDtype_isComplex(((THPTensor *)r)->t->dtype) && !THDtype_isComplex(m->dtype)) {
    /* a real input's gradient is the real part of a complex one (torch's rule; no cast warning) */
    THTensor *rv = at_view_as_real(((THPTensor *)r)->t);
    THTensor *re = rv ? at_select(rv, -1, 0) : NULL;
    THTensor_free(rv);
    Py_DECREF(r);
    if (!re) return THP_raise();
    r = THPTensor_wrap(re);
    if (!r) return NULL;
  }
  if (((THPTensor *)r)->t->dtype != m->dtype && (THDtype_isFloating(m->dtype) || THDtype_isComplex(m->dtype))) {
    PyObject *dt = THP_dtype_to_py(m->dtype);
    PyObject *c = F_to_dtype_of(r, dt);
    Py_DECREF(dt);
    Py_DECREF(r);
    r = c;
  }
  return r;
}

/* torch's name for a gradient's type in a hook's error: the legacy class where
 * one exists (torch.FloatTensor), else the dispatch key's (CPUBoolType, MetaFloatType). */
static void hook_type_name(const THTensor *t, char *buf, size_t n) {
  const char *name = THDtype_info[t->dtype].legacy;
  int dev = THTensor_device(t);
  bool legacy = (t->dtype >= TH_UInt8 && t->dtype <= TH_Half) || t->dtype == TH_Float || t->dtype == TH_Double;
  if (THTensor_isMeta(t)) snprintf(buf, n, "Meta%sType", name);
  else if (legacy) snprintf(buf, n, "torch.%s%sTensor", dev >= 0 ? "cuda." : "", name);
  else snprintf(buf, n, "%s%sType", dev >= 0 ? "CUDA" : "CPU", name);
}

static PyObject *hook_name(PyObject *hook) {
  PyObject *name = PyObject_GetAttrString(hook, "__name__");
  if (name && PyUnicode_Check(name)) return name;
  Py_XDECREF(name);
  PyErr_Clear();
  return PyUnicode_FromString("<unknown>");
}

int THP_check_hook_result(PyObject *hook, PyObject *value, PyObject *result) {
  if (result == Py_None) return 0;
  if (value == Py_None) {
    PyErr_SetString(PyExc_RuntimeError, "can't replace a None gradient with a non-None value");
    return -1;
  }
  bool vs = ap_is_sparse(value), rs = ap_is_sparse(result);
  if (!rs && !THPTensor_Check(result)) {
    PyErr_Format(PyExc_TypeError, "expected Variable, but hook returned '%s'", Py_TYPE(result)->tp_name);
    return -1;
  }
  if (vs || rs) {
    if (vs && rs) return 0;     /* the sparse class checks its own sizes where it is used */
    PyObject *name = hook_name(hook);
    if (!name) return -1;
    PyErr_Format(PyExc_RuntimeError, "hook '%U' has changed the type of value (was a %s tensor got a %s tensor)", name,
                 vs ? "sparse" : "dense", rs ? "sparse" : "dense");
    Py_DECREF(name);
    return -1;
  }
  const THTensor *v = ((THPTensor *)value)->t, *r = ((THPTensor *)result)->t;
  bool type_changed = v->dtype != r->dtype || THTensor_device(v) != THTensor_device(r) || THTensor_isMeta(v) != THTensor_isMeta(r);
  bool size_changed = v->ndim != r->ndim || memcmp(v->sizes, r->sizes, v->ndim * sizeof(int64_t));
  if (!type_changed && !size_changed) return 0;
  PyObject *name = hook_name(hook);
  if (!name) return -1;
  if (type_changed) {
    char was[64], got[64];
    hook_type_name(v, was, sizeof was);
    hook_type_name(r, got, sizeof got);
    PyErr_Format(PyExc_RuntimeError, "hook '%U' has changed the type of value (was %s got %s)", name, was, got);
  } else {
    PyErr_Format(PyExc_RuntimeError, "hook '%U' has changed the size of value", name);
  }
  Py_DECREF(name);
  return -1;
}

int THP_check_hook_results(PyObject *hook, PyObject *values, PyObject *result) {
  if (!PyTuple_Check(result)) {
    PyErr_Format(PyExc_TypeError, "expected tuple, but hook returned '%s'", Py_TYPE(result)->tp_name);
    return -1;
  }
  if (PyTuple_GET_SIZE(result) != PyTuple_GET_SIZE(values)) {
    PyObject *name = hook_name(hook);
    if (!name) return -1;
    PyErr_Format(PyExc_RuntimeError, "hook '%U' has returned an incorrect number of values (got %zd, but expected %zd)",
                 name, PyTuple_GET_SIZE(result), PyTuple_GET_SIZE(values));
    Py_DECREF(name);
    return -1;
  }
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(result); i++)
    if (THP_check_hook_result(hook, PyTuple_GET_ITEM(values, i), PyTuple_GET_ITEM(result, i)) < 0) return -1;
  return 0;
}

int THP_run_tensor_hooks(PyObject *var, PyObject **g) {
  THPTensor *t = (THPTensor *)var;
  Py_INCREF(*g);
  if (!t->hooks) return 0;
  PyObject *hooks = PySequence_List(t->hooks);
  if (!hooks) { Py_DECREF(*g); return -1; }
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(hooks); i++) {
    PyObject *hook = PyList_GET_ITEM(hooks, i);
    PyObject *r = PyObject_CallOneArg(hook, *g);
    if (!r || THP_check_hook_result(hook, *g, r) < 0) { Py_XDECREF(r); Py_DECREF(hooks); Py_DECREF(*g); return -1; }
    if (r != Py_None) Py_SETREF(*g, r); else Py_DECREF(r);
  }
  Py_DECREF(hooks);
  return 0;
}

/* Whether a first gradient can become .grad without a copy, as torch's
 * AccumulateGrad steals one: nobody else holds it (the engine's buffer and
 * the caller's reference only), its storage is its own, it has no autograd
 * state, and it is laid out as the variable is. */
static bool can_steal(const THPTensor *v, PyObject *g) {
  const THPTensor *gt = (const THPTensor *)g;
  return Py_REFCNT(g) <= 2 && Py_TYPE(g) == (PyTypeObject *)THPTensorClass && !gt->grad_fn && !gt->requires_grad &&
         !gt->base && !gt->hooks && atomic_load(&gt->t->refcount) == 1 && atomic_load(&gt->t->storage->refcount) == 1 &&
         gt->t->dtype == v->t->dtype && gt->t->ndim == v->t->ndim &&
         !memcmp(gt->t->sizes, v->t->sizes, v->t->ndim * sizeof(int64_t)) &&
         THTensor_isContiguous(gt->t) && THTensor_isContiguous(v->t);
}

/* torch's gradient layout contract for a first .grad that is a copy: the
 * variable's strides when it is non-overlapping and dense, else contiguous.
 * So a contiguous weight gets a contiguous .grad even when the gradient
 * arrives transposed, and the optimizer and DDP run over flat memory. */
static THTensor *clone_obey_contract(const THTensor *g, const THTensor *var) {
  if (THTensor_isContiguous(var) || !THTensor_isNonOverlappingAndDense(var)) return at_clone(g, false);
  if (THTensor_device(g) >= 0) return at_clone(g, true);   /* CUDA: the gradient's own layout */
  ATIntList size = {.n = var->ndim}, stride = {.n = var->ndim};
  memcpy(size.v, var->sizes, var->ndim * sizeof(int64_t));
  memcpy(stride.v, var->strides, var->ndim * sizeof(int64_t));
  THTensor *r = at_empty_strided(&size, &stride, g->dtype);
  if (r && at_copy_(r, g) < 0) { THTensor_free(r); return NULL; }
  return r;
}

int THP_accumulate_into_grad(THPTensor *v, PyObject *g) {
  if (ap_is_sparse(g) || (v->grad && ap_is_sparse(v->grad))) return THP_sparse_accumulate(v, g);
  if (!v->grad) {
    /* A fresh .grad must not alias a tensor the user can still see. */
    PyObject *c;
    if (!THP_grad_enabled() && can_steal(v, g)) {
      c = THPTensor_wrap(THTensor_retain(((THPTensor *)g)->t));
    } else if (THP_grad_enabled()) {
      c = F_clone(g, NULL);
    } else {
      c = THPTensor_wrap(clone_obey_contract(((THPTensor *)g)->t, v->t));   /* NULL: raises the error set */
    }
    if (!c) return -1;
    v->grad = c;
    return 0;
  }
  if (THP_grad_enabled()) {   /* create_graph: the sum is recorded */
    PyObject *s = F_add(v->grad, g, NULL);
    if (!s) return -1;
    Py_SETREF(v->grad, s);
    return 0;
  }
  THTensor *gt = ((THPTensor *)v->grad)->t;
  THTensor *r = at_add(gt, ((THPTensor *)g)->t, at_scalar_int(1), gt);
  if (!r) return THP_raise_int();
  THTensor_free(r);
  ((THPTensor *)v->grad)->version->version++;
  return 0;
}

PyObject *THP_make_removable_handle(PyObject *list, PyObject *item) {
  PyObject *mod = PyImport_ImportModule("cthtorch.utils.hooks");
  if (!mod) {
    PyErr_Clear();
    return Py_NewRef(Py_None);
  }
  PyObject *h = PyObject_CallMethod(mod, "_ListHandle", "OO", list, item);
  Py_DECREF(mod);
  return h;
}

PyObject *THP_current_traceback(void) {
  PyObject *tb = PyImport_ImportModule("traceback");
  if (!tb) { PyErr_Clear(); return NULL; }
  PyObject *lines = PyObject_CallMethod(tb, "format_stack", NULL);
  Py_DECREF(tb);
  if (!lines) { PyErr_Clear(); return NULL; }
  PyObject *sep = PyUnicode_FromString("");
  PyObject *s = sep ? PyUnicode_Join(sep, lines) : NULL;
  Py_XDECREF(sep);
  Py_DECREF(lines);
  if (!s) PyErr_Clear();
  return s;
}

void THP_anomaly_note(THPNode *n) {
  if (!n->anomaly_trace) return;
  PyObject *et, *ev, *tb;
  PyErr_Fetch(&et, &ev, &tb);
  PyErr_WarnFormat(PyExc_UserWarning, 1, "Error detected in %s. Traceback of forward call that caused the error:\n%U",
                   Py_TYPE(n)->tp_name, n->anomaly_trace);
  PyErr_Clear();
  PyErr_Restore(et, ev, tb);
}

int THP_anomaly_check(THPNode *n, PyObject *grads) {
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(grads); i++) {
    PyObject *g = PyTuple_GET_ITEM(grads, i);
    if (!THPTensor_Check(g) || !THDtype_isFloating(((THPTensor *)g)->t->dtype)) continue;
    THTensor *isn = at_isnan(((THPTensor *)g)->t, NULL);
    if (!isn) return THP_raise_int();
    THTensor *any = at_sum(isn, NULL, false, TH_Undefined, NULL);
    THTensor_free(isn);
    if (!any) return THP_raise_int();
    int64_t cnt = at_item_int(any);
    THTensor_free(any);
    if (cnt) {
      if (n->anomaly_trace)
        PyErr_WarnFormat(PyExc_UserWarning, 1, "Error detected in %s. Traceback of forward call that caused the error:\n%U",
                         Py_TYPE(n)->tp_name, n->anomaly_trace);
      PyErr_Format(PyExc_RuntimeError, "Function '%s' returned nan values in its %zdth output.", Py_TYPE(n)->tp_name, i);
      return -1;
    }
  }
  return 0;
}

/* ---- formula helpers ---- */
PyObject *F_sum_to(PyObject *grad, PyObject *sizes) { return F_sum_to_size(grad, sizes); }

PyObject *F_expand_to(PyObject *grad, PyObject *sizes) { return F_expand(grad, sizes, NULL); }

PyObject *F_to_dtype_of(PyObject *grad, PyObject *dtype) {
  if (!THPTensor_Check(grad) || dtype == Py_None || ((THPTensor *)grad)->t->dtype == fa_dtype(dtype))
    return Py_NewRef(grad);
  return F__to_copy(grad, dtype, NULL, NULL, NULL);
}

PyObject *F_maybe_multiply(PyObject *grad, PyObject *scalar) {
  if (PyLong_Check(scalar) && PyLong_AsLong(scalar) == 1) return Py_NewRef(grad);
  if (PyFloat_Check(scalar) && PyFloat_AS_DOUBLE(scalar) == 1.0) return Py_NewRef(grad);
  return F_mul(grad, scalar);
}

PyObject *F_numel_of(PyObject *sizes, PyObject *dims) {
  long long n = 1;
  Py_ssize_t nd = PyTuple_GET_SIZE(sizes);
  if (dims == Py_None || (PySequence_Check(dims) && PySequence_Size(dims) == 0)) {
    for (Py_ssize_t i = 0; i < nd; i++) n *= PyLong_AsLongLong(PyTuple_GET_ITEM(sizes, i));
    return PyLong_FromLongLong(n);
  }
  ATIntList l;
  if (fa_intlist(dims, &l, 0) < 0) return NULL;
  for (int i = 0; i < l.n; i++) {
    int64_t d;
    if (at_wrap_dim(l.v[i], (int)nd, &d) < 0) return THP_raise();
    if (nd) n *= PyLong_AsLongLong(PyTuple_GET_ITEM(sizes, d));
  }
  return PyLong_FromLongLong(n);
}

/* Undo keepdim=False: unsqueeze reduced dims (ascending), then expand. */
PyObject *F_reduce_grad_expand(PyObject *grad, PyObject *sizes, PyObject *dims, PyObject *keepdim) {
  Py_ssize_t nd = PyTuple_GET_SIZE(sizes);
  PyObject *g = Py_NewRef(grad);
  if (keepdim != Py_True && nd > 0) {
    bool red[TH_MAX_DIMS] = {0};
    if (dims == Py_None || (PySequence_Check(dims) && PySequence_Size(dims) == 0)) {
      for (Py_ssize_t i = 0; i < nd; i++) red[i] = true;
    } else {
      ATIntList l;
      if (fa_intlist(dims, &l, 0) < 0) { Py_DECREF(g); return NULL; }
      for (int i = 0; i < l.n; i++) {
        int64_t d;
        if (at_wrap_dim(l.v[i], (int)nd, &d) < 0) { Py_DECREF(g); return THP_raise(); }
        red[d] = true;
      }
    }
    for (Py_ssize_t i = 0; i < nd; i++) {
      if (!red[i]) continue;
      PyObject *d = PyLong_FromSsize_t(i);
      PyObject *u = d ? F_unsqueeze(g, d) : NULL;
      Py_XDECREF(d);
      Py_DECREF(g);
      if (!u) return NULL;
      g = u;
    }
  }
  PyObject *r = F_expand(g, sizes, NULL);
  Py_DECREF(g);
  return r;
}

PyObject *F_unsqueeze_dims(PyObject *grad, PyObject *dims, PyObject *ndim) {
  PyObject *sizes = PyTuple_New(0);
  (void)dims; (void)ndim;
  Py_XDECREF(sizes);
  return Py_NewRef(grad);
}

PyObject *F_permute_back(PyObject *grad, PyObject *dims) {
  ATIntList l;
  if (fa_intlist(dims, &l, 0) < 0) return NULL;
  PyObject *inv = PyTuple_New(l.n);
  if (!inv) return NULL;
  for (int i = 0; i < l.n; i++) {
    int64_t d;
    if (at_wrap_dim(l.v[i], l.n, &d) < 0) { Py_DECREF(inv); return THP_raise(); }
    PyTuple_SET_ITEM(inv, d, PyLong_FromLong(i));
  }
  PyObject *r = F_permute(grad, inv);
  Py_DECREF(inv);
  return r;
}

PyObject *F_div_rounding_grad(PyObject *grad, PyObject *mode, PyObject *other) {
  if (mode == Py_None) return F_div(grad, other);
  return F_zeros_like(grad, NULL, NULL, NULL, NULL, NULL, NULL);
}

PyObject *F_div_rounding_grad_other(PyObject *grad, PyObject *mode, PyObject *self, PyObject *other) {
  if (mode != Py_None) return F_zeros_like(grad, NULL, NULL, NULL, NULL, NULL, NULL);
  PyObject *a = F_neg(grad);
  PyObject *b = a ? F_mul(a, self) : NULL;
  PyObject *c = F_mul(other, other);
  PyObject *r = (b && c) ? F_div(b, c) : NULL;
  Py_XDECREF(a); Py_XDECREF(b); Py_XDECREF(c);
  return r;
}

PyObject *F_not_implemented(PyObject *name) {
  PyErr_Format(PyExc_NotImplementedError, "the derivative for '%S' is not implemented.", name);
  return NULL;
}

PyObject *F_zeros_sized(PyObject *sizes, PyObject *like) {
  ATIntList l;
  if (fa_intlist(sizes, &l, 0) < 0) return NULL;
  return THP_zeros_on(l.n, l.v, ((THPTensor *)like)->t);
}

/* a real Python number the call took (a wrapped number): its value, read in double by the formulas below */
static bool real_number(PyObject *o) {
  return THPTensor_Check(o) && ((THPTensor *)o)->t->wrapped_number && !THDtype_isComplex(((THPTensor *)o)->t->dtype);
}

/* d/dself pow(self, e) = e * self^(e-1), and 0 where e == 0 (even at self == 0) */
PyObject *F_pow_grad_self(PyObject *grad, PyObject *self, PyObject *e) {
  /* A Python-number exponent on a real tensor (x ** 2 in a loss) needs no
   * mask and no conj: grad * (e * self^(e-1)), as torch's pow_backward,
   * with self^1 read as self (torch's pow_tensor_scalar copies for 1). Five
   * passes and a libm pow fewer than the general formula below. */
  if (real_number(e) && THPTensor_Check(self) && !THDtype_isComplex(((THPTensor *)self)->t->dtype)) {
    double v = at_item_double(((THPTensor *)e)->t);
    if (v == 0) return F_zeros_like(grad, NULL, NULL, NULL, NULL, NULL, NULL);
    PyObject *p = NULL;
    if (v == 2) {
      p = self;
      Py_INCREF(p);
    } else {
      PyObject *one = PyLong_FromLong(1);
      PyObject *em1 = one ? F_sub(e, one, NULL) : NULL;
      p = em1 ? F_pow(self, em1) : NULL;
      Py_XDECREF(one); Py_XDECREF(em1);
    }
    PyObject *ep = p ? F_mul(e, p) : NULL;
    PyObject *r = ep ? F_mul(grad, ep) : NULL;
    Py_XDECREF(p); Py_XDECREF(ep);
    return r;
  }
  PyObject *zero = PyFloat_FromDouble(0.0), *one = PyLong_FromLong(1);
  PyObject *em1 = F_sub(e, one, NULL);
  PyObject *p = em1 ? F_pow(self, em1) : NULL;
  /* grad * conj(e * self^(e-1)): the conjugate for complex inputs, a no-op for real ones */
  PyObject *ep = p ? F_mul(e, p) : NULL;
  PyObject *g = ep ? F__complex_conj(ep) : NULL;
  PyObject *gp = g ? F_mul(grad, g) : NULL;
  PyObject *mask = gp ? F_eq(e, zero) : NULL;
  PyObject *r = mask ? F_where(mask, zero, gp) : NULL;
  Py_XDECREF(zero); Py_XDECREF(one); Py_XDECREF(em1); Py_XDECREF(p); Py_XDECREF(ep); Py_XDECREF(g); Py_XDECREF(gp);
  Py_XDECREF(mask);
  return r;
}

PyObject *F_lerp_grad_self(PyObject *grad, PyObject *weight) {
  /* 1 - w over two numbers would be a default-dtype (float32) tensor */
  if (real_number(weight)) {
    PyObject *c = PyFloat_FromDouble(1.0 - at_item_double(((THPTensor *)weight)->t));
    PyObject *r = c ? F_mul(grad, c) : NULL;
    Py_XDECREF(c);
    return r;
  }
  PyObject *one = PyLong_FromLong(1);
  PyObject *c = one ? F_rsub(weight, one, NULL) : NULL;
  PyObject *cc = c ? F__complex_conj(c) : NULL;   /* conj(1 - w) for a complex weight, torch's convention */
  PyObject *r = cc ? F_mul(grad, cc) : NULL;
  Py_XDECREF(one); Py_XDECREF(c); Py_XDECREF(cc);
  return r;
}

/* d/de pow(self, e) = result * log(self), and 0 where self == 0 and e >= 0 */
PyObject *F_pow_grad_exponent(PyObject *grad, PyObject *self, PyObject *e, PyObject *result) {
  PyObject *zero = PyFloat_FromDouble(0.0);
  /* a real number base (2 ** x): its log in double, as a number, not the log of an int tensor (a float32) */
  PyObject *lg = real_number(self) ? PyFloat_FromDouble(log(at_item_double(((THPTensor *)self)->t))) : F_log(self);
  PyObject *rl = lg ? F_mul(result, lg) : NULL;
  PyObject *a = rl ? F__complex_conj(rl) : NULL;
  PyObject *b = a ? F_mul(grad, a) : NULL;
  PyObject *s0 = b ? F_eq(self, zero) : NULL;
  PyObject *e0 = s0 ? F_ge(e, zero) : NULL;
  PyObject *mask = e0 ? F_logical_and(s0, e0) : NULL;
  PyObject *r = mask ? F_where(mask, zero, b) : NULL;
  Py_XDECREF(zero); Py_XDECREF(lg); Py_XDECREF(rl); Py_XDECREF(a); Py_XDECREF(b); Py_XDECREF(s0); Py_XDECREF(e0); Py_XDECREF(mask);
  return r;
}

/* maximum/minimum: the larger (smaller) side gets the gradient; ties split it */
PyObject *F_minmax_grad(PyObject *grad, PyObject *self, PyObject *other, PyObject *is_max) {
  PyObject *zero = PyFloat_FromDouble(0.0), *half = PyFloat_FromDouble(0.5);
  PyObject *win = is_max == Py_True ? F_gt(self, other) : F_lt(self, other);
  PyObject *tie = win ? F_eq(self, other) : NULL;
  PyObject *gh = tie ? F_mul(grad, half) : NULL;
  PyObject *a = gh ? F_where(tie, gh, zero) : NULL;
  PyObject *r = a ? F_where(win, grad, a) : NULL;
  Py_XDECREF(zero); Py_XDECREF(half); Py_XDECREF(win); Py_XDECREF(tie); Py_XDECREF(gh); Py_XDECREF(a);
  return r;
}

PyObject *F_copysign_grad(PyObject *grad, PyObject *self, PyObject *result) {
  /* d/dx copysign(x, y) = sign(x) * sign(result), 0 at x == 0 */
  PyObject *a = F_sign(self);
  PyObject *b = a ? F_sign(result) : NULL;
  PyObject *c = b ? F_mul(a, b) : NULL;
  PyObject *r = c ? F_mul(grad, c) : NULL;
  Py_XDECREF(a); Py_XDECREF(b); Py_XDECREF(c);
  return r;
}
