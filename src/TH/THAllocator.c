#define _GNU_SOURCE
#include "THAllocator.h"

#include <errno.h>
#include <malloc.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static atomic_llong live_bytes;

int64_t THAllocator_liveBytes(void) { return atomic_load(&live_bytes); }

/* Large blocks (>= 1 MiB) come from mmap. Fresh mmap'd pages fault on first
 * touch, which for a 64 MiB result costs more than the arithmetic itself;
 * so freed large blocks are kept in a small cache and handed out again to a
 * request of the same rounded size, already faulted in. */
#ifdef __SANITIZE_ADDRESS__
/* ASan guards only heap blocks, and caps their size (max_allocation_size_mb):
 * under it every block comes from malloc, so no block escapes either. */
#define LARGE_BLOCK SIZE_MAX
#else
#define LARGE_BLOCK (1u << 20)
#endif
#define CACHE_SLOTS 256     /* a training step frees dozens of large activations and grads */
#define CACHE_MAX_BYTES ((size_t)1 << 30)
static struct { void *ptr; size_t size; } cache[CACHE_SLOTS];
static size_t cache_bytes;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

/* Blocks of 2 MiB and more are whole, 2 MiB-aligned huge pages. THP backs
 * only the aligned 2 MiB stretches of a mapping, so a block at a random
 * 4 KiB offset got a huge page fewer than it could, and which blocks lost
 * out changed from process to process. Rounding to 2 MiB also lets nearby
 * sizes share a cache slot. Smaller large blocks round to 4 KiB pages. */
#define HUGE_PAGE ((size_t)2 << 20)
static size_t round_large(size_t n) {
  size_t unit = n >= HUGE_PAGE ? HUGE_PAGE : 4096;
  return (n + unit - 1) & ~(unit - 1);
}

static void *map_large(size_t sz) {
  if (sz < HUGE_PAGE) {
    void *q = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return q == MAP_FAILED ? NULL : q;
  }
  char *p = mmap(NULL, sz + HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return NULL;
  size_t head = (HUGE_PAGE - ((uintptr_t)p & (HUGE_PAGE - 1))) & (HUGE_PAGE - 1);
  if (head) munmap(p, head);
  if (HUGE_PAGE - head) munmap(p + head + sz, HUGE_PAGE - head);
  madvise(p + head, sz, MADV_HUGEPAGE);
  return p + head;
}

/* Kernel scratch buffers (malloc'd column matrices and the like, up to
 * 32 MiB, glibc's ceiling) stay in malloc's heap instead of a fresh mmap per
 * call, so reusing them costs no page faults. */
__attribute__((constructor)) static void tune_heap(void) {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 128 << 20);
}

static void *cpu_malloc(const THAllocator *self, size_t nbytes, void **ctx) {
  (void)self;
  *ctx = NULL;
  void *p = NULL;
  if (nbytes >= LARGE_BLOCK) {
    size_t sz = round_large(nbytes);
    pthread_mutex_lock(&cache_lock);
    for (int i = 0; i < CACHE_SLOTS; i++)
      if (cache[i].ptr && cache[i].size == sz) {
        p = cache[i].ptr;
        cache[i].ptr = NULL;
        cache_bytes -= sz;
        break;
      }
    pthread_mutex_unlock(&cache_lock);
    if (!p) {
      p = map_large(sz);
    }
  } else if (posix_memalign(&p, 64, nbytes ? nbytes : 1) != 0) {
    p = NULL;
  }
  if (!p) {
    THError_set(TH_ERR_MEMORY,
                "[enforce fail at alloc_cpu.cpp] DefaultCPUAllocator: can't allocate memory: "
                "you tried to allocate %zu bytes.", nbytes);
    return NULL;
  }
  atomic_fetch_add(&live_bytes, (long long)nbytes);
  return p;
}

static void cpu_free(const THAllocator *self, void *ptr, size_t nbytes, void *ctx) {
  (void)self; (void)ctx;
  if (!ptr) return;
  atomic_fetch_sub(&live_bytes, (long long)nbytes);
  if (nbytes < LARGE_BLOCK) { free(ptr); return; }
  size_t sz = round_large(nbytes);
  pthread_mutex_lock(&cache_lock);
  if (cache_bytes + sz <= CACHE_MAX_BYTES) {
    for (int i = 0; i < CACHE_SLOTS; i++)
      if (!cache[i].ptr) {
        cache[i].ptr = ptr; cache[i].size = sz; cache_bytes += sz;
        ptr = NULL;
        break;
      }
  }
  pthread_mutex_unlock(&cache_lock);
  if (ptr) munmap(ptr, sz);
}

void THAllocator_emptyCache(void) {
  pthread_mutex_lock(&cache_lock);
  for (int i = 0; i < CACHE_SLOTS; i++)
    if (cache[i].ptr) { munmap(cache[i].ptr, cache[i].size); cache[i].ptr = NULL; }
  cache_bytes = 0;
  pthread_mutex_unlock(&cache_lock);
}

const THAllocator THDefaultAllocator = { cpu_malloc, cpu_free, "cpu" };

static void *meta_malloc(const THAllocator *self, size_t nbytes, void **ctx) {
  (void)self; (void)nbytes; *ctx = NULL;
  return NULL;
}
static void meta_free(const THAllocator *self, void *ptr, size_t nbytes, void *ctx) {
  (void)self; (void)ptr; (void)nbytes; (void)ctx;
}
static int meta_device(const THAllocator *self) { (void)self; return TH_DEVICE_META; }
const THAllocator THMetaAllocator = { .malloc = meta_malloc, .free = meta_free, .name = "meta", .device = meta_device };

/* ---- shared memory ----
 * A segment is [64-byte header | data]. The header counts the references to
 * the segment's *name*: one for the creating storage, plus one per handle
 * handed out (THShm_handle) and not yet attached. Attaching consumes the
 * handle's reference; freeing the creating storage (in the creating process:
 * a forked child inherits the ctx but must not count) drops its own. The name
 * is unlinked when the count reaches zero, so it outlives neither the last
 * pending handle nor is removed while one is in flight; mappings keep the
 * memory itself alive after that. */
#define SHM_HEADER 64
typedef struct { atomic_long refs; } ShmHeader;
typedef struct { char name[64]; void *base; int counted; pid_t pid; } ShmCtx;

static void shm_release_name(ShmCtx *c) {
  if (atomic_fetch_sub(&((ShmHeader *)c->base)->refs, 1) == 1) shm_unlink(c->name);
}

static void *shm_map(const char *name, size_t nbytes, int create, void **ctx) {
  ShmCtx *c = calloc(1, sizeof *c);
  if (!c) { THError_set(TH_ERR_MEMORY, "out of memory"); return NULL; }
  snprintf(c->name, sizeof c->name, "%s", name);
  int fd = shm_open(c->name, create ? (O_RDWR | O_CREAT | O_EXCL) : O_RDWR, 0600);
  if (fd < 0) {
    THError_set(TH_ERR_RUNTIME, "unable to open shared memory object <%s>: %s", c->name, strerror(errno));
    free(c);
    return NULL;
  }
  size_t sz = SHM_HEADER + nbytes;
  if (create && ftruncate(fd, (off_t)sz) != 0) {
    THError_set(TH_ERR_RUNTIME, "unable to resize shared memory <%s> to %zu bytes: %s", c->name, sz, strerror(errno));
    close(fd); shm_unlink(c->name); free(c);
    return NULL;
  }
  void *p = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED) {
    THError_set(TH_ERR_RUNTIME, "unable to mmap shared memory <%s>: %s", c->name, strerror(errno));
    if (create) shm_unlink(c->name);
    free(c);
    return NULL;
  }
  c->base = p;
  c->pid = getpid();
  if (create) {
    atomic_init(&((ShmHeader *)p)->refs, 1);
    c->counted = 1;
  } else {
    shm_release_name(c);   /* the handle we were given is used up */
  }
  *ctx = c;
  return (char *)p + SHM_HEADER;
}

static void *shm_malloc(const THAllocator *self, size_t nbytes, void **ctx) {
  (void)self;
  static atomic_int counter;
  char name[64];
  snprintf(name, sizeof name, "/cthtorch_%d_%d_%ld", (int)getpid(),
           atomic_fetch_add(&counter, 1), (long)random());
  return shm_map(name, nbytes, 1, ctx);
}

static void shm_free(const THAllocator *self, void *ptr, size_t nbytes, void *ctx) {
  (void)self; (void)ptr;
  ShmCtx *c = ctx;
  if (!c) return;
  if (c->counted && c->pid == getpid()) shm_release_name(c);
  munmap(c->base, SHM_HEADER + nbytes);
  free(c);
}

const THAllocator THShmAllocator = { shm_malloc, shm_free, "shm" };

const char *THShm_handle(void *ctx) {
  ShmCtx *c = ctx;
  ShmHeader *h = c->base;
  long n = atomic_load(&h->refs);
  do {
    if (n <= 0) {   /* the name is gone: whoever needs this memory must already have it */
      THError_set(TH_ERR_RUNTIME, "shared memory segment <%s> can no longer be attached by name (every handle to it "
                  "was used and its creator freed it)", c->name);
      return NULL;
    }
  } while (!atomic_compare_exchange_weak(&h->refs, &n, n + 1));
  return c->name;
}

void *THShm_attach(const char *name, size_t nbytes, void **ctx) { return shm_map(name, nbytes, 0, ctx); }
