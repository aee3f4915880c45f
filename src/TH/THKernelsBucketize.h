/* Bucketization and counting kernels (generic/THTensorBucketize.c), driven
 * by src/ATen/ATBucketize.c: searchsorted (numeric types), bincount
 * (integral inputs) and histogram binning (floating types). */
#ifndef TH_KERNELS_BUCKETIZE_H
#define TH_KERNELS_BUCKETIZE_H
#include "THGeneral.h"

/* Values i in [i0, i1): out[i] = the insertion point of val[i] in its row of
 * bd (row i / per_row, or the one row when rows == 1), of length n_bd, seen
 * through sorter (row-relative int64 indices) when it is non-NULL. */
typedef struct {
  const char *bd, *val;
  const int64_t *sorter;
  void *out;              /* int64 or int32 */
  bool out_int32, right, one_row;
  int64_t n_bd, per_row;
  bool ordered;           /* every row of bd non-decreasing, no NaN (THSearchOrderedFn) */
} THSearchArgs;
typedef void (*THSearchFn)(const THSearchArgs *a, int64_t i0, int64_t i1);
/* whether each of the rows of bd (n values each) is non-decreasing with no NaN */
typedef bool (*THSearchOrderedFn)(const char *bd, int64_t rows, int64_t n);

/* x[0..n): min and max as int64 */
typedef void (*THMinMaxFn)(const char *x, int64_t n, int64_t *mn, int64_t *mx);
/* hist[x[i]] += w[i] (or 1 when w is NULL) for i in [i0, i1); hist is int64
 * (no weights), float (float weights) or double (wdt TH_Double). */
typedef void (*THBincountFn)(const char *x, const char *w, THDtype wdt, char *hist, int64_t i0, int64_t i1);

typedef enum { TH_HIST_LINEAR, TH_HIST_LINEAR_LOCAL, TH_HIST_BINARY } THHistMode;
/* Elements i in [i0, i1) of x (weights w or 1) into hist (double, nbins):
 * edges has nbins + 1 increasing values; elements outside [edges[0],
 * edges[nbins]] (and NaN) are skipped, the last bin includes its right edge.
 * The linear modes place by division as PyTorch does, in the input dtype. */
typedef struct {
  const char *x, *w, *edges;
  int64_t nbins;
  THHistMode mode;
} THHistArgs;
typedef void (*THHistFn)(const THHistArgs *a, double *hist, int64_t i0, int64_t i1);

#define TH_DECLARE_SEARCH(R) void TH##R##Tensor_searchsorted(const THSearchArgs *a, int64_t i0, int64_t i1); \
  bool TH##R##Tensor_search_ordered(const char *bd, int64_t rows, int64_t n);
#define TH_DECLARE_BINCOUNT(R) \
  void TH##R##Tensor_minmax_int(const char *x, int64_t n, int64_t *mn, int64_t *mx); \
  void TH##R##Tensor_bincount(const char *x, const char *w, THDtype wdt, char *hist, int64_t i0, int64_t i1);
#define TH_DECLARE_HIST(R) void TH##R##Tensor_histogram(const THHistArgs *a, double *hist, int64_t i0, int64_t i1);
TH_DECLARE_SEARCH(Byte) TH_DECLARE_SEARCH(Char) TH_DECLARE_SEARCH(Short) TH_DECLARE_SEARCH(Int)
TH_DECLARE_SEARCH(Long) TH_DECLARE_SEARCH(Half) TH_DECLARE_SEARCH(BFloat16) TH_DECLARE_SEARCH(Float)
TH_DECLARE_SEARCH(Double)
TH_DECLARE_BINCOUNT(Byte) TH_DECLARE_BINCOUNT(Char) TH_DECLARE_BINCOUNT(Short) TH_DECLARE_BINCOUNT(Int)
TH_DECLARE_BINCOUNT(Long)
TH_DECLARE_HIST(Half) TH_DECLARE_HIST(BFloat16) TH_DECLARE_HIST(Float) TH_DECLARE_HIST(Double)
#undef TH_DECLARE_SEARCH
#undef TH_DECLARE_BINCOUNT
#undef TH_DECLARE_HIST
#endif
