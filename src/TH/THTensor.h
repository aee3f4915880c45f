/* THTensor: a strided view of a THStorage. Views share the storage;
 * the tensor struct itself is refcounted so several owners can hold it. */
#ifndef TH_TENSOR_H
#define TH_TENSOR_H

#include "THStorage.h"

typedef struct THTensor {
  atomic_long refcount;
  THStorage *storage;
  int64_t offset;                 /* in elements */
  int ndim;
  THDtype dtype;
  bool wrapped_number;            /* a Python scalar turned 0-d tensor: weak in type promotion */
  int64_t sizes[TH_MAX_DIMS];
  int64_t strides[TH_MAX_DIMS];   /* in elements */
} THTensor;

/* Contiguous tensor of the given sizes (uninitialised memory). */
TH_API THTensor *THTensor_new(THDtype dtype, int ndim, const int64_t *sizes);
TH_API THTensor *THTensor_newWithAllocator(THDtype dtype, int ndim, const int64_t *sizes, const THAllocator *a);
/* Tensor with explicit strides; allocates just enough storage. */
TH_API THTensor *THTensor_newStrided(THDtype dtype, int ndim, const int64_t *sizes, const int64_t *strides);
/* The same, from allocator a (NULL: the default host one); strides NULL: contiguous. */
TH_API THTensor *THTensor_newStridedWithAllocator(THDtype dtype, int ndim, const int64_t *sizes,
                                                  const int64_t *strides, const THAllocator *a);
/* A view on src's storage. Checks the view stays inside the storage. */
TH_API THTensor *THTensor_newView(const THTensor *src, int ndim, const int64_t *sizes,
                                  const int64_t *strides, int64_t offset);
/* A tensor over an existing storage (retains it). */
TH_API THTensor *THTensor_newWithStorage(THStorage *s, THDtype dtype, int64_t offset, int ndim,
                                         const int64_t *sizes, const int64_t *strides);
TH_API THTensor *THTensor_retain(THTensor *t);
TH_API void THTensor_free(THTensor *t);

TH_API int64_t THTensor_numel(const THTensor *t);
TH_API bool THTensor_isContiguous(const THTensor *t);
/* True when the elements fill [data, data+numel) in some dimension order. */
TH_API bool THTensor_isNonOverlappingAndDense(const THTensor *t);
/* -1: the tensor lives in host memory; N: on CUDA device N; TH_DEVICE_META: nowhere (no data). */
static inline int THTensor_device(const THTensor *t) { return t->storage->device; }
static inline bool THTensor_isMeta(const THTensor *t) { return t->storage->device == TH_DEVICE_META; }
static inline char *THTensor_data(const THTensor *t) {
  return (char *)t->storage->data + t->offset * THDtype_size(t->dtype);
}
/* Validates sizes (no negatives, no 64-bit overflow of elements or bytes) and
 * writes contiguous strides; returns the element count or -1. */
TH_API int64_t THTensor_contiguousStrides(int ndim, const int64_t *sizes, int64_t *strides, THDtype dtype);
/* Resizes in place to contiguous sizes (out= semantics); grows storage if needed. */
TH_API int THTensor_resize(THTensor *t, int ndim, const int64_t *sizes);
/* Makes t a view of src's storage with src's geometry (t.set_(src)). */
TH_API void THTensor_setTo(THTensor *t, const THTensor *src);
/* Formats sizes as "[2, 3]" into buf. */
TH_API const char *THTensor_sizeStr(int ndim, const int64_t *sizes, char *buf, size_t n);

#endif
