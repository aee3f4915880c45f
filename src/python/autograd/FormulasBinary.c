/* Formula helpers for the binary ops of src/ATen/declarations/binary.yaml. */
#include "autograd/FormulasBinary.h"
#include "Functions.h"

/* heaviside's backward: "derivative for aten::heaviside is not implemented" */
PyObject *F_aten_not_implemented(PyObject *name) {
  PyErr_Format(PyExc_RuntimeError, "derivative for aten::%S is not implemented", name);
  return NULL;
}

/* atan2's two gradients share 1 / (self^2 + other^2), computed once, and
 * only the ones output_mask asks for are formed. The steps are torch's, so
 * the bits are too: recip = 1 / (self * self + other * other) (two products
 * and a sum: an fma there, or grad / (...) instead of grad * recip, moved
 * about half the elements by an ulp), then grad * other * recip and
 * grad * -self * recip (negated last: the same bits). */
PyObject *F_atan2_grad(PyObject *grad, PyObject *self, PyObject *other, PyObject *output_mask) {
  if (grad == Py_None) return PyTuple_Pack(2, Py_None, Py_None);
  int want_s = PyObject_IsTrue(PyTuple_GET_ITEM(output_mask, 0));
  int want_o = PyObject_IsTrue(PyTuple_GET_ITEM(output_mask, 1));
  if (want_s < 0 || want_o < 0) return NULL;
  PyObject *one = PyLong_FromLong(1), *oo = NULL, *d = NULL, *r = NULL, *res = NULL;
  PyObject *gs = NULL, *go = NULL, *t = NULL, *u = NULL;
  PyObject *ss = one ? F_mul(self, self) : NULL;
  if (ss) oo = F_mul(other, other);
  if (oo) d = F_add(ss, oo, one);
  if (d) r = F_reciprocal(d);
  if (r) {
    gs = !want_s ? Py_NewRef(Py_None) : (t = F_mul(grad, other)) ? F_mul(t, r) : NULL;
    if (gs && want_o) {
      PyObject *gself = F_mul(grad, self);
      u = gself ? F_mul(gself, r) : NULL;
      Py_XDECREF(gself);
      go = u ? F_neg(u) : NULL;
    } else if (gs) {
      go = Py_NewRef(Py_None);
    }
    if (go) res = PyTuple_Pack(2, gs, go);
  }
  Py_XDECREF(one); Py_XDECREF(ss); Py_XDECREF(oo); Py_XDECREF(d); Py_XDECREF(r);
  Py_XDECREF(gs); Py_XDECREF(go); Py_XDECREF(t); Py_XDECREF(u);
  return res;
}
