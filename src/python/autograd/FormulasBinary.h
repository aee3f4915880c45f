/* Formula helpers for src/ATen/declarations/binary.yaml */
#ifndef THP_FORMULAS_BINARY_H
#define THP_FORMULAS_BINARY_H
#include "THP.h"
/* raises torch's RuntimeError for an op whose derivative torch leaves undefined */
PyObject *F_aten_not_implemented(PyObject *name);
#endif
