/* Formula helpers for shape.yaml */
#ifndef THP_FORMULAS_SHAPE_H
#define THP_FORMULAS_SHAPE_H
#include "THP.h"
/* cat: grad narrowed to each input's slice along dim (sizes: a tuple of the
 * inputs' sizes; a legacy empty (0,) input gets an empty gradient) */
PyObject *F_cat_backward(PyObject *grad, PyObject *sizes, PyObject *dim);
/* stack: grad unbound along dim, one slice per input */
PyObject *F_stack_backward(PyObject *grad, PyObject *sizes, PyObject *dim);
/* an int list with each entry negated (roll's backward rolls back) */
PyObject *F_negate_ints(PyObject *ints);
/* the last two entries of a sizes tuple (H, W of an image batch) */
PyObject *F_spatial_sizes(PyObject *sizes);
#endif
