/* Tensors from Python data: nested sequences, scalars, and anything with
 * the buffer protocol (numpy arrays) — copied (tensor) or shared
 * (from_numpy, as_tensor). Also the buffer protocol of tensors themselves,
 * which is how .numpy() shares memory the other way. */
#include "THP.h"
#include "ArgParser.h"

#include <string.h>
#include <complex.h>

/* ---- buffer format <-> dtype ---- */
static int dtype_from_format(const char *fmt, Py_ssize_t itemsize, THDtype *out) {
  while (*fmt == '<' || *fmt == '=' || *fmt == '@' || *fmt == '!' || *fmt == '>') {
    if (*fmt == '>' || *fmt == '!') return -2;   /* big-endian data */
    fmt++;
  }
  if (fmt[0] == 'Z' && fmt[1] && !fmt[2]) {   /* complex: 'Zf', 'Zd' (PEP 3118) */
    if (fmt[1] == 'f') { *out = TH_ComplexFloat; return 0; }
    if (fmt[1] == 'd') { *out = TH_ComplexDouble; return 0; }
    return -1;
  }
  if (fmt[0] && fmt[1]) return -1;
  switch (fmt[0]) {
    case '?': *out = TH_Bool; return 0;
    case 'b': *out = TH_Int8; return 0;
    case 'B': *out = TH_UInt8; return 0;
    case 'h': *out = TH_Int16; return 0;
    case 'i': *out = TH_Int32; return 0;
    case 'l': case 'q': if (itemsize == 8) { *out = TH_Int64; return 0; } *out = TH_Int32; return 0;
    case 'e': *out = TH_Half; return 0;
    case 'f': *out = TH_Float; return 0;
    case 'd': *out = TH_Double; return 0;
    default: return -1;
  }
}

static const char *format_of(THDtype t) {
  switch (t) {
    case TH_Bool: return "?";
    case TH_UInt8: return "B";
    case TH_Int8: return "b";
    case TH_Int16: return "h";
    case TH_Int32: return "i";
    case TH_Int64: return "q";
    case TH_Half: return "e";
    case TH_Float: return "f";
    case TH_Double: return "d";
    case TH_ComplexFloat: return "Zf";
    case TH_ComplexDouble: return "Zd";
    default: return NULL;
  }
}

static int unsupported_numpy_type(PyObject *obj) {
  PyObject *dt = PyObject_GetAttrString(obj, "dtype");
  if (!dt) PyErr_Clear();
  PyErr_Format(PyExc_TypeError,
               "can't convert np.ndarray of type numpy.%S. The only supported types are: float64, float32, "
               "float16, complex64, complex128, int64, int32, int16, int8, uint8, and bool (cthtorch has no "
               "uint16/32/64 dtypes).", dt ? dt : Py_None);
  Py_XDECREF(dt);
  return -1;
}

/* The dtype a buffer's format names, or a Python error (byte order, or a
 * numpy type with no cthtorch dtype such as uint16). */
static int buffer_dtype(PyObject *obj, const Py_buffer *v, THDtype *out) {
  int rc = dtype_from_format(v->format ? v->format : "B", v->itemsize, out);
  if (rc == -2) {
    PyErr_SetString(PyExc_ValueError, "given numpy array has byte order different from the native byte order. "
                    "Conversion between byte orders is currently not supported.");
    return -1;
  }
  if (rc < 0) return unsupported_numpy_type(obj);
  return 0;
}

/* A storage over a Py_buffer: freeing it releases the buffer (under the GIL). */
typedef struct { Py_buffer view; } BufCtx;
static void *buf_malloc(const THAllocator *a, size_t n, void **ctx) { (void)a; (void)n; (void)ctx; return NULL; }
static void buf_free(const THAllocator *a, void *ptr, size_t n, void *ctx) {
  (void)a; (void)ptr; (void)n;
  BufCtx *c = ctx;
  PyGILState_STATE st = PyGILState_Ensure();
  PyBuffer_Release(&c->view);
  PyMem_RawFree(c);
  PyGILState_Release(st);
}
static const THAllocator buffer_allocator = { buf_malloc, buf_free, "python-buffer" };

/* A tensor over lo.. of c's buffer, the storage holding c (which is released
 * when the storage is freed). Consumes c: on failure the buffer is released
 * here and NULL returned with a Python error set. */
static THTensor *tensor_over_buffer(BufCtx *c, char *lo, size_t nbytes, THDtype dt, int ndim, const int64_t *sizes,
                                    const int64_t *strides) {
  THStorage *s = THStorage_newWithData(lo, nbytes, &buffer_allocator, c);
  if (!s) {
    PyBuffer_Release(&c->view);
    PyMem_RawFree(c);
    THP_raise();
    return NULL;
  }
  THTensor *t = THTensor_newWithStorage(s, dt, 0, ndim, sizes, strides);
  THStorage_free(s);   /* the tensor holds it now (or freeing it released c) */
  if (!t) THP_raise();
  return t;
}

/* Copies a strided buffer into contiguous memory, element by element
 * (memcpy: no aligned loads from src). Strides are in elements. */
static void copy_unaligned(char *dst, const char *src, int ndim, const int64_t *sizes, const int64_t *strides,
                           int itemsize, bool empty) {
  if (empty) return;
  int64_t idx[TH_MAX_DIMS] = {0};
  for (;;) {
    int64_t off = 0;
    for (int i = 0; i < ndim; i++) off += idx[i] * strides[i];
    memcpy(dst, src + off * itemsize, itemsize);
    dst += itemsize;
    int d = ndim - 1;
    while (d >= 0 && ++idx[d] == sizes[d]) idx[d--] = 0;
    if (d < 0) return;
  }
}

/* A read-only array's or buffer's warning, once per process as PyTorch's TORCH_WARN_ONCE (its text says
   so): *warned records that it was given. */
static int warn_readonly_once(int *warned, const char *msg) {
  if (*warned) return 0;
  *warned = 1;
  return THP_warn(PyExc_UserWarning, msg);
}

static int warned_readonly_array, warned_readonly_buffer;

/* Shares the memory of obj (buffer protocol). warn_readonly: PyTorch's
 * warning for non-writable numpy arrays (the tensor can write anyway). */
static THTensor *share_buffer(PyObject *obj, bool warn_readonly) {
  BufCtx *c = PyMem_RawMalloc(sizeof *c);
  if (!c) { PyErr_NoMemory(); return NULL; }
  if (PyObject_GetBuffer(obj, &c->view, PyBUF_RECORDS_RO) < 0) { PyMem_RawFree(c); return NULL; }
  Py_buffer *v = &c->view;
  THDtype dt;
  THTensor *t = NULL;
  if (buffer_dtype(obj, v, &dt) < 0) goto release;
  if (v->ndim > TH_MAX_DIMS) {
    PyErr_Format(PyExc_ValueError, "number of dimensions cannot be greater than %d", TH_MAX_DIMS);
    goto release;
  }
  if (v->readonly && warn_readonly &&
      warn_readonly_once(&warned_readonly_array,
                   "The given NumPy array is not writable, and PyTorch does not support non-writable tensors. "
                   "This means writing to this tensor will result in undefined behavior. You may want to copy the "
                   "array to protect its data or make it writable before converting it to a tensor. This type of "
                   "warning will be suppressed for the rest of this program.") < 0)
    goto release;
  int64_t sizes[TH_MAX_DIMS], strides[TH_MAX_DIMS];
  char *lo = v->buf;
  int64_t span_hi = 0;
  for (int i = 0; i < v->ndim; i++) {
    sizes[i] = v->shape[i];
    Py_ssize_t st = v->strides ? v->strides[i] : 0;
    if (st < 0) {
      PyErr_SetString(PyExc_ValueError,
                      "At least one stride in the given numpy array is negative, and tensors with negative strides "
                      "are not currently supported. (You can probably work around this by making a copy of your "
                      "array  with array.copy().) ");
      goto release;
    }
    if (st % v->itemsize) {
      PyErr_SetString(PyExc_ValueError, "given numpy array strides not a multiple of the element byte size. "
                                        "Copy the numpy array to reallocate the memory.");
      goto release;
    }
    strides[i] = st / v->itemsize;
    if (sizes[i] > 0) span_hi += (sizes[i] - 1) * strides[i];
  }
  if (!v->strides) {   /* C-contiguous buffer without strides */
    int64_t s = 1;
    for (int i = v->ndim - 1; i >= 0; i--) { strides[i] = s; s *= sizes[i]; }
    span_hi = s - 1;
  }
  bool empty = false;
  for (int i = 0; i < v->ndim; i++) empty |= sizes[i] == 0;
  if (((uintptr_t)lo) % THDtype_size(dt)) {
    /* PyTorch shares an unaligned array; the kernels here load elements at
     * their natural alignment, so cthtorch copies it instead */
    t = THTensor_new(dt, v->ndim, sizes);
    if (!t) { THP_raise(); goto release; }
    copy_unaligned(THTensor_data(t), lo, v->ndim, sizes, strides, THDtype_size(dt), empty);
    goto release;   /* the copy does not keep the buffer */
  }
  size_t nbytes = empty ? 0 : (size_t)(span_hi + 1) * THDtype_size(dt);
  return tensor_over_buffer(c, lo, nbytes, dt, v->ndim, sizes, strides);
release:   /* t: the copy, or NULL on error */
  PyBuffer_Release(&c->view);
  PyMem_RawFree(c);
  return t;
}

/* numpy.ndarray or a subclass (np.memmap, np.matrix, user classes). */
static bool is_ndarray(PyObject *o) {
  for (PyTypeObject *tp = Py_TYPE(o); tp; tp = tp->tp_base)
    if (!strcmp(tp->tp_name, "numpy.ndarray")) return true;
  return false;
}

/* ---- nested sequences ---- */
typedef struct {
  int ndim;
  int64_t sizes[TH_MAX_DIMS];
  bool leaf_seen;    /* a scalar fixed ndim: no sequence may sit at depth ndim */
  THDtype dtype;     /* every leaf's dtype promoted (torch's rule); Undefined: no leaf yet */
} Infer;

static bool is_numpy_scalar(PyObject *o) {
  return !strncmp(Py_TYPE(o)->tp_name, "numpy.", 6) && !is_ndarray(o);
}

/* A leaf's dtype: Python scalars give torch's defaults (bool, int64, the
 * default float, its complex), numpy scalars and one-element tensors their
 * own dtype. -1 with the error set when the leaf is no scalar. */
static int leaf_dtype(PyObject *o, THDtype *out) {
  if (is_numpy_scalar(o)) {   /* before PyFloat_Check: np.float64 subclasses float */
    Py_buffer v;
    if (PyObject_GetBuffer(o, &v, PyBUF_RECORDS_RO) < 0) {
      PyErr_Clear();
      PyErr_Format(PyExc_TypeError, "new(): invalid data type '%s'", Py_TYPE(o)->tp_name);
      return -1;
    }
    int rc = buffer_dtype(o, &v, out);
    PyBuffer_Release(&v);
    return rc;
  }
  if (PyBool_Check(o)) { *out = TH_Bool; return 0; }
  if (PyLong_Check(o)) { *out = TH_Int64; return 0; }
  if (PyFloat_Check(o)) { *out = at_default_dtype(); return 0; }
  if (PyComplex_Check(o)) { *out = THDtype_toComplex(at_default_dtype()); return 0; }
  if (THPTensor_Check(o)) {
    THTensor *t = ((THPTensor *)o)->t;
    if (THTensor_numel(t) != 1 || t->ndim != 0) {
      PyErr_SetString(PyExc_ValueError, "only one element tensors can be converted to Python scalars");
      return -1;
    }
    if (THP_refuse_meta_value(t) < 0) return -1;   /* no value to read: the error is set */
    *out = t->dtype;
    return 0;
  }
  PyErr_Format(PyExc_TypeError, "new(): invalid data type '%s'", Py_TYPE(o)->tp_name);
  return -1;
}

/* Records that depth holds n elements, or checks it against what an earlier
 * sibling recorded. */
static int note_size(Infer *inf, int depth, int64_t n) {
  if (depth >= TH_MAX_DIMS) { PyErr_SetString(PyExc_ValueError, "too many dimensions"); return -1; }
  if (depth == inf->ndim) {
    if (inf->leaf_seen) {
      PyErr_Format(PyExc_TypeError, "new(): expected a scalar at dim %d (got a sequence of length %lld)", depth,
                   (long long)n);
      return -1;
    }
    inf->sizes[inf->ndim++] = n;
  } else if (inf->sizes[depth] != n) {
    PyErr_Format(PyExc_ValueError, "expected sequence of length %lld at dim %d (got %lld)",
                 (long long)inf->sizes[depth], depth, (long long)n);
    return -1;
  }
  return 0;
}

static int infer(PyObject *o, int depth, Infer *inf) {
  if (THPTensor_Check(o) && ((THPTensor *)o)->t->ndim > 0) {
    PyErr_SetString(PyExc_ValueError, "only one element tensors can be converted to Python scalars");
    return -1;
  }
  if (is_ndarray(o)) {
    /* a numpy array inside a list (torch warns that this is slow): its shape
     * extends the list's, its dtype joins the promotion; fill copies it whole */
    Py_buffer v;
    if (PyObject_GetBuffer(o, &v, PyBUF_RECORDS_RO) < 0) return -1;
    THDtype adt;
    int rc = v.ndim == 0 ? 1 : buffer_dtype(o, &v, &adt);
    for (int i = 0; rc == 0 && i < v.ndim; i++) rc = note_size(inf, depth + i, v.shape[i]);
    PyBuffer_Release(&v);
    if (rc < 0) return -1;
    if (rc == 0) {
      inf->dtype = at_promote_types(inf->dtype, adt);
      return 0;
    }
    /* a 0-d array: not a sequence, and torch takes no scalar from it */
    PyErr_Format(PyExc_TypeError, "new(): invalid data type '%s'", Py_TYPE(o)->tp_name);
    return -1;
  }
  if (PySequence_Check(o) && !PyUnicode_Check(o) && !PyBytes_Check(o) && !THPTensor_Check(o) &&
      !(Py_TYPE(o)->tp_as_number && PyIndex_Check(o))) {
    Py_ssize_t n = PySequence_Size(o);
    if (n < 0) return -1;
    if (note_size(inf, depth, n) < 0) return -1;
    for (Py_ssize_t i = 0; i < n; i++) {
      PyObject *item = PySequence_GetItem(o, i);
      if (!item) return -1;
      int rc = infer(item, depth + 1, inf);
      Py_DECREF(item);
      if (rc < 0) return -1;
    }
    return 0;
  }
  /* torch walks the first elements as sequences to size the tensor, and a str is one: a non-empty str as the
   * first leaf under a list runs that walk out of dimensions */
  if (PyUnicode_Check(o) && depth > 0 && depth == inf->ndim && !inf->leaf_seen && PyUnicode_GET_LENGTH(o) > 0) {
    PyErr_SetString(PyExc_ValueError, "too many dimensions 'str'");
    return -1;
  }
  THDtype ldt;
  if (leaf_dtype(o, &ldt) < 0) return -1;   /* torch infers the dtype first: a str is an invalid type */
  if (depth != inf->ndim) {   /* a scalar where the first element had a sequence: torch's words */
    PyErr_SetString(PyExc_TypeError, "not a sequence");
    return -1;
  }
  inf->leaf_seen = true;
  inf->dtype = at_promote_types(inf->dtype, ldt);
  return 0;
}

static int store(char *p, THDtype dt, PyObject *o) {
  ATScalar s;
  if (THDtype_isComplex(dt) || PyComplex_Check(o) || (strstr(Py_TYPE(o)->tp_name, "numpy.complex"))) {
    Py_complex c;
    if (THPTensor_Check(o)) {
      THTensor *t = ((THPTensor *)o)->t;
      if (THDtype_isComplex(t->dtype)) {
        c.real = t->dtype == TH_ComplexFloat ? crealf(*(float _Complex *)THTensor_data(t)) : creal(*(double _Complex *)THTensor_data(t));
        c.imag = t->dtype == TH_ComplexFloat ? cimagf(*(float _Complex *)THTensor_data(t)) : cimag(*(double _Complex *)THTensor_data(t));
      } else { c.real = at_item_double(t); c.imag = 0; }
    } else {
      c = PyComplex_AsCComplex(o);
      if (c.real == -1.0 && PyErr_Occurred()) return -1;
    }
    if (!THDtype_isComplex(dt)) {   /* a complex number into a real tensor: torch keeps the real part */
      PyObject *re = PyFloat_FromDouble(c.real);
      if (!re) return -1;
      int rc = store(p, dt, re);
      Py_DECREF(re);
      return rc;
    }
    if (dt == TH_ComplexFloat) *(float _Complex *)p = (float)c.real + (float)c.imag * I;
    else *(double _Complex *)p = c.real + c.imag * I;
    return 0;
  }
  int overflow = 0;
  if (PyLong_Check(o) && !PyBool_Check(o)) {
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (v == -1 && !overflow && PyErr_Occurred()) return -1;
  }
  if (overflow) {
    /* an int beyond int64: torch stores its double value in a floating
     * tensor and refuses it in any other */
    if (!THDtype_isFloating(dt)) { PyErr_SetString(PyExc_ValueError, "Overflow when unpacking long long"); return -1; }
    double d = PyLong_AsDouble(o);
    if (d == -1.0 && PyErr_Occurred()) return -1;
    s = at_scalar_float(d);
  } else if (ap_to_scalar(o, &s) < 0) {
    return -1;
  }
  if (THDtype_isIntegral(dt, false) && at_scalar_check_fits(s, dt, false) < 0) { THP_raise(); return -1; }
  double d = s.kind == AT_SCALAR_FLOAT ? s.d : (double)s.i;
  int64_t i = s.kind == AT_SCALAR_FLOAT ? (int64_t)s.d : s.i;
  switch (dt) {
    case TH_Bool: *(bool *)p = s.kind == AT_SCALAR_FLOAT ? d != 0 : i != 0; break;
    case TH_UInt8: *(uint8_t *)p = (uint8_t)i; break;
    case TH_Int8: *(int8_t *)p = (int8_t)i; break;
    case TH_Int16: *(int16_t *)p = (int16_t)i; break;
    case TH_Int32: *(int32_t *)p = (int32_t)i; break;
    case TH_Int64: *(int64_t *)p = i; break;
    case TH_Half: *(THHalf *)p = th_float2half((float)d); break;
    case TH_BFloat16: *(THBFloat16 *)p = th_float2bf((float)d); break;
    case TH_Float: *(float *)p = (float)d; break;
    case TH_Double: *(double *)p = d; break;
    default: break;
  }
  return 0;
}

/* Copies a numpy array (infer checked its shape) into p as dt. */
static int fill_from_ndarray(PyObject *o, char **p, THDtype dt) {
  THTensor *shared = share_buffer(o, false);
  if (!shared) return -1;
  THTensor *conv = at_to_dtype(shared, dt, false);
  THTensor_free(shared);
  THTensor *c = conv ? at_contiguous(conv) : NULL;
  if (conv) THTensor_free(conv);
  if (!c) { THP_raise(); return -1; }
  size_t nbytes = (size_t)THTensor_numel(c) * THDtype_size(dt);
  if (nbytes) memcpy(*p, THTensor_data(c), nbytes);
  *p += nbytes;
  THTensor_free(c);
  return 0;
}

static int fill(PyObject *o, char **p, THDtype dt, int depth, int ndim) {
  if (depth < ndim && is_ndarray(o)) return fill_from_ndarray(o, p, dt);
  if (depth == ndim) {
    if (store(*p, dt, o) < 0) return -1;
    *p += THDtype_size(dt);
    return 0;
  }
  Py_ssize_t n = PySequence_Size(o);
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *item = PySequence_GetItem(o, i);
    if (!item) return -1;
    int rc = fill(item, p, dt, depth + 1, ndim);
    Py_DECREF(item);
    if (rc < 0) return -1;
  }
  return 0;
}

/* torch.tensor(data, dtype=...): always a copy. */
PyObject *THP_tensor_from_data(PyObject *data, THDtype dtype, bool dtype_given, bool copy_tensor) {
  if (THPTensor_Check(data)) {
    THTensor *src = ((THPTensor *)data)->t;
    return THPTensor_wrap(at_to_dtype(src, dtype_given ? dtype : src->dtype, copy_tensor));
  }
  if (is_ndarray(data) || (PyObject_CheckBuffer(data) && !PyBytes_Check(data) && !PyByteArray_Check(data))) {
    THTensor *shared = share_buffer(data, false);
    if (!shared) return NULL;
    THTensor *r = at_to_dtype(shared, dtype_given ? dtype : shared->dtype, true);
    THTensor_free(shared);
    return THPTensor_wrap(r);
  }
  Infer inf = { 0 };
  inf.dtype = TH_Undefined;   /* no leaf at all (an empty list): the default float dtype */
  if (PyList_Check(data) && PyList_GET_SIZE(data) > 0 && is_ndarray(PyList_GET_ITEM(data, 0))) {
    static bool warned;   /* torch warns once per process */
    if (!warned) {
      warned = true;
      if (THP_warn(PyExc_UserWarning, "Creating a tensor from a list of numpy.ndarrays is extremely slow. "
                       "Please consider converting the list to a single numpy.ndarray with numpy.array() before "
                       "converting to a tensor.") < 0)
        return NULL;
    }
  }
  if (infer(data, 0, &inf) < 0) return NULL;
  THDtype dt = dtype;
  if (!dtype_given) dt = inf.dtype == TH_Undefined ? at_default_dtype() : inf.dtype;
  THTensor *t = THTensor_new(dt, inf.ndim, inf.sizes);
  if (!t) return THP_raise();
  char *p = THTensor_data(t);
  if (fill(data, &p, dt, 0, inf.ndim) < 0) { THTensor_free(t); return NULL; }
  return THPTensor_wrap(t);
}

/* torch.from_numpy: shares memory, keeps the array alive. */
PyObject *THP_from_numpy(PyObject *m, PyObject *arr) {
  if (!is_ndarray(arr)) {
    PyErr_Format(PyExc_TypeError, "expected np.ndarray (got %s)", Py_TYPE(arr)->tp_name);
    return NULL;
  }
  return THPTensor_wrap(share_buffer(arr, true));
}

/* torch.frombuffer(buffer, dtype, count, offset): a 1-d tensor over count
 * elements of the buffer's bytes from offset, sharing its memory; the buffer
 * is held until the storage is freed. count -1: to the end of the buffer. */
PyObject *THP_frombuffer(PyObject *m, PyObject *args) {
  PyObject *buf, *dto;
  long long count, offset;
  if (!PyArg_ParseTuple(args, "OO!LL:frombuffer", &buf, &THPDtypeType, &dto, &count, &offset)) return NULL;
  THDtype dt = ((THPDtype *)dto)->dtype;
  long long es = THDtype_size(dt);
  BufCtx *c = PyMem_RawMalloc(sizeof *c);
  if (!c) return PyErr_NoMemory();
  if (PyObject_GetBuffer(buf, &c->view, PyBUF_SIMPLE) < 0) { PyMem_RawFree(c); return NULL; }
  long long len = c->view.len;
  if (len == 0 || count == 0) {
    PyErr_Format(PyExc_ValueError, "both buffer length (%lld) and count (%lld) must not be 0", len, count);
    goto fail;
  }
  if (offset < 0 || offset >= len) {
    PyErr_Format(PyExc_ValueError, "offset (%lld bytes) must be non-negative and no greater than buffer length "
                 "(%lld bytes) minus 1", offset, len);
    goto fail;
  }
  if (count < 0) {
    if ((len - offset) % es) {
      PyErr_Format(PyExc_ValueError, "buffer length (%lld bytes) after offset (%lld bytes) must be a multiple of "
                   "element size (%lld)", len - offset, offset, es);
      goto fail;
    }
    count = (len - offset) / es;
  } else if (count > (len - offset) / es) {
    PyErr_Format(PyExc_ValueError, "requested buffer length (%lld * %lld bytes) after offset (%lld bytes) must not "
                 "be greater than actual buffer length (%lld bytes)", count, es, offset, len);
    goto fail;
  }
  char *lo = (char *)c->view.buf + offset;
  if (((uintptr_t)lo) % es) {   /* the kernels read elements at their natural alignment */
    PyErr_Format(PyExc_ValueError, "frombuffer: offset %lld leaves the data unaligned for its element size %lld; "
                 "copy the buffer first", offset, es);
    goto fail;
  }
  if (c->view.readonly &&
      warn_readonly_once(&warned_readonly_buffer,
                   "The given buffer is not writable, and PyTorch does not support non-writable tensors. This means "
                   "you can write to the underlying (supposedly non-writable) buffer using the tensor. You may want "
                   "to copy the buffer to protect its data or make it writable before converting it to a tensor. "
                   "This type of warning will be suppressed for the rest of this program.") < 0)
    goto fail;
  int64_t size = count, stride = 1;
  THTensor *t = tensor_over_buffer(c, lo, (size_t)(count * es), dt, 1, &size, &stride);
  return t ? THPTensor_wrap(t) : NULL;
fail:
  PyBuffer_Release(&c->view);
  PyMem_RawFree(c);
  return NULL;
}

/* as_tensor: shares when dtype matches, copies otherwise. */
PyObject *THP_as_tensor(PyObject *data, THDtype dtype, bool dtype_given) {
  if (THPTensor_Check(data)) {
    if (!dtype_given || ((THPTensor *)data)->t->dtype == dtype) return Py_NewRef(data);
    return THP_tensor_from_data(data, dtype, true, false);
  }
  if (is_ndarray(data)) {
    THTensor *shared = share_buffer(data, true);
    if (!shared) return NULL;
    if (!dtype_given || shared->dtype == dtype) return THPTensor_wrap(shared);
    THTensor *r = at_to_dtype(shared, dtype, true);
    THTensor_free(shared);
    return THPTensor_wrap(r);
  }
  return THP_tensor_from_data(data, dtype, dtype_given, false);
}

/* ---- _TensorBase buffer protocol ---- */
static int tensor_getbuffer(PyObject *self, Py_buffer *view, int flags) {
  THTensor *t = ((THPTensor *)self)->t;
  if (THTensor_isMeta(t)) {   /* no memory to export */
    PyErr_SetString(PyExc_BufferError, "a meta tensor has no data to export");
    return -1;
  }
  const char *fmt = format_of(t->dtype);
  if (!fmt) {
    PyErr_Format(PyExc_TypeError, "Got unsupported ScalarType %s", THDtype_info[t->dtype].legacy);
    return -1;
  }
  Py_ssize_t *shape = PyMem_Malloc(sizeof(Py_ssize_t) * 2 * (t->ndim ? t->ndim : 1));
  if (!shape) { PyErr_NoMemory(); return -1; }
  Py_ssize_t *strides = shape + (t->ndim ? t->ndim : 1);
  int es = THDtype_size(t->dtype);
  for (int i = 0; i < t->ndim; i++) { shape[i] = t->sizes[i]; strides[i] = t->strides[i] * es; }
  view->buf = THTensor_data(t);
  view->obj = Py_NewRef(self);
  view->len = THTensor_numel(t) * es;
  view->readonly = 0;
  view->itemsize = es;
  view->format = (flags & PyBUF_FORMAT) ? (char *)fmt : NULL;
  view->ndim = t->ndim;
  view->shape = shape;
  view->strides = strides;
  view->suboffsets = NULL;
  view->internal = shape;
  if ((flags & PyBUF_C_CONTIGUOUS) == PyBUF_C_CONTIGUOUS && !THTensor_isContiguous(t)) {
    PyMem_Free(shape);
    Py_CLEAR(view->obj);
    PyErr_SetString(PyExc_BufferError, "tensor is not C-contiguous");
    return -1;
  }
  return 0;
}
static void tensor_releasebuffer(PyObject *self, Py_buffer *view) { PyMem_Free(view->internal); }
PyBufferProcs THP_tensor_as_buffer = { tensor_getbuffer, tensor_releasebuffer };

/* Tensor.numpy(): shares memory with the tensor (which it keeps alive). */
PyObject *THP_tensor_numpy(PyObject *self, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"force", NULL};
  int force = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|$p:numpy", kwlist, &force)) return NULL;
  THPTensor *t = (THPTensor *)self;
  if (THTensor_isMeta(t->t)) {
    PyErr_SetString(PyExc_TypeError, "can't convert meta device type tensor to numpy. Use Tensor.cpu() to copy the "
                    "tensor to host memory first.");
    return NULL;
  }
  if (THTensor_device(t->t) >= 0) {
    if (!force) {
      PyErr_Format(PyExc_TypeError, "can't convert cuda:%d device type tensor to numpy. Use Tensor.cpu() to copy "
                   "the tensor to host memory first.", THTensor_device(t->t));
      return NULL;
    }
    PyObject *c = PyObject_CallMethod(self, "cpu", NULL);
    if (!c) return NULL;
    PyObject *fargs = PyTuple_New(0), *r = NULL;
    if (fargs) r = THP_tensor_numpy(c, fargs, kw);
    Py_XDECREF(fargs);
    Py_DECREF(c);
    return r;
  }
  if (THPTensor_requiresGrad(self) && !force) {
    PyErr_SetString(PyExc_RuntimeError, "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.");
    return NULL;
  }
  if (t->t->dtype == TH_BFloat16) {
    PyErr_SetString(PyExc_TypeError, "Got unsupported ScalarType BFloat16");
    return NULL;
  }
  PyObject *np = PyImport_ImportModule("numpy");
  if (!np) return NULL;
  PyObject *mv = PyMemoryView_FromObject(self);
  PyObject *r = mv ? PyObject_CallMethod(np, "asarray", "O", mv) : NULL;
  Py_XDECREF(mv);
  Py_DECREF(np);
  return r;
}
