/* Formula helpers for the binary ops of src/ATen/declarations/binary.yaml. */
#include "autograd/FormulasBinary.h"
#include "Functions.h"

/* heaviside's backward: "derivative for aten::heaviside is not implemented" */
PyObject *F_aten_not_implemented(PyObject *name) {
  PyErr_Format(PyExc_RuntimeError, "derivative for aten::%S is not implemented", name);
  return NULL;
}

/* atan2's two gradients share grad / (self^2 + other^2): computed once, the
 * pair costs five or six passes over the elements instead of the eleven of
 * two separate formulas. output_mask: which of the two are wanted. */
PyObject *F_atan2_grad(PyObject *grad, PyObject *self, PyObject *other, PyObject *output_mask) {
  if (grad == Py_None) return PyTuple_Pack(2, Py_None, Py_None);
  int want_s = PyObject_IsTrue(PyTuple_GET_ITEM(output_mask, 0));
  int want_o = PyObject_IsTrue(PyTuple_GET_ITEM(output_mask, 1));
  PyObject *one = PyLong_FromLong(1), *res = NULL, *gs = NULL, *go = NULL, *t = NULL;
  PyObject *ss = one ? F_mul(self, self) : NULL;
  PyObject *d = ss ? F_addcmul(ss, other, other, one) : NULL;
  PyObject *r = d ? F_div(grad, d) : NULL;
  if (r) {
    gs = want_s ? F_mul(r, other) : Py_NewRef(Py_None);
    if (gs && want_o) go = (t = F_mul(r, self)) ? F_neg(t) : NULL;
    else if (gs) go = Py_NewRef(Py_None);
    if (go) res = PyTuple_Pack(2, gs, go);
  }
  Py_XDECREF(one); Py_XDECREF(ss); Py_XDECREF(d); Py_XDECREF(r); Py_XDECREF(gs); Py_XDECREF(go); Py_XDECREF(t);
  return res;
}
