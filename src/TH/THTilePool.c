/* Helper threads for GEMM's tiles (THTilePool.h).
 *
 * Why not an OpenMP region: its end waits for every thread of the team, including one that the kernel
 * has not yet given a core. On this shared 2-core machine that wait is a scheduler time slice, and
 * libgomp's default spin-waiting makes it worse: at load 13 a 2-thread 256^3 product ran at 1 GF/s
 * (about 18 with one thread), torch's alike. Here the caller starts on the tiles at once, each helper
 * joins when it runs, and the caller waits only for tiles a helper has already begun.
 *
 * Tiles: thread w owns the range [ntiles * w / n, ntiles * (w + 1) / n), takes from its front (in a quiet
 * machine each thread walks its own contiguous part, as a static split would) and, once it is empty,
 * steals single tiles from the back of the others'. A range is one 64-bit word (lo | hi << 32), claimed
 * with one compare-and-swap by owner and thieves alike.
 *
 * A job is published by bumping a generation counter; a helper announces itself in `active` and then
 * checks the job is still open, while the caller closes it and then waits for `active` to drain (each
 * side writes before it reads, sequentially consistent: one of them sees the other). Idle helpers spin
 * for about SPIN_NS (back-to-back products find them awake), then sleep on a condition variable, so an
 * idle process takes no cpu from others. */
#include "THTilePool.h"

#include <immintrin.h>
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#define MAX_WORKERS 64
#define SPIN_NS 200000

typedef struct {
  _Alignas(64) _Atomic uint64_t r;
} TileRange;

static struct {
  pthread_mutex_t busy;   /* one job at a time; a second caller runs its tiles alone */
  pthread_mutex_t m;
  pthread_cond_t cv;
  _Atomic uint64_t gen;
  _Atomic int open, active, sleepers;
  int started;            /* helpers running (ids 1 .. started) */
  /* the job: written by the caller before gen is bumped, read by helpers only while it is open */
  int64_t ntiles;
  int n;
  THTileFn fn;
  void *ctx;
  TileRange q[MAX_WORKERS];
} P = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER };

static bool take(TileRange *q, bool back, int64_t *tile) {
  uint64_t v = atomic_load_explicit(&q->r, memory_order_relaxed);
  for (;;) {
    uint32_t lo = (uint32_t)v, hi = (uint32_t)(v >> 32);
    if (lo >= hi) return false;
    uint64_t nv = back ? ((uint64_t)(hi - 1) << 32 | lo) : v + 1;
    if (atomic_compare_exchange_weak(&q->r, &v, nv)) {
      *tile = back ? hi - 1 : lo;
      return true;
    }
  }
}

/* worker me: its own range from the front, then the others' from the back */
static void work(int me) {
  int n = P.n;
  for (int v = 0; v < n; v++) {
    int64_t tile;
    while (take(&P.q[(me + v) % n], v > 0, &tile)) P.fn(P.ctx, tile, me);
  }
}

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void *helper(void *arg) {
  int me = (int)(intptr_t)arg;
  uint64_t seen = atomic_load(&P.gen);
  for (;;) {
    int64_t t0 = now_ns();
    for (int i = 0; atomic_load_explicit(&P.gen, memory_order_acquire) == seen; i++) {
      _mm_pause();
      if ((i & 63) == 63 && now_ns() - t0 > SPIN_NS) {
        pthread_mutex_lock(&P.m);
        atomic_fetch_add(&P.sleepers, 1);
        while (atomic_load(&P.gen) == seen) pthread_cond_wait(&P.cv, &P.m);
        atomic_fetch_sub(&P.sleepers, 1);
        pthread_mutex_unlock(&P.m);
      }
    }
    seen = atomic_load(&P.gen);
    atomic_fetch_add(&P.active, 1);
    if (atomic_load(&P.open) && atomic_load(&P.gen) == seen && me < P.n) work(me);
    atomic_fetch_sub(&P.active, 1);
  }
  return NULL;
}

/* a forked child has none of the parent's helpers: start afresh (and lazily) there */
static void after_fork_child(void) {
  pthread_mutex_init(&P.busy, NULL);
  pthread_mutex_init(&P.m, NULL);
  pthread_cond_init(&P.cv, NULL);
  atomic_store(&P.open, 0);
  atomic_store(&P.active, 0);
  atomic_store(&P.sleepers, 0);
  P.started = 0;
}

/* helpers up to n - 1; returns how many workers there are (fewer if a thread could not be made) */
static int ensure_helpers(int n) {
  static bool registered;
  if (!registered) {
    if (pthread_atfork(NULL, NULL, after_fork_child) != 0) return 1;
    registered = true;
  }
  while (P.started < n - 1) {
    pthread_t th;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&th, &at, helper, (void *)(intptr_t)(P.started + 1));
    pthread_attr_destroy(&at);
    if (rc != 0) break;
    P.started++;
  }
  return P.started + 1 < n ? P.started + 1 : n;
}

void THTilePool_run(int64_t ntiles, int nthreads, THTileFn fn, void *ctx) {
  int n = nthreads < MAX_WORKERS ? nthreads : MAX_WORKERS;
  if (n > ntiles) n = (int)ntiles;
  if (n <= 1 || ntiles > UINT32_MAX || omp_in_parallel() || pthread_mutex_trylock(&P.busy) != 0) {
    for (int64_t t = 0; t < ntiles; t++) fn(ctx, t, 0);
    return;
  }
  n = ensure_helpers(n);
  P.ntiles = ntiles;
  P.n = n;
  P.fn = fn;
  P.ctx = ctx;
  for (int w = 0; w < n; w++)
    atomic_store_explicit(&P.q[w].r, (uint64_t)(ntiles * w / n) | (uint64_t)(ntiles * (w + 1) / n) << 32,
                          memory_order_relaxed);
  atomic_store(&P.open, 1);
  atomic_fetch_add(&P.gen, 1);
  if (atomic_load(&P.sleepers) > 0) {
    pthread_mutex_lock(&P.m);
    pthread_cond_broadcast(&P.cv);
    pthread_mutex_unlock(&P.m);
  }
  work(0);
  atomic_store(&P.open, 0);
  /* only helpers that began a tile are waited for; one taken off its core mid-tile gets ours */
  for (int i = 0; atomic_load(&P.active) > 0; i++) {
    if (i < 4096) _mm_pause();
    else sched_yield();
  }
  pthread_mutex_unlock(&P.busy);
}
