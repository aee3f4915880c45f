/* Factory functions (torch.zeros, torch.tensor, ...): parse, make, then
 * apply requires_grad. They take dtype/device/layout/requires_grad like
 * PyTorch's; device must be CPU here. */
#include "THP.h"
#include "ArgParser.h"
#include "Bindings.h"

PyObject *THP_tensor_from_data(PyObject *data, THDtype dtype, bool dtype_given, bool copy_tensor);
PyObject *THP_as_tensor(PyObject *data, THDtype dtype, bool dtype_given);
PyObject *THP_from_numpy(PyObject *m, PyObject *arr);
PyObject *THP_frombuffer(PyObject *m, PyObject *args);

#define FACTORY_KW "ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=False, bool requires_grad=False"

/* Sets requires_grad on a fresh leaf (with PyTorch's dtype check). */
/* dev: where the result goes (THP_factory_device). Factories build on the host
 * and move, as the generated ones do (THP_move_result). */
static PyObject *finish(PyObject *t, bool requires_grad, int dev) {
  if (t && dev != -2) t = THP_move_result(t, dev);
  if (!t || !requires_grad) return t;
  THPTensor *x = (THPTensor *)t;
  if (!THDtype_isFloating(x->t->dtype) && !THDtype_isComplex(x->t->dtype)) {
    Py_DECREF(t);
    PyErr_SetString(PyExc_RuntimeError, "Only Tensors of floating point and complex dtype can require gradients");
    return NULL;
  }
  x->requires_grad = true;
  return t;
}

/* index of the first factory keyword (dtype) in a signature with k leading params */
#define FK(k) (k)

/* a fresh tensor laid out in the memory_format argument mf (absent or None: as it is; preserve:
 * for *_like only, the input's layout it already has): its strides are set over the same storage,
 * which holds its numel whatever the order; an empty(...)'s preserve is torch's error */
int THP_lay_out(THTensor *t, PyObject *mf, bool like) {
  if (!mf || mf == Py_None) return 0;
  ATMemoryFormat f = THP_memory_format(mf, AT_PRESERVE_FORMAT);
  if (f == AT_PRESERVE_FORMAT) {
    if (like) return 0;
    PyErr_SetString(PyExc_RuntimeError, "unsupported memory format Preserve");
    return -1;
  }
  if (f == AT_CONTIGUOUS_FORMAT) {
    int64_t sizes[TH_MAX_DIMS];
    memcpy(sizes, t->sizes, t->ndim * sizeof(int64_t));
    if (THTensor_resize(t, t->ndim, sizes) < 0) { THP_raise(); return -1; }
    return 0;
  }
  if (at_restride_format(t, f) < 0) { THP_raise(); return -1; }
  return 0;
}

static PyObject *make_filled(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, APParser *p,
                             int mode /* 0 empty, 1 zeros, 2 ones */) {
  APResult r;
  int idx = ap_parse(p, NULL, args, nargs, kwnames, &r);
  if (idx < 0) return NULL;
  PyObject *res = NULL;
  /* (int[] size, *, Tensor? out, dtype, layout, device, pin_memory, requires_grad, memory_format) */
  int dev;
  if (THP_factory_device(ap_object(&r, 4), &dev) < 0) goto done;
  const ATIntList *size = ap_intlist(&r, 0);
  if (!size) { PyErr_SetString(PyExc_TypeError, "size must be a tuple of ints"); goto done; }
  if (mode == 1)   /* zeros checks its sizes itself, with its own message */
    for (int i = 0; i < size->n; i++)
      if (size->v[i] < 0) { PyErr_SetString(PyExc_RuntimeError, "zeros: Dimension size must be non-negative."); goto done; }
  THDtype dt = ap_dtype(&r, 2, at_default_dtype());
  THPTensor *out = ap_tensor(&r, 1);
  if (out) {
    if (THTensor_resize(out->t, size->n, size->v) < 0) { THP_raise(); goto done; }
    if (mode && at_fill_(out->t, at_scalar_int(mode == 2)) < 0) { THP_raise(); goto done; }
    res = Py_NewRef((PyObject *)out);
    goto done;
  }
  THTensor *t;
  bool sizes_ok = true;   /* bad sizes: at_empty below raises its message */
  for (int i = 0; i < size->n; i++) sizes_ok &= size->v[i] >= 0;
  if ((dev >= 0 || dev == TH_DEVICE_META) && sizes_ok) {   /* on a GPU: allocated there and filled by its kernel (empty: not filled); meta: no fill */
    t = at_new_on(dev, dt, size->n, size->v, NULL);
    if (t && mode && at_fill_(t, at_scalar_int(mode == 2)) < 0) { THTensor_free(t); t = NULL; }
    if (!t) { THP_raise(); goto done; }
  } else {
    t = mode ? at_full(size, at_scalar_int(mode == 2), dt) : at_empty(size, dt);
  }
  if (t && THP_lay_out(t, ap_object(&r, 7), false) < 0) { THTensor_free(t); goto done; }
  res = finish(THPTensor_wrap(t), ap_bool(&r, 6), dev);
done:
  ap_release(&r);
  return res;
}

#define SIZED_SIG(name) #name "(int[] size, *, Tensor? out=None, " FACTORY_KW ", MemoryFormat? memory_format=None)"

static PyObject *f_empty(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k) {
  static const char *s[] = { SIZED_SIG(empty), NULL };
  static APParser p = { s };
  return make_filled(a, n, k, &p, 0);
}
static PyObject *f_zeros(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k) {
  static const char *s[] = { SIZED_SIG(zeros), NULL };
  static APParser p = { s };
  return make_filled(a, n, k, &p, 1);
}
static PyObject *f_ones(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k) {
  static const char *s[] = { SIZED_SIG(ones), NULL };
  static APParser p = { s };
  return make_filled(a, n, k, &p, 2);
}

/* torch's Scalar holds complex numbers; ATScalar does not, so a complex fill value (a Python complex, a 0-d
 * complex tensor) takes a hidden Tensor overload of full/full_like, whose parser wraps a number as a 0-d
 * tensor: its value is read here. Any other tensor there is the Scalar parameter's TypeError, as torch's. */
static int complex_fill_value(APResult *r, int i, const char *fn, double *re, double *im) {
  THTensor *v = ap_tensor(r, i)->t;
  if (v->ndim != 0 || !THDtype_isComplex(v->dtype)) {
    PyErr_Format(PyExc_TypeError, "%s(): argument 'fill_value' (position 2) must be Number, not Tensor", fn);
    return -1;
  }
  return at_item_complex(v, re, im) < 0 ? (THP_raise(), -1) : 0;
}

static int fill_value_into(THTensor *t, bool cplx, ATScalar v, double re, double im) {
  return cplx ? at_fill_complex_(t, re, im) : at_fill_(t, v);
}

static PyObject *f_full(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k) {
  static const char *s[] = { "full(int[] size, Scalar fill_value, *, Tensor? out=None, " FACTORY_KW ")",
                             "full(int[] size, Tensor fill_value, *, Tensor? out=None, " FACTORY_KW ")|hidden", NULL };
  static APParser p = { s };
  APResult r;
  int idx = ap_parse(&p, NULL, a, n, k, &r);
  if (idx < 0) return NULL;
  PyObject *res = NULL;
  int dev;
  double re = 0, im = 0;
  bool cplx = idx == 1;
  if (cplx && complex_fill_value(&r, 1, "full", &re, &im) < 0) goto done;
  if (THP_factory_device(ap_object(&r, 5), &dev) < 0) goto done;
  ATScalar v = cplx ? at_scalar_float(re) : ap_scalar(&r, 1);
  /* the dtype a number infers: complex -> the default complex dtype */
  THDtype dt = ap_dtype(&r, 3, cplx ? THDtype_toComplex(at_default_dtype()) :
                               v.kind == AT_SCALAR_FLOAT ? at_default_dtype() : (v.kind == AT_SCALAR_INT ? TH_Int64 : TH_Bool));
  const ATIntList *size = ap_intlist(&r, 0);
  THPTensor *out = ap_tensor(&r, 2);
  if (out) {   /* filled in place, in its own dtype unless dtype= names another (torch's check) */
    if (!ap_isnone(&r, 3) && dt != out->t->dtype) {
      PyErr_Format(PyExc_RuntimeError, "dtype %s does not match dtype of out parameter (%s)",
                   THDtype_info[dt].legacy, THDtype_info[out->t->dtype].legacy);
      goto done;
    }
    if (at_resize_out(out->t, size->n, size->v) < 0 || fill_value_into(out->t, cplx, v, re, im) < 0) {
      THP_raise();
      goto done;
    }
    res = Py_NewRef((PyObject *)out);
    goto done;
  }
  THTensor *t;
  if (dev == TH_DEVICE_META) {
    t = at_new_on(dev, dt, size->n, size->v, NULL);
  } else if (cplx) {
    t = at_empty(size, dt);
    if (t && at_fill_complex_(t, re, im) < 0) { THTensor_free(t); t = NULL; }
  } else {
    t = at_full(size, v, dt);
  }
  res = finish(THPTensor_wrap(t), ap_bool(&r, 7), dev);
done:
  ap_release(&r);
  return res;
}

static PyObject *f_empty_strided(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k) {
  static const char *s[] = { "empty_strided(int[] size, int[] stride, *, " FACTORY_KW ")", NULL };
  static APParser p = { s };
  APResult r;
  if (ap_parse(&p, NULL, a, n, k, &r) < 0) return NULL;
  PyObject *res = NULL;
  int dev;
  if (THP_factory_device(ap_object(&r, 4), &dev) < 0) goto done;
  const ATIntList *size = ap_intlist(&r, 0), *stride = ap_intlist(&r, 1);
  THDtype dt = ap_dtype(&r, 2, at_default_dtype());
  THTensor *t;
  if (dev == TH_DEVICE_META && size->n == stride->n)   /* the layout alone: no memory */
    t = at_new_on(dev, dt, size->n, size->v, stride->v);
  else
    t = at_empty_strided(size, stride, dt);
  res = finish(THPTensor_wrap(t), ap_bool(&r, 6), dev);
done:
  ap_release(&r);
  return res;
}

static PyObject *f_arange(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k) {
  static const char *s[] = {
    "arange(Scalar end, *, Tensor? out=None, " FACTORY_KW ")",
    "arange(Scalar start, Scalar end, Scalar step=1, *, Tensor? out=None, " FACTORY_KW ")",
    NULL };
  static APParser p = { s };
  APResult r;
  int idx = ap_parse(&p, NULL, a, n, k, &r);
  if (idx < 0) return NULL;
  PyObject *res = NULL;
  int base = idx == 0 ? 1 : 3;   /* index of out= */
  int dev;
  if (THP_factory_device(ap_object(&r, base + 3), &dev) < 0) goto done;
  ATScalar start = idx == 0 ? at_scalar_int(0) : ap_scalar(&r, 0);
  ATScalar end = idx == 0 ? ap_scalar(&r, 0) : ap_scalar(&r, 1);
  ATScalar step = idx == 0 ? at_scalar_int(1) : ap_scalar(&r, 2);
  bool given = !ap_isnone(&r, base + 1);
  THTensor *t = at_arange(start, end, step, ap_dtype(&r, base + 1, TH_Undefined), given);
  THPTensor *out = ap_tensor(&r, base);
  if (out && t) {
    int rc = THTensor_resize(out->t, t->ndim, t->sizes) < 0 ? -1 : at_copy_(out->t, t);
    THTensor_free(t);
    res = rc < 0 ? THP_raise() : Py_NewRef((PyObject *)out);
    goto done;
  }
  res = finish(THPTensor_wrap(t), ap_bool(&r, base + 5), dev);
done:
  ap_release(&r);
  return res;
}

static PyObject *f_range(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k) {
  static const char *s[] = { "range(Scalar start, Scalar end, Scalar step=1, *, Tensor? out=None, " FACTORY_KW ")", NULL };
  static APParser p = { s };
  APResult r;
  if (ap_parse(&p, NULL, a, n, k, &r) < 0) return NULL;
  PyObject *res = NULL;
  /* torch warns on every call (an error filter turns it into the exception) */
  if (THP_warn(PyExc_UserWarning, "torch.range is deprecated and will be removed in a future release because its "
               "behavior is inconsistent with Python's range builtin. Instead, use torch.arange, which produces "
               "values in [start, end).") < 0) {
    ap_release(&r);
    return NULL;
  }
  ATScalar start = ap_scalar(&r, 0), end = ap_scalar(&r, 1), step = ap_scalar(&r, 2);
  double st = step.kind == AT_SCALAR_FLOAT ? step.d : (double)step.i;
  ATScalar e2 = at_scalar_float((end.kind == AT_SCALAR_FLOAT ? end.d : (double)end.i) + st * 0.5);
  res = finish(THPTensor_wrap(at_arange(start, e2, step, ap_dtype(&r, 4, at_default_dtype()), true)), ap_bool(&r, 8), -2);
  ap_release(&r);
  return res;
}

static PyObject *f_linspace(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k) {
  static const char *s[] = { "linspace(Scalar start, Scalar end, int steps, *, Tensor? out=None, " FACTORY_KW ")", NULL };
  static APParser p = { s };
  APResult r;
  if (ap_parse(&p, NULL, a, n, k, &r) < 0) return NULL;
  PyObject *res = NULL;
  int dev;
  if (THP_factory_device(ap_object(&r, 6), &dev) < 0) goto done;
  res = finish(THPTensor_wrap(at_linspace(ap_scalar(&r, 0), ap_scalar(&r, 1), ap_int(&r, 2),
                                          ap_dtype(&r, 4, at_default_dtype()))), ap_bool(&r, 8), dev);
done:
  ap_release(&r);
  return res;
}

static PyObject *f_logspace(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k) {
  static const char *s[] = { "logspace(Scalar start, Scalar end, int steps, float base=10.0, *, Tensor? out=None, " FACTORY_KW ")", NULL };
  static APParser p = { s };
  APResult r;
  if (ap_parse(&p, NULL, a, n, k, &r) < 0) return NULL;
  PyObject *res = NULL;
  int dev;
  if (THP_factory_device(ap_object(&r, 7), &dev) < 0) goto done;
  res = finish(THPTensor_wrap(at_logspace(ap_scalar(&r, 0), ap_scalar(&r, 1), ap_int(&r, 2), ap_float(&r, 3),
                                          ap_dtype(&r, 5, at_default_dtype()))), ap_bool(&r, 9), dev);
done:
  ap_release(&r);
  return res;
}

static PyObject *f_eye(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k) {
  static const char *s[] = { "eye(int n, int? m=None, *, Tensor? out=None, " FACTORY_KW ")", NULL };
  static APParser p = { s };
  APResult r;
  if (ap_parse(&p, NULL, a, n, k, &r) < 0) return NULL;
  PyObject *res = NULL;
  int dev;
  if (THP_factory_device(ap_object(&r, 5), &dev) < 0) goto done;
  ATOptInt mm = ap_optint(&r, 1);
  if (mm.has && mm.v < 0) {   /* at_eye reads a negative m as "m = n" */
    PyErr_Format(PyExc_RuntimeError, "m must be greater or equal to 0, got %lld", (long long)mm.v);
    goto done;
  }
  res = finish(THPTensor_wrap(at_eye(ap_int(&r, 0), mm.has ? mm.v : -1, ap_dtype(&r, 3, at_default_dtype()))),
               ap_bool(&r, 7), dev);
done:
  ap_release(&r);
  return res;
}

static PyObject *f_tensor(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k) {
  static const char *s[] = { "tensor(PyObject* data, *, " FACTORY_KW ")", NULL };
  static APParser p = { s };
  APResult r;
  if (ap_parse(&p, NULL, a, n, k, &r) < 0) return NULL;
  PyObject *res = NULL;
  int dev;
  if (THP_factory_device(ap_object(&r, 3), &dev) < 0) goto done;
  bool given = !ap_isnone(&r, 1);
  PyObject *data = ap_object(&r, 0);
  if (THPTensor_Check(data) &&
      THP_warn(PyExc_UserWarning, "To copy construct from a tensor, it is recommended to use "
                   "sourceTensor.detach().clone() or sourceTensor.detach().clone().requires_grad_(True), rather than "
                   "torch.tensor(sourceTensor).") < 0)
    goto done;
  res = THP_tensor_from_data(data, ap_dtype(&r, 1, TH_Undefined), given, true);
  res = finish(res, ap_bool(&r, 5), dev);
done:
  ap_release(&r);
  return res;
}

static PyObject *f_as_tensor(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k) {
  static const char *s[] = { "as_tensor(PyObject* data, ScalarType? dtype=None, Device? device=None)", NULL };
  static APParser p = { s };
  APResult r;
  if (ap_parse(&p, NULL, a, n, k, &r) < 0) return NULL;
  PyObject *res = NULL;
  int dev;
  if (THP_factory_device(ap_object(&r, 2), &dev) < 0) goto done;
  res = THP_as_tensor(ap_object(&r, 0), ap_dtype(&r, 1, TH_Undefined), !ap_isnone(&r, 1));
  if (res && dev != -2) res = THP_move_result(res, dev);
done:
  ap_release(&r);
  return res;
}

static PyObject *f_scalar_tensor(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k) {
  static const char *s[] = { "scalar_tensor(Scalar s, *, " FACTORY_KW ")", NULL };
  static APParser p = { s };
  APResult r;
  if (ap_parse(&p, NULL, a, n, k, &r) < 0) return NULL;
  PyObject *res = finish(THPTensor_wrap(at_scalar_tensor(ap_scalar(&r, 0), ap_dtype(&r, 1, at_default_dtype()))),
                         ap_bool(&r, 5), -2);
  ap_release(&r);
  return res;
}

/* *_like: (Tensor input, *, dtype, layout, device, pin_memory, requires_grad, memory_format) */
#define LIKE_KW "ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool requires_grad=False, MemoryFormat? memory_format=None"

THTensor *THP_full_like(const THTensor *self, ATScalar v, THDtype dtype) {
  if (THTensor_isMeta(self))   /* the layout alone (as empty_like's) */
    return at_empty_like_on(self, TH_DEVICE_META, dtype == TH_Undefined ? self->dtype : dtype);
  ATIntList l = { self->ndim };
  memcpy(l.v, self->sizes, self->ndim * sizeof(int64_t));
  return at_full(&l, v, dtype == TH_Undefined ? self->dtype : dtype);
}

static PyObject *like(PyObject *const *a, Py_ssize_t n, PyObject *k, APParser *p, int mode) {
  APResult r;
  if (ap_parse(p, NULL, a, n, k, &r) < 0) return r.sparse ? ap_sparse_call(p, NULL, a, n, k) : NULL;
  PyObject *res = NULL;
  int off = mode == 3 ? 1 : 0;
  int dev;
  if (THP_factory_device(ap_object(&r, 3 + off), &dev) < 0) goto done;
  THTensor *self = ap_tensor(&r, 0)->t;
  if (ap_isnone(&r, 3 + off)) dev = THTensor_device(self);   /* *_like: the input's device (not the default one) */
  THDtype dt = ap_dtype(&r, 1 + off, self->dtype);
  double re = 0, im = 0;
  bool cplx = mode == 3 && r.idx == 1;   /* full_like's hidden overload: a complex fill value */
  if (cplx && complex_fill_value(&r, 1, "full_like", &re, &im) < 0) goto done;
  THTensor *t;
  if (dev == TH_DEVICE_META || mode == 0) {   /* the layout alone (a meta result is never filled) */
    t = at_empty_like_on(self, dev == TH_DEVICE_META ? dev : -1, dt);
  } else {
    ATScalar v = mode == 3 && !cplx ? ap_scalar(&r, 1) : at_scalar_int(mode == 2);
    if (!THTensor_isContiguous(self) && THTensor_isNonOverlappingAndDense(self)) {   /* preserved, as torch's */
      t = at_empty_like_on(self, -1, dt);
    } else {
      ATIntList l = { self->ndim };
      memcpy(l.v, self->sizes, self->ndim * sizeof(int64_t));
      t = at_empty(&l, dt);
    }
    if (t && fill_value_into(t, cplx, v, re, im) < 0) { THTensor_free(t); t = NULL; }
  }
  if (t && THP_lay_out(t, ap_object(&r, 6 + off), true) < 0) { THTensor_free(t); goto done; }
  res = finish(THPTensor_wrap(t), ap_bool(&r, 5 + off), dev);
done:
  ap_release(&r);
  return res;
}
static PyObject *f_empty_like(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k) {
  static const char *s[] = { "empty_like(Tensor input, *, " LIKE_KW ")", NULL };
  static APParser p = { s };
  return like(a, n, k, &p, 0);
}
static PyObject *f_zeros_like(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k) {
  static const char *s[] = { "zeros_like(Tensor input, *, " LIKE_KW ")", NULL };
  static APParser p = { s };
  return like(a, n, k, &p, 1);
}
static PyObject *f_ones_like(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k) {
  static const char *s[] = { "ones_like(Tensor input, *, " LIKE_KW ")", NULL };
  static APParser p = { s };
  return like(a, n, k, &p, 2);
}
static PyObject *f_full_like(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k) {
  static const char *s[] = { "full_like(Tensor input, Scalar fill_value, *, " LIKE_KW ")",
                             "full_like(Tensor input, Tensor fill_value, *, " LIKE_KW ")|hidden", NULL };
  static APParser p = { s };
  return like(a, n, k, &p, 3);
}

/* torch.set_default_device('meta') / `with torch.device('meta')`: factories
 * given no device make meta tensors (the only default besides the host here) */
_Thread_local bool THP_default_device_meta = false;   /* per thread, as torch's default device */

int THP_factory_device(PyObject *arg, int *dev) {
  if (!arg || arg == Py_None) { *dev = THP_default_device_meta ? TH_DEVICE_META : -2; return 0; }
  return THPDevice_index(arg, dev);
}

#define FASTCALL(f) (PyCFunction)(void (*)(void))f, METH_FASTCALL | METH_KEYWORDS
PyMethodDef THP_factory_functions[] = {
  {"empty", FASTCALL(f_empty), NULL},
  {"zeros", FASTCALL(f_zeros), NULL},
  {"ones", FASTCALL(f_ones), NULL},
  {"full", FASTCALL(f_full), NULL},
  {"empty_strided", FASTCALL(f_empty_strided), NULL},
  {"arange", FASTCALL(f_arange), NULL},
  {"range", FASTCALL(f_range), NULL},
  {"linspace", FASTCALL(f_linspace), NULL},
  {"logspace", FASTCALL(f_logspace), NULL},
  {"eye", FASTCALL(f_eye), NULL},
  {"tensor", FASTCALL(f_tensor), NULL},
  {"as_tensor", FASTCALL(f_as_tensor), NULL},
  {"scalar_tensor", FASTCALL(f_scalar_tensor), NULL},
  {"empty_like", FASTCALL(f_empty_like), NULL},
  {"zeros_like", FASTCALL(f_zeros_like), NULL},
  {"ones_like", FASTCALL(f_ones_like), NULL},
  {"full_like", FASTCALL(f_full_like), NULL},
  {"from_numpy", (PyCFunction)THP_from_numpy, METH_O, NULL},
  {"_frombuffer", (PyCFunction)THP_frombuffer, METH_VARARGS, "frombuffer's C part (TensorNew.c)"},
  {NULL}
};
