/* Random factories: torch.rand/randn/randint/randperm and the *_like forms.
 * They parse like the other factories (Factories.c) and fill through the
 * samplers of src/ATen/ATRandom.c. */
#include "THP.h"
#include "ArgParser.h"
#include "Bindings.h"
#include "../ATen/ATRandom.h"

#define RKW "Generator? generator=None, Tensor? out=None, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=False, bool requires_grad=False"

static PyObject *finish(THTensor *t, bool requires_grad) {
  PyObject *r = THPTensor_wrap(t);
  if (r && requires_grad) {
    if (!THDtype_isFloating(((THPTensor *)r)->t->dtype) && !THDtype_isComplex(((THPTensor *)r)->t->dtype)) {
      Py_DECREF(r);
      PyErr_SetString(PyExc_RuntimeError, "Only Tensors of floating point and complex dtype can require gradients");
      return NULL;
    }
    ((THPTensor *)r)->requires_grad = true;
  }
  return r;
}

/* (int[] size, *, generator, out, dtype, layout, device, pin_memory, requires_grad) at offset 0 */
static PyObject *sized(PyObject *const *a, Py_ssize_t n, PyObject *k, APParser *p, int normal) {
  APResult r;
  if (ap_parse(p, NULL, a, n, k, &r) < 0) return NULL;
  PyObject *res = NULL;
  int dev;
  if (THP_factory_device(ap_object(&r, 5), &dev) < 0) goto done;
  if (dev == -2) dev = -1;   /* no device=: the host */
  THDtype dt = ap_dtype(&r, 3, at_default_dtype());
  THPTensor *out = ap_tensor(&r, 2);
  const ATIntList *size = ap_intlist(&r, 0);
  THTensor *t;
  if (out) {
    if (THTensor_resize(out->t, size->n, size->v) < 0) { THP_raise(); goto done; }
    t = THTensor_retain(out->t);
  } else if (!(t = dev >= 0 || dev == TH_DEVICE_META ? at_new_on(dev, dt, size->n, size->v, NULL) : at_empty(size, dt))) {
    /* a GPU draws on the device; a meta tensor takes no draw (and no memory) */
    THP_raise();
    goto done;
  }
  struct THGenerator *g = ap_generator(&r, 1);
  THTensor *f = normal ? at_normal_(t, 0, 1, g) : at_uniform_(t, 0, 1, g);
  THTensor_free(t);
  if (!f) { THP_raise(); goto done; }
  if (out) { THTensor_free(f); res = Py_NewRef((PyObject *)out); goto done; }
  res = THP_move_result(finish(f, ap_bool(&r, 7)), dev);
done:
  ap_release(&r);
  return res;
}

static PyObject *f_rand(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k) {
  static const char *s[] = { "rand(int[] size, *, " RKW ")", NULL };
  static APParser p = { s };
  return sized(a, n, k, &p, 0);
}
static PyObject *f_randn(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k) {
  static const char *s[] = { "randn(int[] size, *, " RKW ")", NULL };
  static APParser p = { s };
  return sized(a, n, k, &p, 1);
}

static PyObject *f_randint(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k) {
  static const char *s[] = {
    "randint(int high, int[] size, *, " RKW ")",
    "randint(int low, int high, int[] size, *, " RKW ")",
    NULL };
  static APParser p = { s };
  APResult r;
  int idx = ap_parse(&p, NULL, a, n, k, &r);
  if (idx < 0) return NULL;
  int o = idx;   /* offset of the size parameter minus 1 */
  PyObject *res = NULL;
  int dev;
  if (THP_factory_device(ap_object(&r, 6 + o), &dev) < 0) goto done;
  if (dev == -2) dev = -1;
  int64_t low = idx ? ap_int(&r, 0) : 0, high = ap_int(&r, idx);
  const ATIntList *size = ap_intlist(&r, 1 + o);
  THDtype dt = ap_dtype(&r, 4 + o, TH_Int64);
  THTensor *t = dev == TH_DEVICE_META ? at_new_on(dev, dt, size->n, size->v, NULL) : at_empty(size, dt);
  if (!t) { THP_raise(); goto done; }
  THTensor *f = at_random_(t, low, (ATOptInt){ true, high }, ap_generator(&r, 2 + o));
  THTensor_free(t);
  if (!f) { THP_raise(); goto done; }
  res = THP_move_result(finish(f, ap_bool(&r, 8 + o)), dev);
done:
  ap_release(&r);
  return res;
}

static PyObject *f_randperm(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k) {
  static const char *s[] = { "randperm(int n, *, " RKW ")", NULL };
  static APParser p = { s };
  APResult r;
  if (ap_parse(&p, NULL, a, n, k, &r) < 0) return NULL;
  PyObject *res = NULL;
  int dev;
  if (THP_factory_device(ap_object(&r, 5), &dev) < 0) goto done;
  if (dev == -2) dev = -1;   /* no device=: the host */
  THTensor *t = at_randperm(ap_int(&r, 0), ap_dtype(&r, 3, TH_Int64), ap_generator(&r, 1));
  if (!t) { THP_raise(); goto done; }
  res = THP_move_result(finish(t, ap_bool(&r, 7)), dev);
done:
  ap_release(&r);
  return res;
}

#define LKW "ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool requires_grad=False, MemoryFormat? memory_format=None"

static PyObject *like(PyObject *const *a, Py_ssize_t n, PyObject *k, APParser *p, int kind) {
  APResult r;
  int idx = ap_parse(p, NULL, a, n, k, &r);
  if (idx < 0) return NULL;
  PyObject *res = NULL;
  int o = kind == 2 ? (idx == 0 ? 1 : 2) : 0;   /* randint_like has 1 or 2 ints first */
  int dev;
  THTensor *self = ap_tensor(&r, 0)->t;
  if (THP_factory_device(ap_object(&r, 3 + o), &dev) < 0) goto done;
  if (ap_isnone(&r, 3 + o)) dev = THTensor_device(self);   /* *_like: the input's device (not the default one) */
  /* rand_like/randn_like of a GPU tensor draw on the device; randint_like on the host. The result
   * is laid out as torch's empty_like(input, memory_format=): a dense input's strides by default
   * (channels_last stays so), and the draws fill it in memory order, so values match torch's */
  THDtype dt = ap_dtype(&r, 1 + o, self->dtype);
  THTensor *t = at_empty_like_on(self, kind == 2 && dev != TH_DEVICE_META ? -1 : dev, dt);
  if (!t) { THP_raise(); goto done; }
  if (THP_lay_out(t, ap_object(&r, 6 + o), true) < 0) { THTensor_free(t); goto done; }
  THTensor *f;
  struct THGenerator *g = fa_generator(NULL);
  if (kind == 0) f = at_uniform_(t, 0, 1, g);
  else if (kind == 1) f = at_normal_(t, 0, 1, g);
  else {
    int64_t low = idx == 0 ? 0 : ap_int(&r, 1), high = ap_int(&r, idx == 0 ? 1 : 2);
    f = at_random_(t, low, (ATOptInt){ true, high }, g);
  }
  THTensor_free(t);
  if (!f) { THP_raise(); goto done; }
  res = THP_move_result(finish(f, ap_bool(&r, 5 + o)), dev);
done:
  ap_release(&r);
  return res;
}
static PyObject *f_rand_like(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k) {
  static const char *s[] = { "rand_like(Tensor input, *, " LKW ")", NULL };
  static APParser p = { s };
  return like(a, n, k, &p, 0);
}
static PyObject *f_randn_like(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k) {
  static const char *s[] = { "randn_like(Tensor input, *, " LKW ")", NULL };
  static APParser p = { s };
  return like(a, n, k, &p, 1);
}
static PyObject *f_randint_like(PyObject *m, PyObject *const *a, Py_ssize_t n, PyObject *k) {
  static const char *s[] = { "randint_like(Tensor input, int high, *, " LKW ")",
                             "randint_like(Tensor input, int low, int high, *, " LKW ")", NULL };
  static APParser p = { s };
  return like(a, n, k, &p, 2);
}

#define FASTCALL(f) (PyCFunction)(void (*)(void))f, METH_FASTCALL | METH_KEYWORDS
PyMethodDef THP_random_functions[] = {
  {"rand", FASTCALL(f_rand), NULL},
  {"randn", FASTCALL(f_randn), NULL},
  {"randint", FASTCALL(f_randint), NULL},
  {"randperm", FASTCALL(f_randperm), NULL},
  {"rand_like", FASTCALL(f_rand_like), NULL},
  {"randn_like", FASTCALL(f_randn_like), NULL},
  {"randint_like", FASTCALL(f_randint_like), NULL},
  {NULL}
};
