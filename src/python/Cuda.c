/* cthtorch._C._cuda: the Python face of libTHC. libTHC is loaded here, at
 * run time (dlopen), the first time a program touches CUDA, so the same
 * build imports on machines without a GPU or without the CUDA libraries.
 * cthtorch/cuda/__init__.py finds the library and the pip nvidia-* packages
 * and calls _register(path); every other function here needs that done. */
#include "THP.h"
#include "Bindings.h"
#include "../ATen/ATCuda.h"
#include "../ATen/ATRandom.h"

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
  if (!get) { PyErr_Format(PyExc_OSError, "%s has no THC_hooks", p); dlclose(h); return NULL; }
  const ATCudaHooks *hooks = get();   /* NULL: no driver or no device, and THC says why */
  if (!hooks || at_cuda_register(hooks) < 0) { dlclose(h); return THP_raise(); }
  Py_RETURN_TRUE;   /* the library stays loaded for the process: its table is in use */
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


static PyObject *c_device_props(PyObject *m, PyObject *o) {
  int d;
  if (device_arg(o, &d) < 0) return NULL;
  ATCudaProps p;
  if (at_cuda->device_props(d, &p) < 0) return THP_raise();
  return Py_BuildValue("{sssisisisLsisisisisL}", "name", p.name, "major", p.major, "minor", p.minor,
                       "multi_processor_count", p.multi_processor_count, "total_memory", (long long)p.total_memory,
                       "is_integrated", p.is_integrated, "is_multi_gpu_board", p.is_multi_gpu_board,
                       "warp_size", p.warp_size, "max_threads_per_multi_processor", p.max_threads_per_multi_processor,
                       "L2_cache_size", (long long)p.l2_cache_size);
}

/* ---- streams and events: handles travel to Python as integers (the
 * cudaStream_t / cudaEvent_t value, 0 = the legacy default stream), as
 * torch's Stream.cuda_stream does; cthtorch/cuda/streams.py owns them. ---- */
static int handle_arg(PyObject *o, void **h) {
  *h = PyLong_AsVoidPtr(o);
  return (*h == NULL && PyErr_Occurred()) ? -1 : 0;
}

static PyObject *c_stream_create(PyObject *m, PyObject *o) {
  NEED_CUDA();
  int prio = (int)PyLong_AsLong(o);
  if (prio == -1 && PyErr_Occurred()) return NULL;
  void *s = at_cuda->stream_create(prio);
  return s ? PyLong_FromVoidPtr(s) : THP_raise();
}

/* f(handle) -> 0 / -1: the calls that only report success */
#define HANDLE_CALL(cname, field)                              \
  static PyObject *cname(PyObject *m, PyObject *o) {           \
    NEED_CUDA();                                               \
    void *h;                                                   \
    if (handle_arg(o, &h) < 0) return NULL;                    \
    int rc;                                                    \
    Py_BEGIN_ALLOW_THREADS rc = at_cuda->field(h); Py_END_ALLOW_THREADS \
    if (rc < 0) return THP_raise();                            \
    Py_RETURN_NONE;                                            \
  }
HANDLE_CALL(c_stream_destroy, stream_destroy)
HANDLE_CALL(c_set_stream, set_stream)
HANDLE_CALL(c_stream_synchronize, stream_synchronize)
HANDLE_CALL(c_event_destroy, event_destroy)
HANDLE_CALL(c_event_synchronize, event_synchronize)

/* 1 done, 0 busy, -1 error */
#define QUERY_CALL(cname, field)                               \
  static PyObject *cname(PyObject *m, PyObject *o) {           \
    NEED_CUDA();                                               \
    void *h;                                                   \
    if (handle_arg(o, &h) < 0) return NULL;                    \
    int rc = at_cuda->field(h);                                \
    return rc < 0 ? THP_raise() : PyBool_FromLong(rc);         \
  }
QUERY_CALL(c_stream_query, stream_query)
QUERY_CALL(c_event_query, event_query)

static PyObject *c_current_stream(PyObject *m, PyObject *u) {
  NEED_CUDA();
  return PyLong_FromVoidPtr(at_cuda->current_stream());
}

/* (a, b): the two-handle calls */
static int two_handles(PyObject *args, void **a, void **b) {
  PyObject *x, *y;
  if (!PyArg_ParseTuple(args, "OO", &x, &y)) return -1;
  return handle_arg(x, a) < 0 || handle_arg(y, b) < 0 ? -1 : 0;
}
static PyObject *c_stream_wait_event(PyObject *m, PyObject *args) {
  NEED_CUDA();
  void *s, *e;
  if (two_handles(args, &s, &e) < 0) return NULL;
  if (at_cuda->stream_wait_event(s, e) < 0) return THP_raise();
  Py_RETURN_NONE;
}
static PyObject *c_event_record(PyObject *m, PyObject *args) {
  NEED_CUDA();
  void *e, *s;
  if (two_handles(args, &e, &s) < 0) return NULL;
  if (at_cuda->event_record(e, s) < 0) return THP_raise();
  Py_RETURN_NONE;
}
static PyObject *c_event_elapsed(PyObject *m, PyObject *args) {
  NEED_CUDA();
  void *a, *b;
  if (two_handles(args, &a, &b) < 0) return NULL;
  float ms = 0;
  if (at_cuda->event_elapsed(a, b, &ms) < 0) return THP_raise();
  return PyFloat_FromDouble(ms);
}
static PyObject *c_event_create(PyObject *m, PyObject *args) {
  NEED_CUDA();
  int timing, blocking;
  if (!PyArg_ParseTuple(args, "pp", &timing, &blocking)) return NULL;
  void *e = at_cuda->event_create(timing, blocking);
  return e ? PyLong_FromVoidPtr(e) : THP_raise();
}

/* ---- pinned host memory (the hook table's host_allocator) ---- */
static PyObject *c_pin_memory(PyObject *m, PyObject *o) {
  if (!THPTensor_Check(o)) { PyErr_SetString(PyExc_TypeError, "pin_memory: expected a Tensor"); return NULL; }
  NEED_CUDA();
  const THTensor *src = ((THPTensor *)o)->t;
  if (THTensor_device(src) >= 0) {
    PyErr_SetString(PyExc_RuntimeError, "cannot pin a CUDA tensor: only dense CPU tensors can be pinned");
    return NULL;
  }
  THTensor *r = THTensor_newWithAllocator(src->dtype, src->ndim, src->sizes, at_cuda->host_allocator);
  if (!r) return THP_raise();
  if (at_copy_(r, src) < 0) { THTensor_free(r); return THP_raise(); }
  return THPTensor_wrap(r);
}
static PyObject *c_is_pinned(PyObject *m, PyObject *o) {
  if (!THPTensor_Check(o)) { PyErr_SetString(PyExc_TypeError, "is_pinned: expected a Tensor"); return NULL; }
  const THTensor *t = ((THPTensor *)o)->t;
  return PyBool_FromLong(at_cuda && t->storage && t->storage->allocator == at_cuda->host_allocator);
}

/* The whole storage of a CUDA tensor, copied to host bytes (torch.save writes
 * storages, not tensors, so views keep sharing in the file). */
static PyObject *c_storage_to_host(PyObject *m, PyObject *o) {
  if (!THPTensor_Check(o)) { PyErr_SetString(PyExc_TypeError, "expected a Tensor"); return NULL; }
  const THTensor *t = ((THPTensor *)o)->t;
  int dev = THTensor_device(t);
  if (dev < 0) { PyErr_SetString(PyExc_ValueError, "expected a CUDA tensor"); return NULL; }
  NEED_CUDA();
  const THStorage *st = t->storage;
  PyObject *b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)st->nbytes);
  if (!b) return NULL;
  int rc;
  Py_BEGIN_ALLOW_THREADS
  rc = at_cuda->set_device(dev) < 0 ? -1 : at_cuda->memcpy(PyBytes_AS_STRING(b), st->data, st->nbytes, AT_D2H, false);
  Py_END_ALLOW_THREADS
  if (rc < 0) { Py_DECREF(b); return THP_raise(); }
  return b;
}

/* the CUDA generator (ATRandom.c): Philox (seed, offset); needs no GPU to set */
static PyObject *c_manual_seed(PyObject *m, PyObject *seed) {
  unsigned long long v = PyLong_AsUnsignedLongLongMask(seed);
  if (v == (unsigned long long)-1 && PyErr_Occurred()) return NULL;
  at_cuda_manual_seed(v);
  Py_RETURN_NONE;
}
static PyObject *c_initial_seed(PyObject *m, PyObject *u) { return PyLong_FromUnsignedLongLong(at_cuda_initial_seed()); }
static PyObject *c_get_rng_state(PyObject *m, PyObject *u) {
  uint64_t seed, offset;
  at_cuda_rng_state(&seed, &offset);
  return Py_BuildValue("(KK)", (unsigned long long)seed, (unsigned long long)offset);
}
static PyObject *c_set_rng_state(PyObject *m, PyObject *args) {
  unsigned long long seed, offset;
  if (!PyArg_ParseTuple(args, "KK:_set_rng_state", &seed, &offset)) return NULL;
  at_cuda_set_rng_state(seed, offset);
  Py_RETURN_NONE;
}

/* torch.autocast('cuda') state for the dispatch point (Bindings.c) */
static PyObject *c_set_autocast(PyObject *m, PyObject *args) {
  (void)m;
  return THP_set_autocast_state(args, "pO:_set_autocast", &THP_autocast_cuda, &THP_autocast_cuda_dtype);
}

/* torch.backends.cudnn's flags live in libATen (at_cudnn_flags), so they can
 * be set before libTHC loads and are read by every convolution and batch norm */
static PyObject *c_cudnn_flags(PyObject *m, PyObject *u) {
  const ATCudnnFlags *f = &at_cudnn_flags;
  return Py_BuildValue("(NNNN)", PyBool_FromLong(f->enabled), PyBool_FromLong(f->benchmark),
                       PyBool_FromLong(f->deterministic), PyBool_FromLong(f->allow_tf32));
}
static PyObject *c_set_cudnn_flags(PyObject *m, PyObject *args) {
  int e, b, d, t;
  if (!PyArg_ParseTuple(args, "pppp:_set_cudnn_flags", &e, &b, &d, &t)) return NULL;
  at_cudnn_flags = (ATCudnnFlags){ e != 0, b != 0, d != 0, t != 0 };
  Py_RETURN_NONE;
}
/* cudnnGetVersion(); RuntimeError saying why when CUDA or cuDNN cannot load */
static PyObject *c_cudnn_version(PyObject *m, PyObject *u) {
  NEED_CUDA();
  char why[512] = "";
  int v = at_cuda->cudnn_version(why, (int)sizeof why);
  if (v <= 0) { PyErr_SetString(PyExc_RuntimeError, why[0] ? why : "cuDNN is not available"); return NULL; }
  return PyLong_FromLong(v);
}
/* (calls cuDNN took, calls it declined): tests check which path ran */
static PyObject *c_cudnn_counts(PyObject *m, PyObject *u) {
  return Py_BuildValue("(LL)", (long long)at_cudnn_taken, (long long)at_cudnn_declined);
}

PyMethodDef THP_cuda_functions[] = {
  {"_cudnn_flags", c_cudnn_flags, METH_NOARGS, "(enabled, benchmark, deterministic, allow_tf32)"},
  {"_set_cudnn_flags", c_set_cudnn_flags, METH_VARARGS, "(enabled, benchmark, deterministic, allow_tf32)"},
  {"_cudnn_version", c_cudnn_version, METH_NOARGS, NULL},
  {"_cudnn_counts", c_cudnn_counts, METH_NOARGS, NULL},
  {"_manual_seed", c_manual_seed, METH_O, NULL},
  {"_set_autocast", c_set_autocast, METH_VARARGS, NULL},
  {"_initial_seed", c_initial_seed, METH_NOARGS, NULL},
  {"_get_rng_state", c_get_rng_state, METH_NOARGS, NULL},
  {"_set_rng_state", c_set_rng_state, METH_VARARGS, NULL},
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
  {"_device_props", c_device_props, METH_O, NULL},
  {"_stream_create", c_stream_create, METH_O, "priority -> handle"},
  {"_stream_destroy", c_stream_destroy, METH_O, NULL},
  {"_current_stream", c_current_stream, METH_NOARGS, NULL},
  {"_set_stream", c_set_stream, METH_O, NULL},
  {"_stream_query", c_stream_query, METH_O, NULL},
  {"_stream_synchronize", c_stream_synchronize, METH_O, NULL},
  {"_stream_wait_event", c_stream_wait_event, METH_VARARGS, "(stream, event)"},
  {"_event_create", c_event_create, METH_VARARGS, "(enable_timing, blocking) -> handle"},
  {"_event_destroy", c_event_destroy, METH_O, NULL},
  {"_event_record", c_event_record, METH_VARARGS, "(event, stream)"},
  {"_event_query", c_event_query, METH_O, NULL},
  {"_event_synchronize", c_event_synchronize, METH_O, NULL},
  {"_event_elapsed", c_event_elapsed, METH_VARARGS, "(start, end) -> ms"},
  {"_pin_memory", c_pin_memory, METH_O, "a copy of a CPU tensor in pinned (page-locked) host memory"},
  {"_is_pinned", c_is_pinned, METH_O, NULL},
  {"_storage_to_host", c_storage_to_host, METH_O, "a CUDA tensor's whole storage as host bytes"},
  {NULL}
};
