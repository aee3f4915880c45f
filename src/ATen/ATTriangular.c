/* tril/triu (see ATTriangular.h). The result is a copy of self with the
 * dropped triangle zeroed bytewise: all-zero bytes are 0 in every dtype. */
#include "ATTriangular.h"

#include <stdlib.h>
#include <string.h>

/* Zeroes, in each matrix of t, the elements outside the kept triangle. */
static void zero_triangle(THTensor *t, int64_t k, bool upper) {
  int nd = t->ndim;
  int64_t R = t->sizes[nd - 2], C = t->sizes[nd - 1], sr = t->strides[nd - 2], sc = t->strides[nd - 1];
  int64_t nbatch = 1;
  for (int d = 0; d < nd - 2; d++) nbatch *= t->sizes[d];
  if (R == 0 || C == 0) return;
  size_t es = THDtype_size(t->dtype);
  char *base = THTensor_data(t);
  for (int64_t b = 0; b < nbatch; b++) {
    /* offset of batch b: unravel over the leading dims */
    int64_t off = 0, rem = b;
    for (int d = nd - 3; d >= 0; d--) {
      off += (rem % t->sizes[d]) * t->strides[d];
      rem /= t->sizes[d];
    }
    for (int64_t i = 0; i < R; i++) {
      /* tril drops columns j > i + k; triu drops j < i + k */
      int64_t lo = upper ? 0 : i + k + 1, hi = upper ? i + k : C;
      if (lo < 0) lo = 0;
      if (hi > C) hi = C;
      char *row = base + (off + i * sr) * (int64_t)es;
      if (lo >= hi) continue;
      if (sc == 1) memset(row + lo * es, 0, (size_t)(hi - lo) * es);
      else
        for (int64_t j = lo; j < hi; j++) memset(row + j * sc * (int64_t)es, 0, es);
    }
  }
}

static THTensor *tri(const THTensor *self, int64_t k, THTensor *out, bool upper) {
  const char *name = upper ? "triu" : "tril";
  if (self->ndim < 2) {
    THError_set(TH_ERR_RUNTIME, "%s: input tensor must have at least 2 dimensions", name);
    return NULL;
  }
  if (out == self) {
    if (at_check_no_internal_overlap(out) < 0) return NULL;
    zero_triangle(out, k, upper);
    return THTensor_retain(out);
  }
  if (out) {
    if (at_check_cast(self->dtype, out->dtype) < 0) return NULL;
    if (THTensor_resize(out, self->ndim, self->sizes) < 0 || at_copy_(out, self) < 0) return NULL;
    zero_triangle(out, k, upper);
    return THTensor_retain(out);
  }
  /* contiguous whatever self's layout, as torch's meta function allocates it: distributions'
   * lower-Cholesky check views (L.tril() == L) flat, which fails on a column-major result */
  THTensor *r = at_clone(self, false);
  if (!r) return NULL;
  zero_triangle(r, k, upper);
  return r;
}

THTensor *at_tril(const THTensor *self, int64_t diagonal, THTensor *out) { return tri(self, diagonal, out, false); }
THTensor *at_triu(const THTensor *self, int64_t diagonal, THTensor *out) { return tri(self, diagonal, out, true); }

/* The columns [*lo, *hi) of row i that a triangle keeps. offset >= -row
 * (at_tri_indices clamps it), and i + offset is formed only below col, so
 * no sum overflows whatever offset and col are. */
static void kept_columns(int64_t i, int64_t col, int64_t offset, bool lower, int64_t *lo, int64_t *hi) {
  int64_t edge = offset < col - i ? i + offset : col;   /* the diagonal's column in row i, at most col */
  *lo = lower ? 0 : edge;
  *hi = lower ? (edge < col ? edge + 1 : col) : col;
  if (*lo < 0) *lo = 0;
  if (*hi < *lo) *hi = *lo;
}

THTensor *at_tri_indices(int64_t row, int64_t col, int64_t offset, bool lower) {
  if (row < 0 || col < 0) {
    THError_set(TH_ERR_RUNTIME, "%s must be non-negative, got%lld", row < 0 ? "row" : "col",
                (long long)(row < 0 ? row : col));
    return NULL;
  }
  if (row >= INT64_MAX / 16) {   /* (row + 1) * 8 bytes would wrap */
    THError_set(TH_ERR_MEMORY, "tri_indices: %lld rows are too many", (long long)row);
    return NULL;
  }
  if (offset < -row) offset = -row;   /* the same triangle: no row keeps (lower) or drops (upper) a column */
  /* row i starts at start[i] in the output: a prefix sum of the kept widths */
  int64_t *start = malloc((size_t)(row + 1) * sizeof(int64_t));
  if (!start) { THError_set(TH_ERR_MEMORY, "tri_indices: out of memory"); return NULL; }
  start[0] = 0;
  for (int64_t i = 0; i < row; i++) {
    int64_t lo, hi;
    kept_columns(i, col, offset, lower, &lo, &hi);
    if (th_add_overflow(start[i], hi - lo, &start[i + 1])) {
      THError_set(TH_ERR_MEMORY, "tri_indices: %lld x %lld has too many indices", (long long)row, (long long)col);
      free(start);
      return NULL;
    }
  }
  int64_t n = start[row], sizes[2] = {2, n};
  THTensor *r = THTensor_new(TH_Int64, 2, sizes);
  if (!r) { free(start); return NULL; }
  int64_t *rows = (int64_t *)THTensor_data(r), *cols = rows + n;
#pragma omp parallel for if (n > 65536)
  for (int64_t i = 0; i < row; i++) {
    int64_t lo, hi;
    kept_columns(i, col, offset, lower, &lo, &hi);
    for (int64_t j = lo, w = start[i]; j < hi; j++, w++) {
      rows[w] = i;
      cols[w] = j;
    }
  }
  free(start);
  return r;
}
