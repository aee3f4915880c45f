/* Formula helpers for sampling.yaml */
#ifndef THP_FORMULAS_SAMPLING_H
#define THP_FORMULAS_SAMPLING_H
#include "THP.h"
PyObject *F_grid_sampler_grad(PyObject *grad, PyObject *input, PyObject *grid, PyObject *interpolation_mode,
                              PyObject *padding_mode, PyObject *align_corners, PyObject *output_mask);
#endif
