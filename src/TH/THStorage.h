/* THStorage: a refcounted block of bytes and the allocator that frees it. */
#ifndef TH_STORAGE_H
#define TH_STORAGE_H

#include <stdatomic.h>
#include "THAllocator.h"

typedef struct THStorage {
  atomic_long refcount;
  void *data;
  size_t nbytes;
  const THAllocator *allocator;
  void *ctx;            /* allocator's per-block state */
  bool resizable;
  int device;           /* -1: host memory; N: CUDA device N (allocator->device); TH_DEVICE_META: none */
} THStorage;

/* New storage of nbytes from the allocator (NULL: the default one). */
TH_API THStorage *THStorage_new(size_t nbytes, const THAllocator *allocator);
/* Wraps memory someone else owns; allocator->free(allocator, data, nbytes, ctx) releases it. */
TH_API THStorage *THStorage_newWithData(void *data, size_t nbytes, const THAllocator *allocator, void *ctx);
TH_API void THStorage_retain(THStorage *s);
TH_API void THStorage_free(THStorage *s);
/* Grows (never shrinks) a resizable storage, keeping its bytes. */
TH_API int THStorage_resize(THStorage *s, size_t nbytes);

#endif
