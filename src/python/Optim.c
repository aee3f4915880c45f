/* _C._sgd_step and _C._adam_step: the fused updates of ATOptim.c, for
 * cthtorch.optim.SGD and Adam/AdamW. */
#include "THP.h"
#include "../ATen/ATOptim.h"

static THTensor *opt_tensor(PyObject *o, bool *ok) {
  if (o == Py_None) return NULL;
  if (!THPTensor_Check(o)) { *ok = false; return NULL; }
  return ((THPTensor *)o)->t;
}

/* _sgd_step(p, grad, buf|None, lr, momentum, dampening, weight_decay,
 *           nesterov, maximize, first) -> bool
 * False (nothing written) when the tensors don't suit the fused kernel. */
PyObject *THP_sgd_step(PyObject *m, PyObject *args) {
  PyObject *p, *g, *buf;
  double lr, mom, damp, wd;
  int nesterov, maximize, first;
  if (!PyArg_ParseTuple(args, "O!O!Oddddppp:_sgd_step", &THPTensorType, &p, &THPTensorType, &g, &buf, &lr, &mom,
                        &damp, &wd, &nesterov, &maximize, &first))
    return NULL;
  bool ok = true;
  THTensor *bt = opt_tensor(buf, &ok);
  if (!ok) { PyErr_SetString(PyExc_TypeError, "_sgd_step: momentum buffer must be a Tensor or None"); return NULL; }
  if (at_sgd_step(((THPTensor *)p)->t, ((THPTensor *)g)->t, bt, lr, mom, damp, wd, nesterov, maximize, first) < 0) {
    THError_clear();
    Py_RETURN_FALSE;
  }
  THP_bump_version(p);
  if (bt) THP_bump_version(buf);
  Py_RETURN_TRUE;
}

/* _adam_step(p, grad, exp_avg, exp_avg_sq, max_exp_avg_sq|None, lr, beta1,
 *            beta2, eps, weight_decay, step, maximize, decoupled) -> bool */
PyObject *THP_adam_step(PyObject *m, PyObject *args) {
  PyObject *p, *g, *ea, *eas, *mx;
  double lr, b1, b2, eps, wd, step;
  int maximize, decoupled;
  if (!PyArg_ParseTuple(args, "O!O!O!O!Oddddddpp:_adam_step", &THPTensorType, &p, &THPTensorType, &g, &THPTensorType,
                        &ea, &THPTensorType, &eas, &mx, &lr, &b1, &b2, &eps, &wd, &step, &maximize, &decoupled))
    return NULL;
  bool ok = true;
  THTensor *mt = opt_tensor(mx, &ok);
  if (!ok) { PyErr_SetString(PyExc_TypeError, "_adam_step: max_exp_avg_sq must be a Tensor or None"); return NULL; }
  if (at_adam_step(((THPTensor *)p)->t, ((THPTensor *)g)->t, ((THPTensor *)ea)->t, ((THPTensor *)eas)->t, mt, lr, b1,
                   b2, eps, wd, step, maximize, decoupled) < 0) {
    THError_clear();
    Py_RETURN_FALSE;
  }
  THP_bump_version(p);
  THP_bump_version(ea);
  THP_bump_version(eas);
  if (mt) THP_bump_version(mx);
  Py_RETURN_TRUE;
}
