/* Tensor.__getitem__ / __setitem__.
 * Basic indices (ints, slices, None, ..., bools) become views through the
 * recorded view ops (select/slice/unsqueeze), so gradients flow. Tensors
 * and lists are advanced indices: the basic part is applied first, then
 * `_index` / `_index_put_` (declared ops) handle the advanced part with
 * PyTorch's broadcasting and placement rules. */
#include "THP.h"
#include "TorchFunction.h"
#include "Dispatch.h"
#include "ArgParser.h"
#include "Bindings.h"
#include "Functions.h"

/* A slice bound beyond int64 means "to the end", as in Python and PyTorch:
 * x[0:2**64] is x. Returns a new reference (None stays None). */
static PyObject *clamp_bound(PyObject *o) {
  if (!PyLong_Check(o)) return Py_NewRef(o);
  int overflow;
  long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
  if (v == -1 && !overflow && PyErr_Occurred()) return NULL;
  if (!overflow) return Py_NewRef(o);
  return PyLong_FromLongLong(overflow > 0 ? INT64_MAX : INT64_MIN);
}

static bool is_int_index(PyObject *o) {
  if (PyBool_Check(o)) return false;
  if (PyLong_Check(o)) return true;
  if (THPTensor_Check(o)) return false;
  if (!PyIndex_Check(o)) return false;
  /* a numpy array has __index__ too, but only its 0-d form is an int; one with a length is advanced */
  if (!PySequence_Check(o)) return true;
  Py_ssize_t n = PySequence_Size(o);
  if (n < 0) PyErr_Clear();
  return n < 0;
}

static bool is_advanced(PyObject *o) {
  /* a Python bool is a 0-d bool mask, as torch's indexing takes it (x[True]: IndexBackward0) */
  return THPTensor_Check(o) || PyList_Check(o) || PyBool_Check(o) ||
         (!PyTuple_Check(o) && !PySlice_Check(o) && o != Py_None && o != Py_Ellipsis &&
          !is_int_index(o) && PySequence_Check(o) && !PyUnicode_Check(o));
}

static PyObject *as_tuple(PyObject *index) {
  if (PyTuple_Check(index)) return Py_NewRef(index);
  return PyTuple_Pack(1, index);
}

/* Applies the basic part of `index` to self. For each advanced entry,
 * records (result dim, index object) in adv; returns the view (new ref). */
/* Whether slice sl takes all of a dim of `size` as written (from 0, to the end or beyond, step 1) */
static bool full_slice(PySliceObject *sl, int64_t size) {
  int overflow = 0;
  if (sl->step != Py_None && !(PyLong_Check(sl->step) && PyLong_AsLongLongAndOverflow(sl->step, &overflow) == 1 && !overflow))
    return false;
  if (sl->start != Py_None && !(PyLong_Check(sl->start) && PyLong_AsLongLongAndOverflow(sl->start, &overflow) == 0 && !overflow))
    return false;
  if (sl->stop == Py_None) return true;
  if (!PyLong_Check(sl->stop)) return false;
  long long stop = PyLong_AsLongLongAndOverflow(sl->stop, &overflow);
  return overflow > 0 || (!overflow && stop >= size);
}

/* skip_full: a slice over all of its dim records nothing (torch's indexing does so
 * within a tuple index: x[:, 1:3] is one SliceBackward0) */
static PyObject *apply_basic(PyObject *self, PyObject *tup, PyObject *adv, bool skip_full) {
  Py_ssize_t n = PyTuple_GET_SIZE(tup);
  int ndim = ((THPTensor *)self)->t->ndim;
  int consumed = 0, ellipsis = 0;
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *it = PyTuple_GET_ITEM(tup, i);
    if (it == Py_Ellipsis) { if (ellipsis++) { PyErr_SetString(PyExc_IndexError, "an index can only have a single ellipsis ('...')"); return NULL; } }
    else if (it == Py_None || PyBool_Check(it)) {}
    else if (THPTensor_Check(it) && ((THPTensor *)it)->t->dtype == TH_Bool) consumed += ((THPTensor *)it)->t->ndim ? ((THPTensor *)it)->t->ndim : 0;
    else consumed++;
  }
  if (consumed > ndim) {
    PyErr_Format(PyExc_IndexError, "too many indices for tensor of dimension %d", ndim);
    return NULL;
  }
  PyObject *cur = Py_NewRef(self);
  int dim = 0;
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *it = PyTuple_GET_ITEM(tup, i), *next = NULL;
    if (it == Py_Ellipsis) { dim += ndim - consumed; continue; }
    if (it == Py_None) {
      PyObject *d = PyLong_FromLong(dim);
      next = d ? F_unsqueeze(cur, d) : NULL;
      Py_XDECREF(d);
      dim++;
    } else if (is_int_index(it)) {
      int64_t idx;
      if (ap_to_int(it, &idx) < 0) { Py_DECREF(cur); return NULL; }
      THTensor *t = ((THPTensor *)cur)->t;
      if (dim >= t->ndim) { Py_DECREF(cur); PyErr_Format(PyExc_IndexError, "too many indices for tensor of dimension %d", ndim); return NULL; }
      if (idx < -t->sizes[dim] || idx >= t->sizes[dim]) {
        PyErr_Format(PyExc_IndexError, "index %lld is out of bounds for dimension %d with size %lld",
                     (long long)idx, dim, (long long)t->sizes[dim]);
        Py_DECREF(cur);
        return NULL;
      }
      PyObject *d = PyLong_FromLong(dim), *ix = PyLong_FromLongLong(idx);
      next = (d && ix) ? F_select_int(cur, d, ix) : NULL;
      Py_XDECREF(d); Py_XDECREF(ix);
    } else if (PySlice_Check(it) && skip_full && dim < ((THPTensor *)cur)->t->ndim &&
               full_slice((PySliceObject *)it, ((THPTensor *)cur)->t->sizes[dim])) {
      next = Py_NewRef(cur);
      dim++;
    } else if (PySlice_Check(it)) {
      PySliceObject *sl = (PySliceObject *)it;
      int64_t step = 1;
      int overflow = 0;
      if (PyLong_Check(sl->step)) {   /* Python clamps a slice's huge step (PySlice_Unpack); so does torch */
        step = PyLong_AsLongLongAndOverflow(sl->step, &overflow);
        if (overflow) step = overflow > 0 ? INT64_MAX : INT64_MIN;
        else if (step == -1 && PyErr_Occurred()) { Py_DECREF(cur); return NULL; }
      } else if (sl->step != Py_None && ap_to_int(sl->step, &step) < 0) { Py_DECREF(cur); return NULL; }
      if (step == 0) { Py_DECREF(cur); PyErr_SetString(PyExc_ValueError, "slice step cannot be zero"); return NULL; }
      if (step < 0) { Py_DECREF(cur); PyErr_SetString(PyExc_ValueError, "step must be greater than zero"); return NULL; }
      PyObject *d = PyLong_FromLong(dim), *stp = PyLong_FromLongLong(step);
      PyObject *start = clamp_bound(sl->start), *stop = clamp_bound(sl->stop);
      next = (d && stp && start && stop) ? F_slice_Tensor(cur, d, start, stop, stp) : NULL;
      Py_XDECREF(d); Py_XDECREF(stp); Py_XDECREF(start); Py_XDECREF(stop);
      dim++;
    } else if (is_advanced(it)) {
      PyObject *entry = Py_BuildValue("(iO)", dim, it);
      if (!entry || PyList_Append(adv, entry) < 0) { Py_XDECREF(entry); Py_DECREF(cur); return NULL; }
      Py_DECREF(entry);
      int span = (THPTensor_Check(it) && ((THPTensor *)it)->t->dtype == TH_Bool) ? ((THPTensor *)it)->t->ndim : 1;
      if (PyBool_Check(it) || (THPTensor_Check(it) && ((THPTensor *)it)->t->dtype == TH_Bool && span == 0)) {
        /* a 0-d bool mask adds a dim, like None */
        PyObject *d = PyLong_FromLong(dim);
        next = d ? F_unsqueeze(cur, d) : NULL;
        Py_XDECREF(d);
        span = 1;
      } else {
        next = Py_NewRef(cur);
      }
      dim += span;
    } else {
      PyErr_Format(PyExc_IndexError, "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
                   "are valid indices (got %s)", Py_TYPE(it)->tp_name);
      Py_DECREF(cur);
      return NULL;
    }
    Py_DECREF(cur);
    if (!next) return NULL;
    cur = next;
  }
  return cur;
}

/* dims covered by the entries of an index list so far */
static int span_sum(PyObject *l) {
  int n = 0;
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(l); i++) {
    PyObject *t = PyList_GET_ITEM(l, i);
    THTensor *tt = THPTensor_Check(t) ? ((THPTensor *)t)->t : NULL;
    n += (tt && (tt->dtype == TH_Bool || tt->dtype == TH_UInt8) && tt->ndim > 1) ? tt->ndim : 1;
  }
  return n;
}

/* t (a new ref, stolen) on the device of view: a CPU index or value (a list,
 * a CPU tensor) indexes a CUDA tensor as in PyTorch; the copy crosses here
 * so the op sees one device (0-d CPU tensors join any device as they are). */
static PyObject *on_device_of(PyObject *view, PyObject *t) {
  int dev = THTensor_device(((THPTensor *)view)->t);
  THTensor *tt = t ? ((THPTensor *)t)->t : NULL;
  if (!tt || (dev < 0 && dev != TH_DEVICE_META) || THTensor_device(tt) >= 0 || THTensor_isMeta(tt) || tt->ndim == 0) return t;
  THTensor *c = at_to_device(tt, dev, tt->dtype, false);
  Py_DECREF(t);
  return c ? THPTensor_wrap(c) : THP_raise();
}

/* [ (dim, idx), ... ] -> the index list of aten's index: None for untouched dims */
static PyObject *index_list(PyObject *view, PyObject *adv) {
  int ndim = ((THPTensor *)view)->t->ndim;
  PyObject *l = PyList_New(0);
  if (!l) return NULL;
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(adv); i++) {
    PyObject *e = PyList_GET_ITEM(adv, i);
    int dim = (int)PyLong_AsLong(PyTuple_GET_ITEM(e, 0));
    /* a k-d mask covers k dims: the entries after it count from its end */
    while (span_sum(l) < dim) PyList_Append(l, Py_None);
    PyObject *idx = PyTuple_GET_ITEM(e, 1);
    PyObject *t = THPTensor_Check(idx) ? Py_NewRef(idx) : NULL;
    if (!t) {
      PyObject *data = idx;
      PyObject *args[1] = { data };
      extern PyMethodDef THP_factory_functions[];
      t = NULL;
      for (PyMethodDef *d = THP_factory_functions; d->ml_name; d++)
        if (!strcmp(d->ml_name, "tensor"))
          t = ((PyObject *(*)(PyObject *, PyObject *const *, Py_ssize_t, PyObject *))(void (*)(void))d->ml_meth)(NULL, args, 1, NULL);
      if (!t) { Py_DECREF(l); return NULL; }
      /* torch's indexing_tensor_from_data: a list that is not a mask indexes as int64, even an empty one
       * (x[:, []]) or one of floats (truncated) */
      THDtype dt = ((THPTensor *)t)->t->dtype;
      if (dt != TH_Bool && dt != TH_UInt8 && dt != TH_Int64) {
        PyObject *as_long = PyObject_CallMethod(t, "long", NULL);
        Py_DECREF(t);
        if (!(t = as_long)) { Py_DECREF(l); return NULL; }
      }
    }
    if (!(t = on_device_of(view, t))) { Py_DECREF(l); return NULL; }
    if (PyList_Append(l, t) < 0) { Py_DECREF(t); Py_DECREF(l); return NULL; }
    Py_DECREF(t);
  }
  (void)ndim;
  return l;
}

PyObject *THPTensor_getitem(PyObject *self, PyObject *index) {
  PyObject *tfr;   /* a Tensor subclass overriding __torch_function__ (self or in the index) takes it */
  if (THP_tf_armed && THP_tf_binding(NULL, "__getitem__", self, &index, 1, NULL, &tfr)) return tfr;
  /* fast path: x[i] */
  if (is_int_index(index) && !PyTuple_Check(index)) {
    THTensor *t = ((THPTensor *)self)->t;
    int64_t idx;
    if (ap_to_int(index, &idx) < 0) return NULL;
    if (t->ndim == 0) { PyErr_SetString(PyExc_IndexError, "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ to convert a 0-dim tensor to a number"); return NULL; }
    if (idx < -t->sizes[0] || idx >= t->sizes[0]) {
      PyErr_Format(PyExc_IndexError, "index %lld is out of bounds for dimension 0 with size %lld",
                   (long long)idx, (long long)t->sizes[0]);
      return NULL;
    }
    PyObject *zero = PyLong_FromLong(0), *ix = PyLong_FromLongLong(idx);
    PyObject *r = (zero && ix) ? F_select_int(self, zero, ix) : NULL;
    Py_XDECREF(zero); Py_XDECREF(ix);
    return r;
  }
  if (THP_has_torch_function(&index, 1))   /* a vmap BatchedTensor index: its type's override decides */
    return THP_torch_function_fallback("", "__getitem__", self, &index, 1, NULL);
  PyObject *tup = as_tuple(index);
  if (!tup) return NULL;
  PyObject *adv = PyList_New(0);
  if (!adv) { Py_DECREF(tup); return NULL; }
  /* full slices are kept while the tracer or profiler observes: torch keeps them in traces */
  PyObject *view = apply_basic(self, tup, adv, PyTuple_Check(index) && !THP_dispatch_active());
  Py_DECREF(tup);
  if (!view || PyList_GET_SIZE(adv) == 0) {
    Py_DECREF(adv);
    if (view == self) { Py_DECREF(view); return F_alias(self); }   /* x[...] / x[()] is a new view */
    return view;
  }
  PyObject *idx = index_list(view, adv);
  Py_DECREF(adv);
  if (!idx) { Py_DECREF(view); return NULL; }
  PyObject *r = VT_index_Tensor(view, idx);
  Py_DECREF(idx);
  Py_DECREF(view);
  return r;
}

/* The value of x[idx] = value as a tensor: numbers and sequences take x's
 * dtype, so do 0-d tensors (a bigger tensor keeps its own, and index_put_
 * checks it). New ref. */
/* a Python complex number written into dtype dt: fill_'s rules for torch's complex Scalar (a real dtype
 * takes it only without an imaginary part), not a cast that warns and drops it */
static PyObject *complex_value_as(PyObject *value, THDtype dt) {
  Py_complex c = PyComplex_AsCComplex(value);
  if (PyErr_Occurred()) return NULL;
  THTensor *t = THTensor_new(dt, 0, NULL);
  if (!t) return THP_raise();
  if (at_fill_complex_(t, c.real, c.imag) < 0) { THTensor_free(t); return THP_raise(); }
  return THPTensor_wrap(t);
}

static PyObject *value_of(PyObject *view, PyObject *value) {
  THDtype dt = ((THPTensor *)view)->t->dtype;
  /* a 0-d tensor value is cast like a number, as PyTorch does */
  if (THPTensor_Check(value) && !((THPTensor *)value)->t->wrapped_number && ((THPTensor *)value)->t->ndim)
    return on_device_of(view, Py_NewRef(value));
  PyObject *v = PyComplex_Check(value) ? complex_value_as(value, dt) : fa_tensor(value);
  if (!v && PyErr_ExceptionMatches(PyExc_TypeError)) {   /* a list / nested sequence */
    PyErr_Clear();
    extern PyMethodDef THP_factory_functions[];
    for (PyMethodDef *d = THP_factory_functions; d->ml_name; d++)
      if (!strcmp(d->ml_name, "tensor")) {
        PyObject *args[1] = { value };
        v = ((PyObject *(*)(PyObject *, PyObject *const *, Py_ssize_t, PyObject *))(void (*)(void))d->ml_meth)(NULL, args, 1, NULL);
      }
  }
  if (!(v = on_device_of(view, v)) || ((THPTensor *)v)->t->dtype == dt) return v;
  THTensor *c = at_to_dtype(((THPTensor *)v)->t, dt, false);
  Py_DECREF(v);
  return c ? THPTensor_wrap(c) : THP_raise();
}

int THPTensor_setitem(PyObject *self, PyObject *index, PyObject *value) {
  if (!value) { PyErr_SetString(PyExc_TypeError, "Tensor does not support deleting items"); return -1; }
  PyObject *both[2] = {index, value}, *tfr;
  if (THP_tf_armed && THP_tf_binding(NULL, "__setitem__", self, both, 2, NULL, &tfr)) {
    Py_XDECREF(tfr);
    return tfr ? 0 : -1;
  }
  if (THP_has_torch_function(both, 2)) {
    /* a vmap BatchedTensor (or fx Proxy) as the value or an index: its type's Tensor.__setitem__ override decides */
    PyObject *r = THP_torch_function_fallback("", "__setitem__", self, both, 2, NULL);
    Py_XDECREF(r);
    return r ? 0 : -1;
  }
  PyObject *tup = as_tuple(index);
  if (!tup) return -1;
  PyObject *adv = PyList_New(0);
  if (!adv) { Py_DECREF(tup); return -1; }
  PyObject *view = apply_basic(self, tup, adv, false);
  Py_DECREF(tup);
  if (!view) { Py_DECREF(adv); return -1; }
  PyObject *r = NULL;
  if (PyList_GET_SIZE(adv)) {
    PyObject *idx = index_list(view, adv);
    PyObject *v = idx ? value_of(view, value) : NULL;
    if (v) r = VT_index_put_(view, idx, v, false);
    Py_XDECREF(idx);
    Py_XDECREF(v);
  } else if (THPTensor_Check(value)) {
    THTensor *dst = ((THPTensor *)view)->t, *src = ((THPTensor *)value)->t;
    int nd;
    int64_t shape[TH_MAX_DIMS];
    if (at_broadcast_sizes(dst->ndim, dst->sizes, src->ndim, src->sizes, &nd, shape) < 0 || nd != dst->ndim ||
        memcmp(shape, dst->sizes, nd * sizeof(int64_t))) {
      THError_clear();
      /* torch's copy_to: the value without its leading size-1 dims, expanded to the slice; the expand's own
       * error ("The expanded size of the tensor ...") is what a mismatch reports */
      int lead = 0;
      while (lead < src->ndim && src->sizes[lead] == 1) lead++;
      /* autograd views, so the value's gradient flows through the copy */
      ATIntList sq = {src->ndim - lead}, sl = {dst->ndim};
      memcpy(sq.v, src->sizes + lead, sq.n * sizeof(int64_t));
      memcpy(sl.v, dst->sizes, sl.n * sizeof(int64_t));
      PyObject *w = VT_view(value, &sq);
      PyObject *ex = w ? VT_expand(w, &sl, false) : NULL;
      if (ex) r = F_copy_(view, ex, NULL);
      Py_XDECREF(w);
      Py_XDECREF(ex);
    } else {
      r = F_copy_(view, value, NULL);
    }
  } else if (ap_is_scalar(value)) {
    r = F_fill__Scalar(view, value);
  } else if (PyComplex_Check(value)) {
    PyObject *v = value_of(view, value);
    if (v) { r = F_copy_(view, v, NULL); Py_DECREF(v); }
  } else {
    PyObject *v = NULL;
    extern PyMethodDef THP_factory_functions[];
    for (PyMethodDef *d = THP_factory_functions; d->ml_name; d++)
      if (!strcmp(d->ml_name, "tensor")) {
        PyObject *args[1] = { value };
        v = ((PyObject *(*)(PyObject *, PyObject *const *, Py_ssize_t, PyObject *))(void (*)(void))d->ml_meth)(NULL, args, 1, NULL);
      }
    if (v) { r = F_copy_(view, v, NULL); Py_DECREF(v); }
  }
  Py_DECREF(adv);
  Py_DECREF(view);
  if (!r) return -1;
  Py_DECREF(r);
  return 0;
}
