/* _TensorBase: the Python tensor type. Holds a THTensor plus autograd
 * state (grad, grad_fn, version counter, hooks). cthtorch.Tensor (Python)
 * subclasses it; results of ops are made of that class. */
#include "THP.h"
#include "ArgParser.h"
#include "Bindings.h"
#include "TorchFunction.h"

PyObject *THPTensorClass = NULL;

static PyObject *alloc_of(PyTypeObject *type, THTensor *t) {
  THPTensor *self = (THPTensor *)type->tp_alloc(type, 0);
  if (!self) { THTensor_free(t); return NULL; }
  self->t = t;
  self->version = NULL;
  self->output_nr = 0;
  self->is_inference = THP_inference_mode;   /* a view takes its base's flag instead */
  return (PyObject *)self;
}

PyObject *THPTensor_wrapType(PyTypeObject *type, THTensor *t) {
  if (!t) return THP_raise();
  THPTensor *self = (THPTensor *)alloc_of(type, t);
  if (!self) return NULL;
  if (!(self->version = THPVersion_new())) { Py_DECREF(self); return NULL; }
  return (PyObject *)self;
}

PyObject *THPTensor_wrap(THTensor *t) {
  return THPTensor_wrapType(THPTensorClass ? (PyTypeObject *)THPTensorClass : &THPTensorType, t);
}

/* detach(): the same storage and version counter as `of`, but not a view of it (no base), as torch's */
PyObject *THPTensor_wrapAlias(THTensor *t, PyObject *of) {
  if (!t) return THP_raise();
  THPTensor *self = (THPTensor *)alloc_of(THPTensorClass ? (PyTypeObject *)THPTensorClass : &THPTensorType, t);
  if (!self) return NULL;
  THPTensor *o = (THPTensor *)of;
  self->version = THPVersion_retain(o->version);
  self->is_inference = o->is_inference;
  return (PyObject *)self;
}

/* a view: an alias that also records its root base (a view of a view points at the first base) */
PyObject *THPTensor_wrapView(THTensor *t, PyObject *base) {
  THPTensor *self = (THPTensor *)THPTensor_wrapAlias(t, base);
  if (!self) return NULL;
  THPTensor *b = (THPTensor *)base;
  self->base = Py_NewRef(b->base ? b->base : base);
  self->view_version = self->version->version;
  /* a view of one of split/unbind's pieces keeps its no-in-place rule, as torch propagates the creation meta;
   * so does a view of a view made with grad mode off (that mode's rule wins, as torch's) */
  self->view_multi = b->view_multi;
  self->view_mode = b->view_mode ? b->view_mode
                  : THP_inference_mode ? THP_VIEW_INFERENCE : !THP_grad_enabled() ? THP_VIEW_NO_GRAD : 0;
  return (PyObject *)self;
}

static int tensor_traverse(THPTensor *self, visitproc visit, void *arg) {
  Py_VISIT(self->grad);
  Py_VISIT(self->grad_fn);
  Py_VISIT(self->hooks);
  Py_VISIT(self->base);
  Py_VISIT(self->dict);
  return 0;
}

static int tensor_clear(THPTensor *self) {
  Py_CLEAR(self->grad);
  Py_CLEAR(self->grad_fn);
  Py_CLEAR(self->hooks);
  Py_CLEAR(self->base);
  Py_CLEAR(self->dict);
  return 0;
}

extern bool THPNode_deferDecref(PyObject *fn);
static void tensor_dealloc(THPTensor *self) {
  PyTypeObject *tp = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  if (self->weakreflist) PyObject_ClearWeakRefs((PyObject *)self);
  /* inside a graph teardown, hand our grad_fn to the node free loop so a
   * chain of saved tensors does not recurse (see autograd/Node.c) */
  if (THPNode_deferDecref(self->grad_fn)) self->grad_fn = NULL;
  tensor_clear(self);
  THTensor_free(self->t);
  self->t = NULL;
  THPVersion_free(self->version);
  /* no Py_DECREF(tp) here: for Python subclasses subtype_dealloc does it */
  tp->tp_free((PyObject *)self);
}

/* ---- legacy constructor: Tensor(), Tensor(*sizes), Tensor(sequence), Tensor(tensor) ---- */
extern PyObject *THP_tensor_from_data(PyObject *data, THDtype dtype, bool dtype_given, bool copy_tensor);
/* a new reference to the tensor made from a sequence/buffer/array of data, or NULL with the error set */
static THTensor *legacy_from_data(PyObject *data, THDtype dt) {
  PyObject *made = THP_tensor_from_data(data, dt, true, true);
  if (!made) return NULL;
  THTensor *t = THTensor_retain(((THPTensor *)made)->t);
  Py_DECREF(made);
  return t;
}

/* torch.Tensor/FloatTensor(...) make CPU tensors only: another device is torch's error, not a CPU tensor
 * that was asked for elsewhere */
static int legacy_device_check(APResult *r, int i) {
  int type, index;
  if (THPDevice_parse(ap_object(r, i), &type, &index) < 0) return -1;
  if (type == 0) return 0;
  PyErr_Format(PyExc_RuntimeError, "legacy constructor expects device type: cpu but device type: %s was passed",
               type == 1 ? "cuda" : "meta");
  return -1;
}

static PyObject *tensor_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  static const char *sigs[] = {
    "new(*, Device? device=None)",
    "new(int[] size, *, Device? device=None)|hidden",
    "new(Tensor other)",
    "new(PyObject* data, *, Device? device=None)",
    NULL
  };
  static APParser parser = { sigs };
  APResult r;
  /* Tensor(2, 3) and Tensor(torch.Size) are sizes; Tensor([2, 3]) is data */
  Py_ssize_t na = args ? PyTuple_GET_SIZE(args) : 0;
  bool one_sequence = na == 1 && (PyList_Check(PyTuple_GET_ITEM(args, 0)) ||
                  (PyTuple_Check(PyTuple_GET_ITEM(args, 0)) && !PyObject_TypeCheck(PyTuple_GET_ITEM(args, 0), &THPSizeType)));
  if (one_sequence && (!kwargs || !PyDict_GET_SIZE(kwargs))) {
    THTensor *t = legacy_from_data(PyTuple_GET_ITEM(args, 0), at_default_dtype());
    return t ? THPTensor_wrapType(type, t) : NULL;
  }
  int idx = ap_parse_tuple(&parser, NULL, args, kwargs, &r);
  if (idx < 0) return NULL;
  THDtype dt = at_default_dtype();
  PyObject *res = NULL;
  THTensor *t = NULL;
  if (idx != 2 && legacy_device_check(&r, idx == 0 ? 0 : 1) < 0) goto done;
  switch (idx) {
    case 0: { ATIntList z = { 1, {0} }; t = at_empty(&z, dt); break; }
    case 1:
      /* a list or tuple given with device= binds the sizes signature; torch takes it as data (unlike a Size) */
      if (!one_sequence) t = at_empty(ap_intlist(&r, 0), dt);
      else if (!(t = legacy_from_data(PyTuple_GET_ITEM(args, 0), dt))) goto done;   /* its error is set */
      break;
    case 2: {
      THPTensor *o = ap_tensor(&r, 0);
      t = at_alias(o->t);
      break;
    }
    case 3: {
      PyObject *data = ap_object(&r, 0);
      if (PyLong_Check(data)) {
        ATIntList l = { 1, { 0 } };
        if (ap_to_intlist(data, &l, "new", "size") < 0) goto done;
        t = at_empty(&l, dt);
        break;
      }
      if (!PySequence_Check(data) && !PyObject_CheckBuffer(data) &&
          !PyObject_HasAttrString(data, "__array_interface__")) {
        PyErr_Format(PyExc_TypeError, "new(): data must be a sequence (got %s)", Py_TYPE(data)->tp_name);
        goto done;
      }
      if (!(t = legacy_from_data(data, dt))) goto done;
      break;
    }
  }
  res = THPTensor_wrapType(type, t);
done:
  ap_release(&r);
  return res;
}

/* ---- properties ---- */
/* the properties a subclass's __torch_function__ or a mode sees, as torch hands over their __get__ */
#define TF_GETTER(NAME) \
  PyObject *tfr;        \
  if (THP_tf_armed && THP_tf_getter(NAME, (PyObject *)self, &tfr)) return tfr;

static PyObject *get_shape(THPTensor *self, void *c) {
  TF_GETTER("shape")
  return THPSize_new(self->t->ndim, self->t->sizes);
}
static PyObject *get_dtype(THPTensor *self, void *c) {
  TF_GETTER("dtype")
  PyObject *d = THPDtype_get(self->t->dtype);
  Py_INCREF(d);
  return d;
}
static PyObject *get_device(THPTensor *self, void *c) {
  TF_GETTER("device")
  return THPDevice_of(THTensor_device(self->t));
}
static PyObject *get_is_cuda(THPTensor *self, void *c) { return PyBool_FromLong(THTensor_device(self->t) >= 0); }
static PyObject *get_is_meta(THPTensor *self, void *c) { return PyBool_FromLong(THTensor_isMeta(self->t)); }
static PyObject *get_ndim(THPTensor *self, void *c) {
  TF_GETTER("ndim")
  return PyLong_FromLong(self->t->ndim);
}
static PyObject *get_false(THPTensor *self, void *c) { Py_RETURN_FALSE; }
static PyObject *get_true(THPTensor *self, void *c) { Py_RETURN_TRUE; }
static PyObject *get_layout(THPTensor *self, void *c) { Py_INCREF(THPLayout_strided); return THPLayout_strided; }
static PyObject *get_version(THPTensor *self, void *c) { return PyLong_FromLongLong(self->version->version); }
static PyObject *get_itemsize(THPTensor *self, void *c) { return PyLong_FromLong(THDtype_size(self->t->dtype)); }
static PyObject *get_nbytes(THPTensor *self, void *c) {
  return PyLong_FromLongLong(THTensor_numel(self->t) * THDtype_size(self->t->dtype));
}
static PyObject *get_requires_grad(THPTensor *self, void *c) {
  TF_GETTER("requires_grad")
  return PyBool_FromLong(THPTensor_requiresGrad((PyObject *)self));
}
static int set_requires_grad(THPTensor *self, PyObject *v, void *c) {
  if (!v || !PyBool_Check(v)) { PyErr_SetString(PyExc_TypeError, "requires_grad must be a bool"); return -1; }
  bool rg = v == Py_True;
  if (self->grad_fn) {
    if (rg) return 0;
    PyErr_SetString(PyExc_RuntimeError,
                    "you can only change requires_grad flags of leaf variables. If you want to use a computed "
                    "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().");
    return -1;
  }
  if (rg && self->is_inference && !THP_inference_mode) {
    PyErr_SetString(PyExc_RuntimeError, "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.");
    return -1;
  }
  if (rg && !THDtype_isFloating(self->t->dtype) && !THDtype_isComplex(self->t->dtype)) {
    PyErr_SetString(PyExc_RuntimeError, "only Tensors of floating point and complex dtype can require gradients");
    return -1;
  }
  self->requires_grad = rg;
  return 0;
}
static PyObject *get_grad(THPTensor *self, void *c) {
  TF_GETTER("grad")
  /* torch's Tensor::grad() warns each time (an old loop printing an intermediate's .grad); retain_grad()
   * lives in cthtorch.Tensor (a hook), so its retains_grad property says whether one is set */
  int retains = 0;
  if (!self->grad && self->grad_fn) {
    PyObject *r = PyObject_GetAttrString((PyObject *)self, "retains_grad");
    if (!r) return NULL;
    retains = PyObject_IsTrue(r);
    Py_DECREF(r);
    if (retains < 0) return NULL;
  }
  if (!self->grad && self->grad_fn && !retains &&
      THP_warn(PyExc_UserWarning, "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its "
               ".grad attribute won't be populated during autograd.backward(). If you indeed want the .grad field to "
               "be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you access the "
               "non-leaf Tensor by mistake, make sure you access the leaf Tensor instead. See "
               "github.com/pytorch/pytorch/pull/30531 for more information.") < 0)
    return NULL;
  if (!self->grad) Py_RETURN_NONE;
  Py_INCREF(self->grad);
  return self->grad;
}
/* torch's texts for a .grad of another dtype or size: the gradient's dtype
 * by its C++ type name, the tensor's by its ScalarType name. */
static int grad_dtype_error(THDtype got, THDtype own) {
  static const char *cpp[TH_NDTYPES] = {
    [TH_Bool] = "bool", [TH_UInt8] = "unsigned char", [TH_Int8] = "signed char", [TH_Int16] = "short int",
    [TH_Int32] = "int", [TH_Int64] = "long int", [TH_Half] = "c10::Half", [TH_BFloat16] = "c10::BFloat16",
    [TH_Float] = "float", [TH_Double] = "double", [TH_ComplexFloat] = "c10::complex<float>",
    [TH_ComplexDouble] = "c10::complex<double>"};
  PyErr_Format(PyExc_RuntimeError, "attempting to assign a gradient with dtype '%s' to a tensor with grad_dtype "
               "'%s'. The gradient must match the tensor's grad_dtype (defaults to the tensor's dtype). You can set "
               "the tensor's grad_dtype attribute with a specific dtype, or None to allow any dtype. Set grad_dtype "
               "with caution. Diverging the dtypes of a tensor and its gradient may break downstream systems that "
               "assume they match.", cpp[got], THDtype_info[own].legacy);
  return -1;
}
static int grad_size_error(int ndim, const int64_t *sizes, const THTensor *own) {
  char a[256], b[256];
  PyErr_Format(PyExc_RuntimeError, "attempting to assign a gradient of size '%s' to a tensor of size '%s'. Please "
               "ensure that the gradient and the tensor are the same size", THTensor_sizeStr(ndim, sizes, a, sizeof a),
               THTensor_sizeStr(own->ndim, own->sizes, b, sizeof b));
  return -1;
}

/* A sparse COO .grad (nn.Embedding(sparse=True)): the dense checks, read
 * from the Python sparse class. */
static int set_sparse_grad(THPTensor *self, PyObject *v) {
  PyObject *dt = PyObject_GetAttrString(v, "dtype"), *shape = dt ? PyObject_GetAttrString(v, "shape") : NULL;
  int rc = -1;
  if (!shape) goto done;
  THDtype got = TH_NDTYPES;
  for (int t = 0; t < TH_NDTYPES && got == TH_NDTYPES; t++) {
    PyObject *o = THP_dtype_to_py((THDtype)t);
    if (!o) goto done;
    if (o == dt) got = (THDtype)t;
    Py_DECREF(o);
  }
  int64_t sizes[TH_MAX_DIMS];
  int ndim = PyTuple_Check(shape) && PyTuple_GET_SIZE(shape) <= TH_MAX_DIMS ? (int)PyTuple_GET_SIZE(shape) : -1;
  for (int d = 0; d < ndim; d++) sizes[d] = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, d));
  if (ndim < 0 || got == TH_NDTYPES) {
    PyErr_SetString(PyExc_TypeError, "assigned grad expected to be a Tensor or None");
    goto done;
  }
  if (PyErr_Occurred()) goto done;
  if (got != self->t->dtype) { grad_dtype_error(got, self->t->dtype); goto done; }
  if (ndim != self->t->ndim || memcmp(sizes, self->t->sizes, ndim * sizeof(int64_t))) {
    grad_size_error(ndim, sizes, self->t);
    goto done;
  }
  Py_INCREF(v);
  Py_XSETREF(self->grad, v);
  rc = 0;
done:
  Py_XDECREF(dt); Py_XDECREF(shape);
  return rc;
}
static int set_grad(THPTensor *self, PyObject *v, void *c) {
  if (!v || v == Py_None) { Py_CLEAR(self->grad); return 0; }
  if (ap_is_sparse(v)) return set_sparse_grad(self, v);
  if (!THPTensor_Check(v)) {
    PyErr_Format(PyExc_TypeError, "assigned grad expected to be a Tensor or None but got grad of type %s",
                 Py_TYPE(v)->tp_name);
    return -1;
  }
  THTensor *g = ((THPTensor *)v)->t;
  if (g->dtype != self->t->dtype) return grad_dtype_error(g->dtype, self->t->dtype);
  if (g->ndim != self->t->ndim || memcmp(g->sizes, self->t->sizes, g->ndim * sizeof(int64_t)))
    return grad_size_error(g->ndim, g->sizes, self->t);
  Py_INCREF(v);
  Py_XSETREF(self->grad, v);
  return 0;
}
static PyObject *get_grad_fn(THPTensor *self, void *c) {
  TF_GETTER("grad_fn")
  PyObject *fn = THPTensor_gradFn(self);
  if (!fn) { if (PyErr_Occurred()) return NULL; Py_RETURN_NONE; }
  return Py_NewRef(fn);
}
static PyObject *get_is_leaf(THPTensor *self, void *c) {
  TF_GETTER("is_leaf")
  return PyBool_FromLong(self->grad_fn == NULL);
}
static PyObject *get_output_nr(THPTensor *self, void *c) { return PyLong_FromLong(self->output_nr); }
static PyObject *get_retains_grad(THPTensor *self, void *c) { return PyBool_FromLong(self->retains_grad); }
static PyObject *get_base(THPTensor *self, void *c) {
  if (!self->base) Py_RETURN_NONE;
  Py_INCREF(self->base);
  return self->base;
}
static PyObject *get_data(THPTensor *self, void *c) {
  /* .data: same storage, no history, its own version counter; a subclass's goes through its
   * __torch_function__ (the default one makes it that subclass, as torch's) */
  TF_GETTER("data")
  THTensor *t = at_alias(self->t);
  return THPTensor_wrapType(Py_TYPE(self) == &THPTensorType || !THPTensorClass ? Py_TYPE(self) : (PyTypeObject *)THPTensorClass, t);
}
static int set_data(THPTensor *self, PyObject *v, void *c) {
  if (!v || !THPTensor_Check(v)) { PyErr_SetString(PyExc_TypeError, "Variable data has to be a tensor"); return -1; }
  THTensor_setTo(self->t, ((THPTensor *)v)->t);
  return 0;
}
static PyObject *get_hooks(THPTensor *self, void *c) {
  if (!self->hooks) Py_RETURN_NONE;
  Py_INCREF(self->hooks);
  return self->hooks;
}
static int set_hooks(THPTensor *self, PyObject *v, void *c) {
  Py_XINCREF(v == Py_None ? NULL : v);
  Py_XSETREF(self->hooks, v == Py_None ? NULL : v);
  return 0;
}
static PyObject *get_cdata(THPTensor *self, void *c) { return PyLong_FromVoidPtr(self->t); }

static PyGetSetDef tensor_getset[] = {
  {"shape", (getter)get_shape, NULL, "The size of the tensor, as a torch.Size.", NULL},
  {"dtype", (getter)get_dtype, NULL, NULL, NULL},
  {"device", (getter)get_device, NULL, NULL, NULL},
  {"ndim", (getter)get_ndim, NULL, NULL, NULL},
  {"layout", (getter)get_layout, NULL, NULL, NULL},
  {"is_cuda", (getter)get_is_cuda, NULL, NULL, NULL},
  {"is_cpu", (getter)get_true, NULL, NULL, NULL},
  {"is_sparse", (getter)get_false, NULL, NULL, NULL},
  {"is_quantized", (getter)get_false, NULL, NULL, NULL},
  {"is_meta", (getter)get_is_meta, NULL, NULL, NULL},
  {"is_mkldnn", (getter)get_false, NULL, NULL, NULL},
  {"is_nested", (getter)get_false, NULL, NULL, NULL},
  {"_version", (getter)get_version, NULL, NULL, NULL},
  {"itemsize", (getter)get_itemsize, NULL, NULL, NULL},
  {"nbytes", (getter)get_nbytes, NULL, NULL, NULL},
  {"requires_grad", (getter)get_requires_grad, (setter)set_requires_grad, NULL, NULL},
  {"grad", (getter)get_grad, (setter)set_grad, NULL, NULL},
  {"grad_fn", (getter)get_grad_fn, NULL, NULL, NULL},
  {"is_leaf", (getter)get_is_leaf, NULL, NULL, NULL},
  {"output_nr", (getter)get_output_nr, NULL, NULL, NULL},
  {"retains_grad", (getter)get_retains_grad, NULL, NULL, NULL},
  {"_base", (getter)get_base, NULL, NULL, NULL},
  {"data", (getter)get_data, (setter)set_data, NULL, NULL},
  {"_backward_hooks", (getter)get_hooks, (setter)set_hooks, NULL, NULL},
  {"_cdata", (getter)get_cdata, NULL, NULL, NULL},
  {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
  {NULL}
};

/* ---- number conversions: __bool__, __float__, __int__, __index__ ---- */
static int require_one(THPTensor *self, const char *what) {
  if (THTensor_numel(self->t) != 1) {
    if (!strcmp(what, "bool"))
      PyErr_SetString(PyExc_RuntimeError, "Boolean value of Tensor with more than one value is ambiguous");
    else
      PyErr_SetString(PyExc_RuntimeError, "a Tensor with 0 elements cannot be converted to Scalar");
    if (THTensor_numel(self->t) > 1 && strcmp(what, "bool"))
      PyErr_SetString(PyExc_RuntimeError, "only one element tensors can be converted to Python scalars");
    return -1;
  }
  return THP_refuse_meta_value(self->t);
}
/* a one-element complex tensor's parts (false when the tensor is not complex) */
static bool complex_parts(THPTensor *self, double *re, double *im) {
  THTensor *t = self->t;
  if (!THDtype_isComplex(t->dtype) || THTensor_device(t) >= 0 || THTensor_isMeta(t)) return false;   /* no CUDA complex; meta: no data */
  /* one element: it sits at the data pointer whatever the strides */
  if (t->dtype == TH_ComplexFloat) { const float *v = (const float *)THTensor_data(t); *re = v[0]; *im = v[1]; }
  else { const double *v = (const double *)THTensor_data(t); *re = v[0]; *im = v[1]; }
  return true;
}
/* float()/int() of a complex tensor: its real part when the imaginary part is 0, else torch's error */
static int complex_real(THPTensor *self, const char *type, double *re, bool *is) {
  double im;
  *is = complex_parts(self, re, &im);
  if (*is && im != 0) {
    PyErr_Format(PyExc_RuntimeError, "value cannot be converted to type %s without overflow", type);
    return -1;
  }
  return 0;
}
static int tensor_bool(THPTensor *self) {
  if (require_one(self, "bool") < 0) return -1;
  double re, im;
  if (complex_parts(self, &re, &im)) return re != 0 || im != 0;
  return THDtype_isFloating(self->t->dtype) ? at_item_double(self->t) != 0 : at_item_int(self->t) != 0;
}
static PyObject *tensor_float(THPTensor *self) {
  if (require_one(self, "float") < 0) return NULL;
  /* torch warns once per process (float(loss) in a training loop would otherwise repeat it), and not
   * under no_grad (LBFGS's float(closure()) runs there) */
  static bool warned_grad_scalar = false;
  if (!warned_grad_scalar && THP_grad_enabled() && THPTensor_requiresGrad((PyObject *)self)) {
    warned_grad_scalar = true;
    if (THP_warn(PyExc_UserWarning, "Converting a tensor with requires_grad=True to a scalar may lead to "
                     "unexpected behavior.\nConsider using tensor.detach() first.") < 0) return NULL;
  }
  double re; bool is;
  if (complex_real(self, "double", &re, &is) < 0) return NULL;
  return PyFloat_FromDouble(is ? re : at_item_double(self->t));
}
static PyObject *tensor_int(THPTensor *self) {
  if (require_one(self, "int") < 0) return NULL;
  double re; bool is;
  if (complex_real(self, "int64_t", &re, &is) < 0) return NULL;
  if (is || THDtype_isFloating(self->t->dtype)) {
    double d = is ? re : at_item_double(self->t);
    PyObject *f = PyFloat_FromDouble(d);
    if (!f) return NULL;
    PyObject *r = PyNumber_Long(f);
    Py_DECREF(f);
    return r;
  }
  return PyLong_FromLongLong(at_item_int(self->t));
}
static PyObject *tensor_index(THPTensor *self) {
  if (THTensor_numel(self->t) != 1 || THDtype_isFloating(self->t->dtype) || self->t->dtype == TH_Bool) {
    PyErr_SetString(PyExc_TypeError, "only integer tensors of a single element can be converted to an index");
    return NULL;
  }
  if (THP_refuse_meta_value(self->t) < 0) return NULL;
  return PyLong_FromLongLong(at_item_int(self->t));
}

static Py_ssize_t tensor_len(THPTensor *self) {
  Py_ssize_t n;
  if (THP_tf_armed && THP_tf_len((PyObject *)self, &n)) return n;
  if (self->t->ndim == 0) {
    PyErr_SetString(PyExc_TypeError, "len() of a 0-d tensor");
    return -1;
  }
  return (Py_ssize_t)self->t->sizes[0];
}

PyNumberMethods THP_tensor_as_number;   /* filled by THP_initTensor from the generated slots */
extern void THP_fill_number_slots(PyNumberMethods *nb);
extern PyObject *THPTensor_getitem(PyObject *self, PyObject *index);
extern int THPTensor_setitem(PyObject *self, PyObject *index, PyObject *value);
extern PyBufferProcs THP_tensor_as_buffer;
extern PyObject *THP_tensor_richcompare(PyObject *a, PyObject *b, int op);
static PyMappingMethods tensor_as_mapping = {
  .mp_length = (lenfunc)tensor_len,
  .mp_subscript = THPTensor_getitem,
  .mp_ass_subscript = THPTensor_setitem,
};
static PySequenceMethods tensor_as_sequence = { .sq_length = (lenfunc)tensor_len };

PyTypeObject THPTensorType = {
  PyVarObject_HEAD_INIT(NULL, 0)
  .tp_name = "torch._C._TensorBase",
  .tp_basicsize = sizeof(THPTensor),
  .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
  .tp_dealloc = (destructor)tensor_dealloc,
  .tp_traverse = (traverseproc)tensor_traverse,
  .tp_clear = (inquiry)tensor_clear,
  .tp_new = tensor_new,
  .tp_getset = tensor_getset,
  .tp_as_number = &THP_tensor_as_number,
  .tp_as_mapping = &tensor_as_mapping,
  .tp_as_sequence = &tensor_as_sequence,
  .tp_as_buffer = &THP_tensor_as_buffer,
  .tp_hash = (hashfunc)_Py_HashPointer,
  .tp_richcompare = THP_tensor_richcompare,
  .tp_weaklistoffset = offsetof(THPTensor, weakreflist),
  .tp_dictoffset = offsetof(THPTensor, dict),
};

int THP_initTensor(PyObject *m) {
  THP_fill_number_slots(&THP_tensor_as_number);
  THP_tensor_as_number.nb_bool = (inquiry)tensor_bool;
  THP_tensor_as_number.nb_float = (unaryfunc)tensor_float;
  THP_tensor_as_number.nb_int = (unaryfunc)tensor_int;
  THP_tensor_as_number.nb_index = (unaryfunc)tensor_index;
  /* methods: generated from the declarations, then the hand-written ones */
  int ng = 0, nm = 0;
  while (THP_generated_tensor_methods[ng].ml_name) ng++;
  while (THP_manual_tensor_methods[nm].ml_name) nm++;
  PyMethodDef *all = PyMem_Calloc(ng + nm + 1, sizeof(PyMethodDef));
  if (!all) return -1;
  memcpy(all, THP_manual_tensor_methods, nm * sizeof(PyMethodDef));
  memcpy(all + nm, THP_generated_tensor_methods, ng * sizeof(PyMethodDef));
  THPTensorType.tp_methods = all;
  if (PyType_Ready(&THPTensorType) < 0) return -1;
  return PyModule_AddObjectRef(m, "_TensorBase", (PyObject *)&THPTensorType);
}

/* torch.utils.swap_tensors: two Python tensors exchange everything they are (data, autograd state, __dict__,
 * __class__) while each object keeps its identity, so whoever holds a reference (an optimizer, a module)
 * sees the other's contents. A weak reference or a live AccumulateGrad node (which points back at its
 * tensor object) would end up naming the wrong contents, so those are refused. */
PyObject *THP_swap_tensors(PyObject *m, PyObject *args) {
  (void)m;
  PyObject *o1, *o2;
  if (!PyArg_ParseTuple(args, "OO", &o1, &o2)) return NULL;
  if (!THPTensor_Check(o1) || !THPTensor_Check(o2)) {
    PyErr_SetString(PyExc_TypeError, "swap_tensors: expected two Tensors");
    return NULL;
  }
  THPTensor *a = (THPTensor *)o1, *b = (THPTensor *)o2;
  const char *names[2] = {"t1", "t2"};
  THPTensor *ts[2] = {a, b};
  for (int i = 0; i < 2; i++) {
    if (ts[i]->weakreflist) {
      PyErr_Format(PyExc_RuntimeError, "Cannot swap %s because it has weakref associated with it", names[i]);
      return NULL;
    }
    if (ts[i]->grad_acc) {
      PyErr_Format(PyExc_RuntimeError, "cthtorch.utils.swap_tensors: cannot swap %s while its AccumulateGrad "
                   "node is alive (it has been used in a graph that still exists)", names[i]);
      return NULL;
    }
  }
  PyTypeObject *ta = Py_TYPE(o1), *tb = Py_TYPE(o2);
  if (ta != tb && (ta->tp_basicsize != tb->tp_basicsize || ta->tp_dictoffset != tb->tp_dictoffset)) {
    PyErr_SetString(PyExc_RuntimeError, "cthtorch.utils.swap_tensors: the two tensor classes have different "
                    "layouts (__slots__)");
    return NULL;
  }
  if (ta != tb && (!(ta->tp_flags & Py_TPFLAGS_HEAPTYPE) || !(tb->tp_flags & Py_TPFLAGS_HEAPTYPE))) {
    PyErr_SetString(PyExc_RuntimeError, "cthtorch.utils.swap_tensors: cannot swap the class of a tensor whose "
                    "class is not a Python class");
    return NULL;
  }
  /* everything after the object header, a subclass's __slots__ included (both have ta's basic size);
   * neither has weak references (checked above), so the weak reference lists swap as NULLs */
  size_t n = (size_t)ta->tp_basicsize - sizeof(PyObject);
  char *tmp = PyMem_Malloc(n);
  if (!tmp) return PyErr_NoMemory();
  memcpy(tmp, (char *)a + sizeof(PyObject), n);
  memcpy((char *)a + sizeof(PyObject), (char *)b + sizeof(PyObject), n);
  memcpy((char *)b + sizeof(PyObject), tmp, n);
  PyMem_Free(tmp);
  Py_SET_TYPE(o1, tb);
  Py_SET_TYPE(o2, ta);
  Py_RETURN_NONE;
}

/* Tensor.as_subclass's last step: `fresh` (a new alias of the source, which only the caller holds) moves its
 * data and autograd state into a new instance of cls, so the result stays on the graph as torch's does. A
 * new object rather than assigning __class__, which CPython refuses when cls adds __slots__ (another
 * layout). Returns the new reference; `fresh` is left empty (its dealloc frees nothing of what moved). */
PyObject *THP_tensor_reclass(PyObject *m, PyObject *args) {
  (void)m;
  PyObject *fresh, *cls;
  if (!PyArg_ParseTuple(args, "O!O", &THPTensorType, &fresh, &cls)) return NULL;
  if (!PyType_Check(cls)) {
    PyErr_Format(PyExc_TypeError, "cls must be a type (got %s)", Py_TYPE(cls)->tp_name);
    return NULL;
  }
  if (!PyType_IsSubtype((PyTypeObject *)cls, &THPTensorType)) {
    PyErr_SetString(PyExc_TypeError, "Creating a Tensor subclass from a class that does not inherit from Tensor "
                    "is not possible. Make sure your class inherits from Tensor.");
    return NULL;
  }
  PyTypeObject *tp = (PyTypeObject *)cls;
  THPTensor *src = (THPTensor *)fresh;
  THPTensor *dst = (THPTensor *)tp->tp_alloc(tp, 0);
  if (!dst) return NULL;
  /* field by field: __dict__ and weak references belong to the object, not to the tensor */
  dst->t = src->t;                 src->t = NULL;
  dst->version = src->version;     src->version = NULL;
  dst->grad = src->grad;           src->grad = NULL;
  dst->grad_fn = src->grad_fn;     src->grad_fn = NULL;
  /* grad_acc stays: an AccumulateGrad node names its tensor object (a fresh alias has none yet) */
  dst->hooks = src->hooks;         src->hooks = NULL;
  dst->base = src->base;           src->base = NULL;
  dst->view_version = src->view_version;
  dst->output_nr = src->output_nr;
  dst->requires_grad = src->requires_grad;
  dst->retains_grad = src->retains_grad;
  dst->view_multi = src->view_multi;
  dst->view_mode = src->view_mode;
  dst->is_inference = src->is_inference;
  return (PyObject *)dst;
}
