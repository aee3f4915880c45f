/* Packed-B float32 GEMM (see THGemmPacked.h): MR x NR register tiles over
 * B's column panels, K in chunks of KC so a panel's chunk (KC x NR floats,
 * 24 KB) stays in L1 while every row block of A passes over it. */
#include "THGemmPacked.h"

#include <immintrin.h>
#include <math.h>
#include <omp.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define NR THGEMM_NR
#define MR 4
#define KC 256
/* below this many multiply-adds a product stays on one thread: waking the
 * others costs more than it saves */
#define SPLIT_MACS (1LL << 20)

typedef void (*tile_fn)(int64_t K, const float *a, int64_t lda, int m, const float *bp, float *c, int64_t ldc,
                        int n, float alpha, float beta);

/* C's m x n corner (m <= MR, n <= NR) from a full MR x NR tile t of A B, rounded as the full tile's
 * stores round (alpha t + beta c in one fma), so an element's bits do not depend on which tile computed it */
static void merge_edge(const float *t, float *c, int64_t ldc, int m, int n, float alpha, float beta) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++)
      c[i * ldc + j] = beta == 0.f ? alpha * t[i * NR + j] : fmaf(alpha, t[i * NR + j], beta * c[i * ldc + j]);
}

/* the fallback for cpus without AVX2/FMA: the same tiles in plain C, which
 * the compiler vectorises for whatever the build targets */
static void tile_portable(int64_t K, const float *a, int64_t lda, int m, const float *bp, float *c, int64_t ldc,
                          int n, float alpha, float beta) {
  float t[MR * NR] = { 0 };
  for (int64_t k = 0; k < K; k++, bp += NR)
    for (int i = 0; i < m; i++) {
      float x = a[i * lda + k];
      for (int j = 0; j < NR; j++) t[i * NR + j] += x * bp[j];
    }
  merge_edge(t, c, ldc, m, n, alpha, beta);
}

#define ROW_STORE(r, v0, v1, v2)                                                                 \
  do {                                                                                           \
    float *cr = c + (r) * ldc;                                                                   \
    if (beta == 0.f) {                                                                           \
      _mm256_storeu_ps(cr, _mm256_mul_ps(va, v0));                                               \
      _mm256_storeu_ps(cr + 8, _mm256_mul_ps(va, v1));                                           \
      _mm256_storeu_ps(cr + 16, _mm256_mul_ps(va, v2));                                          \
    } else {                                                                                     \
      _mm256_storeu_ps(cr, _mm256_fmadd_ps(va, v0, _mm256_mul_ps(vb, _mm256_loadu_ps(cr))));           \
      _mm256_storeu_ps(cr + 8, _mm256_fmadd_ps(va, v1, _mm256_mul_ps(vb, _mm256_loadu_ps(cr + 8))));   \
      _mm256_storeu_ps(cr + 16, _mm256_fmadd_ps(va, v2, _mm256_mul_ps(vb, _mm256_loadu_ps(cr + 16)))); \
    }                                                                                            \
  } while (0)

/* 4 x 24: twelve accumulators (enough independent FMAs to cover their
 * latency on two FMA pipes), three B loads and four broadcasts per k. Rows
 * past m read row 0 again and are not stored. */
__attribute__((target("avx2,fma"))) static void tile_avx2(int64_t K, const float *a, int64_t lda, int m,
                                                          const float *bp, float *c, int64_t ldc, int n,
                                                          float alpha, float beta) {
  const float *a0 = a, *a1 = a + (m > 1 ? lda : 0), *a2 = a + (m > 2 ? 2 * lda : 0),
              *a3 = a + (m > 3 ? 3 * lda : 0);
  /* C's rows are read (or written) only after the K loop: ask for their lines now. A recurrent
   * layer's C is a step's slice of the input projection, long out of cache; waiting for it at
   * the end cost 15% of a 32 x 1024 x 256 product */
  for (int i = 0; i < m; i++) {
    _mm_prefetch((const char *)(c + i * ldc), _MM_HINT_T0);
    _mm_prefetch((const char *)(c + i * ldc + 16), _MM_HINT_T0);
    _mm_prefetch((const char *)(c + i * ldc + NR - 1), _MM_HINT_T0);
  }
  __m256 c00 = _mm256_setzero_ps(), c01 = c00, c02 = c00, c10 = c00, c11 = c00, c12 = c00;
  __m256 c20 = c00, c21 = c00, c22 = c00, c30 = c00, c31 = c00, c32 = c00;
  for (int64_t k = 0; k < K; k++, bp += NR) {
    __m256 b0 = _mm256_loadu_ps(bp), b1 = _mm256_loadu_ps(bp + 8), b2 = _mm256_loadu_ps(bp + 16);
    /* keep B's row in registers: gcc otherwise folds each load into all
     * four FMAs that read it (16 loads per 12 FMAs: load-bound) */
    __asm__("" : "+x"(b0), "+x"(b1), "+x"(b2));
    __m256 x = _mm256_broadcast_ss(a0 + k);
    c00 = _mm256_fmadd_ps(x, b0, c00); c01 = _mm256_fmadd_ps(x, b1, c01); c02 = _mm256_fmadd_ps(x, b2, c02);
    x = _mm256_broadcast_ss(a1 + k);
    c10 = _mm256_fmadd_ps(x, b0, c10); c11 = _mm256_fmadd_ps(x, b1, c11); c12 = _mm256_fmadd_ps(x, b2, c12);
    x = _mm256_broadcast_ss(a2 + k);
    c20 = _mm256_fmadd_ps(x, b0, c20); c21 = _mm256_fmadd_ps(x, b1, c21); c22 = _mm256_fmadd_ps(x, b2, c22);
    x = _mm256_broadcast_ss(a3 + k);
    c30 = _mm256_fmadd_ps(x, b0, c30); c31 = _mm256_fmadd_ps(x, b1, c31); c32 = _mm256_fmadd_ps(x, b2, c32);
  }
  __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
  if (m == MR && n == NR) {
    ROW_STORE(0, c00, c01, c02);
    ROW_STORE(1, c10, c11, c12);
    ROW_STORE(2, c20, c21, c22);
    ROW_STORE(3, c30, c31, c32);
    return;
  }
  float t[MR * NR];
  _mm256_storeu_ps(t, c00); _mm256_storeu_ps(t + 8, c01); _mm256_storeu_ps(t + 16, c02);
  _mm256_storeu_ps(t + 24, c10); _mm256_storeu_ps(t + 32, c11); _mm256_storeu_ps(t + 40, c12);
  _mm256_storeu_ps(t + 48, c20); _mm256_storeu_ps(t + 56, c21); _mm256_storeu_ps(t + 64, c22);
  _mm256_storeu_ps(t + 72, c30); _mm256_storeu_ps(t + 80, c31); _mm256_storeu_ps(t + 88, c32);
  merge_edge(t, c, ldc, m, n, alpha, beta);
}

#define NARROW_STORE(r, v0, v1)                                                                        \
  do {                                                                                                 \
    float *cr = c + (r) * ldc;                                                                         \
    if (beta == 0.f) {                                                                                 \
      _mm256_storeu_ps(cr, _mm256_mul_ps(va, v0));                                                     \
      if (nv > 1) _mm256_storeu_ps(cr + 8, _mm256_mul_ps(va, v1));                                     \
    } else {                                                                                           \
      _mm256_storeu_ps(cr, _mm256_fmadd_ps(va, v0, _mm256_mul_ps(vb, _mm256_loadu_ps(cr))));           \
      if (nv > 1) _mm256_storeu_ps(cr + 8, _mm256_fmadd_ps(va, v1, _mm256_mul_ps(vb, _mm256_loadu_ps(cr + 8)))); \
    }                                                                                                  \
  } while (0)

/* 4 x 8 and 4 x 16 tiles for a product's (or a thread's) last columns: the 4 x 24 tile there would spend
 * up to two thirds of its multiply-adds on the panel's zero padding */
__attribute__((target("avx2,fma"), always_inline)) static inline void
tile_narrow(const int nv, int64_t K, const float *a, int64_t lda, int m, const float *bp, float *c, int64_t ldc, int n,
            float alpha, float beta) {
  const float *a0 = a, *a1 = a + (m > 1 ? lda : 0), *a2 = a + (m > 2 ? 2 * lda : 0),
              *a3 = a + (m > 3 ? 3 * lda : 0);
  __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00, c31 = c00;
  for (int64_t k = 0; k < K; k++, bp += NR) {
    __m256 b0 = _mm256_loadu_ps(bp), b1 = nv > 1 ? _mm256_loadu_ps(bp + 8) : b0;
    __asm__("" : "+x"(b0), "+x"(b1));
    __m256 x = _mm256_broadcast_ss(a0 + k);
    c00 = _mm256_fmadd_ps(x, b0, c00);
    if (nv > 1) c01 = _mm256_fmadd_ps(x, b1, c01);
    x = _mm256_broadcast_ss(a1 + k);
    c10 = _mm256_fmadd_ps(x, b0, c10);
    if (nv > 1) c11 = _mm256_fmadd_ps(x, b1, c11);
    x = _mm256_broadcast_ss(a2 + k);
    c20 = _mm256_fmadd_ps(x, b0, c20);
    if (nv > 1) c21 = _mm256_fmadd_ps(x, b1, c21);
    x = _mm256_broadcast_ss(a3 + k);
    c30 = _mm256_fmadd_ps(x, b0, c30);
    if (nv > 1) c31 = _mm256_fmadd_ps(x, b1, c31);
  }
  if (m == MR && n == 8 * nv) {   /* a whole tile: vector stores (through merge_edge, 2000 x 64 x 40 took 14% longer) */
    __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
    NARROW_STORE(0, c00, c01);
    NARROW_STORE(1, c10, c11);
    NARROW_STORE(2, c20, c21);
    NARROW_STORE(3, c30, c31);
    return;
  }
  float t[MR * NR];
  _mm256_storeu_ps(t, c00); _mm256_storeu_ps(t + 8, c01);
  _mm256_storeu_ps(t + 24, c10); _mm256_storeu_ps(t + 32, c11);
  _mm256_storeu_ps(t + 48, c20); _mm256_storeu_ps(t + 56, c21);
  _mm256_storeu_ps(t + 72, c30); _mm256_storeu_ps(t + 80, c31);
  merge_edge(t, c, ldc, m, n, alpha, beta);
}

__attribute__((target("avx2,fma"))) static void tile_avx2_8(int64_t K, const float *a, int64_t lda, int m,
                                                            const float *bp, float *c, int64_t ldc, int n,
                                                            float alpha, float beta) {
  tile_narrow(1, K, a, lda, m, bp, c, ldc, n, alpha, beta);
}

__attribute__((target("avx2,fma"))) static void tile_avx2_16(int64_t K, const float *a, int64_t lda, int m,
                                                             const float *bp, float *c, int64_t ldc, int n,
                                                             float alpha, float beta) {
  tile_narrow(2, K, a, lda, m, bp, c, ldc, n, alpha, beta);
}

static tile_fn pick_tile(void) {
  static tile_fn chosen;   /* a benign race: every thread picks the same */
  if (!chosen) {
    const char *force = getenv("CTHTORCH_GEMM_PACKED");
    bool portable = force && strcmp(force, "portable") == 0;
    __builtin_cpu_init();
    chosen = !portable && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? tile_avx2
                                                                                           : tile_portable;
  }
  return chosen;
}

const char *THGemmPacked_kernel(void) { return pick_tile() == tile_avx2 ? "avx2" : "portable"; }

int64_t THGemmPacked_size(int64_t K, int64_t N) { return (N + NR - 1) / NR * NR * K; }

/* ---- the general float32 GEMM (A not transposed), blocked as BLAS does ----
 * K in chunks of at most KC; B's chunk packed into NR-column panels (at most NCP of them at a time); A's
 * rows, in blocks of MC, read in place. A panel's chunk (24 KB) stays in L1 while the MC / MR tiles of
 * the A block (128 KB, in L2) pass over it: there the tiles run at 98% of the FMA units' rate, and packing
 * B is the only extra pass. Threads take columns (or rows, when there are few columns) and share nothing,
 * so no thread waits for another before the end: on a loaded machine a wait inside the product costs a
 * time slice. Every element of C is summed in the same order (chunk by chunk, k ascending) whatever the
 * thread count. */
#define MC 128
#define NCP 128

/* columns [j0, j0 + n) (n <= NR) x rows [k0, k0 + kc) of B (element (k, j) at b[k * sk + j * sn]) into one
 * panel, kc rows of NR floats, zero past n. Full panels copy by vectors: row pieces when B's rows are
 * contiguous, 4 x 4 blocks transposed in registers when its columns are (a weight W read as W^T); a
 * memcpy or a scalar gather per row or column took 2x the time of packing a recurrent layer's weight. */
static void pack_b_panel(const float *b, int64_t sk, int64_t sn, int64_t k0, int64_t kc, int64_t j0, int n,
                         float *dst) {
  const float *src = b + k0 * sk + j0 * sn;
  if (n < NR && kc > 0) memset(dst, 0, (size_t)(kc * NR) * sizeof(float));   /* kc = 0: dst may be an empty tensor's NULL */
  if (sn == 1 && n % 4 == 0) {
    for (int64_t k = 0; k < kc; k++) {
      const float *r = src + k * sk;
      for (int j = 0; j < n; j += 4) _mm_storeu_ps(dst + k * NR + j, _mm_loadu_ps(r + j));
    }
    return;
  }
  if (sk == 1 && n % 4 == 0) {
    int64_t k = 0;
    for (; k + 4 <= kc; k += 4)
      for (int j = 0; j < n; j += 4) {
        const float *c0 = src + j * sn + k;
        __m128 x0 = _mm_loadu_ps(c0), x1 = _mm_loadu_ps(c0 + sn), x2 = _mm_loadu_ps(c0 + 2 * sn),
               x3 = _mm_loadu_ps(c0 + 3 * sn);
        _MM_TRANSPOSE4_PS(x0, x1, x2, x3);
        _mm_storeu_ps(dst + k * NR + j, x0);
        _mm_storeu_ps(dst + (k + 1) * NR + j, x1);
        _mm_storeu_ps(dst + (k + 2) * NR + j, x2);
        _mm_storeu_ps(dst + (k + 3) * NR + j, x3);
      }
    for (; k < kc; k++)
      for (int j = 0; j < n; j++) dst[k * NR + j] = src[j * sn + k];
    return;
  }
  /* other widths or strides: row pieces, or a gather along B's columns written within the panel */
  if (sn == 1) {
    for (int64_t k = 0; k < kc; k++) memcpy(dst + k * NR, src + k * sk, (size_t)n * sizeof(float));
  } else {
    for (int j = 0; j < n; j++) {
      const float *col = src + j * sn;
      for (int64_t k = 0; k < kc; k++) dst[k * NR + j] = col[k * sk];
    }
  }
}

void THGemmPacked_pack(int64_t K, int64_t N, const float *b, int64_t sk, int64_t sn, float *packed) {
  for (int64_t p = 0, np = (N + NR - 1) / NR; p < np; p++)
    pack_b_panel(b, sk, sn, 0, K, p * NR, N - p * NR < NR ? (int)(N - p * NR) : NR, packed + p * K * NR);
}

/* The packing workspace, kept between calls: allocating and freeing a few hundred KB each call goes
 * through mmap, and touching each fresh page again cost more than a 256 x 256 product's packing. One
 * cached buffer for the process (its size in its first 64 bytes, so buffer and size travel together);
 * a call that finds it taken (another thread's GEMM) allocates its own. */
#define WS_HEAD 16
static _Atomic(float *) ws_cache;

static size_t ws_size(const float *w) {
  size_t n;
  memcpy(&n, w - WS_HEAD, sizeof n);
  return n;
}

static float *ws_take(size_t n) {
  float *w = atomic_exchange(&ws_cache, NULL);
  if (w && ws_size(w) >= n) return w;
  if (w) free(w - WS_HEAD);
  float *raw = aligned_alloc(64, ((n + WS_HEAD) * sizeof(float) + 63) / 64 * 64);
  if (!raw) return NULL;
  memcpy(raw, &n, sizeof n);
  return raw + WS_HEAD;
}

/* every exchange hands a buffer's ownership over: to the cache slot, or to this call, which frees it */
static void ws_give(float *w) {
  float *old = atomic_exchange(&ws_cache, w);
  if (!old) return;
  if (ws_size(old) > ws_size(w)) {   /* keep the larger: put it back, drop whatever is there now */
    float *cur = atomic_exchange(&ws_cache, old);
    if (cur) free(cur - WS_HEAD);
  } else {
    free(old - WS_HEAD);
  }
}

typedef struct {
  int64_t M, K, kcmax, lda, sk, sn, ldc;
  float alpha, beta;
  const float *a, *b;
  float *c;
  tile_fn tiles[3];   /* for panels of at most 8, 16 and 24 columns */
} SgemmArgs;

/* How a thread's columns [j0, j0 + w) are cut into panels: NR-wide ones, and for the rest one panel, or,
 * when the rest is 8 columns or fewer after a full panel, two of at most 16 (the 4 x 8 tile's 4 FMAs a k
 * are bound by the FMA latency: it costs twice the 4 x 24 tile's time a column, where the 4 x 16 tile's 8
 * FMAs just cover the latency and cost the same). */
typedef struct {
  int64_t nfull, npanels, rest;   /* rest: columns after the nfull full panels */
} PanelCut;

static PanelCut panel_cut(int64_t w) {
  PanelCut pc = { .nfull = w / NR, .rest = w % NR };
  if (pc.rest > 0 && pc.rest <= 8 && pc.nfull > 0) {
    pc.nfull--;
    pc.rest += NR;
  }
  pc.npanels = pc.nfull + (pc.rest > NR ? 2 : pc.rest > 0);
  return pc;
}

/* panel q's first column (from the thread's j0) and width */
static int panel_at(const PanelCut *pc, int64_t q, int64_t *off) {
  if (q < pc->nfull) {
    *off = q * NR;
    return NR;
  }
  int64_t r = pc->rest;
  if (r <= NR && q == pc->nfull) {   /* one panel for the rest */
    *off = q * NR;
    return (int)r;
  }
  *off = pc->nfull * NR + (q == pc->nfull ? 0 : 16);   /* two: 16 columns, then the other 1 .. 16 */
  return q == pc->nfull ? 16 : (int)(r - 16);
}

/* rows [i0, i1) x columns [j0, j1) of C, one thread's part; ws holds the packed panels (at most NCP) */
static void sgemm_part(const SgemmArgs *g, int64_t i0, int64_t i1, int64_t j0, int64_t j1, float *ws) {
  int64_t kcmax = g->kcmax;
  PanelCut pc = panel_cut(j1 - j0);
  for (int64_t qb = 0; qb < pc.npanels; qb += NCP) {
    int64_t qn = pc.npanels - qb < NCP ? pc.npanels - qb : NCP;
    for (int64_t k0 = 0; k0 < g->K; k0 += kcmax) {
      int64_t kc = g->K - k0 < kcmax ? g->K - k0 : kcmax, off;
      float bt = k0 == 0 ? g->beta : 1.f;
      for (int64_t q = 0; q < qn; q++) {
        int n = panel_at(&pc, qb + q, &off);
        pack_b_panel(g->b, g->sk, g->sn, k0, kc, j0 + off, n, ws + q * kc * NR);
      }
      for (int64_t ib = i0; ib < i1; ib += MC) {
        int64_t m = i1 - ib < MC ? i1 - ib : MC;
        const float *ab = g->a + ib * g->lda + k0;
        for (int64_t q = 0; q < qn; q++) {
          int n = panel_at(&pc, qb + q, &off);
          tile_fn tile = g->tiles[(n - 1) / 8];
          for (int64_t i = 0; i < m; i += MR)
            tile(kc, ab + i * g->lda, g->lda, m - i < MR ? (int)(m - i) : MR, ws + q * kc * NR,
                 g->c + (ib + i) * g->ldc + j0 + off, g->ldc, n, g->alpha, bt);
        }
      }
    }
  }
}

void THGemm_sgemm(bool tb, int64_t M, int64_t N, int64_t K, float alpha, const float *a, int64_t lda, const float *b,
                  int64_t ldb, float beta, float *c, int64_t ldc, int nthreads) {
  if (M <= 0 || N <= 0) return;
  if (K <= 0) {
    THGemmPacked_run(M, N, 0, alpha, a, lda, NULL, beta, c, ldc, 1);
    return;
  }
  bool avx2 = pick_tile() == tile_avx2;
  /* K in equal chunks of at most KC: a short last chunk would run the tiles' fixed costs for little work */
  int64_t nk = (K + KC - 1) / KC;
  SgemmArgs g = { .M = M, .K = K, .kcmax = (K + nk - 1) / nk, .lda = lda, .sk = tb ? 1 : ldb, .sn = tb ? ldb : 1,
                  .ldc = ldc, .alpha = alpha, .beta = beta, .a = a, .b = b, .c = c,
                  .tiles = { avx2 ? tile_avx2_8 : tile_portable, avx2 ? tile_avx2_16 : tile_portable,
                             avx2 ? tile_avx2 : tile_portable } };
  int nt = nthreads > 1 && !omp_in_parallel() ? nthreads : 1;
  /* columns split at multiples of 16 (a 64-byte line: no line of C is written by two threads), unless
   * there are too few */
  bool by_rows = N < 32 * nt;
  if (by_rows && M < 16 * nt) nt = 1;
  int64_t npt = by_rows ? (N + NR - 1) / NR : (N / nt + 16 + NR - 1) / NR;   /* a thread's panels, at most */
  size_t per = (size_t)((npt < NCP ? npt : NCP) * NR * g.kcmax);
  float *ws = ws_take(per * nt);
  if (!ws) {   /* no memory for the packed panels: the plain loops need none */
    for (int64_t i = 0; i < M; i++)
      for (int64_t j = 0; j < N; j++) {
        float s = 0.f;
        for (int64_t k = 0; k < K; k++) s += a[i * lda + k] * b[k * g.sk + j * g.sn];
        c[i * ldc + j] = beta == 0.f ? alpha * s : alpha * s + beta * c[i * ldc + j];
      }
    return;
  }
#pragma omp parallel for num_threads(nt) if (nt > 1) schedule(static)
  for (int t = 0; t < nt; t++) {
    if (by_rows) {
      int64_t i0 = M * t / nt / MR * MR, i1 = t == nt - 1 ? M : M * (t + 1) / nt / MR * MR;
      sgemm_part(&g, i0, i1, 0, N, ws + per * t);
    } else {
      int64_t j0 = (N * t / nt + 8) / 16 * 16, j1 = t == nt - 1 ? N : (N * (t + 1) / nt + 8) / 16 * 16;
      sgemm_part(&g, 0, M, j0, j1, ws + per * t);
    }
  }
  ws_give(ws);
}

void THGemmPacked_run(int64_t M, int64_t N, int64_t K, float alpha, const float *a, int64_t lda,
                      const float *packed, float beta, float *c, int64_t ldc, int nthreads) {
  if (M <= 0 || N <= 0) return;
  if (K <= 0) {   /* C = beta C */
    for (int64_t i = 0; i < M; i++)
      for (int64_t j = 0; j < N; j++) c[i * ldc + j] = beta == 0.f ? 0.f : beta * c[i * ldc + j];
    return;
  }
  tile_fn tile = pick_tile();
  /* a last panel of at most 16 columns (N = 256: 10 panels and 16 columns) on the narrow tiles, which
   * skip the padding's multiply-adds and sum each element in the same order */
  tile_fn last = tile == tile_avx2 ? (N % NR && N % NR <= 8 ? tile_avx2_8 : N % NR && N % NR <= 16 ? tile_avx2_16 : tile)
                                   : tile;
  int64_t np = (N + NR - 1) / NR, mb = (M + MR - 1) / MR;
  bool par = nthreads > 1 && M * N * K >= SPLIT_MACS && !omp_in_parallel();
  /* tasks are panels, or (when the panels do not divide evenly among few
   * threads, as 11 panels of N = 256 over 2) panel halves by rows of A */
  int64_t R = par && np % nthreads && np < 8 * nthreads && mb >= 2 ? 2 : 1, rows = (mb + R - 1) / R * MR;
#pragma omp parallel for num_threads(nthreads) if (par) schedule(static)
  for (int64_t task = 0; task < np * R; task++) {
    int64_t p = task / R, i0 = task % R * rows, i1 = i0 + rows < M ? i0 + rows : M;
    int n = N - p * NR < NR ? (int)(N - p * NR) : NR;
    const float *panel = packed + p * K * NR;
    tile_fn tp = p == np - 1 ? last : tile;
    for (int64_t k0 = 0; k0 < K; k0 += KC) {
      int64_t kc = K - k0 < KC ? K - k0 : KC;
      float bt = k0 == 0 ? beta : 1.f;
      for (int64_t i = i0; i < i1; i += MR)
        tp(kc, a + i * lda + k0, lda, i1 - i < MR ? (int)(i1 - i) : MR, panel + k0 * NR, c + i * ldc + p * NR, ldc,
             n, alpha, bt);
    }
  }
}
