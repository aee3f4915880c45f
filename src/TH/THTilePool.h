/* A product split into tiles, run by the calling thread and helper threads that join when they get a core
 * (see THTilePool.c for why GEMM does not use an OpenMP region for this). */
#ifndef TH_TILE_POOL_H
#define TH_TILE_POOL_H
#include "THGeneral.h"

/* fn(ctx, tile, worker) for every tile in [0, ntiles), each exactly once, worker in [0, nthreads): no two
 * calls with the same worker run at once (per-worker scratch may be indexed by it). Returns when all
 * tiles are done. One thread (worker 0, the caller) runs them all when nthreads <= 1, inside an OpenMP
 * region, or while another thread's product holds the helpers. */
typedef void (*THTileFn)(void *ctx, int64_t tile, int worker);
TH_API void THTilePool_run(int64_t ntiles, int nthreads, THTileFn fn, void *ctx);

#endif
