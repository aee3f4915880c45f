/* 8 x 8 blocks transposed in AVX2 registers; the scalar loop takes the edges (and cpus without AVX2).
 * The source is read in strips of 8 rows, so each strip streams 8 rows and fills 32-byte pieces of
 * n destination rows that the next strip completes while they are still cached. */
#include "THTranspose.h"
#include <immintrin.h>

__attribute__((target("avx2"))) static void transpose_avx2(int64_t m, int64_t n, const float *src, int64_t lds,
                                                          float *dst, int64_t ldd) {
  int64_t i = 0;
  for (; i + 8 <= m; i += 8) {
    int64_t j = 0;
    for (; j + 8 <= n; j += 8) {
      const float *s = src + i * lds + j;
      __m256 r0 = _mm256_loadu_ps(s), r1 = _mm256_loadu_ps(s + lds), r2 = _mm256_loadu_ps(s + 2 * lds),
             r3 = _mm256_loadu_ps(s + 3 * lds), r4 = _mm256_loadu_ps(s + 4 * lds), r5 = _mm256_loadu_ps(s + 5 * lds),
             r6 = _mm256_loadu_ps(s + 6 * lds), r7 = _mm256_loadu_ps(s + 7 * lds);
      __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1), t2 = _mm256_unpacklo_ps(r2, r3),
             t3 = _mm256_unpackhi_ps(r2, r3), t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5),
             t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
      __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE),
             u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE),
             u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE),
             u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
      float *d = dst + j * ldd + i;
      _mm256_storeu_ps(d, _mm256_permute2f128_ps(u0, u4, 0x20));
      _mm256_storeu_ps(d + ldd, _mm256_permute2f128_ps(u1, u5, 0x20));
      _mm256_storeu_ps(d + 2 * ldd, _mm256_permute2f128_ps(u2, u6, 0x20));
      _mm256_storeu_ps(d + 3 * ldd, _mm256_permute2f128_ps(u3, u7, 0x20));
      _mm256_storeu_ps(d + 4 * ldd, _mm256_permute2f128_ps(u0, u4, 0x31));
      _mm256_storeu_ps(d + 5 * ldd, _mm256_permute2f128_ps(u1, u5, 0x31));
      _mm256_storeu_ps(d + 6 * ldd, _mm256_permute2f128_ps(u2, u6, 0x31));
      _mm256_storeu_ps(d + 7 * ldd, _mm256_permute2f128_ps(u3, u7, 0x31));
    }
    for (; j < n; j++)
      for (int64_t k = i; k < i + 8; k++) dst[j * ldd + k] = src[k * lds + j];
  }
  for (; i < m; i++)
    for (int64_t j = 0; j < n; j++) dst[j * ldd + i] = src[i * lds + j];
}

static void transpose_portable(int64_t m, int64_t n, const float *src, int64_t lds, float *dst, int64_t ldd) {
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) dst[j * ldd + i] = src[i * lds + j];
}

void THTranspose_f32(int64_t m, int64_t n, const float *src, int64_t lds, float *dst, int64_t ldd) {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2")) transpose_avx2(m, n, src, lds, dst, ldd);
  else transpose_portable(m, n, src, lds, dst, ldd);
}
