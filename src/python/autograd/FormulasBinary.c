/* Formula helpers for the binary ops of src/ATen/declarations/binary.yaml. */
#include "autograd/FormulasBinary.h"

/* heaviside's backward: "derivative for aten::heaviside is not implemented" */
PyObject *F_aten_not_implemented(PyObject *name) {
  PyErr_Format(PyExc_RuntimeError, "derivative for aten::%S is not implemented", name);
  return NULL;
}
