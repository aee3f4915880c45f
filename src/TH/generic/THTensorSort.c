/* The sort family's row kernels (declared in THKernelsSort.h, driven by
 * src/ATen/ATSort.c), compiled once per dtype.
 *
 * A row is copied into (key, index) pairs, the key in compute_t, and ordered
 * there. Which index torch reports among equal values depends on the
 * algorithm it runs, so the pickers copy torch's algorithms step for step:
 *   sort          ties break by index (stable); sort(stable=False) of a row
 *                 with ties: libstdc++'s std::sort with torch's NaN-aware
 *                 comparators (torch's sort_kernel_impl)
 *   topk          libstdc++'s partial_sort, or nth_element and sort (TOPK below)
 *   kthvalue      torch's quick_select_template (SortingUtils.h)
 *   median(dim)   std::nth_element of libstdc++ (introselect), ties by index
 *   mode          std::sort of libstdc++ (introsort) by value, then a scan
 * The introsort below is libstdc++'s (threshold 16, median of three moved
 * to the front, unguarded partition, heap sort past 2*log2(n) levels, a
 * final insertion sort), so for the same comparator it makes the same
 * permutation as torch's build. */
#ifndef TH_GENERIC_FILE
#error "include through THTensorSort.c"
#endif

#define Pair THTensor_(Pair)
typedef struct { compute_t v; int64_t i; } Pair;

#if defined(TH_REAL_IS_FLOATING)
#define SNAN(v) ((v) != (v))
#else
#define SNAN(v) 0
#endif

/* the orders: plain `<` on values (torch's mode), torch's nanmedian order
 * (NaNs above all and equivalent among themselves, which decides the pick in
 * an all-NaN row), and the stable ones of values without NaN */
#define LT_VAL(a, b) ((a).v < (b).v)
#define LT_NANMED(a, b) ((a).v < (b).v || ((a).v == (b).v && (a).i < (b).i) || (SNAN((b).v) && !SNAN((a).v)))
/* sort/topk order rows with their NaNs set apart first (load below), so
 * these two never see a NaN */
#define LT_ASC(a, b) ((a).v < (b).v || ((a).v == (b).v && (a).i < (b).i))
#define LT_DESC(a, b) ((a).v > (b).v || ((a).v == (b).v && (a).i < (b).i))
/* a value below b in torch's gt_or_nan sense: b > a or b is a NaN and a is not */
#define GT_OR_NAN(a, b) ((SNAN((a).v) && !SNAN((b).v)) || (a).v > (b).v)
/* torch's topk(largest=False) order: a before b when a < b or b alone is a NaN */
#define LT_OR_NAN(a, b) ((!SNAN((a).v) && SNAN((b).v)) || (a).v < (b).v)

static inline int64_t THTensor_(lg)(int64_t n) { return 63 - __builtin_clzll((unsigned long long)n); }

/* libstdc++'s introsort and introselect over Pair for one comparator LT */
#define SORT_ALGOS(S, LT)                                                                   \
  static inline void THTensor_(swap_##S)(Pair *a, Pair *b) { Pair t = *a; *a = *b; *b = t; } \
  static void THTensor_(push_heap_##S)(Pair *f, int64_t hole, int64_t top, Pair v) {       \
    int64_t parent = (hole - 1) / 2;                                                        \
    while (hole > top && LT(f[parent], v)) { f[hole] = f[parent]; hole = parent; parent = (hole - 1) / 2; } \
    f[hole] = v;                                                                            \
  }                                                                                         \
  static void THTensor_(adjust_heap_##S)(Pair *f, int64_t hole, int64_t len, Pair v) {     \
    int64_t top = hole, child = hole;                                                       \
    while (child < (len - 1) / 2) {                                                         \
      child = 2 * (child + 1);                                                              \
      if (LT(f[child], f[child - 1])) child--;                                              \
      f[hole] = f[child];                                                                   \
      hole = child;                                                                         \
    }                                                                                       \
    if ((len & 1) == 0 && child == (len - 2) / 2) {                                         \
      child = 2 * (child + 1);                                                              \
      f[hole] = f[child - 1];                                                               \
      hole = child - 1;                                                                     \
    }                                                                                       \
    THTensor_(push_heap_##S)(f, hole, top, v);                                              \
  }                                                                                         \
  static void THTensor_(heap_select_##S)(Pair *f, int64_t mid, int64_t last) {             \
    if (mid >= 2)                                                                           \
      for (int64_t p = (mid - 2) / 2;; p--) {                                               \
        THTensor_(adjust_heap_##S)(f, p, mid, f[p]);                                        \
        if (p == 0) break;                                                                  \
      }                                                                                     \
    for (int64_t i = mid; i < last; i++)                                                    \
      if (LT(f[i], f[0])) { Pair v = f[i]; f[i] = f[0]; THTensor_(adjust_heap_##S)(f, 0, mid, v); } \
  }                                                                                         \
  static void THTensor_(insertion_##S)(Pair *f, int64_t n) {                               \
    for (int64_t i = 1; i < n; i++) {                                                       \
      Pair v = f[i];                                                                        \
      if (LT(v, f[0])) { memmove(f + 1, f, i * sizeof(Pair)); f[0] = v; continue; }        \
      int64_t j = i;                                                                        \
      while (LT(v, f[j - 1])) { f[j] = f[j - 1]; j--; }                                     \
      f[j] = v;                                                                             \
    }                                                                                       \
  }                                                                                         \
  static int64_t THTensor_(partition_##S)(Pair *f, int64_t n) {                            \
    int64_t a = 1, b = n / 2, c = n - 1, lo, hi;                                            \
    Pair *r = f;                                                                            \
    if (LT(f[a], f[b])) {                                                                   \
      if (LT(f[b], f[c])) THTensor_(swap_##S)(r, f + b);                                    \
      else if (LT(f[a], f[c])) THTensor_(swap_##S)(r, f + c);                               \
      else THTensor_(swap_##S)(r, f + a);                                                   \
    } else if (LT(f[a], f[c])) THTensor_(swap_##S)(r, f + a);                               \
    else if (LT(f[b], f[c])) THTensor_(swap_##S)(r, f + c);                                 \
    else THTensor_(swap_##S)(r, f + b);                                                     \
    lo = 1; hi = n;                                                                         \
    for (;;) {                                                                              \
      while (LT(f[lo], f[0])) lo++;                                                         \
      hi--;                                                                                 \
      while (LT(f[0], f[hi])) hi--;                                                         \
      if (!(lo < hi)) return lo;                                                            \
      THTensor_(swap_##S)(f + lo, f + hi);                                                  \
      lo++;                                                                                 \
    }                                                                                       \
  }                                                                                         \
  static void THTensor_(introsort_loop_##S)(Pair *f, int64_t n, int64_t depth) {           \
    while (n > 16) {                                                                        \
      if (depth == 0) {                                                                     \
        THTensor_(heap_select_##S)(f, n, n);                                                \
        for (int64_t l = n; l > 1;) { l--; Pair v = f[l]; f[l] = f[0]; THTensor_(adjust_heap_##S)(f, 0, l, v); } \
        return;                                                                             \
      }                                                                                     \
      depth--;                                                                              \
      int64_t cut = THTensor_(partition_##S)(f, n);                                         \
      THTensor_(introsort_loop_##S)(f + cut, n - cut, depth);                               \
      n = cut;                                                                              \
    }                                                                                       \
  }                                                                                         \
  static void THTensor_(sort_##S)(Pair *f, int64_t n) {                                    \
    if (n < 2) return;                                                                      \
    THTensor_(introsort_loop_##S)(f, n, THTensor_(lg)(n) * 2);                              \
    if (n > 16) {                                                                           \
      THTensor_(insertion_##S)(f, 16);                                                      \
      for (int64_t i = 16; i < n; i++) {                                                    \
        Pair v = f[i];                                                                      \
        int64_t j = i;                                                                      \
        while (LT(v, f[j - 1])) { f[j] = f[j - 1]; j--; }                                   \
        f[j] = v;                                                                           \
      }                                                                                     \
    } else THTensor_(insertion_##S)(f, n);                                                  \
  }                                                                                         \
  static __attribute__((unused)) void THTensor_(nth_##S)(Pair *f, int64_t nth, int64_t n) {                        \
    if (n == 0 || nth == n) return;                                                         \
    int64_t depth = THTensor_(lg)(n) * 2, lo = 0;                                           \
    while (n - lo > 3) {                                                                    \
      if (depth == 0) {                                                                     \
        THTensor_(heap_select_##S)(f + lo, nth - lo + 1, n - lo);                           \
        THTensor_(swap_##S)(f + lo, f + nth);                                               \
        return;                                                                             \
      }                                                                                     \
      depth--;                                                                              \
      int64_t cut = lo + THTensor_(partition_##S)(f + lo, n - lo);                          \
      if (cut <= nth) lo = cut; else n = cut;                                               \
    }                                                                                       \
    THTensor_(insertion_##S)(f + lo, n - lo);                                               \
  }

SORT_ALGOS(val, LT_VAL)
SORT_ALGOS(nanmed, LT_NANMED)
SORT_ALGOS(asc, LT_ASC)
SORT_ALGOS(desc, LT_DESC)
/* topk's orders have ties (no index in them): which of equal values it
 * reports, and in what order, is what these algorithms make of them */
SORT_ALGOS(tmax, GT_OR_NAN)
SORT_ALGOS(tmin, LT_OR_NAN)

/* torch's CPU topk of one row, step for step: libstdc++'s partial_sort
 * (heap select, then heap sort) when k * 64 <= n, else its nth_element at
 * k - 1 followed, when sorted, by its sort of the k - 1 before it */
#define TOPK(S)                                                                             \
  static void THTensor_(topk_##S)(Pair *f, int64_t n, int64_t k, bool sorted) {            \
    if (k <= 0) return;                                                                     \
    if (k * 64 <= n) {                                                                      \
      THTensor_(heap_select_##S)(f, k, n);                                                  \
      for (int64_t l = k; l > 1;) { l--; Pair v = f[l]; f[l] = f[0]; THTensor_(adjust_heap_##S)(f, 0, l, v); } \
    } else {                                                                                \
      THTensor_(nth_##S)(f, k - 1, n);                                                      \
      if (sorted) THTensor_(sort_##S)(f, k - 1);                                            \
    }                                                                                       \
  }
TOPK(tmax)
TOPK(tmin)

/* torch's quick_select_template: the k-th smallest at p[k], NaN above all */
static void THTensor_(quick_select)(Pair *p, int64_t n, int64_t k) {
  int64_t L = 0, R = n - 1, i, j, P;
  for (;;) {
    if (R <= L) return;
    if (R == L + 1) {
      if (GT_OR_NAN(p[L], p[R])) THTensor_(swap_val)(p + L, p + R);
      return;
    }
    P = L + (R - L) / 2;
    THTensor_(swap_val)(p + P, p + L + 1);
    if (GT_OR_NAN(p[L + 1], p[R])) THTensor_(swap_val)(p + L + 1, p + R);
    if (GT_OR_NAN(p[L], p[R])) THTensor_(swap_val)(p + L, p + R);
    if (GT_OR_NAN(p[L + 1], p[L])) THTensor_(swap_val)(p + L + 1, p + L);
    i = L + 1;
    j = R;
    Pair piv = p[L];
    for (;;) {
      do i++; while (GT_OR_NAN(piv, p[i]));
      do j--; while (GT_OR_NAN(p[j], piv));
      if (j < i) break;
      THTensor_(swap_val)(p + i, p + j);
    }
    THTensor_(swap_val)(p + L, p + j);
    if (j <= k) L = i;
    if (j >= k) R = j - 1;
  }
}

/* the first k in order, by insertion into a sorted prefix: O(n) per row for
 * a small k where a full sort is O(n log n); keys are distinct (index ties) */
#define SELECT_K(S, LT)                                                                     \
  static void THTensor_(select_##S)(Pair *p, int64_t n, int64_t k) {                       \
    int64_t m = 0;                                                                          \
    for (int64_t j = 0; j < n; j++) {                                                       \
      if (m == k && !LT(p[j], p[k - 1])) continue;                                          \
      Pair v = p[j];                                                                        \
      int64_t at = m < k ? m++ : k - 1;                                                     \
      while (at > 0 && LT(v, p[at - 1])) { p[at] = p[at - 1]; at--; }                       \
      p[at] = v;                                                                            \
    }                                                                                       \
  }
SELECT_K(asc, LT_ASC)
SELECT_K(desc, LT_DESC)

/* p = the (value, index) pairs of row; with apart, the NaNs go after the
 * other values (or before them, nan_first), each group in index order.
 * Returns the number of NaNs set apart. */
static int64_t THTensor_(load)(Pair *p, const scalar_t *row, int64_t n, bool apart, bool nan_first) {
  int64_t nnan = 0;
#if defined(TH_REAL_IS_FLOATING)
  if (apart) {
    for (int64_t j = 0; j < n; j++) nnan += SNAN(TOC(row[j]));
    if (nnan) {
      int64_t a = nan_first ? nnan : 0, b = nan_first ? 0 : n - nnan;
      for (int64_t j = 0; j < n; j++) {
        compute_t v = TOC(row[j]);
        p[SNAN(v) ? b++ : a++] = (Pair){ v, j };
      }
      return nnan;
    }
  }
#else
  (void)apart; (void)nan_first;
#endif
  for (int64_t j = 0; j < n; j++) p[j] = (Pair){ TOC(row[j]), j };
  return nnan;
}

/* the first k of f[0..n) in order at f[0..k) */
#define FIRST_K(S)                                                                          \
  static void THTensor_(first_##S)(Pair *f, int64_t n, int64_t k) {                        \
    if (k <= 0) return;                                                                     \
    if (k < n && k <= 16) THTensor_(select_##S)(f, n, k);                                   \
    else if (k < n) { THTensor_(nth_##S)(f, k - 1, n); THTensor_(sort_##S)(f, k); }         \
    else THTensor_(sort_##S)(f, n);                                                         \
  }
FIRST_K(asc)
FIRST_K(desc)

/* one row: p holds its n pairs (NaNs set apart for the sorts: nnan of them);
 * the k picked ones end up at p[first..first+k) */
static void THTensor_(row)(const THSortRows *s, Pair *p, int64_t nnan, int64_t *first) {
  int64_t n = s->n, k = s->k;
  *first = 0;
  switch (s->op) {
    case TH_SORT_ASC:    /* NaNs last */
      THTensor_(first_asc)(p, n - nnan, k < n - nnan ? k : n - nnan);
      return;
    case TH_SORT_DESC:   /* NaNs first */
      THTensor_(first_desc)(p + nnan, n - nnan, k - nnan);
      return;
    case TH_SORT_TOPK_MAX:
      THTensor_(topk_tmax)(p, n, k, s->sorted);
      return;
    case TH_SORT_TOPK_MIN:
      THTensor_(topk_tmin)(p, n, k, s->sorted);
      return;
    case TH_SORT_KTH:
      THTensor_(quick_select)(p, n, s->kth);
      *first = s->kth;
      return;
    case TH_SORT_MEDIAN:
      for (int64_t j = 0; j < n; j++)
        if (SNAN(p[j].v)) { *first = j; return; }
      *first = (n - 1) / 2;
      THTensor_(nth_asc)(p, *first, n);
      return;
    case TH_SORT_NANMEDIAN: {
      int64_t nans = 0;
      for (int64_t j = 0; j < n; j++) nans += SNAN(p[j].v);
      *first = (n - nans - 1) / 2;   /* C division: an all-NaN row picks 0 */
      THTensor_(nth_nanmed)(p, *first, n);
      return;
    }
    case TH_SORT_MODE: {
      THTensor_(sort_val)(p, n);
      int64_t freq = 0, best = 0;
      for (int64_t j = 0; j < n; j++) {
        freq++;
        if (j == n - 1 || p[j].v != p[j + 1].v) {
          if (freq > best) { best = freq; *first = j; }
          freq = 0;
        }
      }
      return;
    }
  }
}

/* The value's key: unsigned order = the sort's order of values. Floats map
 * their bits (sign flipped, negatives inverted), -0.0 to 0.0 (they tie) and
 * every NaN above +inf, in the width of compute_t. */
static inline uint64_t THTensor_(ord)(compute_t v) {
#if defined(TH_REAL_IS_FLOATING)
  if (v != v) return sizeof(compute_t) == 4 ? 0xffffffffull : ~0ull;
  if (v == 0) return sizeof(compute_t) == 4 ? 0x80000000ull : 1ull << 63;
  if (sizeof(compute_t) == 4) {
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, 4);
    return (u >> 31) ? (uint32_t)~u : (u | 0x80000000u);
  } else {
    double d = (double)v;
    uint64_t u;
    memcpy(&u, &d, 8);
    return (u >> 63) ? ~u : (u | (1ull << 63));
  }
#elif defined(TH_REAL_IS_SIGNED)
  return (uint64_t)(int64_t)v ^ (1ull << 63);
#else
  return (uint64_t)v;
#endif
}

/* key[j] = (rank of row[j] from the row's least value, or from its greatest
 * for desc << b) | j, with b = the bits of an index. Returns b, or -1 when
 * the row's values span more than 64 - b bits (int64/double rows of a wide
 * range; those take the pair sort). NaNs come last ascending and first
 * descending, each group in index order, as the pair sort puts them. */
static int THTensor_(pack)(uint64_t *key, const scalar_t *row, int64_t n, bool desc) {
  int b = n > 1 ? 64 - __builtin_clzll((unsigned long long)(n - 1)) : 0;
  uint64_t lo = ~0ull, hi = 0;
  for (int64_t j = 0; j < n; j++) {
    uint64_t u = THTensor_(ord)(TOC(row[j]));
    key[j] = u;
    lo = u < lo ? u : lo;
    hi = u > hi ? u : hi;
  }
  if (b && ((hi - lo) >> (64 - b))) return -1;
  if (desc)
    for (int64_t j = 0; j < n; j++) key[j] = ((hi - key[j]) << b) | (uint64_t)j;
  else
    for (int64_t j = 0; j < n; j++) key[j] = ((key[j] - lo) << b) | (uint64_t)j;
  return b;
}

/* whether the sorted row (its elements at idx[0..n)) has two equivalent neighbours: equal
 * values, -0.0 and 0.0, or two NaNs (neither is below the other in torch's comparators) */
static bool THTensor_(has_ties)(const scalar_t *row, const int64_t *idx, int64_t n) {
  for (int64_t j = 1; j < n; j++) {
    compute_t a = TOC(row[idx[j - 1]]), b = TOC(row[idx[j]]);
    if (a == b || (SNAN(a) && SNAN(b))) return true;
  }
  return false;
}

/* torch's sort(stable=False) of one row: std::sort of (value, index) pairs that start in
 * index order, comparing values alone (KeyValueCompAsc/Desc), so ties land where
 * introsort's partitions leave them. Rows of up to 16 take its insertion sort, which is
 * stable, as do rows without ties (then every order is the stable one): both keep the
 * stable result already written. */
static void THTensor_(introsort_row)(const THSortRows *s, Pair *p, const scalar_t *row, scalar_t *vals,
                                     int64_t *idx) {
  int64_t n = s->n;
  if (n <= 16 || !THTensor_(has_ties)(row, idx, n)) return;
  THTensor_(load)(p, row, n, false, false);
  if (s->op == TH_SORT_DESC) THTensor_(sort_tmax)(p, n);
  else THTensor_(sort_tmin)(p, n);
  for (int64_t j = 0; j < n; j++) {
    if (vals) vals[j] = row[p[j].i];
    idx[j] = p[j].i;
  }
}

bool THTensor_(sort_rows)(const THSortRows *s) {
  const scalar_t *x = (const scalar_t *)s->x;
  scalar_t *vals = (scalar_t *)s->vals;
  int64_t n = s->n, k = s->k;
  bool failed = false;
#pragma omp parallel if (s->rows > 1 && s->rows * n > 16384)
  {
    Pair *p = malloc((n ? n : 1) * sizeof(Pair));
    if (!p) {
#pragma omp atomic write
      failed = true;
    }
#pragma omp for schedule(static)
    for (int64_t r = 0; r < s->rows; r++) {
      if (!p) continue;
      const scalar_t *row = x + r * n;
      bool sorts = s->op == TH_SORT_ASC || s->op == TH_SORT_DESC;
      bool intro = sorts && s->introsort && k == n;
      if (sorts && (k == n || k > 16)) {   /* small k: select_ below is linear */
        uint64_t *key = (uint64_t *)p;      /* p holds 2n keys: the keys and the merge buffer */
        int b = THTensor_(pack)(key, row, n, s->op == TH_SORT_DESC);
        if (b >= 0) {
          const uint64_t *o = th_sort_keys(key, key + n, n), mask = b ? (1ull << b) - 1 : 0;
          for (int64_t j = 0; j < k; j++) {
            int64_t at = (int64_t)(o[j] & mask);
            if (vals) vals[r * k + j] = row[at];
            s->idx[r * k + j] = at;
          }
          if (intro) THTensor_(introsort_row)(s, p, row, vals ? vals + r * n : NULL, s->idx + r * n);
          continue;
        }
      }
      if ((s->op == TH_SORT_MEDIAN || s->op == TH_SORT_NANMEDIAN) && n > 0) {
        /* LT_ASC and LT_NANMED are total orders on rows that are not all NaN: the pick is the
         * key of that rank, found by a selection on packed keys. median of a row with a NaN
         * is its first NaN, without a selection. An all-NaN nanmedian row (whose pick among
         * equivalent NaNs is introselect's) takes the pair path. */
        int64_t nans = 0;
        for (int64_t j = 0; j < n; j++) nans += SNAN(TOC(row[j]));
        if (s->op == TH_SORT_MEDIAN && nans) {
          int64_t at = 0;
          while (!SNAN(TOC(row[at]))) at++;
          if (vals) vals[r] = row[at];
          s->idx[r] = at;
          continue;
        }
        uint64_t *key = (uint64_t *)p;
        int b = nans < n ? THTensor_(pack)(key, row, n, false) : -1;
        if (b >= 0) {
          uint64_t o = th_select_key(key, key + n, n, (n - nans - 1) / 2), mask = b ? (1ull << b) - 1 : 0;
          int64_t at = (int64_t)(o & mask);
          if (vals) vals[r] = row[at];
          s->idx[r] = at;
          continue;
        }
      }
      int64_t nnan = THTensor_(load)(p, row, n, sorts, s->op == TH_SORT_DESC), first;
      THTensor_(row)(s, p, nnan, &first);
      for (int64_t j = 0; j < k; j++) {
        int64_t at = p[first + j].i;
        if (vals) vals[r * k + j] = row[at];
        s->idx[r * k + j] = at;
      }
      if (intro) THTensor_(introsort_row)(s, p, row, vals ? vals + r * n : NULL, s->idx + r * n);
    }
    free(p);
  }
  return !failed;
}

/* LT_ASC is a total order (ties break by index), so sorting chunks apart
 * and merging them gives the one stable order. The number of a's elements
 * among the first k of merge(a, b) (merge path) lets each thread write its
 * own share of a merge. */
static int64_t THTensor_(corank)(const Pair *a, int64_t na, const Pair *b, int64_t nb, int64_t k) {
  int64_t lo = k > nb ? k - nb : 0, hi = k < na ? k : na;
  while (lo < hi) {
    int64_t i = lo + (hi - lo) / 2;
    if (LT_ASC(a[i], b[k - i - 1])) lo = i + 1; else hi = i;
  }
  return lo;
}

/* out[k0..k1) of merge(a, b) */
static void THTensor_(merge_part)(const Pair *a, int64_t na, const Pair *b, int64_t nb, Pair *out, int64_t k0,
                                  int64_t k1) {
  int64_t i = THTensor_(corank)(a, na, b, nb, k0), j = k0 - i;
  for (int64_t k = k0; k < k1; k++) out[k] = (j >= nb || (i < na && !LT_ASC(b[j], a[i]))) ? a[i++] : b[j++];
}

/* p[0..n) in LT_ASC order: T sorted chunks, then rounds of pairwise merges
 * between p and tmp, every merge split across the threads */
static bool THTensor_(sort_asc_par)(Pair *p, int64_t n, int T) {
  Pair *tmp = malloc((size_t)n * sizeof(Pair));
  if (!tmp) return false;
  int64_t run = (n + T - 1) / T;
#pragma omp parallel for schedule(static) num_threads(T)
  for (int t = 0; t < T; t++) {
    int64_t s = t * run, e = s + run < n ? s + run : n;
    if (s < e) THTensor_(sort_asc)(p + s, e - s);
  }
  Pair *src = p, *dst = tmp;
  for (; run < n; run *= 2) {
    for (int64_t s = 0; s < n; s += 2 * run) {
      int64_t na = s + run < n ? run : n - s, nb = s + 2 * run < n ? run : (n - s - na > 0 ? n - s - na : 0);
      int64_t m = na + nb, piece = (m + T - 1) / T;
#pragma omp parallel for schedule(static) num_threads(T) if (m > 65536)
      for (int t = 0; t < T; t++) {
        int64_t k0 = t * piece < m ? t * piece : m, k1 = k0 + piece < m ? k0 + piece : m;
        THTensor_(merge_part)(src + s, na, src + s + na, nb, dst + s, k0, k1);
      }
    }
    Pair *w = src; src = dst; dst = w;
  }
  if (src != p) memcpy(p, src, (size_t)n * sizeof(Pair));
  free(tmp);
  return true;
}

#ifdef TH_REAL_IS_INTEGRAL
/* p[0..n) in LT_ASC order by an LSD radix sort on the value's bits (sign bit
 * flipped so the unsigned order is the signed one). Each pass is a stable
 * counting sort, so ties keep their index order, as LT_ASC's do; bytes on
 * which all keys agree are skipped, so 1M int64 keys below 2**24 take three
 * passes. This is what sorts large integer inputs of unique as fast as
 * PyTorch's radix sort. */
#define RADIX_KEY(pr) ((uint64_t)(int64_t)(pr).v ^ (1ull << 63))
static bool THTensor_(radix_asc)(Pair *p, int64_t n) {
  Pair *tmp = malloc((size_t)n * sizeof(Pair));
  if (!tmp) return false;
  uint64_t all_and = ~0ull, all_or = 0;
  for (int64_t j = 0; j < n; j++) { uint64_t k = RADIX_KEY(p[j]); all_and &= k; all_or |= k; }
  uint64_t vary = all_and ^ all_or;
  Pair *src = p, *dst = tmp;
  for (int sh = 0; sh < 64; sh += 8) {
    if (!((vary >> sh) & 0xff)) continue;
    int64_t cnt[256] = {0};
    for (int64_t j = 0; j < n; j++) cnt[(RADIX_KEY(src[j]) >> sh) & 0xff]++;
    int64_t sum = 0;
    for (int b = 0; b < 256; b++) { int64_t c = cnt[b]; cnt[b] = sum; sum += c; }
    for (int64_t j = 0; j < n; j++) dst[cnt[(RADIX_KEY(src[j]) >> sh) & 0xff]++] = src[j];
    Pair *w = src; src = dst; dst = w;
  }
  if (src != p) memcpy(p, src, (size_t)n * sizeof(Pair));
  free(tmp);
  return true;
}
#undef RADIX_KEY
#endif

bool THTensor_(sort_flat)(const void *xv, int64_t n, int64_t *order, void *sortedv) {
  const scalar_t *x = (const scalar_t *)xv;
  Pair *p = malloc((n ? n : 1) * sizeof(Pair));
  if (!p) return false;
  int64_t nnan = THTensor_(load)(p, x, n, true, false), m = n - nnan;
  int T = omp_get_max_threads();
#ifdef TH_REAL_IS_INTEGRAL
  if (m > 4096) {
    if (!THTensor_(radix_asc)(p, m)) { free(p); return false; }
  } else
#endif
  if (T > 1 && m > 65536) {
    if (!THTensor_(sort_asc_par)(p, m, T)) { free(p); return false; }
  } else {
    THTensor_(sort_asc)(p, m);
  }
  scalar_t *sorted = (scalar_t *)sortedv;
#pragma omp parallel for schedule(static) if (n > 65536)
  for (int64_t j = 0; j < n; j++) {
    order[j] = p[j].i;
    if (sorted) sorted[j] = FROMC(p[j].v);   /* exact: compute_t holds every value of scalar_t */
  }
  free(p);
  return true;
}

/* rows a and b of the (., m) contiguous x in lexicographic order of `<`
 * (torch's unique_dim comparator: a NaN is neither below nor above) */
static inline int THTensor_(lex_cmp)(const scalar_t *x, int64_t m, int64_t a, int64_t b) {
  const scalar_t *ra = x + a * m, *rb = x + b * m;
  for (int64_t k = 0; k < m; k++) {
    compute_t u = TOC(ra[k]), v = TOC(rb[k]);
    if (u < v) return -1;
    if (v < u) return 1;
  }
  return 0;
}

/* o[0..n) in lexicographic row order: a top-down merge sort through tmp */
static void THTensor_(lex_msort)(const scalar_t *x, int64_t m, int64_t *o, int64_t *tmp, int64_t n) {
  if (n <= 16) {
    for (int64_t i = 1; i < n; i++) {
      int64_t v = o[i], j = i;
      while (j > 0 && THTensor_(lex_cmp)(x, m, v, o[j - 1]) < 0) { o[j] = o[j - 1]; j--; }
      o[j] = v;
    }
    return;
  }
  int64_t h = n / 2;
  THTensor_(lex_msort)(x, m, o, tmp, h);
  THTensor_(lex_msort)(x, m, o + h, tmp + h, n - h);
  if (THTensor_(lex_cmp)(x, m, o[h - 1], o[h]) <= 0) return;   /* already in order */
  int64_t i = 0, j = h, k = 0;
  while (i < h && j < n) tmp[k++] = THTensor_(lex_cmp)(x, m, o[j], o[i]) < 0 ? o[j++] : o[i++];
  while (i < h) tmp[k++] = o[i++];
  memcpy(o, tmp, (size_t)k * sizeof(int64_t));   /* o[j..n) are already in place */
}

int64_t THTensor_(sort_lex_runs)(const void *xv, int64_t n, int64_t m, bool sort, int64_t *order, int64_t *start) {
  const scalar_t *x = (const scalar_t *)xv;
  for (int64_t j = 0; j < n; j++) order[j] = j;
  if (sort && n > 1) {
    int64_t *tmp = malloc((size_t)n * sizeof(int64_t));
    if (!tmp) return -1;
    THTensor_(lex_msort)(x, m, order, tmp, n);
    free(tmp);
  }
  int64_t u = 0;
  for (int64_t j = 0; j < n; j++) {
    bool same = j > 0;
    const scalar_t *a = x + order[j] * m, *b = j > 0 ? x + order[j - 1] * m : NULL;
    for (int64_t k = 0; same && k < m; k++) same = TOC(a[k]) == TOC(b[k]);   /* NaN rows never repeat */
    if (!same) start[u++] = j;
  }
  return u;
}

int64_t THTensor_(sort_runs)(const void *xv, int64_t n, int64_t *start) {
  const scalar_t *x = (const scalar_t *)xv;
  int64_t u = 0;
  compute_t prev = 0;
  for (int64_t j = 0; j < n; j++) {
    compute_t v = TOC(x[j]);
    if (j == 0 || v != prev) start[u++] = j;   /* NaN != NaN: each NaN is a run */
    prev = v;
  }
  return u;
}

void THTensor_(sort_isin)(const void *xv, int64_t n, const void *tv, int64_t m, bool *out, bool invert) {
  const scalar_t *x = (const scalar_t *)xv, *t = (const scalar_t *)tv;
#pragma omp parallel for if (n * (m > 1 ? THTensor_(lg)(m) + 1 : 1) > 32768)
  for (int64_t i = 0; i < n; i++) {
    compute_t v = TOC(x[i]);
    /* the first test value not below v (NaNs sort last and are never below), by a search whose
     * steps are selects, not branches: the elements are in no order, so a branch would be
     * mispredicted at half the steps. The answer stays within [lo, lo + len]. */
    int64_t lo = 0, len = m;
    while (len > 1) {
      int64_t half = len / 2;
      compute_t w = TOC(t[lo + half - 1]);
      lo += (!SNAN(w) && w < v) ? half : 0;
      len -= half;
    }
    if (m > 0) {
      compute_t w = TOC(t[lo]);
      lo += !SNAN(w) && w < v;
    }
    bool found = lo < m && TOC(t[lo]) == v;
    out[i] = found != invert;
  }
}

#undef SORT_ALGOS
#undef SELECT_K
#undef FIRST_K
#undef LT_VAL
#undef LT_NANMED
#undef LT_ASC
#undef LT_DESC
#undef GT_OR_NAN
#undef SNAN
#undef Pair
