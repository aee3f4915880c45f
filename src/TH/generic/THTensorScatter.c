/* Row kernel of gather/scatter/index_add (driven by src/ATen/ATScatter.c).
 * Element j of a row: the self slot is self[j*s_in + idx[j*i_in]*s_dim] and
 * the other operand is other[j*o_in] (src, or the output for gather).
 * Strides are in elements. The caller guarantees indices are in bounds and
 * that no two threads run rows that reach the same self slot. */
#ifndef TH_GENERIC_FILE
#error "include through THTensorScatter.c"
#endif

#ifdef TH_REAL_IS_BOOL
#define TH_SCATTER_MULT(a, b) ((a) && (b))
#else
#define TH_SCATTER_MULT(a, b) ((a) * (b))
#endif

/* always inlined, so the callers below get copies with constant strides */
static inline __attribute__((always_inline)) bool THTensor_(scatter_body)(
    const THScatterRow *r, int64_t n, int64_t s_in, int64_t i_in, int64_t o_in, int64_t *bad) {
  THScatterOp op = r->op;
  int64_t s_dim = r->s_dim;
  uint64_t bound = (uint64_t)r->bound;
#if defined(TH_REAL_IS_FLOATING)
  compute_t a = (compute_t)r->alpha_d;
#else
  compute_t a = (compute_t)r->alpha_i;
#endif
  for (int64_t q = 0; q < r->nrows; q++) {
    scalar_t *s = (scalar_t *)r->self + q * r->s_row, *o = (scalar_t *)r->other + q * r->o_row;
    const int64_t *ix = r->idx + q * r->i_row;
#define SLOT(j) s[(j) * s_in + k * s_dim]
#define EACH(BODY) for (int64_t j = 0; j < n; j++) { CHECK(j); scalar_t *p = &SLOT(j); compute_t v = TOC(o[j * o_in]); BODY; }
#define CHECK(j) int64_t k = ix[(j) * i_in]; if ((uint64_t)k >= bound) { *bad = k; return false; }
  switch (op) {
    case TH_SCATTER_GATHER:
      for (int64_t j = 0; j < n; j++) { CHECK(j); o[j * o_in] = SLOT(j); }
      break;
    case TH_SCATTER_SET:
      for (int64_t j = 0; j < n; j++) { CHECK(j); SLOT(j) = o[j * o_in]; }
      break;
    case TH_SCATTER_ADD:
      EACH(*p = FROMC(TOC(*p) + v))
      break;
    case TH_SCATTER_ADD_ALPHA:
      EACH(*p = FROMC(TOC(*p) + TH_SCATTER_MULT(v, a)))
      break;
    case TH_SCATTER_MUL:
      EACH(*p = FROMC(TH_SCATTER_MULT(TOC(*p), v)))
      break;
    case TH_SCATTER_MAX:   /* NaN wins and stays */
      EACH(compute_t c = TOC(*p); *p = FROMC((v > c) | (v != v) ? v : c))
      break;
    case TH_SCATTER_MIN:
      EACH(compute_t c = TOC(*p); *p = FROMC((v < c) | (v != v) ? v : c))
      break;
  }
#undef CHECK
#undef EACH
#undef SLOT
  }
  return true;
}

bool THTensor_(scatter_row)(const THScatterRow *r, int64_t n, int64_t *bad) {
  /* o_in is 1 (src, gather's output) or 0 (a scattered value) in the common cases */
#define TH_SCATTER_CASE(S, I, O) \
  if (r->s_in == S && r->i_in == I && r->o_in == O) return THTensor_(scatter_body)(r, n, S, I, O, bad);
  TH_SCATTER_CASE(1, 1, 1)   /* contiguous rows */
  TH_SCATTER_CASE(1, 0, 1)   /* one index per row (index_add, an expanded index) */
  TH_SCATTER_CASE(0, 1, 1)   /* rows along the scatter dim */
  TH_SCATTER_CASE(1, 1, 0)
  TH_SCATTER_CASE(1, 0, 0)
  TH_SCATTER_CASE(0, 1, 0)
#undef TH_SCATTER_CASE
  return THTensor_(scatter_body)(r, n, r->s_in, r->i_in, r->o_in, bad);
}
#undef TH_SCATTER_MULT
