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
void THTensor_(sum_2d)(double *out_d, int64_t *out_i, const scalar_t *x, int64_t M, int64_t K,
                       int64_t sm, int64_t sk) {
#if defined(TH_REAL_IS_FLOATING) && !defined(TH_REAL_IS_REDUCED)
  double THTensor_(sum_contig)(const scalar_t *x, int64_t n);   /* below */
  if (sk == 1 && out_d) {   /* rows (a whole tensor is one): the vectorized full-sum loop per row */
    for (int64_t m = 0; m < M; m++) out_d[m] = THTensor_(sum_contig)(x + m * sm, K);
    return;
  }
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
