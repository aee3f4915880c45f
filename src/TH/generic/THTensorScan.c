/* Scans along D of a contiguous [outer, D, inner] block (see THKernelsScan.h).
 * Accumulators follow PyTorch's CPU acc_type: double for float/double, float
 * for half/bfloat16, 64-bit integers (wrapping) for integral types.
 * With inner > 1 a row of up to SCAN_BLOCK running values is carried down
 * the D rows, so the inner loop is a contiguous, vectorizable pass. */
#ifndef TH_GENERIC_FILE
#error "include through THTensorScan.c"
#endif

#ifndef TH_SCAN_BLOCK
#define TH_SCAN_BLOCK 512
#endif

#if defined(TH_REAL_IS_REDUCED)
#define ACC_T float
#define ACC_LOG1P log1pf
#define ACC_EXP expf
#elif defined(TH_REAL_IS_FLOATING)
#define ACC_T double
#define ACC_LOG1P log1p
#define ACC_EXP exp
#else
#define ACC_T uint64_t   /* wraps like PyTorch's int64 accumulator, without signed overflow */
#endif

#ifdef TH_REAL_IS_FLOATING
/* PyTorch's _log_add_exp_helper(x, acc): NaN in either propagates, and two
 * equal infinities give x back instead of inf - inf. */
static inline ACC_T THTensor_(log_add_exp)(ACC_T x, ACC_T y) {
  ACC_T mn = isnan(y) ? y : (y < x ? y : x), mx = isnan(y) ? y : (x < y ? y : x);
  if (mn != mx || isfinite(mn)) return ACC_LOG1P(ACC_EXP(mn - mx)) + mx;
  return x;
}
#define TH_SCAN_IS_FLOAT 1
#define ISNAN_C(v) ((v) != (v))
#else
#define ISNAN_C(v) 0
#endif

/* running sum/product/log-sum-exp: acc[i] starts at `init` */
static void THTensor_(scan_acc)(const THScanArgs *a, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
  const scalar_t *x = (const scalar_t *)a->x;
  scalar_t *out = (scalar_t *)a->out;
  int64_t D = a->D, inner = a->inner, w = i1 - i0;
  THScanOp op = a->op;
  bool rev = op == TH_SCAN_SUM_REVERSE || op == TH_SCAN_LOGSUMEXP_REVERSE;
  ACC_T acc[TH_SCAN_BLOCK];
  for (int64_t o = o0; o < o1; o++) {
    for (int64_t i0b = i0; i0b < i1; i0b += TH_SCAN_BLOCK) {
      int64_t n = w - (i0b - i0) < TH_SCAN_BLOCK ? w - (i0b - i0) : TH_SCAN_BLOCK;
      ACC_T init = op == TH_SCAN_PROD ? (ACC_T)1 : (ACC_T)0;
#ifdef TH_SCAN_IS_FLOAT
      if (op == TH_SCAN_LOGSUMEXP || op == TH_SCAN_LOGSUMEXP_REVERSE) init = -(ACC_T)INFINITY;
#endif
      for (int64_t i = 0; i < n; i++) acc[i] = init;
      for (int64_t kk = 0; kk < D; kk++) {
        int64_t k = rev ? D - 1 - kk : kk, base = (o * D + k) * inner + i0b;
        const scalar_t *xr = x + base;
        scalar_t *orow = out + base;
        switch (op) {
          case TH_SCAN_SUM: case TH_SCAN_SUM_REVERSE:
            for (int64_t i = 0; i < n; i++) { acc[i] += (ACC_T)TOC(xr[i]); orow[i] = FROMC(acc[i]); }
            break;
          case TH_SCAN_PROD:
            for (int64_t i = 0; i < n; i++) { acc[i] *= (ACC_T)TOC(xr[i]); orow[i] = FROMC(acc[i]); }
            break;
#ifdef TH_SCAN_IS_FLOAT
          case TH_SCAN_LOGSUMEXP: case TH_SCAN_LOGSUMEXP_REVERSE:
            for (int64_t i = 0; i < n; i++) {
              acc[i] = THTensor_(log_add_exp)((ACC_T)TOC(xr[i]), acc[i]);
              orow[i] = FROMC(acc[i]);
            }
            break;
#endif
          default: break;
        }
      }
    }
  }
}

/* The same along lines (inner == 1). One line is a chain of dependent
 * steps, so TH_SCAN_ROWS lines advance together (independent chains the CPU
 * overlaps); the rows left over go one at a time. */
#ifndef TH_SCAN_ROWS
#define TH_SCAN_ROWS 8
#endif
#ifdef TH_SCAN_IS_FLOAT
#define TH_SCAN_LSE_STEP(acc, v) acc = THTensor_(log_add_exp)(v, acc)
#else
#define TH_SCAN_LSE_STEP(acc, v) ((void)(v))
#endif
#define TH_SCAN_LINES(R, STEP)                                                     \
  for (int64_t kk = 0; kk < D; kk++) {                                            \
    int64_t k = rev ? D - 1 - kk : kk;                                            \
    for (int r = 0; r < (R); r++) {                                               \
      ACC_T v_ = (ACC_T)TOC(x[(o + r) * D + k]);                                  \
      STEP(acc[r], v_);                                                           \
      out[(o + r) * D + k] = FROMC(acc[r]);                                       \
    }                                                                             \
  }
#define TH_SCAN_ADD(acc, v) acc += v
#define TH_SCAN_MUL(acc, v) acc *= v
static void THTensor_(scan_line)(const THScanArgs *a, int64_t o0, int64_t o1) {
  const scalar_t *x = (const scalar_t *)a->x;
  scalar_t *out = (scalar_t *)a->out;
  int64_t D = a->D;
  THScanOp op = a->op;
  bool rev = op == TH_SCAN_SUM_REVERSE || op == TH_SCAN_LOGSUMEXP_REVERSE;
  bool lse = op == TH_SCAN_LOGSUMEXP || op == TH_SCAN_LOGSUMEXP_REVERSE;
  ACC_T init = op == TH_SCAN_PROD ? (ACC_T)1 : (ACC_T)0;
#ifdef TH_SCAN_IS_FLOAT
  if (lse) init = -(ACC_T)INFINITY;
#endif
  for (int64_t o = o0; o < o1;) {
    int R = o1 - o >= TH_SCAN_ROWS ? TH_SCAN_ROWS : 1;
    ACC_T acc[TH_SCAN_ROWS];
    for (int r = 0; r < TH_SCAN_ROWS; r++) acc[r] = init;
    if (R == TH_SCAN_ROWS) {
      if (op == TH_SCAN_PROD) { TH_SCAN_LINES(TH_SCAN_ROWS, TH_SCAN_MUL) }
      else if (lse) { TH_SCAN_LINES(TH_SCAN_ROWS, TH_SCAN_LSE_STEP) }
      else { TH_SCAN_LINES(TH_SCAN_ROWS, TH_SCAN_ADD) }
    } else {
      if (op == TH_SCAN_PROD) { TH_SCAN_LINES(1, TH_SCAN_MUL) }
      else if (lse) { TH_SCAN_LINES(1, TH_SCAN_LSE_STEP) }
      else { TH_SCAN_LINES(1, TH_SCAN_ADD) }
    }
    o += R;
  }
}
#undef TH_SCAN_LINES
#undef TH_SCAN_ADD
#undef TH_SCAN_MUL
#undef TH_SCAN_LSE_STEP

/* running max/min: a new element takes over when it is NaN, or when the
 * current one is not NaN and the new one is >= (max) / <= (min) it, so ties
 * move the index to the LAST equal element (PyTorch's rule). */
#define TAKES(v, c, is_max) (ISNAN_C(v) || (!ISNAN_C(c) && ((is_max) ? (v) >= (c) : (v) <= (c))))
static void THTensor_(scan_extreme)(const THScanArgs *a, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
  const scalar_t *x = (const scalar_t *)a->x;
  scalar_t *out = (scalar_t *)a->out;
  int64_t *idx = a->idx, D = a->D, inner = a->inner;
  bool is_max = a->op == TH_SCAN_MAX;
  if (inner == 1) {
    for (int64_t o = o0; o < o1; o++) {
      const scalar_t *xl = x + o * D;
      if (!D) continue;
      compute_t c = TOC(xl[0]);
      int64_t ci = 0;
      for (int64_t k = 0; k < D; k++) {
        compute_t v = TOC(xl[k]);
        if (TAKES(v, c, is_max)) { c = v; ci = k; }
        out[o * D + k] = FROMC(c);
        idx[o * D + k] = ci;
      }
    }
    return;
  }
  compute_t cv[TH_SCAN_BLOCK];
  int64_t ci[TH_SCAN_BLOCK];
  for (int64_t o = o0; o < o1; o++)
    for (int64_t ib = i0; ib < i1; ib += TH_SCAN_BLOCK) {
      int64_t n = i1 - ib < TH_SCAN_BLOCK ? i1 - ib : TH_SCAN_BLOCK;
      for (int64_t k = 0; k < D; k++) {
        int64_t base = (o * D + k) * inner + ib;
        const scalar_t *xr = x + base;
        for (int64_t i = 0; i < n; i++) {
          compute_t v = TOC(xr[i]);
          if (k == 0 || TAKES(v, cv[i], is_max)) { cv[i] = v; ci[i] = k; }
          out[base + i] = FROMC(cv[i]);
          idx[base + i] = ci[i];
        }
      }
    }
}
#undef TAKES

void THTensor_(scan)(const THScanArgs *a, int64_t o0, int64_t o1, int64_t i0, int64_t i1) {
  if (a->op == TH_SCAN_MAX || a->op == TH_SCAN_MIN) THTensor_(scan_extreme)(a, o0, o1, i0, i1);
  else if (a->inner == 1) THTensor_(scan_line)(a, o0, o1);
  else THTensor_(scan_acc)(a, o0, o1, i0, i1);
}

#undef ACC_T
#ifdef TH_SCAN_IS_FLOAT
#undef ACC_LOG1P
#undef ACC_EXP
#undef TH_SCAN_IS_FLOAT
#endif
#undef ISNAN_C
