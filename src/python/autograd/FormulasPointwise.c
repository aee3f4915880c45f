/* Masked gradients of clamp/logit/xlogy, composed from recorded ops so they
 * are differentiable again. */
#include "autograd/Formulas.h"
#include "autograd/FormulasPointwise.h"
#include "Functions.h"

/* grad where min <= self <= max (bounds may be None, numbers or tensors) */
PyObject *F_clamp_grad(PyObject *grad, PyObject *self, PyObject *min, PyObject *max) {
  PyObject *mask = NULL, *m2 = NULL, *r = NULL, *zero = PyFloat_FromDouble(0.0);
  if (!zero) return NULL;
  if (min != Py_None) mask = F_ge(self, min);
  if (max != Py_None) {
    m2 = F_le(self, max);
    if (mask && m2) { PyObject *both = F_logical_and(mask, m2); Py_DECREF(mask); mask = both; }
    else if (m2) { mask = Py_NewRef(m2); }
  }
  if (mask) r = F_where(mask, grad, zero);
  else if (!PyErr_Occurred()) r = Py_NewRef(grad);
  Py_XDECREF(m2); Py_XDECREF(mask); Py_DECREF(zero);
  return r;
}

/* a tensor bound gets the gradient where it was the active side: min where
 * self < min < max, max where self > max or max < min (max wins a crossed
 * pair, as clamp applies it last) */
PyObject *F_clamp_grad_bound(PyObject *grad, PyObject *self, PyObject *min, PyObject *max, PyObject *is_min) {
  bool lower = is_min == Py_True;
  PyObject *bound = lower ? min : max, *other = lower ? max : min;
  PyObject *zero = PyFloat_FromDouble(0.0), *mask = NULL, *r = NULL;
  if (!zero) return NULL;
  mask = lower ? F_lt(self, bound) : F_gt(self, bound);
  if (mask && other != Py_None) {
    PyObject *order = lower ? F_lt(min, max) : F_lt(max, min);
    PyObject *both = order ? (lower ? F_logical_and(mask, order) : F_logical_or(mask, order)) : NULL;
    Py_XDECREF(order);
    Py_SETREF(mask, both);
  }
  if (mask) r = F_where(mask, grad, zero);
  Py_XDECREF(mask); Py_DECREF(zero);
  return r;
}

PyObject *F_logit_grad(PyObject *grad, PyObject *self, PyObject *eps) {
  PyObject *one = PyLong_FromLong(1), *zero = PyFloat_FromDouble(0.0);
  PyObject *om = F_rsub(self, one, NULL);           /* 1 - self */
  PyObject *den = om ? F_mul(self, om) : NULL;
  PyObject *r = den ? F_div(grad, den) : NULL;
  if (r && eps != Py_None && PyFloat_AsDouble(eps) >= 0) {
    PyObject *hi = PyFloat_FromDouble(1.0 - PyFloat_AsDouble(eps));
    PyObject *a = F_ge(self, eps), *b = hi ? F_le(self, hi) : NULL;
    PyObject *m = (a && b) ? F_logical_and(a, b) : NULL;
    PyObject *w = m ? F_where(m, r, zero) : NULL;
    Py_XDECREF(hi); Py_XDECREF(a); Py_XDECREF(b); Py_XDECREF(m);
    Py_DECREF(r);
    r = w;
  }
  Py_XDECREF(one); Py_XDECREF(zero); Py_XDECREF(om); Py_XDECREF(den);
  return r;
}

/* d/dx xlogy(x, y) = log(y), and 0 where x == 0 and y <= 0 */
PyObject *F_xlogy_grad_self(PyObject *grad, PyObject *self, PyObject *other) {
  PyObject *zero = PyFloat_FromDouble(0.0);
  PyObject *g = F_xlogy_Tensor(grad, other);
  PyObject *a = g ? F_eq(self, zero) : NULL, *b = a ? F_le(other, zero) : NULL;
  PyObject *m = b ? F_logical_and(a, b) : NULL;
  PyObject *r = m ? F_where(m, zero, g) : NULL;
  Py_XDECREF(zero); Py_XDECREF(g); Py_XDECREF(a); Py_XDECREF(b); Py_XDECREF(m);
  return r;
}
