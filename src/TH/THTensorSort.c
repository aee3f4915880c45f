#include "THKernelsSort.h"
#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* Full-row sorts on packed keys (generic/THTensorSort.c's pack): each key is
 * (value's rank bits << b) | index, so plain unsigned order is the stable
 * order and any sort gives torch's permutation. Runs of 8 go through a
 * 19-comparator network, then branchless merges (a compare-and-branch merge
 * mispredicts about every other step on random keys). */
#define TH_KEY_CE(k, a, b)                             \
  {                                                    \
    uint64_t x_ = (k)[a], y_ = (k)[b];                 \
    (k)[a] = x_ < y_ ? x_ : y_;                        \
    (k)[b] = x_ < y_ ? y_ : x_;                        \
  }
static inline void th_sort8_keys(uint64_t *k) {
  TH_KEY_CE(k, 0, 2) TH_KEY_CE(k, 1, 3) TH_KEY_CE(k, 4, 6) TH_KEY_CE(k, 5, 7)
  TH_KEY_CE(k, 0, 4) TH_KEY_CE(k, 1, 5) TH_KEY_CE(k, 2, 6) TH_KEY_CE(k, 3, 7)
  TH_KEY_CE(k, 0, 1) TH_KEY_CE(k, 2, 3) TH_KEY_CE(k, 4, 5) TH_KEY_CE(k, 6, 7)
  TH_KEY_CE(k, 2, 4) TH_KEY_CE(k, 3, 5)
  TH_KEY_CE(k, 1, 4) TH_KEY_CE(k, 3, 6)
  TH_KEY_CE(k, 1, 2) TH_KEY_CE(k, 3, 4) TH_KEY_CE(k, 5, 6)
}
#undef TH_KEY_CE

static inline void th_merge_keys(const uint64_t *a, int64_t na, const uint64_t *b, int64_t nb, uint64_t *o) {
  const uint64_t *ae = a + na, *be = b + nb;
  while (a < ae && b < be) {
    uint64_t x = *a, y = *b;
    int t = y < x;
    *o++ = t ? y : x;
    a += !t;
    b += t;
  }
  while (a < ae) *o++ = *a++;
  while (b < be) *o++ = *b++;
}

/* a[0..n) in unsigned order, through tmp[0..n); returns the buffer that holds the result */
static uint64_t *th_sort_keys(uint64_t *a, uint64_t *tmp, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) th_sort8_keys(a + i);
  for (int64_t j = i + 1; j < n; j++) {
    uint64_t v = a[j];
    int64_t m = j;
    while (m > i && a[m - 1] > v) { a[m] = a[m - 1]; m--; }
    a[m] = v;
  }
  uint64_t *src = a, *dst = tmp;
  for (int64_t w = 8; w < n; w *= 2) {
    for (int64_t s = 0; s < n; s += 2 * w) {
      int64_t m = s + w < n ? s + w : n, e = s + 2 * w < n ? s + 2 * w : n;
      th_merge_keys(src + s, m - s, src + m, e - m, dst + s);
    }
    uint64_t *t = src; src = dst; dst = t;
  }
  return src;
}

/* the k-th smallest of a[0..n) (distinct keys, so any selection picks the one
 * the full sort would): quickselect with a median-of-3 pivot and a
 * branchless Lomuto partition, then an insertion sort of the last <= 32.
 * Past 2*log2(n) rounds (an adversarial row) the rest is sorted through tmp. */
static uint64_t th_select_key(uint64_t *a, uint64_t *tmp, int64_t n, int64_t k) {
  int64_t lo = 0, hi = n, depth = 2 * (64 - __builtin_clzll((unsigned long long)n | 1));
  while (hi - lo > 32) {
    if (depth-- == 0) return th_sort_keys(a + lo, tmp, hi - lo)[k - lo];
    uint64_t x = a[lo], y = a[lo + (hi - lo) / 2], z = a[hi - 1];
    uint64_t piv = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
    int64_t m = lo;
    for (int64_t i = lo; i < hi; i++) {   /* [lo, m) < piv <= [m, i] */
      uint64_t v = a[i];
      a[i] = a[m];
      a[m] = v;
      m += v < piv;
    }
    /* the pivot is a median of three distinct keys: lo < m < hi */
    if (k < m) hi = m; else lo = m;
  }
  for (int64_t j = lo + 1; j < hi; j++) {
    uint64_t v = a[j];
    int64_t m = j;
    while (m > lo && a[m - 1] > v) { a[m] = a[m - 1]; m--; }
    a[m] = v;
  }
  return a[k];
}

#define TH_GENERIC_FILE "generic/THTensorSort.c"
#include "THGenerateAllTypes.h"
