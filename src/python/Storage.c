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

/* ---- the storage read and written as bytes (torch.UntypedStorage's element is one uint8) ---- */
/* host memory is read and written in place; CUDA storages refuse the in-place writers (NotImplementedError) */
static int refuse_device(const THStorage *s, const char *what) {
  if (refuse_meta(s) < 0) return -1;
  if (s->device < 0) return 0;
  PyErr_Format(PyExc_NotImplementedError, "UntypedStorage.%s of a CUDA storage is not supported in cthtorch; "
               "use the tensor ops on the device", what);
  return -1;
}

static PyObject *st_tolist(THPStorage *o, PyObject *u) {
  PyObject *b = st_tobytes(o, NULL);
  if (!b) return NULL;
  PyObject *l = PySequence_List(b);   /* iterating bytes gives ints */
  Py_DECREF(b);
  return l;
}

/* an index into the storage, wrapped and checked with torch's messages; -1 with an error set */
static Py_ssize_t st_index(THPStorage *o, PyObject *key) {
  if (!PyLong_Check(key) || PyBool_Check(key)) {
    PyErr_Format(PyExc_TypeError, "can't index a torch.UntypedStorage with %s", Py_TYPE(key)->tp_name);
    return -1;
  }
  Py_ssize_t n = (Py_ssize_t)o->s->nbytes, i = PyLong_AsSsize_t(key);
  if (i == -1 && PyErr_Occurred()) return -1;
  if (i < -n || i >= n) {   /* torch names a negative index after adding the size once */
    PyErr_Format(PyExc_IndexError, "index %zd out of range for storage of size %zd", i < 0 ? i + n : i, n);
    return -1;
  }
  return i < 0 ? i + n : i;
}

static PyObject *st_item(THPStorage *o, Py_ssize_t i) {
  if (refuse_meta(o->s) < 0) return NULL;
  if (i < 0 || (size_t)i >= o->s->nbytes) { PyErr_SetString(PyExc_IndexError, "storage index out of range"); return NULL; }
  unsigned char v;
  if (o->s->device >= 0) {
    if (at_cuda->memcpy(&v, (char *)o->s->data + i, 1, AT_D2H, false) < 0) return THP_raise();
  } else {
    v = ((unsigned char *)o->s->data)[i];
  }
  return PyLong_FromLong(v);
}

static PyObject *st_subscript(THPStorage *o, PyObject *key) {
  if (PySlice_Check(key)) {   /* torch's slice aliases the bytes: a storage view THStorage has no room for */
    PyErr_SetString(PyExc_NotImplementedError, "slicing a torch.UntypedStorage is not supported in cthtorch; "
                    "take a view of the tensor instead");
    return NULL;
  }
  Py_ssize_t i = st_index(o, key);
  return i < 0 ? NULL : st_item(o, i);
}

/* a byte value as torch stores it: an int taken modulo 256 (300 -> 44, -1 -> 255) */
static int st_byte(PyObject *v, unsigned char *out) {
  if (!PyLong_Check(v)) {
    PyErr_Format(PyExc_RuntimeError, "can only set storage content with a int types, but got %s instead",
                 Py_TYPE(v)->tp_name);
    return -1;
  }
  int overflow;
  long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
  if (x == -1 && PyErr_Occurred()) return -1;
  if (overflow) {   /* only the low byte matters: take it from the value mod 256 */
    PyObject *m = PyLong_FromLong(256), *r = m ? PyNumber_Remainder(v, m) : NULL;
    Py_XDECREF(m);
    if (!r) return -1;
    x = PyLong_AsLongLong(r);
    Py_DECREF(r);
  }
  *out = (unsigned char)(x & 0xff);
  return 0;
}

static int st_ass_subscript(THPStorage *o, PyObject *key, PyObject *v) {
  if (!v) { PyErr_SetString(PyExc_TypeError, "storage items cannot be deleted"); return -1; }
  if (refuse_device(o->s, "__setitem__") < 0) return -1;
  if (PySlice_Check(key)) {
    PyErr_SetString(PyExc_NotImplementedError, "slice assignment to a torch.UntypedStorage is not supported in "
                    "cthtorch; assign through a tensor over it");
    return -1;
  }
  Py_ssize_t i = st_index(o, key);
  unsigned char b;
  if (i < 0 || st_byte(v, &b) < 0) return -1;
  ((unsigned char *)o->s->data)[i] = b;
  return 0;
}

static PyObject *st_fill(THPStorage *o, PyObject *v) {
  unsigned char b;
  if (refuse_device(o->s, "fill_") < 0 || st_byte(v, &b) < 0) return NULL;
  if (o->s->nbytes) memset(o->s->data, b, o->s->nbytes);
  return Py_NewRef((PyObject *)o);
}

static PyObject *st_copy(THPStorage *o, PyObject *args, PyObject *kw) {
  static char *names[] = {"src", "non_blocking", NULL};
  PyObject *src, *nb = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O:copy_", names, &src, &nb)) return NULL;
  if (Py_TYPE(src) != &THPStorageType) {
    PyErr_Format(PyExc_TypeError, "copy_(): argument 'src' (position 1) must be torch.Storage, not %s",
                 Py_TYPE(src)->tp_name);
    return NULL;
  }
  THStorage *from = ((THPStorage *)src)->s;
  if (refuse_device(o->s, "copy_") < 0 || refuse_device(from, "copy_") < 0) return NULL;
  if (from->nbytes != o->s->nbytes) {
    PyErr_Format(PyExc_RuntimeError, "size does not match, self was %zu bytes but src was %zu bytes",
                 o->s->nbytes, from->nbytes);
    return NULL;
  }
  if (o->s->nbytes && from->data != o->s->data) memmove(o->s->data, from->data, o->s->nbytes);
  return Py_NewRef((PyObject *)o);
}

/* a new host storage holding a copy of these bytes (clone() of a CPU storage, cpu() of a CUDA one) */
static PyObject *st_host_copy(THPStorage *o) {
  if (refuse_meta(o->s) < 0) return NULL;
  THStorage *c = THStorage_new(o->s->nbytes, NULL);
  if (!c) return THP_raise();
  int rc = 0;
  if (!o->s->nbytes) rc = 0;
  else if (o->s->device >= 0) rc = at_cuda->memcpy(c->data, o->s->data, o->s->nbytes, AT_D2H, false);
  else memcpy(c->data, o->s->data, o->s->nbytes);
  if (rc < 0) { THStorage_free(c); return THP_raise(); }
  return wrap_storage(c);
}
static PyObject *st_clone(THPStorage *o, PyObject *u) {
  return refuse_device(o->s, "clone") < 0 ? NULL : st_host_copy(o);
}
/* on the host already: the storage itself, as torch returns it */
static PyObject *st_cpu(THPStorage *o, PyObject *u) {
  return o->s->device < 0 ? Py_NewRef((PyObject *)o) : st_host_copy(o);
}
static PyObject *st_new(THPStorage *o, PyObject *u) {
  THStorage *s = THStorage_new(0, NULL);
  return s ? wrap_storage(s) : THP_raise();
}
static PyObject *st_element_size(THPStorage *o, PyObject *u) { return PyLong_FromLong(1); }
static PyObject *st_type(THPStorage *o, PyObject *args) { return PyUnicode_FromString("torch.storage.UntypedStorage"); }
static PyObject *st_false(THPStorage *o, PyObject *args) { Py_RETURN_FALSE; }

/* torch's layout: one byte a line, each after a space, then the type line */
static PyObject *st_repr(THPStorage *o) {
  PyObject *dev = THPDevice_of(o->s->device);
  PyObject *dev_s = dev ? PyObject_Str(dev) : NULL;
  Py_XDECREF(dev);
  if (!dev_s) return NULL;
  PyObject *tail = PyUnicode_FromFormat("[torch.storage.UntypedStorage(device=%U) of size %zu]", dev_s, o->s->nbytes);
  Py_DECREF(dev_s);
  if (!tail) return NULL;
  if (o->s->device == TH_DEVICE_META) {   /* no bytes to show */
    PyObject *r = PyUnicode_FromFormat("...\n%U", tail);
    Py_DECREF(tail);
    return r;
  }
  PyObject *b = st_tobytes(o, NULL);
  if (!b) { Py_DECREF(tail); return NULL; }
  Py_ssize_t n = PyBytes_GET_SIZE(b);
  const unsigned char *p = (const unsigned char *)PyBytes_AS_STRING(b);
  char *buf = PyMem_Malloc((size_t)(n ? n * 5 : 2) + 1);   /* " 255\n" at most per byte */
  if (!buf) { Py_DECREF(b); Py_DECREF(tail); return PyErr_NoMemory(); }
  size_t k = 0;
  if (!n) { buf[k++] = ' '; buf[k++] = '\n'; }
  for (Py_ssize_t i = 0; i < n; i++) k += (size_t)sprintf(buf + k, " %u\n", p[i]);
  PyObject *head = PyUnicode_FromStringAndSize(buf, (Py_ssize_t)k);
  PyMem_Free(buf);
  Py_DECREF(b);
  PyObject *r = head ? PyUnicode_Concat(head, tail) : NULL;
  Py_XDECREF(head);
  Py_DECREF(tail);
  return r;
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
  {"tolist", (PyCFunction)st_tolist, METH_NOARGS, NULL},
  {"fill_", (PyCFunction)st_fill, METH_O, NULL},
  {"copy_", (PyCFunction)(void (*)(void))st_copy, METH_VARARGS | METH_KEYWORDS, NULL},
  {"clone", (PyCFunction)st_clone, METH_NOARGS, NULL},
  {"cpu", (PyCFunction)st_cpu, METH_NOARGS, NULL},
  {"new", (PyCFunction)st_new, METH_NOARGS, NULL},
  {"element_size", (PyCFunction)st_element_size, METH_NOARGS, NULL},
  {"type", (PyCFunction)st_type, METH_VARARGS, NULL},
  {"is_pinned", (PyCFunction)st_false, METH_VARARGS, NULL},
  {"__sizeof__", (PyCFunction)st_sizeof, METH_NOARGS, NULL},
  {NULL}
};
static PyObject *st_cdata(THPStorage *o, void *c) { return PyLong_FromVoidPtr(o->s); }
static PyGetSetDef st_getset[] = {
  {"device", (getter)st_device, NULL, NULL, NULL},
  {"_cdata", (getter)st_cdata, NULL, "the THStorage's address: equal for every view of one storage", NULL},
  {NULL}
};
static PySequenceMethods st_as_sequence = { .sq_length = (lenfunc)st_len, .sq_item = (ssizeargfunc)st_item };
static PyMappingMethods st_as_mapping = { .mp_length = (lenfunc)st_len, .mp_subscript = (binaryfunc)st_subscript,
                                          .mp_ass_subscript = (objobjargproc)st_ass_subscript };

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
  .tp_as_mapping = &st_as_mapping,
  .tp_repr = (reprfunc)st_repr,
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
