/* Packed-B float32 GEMM (see THGemmPacked.h): MR x NR register tiles over
 * B's column panels, K in chunks of KC so a panel's chunk (KC x NR floats,
 * 24 KB) stays in L1 while every row block of A passes over it. */
#include "THGemmPacked.h"

#include <immintrin.h>
#include <omp.h>
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

/* C's m x n corner (m <= MR, n <= NR) from a full MR x NR tile t of A B */
static void merge_edge(const float *t, float *c, int64_t ldc, int m, int n, float alpha, float beta) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++)
      c[i * ldc + j] = beta == 0.f ? alpha * t[i * NR + j] : alpha * t[i * NR + j] + beta * c[i * ldc + j];
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

void THGemmPacked_pack(int64_t K, int64_t N, const float *b, int64_t sk, int64_t sn, float *packed) {
  int64_t np = (N + NR - 1) / NR;
  for (int64_t p = 0; p < np; p++) {
    float *dst = packed + p * K * NR;
    int64_t j0 = p * NR, n = N - j0 < NR ? N - j0 : NR;
    if (n < NR)
      memset(dst, 0, (size_t)(K * NR) * sizeof(float));
    if (sn == 1) {   /* rows of B are contiguous: copy row pieces */
      for (int64_t k = 0; k < K; k++) memcpy(dst + k * NR, b + k * sk + j0, (size_t)n * sizeof(float));
    } else {         /* read along B's columns (a transposed weight), write within the L1-sized panel */
      for (int64_t j = 0; j < n; j++) {
        const float *col = b + (j0 + j) * sn;
        for (int64_t k = 0; k < K; k++) dst[k * NR + j] = col[k * sk];
      }
    }
  }
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
    for (int64_t k0 = 0; k0 < K; k0 += KC) {
      int64_t kc = K - k0 < KC ? K - k0 : KC;
      float bt = k0 == 0 ? beta : 1.f;
      for (int64_t i = i0; i < i1; i += MR)
        tile(kc, a + i * lda + k0, lda, i1 - i < MR ? (int)(i1 - i) : MR, panel + k0 * NR, c + i * ldc + p * NR, ldc,
             n, alpha, bt);
    }
  }
}
