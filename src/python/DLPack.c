/* DLPack: zero-copy exchange of tensors with other libraries through
 * PyCapsules holding a DLManagedTensor ("dltensor", legacy) or a
 * DLManagedTensorVersioned ("dltensor_versioned").
 *
 * Export: the capsule's struct holds a reference on the tensor's storage; its
 * deleter drops it. A capsule nobody consumed calls the deleter when it dies.
 * Import: the consumer renames the capsule ("used_...") and wraps the memory
 * in a storage whose allocator calls the producer's deleter when the last
 * tensor over it is freed (the same external-memory storage that from_numpy
 * and frombuffer use, THStorage_newWithData). */
#include "THP.h"
#include "DLPack.h"

#include <stdlib.h>
#include <string.h>

#define INVALID_CAPSULE_MSG                                                                                   \
  "from_dlpack received an invalid capsule. Note that DLTensor capsules can be consumed only once, so you "  \
  "might have already constructed a tensor from it once."

/* ---- dtypes ---- */
static DLDataType dl_dtype_of(THDtype t) {
  DLDataType d = { kDLFloat, (uint8_t)(THDtype_size(t) * 8), 1 };
  switch (t) {
    case TH_Bool: d.code = kDLBool; break;
    case TH_UInt8: d.code = kDLUInt; break;
    case TH_Int8: case TH_Int16: case TH_Int32: case TH_Int64: d.code = kDLInt; break;
    case TH_BFloat16: d.code = kDLBfloat; break;
    case TH_ComplexFloat: case TH_ComplexDouble: d.code = kDLComplex; break;
    default: break;   /* Half, Float, Double */
  }
  return d;
}

/* The dtype of a DLDataType, or -1 with a Python error: torch's BufferError for
 * what it rejects, NotImplementedError for dtypes torch has and cthtorch lacks. */
static int th_dtype_of(DLDataType d, THDtype *out) {
  if (d.lanes != 1) {
    PyErr_Format(PyExc_BufferError, "ATen does not support lanes != 1 for dtype code%d", d.code);
    return -1;
  }
  const char *missing = NULL;
  THDtype t = TH_Undefined;
  switch (d.code) {
    case kDLInt:
      t = d.bits == 8 ? TH_Int8 : d.bits == 16 ? TH_Int16 : d.bits == 32 ? TH_Int32 : d.bits == 64 ? TH_Int64 : t;
      if (t == TH_Undefined) { PyErr_Format(PyExc_BufferError, "Unsupported kInt bits %d", d.bits); return -1; }
      break;
    case kDLUInt:
      if (d.bits == 8) t = TH_UInt8;
      else if (d.bits == 16) missing = "uint16";
      else if (d.bits == 32) missing = "uint32";
      else if (d.bits == 64) missing = "uint64";
      else { PyErr_Format(PyExc_BufferError, "Unsupported kUInt bits %d", d.bits); return -1; }
      break;
    case kDLFloat:
      t = d.bits == 16 ? TH_Half : d.bits == 32 ? TH_Float : d.bits == 64 ? TH_Double : t;
      if (t == TH_Undefined) { PyErr_Format(PyExc_BufferError, "Unsupported kFloat bits %d", d.bits); return -1; }
      break;
    case kDLBfloat:   /* torch names the code kFloat in this message too */
      if (d.bits != 16) { PyErr_Format(PyExc_BufferError, "Unsupported kFloat bits %d", d.bits); return -1; }
      t = TH_BFloat16;
      break;
    case kDLComplex:
      if (d.bits == 64) t = TH_ComplexFloat;
      else if (d.bits == 128) t = TH_ComplexDouble;
      else if (d.bits == 32) missing = "complex32";
      else { PyErr_Format(PyExc_BufferError, "Unsupported kFloat bits %d", d.bits); return -1; }   /* sic, torch's */
      break;
    case kDLBool:
      if (d.bits != 8) { PyErr_Format(PyExc_BufferError, "Unsupported kDLBool bits %d", d.bits); return -1; }
      t = TH_Bool;
      break;
    case 10: case 11: case 12: case 13: case 14: {   /* the float8 codes torch reads */
      static const char *const f8[][2] = { { "float8_e4m3fn", "Float8_e4m3fn" }, { "float8_e4m3fnuz", "Float8_e4m3fnuz" },
                                           { "float8_e5m2", "Float8_e5m2" }, { "float8_e5m2fnuz", "Float8_e5m2fnuz" },
                                           { "float8_e8m0fnu", "Float8_e8m0fnu" } };
      if (d.bits != 8) {
        PyErr_Format(PyExc_BufferError, "Unsupported kDL%s bits %d", f8[d.code - 10][1], d.bits);
        return -1;
      }
      missing = f8[d.code - 10][0];
      break;
    }
    default:
      PyErr_Format(PyExc_BufferError, "Unsupported code %d", d.code);
      return -1;
  }
  if (missing) {
    PyErr_Format(PyExc_NotImplementedError, "from_dlpack: the dtype torch.%s is not implemented in cthtorch", missing);
    return -1;
  }
  *out = t;
  return 0;
}

/* ---- export ---- */
/* One allocation per capsule: the managed struct (whichever kind), the storage
 * reference it holds, and the shape/strides arrays it points into. Plain
 * malloc: consumers may call the deleter from any thread without the GIL. */
typedef struct {
  union { DLManagedTensor legacy; DLManagedTensorVersioned versioned; } m;
  THStorage *storage;
  int64_t shape[TH_MAX_DIMS];
  int64_t strides[TH_MAX_DIMS];
} DLExport;

static void export_free(DLExport *e) {
  THStorage_free(e->storage);
  free(e);
}
static void legacy_deleter(DLManagedTensor *self) { export_free(self->manager_ctx); }
static void versioned_deleter(DLManagedTensorVersioned *self) { export_free(self->manager_ctx); }

/* A capsule still under its unused name was never consumed: it owns the struct. */
static void legacy_capsule_destructor(PyObject *cap) {
  if (!PyCapsule_IsValid(cap, THP_DLPACK_NAME)) return;
  DLManagedTensor *m = PyCapsule_GetPointer(cap, THP_DLPACK_NAME);
  if (m->deleter) m->deleter(m);
}
static void versioned_capsule_destructor(PyObject *cap) {
  if (!PyCapsule_IsValid(cap, THP_DLPACK_VERSIONED_NAME)) return;
  DLManagedTensorVersioned *m = PyCapsule_GetPointer(cap, THP_DLPACK_VERSIONED_NAME);
  if (m->deleter) m->deleter(m);
}

/* _to_dlpack(tensor, versioned=False, copied=False): the capsule sharing the
 * tensor's memory. Checks the protocol makes in Python (requires_grad, layout,
 * stream, copy) are Tensor.__dlpack__'s, in utils/dlpack.py. */
static PyObject *THP_to_dlpack(PyObject *m, PyObject *args) {
  PyObject *obj;
  int versioned = 0, copied = 0;
  if (!PyArg_ParseTuple(args, "O|pp:_to_dlpack", &obj, &versioned, &copied)) return NULL;
  if (!THPTensor_Check(obj)) {
    PyErr_Format(PyExc_TypeError, "_to_dlpack(): argument 'data' (position 1) must be Tensor, not %s",
                 Py_TYPE(obj)->tp_name);
    return NULL;
  }
  THTensor *t = ((THPTensor *)obj)->t;
  if (THTensor_isMeta(t)) {
    PyErr_SetString(PyExc_BufferError, "Cannot pack tensors on meta");
    return NULL;
  }
  DLExport *e = calloc(1, sizeof *e);
  if (!e) return PyErr_NoMemory();
  THStorage_retain(t->storage);
  e->storage = t->storage;
  memcpy(e->shape, t->sizes, t->ndim * sizeof(int64_t));
  memcpy(e->strides, t->strides, t->ndim * sizeof(int64_t));
  int dev = THTensor_device(t);
  DLTensor dl = {
    /* the first element itself (byte_offset 0), and NULL for no elements, as torch exports */
    .data = THTensor_numel(t) ? THTensor_data(t) : NULL,
    .device = { dev >= 0 ? kDLCUDA : kDLCPU, dev >= 0 ? dev : 0 },
    .ndim = t->ndim,
    .dtype = dl_dtype_of(t->dtype),
    .shape = e->shape,
    .strides = e->strides,
    .byte_offset = 0,
  };
  PyObject *cap;
  if (versioned) {
    DLManagedTensorVersioned *v = &e->m.versioned;
    v->version.major = THP_DLPACK_MAJOR;
    v->version.minor = THP_DLPACK_MINOR;
    v->manager_ctx = e;
    v->deleter = versioned_deleter;
    v->flags = copied ? THP_DLPACK_FLAG_IS_COPIED : 0;
    v->dl_tensor = dl;
    cap = PyCapsule_New(v, THP_DLPACK_VERSIONED_NAME, versioned_capsule_destructor);
  } else {
    DLManagedTensor *l = &e->m.legacy;
    l->manager_ctx = e;
    l->deleter = legacy_deleter;
    l->dl_tensor = dl;
    cap = PyCapsule_New(l, THP_DLPACK_NAME, legacy_capsule_destructor);
  }
  if (!cap) export_free(e);
  return cap;
}

/* ---- import ---- */
/* The storage over a consumed capsule's memory: ctx is the managed struct, and
 * freeing the storage hands it back to its producer. The producer's deleter
 * may be Python code (a ctypes callback) or take the GIL itself: hold it. */
static void *dl_no_malloc(const THAllocator *a, size_t n, void **ctx) { (void)a; (void)n; (void)ctx; return NULL; }
static const THAllocator dl_legacy_allocator, dl_versioned_allocator;
static void dl_free(const THAllocator *a, void *p, size_t n, void *ctx) {
  (void)p; (void)n;
  PyGILState_STATE st = PyGILState_Ensure();
  if (a == &dl_versioned_allocator) {
    DLManagedTensorVersioned *m = ctx;
    if (m->deleter) m->deleter(m);
  } else {
    DLManagedTensor *m = ctx;
    if (m->deleter) m->deleter(m);
  }
  PyGILState_Release(st);
}
static const THAllocator dl_legacy_allocator = { dl_no_malloc, dl_free, "dlpack" };
static const THAllocator dl_versioned_allocator = { dl_no_malloc, dl_free, "dlpack-versioned" };

static PyObject *overflow_error(int ndim, const int64_t *sizes, const int64_t *strides) {
  char a[256], b[256];
  PyErr_Format(PyExc_RuntimeError, "Storage size calculation overflowed with sizes=%s and strides=%s",
               THTensor_sizeStr(ndim, sizes, a, sizeof a), THTensor_sizeStr(ndim, strides, b, sizeof b));
  return NULL;
}

/* The tensor over dl's memory, or NULL with a Python error. On success the
 * returned tensor's storage owns ctx (freed through allocator); on failure
 * ctx is untouched (the capsule still owns it). */
static THTensor *tensor_over(const DLTensor *dl, const THAllocator *allocator, void *ctx) {
  THDtype dt;
  if (th_dtype_of(dl->dtype, &dt) < 0) return NULL;
  int type = dl->device.device_type;
  if (type == kDLCUDA || type == kDLCUDAHost || type == kDLCUDAManaged || type == kDLROCM) {
    PyErr_Format(PyExc_NotImplementedError,
                 "cthtorch: from_dlpack of GPU memory (DLPack device type %d) is not implemented; copy the "
                 "tensor to the CPU in the producer first", type);
    return NULL;
  }
  if (type != kDLCPU) {
    PyErr_Format(PyExc_BufferError, "Unsupported device_type: %d", type);
    return NULL;
  }
  int ndim = dl->ndim;
  if (ndim < 0 || ndim > TH_MAX_DIMS) {
    PyErr_Format(PyExc_RuntimeError, "from_dlpack: the capsule has %d dimensions; cthtorch supports at most %d dimensions",
                 ndim, TH_MAX_DIMS);
    return NULL;
  }
  if (ndim > 0 && !dl->shape) {   /* torch reads through it and crashes */
    PyErr_Format(PyExc_BufferError, "from_dlpack: the capsule has %d dimensions and no shape", ndim);
    return NULL;
  }
  int64_t strides[TH_MAX_DIMS] = { 0 };   /* an overflow's message prints them all */
  const int64_t *sizes = dl->shape;
  char buf[256];
  bool empty = false;
  for (int i = 0; i < ndim; i++) {
    if (sizes[i] < 0) {
      PyErr_Format(PyExc_RuntimeError, "Trying to create tensor with negative dimension %lld: %s",
                   (long long)sizes[i], THTensor_sizeStr(ndim, sizes, buf, sizeof buf));
      return NULL;
    }
    empty |= sizes[i] == 0;
  }
  for (int64_t i = 0, numel = 1; i < ndim && !empty; i++)
    if (__builtin_mul_overflow(numel, sizes[i], &numel)) {
      PyErr_SetString(PyExc_RuntimeError, "numel: integer multiplication overflow");
      return NULL;
    }
  if (dl->strides) {
    memcpy(strides, dl->strides, ndim * sizeof(int64_t));
  } else {   /* compact row-major; only an empty tensor's can still overflow */
    int64_t s = 1;
    for (int i = ndim - 1; i >= 0; i--) {
      strides[i] = s;
      if (sizes[i] > 1 && __builtin_mul_overflow(s, sizes[i], &s)) return (THTensor *)overflow_error(ndim, sizes, strides);
    }
  }
  /* bytes from the first element to the end of the last; tensors here have
   * no negative strides, so one is refused as torch's storage check does */
  int64_t hi = 0, nbytes = 0;
  if (!empty) {
    for (int i = 0; i < ndim; i++) {
      int64_t span;
      if (strides[i] < 0 || __builtin_mul_overflow(sizes[i] - 1, strides[i], &span) ||
          __builtin_add_overflow(hi, span, &hi))
        return (THTensor *)overflow_error(ndim, sizes, strides);
    }
    if (__builtin_add_overflow(hi, 1, &hi) || __builtin_mul_overflow(hi, (int64_t)THDtype_size(dt), &nbytes))
      return (THTensor *)overflow_error(ndim, sizes, strides);
    if (!dl->data) {   /* torch builds the tensor, and reading it crashes */
      PyErr_Format(PyExc_BufferError, "from_dlpack: the capsule's data is NULL but its shape %s has elements",
                   THTensor_sizeStr(ndim, sizes, buf, sizeof buf));
      return NULL;
    }
  }
  char *lo = dl->data ? (char *)dl->data + dl->byte_offset : NULL;   /* no elements: data may be NULL */
  int align = THDtype_isComplex(dt) ? THDtype_size(dt) / 2 : THDtype_size(dt);
  if (!empty && ((uintptr_t)lo) % align) {   /* the kernels load elements at their natural alignment */
    PyErr_Format(PyExc_BufferError, "from_dlpack: the data (byte offset %llu) is not aligned to its element size %d",
                 (unsigned long long)dl->byte_offset, align);
    return NULL;
  }
  /* no allocator until the tensor exists: a failure below must not call the
   * producer's deleter (the unconsumed capsule still owns the memory) */
  THStorage *s = THStorage_newWithData(lo, (size_t)nbytes, NULL, NULL);
  if (!s) { THP_raise(); return NULL; }
  THTensor *t = THTensor_newWithStorage(s, dt, 0, ndim, sizes, strides);
  if (t) { s->allocator = allocator; s->ctx = ctx; }
  THStorage_free(s);
  if (!t) THP_raise();
  return t;
}

/* _from_dlpack(capsule): consumes the capsule into a tensor sharing its memory. */
static PyObject *THP_from_dlpack(PyObject *m, PyObject *cap) {
  THTensor *t;
  if (PyCapsule_IsValid(cap, THP_DLPACK_VERSIONED_NAME)) {
    DLManagedTensorVersioned *v = PyCapsule_GetPointer(cap, THP_DLPACK_VERSIONED_NAME);
    if (v->version.major > THP_DLPACK_MAJOR) {
      /* the spec: another major version has another layout; only the deleter is safe to touch */
      unsigned major = v->version.major;
      if (PyCapsule_SetName(cap, THP_DLPACK_VERSIONED_USED_NAME) < 0) return NULL;
      if (v->deleter) v->deleter(v);
      PyErr_Format(PyExc_RuntimeError, "unsupported DLPack capsule major version: %u. Maximum supported version: %d",
                   major, THP_DLPACK_MAJOR);
      return NULL;
    }
    t = tensor_over(&v->dl_tensor, &dl_versioned_allocator, v);
    if (!t) return NULL;
    if (PyCapsule_SetName(cap, THP_DLPACK_VERSIONED_USED_NAME) < 0) goto fail;
  } else if (PyCapsule_IsValid(cap, THP_DLPACK_NAME)) {
    DLManagedTensor *l = PyCapsule_GetPointer(cap, THP_DLPACK_NAME);
    t = tensor_over(&l->dl_tensor, &dl_legacy_allocator, l);
    if (!t) return NULL;
    if (PyCapsule_SetName(cap, THP_DLPACK_USED_NAME) < 0) goto fail;
  } else {
    PyErr_SetString(PyExc_RuntimeError, INVALID_CAPSULE_MSG);
    return NULL;
  }
  return THPTensor_wrap(t);
fail:
  /* still named unused, so the capsule keeps owning the struct and its destructor calls the
   * producer's deleter when it dies: the tensor's storage drops the deleter, so freeing the tensor
   * leaves the memory to the capsule (freed once, by it; nothing leaks and nothing is freed twice) */
  t->storage->allocator = NULL;
  THTensor_free(t);
  return NULL;
}

PyMethodDef THP_dlpack_functions[] = {
  {"_to_dlpack", THP_to_dlpack, METH_VARARGS,
   "_to_dlpack(tensor, versioned=False, copied=False): a DLPack capsule sharing the tensor's memory (DLPack.c)."},
  {"_from_dlpack", THP_from_dlpack, METH_O, "_from_dlpack(capsule): consumes a DLPack capsule into a tensor (DLPack.c)."},
  {NULL}
};
