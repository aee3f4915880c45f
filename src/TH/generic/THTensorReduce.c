/* Reduction kernels over a 2-d problem prepared by ATen (ATReduce.c):
 * out[m] = reduce_k x[m*sm + k*sk] for m < M, k < K (strides in elements).
 * Sums accumulate in double (floats) or int64 (integers); outputs are
 * written as `scalar_t` of this file's dtype. */
#include "../THLoops.h"

#if defined(TH_REAL_IS_FLOATING)
typedef double THTensor_(acc_t);
#else
typedef int64_t THTensor_(acc_t);
#endif

/* out has dtype `odt` given as an element writer so sum(int8) -> int64 works. */
#if defined(TH_REAL_IS_FLOATING) && !defined(TH_REAL_IS_REDUCED)
/* float32/float64 sums add in the dtype, in the order of torch's CPU cascade
 * sum (its SumKernel), so printed sums and means carry torch's bits:
 * - multi-level cascade: four levels of accumulators, level 0 takes
 *   2^level_power additions, then flushes into level 1, which flushes into
 *   level 2 every 2^(2 level_power) additions, and so on;
 * - row sum: four interleaved cascades (element 4i+k into cascade k), the
 *   leftover n mod 4 elements added into cascade 0, then cascades 1..3 into 0;
 * - a contiguous row of >= one vector is row-summed as vectors of the width
 *   torch's kernels use (32 bytes, 64 under AVX512), then its tail elements
 *   are added to 0 one by one, then the lanes in order. */
typedef scalar_t THTensor_(v32) __attribute__((vector_size(32)));
typedef scalar_t THTensor_(v64) __attribute__((vector_size(64)));
static inline THTensor_(v32) THTensor_(ld32)(const scalar_t *p) { THTensor_(v32) v; memcpy(&v, p, sizeof v); return v; }
static inline THTensor_(v64) THTensor_(ld64)(const scalar_t *p) { THTensor_(v64) v; memcpy(&v, p, sizeof v); return v; }
static inline scalar_t THTensor_(ld1)(const scalar_t *p) { return *p; }

/* torch's level_power: max(4, ceil(log2(n)) / 4), with ceil(log2(n)) = 1 for n <= 2 */
static inline int THTensor_(cascade_power)(int64_t n) {
  int c = n <= 2 ? 1 : 64 - __builtin_clzll((uint64_t)(n - 1));
  return c / 4 > 4 ? c / 4 : 4;
}

/* NAME(x, st, n, nrows): nrows == 4 gives the row sum of n units (unit i at x + i*st);
 * nrows == 1 gives one cascade over n units. U is the unit type, LD its load. */
#define TH_CASCADE_FN(NAME, U, LD)                                                        \
  static U NAME(const scalar_t *x, int64_t st, int64_t n, int nrows) {                    \
    const int64_t rows = n / nrows;                                                       \
    const int lp = THTensor_(cascade_power)(rows);                                        \
    const int64_t step = (int64_t)1 << lp, mask = step - 1;                               \
    const U zero = {0};                                                                   \
    U a[4][4];                                                                            \
    for (int l = 0; l < 4; l++) for (int k = 0; k < 4; k++) a[l][k] = zero;               \
    int64_t i = 0;                                                                        \
    while (i + step <= rows) {                                                            \
      if (nrows == 4)                                                                     \
        for (int64_t j = 0; j < step; j++, i++) {                                         \
          const scalar_t *b = x + i * 4 * st;                                             \
          a[0][0] += LD(b); a[0][1] += LD(b + st); a[0][2] += LD(b + 2 * st); a[0][3] += LD(b + 3 * st); \
        }                                                                                 \
      else                                                                                \
        for (int64_t j = 0; j < step; j++, i++) a[0][0] += LD(x + i * st);                \
      for (int l = 1; l < 4; l++) {                                                       \
        for (int k = 0; k < nrows; k++) { a[l][k] += a[l - 1][k]; a[l - 1][k] = zero; }   \
        if (i & (mask << (l * lp))) break;                                                \
      }                                                                                   \
    }                                                                                     \
    for (; i < rows; i++)                                                                 \
      for (int k = 0; k < nrows; k++) a[0][k] += LD(x + (i * nrows + k) * st);            \
    for (int l = 1; l < 4; l++)                                                           \
      for (int k = 0; k < nrows; k++) a[0][k] += a[l][k];                                 \
    for (int64_t t = rows * nrows; t < n; t++) a[0][0] += LD(x + t * st);                 \
    for (int k = 1; k < nrows; k++) a[0][0] += a[0][k];                                   \
    return a[0][0];                                                                       \
  }
/* NAME(x, sk, W, K, res): four cascades over K rows at once, cascade k summing the unit at
 * x + i*sk + k*W of row i (torch's outer sum of 4 adjacent vectors of columns) */
#define TH_CASCADE4_FN(NAME, U, LD)                                                       \
  static void NAME(const scalar_t *x, int64_t sk, int64_t W, int64_t K, U res[4]) {       \
    const int lp = THTensor_(cascade_power)(K);                                           \
    const int64_t step = (int64_t)1 << lp, mask = step - 1;                               \
    const U zero = {0};                                                                   \
    U a[4][4];                                                                            \
    for (int l = 0; l < 4; l++) for (int k = 0; k < 4; k++) a[l][k] = zero;               \
    int64_t i = 0;                                                                        \
    while (i + step <= K) {                                                               \
      for (int64_t j = 0; j < step; j++, i++) {                                           \
        const scalar_t *b = x + i * sk;                                                   \
        a[0][0] += LD(b); a[0][1] += LD(b + W); a[0][2] += LD(b + 2 * W); a[0][3] += LD(b + 3 * W); \
      }                                                                                   \
      for (int l = 1; l < 4; l++) {                                                       \
        for (int k = 0; k < 4; k++) { a[l][k] += a[l - 1][k]; a[l - 1][k] = zero; }       \
        if (i & (mask << (l * lp))) break;                                                \
      }                                                                                   \
    }                                                                                     \
    for (; i < K; i++)                                                                    \
      for (int k = 0; k < 4; k++) a[0][k] += LD(x + i * sk + k * W);                      \
    for (int k = 0; k < 4; k++) {                                                         \
      for (int l = 1; l < 4; l++) a[0][k] += a[l][k];                                     \
      res[k] = a[0][k];                                                                   \
    }                                                                                     \
  }
TH_CASCADE4_FN(THTensor_(cascade4x32), THTensor_(v32), THTensor_(ld32))
TH_CASCADE4_FN(THTensor_(cascade4x64), THTensor_(v64), THTensor_(ld64))
#undef TH_CASCADE4_FN
TH_CASCADE_FN(THTensor_(cascade1), scalar_t, THTensor_(ld1))
TH_CASCADE_FN(THTensor_(cascade32), THTensor_(v32), THTensor_(ld32))
TH_CASCADE_FN(THTensor_(cascade64), THTensor_(v64), THTensor_(ld64))
#undef TH_CASCADE_FN

/* the bytes of torch's vector type: 64 when its CPU capability is AVX512, else 32 */
static int THTensor_(torch_vec_bytes)(void) {
  static int bytes;
  if (!bytes) {
    const char *cap = getenv("ATEN_CPU_CAPABILITY");
    int avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                 __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
    if (cap && *cap && strcmp(cap, "avx512") != 0) avx512 = 0;
    bytes = avx512 ? 64 : 32;
  }
  return bytes;
}

/* torch's sum of a contiguous row of under 64 vectors under 32-byte vectors, with the vector
 * width a constant (a run-time width divides and loops over its lanes, which cost 1.7x torch
 * on rows of 8-16). Under a vector: four interleaved sums (the cascade never
 * flushes below 16 groups), the (zero) upper level added (-0 + 0 is +0), the leftover
 * elements into the first, the sums into the first. Else: the tail elements summed, 4 vector
 * sums, the leftover vectors into the first, the (zero) upper levels added, the sums into the
 * first, its lanes in order into the tail's sum. */
static inline __attribute__((always_inline)) scalar_t THTensor_(sum_row_short32)(const scalar_t *x, int64_t n) {
  enum { W = 32 / sizeof(scalar_t) };
  if (n < W) {
    scalar_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    const int64_t g = n / 4;
    for (int64_t i = 0; i < g; i++) { a0 += x[4 * i]; a1 += x[4 * i + 1]; a2 += x[4 * i + 2]; a3 += x[4 * i + 3]; }
    a0 += (scalar_t)0; a1 += (scalar_t)0; a2 += (scalar_t)0; a3 += (scalar_t)0;
    for (int64_t t = g * 4; t < n; t++) a0 += x[t];
    a0 += a1; a0 += a2; a0 += a3;
    return a0;
  }
  const int64_t nv = n / W, g = nv / 4;
  scalar_t f = 0;
  for (int64_t k = nv * W; k < n; k++) f += x[k];
  const THTensor_(v32) zero = {0};
  THTensor_(v32) a0 = zero, a1 = zero, a2 = zero, a3 = zero;
  for (int64_t i = 0; i < g; i++) {
    const scalar_t *b = x + i * 4 * W;
    a0 += THTensor_(ld32)(b); a1 += THTensor_(ld32)(b + W); a2 += THTensor_(ld32)(b + 2 * W); a3 += THTensor_(ld32)(b + 3 * W);
  }
  a0 += zero; a1 += zero; a2 += zero; a3 += zero;
  for (int64_t t = g * 4; t < nv; t++) a0 += THTensor_(ld32)(x + t * W);
  a0 += a1; a0 += a2; a0 += a3;
  for (int l = 0; l < W; l++) f += a0[l];
  return f;
}

/* torch's sum of one reduced row of n elements at stride st */
scalar_t THTensor_(sum_row_torch)(const scalar_t *x, int64_t n, int64_t st, bool vec) {
  const int vb = THTensor_(torch_vec_bytes)();
  const int64_t W = vb / (int64_t)sizeof(scalar_t);
  if (!vec || st != 1 || n < W) return THTensor_(cascade1)(x, st, n, 4);
  const int64_t nv = n / W;
  /* under 16 groups of 4 vectors the cascade never flushes (its step is >= 16) */
  if (vb == 32 && nv < 4 * 16) return THTensor_(sum_row_short32)(x, n);
  scalar_t f = 0;
  for (int64_t k = nv * W; k < n; k++) f += x[k];
  if (vb == 64) {
    THTensor_(v64) r = THTensor_(cascade64)(x, W, nv, 4);
    for (int64_t l = 0; l < W; l++) f += r[l];
  } else {
    THTensor_(v32) r = THTensor_(cascade32)(x, W, nv, 4);
    for (int64_t l = 0; l < W; l++) f += r[l];
  }
  return f;
}

/* torch's outer sum of M < one vector of adjacent columns, bit for bit, in one pass over the rows:
 * columns [0, whole) one cascade each over the K rows (torch sums 4 such columns side by side),
 * columns [whole, M) four interleaved cascades over the K / 4 groups of rows (its row sum), then
 * the tail rows. Column by column (below) the pass kept one or four dependent add chains and read
 * every row's cache line once per column: 1.5-2x torch's time on (4096, 7) and (16384, 5). Both
 * cascades flush at group ends (their steps are multiples of 16 rows or groups). M a constant in
 * the specialized copies, so the accumulators stay in registers. */
static inline __attribute__((always_inline)) void THTensor_(sum_cols_narrow_k)(double *out, const scalar_t *x,
                                                                               const int M, int64_t K, int64_t sk) {
  const int whole = M / 4 * 4, R = M - whole;
  const int lpa = THTensor_(cascade_power)(K), lpb = THTensor_(cascade_power)(K / 4);
  const int64_t ma = ((int64_t)1 << lpa) - 1, mb = ((int64_t)1 << lpb) - 1;
  scalar_t a[4][4], b[4][4][4];   /* a[level][column], b[level][cascade][column - whole] */
  memset(a, 0, sizeof a);
  memset(b, 0, sizeof b);
  const int64_t G = K / 4;
  for (int64_t g = 0; g < G; g++) {
    const scalar_t *p = x + 4 * g * sk;
    for (int k = 0; k < 4; k++) {
      for (int c = 0; c < whole; c++) a[0][c] += p[k * sk + c];
      for (int c = 0; c < R; c++) b[0][k][c] += p[k * sk + whole + c];
    }
    const int64_t i = 4 * (g + 1), gi = g + 1;
    if (whole && !(i & ma))
      for (int l = 1; l < 4; l++) {
        for (int c = 0; c < whole; c++) { a[l][c] += a[l - 1][c]; a[l - 1][c] = 0; }
        if (i & (ma << (l * lpa))) break;
      }
    if (R && !(gi & mb))
      for (int l = 1; l < 4; l++) {
        for (int k = 0; k < 4; k++)
          for (int c = 0; c < R; c++) { b[l][k][c] += b[l - 1][k][c]; b[l - 1][k][c] = 0; }
        if (gi & (mb << (l * lpb))) break;
      }
  }
  for (int c = 0; c < whole; c++) {
    scalar_t s = a[0][c];
    for (int64_t i = 4 * G; i < K; i++) s += x[i * sk + c];
    for (int l = 1; l < 4; l++) s += a[l][c];
    out[c] = s;
  }
  for (int c = 0; c < R; c++) {
    scalar_t s[4];
    for (int k = 0; k < 4; k++) {
      s[k] = b[0][k][c];
      for (int l = 1; l < 4; l++) s[k] += b[l][k][c];
    }
    for (int64_t t = 4 * G; t < K; t++) s[0] += x[t * sk + whole + c];
    for (int k = 1; k < 4; k++) s[0] += s[k];
    out[whole + c] = s[0];
  }
}
static void THTensor_(sum_cols_narrow)(double *out, const scalar_t *x, int64_t M, int64_t K, int64_t sk) {
  switch (M) {
  case 1: THTensor_(sum_cols_narrow_k)(out, x, 1, K, sk); break;
  case 2: THTensor_(sum_cols_narrow_k)(out, x, 2, K, sk); break;
  case 3: THTensor_(sum_cols_narrow_k)(out, x, 3, K, sk); break;
  case 4: THTensor_(sum_cols_narrow_k)(out, x, 4, K, sk); break;
  case 5: THTensor_(sum_cols_narrow_k)(out, x, 5, K, sk); break;
  case 6: THTensor_(sum_cols_narrow_k)(out, x, 6, K, sk); break;
  default: THTensor_(sum_cols_narrow_k)(out, x, 7, K, sk); break;
  }
}

/* torch's outer reduction (outputs adjacent or further apart than the reduced
 * elements): the columns of whole groups (4 vectors of them when the outputs are
 * contiguous and at least a vector wide, else 4) take one cascade each, the rest a row sum */
static void THTensor_(sum_cols_torch)(double *out, const scalar_t *x, int64_t M, int64_t K, int64_t sm, int64_t sk) {
  const int64_t W = THTensor_(torch_vec_bytes)() / (int64_t)sizeof(scalar_t);
  if (sm == 1 && M < W && M <= 7 && sk >= M) { THTensor_(sum_cols_narrow)(out, x, M, K, sk); return; }
  const int64_t G = sm == 1 && M >= W ? 4 * W : 4, whole = M / G * G;
  int64_t m = 0;
  /* adjacent outputs: 4 vectors of W columns at a time in whole groups, then one vector,
   * lane l summing column m + l */
  for (; sm == 1 && G == 4 * W && m < whole; m += 4 * W) {
    if (W * (int64_t)sizeof(scalar_t) == 64) {
      THTensor_(v64) r[4];
      THTensor_(cascade4x64)(x + m, sk, W, K, r);
      for (int k = 0; k < 4; k++) for (int64_t l = 0; l < W; l++) out[m + k * W + l] = r[k][l];
    } else {
      THTensor_(v32) r[4];
      THTensor_(cascade4x32)(x + m, sk, W, K, r);
      for (int k = 0; k < 4; k++) for (int64_t l = 0; l < W; l++) out[m + k * W + l] = r[k][l];
    }
  }
  for (; sm == 1 && m + W <= M; m += W) {
    const int nrows = m < whole ? 1 : 4;
    if (W * (int64_t)sizeof(scalar_t) == 64) {
      THTensor_(v64) r = THTensor_(cascade64)(x + m, sk, K, nrows);
      for (int64_t l = 0; l < W; l++) out[m + l] = r[l];
    } else {
      THTensor_(v32) r = THTensor_(cascade32)(x + m, sk, K, nrows);
      for (int64_t l = 0; l < W; l++) out[m + l] = r[l];
    }
  }
  for (; m < M; m++)
    out[m] = m < whole ? THTensor_(cascade1)(x + m * sm, sk, K, 1) : THTensor_(sum_row_torch)(x + m * sm, K, sk, true);
}
#endif

void THTensor_(sum_2d)(double *out_d, int64_t *out_i, const scalar_t *x, int64_t M, int64_t K,
                       int64_t sm, int64_t sk) {
#if defined(TH_REAL_IS_FLOATING) && !defined(TH_REAL_IS_REDUCED)
  if (M == 1 || sk < sm || sm == 0) {   /* inner reductions: a row sum per output */
    if (sk == 1 && K < 64 * (32 / (int64_t)sizeof(scalar_t)) && THTensor_(torch_vec_bytes)() == 32) {
      for (int64_t m = 0; m < M; m++) out_d[m] = THTensor_(sum_row_short32)(x + m * sm, K);
      return;
    }
    for (int64_t m = 0; m < M; m++) out_d[m] = THTensor_(sum_row_torch)(x + m * sm, K, sk, true);
  } else {
    THTensor_(sum_cols_torch)(out_d, x, M, K, sm, sk);
  }
  return;
#elif defined(TH_REAL_IS_REDUCED)
  /* float16/bfloat16 rows: converted to float a block at a time (vectorized), then float32's
   * full-sum loop over the block, blocks combined in double */
  double THFloatTensor_sum_contig(const float *x, int64_t n);
  if (sk == 1 && out_d) {
    float buf[4096];
    for (int64_t m = 0; m < M; m++) {
      const scalar_t *row = x + m * sm;
      double total = 0;
      for (int64_t b = 0; b < K; b += 4096) {
        const int64_t nb = K - b < 4096 ? K - b : 4096;
        _Generic(row, const THHalf *: th_half2float_n, const THBFloat16 *: th_bf2float_n)(row + b, buf, nb);
        total += THFloatTensor_sum_contig(buf, nb);
      }
      out_d[m] = total;
    }
    return;
  }
#endif
  if (sk == 1) {
    for (int64_t m = 0; m < M; m++) {
      const scalar_t *row = x + m * sm;
      THTensor_(acc_t) a0 = 0, a1 = 0, a2 = 0, a3 = 0;
      int64_t k = 0;
      for (; k + 4 <= K; k += 4) {
        a0 += TOC(row[k]); a1 += TOC(row[k + 1]); a2 += TOC(row[k + 2]); a3 += TOC(row[k + 3]);
      }
      for (; k < K; k++) a0 += TOC(row[k]);
      THTensor_(acc_t) s = (a0 + a1) + (a2 + a3);
      if (out_d) out_d[m] = (double)s; else out_i[m] = (int64_t)s;
    }
  } else if (sm == 1) {
    /* column sums: accumulate whole rows, vectorised along m */
    THTensor_(acc_t) *acc = calloc(M ? M : 1, sizeof *acc);
    if (!acc) return;
    for (int64_t k = 0; k < K; k++) {
      const scalar_t *row = x + k * sk;
      for (int64_t m = 0; m < M; m++) acc[m] += TOC(row[m]);
    }
    for (int64_t m = 0; m < M; m++) { if (out_d) out_d[m] = (double)acc[m]; else out_i[m] = (int64_t)acc[m]; }
    free(acc);
  } else {
    for (int64_t m = 0; m < M; m++) {
      THTensor_(acc_t) s = 0;
      for (int64_t k = 0; k < K; k++) s += TOC(x[m * sm + k * sk]);
      if (out_d) out_d[m] = (double)s; else out_i[m] = (int64_t)s;
    }
  }
}

/* Float32 full sums: a float accumulator per SIMD lane, blocks combined in
 * double, so 16M-element sums are both fast and accurate. */
#if defined(TH_REAL_IS_FLOATING) && !defined(TH_REAL_IS_REDUCED)
double THTensor_(sum_contig)(const scalar_t *x, int64_t n) {
  double total = 0;
  const int64_t B = 4096;
  for (int64_t b = 0; b < n; b += B) {
    int64_t e = b + B < n ? b + B : n;
    /* 64 lanes: four independent vector add chains, so the loop runs at
     * load throughput rather than at one add's latency per vector */
    scalar_t acc[64] = {0};
    int64_t i = b;
    for (; i + 64 <= e; i += 64)
      for (int j = 0; j < 64; j++) acc[j] += x[i + j];
    scalar_t s = 0;
    for (int j = 0; j < 64; j++) s += acc[j];
    for (; i < e; i++) s += x[i];
    total += s;
  }
  return total;
}
#endif
