/* Gradients of sinc and i1 as torch's sinc_backward/i1_backward, composed
 * from recorded ops so they are differentiable again. */
#include "autograd/Formulas.h"
#include "autograd/FormulasUnary.h"
#include "Functions.h"

#include <float.h>
#include <math.h>

/* grad * (pi x cos(pi x) - sin(pi x)) / (pi x^2), and 0 at x == 0 */
PyObject *F_sinc_grad(PyObject *grad, PyObject *self) {
  PyObject *pi = PyFloat_FromDouble(M_PI), *zero = PyFloat_FromDouble(0.0);
  PyObject *px = pi ? F_mul(self, pi) : NULL;
  PyObject *xx = px ? F_mul(self, self) : NULL;
  PyObject *pxx = xx ? F_mul(xx, pi) : NULL;
  PyObject *c = pxx ? F_cos(px) : NULL, *s = c ? F_sin(px) : NULL;
  PyObject *pc = s ? F_mul(px, c) : NULL;
  PyObject *num = pc ? F_sub(pc, s, NULL) : NULL;
  PyObject *gn = num ? F_mul(grad, num) : NULL;
  PyObject *q = gn ? F_div(gn, pxx) : NULL;
  PyObject *m = q ? F_eq(pxx, zero) : NULL;
  PyObject *r = m ? F_where(m, zero, q) : NULL;
  Py_XDECREF(pi); Py_XDECREF(zero); Py_XDECREF(px); Py_XDECREF(xx); Py_XDECREF(pxx); Py_XDECREF(c);
  Py_XDECREF(s); Py_XDECREF(pc); Py_XDECREF(num); Py_XDECREF(gn); Py_XDECREF(q); Py_XDECREF(m);
  return r;
}

/* I1'(x) = I0(x) - I1(x) / x; for i1e (scaled) I0e(x) - I1e(x) (sgn(x) + 1/x);
 * both 1/2 where |x| <= eps of the dtype */
static PyObject *bessel_i1_grad(PyObject *grad, PyObject *self, PyObject *result, int scaled) {
  THDtype dt = ((THPTensor *)self)->t->dtype;
  double e = dt == TH_Double ? DBL_EPSILON : dt == TH_Half ? 0.0009765625 : dt == TH_BFloat16 ? 0.0078125 : FLT_EPSILON;
  PyObject *eps = PyFloat_FromDouble(e), *half = PyFloat_FromDouble(0.5);
  PyObject *a = eps ? F_abs(self) : NULL, *big = a ? F_gt(a, eps) : NULL;
  PyObject *safe = big ? F_where(big, self, eps) : NULL;
  /* the scaled form takes i0e itself: i0(x) exp(-|x|) would be inf * 0 where i0 overflows */
  PyObject *i0 = safe ? (scaled ? F_special_i0e(safe) : F_i0(safe)) : NULL, *q = i0 ? F_div(result, safe) : NULL;
  PyObject *sg = NULL, *rs = NULL, *q2 = NULL;
  if (scaled && q) {   /* q -> q + result sgn(x) */
    sg = F_sign(safe);
    rs = sg ? F_mul(result, sg) : NULL; q2 = rs ? F_add(q, rs, NULL) : NULL;
  }
  PyObject *d = !q ? NULL : scaled ? (q2 ? F_sub(i0, q2, NULL) : NULL) : F_sub(i0, q, NULL);
  PyObject *w = d ? F_where(big, d, half) : NULL;
  PyObject *r = w ? F_mul(grad, w) : NULL;
  Py_XDECREF(eps); Py_XDECREF(half); Py_XDECREF(a); Py_XDECREF(big); Py_XDECREF(safe); Py_XDECREF(i0);
  Py_XDECREF(q); Py_XDECREF(sg); Py_XDECREF(rs); Py_XDECREF(q2); Py_XDECREF(d); Py_XDECREF(w);
  return r;
}

PyObject *F_i1_grad(PyObject *grad, PyObject *self, PyObject *result) {
  return bessel_i1_grad(grad, self, result, 0);
}

PyObject *F_i1e_grad(PyObject *grad, PyObject *self, PyObject *result) {
  return bessel_i1_grad(grad, self, result, 1);
}
