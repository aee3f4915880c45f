/* Gradients of value-selecting and moment reductions, composed from
 * recorded ops (see Formulas.h for the conventions). */
#include "autograd/Formulas.h"
#include "autograd/FormulasReduce.h"
#include "Functions.h"

static PyObject *sizes_of(PyObject *t) { return THP_tensor_attr(t, "sizes"); }

/* dims as a tuple (None / [] -> all dims) */
static PyObject *norm_dims(PyObject *dims, PyObject *self) {
  if (dims == Py_None || (PySequence_Check(dims) && PySequence_Size(dims) == 0)) {
    int nd = ((THPTensor *)self)->t->ndim;
    PyObject *t = PyTuple_New(nd);
    for (int i = 0; t && i < nd; i++) PyTuple_SET_ITEM(t, i, PyLong_FromLong(i));
    return t;
  }
  if (PyLong_Check(dims)) return PyTuple_Pack(1, dims);
  return Py_NewRef(dims);
}

/* grad spread evenly over the elements equal to result (a NaN result:
 * over the NaNs, as torch) */
PyObject *F_evenly_distribute(PyObject *grad, PyObject *self, PyObject *result) {
  PyObject *eq = F_eq(self, result), *sn = eq ? F_isnan(self) : NULL, *rn = sn ? F_isnan(result) : NULL;
  PyObject *both = rn ? F_logical_and(sn, rn) : NULL, *mask = both ? F_logical_or(eq, both) : NULL;
  PyObject *cnt = NULL, *g = NULL, *r = NULL;
  Py_XDECREF(eq); Py_XDECREF(sn); Py_XDECREF(rn); Py_XDECREF(both);
  if (mask) cnt = F_sum(mask, NULL);
  if (cnt) g = F_div(grad, cnt);
  if (g) r = F_mul(mask, g);
  Py_XDECREF(mask); Py_XDECREF(cnt); Py_XDECREF(g);
  return r;
}

PyObject *F_amax_grad(PyObject *grad, PyObject *self, PyObject *result, PyObject *dims, PyObject *keepdim) {
  PyObject *sizes = sizes_of(self), *d = sizes ? norm_dims(dims, self) : NULL;
  PyObject *gexp = NULL, *rexp = NULL, *mask = NULL, *cnt = NULL, *q = NULL, *r = NULL, *t = Py_True;
  if (d) gexp = F_reduce_grad_expand(grad, sizes, d, keepdim);
  if (gexp) rexp = F_reduce_grad_expand(result, sizes, d, keepdim);
  if (rexp) mask = F_eq(self, rexp);
  if (mask) cnt = F_sum_dim_IntList(mask, d, t, NULL);
  if (cnt) q = F_div(gexp, cnt);
  if (q) r = F_mul(q, mask);
  Py_XDECREF(sizes); Py_XDECREF(d); Py_XDECREF(gexp); Py_XDECREF(rexp); Py_XDECREF(mask); Py_XDECREF(cnt); Py_XDECREF(q);
  return r;
}

static double correction_of(PyObject *c) {
  if (c == Py_None) return 1.0;
  if (PyBool_Check(c)) return c == Py_True ? 1.0 : 0.0;
  return PyFloat_AsDouble(c);
}

/* (self - mean) * expanded grad / (N - correction), times `scale` */
static PyObject *centered(PyObject *grad, PyObject *self, PyObject *dims, PyObject *correction, PyObject *keepdim,
                          double scale, PyObject *divide_by) {
  PyObject *sizes = sizes_of(self), *d = sizes ? norm_dims(dims, self) : NULL;
  PyObject *mean = NULL, *diff = NULL, *gexp = NULL, *prod = NULL, *r = NULL, *n = NULL, *dexp = NULL, *q = NULL;
  if (!d) goto done;
  mean = F_mean_dim(self, d, Py_True, NULL);
  if (mean) diff = F_sub(self, mean, NULL);
  if (diff) gexp = F_reduce_grad_expand(grad, sizes, d, keepdim);
  if (gexp) prod = F_mul(diff, gexp);
  if (!prod) goto done;
  n = F_numel_of(sizes, d);
  if (!n) goto done;
  double denom = (PyLong_AsDouble(n) - correction_of(correction)) / scale;
  PyObject *den = PyFloat_FromDouble(denom);
  q = den ? F_div(prod, den) : NULL;
  Py_XDECREF(den);
  if (q && divide_by) {
    /* torch's std_backward: where the std is 0 its gradient is 0, not 0 / 0 (a constant row) */
    dexp = F_reduce_grad_expand(divide_by, sizes, d, keepdim);
    PyObject *quot = dexp ? F_div(q, dexp) : NULL, *zero = quot ? PyFloat_FromDouble(0.0) : NULL;
    PyObject *flat = zero ? F_eq(dexp, zero) : NULL;
    r = flat ? F_where(flat, zero, quot) : NULL;
    Py_XDECREF(quot); Py_XDECREF(zero); Py_XDECREF(flat);
  } else if (q) {
    r = Py_NewRef(q);
  }
done:
  Py_XDECREF(sizes); Py_XDECREF(d); Py_XDECREF(mean); Py_XDECREF(diff); Py_XDECREF(gexp); Py_XDECREF(prod);
  Py_XDECREF(n); Py_XDECREF(dexp); Py_XDECREF(q);
  return r;
}

PyObject *F_var_grad(PyObject *grad, PyObject *self, PyObject *dims, PyObject *correction, PyObject *keepdim) {
  return centered(grad, self, dims, correction, keepdim, 2.0, NULL);
}

PyObject *F_std_grad(PyObject *grad, PyObject *self, PyObject *result, PyObject *dims, PyObject *correction,
                     PyObject *keepdim) {
  return centered(grad, self, dims, correction, keepdim, 1.0, result);
}

PyObject *F_logsumexp_grad(PyObject *grad, PyObject *self, PyObject *result, PyObject *dims, PyObject *keepdim) {
  PyObject *sizes = sizes_of(self), *d = sizes ? norm_dims(dims, self) : NULL;
  PyObject *gexp = NULL, *rexp = NULL, *diff = NULL, *e = NULL, *r = NULL;
  if (d) gexp = F_reduce_grad_expand(grad, sizes, d, keepdim);
  if (gexp) rexp = F_reduce_grad_expand(result, sizes, d, keepdim);
  if (rexp) diff = F_sub(self, rexp, NULL);
  if (diff) e = F_exp(diff);
  if (e) r = F_mul(gexp, e);
  Py_XDECREF(sizes); Py_XDECREF(d); Py_XDECREF(gexp); Py_XDECREF(rexp); Py_XDECREF(diff); Py_XDECREF(e);
  return r;
}
