/* torch.UntypedStorage: a Python handle on a THStorage (bytes + allocator).
 * Serialization and shared memory work at this level: tensors are
 * (storage, dtype, offset, sizes, strides), so views stay views. */
#include "THP.h"
#include "ArgParser.h"
#include "../ATen/ATCuda.h"

typedef struct { PyObject_HEAD THStorage *s; } THPStorage;
static PyTypeObject THPStorageType;

static PyObject *wrap_storage(THStorage *s) {
  THPStorage *o = PyObject_New(THPStorage, &THPStorageType);
  if (!o) { THStorage_free(s); return NULL; }
  o->s = s;
  return (PyObject *)o;
}

static void storage_dealloc(THPStorage *o) {
  THStorage_free(o->s);
  Py_TYPE(o)->tp_free((PyObject *)o);
}

static PyObject *storage_new(PyTypeObject *tp, PyObject *args, PyObject *kw) {
  Py_ssize_t n = 0;
  if (!PyArg_ParseTuple(args, "|n:UntypedStorage", &n)) return NULL;
  if (n < 0) { PyErr_SetString(PyExc_RuntimeError, "Storage size must be non-negative"); return NULL; }
  THStorage *s = THStorage_new((size_t)n, NULL);
  if (!s) return THP_raise();
  return wrap_storage(s);
}

static PyObject *st_nbytes(THPStorage *o, PyObject *u) { return PyLong_FromSize_t(o->s->nbytes); }
static PyObject *st_data_ptr(THPStorage *o, PyObject *u) { return PyLong_FromVoidPtr(o->s->data); }
static Py_ssize_t st_len(THPStorage *o) { return (Py_ssize_t)o->s->nbytes; }
static PyObject *st_is_shared(THPStorage *o, PyObject *u) { return PyBool_FromLong(o->s->allocator == &THShmAllocator); }
/* a meta storage has a size and no bytes: reading or writing them is torch's error */
static int refuse_meta(const THStorage *s) {
  if (s->device != TH_DEVICE_META) return 0;
  PyErr_SetString(PyExc_NotImplementedError, "Cannot copy out of meta tensor; no data!");
  return -1;
}
static PyObject *st_tobytes(THPStorage *o, PyObject *u) {
  if (refuse_meta(o->s) < 0) return NULL;
  if (o->s->device < 0) return PyBytes_FromStringAndSize(o->s->data, o->s->nbytes);
  PyObject *b = PyBytes_FromStringAndSize(NULL, o->s->nbytes);   /* GPU bytes come across once */
  if (b && at_cuda->memcpy(PyBytes_AS_STRING(b), o->s->data, o->s->nbytes, AT_D2H, false) < 0) {
    Py_DECREF(b);
    return THP_raise();
  }
  return b;
}
static PyObject *st_device(THPStorage *o, void *c) { return THPDevice_of(o->s->device); }
static Py_hash_t st_hash(THPStorage *o) { return _Py_HashPointer(o->s); }
static PyObject *st_richcompare(PyObject *a, PyObject *b, int op) {
  if (Py_TYPE(a) != &THPStorageType || Py_TYPE(b) != &THPStorageType || (op != Py_EQ && op != Py_NE))
    Py_RETURN_NOTIMPLEMENTED;
  bool eq = ((THPStorage *)a)->s == ((THPStorage *)b)->s;
  return PyBool_FromLong(op == Py_EQ ? eq : !eq);
}
static PyObject *st_key(THPStorage *o, PyObject *u) { return PyLong_FromVoidPtr(o->s); }
/* sys.getsizeof counts the bytes the storage holds, as torch's does (torchinfo sums it as "Input size") */
static PyObject *st_sizeof(THPStorage *o, PyObject *u) {
  return PyLong_FromSize_t((size_t)Py_TYPE(o)->tp_basicsize + o->s->nbytes);
}

/* storage.copy_from_buffer(buf): fills the storage from a bytes-like object of the same size */
static PyObject *st_copy_from(THPStorage *o, PyObject *buf) {
  if (refuse_meta(o->s) < 0) return NULL;
  Py_buffer v;
  if (PyObject_GetBuffer(buf, &v, PyBUF_SIMPLE) < 0) return NULL;
  if ((size_t)v.len != o->s->nbytes) {
    PyErr_Format(PyExc_RuntimeError, "storage has %zu bytes but the record has %zd", o->s->nbytes, v.len);
    PyBuffer_Release(&v);
    return NULL;
  }
  int rc = 0;
  if (o->s->device >= 0) rc = at_cuda->memcpy(o->s->data, v.buf, v.len, AT_H2D, false);
  else memcpy(o->s->data, v.buf, v.len);
  PyBuffer_Release(&v);
  if (rc < 0) return THP_raise();
  Py_RETURN_NONE;
}

static int st_getbuffer(PyObject *self, Py_buffer *view, int flags) {
  THStorage *s = ((THPStorage *)self)->s;
  if (s->device == TH_DEVICE_META) { PyErr_SetString(PyExc_BufferError, "a meta storage has no data to export"); return -1; }
  if (s->device >= 0) {   /* GPU memory cannot be read through a host pointer */
    PyErr_SetString(PyExc_BufferError, "a CUDA storage exposes no host buffer: copy it with .cpu() first");
    return -1;
  }
  return PyBuffer_FillInfo(view, self, s->data, (Py_ssize_t)s->nbytes, 0, flags);
}
static PyBufferProcs st_as_buffer = { st_getbuffer, NULL };

static PyMethodDef st_methods[] = {
  {"nbytes", (PyCFunction)st_nbytes, METH_NOARGS, NULL},
  {"size", (PyCFunction)st_nbytes, METH_NOARGS, NULL},
  {"data_ptr", (PyCFunction)st_data_ptr, METH_NOARGS, NULL},
  {"is_shared", (PyCFunction)st_is_shared, METH_NOARGS, NULL},
  {"tobytes", (PyCFunction)st_tobytes, METH_NOARGS, NULL},
  {"_key", (PyCFunction)st_key, METH_NOARGS, "Identity of the underlying THStorage (shared by views)."},
  {"copy_from_buffer", (PyCFunction)st_copy_from, METH_O, NULL},
  {"__sizeof__", (PyCFunction)st_sizeof, METH_NOARGS, NULL},
  {NULL}
};
static PyGetSetDef st_getset[] = { {"device", (getter)st_device, NULL, NULL, NULL}, {NULL} };
static PySequenceMethods st_as_sequence = { .sq_length = (lenfunc)st_len };

static PyTypeObject THPStorageType = {
  PyVarObject_HEAD_INIT(NULL, 0)
  .tp_name = "torch.UntypedStorage",
  .tp_basicsize = sizeof(THPStorage),
  .tp_flags = Py_TPFLAGS_DEFAULT,
  .tp_new = storage_new,
  .tp_dealloc = (destructor)storage_dealloc,
  .tp_methods = st_methods,
  .tp_getset = st_getset,
  .tp_as_sequence = &st_as_sequence,
  .tp_as_buffer = &st_as_buffer,
  .tp_hash = (hashfunc)st_hash,
  .tp_richcompare = st_richcompare,
};

/* t.untyped_storage() */
PyObject *THP_untyped_storage(PyObject *self, PyObject *u) {
  THStorage *s = ((THPTensor *)self)->t->storage;
  THStorage_retain(s);
  return wrap_storage(s);
}

/* _tensor_from_storage(storage, dtype, offset, size, stride): a tensor over
 * the storage; the geometry is checked against its byte count. */
static PyObject *tensor_from_storage(PyObject *m, PyObject *args) {
  PyObject *st, *dt, *size, *stride;
  long long offset;
  if (!PyArg_ParseTuple(args, "O!O!LOO:_tensor_from_storage", &THPStorageType, &st, &THPDtypeType, &dt, &offset,
                        &size, &stride))
    return NULL;
  ATIntList sz, sd;
  if (ap_to_intlist(size, &sz, "_tensor_from_storage", "size") < 0 ||
      ap_to_intlist(stride, &sd, "_tensor_from_storage", "stride") < 0)
    return NULL;
  if (sz.n != sd.n) { PyErr_SetString(PyExc_RuntimeError, "size and stride have different lengths"); return NULL; }
  for (int i = 0; i < sd.n; i++)
    if (sd.v[i] < 0) { PyErr_SetString(PyExc_RuntimeError, "negative strides are not supported"); return NULL; }
  THTensor *t = THTensor_newWithStorage(((THPStorage *)st)->s, ((THPDtype *)dt)->dtype, offset, sz.n, sz.v, sd.v);
  return THPTensor_wrap(t);
}

/* ---- shared memory ---- */
/* t.share_memory_(): moves the storage's bytes into a POSIX shm segment.
 * Views share the THStorage struct, so they all see the move. */
static PyObject *share_memory_(PyObject *m, PyObject *tensor) {
  if (!THPTensor_Check(tensor)) { PyErr_SetString(PyExc_TypeError, "expected a tensor"); return NULL; }
  THStorage *s = ((THPTensor *)tensor)->t->storage;
  if (s->device == TH_DEVICE_META) { PyErr_SetString(PyExc_RuntimeError, "_share_fd_: only available on CPU"); return NULL; }
  /* already shared; CUDA memory is shared across processes by IPC handles, not moved (a no-op, as torch) */
  if (s->allocator == &THShmAllocator || s->device >= 0) return Py_NewRef(tensor);
  void *ctx;
  void *p = THShmAllocator.malloc(&THShmAllocator, s->nbytes, &ctx);
  if (!p) return THP_raise();
  if (s->nbytes) memcpy(p, s->data, s->nbytes);
  if (s->allocator) s->allocator->free(s->allocator, s->data, s->nbytes, s->ctx);
  s->data = p;
  s->ctx = ctx;
  s->allocator = &THShmAllocator;
  s->resizable = false;
  return Py_NewRef(tensor);
}

/* _empty_shared(size, dtype): a contiguous uninitialised tensor whose storage
 * is a fresh shm segment (DataLoader workers collate batches straight into it). */
static PyObject *empty_shared(PyObject *m, PyObject *args) {
  PyObject *size, *dt;
  if (!PyArg_ParseTuple(args, "OO!:_empty_shared", &size, &THPDtypeType, &dt)) return NULL;
  ATIntList sz;
  if (ap_to_intlist(size, &sz, "_empty_shared", "size") < 0) return NULL;
  THDtype dtype = ((THPDtype *)dt)->dtype;
  int64_t numel = 1, strides[TH_MAX_DIMS];
  for (int i = sz.n - 1; i >= 0; i--) {
    if (sz.v[i] < 0) { PyErr_SetString(PyExc_RuntimeError, "negative dimension"); return NULL; }
    strides[i] = numel;
    if (__builtin_mul_overflow(numel, sz.v[i], &numel)) {
      PyErr_SetString(PyExc_RuntimeError, "_empty_shared: the size is too large");
      return NULL;
    }
  }
  int64_t nbytes;
  if (__builtin_mul_overflow(numel, (int64_t)THDtype_size(dtype), &nbytes)) {
    PyErr_SetString(PyExc_RuntimeError, "_empty_shared: the size is too large");
    return NULL;
  }
  THStorage *s = THStorage_new((size_t)nbytes, &THShmAllocator);
  if (!s) return THP_raise();
  s->resizable = false;
  THTensor *t = THTensor_newWithStorage(s, dtype, 0, sz.n, sz.v, strides);
  THStorage_free(s);
  if (!t) return THP_raise();
  return THPTensor_wrap(t);
}

static PyObject *is_shared(PyObject *m, PyObject *tensor) {
  if (!THPTensor_Check(tensor)) { PyErr_SetString(PyExc_TypeError, "expected a tensor"); return NULL; }
  return PyBool_FromLong(((THPTensor *)tensor)->t->storage->allocator == &THShmAllocator);
}

/* _shm_handle(t) -> (name, nbytes): one handle for one _tensor_from_shm elsewhere */
static PyObject *shm_handle(PyObject *m, PyObject *tensor) {
  if (!THPTensor_Check(tensor)) { PyErr_SetString(PyExc_TypeError, "expected a tensor"); return NULL; }
  THStorage *s = ((THPTensor *)tensor)->t->storage;
  if (s->allocator != &THShmAllocator) {
    PyErr_SetString(PyExc_RuntimeError, "tensor is not in shared memory; call share_memory_() first");
    return NULL;
  }
  const char *name = THShm_handle(s->ctx);
  if (!name) return THP_raise();
  return Py_BuildValue("(sn)", name, (Py_ssize_t)s->nbytes);
}

/* _tensor_from_shm(name, nbytes, dtype, size, stride, offset): maps the
 * segment (the mapping keeps it alive after the name is unlinked). */
static PyObject *tensor_from_shm(PyObject *m, PyObject *args) {
  const char *name;
  Py_ssize_t nbytes;
  PyObject *dt, *size, *stride;
  long long offset;
  if (!PyArg_ParseTuple(args, "snO!OOL:_tensor_from_shm", &name, &nbytes, &THPDtypeType, &dt, &size, &stride, &offset))
    return NULL;
  ATIntList sz, sd;
  if (ap_to_intlist(size, &sz, "_tensor_from_shm", "size") < 0 ||
      ap_to_intlist(stride, &sd, "_tensor_from_shm", "stride") < 0)
    return NULL;
  void *ctx;
  void *p = THShm_attach(name, (size_t)nbytes, &ctx);
  if (!p) return THP_raise();
  THStorage *s = THStorage_newWithData(p, (size_t)nbytes, &THShmAllocator, ctx);
  if (!s) { THShmAllocator.free(&THShmAllocator, p, (size_t)nbytes, ctx); return THP_raise(); }
  THTensor *t = THTensor_newWithStorage(s, ((THPDtype *)dt)->dtype, offset, sz.n, sz.v, sd.v);
  THStorage_free(s);
  return THPTensor_wrap(t);
}

static PyMethodDef storage_functions[] = {
  {"_tensor_from_storage", tensor_from_storage, METH_VARARGS, NULL},
  {"_share_memory_", share_memory_, METH_O, NULL},
  {"_is_shared", is_shared, METH_O, NULL},
  {"_empty_shared", empty_shared, METH_VARARGS, NULL},
  {"_shm_handle", shm_handle, METH_O, NULL},
  {"_tensor_from_shm", tensor_from_shm, METH_VARARGS, NULL},
  {NULL}
};

int THP_initStorage(PyObject *m) {
  if (PyType_Ready(&THPStorageType) < 0) return -1;
  if (PyModule_AddObjectRef(m, "UntypedStorage", (PyObject *)&THPStorageType) < 0) return -1;
  return PyModule_AddFunctions(m, storage_functions);
}
