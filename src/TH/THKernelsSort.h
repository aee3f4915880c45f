/* Row kernels of the sort family (generic/THTensorSort.c), one set per dtype.
 * Every kernel works on `rows` contiguous rows of n elements in the input's
 * own dtype (x row r at x + r*n) and writes rows of `k` outputs; rows run in
 * parallel. Values are compared in compute_t (float for half/bfloat16), so
 * int64 compares exactly; the values written out are copies of the input's
 * elements. They return false only when a per-thread buffer cannot be had. */
#ifndef TH_KERNELS_SORT_H
#define TH_KERNELS_SORT_H
#include "THGeneral.h"

/* what one row kernel computes */
typedef enum {
  TH_SORT_ASC,        /* the first k in ascending order, NaN last, ties by index (stable) */
  TH_SORT_DESC,       /* the first k in descending order, NaN first, ties by index (stable) */
  TH_SORT_KTH,        /* k = 1: the k_th smallest, picked as torch's quick select picks it */
  TH_SORT_MEDIAN,     /* k = 1: the lower median (the first NaN when there is one), torch's pick */
  TH_SORT_NANMEDIAN,  /* k = 1: the lower median of the non-NaN values, torch's pick */
  TH_SORT_MODE,       /* k = 1: the most frequent value, torch's pick */
  TH_SORT_TOPK_MAX,   /* the k largest (NaN above all), picked and ordered among ties as torch's CPU topk */
  TH_SORT_TOPK_MIN    /* the k smallest (NaN above all), likewise */
} THSortOp;

typedef struct {
  THSortOp op;
  const void *x;
  void *vals;         /* NULL: only the indices */
  int64_t *idx;
  int64_t rows, n, k; /* k: outputs per row (sorts and top-k) */
  int64_t kth;        /* TH_SORT_KTH: which order statistic, 0-based */
  bool sorted;        /* TH_SORT_TOPK_*: the k in order (else in the selection's order, as torch leaves them) */
  bool introsort;     /* TH_SORT_ASC/DESC of whole rows: equal values in the order libstdc++'s std::sort leaves
                       * them, as torch's sort(stable=False) on the CPU (else by index) */
} THSortRows;

typedef bool (*THSortRowsFn)(const THSortRows *s);

/* The values of a flat contiguous x in ascending order (NaN last) with their
 * first positions: order[j] = the index of the j-th element in a stable sort;
 * sorted (NULL: not wanted) gets the values in that order, so callers read
 * them in sequence instead of as x[order[j]]. */
typedef bool (*THSortFlatFn)(const void *x, int64_t n, int64_t *order, void *sorted);

/* unique_dim's rows: x is (n, m) contiguous; order = the rows in
 * lexicographic order (sort) or as they come, start[u] = where in order run u
 * of equal rows begins. Returns the number of runs, -1 out of memory. */
typedef int64_t (*THSortLexRunsFn)(const void *x, int64_t n, int64_t m, bool sort, int64_t *order, int64_t *start);

/* Runs of equal values in x[0..n), read in sequence (NaN never equals NaN,
 * as torch's unique counts them): start[u] = the position where run u
 * begins; returns the number of runs. unique passes the sorted values. */
typedef int64_t (*THSortRunsFn)(const void *x, int64_t n, int64_t *start);

/* out[i] = whether x[i] is among the sorted (ascending, NaN last) test values t[0..m) */
typedef void (*THSortIsinFn)(const void *x, int64_t n, const void *t, int64_t m, bool *out, bool invert);

#define TH_DECLARE_SORT(R)                                                           \
  bool TH##R##Tensor_sort_rows(const THSortRows *s);                                 \
  bool TH##R##Tensor_sort_flat(const void *x, int64_t n, int64_t *order, void *sorted); \
  int64_t TH##R##Tensor_sort_lex_runs(const void *x, int64_t n, int64_t m, bool sort, int64_t *order, int64_t *start); \
  int64_t TH##R##Tensor_sort_runs(const void *x, int64_t n, int64_t *start); \
  void TH##R##Tensor_sort_isin(const void *x, int64_t n, const void *t, int64_t m, bool *out, bool invert);
TH_DECLARE_SORT(Bool) TH_DECLARE_SORT(Byte) TH_DECLARE_SORT(Char) TH_DECLARE_SORT(Short)
TH_DECLARE_SORT(Int) TH_DECLARE_SORT(Long) TH_DECLARE_SORT(Half) TH_DECLARE_SORT(BFloat16)
TH_DECLARE_SORT(Float) TH_DECLARE_SORT(Double)
#undef TH_DECLARE_SORT
#endif
