/* _C._sgd_step: the fused SGD update of ATOptim.c, for cthtorch.optim.SGD. */
#include "THP.h"
#include "../ATen/ATOptim.h"

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
  if (buf != Py_None && !THPTensor_Check(buf)) {
    PyErr_SetString(PyExc_TypeError, "_sgd_step: momentum buffer must be a Tensor or None");
    return NULL;
  }
  THTensor *bt = buf == Py_None ? NULL : ((THPTensor *)buf)->t;
  if (at_sgd_step(((THPTensor *)p)->t, ((THPTensor *)g)->t, bt, lr, mom, damp, wd, nesterov, maximize, first) < 0) {
    THError_clear();
    Py_RETURN_FALSE;
  }
  THP_bump_version(p);
  if (bt) THP_bump_version(buf);
  Py_RETURN_TRUE;
}
