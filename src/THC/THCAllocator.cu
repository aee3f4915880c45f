// The CUDA caching allocator, after PyTorch's: cudaMalloc and cudaFree are
// slow and synchronise the device, so freed blocks stay cached and are handed
// out again.
//   - Requests round up to 512 bytes. Up to 1 MiB they come from 2 MiB
//     segments (the small pool); larger ones from segments rounded up to
//     2 MiB (the large pool).
//   - A free block bigger than the request is split; the rest stays free. A
//     freed block merges with free neighbours of its segment.
//   - Blocks belong to the stream they were allocated on and are reused only
//     there, so stream order keeps a freed block's last kernel before its
//     next user's.
//   - On cudaMalloc failure every cached whole segment is released and the
//     call retried once; then out of memory is reported with PyTorch's text.
// Free lists are sorted by size (best fit) and searched linearly: a training
// loop keeps at most a few hundred cached blocks.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "THCGeneral.h"

#define MAX_DEVICES 64
#define ROUND 512
#define SMALL_REQUEST (1 << 20)
#define SMALL_SEGMENT (2 << 20)
#define LARGE_ROUND (2 << 20)
#define MIN_LARGE_SPLIT (1 << 20)

typedef struct Block {
  int device;
  bool small, allocated;
  cudaStream_t stream;
  size_t size;
  char *ptr;
  struct Block *prev, *next;     // segment neighbours, in address order
  struct Block *fprev, *fnext;   // the pool's free list
} Block;

typedef struct { Block *head; } Pool;
typedef struct { Pool small, large; int64_t stats[AT_MEM_NSTATS]; } DeviceState;

static DeviceState states[MAX_DEVICES];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static void free_insert(Pool *p, Block *b) {
  Block **at = &p->head, *prev = NULL;
  while (*at && ((*at)->size < b->size || ((*at)->size == b->size && (*at)->ptr < b->ptr))) {
    prev = *at;
    at = &(*at)->fnext;
  }
  b->fnext = *at;
  b->fprev = prev;
  if (*at) (*at)->fprev = b;
  *at = b;
}

static void free_remove(Pool *p, Block *b) {
  if (b->fprev) b->fprev->fnext = b->fnext; else p->head = b->fnext;
  if (b->fnext) b->fnext->fprev = b->fprev;
  b->fprev = b->fnext = NULL;
}

static Block *best_fit(Pool *p, cudaStream_t s, size_t size) {
  for (Block *b = p->head; b; b = b->fnext)
    if (b->stream == s && b->size >= size) return b;
  return NULL;
}

static void bump(DeviceState *st, int which, int peak, int64_t delta) {
  st->stats[which] += delta;
  if (peak >= 0 && st->stats[which] > st->stats[peak]) st->stats[peak] = st->stats[which];
}

// Releases the cached segments with nothing allocated in them. Caller holds mu.
static void release_cached(int device) {
  DeviceState *st = &states[device];
  Pool *pools[2] = {&st->small, &st->large};
  for (int k = 0; k < 2; k++) {
    Block *b = pools[k]->head;
    while (b) {
      Block *nx = b->fnext;
      if (!b->prev && !b->next) {   // a whole segment, free
        free_remove(pools[k], b);
        cudaFree(b->ptr);
        bump(st, AT_MEM_RESERVED, -1, -(int64_t)b->size);
        free(b);
      }
      b = nx;
    }
  }
}

static const char *fmt_bytes(double n, char *buf, size_t len) {
  if (n >= 1024.0 * 1024 * 1024) snprintf(buf, len, "%.2f GiB", n / (1024.0 * 1024 * 1024));
  else snprintf(buf, len, "%.2f MiB", n / (1024.0 * 1024));
  return buf;
}

static void *caching_malloc(const THAllocator *self, size_t nbytes, void **ctx) {
  (void)self;
  *ctx = NULL;
  int device = thc_current_device();
  if (device < 0) return NULL;
  if (device >= MAX_DEVICES) { THError_set(TH_ERR_RUNTIME, "CUDA device %d is beyond cthtorch's %d", device, MAX_DEVICES); return NULL; }
  if (nbytes > ((size_t)1 << 62)) nbytes = (size_t)1 << 62;   // keep the rounding from wrapping
  size_t size = nbytes < ROUND ? ROUND : (nbytes + ROUND - 1) / ROUND * ROUND;
  bool small = size <= SMALL_REQUEST;
  cudaStream_t stream = thc_stream();
  pthread_mutex_lock(&mu);
  DeviceState *st = &states[device];
  Pool *pool = small ? &st->small : &st->large;
  Block *b = best_fit(pool, stream, size);
  if (b) {
    free_remove(pool, b);
  } else {
    size_t seg = small ? SMALL_SEGMENT : (size + LARGE_ROUND - 1) / LARGE_ROUND * LARGE_ROUND;
    char *p = NULL;
    cudaError_t e = cudaMalloc((void **)&p, seg);
    if (e == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      release_cached(device);
      st->stats[AT_MEM_NUM_ALLOC_RETRIES]++;
      e = cudaMalloc((void **)&p, seg);
    }
    if (e != cudaSuccess) {
      cudaGetLastError();
      st->stats[AT_MEM_NUM_OOMS]++;
      size_t fr = 0, tot = 0;
      cudaMemGetInfo(&fr, &tot);
      char a[32], b1[32], c[32], d[32], r[32];
      int64_t alloc = st->stats[AT_MEM_ALLOCATED], resv = st->stats[AT_MEM_RESERVED];
      pthread_mutex_unlock(&mu);
      if (e == cudaErrorMemoryAllocation)
        THError_set(TH_ERR_MEMORY, "CUDA out of memory. Tried to allocate %s. GPU %d has a total capacity of %s of "
                    "which %s is free. Of the allocated memory %s is allocated by cthtorch, and %s is reserved by "
                    "cthtorch but unallocated.", fmt_bytes((double)nbytes, a, 32), device, fmt_bytes((double)tot, b1, 32),
                    fmt_bytes((double)fr, c, 32), fmt_bytes((double)alloc, d, 32), fmt_bytes((double)(resv - alloc), r, 32));
      else
        THError_set(TH_ERR_RUNTIME, "CUDA error: %s (in cudaMalloc)", cudaGetErrorString(e));
      return NULL;
    }
    b = (Block *)calloc(1, sizeof *b);
    if (!b) { cudaFree(p); pthread_mutex_unlock(&mu); THError_set(TH_ERR_MEMORY, "out of memory"); return NULL; }
    b->device = device;
    b->small = small;
    b->stream = stream;
    b->size = seg;
    b->ptr = p;
    bump(st, AT_MEM_RESERVED, AT_MEM_PEAK_RESERVED, (int64_t)seg);
  }
  size_t rest = b->size - size;
  if (small ? rest >= ROUND : rest > MIN_LARGE_SPLIT) {
    Block *r = (Block *)calloc(1, sizeof *r);
    if (r) {   // no memory for the split: hand out the whole block instead
      *r = *b;
      r->ptr = b->ptr + size;
      r->size = rest;
      r->prev = b;
      r->next = b->next;
      r->fprev = r->fnext = NULL;
      if (b->next) b->next->prev = r;
      b->next = r;
      b->size = size;
      free_insert(pool, r);
    }
  }
  b->allocated = true;
  bump(st, AT_MEM_ALLOCATED, AT_MEM_PEAK_ALLOCATED, (int64_t)b->size);
  st->stats[AT_MEM_NUM_ALLOCS]++;
  pthread_mutex_unlock(&mu);
  *ctx = b;
  return b->ptr;
}

static void caching_free(const THAllocator *self, void *ptr, size_t nbytes, void *ctx) {
  (void)self; (void)ptr; (void)nbytes;
  Block *b = (Block *)ctx;
  if (!b) return;
  pthread_mutex_lock(&mu);
  DeviceState *st = &states[b->device];
  Pool *pool = b->small ? &st->small : &st->large;
  bump(st, AT_MEM_ALLOCATED, -1, -(int64_t)b->size);
  st->stats[AT_MEM_NUM_FREES]++;
  b->allocated = false;
  Block *p = b->prev, *n = b->next;
  if (p && !p->allocated) {   // merge into the free block before
    free_remove(pool, p);
    p->size += b->size;
    p->next = n;
    if (n) n->prev = p;
    free(b);
    b = p;
  }
  if (n && !n->allocated) {   // swallow the free block after
    free_remove(pool, n);
    b->size += n->size;
    b->next = n->next;
    if (n->next) n->next->prev = b;
    free(n);
  }
  free_insert(pool, b);
  pthread_mutex_unlock(&mu);
}

static int caching_device(const THAllocator *self) { (void)self; return thc_current_device(); }

static int device_copy(void *dst, const void *src, size_t n) {
  return thc_check(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, thc_stream()), "device copy");
}

extern "C" {

const THAllocator THCCachingAllocator = {caching_malloc, caching_free, "cuda", caching_device, device_copy};

int thc_memory_stats(int device, int64_t *stats) {
  if (device < 0 || device >= MAX_DEVICES) { THError_set(TH_ERR_VALUE, "invalid CUDA device %d", device); return -1; }
  pthread_mutex_lock(&mu);
  for (int i = 0; i < AT_MEM_NSTATS; i++) stats[i] = states[device].stats[i];
  pthread_mutex_unlock(&mu);
  return 0;
}

void thc_reset_peak_stats(int device) {
  if (device < 0 || device >= MAX_DEVICES) return;
  pthread_mutex_lock(&mu);
  DeviceState *st = &states[device];
  st->stats[AT_MEM_PEAK_ALLOCATED] = st->stats[AT_MEM_ALLOCATED];
  st->stats[AT_MEM_PEAK_RESERVED] = st->stats[AT_MEM_RESERVED];
  pthread_mutex_unlock(&mu);
}

void thc_empty_cache(void) {
  pthread_mutex_lock(&mu);
  for (int d = 0; d < MAX_DEVICES; d++)
    if (states[d].small.head || states[d].large.head) {
      int prev = thc_current_device();
      thc_set_device(d);
      release_cached(d);
      if (prev >= 0) thc_set_device(prev);
    }
  pthread_mutex_unlock(&mu);
}

}  // extern "C"

// Pinned (page-locked) host memory for fast and asynchronous copies: host
// memory to TH (no device hook), so tensors on it are CPU tensors.
static void *host_malloc(const THAllocator *self, size_t nbytes, void **ctx) {
  (void)self;
  *ctx = NULL;
  void *p = NULL;
  if (thc_check(cudaHostAlloc(&p, nbytes ? nbytes : 1, cudaHostAllocDefault), "cudaHostAlloc") < 0) return NULL;
  return p;
}
static void host_free(const THAllocator *self, void *ptr, size_t nbytes, void *ctx) {
  (void)self; (void)nbytes; (void)ctx;
  cudaFreeHost(ptr);
}
extern "C" const THAllocator THCHostAllocator = {host_malloc, host_free, "cuda-pinned", NULL, NULL};
