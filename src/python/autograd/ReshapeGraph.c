/* reshape and flatten under autograd, recorded as torch records them. Its
 * reshape is a composite of view ops, so grad_fn shows which one ran:
 * ViewBackward0 (a contiguous input viewed), ReshapeAliasBackward0 (another
 * input that views), or UnsafeViewBackward0 over CloneBackward0 (a copy).
 * Programs print these graphs; without grad the plain at_reshape runs. */
#include "THP.h"
#include "Functions.h"

PyObject *THP_reshape_graph(PyObject *self, const ATIntList *shape) {
  THTensor *t = ((THPTensor *)self)->t;
  int views = at_reshape_views(t, shape);
  if (views < 0) return THP_raise();
  if (views) return THTensor_isContiguous(t) ? VT_view(self, shape) : VT__reshape_alias(self, shape);
  PyObject *c = VT_clone(self, THPMemoryFormat_objs[0]);
  if (!c) return NULL;
  PyObject *r = VT__unsafe_view(c, shape);
  Py_DECREF(c);
  return r;
}

/* flatten is reshape to its shape, or the input itself when one dim flattens onto itself */
PyObject *THP_flatten_graph(PyObject *self, int64_t start, int64_t end) {
  ATIntList shape;
  int k = at_flatten_shape(((THPTensor *)self)->t, start, end, &shape);
  if (k < 0) return THP_raise();
  return k ? Py_NewRef(self) : THP_reshape_graph(self, &shape);
}
