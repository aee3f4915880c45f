/* Global adaptive average pooling recorded as torch's mean (see FormulasPool.h) */
#include "autograd/FormulasPool.h"
#include "Functions.h"

bool THP_pool_is_global(PyObject *self, const ATIntList *output_size) {
  const THTensor *t = ((THPTensor *)self)->t;
  int n = output_size->n;
  if (n == 0 || (t->ndim != n + 1 && t->ndim != n + 2)) return false;
  for (int i = 0; i < n; i++)
    if (output_size->v[i] != 1 || t->sizes[t->ndim - n + i] == 0) return false;
  /* an empty batch is torch's mean too; an empty channel dim (torch's mean again) is left to the op,
   * which refuses it as it refuses empty pooled dims, with or without autograd (torch gives NaNs) */
  return t->sizes[t->ndim - n - 1] != 0;
}

PyObject *THP_global_avg_pool_graph(PyObject *self, const ATIntList *output_size) {
  PyObject *dims = PyTuple_New(output_size->n);
  if (!dims) return NULL;
  for (int i = 0; i < output_size->n; i++) {
    PyObject *d = PyLong_FromLong(i - output_size->n);
    if (!d) { Py_DECREF(dims); return NULL; }
    PyTuple_SET_ITEM(dims, i, d);
  }
  PyObject *r = F_mean_dim(self, dims, Py_True, NULL);
  Py_DECREF(dims);
  const THTensor *t = ((THPTensor *)self)->t;
  if (!r || t->ndim != 4 || at_suggest_format(t) != AT_CHANNELS_LAST) return r;
  /* torch restrides the mean of a channels-last input to channels_last's strides (an AsStridedBackward1 node) */
  int64_t C = t->sizes[1];
  PyObject *size = Py_BuildValue("(LLLL)", (long long)t->sizes[0], (long long)C, 1LL, 1LL);
  PyObject *stride = Py_BuildValue("(LLLL)", (long long)C, 1LL, (long long)C, (long long)C);
  PyObject *v = size && stride ? F_as_strided(r, size, stride, Py_None) : NULL;
  Py_XDECREF(size); Py_XDECREF(stride); Py_DECREF(r);
  return v;
}
