/* THError (kind + message, set below src/python) -> Python exception. */
#include "THP.h"

/* torch.OutOfMemoryError (a RuntimeError) for the CUDA allocator's
 * "CUDA out of memory. Tried to allocate ..."; new reference or NULL */
static PyObject *oom_class(void) {
  PyObject *mod = PyImport_ImportModule("cthtorch");
  if (!mod) return NULL;
  PyObject *cls = PyObject_GetAttrString(mod, "OutOfMemoryError");
  Py_DECREF(mod);
  return cls;
}

PyObject *THP_raise(void) {
  PyObject *exc;
  if (THError_kind() == TH_ERR_MEMORY && strncmp(THError_message(), "CUDA out of memory", 18) == 0) {
    PyObject *cls = oom_class();
    if (!cls) { THError_clear(); return NULL; }
    PyErr_SetString(cls, THError_message());
    Py_DECREF(cls);
    THError_clear();
    return NULL;
  }
  switch (THError_kind()) {
    case TH_ERR_VALUE: exc = PyExc_ValueError; break;
    case TH_ERR_TYPE: exc = PyExc_TypeError; break;
    case TH_ERR_INDEX: exc = PyExc_IndexError; break;
    case TH_ERR_MEMORY: exc = PyExc_RuntimeError; break;   /* PyTorch raises RuntimeError for OOM */
    case TH_ERR_NOTIMPL: exc = PyExc_NotImplementedError; break;
    case TH_ERR_NONE:
      if (PyErr_Occurred()) return NULL;
      PyErr_SetString(PyExc_SystemError, "cthtorch: an operation failed without an error message");
      return NULL;
    default: exc = PyExc_RuntimeError; break;
  }
  PyErr_SetString(exc, THError_message());
  THError_clear();
  return NULL;
}

int THP_raise_int(void) {
  THP_raise();
  return -1;
}

int THP_flush_warnings(void) {
  const char *w;
  while ((w = THWarn_pop()))
    if (PyErr_WarnEx(PyExc_UserWarning, w, 1) < 0) return -1;
  return 0;
}

THPVersion *THPVersion_new(void) {
  THPVersion *v = PyMem_Malloc(sizeof *v);
  if (!v) { PyErr_NoMemory(); return NULL; }
  v->refcount = 1;
  v->version = 0;
  return v;
}

void THPVersion_free(THPVersion *v) {
  if (v && --v->refcount == 0) PyMem_Free(v);
}
