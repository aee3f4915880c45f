/* Allocators: a struct of function pointers, so storages can live in
 * ordinary heap memory, in shared memory (DataLoader workers), in memory
 * borrowed from numpy, or on a GPU, and be freed by whoever made them. */
#ifndef TH_ALLOCATOR_H
#define TH_ALLOCATOR_H

#include "THGeneral.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct THAllocator {
  /* returns the block (64-byte aligned for the CPU allocator) or NULL with
   * THError set; *ctx receives per-block state handed back to free. */
  void *(*malloc)(const struct THAllocator *self, size_t nbytes, void **ctx);
  void (*free)(const struct THAllocator *self, void *ptr, size_t nbytes, void *ctx);
  const char *name;
  /* device memory only (NULL for host allocators): the CUDA device a new
   * block lands on, and a device-to-device byte copy (storage resize) */
  int (*device)(const struct THAllocator *self);
  int (*copy)(void *dst, const void *src, size_t nbytes);
} THAllocator;

TH_API extern const THAllocator THDefaultAllocator;
/* Bytes handed out by the default allocator and not yet returned. */
TH_API int64_t THAllocator_liveBytes(void);
/* Drop the cache of large free blocks (returns them to the OS). */
TH_API void THAllocator_emptyCache(void);

/* The meta device: storages that hold no memory (data NULL, nbytes counted
 * as if they did), so ops on meta tensors compute shapes, dtypes and strides
 * only. malloc is never called: THStorage_new sees this allocator and leaves
 * data NULL; device() answers TH_DEVICE_META. */
#define TH_DEVICE_META (-3)   /* -1 is the host; -2 is the factories' "no device given" */
TH_API extern const THAllocator THMetaAllocator;

/* POSIX shared memory: the block is a named segment (ctx holds the name).
 * The name lives while the creating storage or an unattached handle does. */
TH_API extern const THAllocator THShmAllocator;
/* A handle (the segment's name) for one THShm_attach elsewhere; NULL + error
 * when the name is already gone. */
TH_API const char *THShm_handle(void *ctx);
/* Maps an existing segment, using up one handle; freed by THShmAllocator. */
TH_API void *THShm_attach(const char *name, size_t nbytes, void **ctx);

#ifdef __cplusplus
}
#endif

#endif
