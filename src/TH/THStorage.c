#include "THStorage.h"

#include <stdlib.h>
#include <string.h>

THStorage *THStorage_new(size_t nbytes, const THAllocator *allocator) {
  if (!allocator) allocator = &THDefaultAllocator;
  THStorage *s = malloc(sizeof *s);
  if (!s) { THError_set(TH_ERR_MEMORY, "out of memory"); return NULL; }
  s->data = allocator->malloc(allocator, nbytes, &s->ctx);
  if (!s->data && allocator != &THMetaAllocator) { free(s); return NULL; }   /* meta: no memory by design */
  atomic_init(&s->refcount, 1);
  s->nbytes = nbytes;
  s->allocator = allocator;
  s->resizable = true;
  s->device = allocator->device ? allocator->device(allocator) : -1;
  return s;
}

THStorage *THStorage_newWithData(void *data, size_t nbytes, const THAllocator *allocator, void *ctx) {
  THStorage *s = malloc(sizeof *s);
  if (!s) { THError_set(TH_ERR_MEMORY, "out of memory"); return NULL; }
  atomic_init(&s->refcount, 1);
  s->data = data;
  s->nbytes = nbytes;
  s->allocator = allocator;
  s->ctx = ctx;
  s->resizable = false;
  s->device = allocator && allocator->device ? allocator->device(allocator) : -1;
  return s;
}

void THStorage_retain(THStorage *s) { atomic_fetch_add_explicit(&s->refcount, 1, memory_order_relaxed); }

void THStorage_free(THStorage *s) {
  if (!s) return;
  if (atomic_fetch_sub_explicit(&s->refcount, 1, memory_order_acq_rel) != 1) return;
  if (s->allocator) s->allocator->free(s->allocator, s->data, s->nbytes, s->ctx);
  free(s);
}

int THStorage_resize(THStorage *s, size_t nbytes) {
  if (nbytes <= s->nbytes) return 0;
  if (s->device == TH_DEVICE_META) { s->nbytes = nbytes; return 0; }   /* nothing to move */
  if (!s->resizable) {
    THError_set(TH_ERR_RUNTIME, "Trying to resize storage that is not resizable");
    return -1;
  }
  void *ctx;
  void *p = s->allocator->malloc(s->allocator, nbytes, &ctx);
  if (!p) return -1;
  if (s->nbytes) {
    if (s->allocator->copy) {   /* device memory: the host cannot read it */
      if (s->allocator->copy(p, s->data, s->nbytes) < 0) { s->allocator->free(s->allocator, p, nbytes, ctx); return -1; }
    } else {
      memcpy(p, s->data, s->nbytes);
    }
  }
  s->allocator->free(s->allocator, s->data, s->nbytes, s->ctx);
  s->data = p; s->ctx = ctx; s->nbytes = nbytes;
  return 0;
}
