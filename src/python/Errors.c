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

/* Frames of the Python wrappers over C entry points (the legacy typed constructors, Tensor's
 * Python methods, the shape/indexing composites such as torch.where): torch has those in C, so its
 * warnings name the user's line, not theirs. */
static bool wrapper_frame(PyFrameObject *f) {
  PyCodeObject *code = PyFrame_GetCode(f);
  const char *file = PyUnicode_AsUTF8(code->co_filename);
  Py_DECREF(code);
  if (!file) { PyErr_Clear(); return false; }
  size_t n = strlen(file);
  static const char *const wrappers[] = { "/cthtorch/_legacy.py", "/cthtorch/_tensor.py",
                                               "/cthtorch/_ops/shape.py" };
  for (size_t i = 0; i < sizeof wrappers / sizeof *wrappers; i++) {
    size_t m = strlen(wrappers[i]);
    if (n >= m && strcmp(file + n - m, wrappers[i]) == 0) return true;
  }
  return false;
}

int THP_warn(PyObject *category, const char *text) {
  Py_ssize_t level = 1;
  PyFrameObject *f = PyEval_GetFrame();   /* borrowed */
  Py_XINCREF(f);
  while (f && wrapper_frame(f)) {
    PyFrameObject *back = PyFrame_GetBack(f);
    Py_DECREF(f);
    f = back;
    if (f) level++;
  }
  Py_XDECREF(f);
  return PyErr_WarnEx(category, text, level);
}

int THP_flush_warnings(void) {
  const char *w;
  while ((w = THWarn_pop()))
    if (THP_warn(PyExc_UserWarning, w) < 0) return -1;
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
