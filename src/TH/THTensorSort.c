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

#define TH_GENERIC_FILE "generic/THTensorSort.c"
#include "THGenerateAllTypes.h"
