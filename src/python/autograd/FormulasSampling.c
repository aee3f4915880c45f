/* Gradients of grid_sampler_2d/3d. A plain backward runs the fused kernel,
 * which records nothing; under create_graph (grad mode on while the backward
 * runs) the gradients come from the gather composite of recorded ops
 * (cthtorch/nn/_functional/sampling.py), which autograd can differentiate
 * again. */
#include "autograd/Formulas.h"
#include "autograd/FormulasSampling.h"
#include "Functions.h"

PyObject *F_grid_sampler_grad(PyObject *grad, PyObject *input, PyObject *grid, PyObject *interpolation_mode,
                              PyObject *padding_mode, PyObject *align_corners, PyObject *output_mask) {
  if (grad == Py_None) return PyTuple_Pack(2, Py_None, Py_None);
  if (THP_grad_enabled()) {
    PyObject *mod = PyImport_ImportModule("cthtorch.nn._functional.sampling");
    if (!mod) return NULL;
    PyObject *r = PyObject_CallMethod(mod, "_grid_sampler_grad_composite", "OOOOOOO", grad, input, grid,
                                      interpolation_mode, padding_mode, align_corners, output_mask);
    Py_DECREF(mod);
    return r;
  }
  bool volumetric = THPTensor_Check(input) && ((THPTensor *)input)->t->ndim == 5;
  return (volumetric ? F_grid_sampler_3d_backward : F_grid_sampler_2d_backward)(
      grad, input, grid, interpolation_mode, padding_mode, align_corners, output_mask);
}
