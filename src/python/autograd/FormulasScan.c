/* Gradients of the scan family, composed from recorded ops (see Formulas.h
 * for the conventions), so they are differentiable again. */
#include "autograd/Formulas.h"
#include "autograd/FormulasScan.h"
#include "Functions.h"

#include <float.h>

/* The dtype's lowest finite value: log(0) for the empty part of a split
 * gradient, finite so that double backward stays finite. */
static double lowest_of(THDtype t) {
  switch (t) {
    case TH_Half: return -65504.0;
    case TH_BFloat16: return -3.3895313892515355e+38;
    case TH_Float: return -FLT_MAX;
    default: return -DBL_MAX;
  }
}

/* r = logcumsumexp(x) along dim: d r_i / d x_j = exp(x_j - r_i) for j <= i, so
 *   grad_x_j = exp(x_j) * sum_{i >= j} g_i exp(-r_i),
 * a reverse scan. It runs as a reverse logcumsumexp of log|g| - r over the
 * positive and the negative part of g separately (PyTorch's formula, after
 * TensorFlow's). The reverse op's gradient is the same with a forward scan. */
PyObject *F_logcumsumexp_grad(PyObject *grad, PyObject *self, PyObject *result, PyObject *dim, PyObject *reverse) {
  THTensor *g = ((THPTensor *)grad)->t;
  if (g->ndim == 0 || THTensor_numel(g) == 0) return Py_NewRef(grad);
  PyObject *zero = PyLong_FromLong(0), *low = PyFloat_FromDouble(lowest_of(g->dtype));
  PyObject *absg = NULL, *logabs = NULL, *parts[2] = { NULL, NULL }, *r = NULL;
  if (zero && low) absg = F_abs(grad);
  if (absg) logabs = F_log(absg);
  for (int s = 0; logabs && s < 2; s++) {
    PyObject *mask = s == 0 ? F_gt(grad, zero) : F_lt(grad, zero), *w = NULL, *diff = NULL, *scan = NULL, *sum = NULL;
    if (mask) w = F_where(mask, logabs, low);
    if (w) diff = F_sub(w, result, NULL);
    if (diff) scan = reverse == Py_True ? F_logcumsumexp(diff, dim) : F_logcumsumexp_reverse(diff, dim);
    if (scan) sum = F_add(scan, self, NULL);
    if (sum) parts[s] = F_exp(sum);
    Py_XDECREF(mask); Py_XDECREF(w); Py_XDECREF(diff); Py_XDECREF(scan); Py_XDECREF(sum);
    if (!parts[s]) break;
  }
  if (parts[0] && parts[1]) r = F_sub(parts[0], parts[1], NULL);
  Py_XDECREF(zero); Py_XDECREF(low); Py_XDECREF(absg); Py_XDECREF(logabs); Py_XDECREF(parts[0]); Py_XDECREF(parts[1]);
  return r;
}
