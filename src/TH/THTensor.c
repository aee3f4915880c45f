#include "THTensor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *THTensor_sizeStr(int ndim, const int64_t *sizes, char *buf, size_t n) {
  size_t pos = 0;
  pos += snprintf(buf + pos, n - pos, "[");
  for (int i = 0; i < ndim && pos < n; i++)
    pos += snprintf(buf + pos, n - pos, i ? ", %lld" : "%lld", (long long)sizes[i]);
  if (pos < n) snprintf(buf + pos, n - pos, "]");
  return buf;
}

int64_t THTensor_contiguousStrides(int ndim, const int64_t *sizes, int64_t *strides, THDtype dtype) {
  char buf[512];
  if (ndim > TH_MAX_DIMS) {
    THError_set(TH_ERR_RUNTIME, "cthtorch supports at most %d dimensions, got %d", TH_MAX_DIMS, ndim);
    return -1;
  }
  for (int i = 0; i < ndim; i++)
    if (sizes[i] < 0) {
      THError_set(TH_ERR_RUNTIME, "Trying to create tensor with negative dimension %lld: %s",
                  (long long)sizes[i], THTensor_sizeStr(ndim, sizes, buf, sizeof buf));
      return -1;
    }
  /* Strides are products of trailing sizes even when some size is 0, so an
   * overflowing shape is refused whatever its element count. */
  int64_t st = 1, numel = 1;
  bool overflow = false, stride_overflow = false;
  for (int i = ndim - 1; i >= 0; i--) {
    strides[i] = st;
    int64_t s = sizes[i] ? sizes[i] : 1;
    if (i > 0 && th_mul_overflow(st, s, &st)) stride_overflow = true;
    if (th_mul_overflow(numel, sizes[i], &numel)) overflow = true;
  }
  int64_t nbytes;
  if (stride_overflow) {
    THError_set(TH_ERR_RUNTIME, "Stride calculation overflowed");
    return -1;
  }
  if (overflow || th_mul_overflow(numel, THDtype_size(dtype), &nbytes)) {
    THError_set(TH_ERR_RUNTIME, "Storage size calculation overflowed with sizes=%s",
                THTensor_sizeStr(ndim, sizes, buf, sizeof buf));
    return -1;
  }
  return numel;
}

static THTensor *alloc_struct(void) {
  THTensor *t = malloc(sizeof *t);
  if (!t) { THError_set(TH_ERR_MEMORY, "out of memory"); return NULL; }
  atomic_init(&t->refcount, 1);
  t->wrapped_number = false;
  t->offset = 0;
  return t;
}

THTensor *THTensor_newWithAllocator(THDtype dtype, int ndim, const int64_t *sizes, const THAllocator *a) {
  int64_t strides[TH_MAX_DIMS];
  int64_t numel = THTensor_contiguousStrides(ndim, sizes, strides, dtype);
  if (numel < 0) return NULL;
  THTensor *t = alloc_struct();
  if (!t) return NULL;
  t->storage = THStorage_new((size_t)numel * THDtype_size(dtype), a);
  if (!t->storage) { free(t); return NULL; }
  t->ndim = ndim;
  t->dtype = dtype;
  if (ndim) memcpy(t->sizes, sizes, ndim * sizeof(int64_t));
  if (ndim) memcpy(t->strides, strides, ndim * sizeof(int64_t));
  return t;
}

THTensor *THTensor_new(THDtype dtype, int ndim, const int64_t *sizes) {
  return THTensor_newWithAllocator(dtype, ndim, sizes, NULL);
}

/* Bytes needed to hold every element of the geometry, or -1 on overflow. */
static int64_t required_elems(int ndim, const int64_t *sizes, const int64_t *strides, int64_t offset) {
  int64_t hi = offset;
  for (int i = 0; i < ndim; i++) {
    if (sizes[i] == 0) return 0;
    int64_t span;
    if (th_mul_overflow(sizes[i] - 1, strides[i], &span) || th_add_overflow(hi, span, &hi)) return -1;
  }
  return hi + 1;
}

THTensor *THTensor_newStrided(THDtype dtype, int ndim, const int64_t *sizes, const int64_t *strides) {
  return THTensor_newStridedWithAllocator(dtype, ndim, sizes, strides, NULL);
}

THTensor *THTensor_newStridedWithAllocator(THDtype dtype, int ndim, const int64_t *sizes,
                                           const int64_t *strides, const THAllocator *a) {
  if (!strides) return THTensor_newWithAllocator(dtype, ndim, sizes, a);
  int64_t tmp[TH_MAX_DIMS];
  if (THTensor_contiguousStrides(ndim, sizes, tmp, dtype) < 0) return NULL;
  for (int i = 0; i < ndim; i++)
    if (strides[i] < 0) {
      THError_set(TH_ERR_RUNTIME, "as_strided: Negative strides are not supported at the moment, got strides: [%lld]", (long long)strides[i]);
      return NULL;
    }
  int64_t n = required_elems(ndim, sizes, strides, 0), nbytes;
  if (n < 0 || th_mul_overflow(n, THDtype_size(dtype), &nbytes)) {
    THError_set(TH_ERR_RUNTIME, "Storage size calculation overflowed");
    return NULL;
  }
  THTensor *t = alloc_struct();
  if (!t) return NULL;
  t->storage = THStorage_new((size_t)nbytes, a);
  if (!t->storage) { free(t); return NULL; }
  t->ndim = ndim; t->dtype = dtype;
  if (ndim) memcpy(t->sizes, sizes, ndim * sizeof(int64_t));
  if (ndim) memcpy(t->strides, strides, ndim * sizeof(int64_t));
  return t;
}

THTensor *THTensor_newWithStorage(THStorage *s, THDtype dtype, int64_t offset, int ndim,
                                  const int64_t *sizes, const int64_t *strides) {
  char buf[256];
  if (ndim > TH_MAX_DIMS) {
    THError_set(TH_ERR_RUNTIME, "cthtorch supports at most %d dimensions, got %d", TH_MAX_DIMS, ndim);
    return NULL;
  }
  for (int i = 0; i < ndim; i++)
    if (sizes[i] < 0) {
      THError_set(TH_ERR_RUNTIME, "Trying to create tensor with negative dimension %lld: %s",
                  (long long)sizes[i], THTensor_sizeStr(ndim, sizes, buf, sizeof buf));
      return NULL;
    }
  if (offset < 0) {
    THError_set(TH_ERR_RUNTIME, "Tensor: invalid storage offset %lld", (long long)offset);
    return NULL;
  }
  int64_t need = required_elems(ndim, sizes, strides, offset), nbytes, numel;
  if (need < 0 || th_mul_overflow(need, THDtype_size(dtype), &nbytes)) {
    char sbuf[256];
    THError_set(TH_ERR_RUNTIME, "Storage size calculation overflowed with sizes=%s and strides=%s",
                THTensor_sizeStr(ndim, sizes, buf, sizeof buf), THTensor_sizeStr(ndim, strides, sbuf, sizeof sbuf));
    return NULL;
  }
  if (th_numel_overflow(ndim, sizes, &numel)) {   /* a stride-0 view: as_strided((2**62, 4), (0, 0)) */
    THError_set(TH_ERR_RUNTIME, "numel: integer multiplication overflow");
    return NULL;
  }
  if ((size_t)nbytes > s->nbytes) {
    THError_set(TH_ERR_RUNTIME,
                "setStorage: sizes %s, strides %s, storage offset %lld, and itemsize %d "
                "requiring a storage size of %lld are out of bounds for storage of size %zu",
                THTensor_sizeStr(ndim, sizes, buf, sizeof buf), "[...]", (long long)offset,
                THDtype_size(dtype), (long long)nbytes, s->nbytes);
    return NULL;
  }
  THTensor *t = alloc_struct();
  if (!t) return NULL;
  THStorage_retain(s);
  t->storage = s; t->dtype = dtype; t->offset = offset; t->ndim = ndim;
  if (ndim) memcpy(t->sizes, sizes, ndim * sizeof(int64_t));
  if (ndim) memcpy(t->strides, strides, ndim * sizeof(int64_t));
  return t;
}

THTensor *THTensor_newView(const THTensor *src, int ndim, const int64_t *sizes,
                           const int64_t *strides, int64_t offset) {
  return THTensor_newWithStorage(src->storage, src->dtype, offset, ndim, sizes, strides);
}

THTensor *THTensor_retain(THTensor *t) {
  atomic_fetch_add_explicit(&t->refcount, 1, memory_order_relaxed);
  return t;
}

void THTensor_free(THTensor *t) {
  if (!t) return;
  if (atomic_fetch_sub_explicit(&t->refcount, 1, memory_order_acq_rel) != 1) return;
  THStorage_free(t->storage);
  free(t);
}

int64_t THTensor_numel(const THTensor *t) {
  int64_t n = 1;
  for (int i = 0; i < t->ndim; i++) n *= t->sizes[i];
  return n;
}

bool THTensor_isContiguous(const THTensor *t) {
  int64_t expected = 1;
  for (int i = t->ndim - 1; i >= 0; i--) {
    if (t->sizes[i] == 0) return true;
    if (t->sizes[i] != 1 && t->strides[i] != expected) return false;
    expected *= t->sizes[i];
  }
  return true;
}

bool THTensor_isNonOverlappingAndDense(const THTensor *t) {
  if (THTensor_isContiguous(t)) return true;
  int perm[TH_MAX_DIMS], n = t->ndim;
  for (int i = 0; i < n; i++) perm[i] = i;
  /* insertion sort dims by stride, ascending */
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && t->strides[perm[j - 1]] > t->strides[perm[j]]; j--) {
      int tmp = perm[j]; perm[j] = perm[j - 1]; perm[j - 1] = tmp;
    }
  int64_t expected = 1;
  for (int i = 0; i < n; i++) {
    int d = perm[i];
    if (t->sizes[d] == 1) continue;
    if (t->strides[d] != expected) return false;
    expected *= t->sizes[d];
  }
  return true;
}

int THTensor_resize(THTensor *t, int ndim, const int64_t *sizes) {
  int64_t strides[TH_MAX_DIMS], count;
  bool negative = false;
  for (int i = 0; i < ndim; i++) negative |= sizes[i] < 0;
  if (!negative && th_numel_overflow(ndim, sizes, &count)) {   /* PyTorch's resize_ text */
    THError_set(TH_ERR_RUNTIME, "numel: integer multiplication overflow");
    return -1;
  }
  int64_t numel = THTensor_contiguousStrides(ndim, sizes, strides, t->dtype);
  if (numel < 0) return -1;
  int64_t elems, bytes;
  if (th_add_overflow(numel, t->offset, &elems) || th_mul_overflow(elems, THDtype_size(t->dtype), &bytes)) {
    char buf[256];
    THError_set(TH_ERR_RUNTIME, "Storage size calculation overflowed with sizes=%s",
                THTensor_sizeStr(ndim, sizes, buf, sizeof buf));
    return -1;
  }
  size_t need = (size_t)bytes;
  if (need > t->storage->nbytes && THStorage_resize(t->storage, need) < 0) return -1;
  t->ndim = ndim;
  if (ndim) memcpy(t->sizes, sizes, ndim * sizeof(int64_t));
  if (ndim) memcpy(t->strides, strides, ndim * sizeof(int64_t));
  return 0;
}

void THTensor_setTo(THTensor *t, const THTensor *src) {
  THStorage_retain(src->storage);
  THStorage_free(t->storage);
  t->storage = src->storage;
  t->offset = src->offset;
  t->ndim = src->ndim;
  t->dtype = src->dtype;
  memcpy(t->sizes, src->sizes, src->ndim * sizeof(int64_t));
  memcpy(t->strides, src->strides, src->ndim * sizeof(int64_t));
}
