/* Hand-written _TensorBase methods: properties-like queries, conversions
 * to Python values, to()/type(), and the few ATen-level helpers some
 * declarations use as their impl. Everything else is generated. */
#include "THP.h"
#include "ArgParser.h"
#include "Bindings.h"
#include "Functions.h"
#include "TorchFunction.h"

#define SELF ((THPTensor *)self)

/* a Tensor subclass overriding __torch_function__, or a TorchFunctionMode, sees the hand-written methods too
 * (the size queries included), as torch's */
#define TF_METHOD(NAME, ARGS, KW) \
  PyObject *tfr;                  \
  if (THP_tf_armed && THP_tf_method_kw(NAME, self, ARGS, KW, &tfr)) return tfr;

static PyObject *m_size(PyObject *self, PyObject *args) {
  TF_METHOD("size", args, NULL)
  PyObject *d = NULL;
  if (!PyArg_ParseTuple(args, "|O:size", &d)) return NULL;
  if (!d || d == Py_None) return THPSize_new(SELF->t->ndim, SELF->t->sizes);
  int64_t dim, w;
  if (ap_to_int(d, &dim) < 0) return NULL;
  if (at_wrap_dim(dim, SELF->t->ndim, &w) < 0) return THP_raise();
  return PyLong_FromLongLong(SELF->t->ndim ? SELF->t->sizes[w] : 1);
}

static PyObject *m_stride(PyObject *self, PyObject *args) {
  TF_METHOD("stride", args, NULL)
  PyObject *d = NULL;
  if (!PyArg_ParseTuple(args, "|O:stride", &d)) return NULL;
  THTensor *t = SELF->t;
  if (!d || d == Py_None) {
    PyObject *r = PyTuple_New(t->ndim);
    if (!r) return NULL;
    for (int i = 0; i < t->ndim; i++) PyTuple_SET_ITEM(r, i, PyLong_FromLongLong(t->strides[i]));
    return r;
  }
  int64_t dim, w;
  if (ap_to_int(d, &dim) < 0) return NULL;
  if (at_wrap_dim(dim, t->ndim, &w) < 0) return THP_raise();
  return PyLong_FromLongLong(t->ndim ? t->strides[w] : 1);
}

static PyObject *m_dim(PyObject *self, PyObject *u) {
  TF_METHOD("dim", NULL, NULL)
  return PyLong_FromLong(SELF->t->ndim);
}
static PyObject *m_numel(PyObject *self, PyObject *u) {
  TF_METHOD("numel", NULL, NULL)
  return PyLong_FromLongLong(THTensor_numel(SELF->t));
}
static PyObject *m_element_size(PyObject *self, PyObject *u) { return PyLong_FromLong(THDtype_size(SELF->t->dtype)); }
static PyObject *m_storage_offset(PyObject *self, PyObject *u) { return PyLong_FromLongLong(SELF->t->offset); }
static PyObject *m_data_ptr(PyObject *self, PyObject *u) {
  TF_METHOD("data_ptr", NULL, NULL)
  if (THTensor_isMeta(SELF->t)) return PyLong_FromLong(0);   /* torch's answer: no memory, whatever the offset */
  return PyLong_FromVoidPtr(THTensor_data(SELF->t));
}
static PyObject *m_is_floating_point(PyObject *self, PyObject *u) { return PyBool_FromLong(THDtype_isFloating(SELF->t->dtype)); }
static PyObject *m_is_signed(PyObject *self, PyObject *u) { return PyBool_FromLong(THDtype_info[SELF->t->dtype].is_signed); }
static PyObject *m_false(PyObject *self, PyObject *u) { Py_RETURN_FALSE; }
static PyObject *m_get_device(PyObject *self, PyObject *u) {
  int d = THTensor_device(((THPTensor *)self)->t);
  return PyLong_FromLong(d == TH_DEVICE_META ? -1 : d);   /* -1 for every non-GPU tensor, as torch */
}
static PyObject *m_is_view(PyObject *self, PyObject *u) { return PyBool_FromLong(SELF->base != NULL); }

static PyObject *m_is_contiguous(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
  static const char *sigs[] = { "is_contiguous(Tensor self, *, MemoryFormat memory_format=contiguous_format)", NULL };
  static APParser p = { sigs };
  APResult r;
  if (ap_parse(&p, self, args, nargs, kwnames, &r) < 0) return NULL;
  ATMemoryFormat mf = THP_memory_format(ap_object(&r, 1), AT_CONTIGUOUS_FORMAT);
  ap_release(&r);
  return PyBool_FromLong(at_is_contiguous_format(SELF->t, mf));
}

/* x.contiguous() of a contiguous plain tensor is x itself, as torch's (no alias, no CloneBackward0 node);
 * everything else (a copy, a memory format, a subclass that may override __torch_function__) takes the
 * generated binding. Listed before the generated methods, so this one is the method. */
PyObject *THPVariable_m_contiguous(PyObject *self_, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);
static PyObject *m_contiguous(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
  if (nargs == 0 && !kwnames && THPTensorClass && Py_TYPE(self) == (PyTypeObject *)THPTensorClass &&
      THTensor_isContiguous(SELF->t))
    return Py_NewRef(self);
  return THPVariable_m_contiguous(self, args, nargs, kwnames);
}

static PyObject *m_is_complex(PyObject *self, PyObject *u) { return PyBool_FromLong(THDtype_isComplex(SELF->t->dtype)); }

static PyObject *scalar_of(THTensor *t) {
  if (THP_refuse_meta_value(t) < 0) return NULL;
  if (t->dtype == TH_ComplexFloat) {
    const float *v = (const float *)THTensor_data(t);
    return PyComplex_FromDoubles(v[0], v[1]);
  }
  if (t->dtype == TH_ComplexDouble) {
    const double *v = (const double *)THTensor_data(t);
    return PyComplex_FromDoubles(v[0], v[1]);
  }
  if (t->dtype == TH_Bool) return PyBool_FromLong(at_item_int(t) != 0);
  if (THDtype_isFloating(t->dtype)) return PyFloat_FromDouble(at_item_double(t));
  return PyLong_FromLongLong(at_item_int(t));
}


static PyObject *m_item(PyObject *self, PyObject *u) {
  TF_METHOD("item", NULL, NULL)
  int64_t n = THTensor_numel(SELF->t);
  if (n != 1) {
    PyErr_Format(PyExc_RuntimeError, "a Tensor with %lld elements cannot be converted to Scalar", (long long)n);
    return NULL;
  }
  return scalar_of(SELF->t);
}

static PyObject *tolist_rec(THTensor *t, int dim, int64_t offset) {
  if (dim == t->ndim) {
    THTensor e = *t;
    e.ndim = 0;
    e.offset = offset;
    return scalar_of(&e);
  }
  PyObject *l = PyList_New(t->sizes[dim]);
  if (!l) return NULL;
  for (int64_t i = 0; i < t->sizes[dim]; i++) {
    PyObject *v = tolist_rec(t, dim + 1, offset + i * t->strides[dim]);
    if (!v) { Py_DECREF(l); return NULL; }
    PyList_SET_ITEM(l, i, v);
  }
  return l;
}
static PyObject *m_tolist(PyObject *self, PyObject *u) {
  TF_METHOD("tolist", NULL, NULL)
  if (THTensor_isMeta(SELF->t)) {
    PyErr_SetString(PyExc_NotImplementedError, "Cannot copy out of meta tensor; no data!");
    return NULL;
  }
  return tolist_rec(SELF->t, 0, SELF->t->offset);
}

static PyObject *m_requires_grad_(PyObject *self, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"requires_grad", NULL};
  int rg = 1;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|p:requires_grad_", kwlist, &rg)) return NULL;
  if (PyObject_SetAttrString(self, "requires_grad", rg ? Py_True : Py_False) < 0) return NULL;
  return Py_NewRef(self);
}

static PyObject *m_detach_(PyObject *self, PyObject *u) {
  if (SELF->base && !SELF->is_inference) {   /* any view, as torch (inference tensors are none there) */
    PyErr_SetString(PyExc_RuntimeError,
                    "Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel "
                    "(DDP) for training, and gradient_as_bucket_view is set as True, gradients are views of DDP "
                    "buckets, and hence detach_() cannot be called on these gradients. To fix this error, please "
                    "refer to the Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.");
    return NULL;
  }
  Py_CLEAR(SELF->grad_fn);
  SELF->requires_grad = false;
  SELF->output_nr = 0;
  return Py_NewRef(self);
}

/* Tensor._make_subclass(cls, data, require_grad=False): a `cls` instance
 * sharing data's storage (how nn.Parameter is made). */
static PyObject *m_make_subclass(PyObject *unused, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"cls", "data", "require_grad", "dispatch_strides", "dispatch_device",
                           "device_for_backend_keys", NULL};
  PyObject *cls, *data, *a = NULL, *b = NULL, *c = NULL;
  int rg = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "OO!|pOOO:_make_subclass", kwlist, &cls, &THPTensorType, &data, &rg,
                                   &a, &b, &c))
    return NULL;
  if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, &THPTensorType)) {
    PyErr_SetString(PyExc_TypeError, "cls must be a Tensor subclass");
    return NULL;
  }
  THTensor *t = at_alias(((THPTensor *)data)->t);
  PyObject *r = THPTensor_wrapType((PyTypeObject *)cls, t);
  if (!r) return NULL;
  ((THPTensor *)r)->is_inference = ((THPTensor *)data)->is_inference;   /* the same data: an nn.Parameter too */
  if (rg && ((THPTensor *)r)->is_inference && !THP_inference_mode) {
    Py_DECREF(r);
    PyErr_SetString(PyExc_RuntimeError, "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.");
    return NULL;
  }
  if (rg && !THDtype_isFloating(((THPTensor *)r)->t->dtype) && !THDtype_isComplex(((THPTensor *)r)->t->dtype)) {
    Py_DECREF(r);
    PyErr_SetString(PyExc_RuntimeError, "Only Tensors of floating point and complex dtype can require gradients");
    return NULL;
  }
  ((THPTensor *)r)->requires_grad = rg;
  return r;
}

/* ---- conversions ---- */
static PyObject *convert_to(PyObject *self, THDtype dt, PyObject *device, bool copy, bool non_blocking) {
  PyObject *d = THPDtype_get(dt);
  PyObject *cp = PyBool_FromLong(copy), *nb = PyBool_FromLong(non_blocking);
  PyObject *r = F__to_copy(self, d, cp, device ? device : Py_None, nb);
  Py_DECREF(cp);
  Py_DECREF(nb);
  return r;
}
static PyObject *convert(PyObject *self, THDtype dt, bool copy) { return convert_to(self, dt, NULL, copy, false); }
#define CONV(NAME, DT) \
  static PyObject *m_##NAME(PyObject *self, PyObject *args, PyObject *kw) { \
    TF_METHOD(#NAME, args, kw)                                             \
    if (SELF->t->dtype == DT) return Py_NewRef(self);                     \
    return convert(self, DT, false);                                       \
  }
CONV(float, TH_Float) CONV(double, TH_Double) CONV(half, TH_Half) CONV(bfloat16, TH_BFloat16)
CONV(long, TH_Int64) CONV(int, TH_Int32) CONV(short, TH_Int16) CONV(char, TH_Int8) CONV(byte, TH_UInt8)
CONV(bool, TH_Bool)

/* to(memory_format=) copies unless t is laid out in mf and reads as mf (torch's suggest_memory_format): a
 * (N, 1, H, W) tensor is contiguous in both formats, but only one set of strides reads as channels_last */
static bool laid_out_as(const THTensor *t, ATMemoryFormat mf) {
  if (!at_is_contiguous_format(t, mf)) return false;
  if (t->ndim != 4 && t->ndim != 5) return true;
  return at_suggest_format(t) == mf;
}

static PyObject *m_to(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
  PyObject *tfr;
  if (THP_tf_armed && THP_tf_binding(NULL, "to", self, args, nargs, kwnames, &tfr)) return tfr;
  static const char *sigs[] = {
    "to(Tensor self, Device? device=None, ScalarType? dtype=None, bool non_blocking=False, bool copy=False, *, MemoryFormat? memory_format=None)",
    "to(Tensor self, ScalarType dtype, bool non_blocking=False, bool copy=False, *, MemoryFormat? memory_format=None)",
    "to(Tensor self, Tensor other, bool non_blocking=False, bool copy=False, *, MemoryFormat? memory_format=None)",
    NULL };
  static APParser p = { sigs };
  APResult r;
  int idx = ap_parse(&p, self, args, nargs, kwnames, &r);
  if (idx < 0) return NULL;
  PyObject *res = NULL;
  THDtype dt = SELF->t->dtype;
  int dev = THTensor_device(SELF->t);
  PyObject *devobj = NULL;
  bool copy, nb;
  if (idx == 0) {
    devobj = ap_object(&r, 1);
    if (devobj != Py_None && THPDevice_index(devobj, &dev) < 0) goto done;
    dt = ap_dtype(&r, 2, dt);
    nb = ap_bool(&r, 3);
    copy = ap_bool(&r, 4);
  } else if (idx == 1) {
    dt = ap_dtype(&r, 1, dt);
    nb = ap_bool(&r, 2);
    copy = ap_bool(&r, 3);
  } else {
    THTensor *o = ap_tensor(&r, 1)->t;
    dt = o->dtype;
    dev = THTensor_device(o);
    nb = ap_bool(&r, 2);
    copy = ap_bool(&r, 3);
  }
  ATMemoryFormat mf = THP_memory_format(ap_object(&r, idx == 0 ? 5 : 4), AT_PRESERVE_FORMAT);
  bool relayout = mf != AT_PRESERVE_FORMAT && !laid_out_as(SELF->t, mf);
  if (dt == SELF->t->dtype && dev == THTensor_device(SELF->t) && !copy && !relayout) {
    res = Py_NewRef(self);
  } else {
    PyObject *dv = THPDevice_of(dev);
    res = dv ? convert_to(self, dt, dv, copy || relayout, nb) : NULL;
    Py_XDECREF(dv);
    /* the copy keeps a dense input's layout; another format lays the fresh copy out again under
     * the same tensor object, so its one node stays ToCopyBackward0, as torch's */
    if (res && mf != AT_PRESERVE_FORMAT && !laid_out_as(((THPTensor *)res)->t, mf)) {
      THTensor *laid = at_clone_format(((THPTensor *)res)->t, mf);
      if (!laid) { Py_CLEAR(res); THP_raise(); goto done; }
      THTensor_free(((THPTensor *)res)->t);
      ((THPTensor *)res)->t = laid;
    }
  }
done:
  ap_release(&r);
  return res;
}

/* cpu()/cuda(device=None, non_blocking=False): to() on that device */
static PyObject *move(PyObject *self, int dev, bool nb) {
  if (dev == THTensor_device(SELF->t)) return Py_NewRef(self);
  PyObject *dv = THPDevice_of(dev);
  PyObject *res = dv ? convert_to(self, SELF->t->dtype, dv, false, nb) : NULL;
  Py_XDECREF(dv);
  return res;
}

static PyObject *m_cpu(PyObject *self, PyObject *args, PyObject *kw) {
  TF_METHOD("cpu", args, kw)
  static char *kwlist[] = {"memory_format", NULL};
  PyObject *mf = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|$O:cpu", kwlist, &mf)) return NULL;
  return move(self, -1, false);
}
static PyObject *m_cuda(PyObject *self, PyObject *args, PyObject *kw) {
  TF_METHOD("cuda", args, kw)
  static char *kwlist[] = {"device", "non_blocking", "memory_format", NULL};
  PyObject *d = Py_None, *mf = NULL;
  int nb = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|Op$O:cuda", kwlist, &d, &nb, &mf)) return NULL;
  int dev = -1;
  if (d == Py_None) {
    if (THP_cuda_resolve(&dev) < 0) return NULL;
  } else if (PyLong_Check(d)) {
    dev = (int)PyLong_AsLong(d);
    if (dev == -1 && PyErr_Occurred()) return NULL;
    if (dev < 0) dev = -1;
    if (THP_cuda_resolve(&dev) < 0) return NULL;
  } else {
    if (THPDevice_index(d, &dev) < 0) return NULL;
    if (dev < 0) { PyErr_SetString(PyExc_RuntimeError, "Invalid device, must be cuda device"); return NULL; }
  }
  return move(self, dev, nb);
}

/* type(): the legacy name ("torch.FloatTensor", "torch.cuda.FloatTensor"); type(dtype, legacy class or
 * name): convert, to the device the name gives. Names are torch's: "torch." then "cuda." for the GPU,
 * then a legacy class name, or "Tensor" (the default dtype). The Tensor class itself is "torch.Tensor":
 * x.type(torch.Tensor) is how old programs write "float"; its subclasses are refused, as torch does. */
static PyObject *m_type(PyObject *self, PyObject *args, PyObject *kw) {
  TF_METHOD("type", args, kw)
  static char *kwlist[] = {"dtype", "non_blocking", NULL};
  PyObject *d = NULL;
  int nb = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|Op:type", kwlist, &d, &nb)) return NULL;
  bool on_gpu = THTensor_device(SELF->t) >= 0;
  if (!d || d == Py_None)
    return PyUnicode_FromFormat("torch.%s%sTensor", on_gpu ? "cuda." : "", THDtype_info[SELF->t->dtype].legacy);
  if (THPDtype_Check(d)) {
    THDtype dt = ((THPDtype *)d)->dtype;
    return dt == SELF->t->dtype ? Py_NewRef(self) : convert(self, dt, false);
  }
  if (ap_unimplemented_dtype_error("type", d)) return NULL;
  PyObject *name;
  if (PyUnicode_Check(d))
    name = Py_NewRef(d);
  else if (d == (PyObject *)&THPTensorType)
    name = PyUnicode_FromString("torch.Tensor");
  else {   /* a legacy class (cthtorch.FloatTensor, cthtorch.cuda.FloatTensor) by torch's name; others by theirs */
    PyObject *mod = PyObject_GetAttrString(d, "__module__"), *nm = mod ? PyObject_GetAttrString(d, "__name__") : NULL;
    const char *m = nm && PyUnicode_Check(mod) ? PyUnicode_AsUTF8(mod) : NULL;
    if (m && (!strcmp(m, "cthtorch") || !strcmp(m, "cthtorch.cuda")))
      name = PyUnicode_FromFormat("torch.%s%U", m[8] ? "cuda." : "", nm);
    else   /* __module__ not a str: the class's own name; a failed attribute or encoding stays the error */
      name = nm && !PyErr_Occurred() ? Py_NewRef(nm) : NULL;
    Py_XDECREF(mod);
    Py_XDECREF(nm);
    if (!name) return NULL;
  }
  const char *s = PyUnicode_AsUTF8(name);
  if (!s) { Py_DECREF(name); return NULL; }
  int found = -1;
  bool gpu = false;
  if (!strncmp(s, "torch.", 6)) {
    const char *base = s + 6;
    if (!strncmp(base, "cuda.", 5)) { gpu = true; base += 5; }
    if (!strcmp(base, "Tensor")) found = at_default_dtype();
    for (int i = 0; i < TH_NDTYPES && found < 0; i++) {
      char buf[64];
      snprintf(buf, sizeof buf, "%sTensor", THDtype_info[i].legacy);
      if (!strcmp(base, buf)) found = i;
    }
  }
  if (found < 0) {
    PyErr_Format(PyExc_ValueError, "invalid type: '%s'", s);
    Py_DECREF(name);
    return NULL;
  }
  Py_DECREF(name);
  if (found == (int)SELF->t->dtype && gpu == on_gpu) return Py_NewRef(self);
  if (gpu == on_gpu) return convert(self, (THDtype)found, false);
  PyObject *dv = PyUnicode_FromString(gpu ? "cuda" : "cpu");
  PyObject *r = dv ? convert_to(self, (THDtype)found, dv, false, nb) : NULL;
  Py_XDECREF(dv);
  return r;
}

/* set_(source): share another tensor's storage and geometry. As torch: of the
 * same dtype and device only (a CPU tensor over a meta storage has no data to
 * read), and not on a leaf that requires grad. */
static PyObject *m_set_(PyObject *self, PyObject *args) {
  /* the C++ type names torch's error gives */
  static const char *cxx_names[TH_NDTYPES] = {
    [TH_Bool] = "bool", [TH_UInt8] = "unsigned char", [TH_Int8] = "signed char", [TH_Int16] = "short int",
    [TH_Int32] = "int", [TH_Int64] = "long int", [TH_Half] = "c10::Half", [TH_BFloat16] = "c10::BFloat16",
    [TH_Float] = "float", [TH_Double] = "double", [TH_ComplexFloat] = "c10::complex<float>",
    [TH_ComplexDouble] = "c10::complex<double>"};
  PyObject *src = NULL;
  if (!PyArg_ParseTuple(args, "|O!:set_", &THPTensorType, &src)) return NULL;
  if (THP_check_inplace(self) < 0) return NULL;
  if (src) {
    const THTensor *d = SELF->t, *o = ((THPTensor *)src)->t;
    if (o->dtype != d->dtype) {
      PyErr_Format(PyExc_RuntimeError, "Could not set tensor of type %s to a tensor of type %s", cxx_names[o->dtype],
                   cxx_names[d->dtype]);
      return NULL;
    }
    if (THTensor_device(o) != THTensor_device(d) || THTensor_isMeta(o) != THTensor_isMeta(d)) {
      char a[32], b[32];
      PyErr_Format(PyExc_RuntimeError, "Attempted to set the storage of a tensor on device \"%s\" to a storage on different "
                   "device \"%s\".  This is no longer allowed; the devices must match.",
                   THTensor_isMeta(d) ? "meta" : at_device_str(THTensor_device(d), a, sizeof a),
                   THTensor_isMeta(o) ? "meta" : at_device_str(THTensor_device(o), b, sizeof b));
      return NULL;
    }
  }
  if (!src) {
    THTensor *e = THTensor_new(SELF->t->dtype, 1, (int64_t[]){0});
    if (!e) return THP_raise();
    THTensor_setTo(SELF->t, e);
    THTensor_free(e);
  } else {
    THTensor_setTo(SELF->t, ((THPTensor *)src)->t);
  }
  THP_bump_version(self);
  return Py_NewRef(self);
}

static PyObject *m_resize_(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
  static const char *sigs[] = { "resize_(Tensor self, int[] size, *, MemoryFormat? memory_format=None)", NULL };
  static APParser p = { sigs };
  APResult r;
  if (ap_parse(&p, self, args, nargs, kwnames, &r) < 0) return NULL;
  PyObject *res = NULL;
  if (THPTensor_requiresGrad(self) && THP_grad_enabled()) {
    PyErr_SetString(PyExc_RuntimeError, "cannot resize variables that require grad");
  } else {
    const ATIntList *l = ap_intlist(&r, 1);
    bool negative = false;
    for (int i = 0; i < l->n; i++) negative |= l->v[i] < 0;
    PyObject *mfo = ap_object(&r, 2);
    bool given = mfo && mfo != Py_None;
    ATMemoryFormat mf = THP_memory_format(mfo, AT_CONTIGUOUS_FORMAT);
    /* as torch: the same sizes keep the strides (a transposed or channels_last tensor stays one);
     * only a memory_format given lays them out again, after the resize (preserve: torch's error) */
    THTensor *t = SELF->t;
    bool same = t->ndim == l->n && (!l->n || !memcmp(t->sizes, l->v, l->n * sizeof(int64_t)));
    /* torch's numel check reads sizes as unsigned, so a negative size is its overflow text
     * (torch then accepts (0, -1): a tensor with a negative dim, which we refuse the same way) */
    if (negative) PyErr_SetString(PyExc_RuntimeError, "numel: integer multiplication overflow");
    else if (((!same || (given && mf == AT_CONTIGUOUS_FORMAT)) && THTensor_resize(t, l->n, l->v) < 0) ||
             at_restride_format(t, mf) < 0) THP_raise();
    else if (mf == AT_PRESERVE_FORMAT) PyErr_SetString(PyExc_RuntimeError, "Unsupported memory formatPreserve");
    else { THP_bump_version(self); res = Py_NewRef(self); }
  }
  ap_release(&r);
  return res;
}

extern PyObject *THP_tensor_numpy(PyObject *self, PyObject *args, PyObject *kw);
extern PyObject *THP_untyped_storage(PyObject *self, PyObject *u);

#define VARKW(f) (PyCFunction)(void (*)(void))f, METH_VARARGS | METH_KEYWORDS
PyMethodDef THP_manual_tensor_methods[] = {
  {"contiguous", (PyCFunction)(void (*)(void))m_contiguous, METH_FASTCALL | METH_KEYWORDS, NULL},
  {"size", m_size, METH_VARARGS, NULL},
  {"stride", m_stride, METH_VARARGS, NULL},
  {"dim", m_dim, METH_NOARGS, NULL},
  {"ndimension", m_dim, METH_NOARGS, NULL},
  {"numel", m_numel, METH_NOARGS, NULL},
  {"nelement", m_numel, METH_NOARGS, NULL},
  {"element_size", m_element_size, METH_NOARGS, NULL},
  {"storage_offset", m_storage_offset, METH_NOARGS, NULL},
  {"data_ptr", m_data_ptr, METH_NOARGS, NULL},
  {"is_contiguous", (PyCFunction)(void (*)(void))m_is_contiguous, METH_FASTCALL | METH_KEYWORDS, NULL},
  {"is_floating_point", m_is_floating_point, METH_NOARGS, NULL},
  {"is_signed", m_is_signed, METH_NOARGS, NULL},
  {"is_complex", m_is_complex, METH_NOARGS, NULL},
  {"is_pinned", m_false, METH_NOARGS, NULL},
  {"get_device", m_get_device, METH_NOARGS, NULL},
  {"_is_view", m_is_view, METH_NOARGS, NULL},
  {"item", m_item, METH_NOARGS, NULL},
  {"tolist", m_tolist, METH_NOARGS, NULL},
  {"requires_grad_", VARKW(m_requires_grad_), NULL},
  {"detach_", m_detach_, METH_NOARGS, NULL},
  {"_make_subclass", VARKW(m_make_subclass) | METH_STATIC, NULL},
  {"float", VARKW(m_float), NULL},
  {"double", VARKW(m_double), NULL},
  {"half", VARKW(m_half), NULL},
  {"bfloat16", VARKW(m_bfloat16), NULL},
  {"long", VARKW(m_long), NULL},
  {"int", VARKW(m_int), NULL},
  {"short", VARKW(m_short), NULL},
  {"char", VARKW(m_char), NULL},
  {"byte", VARKW(m_byte), NULL},
  {"bool", VARKW(m_bool), NULL},
  {"to", (PyCFunction)(void (*)(void))m_to, METH_FASTCALL | METH_KEYWORDS, NULL},
  {"cpu", VARKW(m_cpu), NULL},
  {"cuda", VARKW(m_cuda), NULL},
  {"type", VARKW(m_type), NULL},
  {"set_", m_set_, METH_VARARGS, NULL},
  {"resize_", (PyCFunction)(void (*)(void))m_resize_, METH_FASTCALL | METH_KEYWORDS, NULL},
  {"numpy", VARKW(THP_tensor_numpy), NULL},
  {"untyped_storage", THP_untyped_storage, METH_NOARGS, NULL},
  {NULL}
};

static PyObject *f_is_tensor(PyObject *m, PyObject *o) { return PyBool_FromLong(THPTensor_Check(o) || ap_is_sparse(o)); }
static PyObject *f_numel(PyObject *m, PyObject *o) {
  if (ap_is_sparse(o)) return PyObject_CallMethod(o, "numel", NULL);
  if (!THPTensor_Check(o)) { PyErr_SetString(PyExc_TypeError, "numel(): argument 'input' must be Tensor"); return NULL; }
  return PyLong_FromLongLong(THTensor_numel(((THPTensor *)o)->t));
}
static PyObject *f_is_floating_point(PyObject *m, PyObject *o) {
  if (ap_is_sparse(o)) return PyObject_CallMethod(o, "is_floating_point", NULL);
  if (!THPTensor_Check(o)) { PyErr_SetString(PyExc_TypeError, "is_floating_point(): argument 'input' must be Tensor"); return NULL; }
  return PyBool_FromLong(THDtype_isFloating(((THPTensor *)o)->t->dtype));
}
PyMethodDef THP_manual_functions[] = {
  {"is_tensor", f_is_tensor, METH_O, NULL},
  {"numel", f_numel, METH_O, NULL},
  {"is_floating_point", f_is_floating_point, METH_O, NULL},
  {NULL}
};

/* ---- ATen-level helpers named as impl in declarations ---- */
THTensor *THP_copy_(const THTensor *self, const THTensor *src) {
  if (at_copy_((THTensor *)self, src) < 0) return NULL;
  return THTensor_retain((THTensor *)self);
}
THTensor *THP_fill_(const THTensor *self, ATScalar v) {
  if (at_fill_((THTensor *)self, v) < 0) return NULL;
  return THTensor_retain((THTensor *)self);
}
THTensor *THP_fill_tensor_(const THTensor *self, const THTensor *v) {
  if (v->ndim != 0) {
    THError_set(TH_ERR_RUNTIME, "fill_ only supports 0-dimension value tensor but got tensor with %d dimensions.", v->ndim);
    return NULL;
  }
  if (THTensor_isMeta(self) || THTensor_isMeta(v))   /* no value to read, or nowhere to write it */
    return at_copy_((THTensor *)self, v) < 0 ? NULL : THTensor_retain((THTensor *)self);
  if (THDtype_isComplex(v->dtype)) {
    /* a Python complex number is torch's complex Scalar (fill_.Scalar's rules); a complex tensor is
     * copied (broadcast), so a real self takes its real part with copy's warning */
    double re, im;
    if (v->wrapped_number)
      return at_item_complex(v, &re, &im) < 0 || at_fill_complex_((THTensor *)self, re, im) < 0 ? NULL
             : THTensor_retain((THTensor *)self);
    if (at_copy_((THTensor *)self, v) < 0) return NULL;
    return THTensor_retain((THTensor *)self);
  }
  ATScalar s = THDtype_isFloating(v->dtype) ? at_scalar_float(at_item_double(v)) : at_scalar_int(at_item_int(v));
  return THP_fill_(self, s);
}
/* a memory_format argument the parser accepted (a torch.memory_format, None or absent) */
ATMemoryFormat THP_memory_format(PyObject *mf, ATMemoryFormat absent) {
  for (int i = 0; i < 4; i++)
    if (mf == THPMemoryFormat_objs[i]) return (ATMemoryFormat)i;
  return absent;
}
