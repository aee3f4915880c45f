/* cthtorch._C._cuda: the Python face of libTHC. libTHC is loaded here, at
 * run time (dlopen), the first time a program touches CUDA, so the same
 * build imports on machines without a GPU or without the CUDA libraries.
 * cthtorch/cuda/__init__.py finds the library and the pip nvidia-* packages
 * and calls _register(path); every other function here needs that done. */
#include "THP.h"
#include "../ATen/ATCuda.h"

#include <dlfcn.h>

static const char no_cuda_msg[] =
    "CUDA is not available: cthtorch has no GPU on this machine (cthtorch.cuda.is_available() is False). "
    "Use device='cpu'.";

/* Initialises through the Python package (it knows where the libraries are). */
static int lazy_init(void) {
  if (at_cuda) return 0;
  PyObject *mod = PyImport_ImportModule("cthtorch.cuda");
  if (!mod) return -1;
  PyObject *r = PyObject_CallMethod(mod, "_lazy_init", NULL);
  Py_DECREF(mod);
  if (!r) return -1;
  Py_DECREF(r);
  if (!at_cuda) { PyErr_SetString(PyExc_RuntimeError, no_cuda_msg); return -1; }
  return 0;
}

int THP_cuda_resolve(int *index) {
  if (lazy_init() < 0) return -1;
  int n = at_cuda->device_count();
  if (*index < 0) *index = at_cuda->current_device();
  if (*index < 0) return THP_raise_int();
  if (*index >= n) {
    PyErr_Format(PyExc_RuntimeError, "CUDA error: invalid device ordinal (device %d requested, %d present)", *index, n);
    return -1;
  }
  return 0;
}

static PyObject *c_register(PyObject *m, PyObject *path) {
  if (at_cuda) Py_RETURN_TRUE;
  const char *p = PyUnicode_AsUTF8(path);
  if (!p) return NULL;
  void *h = dlopen(p, RTLD_NOW | RTLD_GLOBAL);
  if (!h) { PyErr_Format(PyExc_OSError, "cannot load %s: %s", p, dlerror()); return NULL; }
  const ATCudaHooks *(*get)(void) = (const ATCudaHooks *(*)(void))dlsym(h, "THC_hooks");
  if (!get) { PyErr_Format(PyExc_OSError, "%s has no THC_hooks", p); return NULL; }
  const ATCudaHooks *hooks = get();
  if (!hooks) return THP_raise();   /* no driver, no device: THC says why */
  if (at_cuda_register(hooks) < 0) return THP_raise();
  Py_RETURN_TRUE;
}

static PyObject *c_is_initialized(PyObject *m, PyObject *u) { return PyBool_FromLong(at_cuda != NULL); }

#define NEED_CUDA() do { if (lazy_init() < 0) return NULL; } while (0)

static int device_arg(PyObject *o, int *dev) {
  if (o == NULL || o == Py_None) { *dev = -1; return THP_cuda_resolve(dev); }
  if (PyLong_Check(o)) {
    *dev = (int)PyLong_AsLong(o);
    if (*dev == -1 && PyErr_Occurred()) return -1;
    if (*dev < 0) *dev = -1;
    return THP_cuda_resolve(dev);
  }
  int d;
  if (THPDevice_index(o, &d) < 0) return -1;
  if (d < 0) { PyErr_SetString(PyExc_ValueError, "Expected a cuda device, but got: cpu"); return -1; }
  *dev = d;
  return 0;
}

static PyObject *c_device_count(PyObject *m, PyObject *u) {
  NEED_CUDA();
  return PyLong_FromLong(at_cuda->device_count());
}
static PyObject *c_current_device(PyObject *m, PyObject *u) {
  NEED_CUDA();
  int d = at_cuda->current_device();
  return d < 0 ? THP_raise() : PyLong_FromLong(d);
}
static PyObject *c_set_device(PyObject *m, PyObject *o) {
  int d;
  if (device_arg(o, &d) < 0) return NULL;
  if (at_cuda->set_device(d) < 0) return THP_raise();
  Py_RETURN_NONE;
}
static PyObject *c_synchronize(PyObject *m, PyObject *o) {
  int d;
  if (device_arg(o, &d) < 0) return NULL;
  int rc;
  Py_BEGIN_ALLOW_THREADS rc = at_cuda->synchronize(d); Py_END_ALLOW_THREADS
  if (rc < 0) return THP_raise();
  Py_RETURN_NONE;
}
static PyObject *c_memory_stats(PyObject *m, PyObject *o) {
  int d;
  if (device_arg(o, &d) < 0) return NULL;
  int64_t st[AT_MEM_NSTATS] = {0};
  if (at_cuda->memory_stats(d, st) < 0) return THP_raise();
  return Py_BuildValue("{sLsLsLsLsLsLsLsL}", "allocated_bytes.all.current", (long long)st[AT_MEM_ALLOCATED],
                       "allocated_bytes.all.peak", (long long)st[AT_MEM_PEAK_ALLOCATED],
                       "reserved_bytes.all.current", (long long)st[AT_MEM_RESERVED],
                       "reserved_bytes.all.peak", (long long)st[AT_MEM_PEAK_RESERVED],
                       "num_alloc_retries", (long long)st[AT_MEM_NUM_ALLOC_RETRIES],
                       "num_ooms", (long long)st[AT_MEM_NUM_OOMS],
                       "allocation.all.allocated", (long long)st[AT_MEM_NUM_ALLOCS],
                       "allocation.all.freed", (long long)st[AT_MEM_NUM_FREES]);
}
static PyObject *c_reset_peak(PyObject *m, PyObject *o) {
  int d;
  if (device_arg(o, &d) < 0) return NULL;
  at_cuda->reset_peak_stats(d);
  Py_RETURN_NONE;
}
static PyObject *c_empty_cache(PyObject *m, PyObject *u) {
  if (at_cuda) at_cuda->empty_cache();
  Py_RETURN_NONE;
}
static PyObject *c_mem_get_info(PyObject *m, PyObject *o) {
  int d;
  if (device_arg(o, &d) < 0) return NULL;
  int64_t fr, tot;
  if (at_cuda->mem_get_info(d, &fr, &tot) < 0) return THP_raise();
  return Py_BuildValue("(LL)", (long long)fr, (long long)tot);
}

PyMethodDef THP_cuda_functions[] = {
  {"_register", c_register, METH_O, "loads libTHC (path) and routes CUDA tensors to it"},
  {"_is_initialized", c_is_initialized, METH_NOARGS, NULL},
  {"_device_count", c_device_count, METH_NOARGS, NULL},
  {"_current_device", c_current_device, METH_NOARGS, NULL},
  {"_set_device", c_set_device, METH_O, NULL},
  {"_synchronize", c_synchronize, METH_O, NULL},
  {"_memory_stats", c_memory_stats, METH_O, NULL},
  {"_reset_peak_memory_stats", c_reset_peak, METH_O, NULL},
  {"_empty_cache", c_empty_cache, METH_NOARGS, NULL},
  {"_mem_get_info", c_mem_get_info, METH_O, NULL},
  {NULL}
};
