/* Gradients of the fused recurrent cells. A plain backward runs the fused
 * kernel (one pass, nothing recorded). Under create_graph the same math runs
 * as recorded ops, written in Python over declared ops
 * (cthtorch/_ops/rnn.py), so the cells are differentiable twice; that path
 * only serves double backward, where speed matters less than coverage. */
#include "autograd/Formulas.h"
#include "autograd/FormulasRNN.h"
#include "Functions.h"

static PyObject *recorded_grad(const char *fn, PyObject *const *args, Py_ssize_t n) {
  PyObject *mod = PyImport_ImportModule("cthtorch._ops.rnn");
  if (!mod) return NULL;
  PyObject *f = PyObject_GetAttrString(mod, fn);
  Py_DECREF(mod);
  if (!f) return NULL;
  PyObject *r = PyObject_Vectorcall(f, args, n, NULL);
  Py_DECREF(f);
  return r;
}

PyObject *F_lstm_cell_grad(PyObject *grad_hy, PyObject *grad_cy, PyObject *grad_ws, PyObject *cx, PyObject *cy,
                           PyObject *ws) {
  if (!THP_grad_enabled()) return F__fused_lstm_cell_backward(grad_hy, grad_cy, grad_ws, cx, cy, ws);
  PyObject *args[] = { grad_hy, grad_cy, grad_ws, cx, cy, ws };
  return recorded_grad("lstm_cell_grad", args, 6);
}

PyObject *F_gru_cell_grad(PyObject *grad_hy, PyObject *grad_ws, PyObject *hx, PyObject *ws) {
  if (!THP_grad_enabled()) return F__fused_gru_cell_backward(grad_hy, grad_ws, hx, ws);
  PyObject *args[] = { grad_hy, grad_ws, hx, ws };
  return recorded_grad("gru_cell_grad", args, 4);
}
