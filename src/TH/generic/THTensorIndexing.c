/* Typed kernels of the indexing family (driven by src/ATen/ATIndexing.c). */
#ifndef TH_GENERIC_FILE
#error "include through THTensorIndexing.c"
#endif

void THTensor_(index_accum)(char *dst, const char *v, const int64_t *pre, int64_t npre, const int64_t *off,
                            int64_t nb, const int64_t *post, int64_t npost, int64_t vs) {
  scalar_t *d = (scalar_t *)dst;
  const scalar_t *s = (const scalar_t *)v;
  for (int64_t p = 0; p < npre; p++)
    for (int64_t j = 0; j < nb; j++) {
      scalar_t *restrict row = d + pre[p] + off[j];
      const scalar_t *restrict src = s + (p * nb + j) * vs;
      if (!post) {
        for (int64_t q = 0; q < npost; q++) row[q] = FROMC(TOC(row[q]) + TOC(src[q]));
      } else {
        for (int64_t q = 0; q < npost; q++) row[post[q]] = FROMC(TOC(row[post[q]]) + TOC(src[q]));
      }
    }
}

/* nonzero as PyTorch reads it: x != 0, so NaN counts and -0.0 does not. Bools
 * are read as bytes: a _Bool load of a byte other than 0/1 (empty() memory) is
 * undefined, and count and list must agree on it. */
#if defined(TH_REAL_IS_BOOL)
#define TH_NZ(x) (*(const uint8_t *)&(x) != 0)
#else
#define TH_NZ(x) (TOC(x) != (compute_t)0)
#endif

int64_t THTensor_(count_nonzero)(const char *data, int64_t lo, int64_t hi) {
  const scalar_t *x = (const scalar_t *)data;
  int64_t c = 0;
  for (int64_t i = lo; i < hi; i++) c += TH_NZ(x[i]);
  return c;
}

void THTensor_(list_nonzero)(const char *data, int64_t lo, int64_t hi, int ndim, const int64_t *sizes,
                             int64_t *out) {
  const scalar_t *x = (const scalar_t *)data;
  if (ndim <= 1) {
    for (int64_t i = lo; i < hi; i++) if (TH_NZ(x[i])) *out++ = i;
    return;
  }
  int64_t ctr[TH_MAX_DIMS], rem = lo;
  for (int d = ndim - 1; d >= 0; d--) { ctr[d] = rem % sizes[d]; rem /= sizes[d]; }
  int64_t inner = sizes[ndim - 1];
  for (int64_t i = lo; i < hi;) {
    int64_t end = i + (inner - ctr[ndim - 1]);
    if (end > hi) end = hi;
    for (int64_t k = i; k < end; k++)
      if (TH_NZ(x[k])) {
        for (int d = 0; d < ndim - 1; d++) *out++ = ctr[d];
        *out++ = ctr[ndim - 1] + (k - i);
      }
    ctr[ndim - 1] += end - i;
    i = end;
    if (ctr[ndim - 1] < inner) continue;
    ctr[ndim - 1] = 0;
    for (int d = ndim - 2; d >= 0; d--) { if (++ctr[d] < sizes[d]) break; ctr[d] = 0; }
  }
}
#undef TH_NZ
