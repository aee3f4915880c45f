/* The sort family over THTensor (declared in declarations/sort.yaml).
 *
 * Ops along one dim make the input contiguous with that dim swapped to the
 * last place (no copy when it already is), so each row is n contiguous
 * elements, and hand the rows to the dtype's TH kernel (THKernelsSort.h),
 * which runs them in parallel. Results come back in that layout and are
 * swapped back (sort/topk); the reductions (kthvalue/median/mode) move dim
 * to the end instead, keeping the other dims in order, so their rows come in
 * the result's element order. unique/isin work on the
 * flattened input: one stable sort, then runs of equal values. */
#include "ATSort.h"
#include "ATComplex.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../TH/THDispatch.h"
#include "../TH/THKernelsSort.h"
#include "ATCuda.h"

static const THSortRowsFn row_fns[TH_NDTYPES] = TH_ALL_TABLE(sort_rows);
static const THSortFlatFn flat_fns[TH_NDTYPES] = TH_ALL_TABLE(sort_flat);
static const THSortRunsFn run_fns[TH_NDTYPES] = TH_ALL_TABLE(sort_runs);
static const THSortLexRunsFn lex_fns[TH_NDTYPES] = TH_ALL_TABLE(sort_lex_runs);
static const THSortIsinFn isin_fns[TH_NDTYPES] = TH_ALL_TABLE(sort_isin);

static void *oom(void) {
  THError_set(TH_ERR_MEMORY, "out of memory");
  return NULL;
}

/* t with dims a and b swapped and made contiguous (a new reference) */
static THTensor *swapped_contiguous(const THTensor *t, int64_t a, int64_t b) {
  if (a == b) return at_contiguous(t);
  THTensor *v = at_transpose(t, a, b);
  if (!v) return NULL;
  THTensor *c = at_contiguous(v);
  THTensor_free(v);
  return c;
}

/* The GPU's run_rows (src/THC/THCSort.cu): x's rows (contiguous, n each)
 * sorted whole, then cut to the first k (topk) or one pick per row
 * (kthvalue, median, nanmedian) into vals/idx of x's row layout. */
static int sort_rows_cuda(const THTensor *x, int64_t rows, int64_t n, THSortOp op, int64_t k, int64_t kth,
                          THTensor *vals, THTensor *idx) {
  int dev = THTensor_device(x);
  THDtype dt = x->dtype;
  if (op == TH_SORT_MODE) {
    THError_set(TH_ERR_NOTIMPL, "mode() is not implemented on CUDA yet");
    return -1;
  }
  bool whole = (op == TH_SORT_ASC || op == TH_SORT_DESC) && k == n;
  if (whole)   /* straight into the results */
    return at_cuda->sort_rows(dt, THTensor_data(x), rows, n, op == TH_SORT_DESC, vals ? THTensor_data(vals) : NULL,
                              (int64_t *)THTensor_data(idx));
  int64_t sz[2] = { rows, n };
  THTensor *sv = at_new_on(dev, dt, 2, sz, NULL), *si = sv ? at_new_on(dev, TH_Int64, 2, sz, NULL) : NULL;
  int rc = si ? at_cuda->sort_rows(dt, THTensor_data(x), rows, n, op == TH_SORT_DESC, THTensor_data(sv),
                                   (int64_t *)THTensor_data(si)) : -1;
  if (rc == 0 && (op == TH_SORT_ASC || op == TH_SORT_DESC)) {   /* topk: the first k columns */
    THTensor *res[2] = { vals, idx }, *src[2] = { sv, si };
    for (int j = 0; j < 2 && rc == 0; j++) {
      if (!res[j]) continue;
      THTensor *cut = at_narrow(src[j], 1, 0, k), *dst = cut ? at_reshape(res[j], &(ATIntList){ 2, { rows, k } }) : NULL;
      rc = dst ? at_copy_(dst, cut) : -1;
      THTensor_free(cut);
      THTensor_free(dst);
    }
  } else if (rc == 0) {
    int mode = op == TH_SORT_KTH ? 0 : op == TH_SORT_MEDIAN ? 1 : 2;
    rc = at_cuda->sort_select(dt, THTensor_data(sv), (const int64_t *)THTensor_data(si), rows, n, mode, kth,
                              THTensor_data(vals), (int64_t *)THTensor_data(idx));
  }
  THTensor_free(sv);
  THTensor_free(si);
  return rc;
}

/* t with dim a moved to b, the other dims in their order, made contiguous (a new reference) */
static THTensor *moved_contiguous(const THTensor *t, int64_t a, int64_t b) {
  if (a == b) return at_contiguous(t);
  THTensor *v = at_movedim(t, &(ATIntList){ 1, { a } }, &(ATIntList){ 1, { b } });
  if (!v) return NULL;
  THTensor *c = at_contiguous(v);
  THTensor_free(v);
  return c;
}

/* Runs `op` along dim d of self. Sorts (reduce false) give outs of self's
 * shape with size k at d; reductions (k == 1) drop d unless keepdim. Without
 * want_vals only outs[1], the indices, is made (outs[0] NULL). */
/* complex values have no order: torch's sort and topk refuse them in their own words (a leading space
 * included), the selections name their CPU kernels */
static int refuse_complex(const THTensor *self, THSortOp op) {
  if (!THDtype_isComplex(self->dtype)) return 0;
  switch (op) {
    case TH_SORT_TOPK_MAX: case TH_SORT_TOPK_MIN:
      THError_set(TH_ERR_RUNTIME, " topk does not support complex dtypes on CPU");
      return -1;
    case TH_SORT_KTH: return at_no_complex(self, "kthvalue_cpu");
    case TH_SORT_MEDIAN: return at_no_complex(self, "median_cpu");
    case TH_SORT_NANMEDIAN: return at_no_complex(self, "nanmedian_cpu");
    case TH_SORT_MODE: return at_no_complex(self, "mode_cpu");
    default:
      THError_set(TH_ERR_RUNTIME, " Sort does not support complex dtypes on CPU");
      return -1;
  }
}

static int run_rows(THTensor **outs, const THTensor *self, int64_t d, THSortOp op, int64_t k, int64_t kth,
                    bool reduce, bool keepdim, bool want_vals, bool sorted, bool unstable) {
  if (refuse_complex(self, op) < 0) return -1;
  int nd = self->ndim;
  int64_t last = nd ? nd - 1 : 0, n = nd ? self->sizes[d] : 1, rows = 1, sz[TH_MAX_DIMS];
  int on = 0;
  for (int i = 0; i < nd; i++)
    if (i != d) rows *= self->sizes[i];
  if (reduce) {
    for (int i = 0; i < nd; i++)
      if (i != d) sz[on++] = self->sizes[i];
      else if (keepdim) sz[on++] = 1;
  } else {
    for (int i = 0; i < nd; i++) sz[on++] = self->sizes[i];
    if (nd) { sz[d] = sz[last]; sz[last] = k; }   /* the swapped layout */
  }
  /* reductions read their rows in the result's order: d moved last, the others kept in order */
  THTensor *x = reduce ? moved_contiguous(self, d, last) : swapped_contiguous(self, d, last);
  if (!x) return -1;
  int dev = THTensor_device(self);
  THTensor *vals = want_vals ? at_new_on(dev, self->dtype, on, sz, NULL) : NULL;
  THTensor *idx = at_new_on(dev, TH_Int64, on, sz, NULL);
  if ((want_vals && !vals) || !idx) {
    THTensor_free(x); THTensor_free(vals); THTensor_free(idx);
    return -1;
  }
  bool ok;
  if (dev >= 0) {   /* the GPU's topk is a sort cut to k (torch's tie order there is not fixed either) */
    THSortOp gop = op == TH_SORT_TOPK_MAX ? TH_SORT_DESC : op == TH_SORT_TOPK_MIN ? TH_SORT_ASC : op;
    ok = rows * k == 0 || sort_rows_cuda(x, rows, n, gop, k, kth, vals, idx) == 0;
  } else {
    THSortRows s = { op, THTensor_data(x), vals ? THTensor_data(vals) : NULL, (int64_t *)THTensor_data(idx),
                     rows, n, k, kth, sorted, unstable };
    ok = rows * k == 0 || row_fns[self->dtype](&s);
    if (!ok) oom();
  }
  THTensor_free(x);
  if (!ok) { THTensor_free(vals); THTensor_free(idx); return -1; }
  outs[0] = vals; outs[1] = idx;
  if (!reduce && d != last)
    for (int j = 0; j < 2; j++) {
      if (!outs[j]) continue;
      THTensor *back = swapped_contiguous(outs[j], d, last);
      THTensor_free(outs[j]);
      outs[j] = back;
    }
  if ((want_vals && !outs[0]) || !outs[1]) {
    THTensor_free(outs[0]); THTensor_free(outs[1]);
    outs[0] = outs[1] = NULL;
    return -1;
  }
  return 0;
}

/* ---------------------------------------------------------------- sort, topk */
/* Whether torch's CPU sort(stable=False) of self along d leaves ties where
 * std::sort puts them. It does not for a dim of stride 0 (the indices stay
 * 0..n-1 untouched) nor for fbgemm's radix sort, which is stable and takes
 * 1-d integer ascending sorts of at least GRAIN_SIZE (32768) elements. */
static bool sorts_unstably(const THTensor *self, int64_t d, bool descending, bool stable) {
  if (stable || self->ndim == 0 || self->strides[d] == 0) return false;
  return !(self->ndim == 1 && !descending && THDtype_isIntegral(self->dtype, false) && self->sizes[0] >= 32768);
}

int at_sort(THTensor **outs, const THTensor *self, int64_t dim, bool descending, bool stable) {
  int64_t d;
  if (at_wrap_dim(dim, self->ndim, &d) < 0) return -1;
  int64_t n = self->ndim ? self->sizes[d] : 1;
  return run_rows(outs, self, d, descending ? TH_SORT_DESC : TH_SORT_ASC, n, 0, false, false, true, true,
                  sorts_unstably(self, d, descending, stable));
}

THTensor *at_argsort(const THTensor *self, int64_t dim, bool descending, bool stable) {
  int64_t d;
  THTensor *o[2];
  if (at_wrap_dim(dim, self->ndim, &d) < 0) return NULL;
  int64_t n = self->ndim ? self->sizes[d] : 1;
  return run_rows(o, self, d, descending ? TH_SORT_DESC : TH_SORT_ASC, n, 0, false, false, false, true,
                  sorts_unstably(self, d, descending, stable)) < 0 ? NULL : o[1];
}

THTensor *at_msort(const THTensor *self) {
  THTensor *o[2];
  if (at_sort(o, self, 0, false, true) < 0) return NULL;
  THTensor_free(o[1]);
  return o[0];
}

int at_topk(THTensor **outs, const THTensor *self, int64_t k, int64_t dim, bool largest, bool sorted) {
  int64_t d;
  if (at_wrap_dim(dim, self->ndim, &d) < 0) return -1;
  int64_t n = self->ndim ? self->sizes[d] : 1;
  if (k < 0 || k > n) { THError_set(TH_ERR_RUNTIME, "selected index k out of range"); return -1; }
  if (self->dtype == TH_Bool) { THError_set(TH_ERR_RUNTIME, "topk does not support bool dtypes on CPU"); return -1; }
  return run_rows(outs, self, d, largest ? TH_SORT_TOPK_MAX : TH_SORT_TOPK_MIN, k, 0, false, false, true, sorted, false);
}

/* ---------------------------------------------------------------- order statistics along a dim */
/* wraps dim and checks the dim is not empty (torch's IndexError) and the dtype */
static int stat_dim(const THTensor *self, int64_t dim, const char *name, const char *kernel, int64_t *d) {
  if (self->dtype == TH_Bool) {
    THError_set(TH_ERR_NOTIMPL, "\"%s\" not implemented for 'Bool'", kernel);
    return -1;
  }
  if (at_wrap_dim(dim, self->ndim, d) < 0) return -1;
  if (self->ndim && self->sizes[*d] == 0) {
    THError_set(TH_ERR_INDEX, "%s(): Expected reduction dim %lld to have non-zero size.", name, (long long)*d);
    return -1;
  }
  return 0;
}

int at_kthvalue(THTensor **outs, const THTensor *self, int64_t k, int64_t dim, bool keepdim) {
  int64_t d;
  if (stat_dim(self, dim, "kthvalue", "kthvalue_cpu", &d) < 0) return -1;
  int64_t n = self->ndim ? self->sizes[d] : 1;
  if (k < 1 || k > n) {
    THError_set(TH_ERR_RUNTIME, "kthvalue(): selected number k out of range for dimension %lld", (long long)d);
    return -1;
  }
  return run_rows(outs, self, d, TH_SORT_KTH, 1, k - 1, true, keepdim, true, true, false);
}

int at_median_dim(THTensor **outs, const THTensor *self, int64_t dim, bool keepdim, bool ignore_nan) {
  int64_t d;
  /* torch names median() in the empty-dim message of both */
  if (stat_dim(self, dim, "median", ignore_nan ? "nanmedian_out" : "median_out", &d) < 0) return -1;
  return run_rows(outs, self, d, ignore_nan ? TH_SORT_NANMEDIAN : TH_SORT_MEDIAN, 1, 0, true, keepdim, true, true, false);
}

THTensor *at_median_all(const THTensor *self, bool ignore_nan) {
  if (self->dtype == TH_Bool) {
    THError_set(TH_ERR_NOTIMPL, "\"%s\" not implemented for 'Bool'", ignore_nan ? "nanmedian_cpu" : "median_cpu");
    return NULL;
  }
  if (THTensor_numel(self) == 0) {
    THTensor *nan = at_full(&(ATIntList){ 0, { 0 } }, at_scalar_float(NAN), self->dtype);
    if (!nan || THTensor_device(self) < 0) return nan;
    THTensor *on = at_to_device(nan, THTensor_device(self), self->dtype, false);   /* the result lives with self */
    THTensor_free(nan);
    return on;
  }
  THTensor *flat = at_reshape(self, &(ATIntList){ 1, { -1 } }), *o[2];
  if (!flat) return NULL;
  int rc = run_rows(o, flat, 0, ignore_nan ? TH_SORT_NANMEDIAN : TH_SORT_MEDIAN, 1, 0, true, false, true, true, false);
  THTensor_free(flat);
  if (rc < 0) return NULL;
  THTensor_free(o[1]);
  return o[0];
}

int at_mode(THTensor **outs, const THTensor *self, int64_t dim, bool keepdim) {
  int64_t d;
  if (at_wrap_dim(dim, self->ndim, &d) < 0) return -1;
  if (self->ndim && self->sizes[d] == 0) {
    THError_set(TH_ERR_INDEX, "mode(): Expected reduction dim %lld to have non-zero size.", (long long)d);
    return -1;
  }
  return run_rows(outs, self, d, TH_SORT_MODE, 1, 0, true, keepdim, true, true, false);
}

/* ---------------------------------------------------------------- unique, isin */
/* dst[j] = src[at[j]] for elements of esz bytes */
static void gather_elems(char *dst, const char *src, const int64_t *at, int64_t n, int esz) {
  switch (esz) {
#define G(T) for (int64_t j = 0; j < n; j++) ((T *)dst)[j] = ((const T *)src)[at[j]]; break;
    case 1: G(uint8_t)
    case 2: G(uint16_t)
    case 4: G(uint32_t)
    default: G(uint64_t)
#undef G
  }
}

/* the runs of equal values of contiguous x, read in sequence: values,
 * inverse and counts as at_unique returns them. order (NULL: none) maps
 * x's positions to self's, so inverse[order[j]] = the run of x[j]. */
static int runs_result(THTensor **outs, const THTensor *self, const THTensor *x, const int64_t *order,
                       bool return_inverse, bool return_counts) {
  if (at_no_complex(x, "unique") < 0) return -1;
  int64_t n = THTensor_numel(x), *start = malloc((n + 1) * sizeof(int64_t));
  if (!start) { oom(); return -1; }
  int64_t U = n ? run_fns[x->dtype](THTensor_data(x), n, start) : 0;
  start[U] = n;
  THTensor *vals = THTensor_new(x->dtype, 1, &U), *inv = NULL, *cnt = NULL;
  int64_t zero = 0;
  inv = return_inverse ? THTensor_new(TH_Int64, self->ndim, self->sizes) : THTensor_new(TH_Int64, 1, &zero);
  cnt = THTensor_new(TH_Int64, 1, return_counts ? &U : &zero);
  if (!vals || !inv || !cnt) {
    free(start); THTensor_free(vals); THTensor_free(inv); THTensor_free(cnt);
    return -1;
  }
  gather_elems(THTensor_data(vals), THTensor_data(x), start, U, THDtype_size(x->dtype));
  if (return_inverse) {
    int64_t *iv = (int64_t *)THTensor_data(inv);
    for (int64_t u = 0; u < U; u++)
      for (int64_t j = start[u]; j < start[u + 1]; j++) iv[order ? order[j] : j] = u;
  }
  if (return_counts) {
    int64_t *cv = (int64_t *)THTensor_data(cnt);
    for (int64_t u = 0; u < U; u++) cv[u] = start[u + 1] - start[u];
  }
  free(start);
  outs[0] = vals; outs[1] = inv; outs[2] = cnt;
  return 0;
}

/* a new array: the positions of contiguous x's elements in stable ascending
 * order; sorted (NULL: not wanted) gets the values in that order */
static int64_t *sorted_order(const THTensor *x, void *sorted) {
  if (at_no_complex(x, "unique") < 0) return NULL;
  int64_t n = THTensor_numel(x), *order = malloc((n ? n : 1) * sizeof(int64_t));
  if (!order) return oom();
  if (!flat_fns[x->dtype](THTensor_data(x), n, order, sorted)) { free(order); return oom(); }
  return order;
}

int at_unique(THTensor **outs, const THTensor *self, bool sorted, bool return_inverse, bool return_counts) {
  (void)sorted;   /* as torch on CPU: the values come sorted either way */
  THTensor *x = at_contiguous(self);
  int64_t n = THTensor_numel(self);
  /* the sort hands back the values in order, so the runs are read in
   * sequence rather than as x[order[j]] (random reads) */
  THTensor *s = x ? THTensor_new(self->dtype, 1, &n) : NULL;
  int64_t *order = s ? sorted_order(x, THTensor_data(s)) : NULL;
  int rc = order ? runs_result(outs, self, s, order, return_inverse, return_counts) : -1;
  free(order);
  THTensor_free(s);
  THTensor_free(x);
  return rc;
}

/* unique / unique_consecutive of the slices along dim (torch's unique_dim):
 * self with dim moved to the front is an (n, m) contiguous block of rows;
 * the rows are ordered lexicographically (unless consecutive) and runs of
 * equal rows kept once. The values come back as the (U, ...) block with its
 * first dim moved back to dim, as torch lays them out; the inverse (n,) and
 * the counts (U,) are always made, as torch's unique_dim makes them. */
static int unique_slices(THTensor **outs, const THTensor *self, int64_t dim, bool sort) {
  if (at_no_complex(self, "unique_dim_cpu") < 0) return -1;
  int64_t d;
  if (self->ndim == 0) {
    THError_set(TH_ERR_INDEX, "Dimension specified as %lld but tensor has no dimensions", (long long)dim);
    return -1;
  }
  if (at_wrap_dim(dim, self->ndim, &d) < 0) return -1;
  int64_t n = self->sizes[d];
  if (THTensor_numel(self) == 0) {
    int zeros = 0;
    for (int i = 0; i < self->ndim; i++) zeros += self->sizes[i] == 0;
    if (zeros > 1) {
      THError_set(TH_ERR_RUNTIME, "Number of zero sized dimensions is more than one, so unique cannot be applied ");
      return -1;
    }
    if (n != 0) {
      THError_set(TH_ERR_RUNTIME, "There are 0 sized dimensions, and they aren't selected, so unique cannot be applied");
      return -1;
    }
  }
  ATIntList src = { 1, { d } }, dst = { 1, { 0 } };
  THTensor *moved = at_movedim(self, &src, &dst), *x = moved ? at_contiguous(moved) : NULL;
  THTensor_free(moved);
  if (!x) return -1;
  int64_t m = n ? THTensor_numel(x) / n : 0, U = 0, esz = THDtype_size(x->dtype);
  int64_t *order = malloc((n + 1) * sizeof(int64_t)), *start = malloc((n + 1) * sizeof(int64_t));
  if (!order || !start) { free(order); free(start); THTensor_free(x); oom(); return -1; }
  if (n && (U = lex_fns[x->dtype](THTensor_data(x), n, m, sort, order, start)) < 0) {
    free(order); free(start); THTensor_free(x); oom(); return -1;
  }
  start[U] = n;
  int64_t sizes[TH_MAX_DIMS];
  memcpy(sizes, x->sizes, x->ndim * sizeof(int64_t));
  sizes[0] = U;
  THTensor *block = THTensor_new(x->dtype, x->ndim, sizes);
  THTensor *inv = THTensor_new(TH_Int64, 1, &n), *cnt = THTensor_new(TH_Int64, 1, &U);
  THTensor *vals = block ? at_movedim(block, &dst, &src) : NULL;
  if (!vals || !inv || !cnt) {
    free(order); free(start); THTensor_free(x); THTensor_free(block); THTensor_free(vals);
    THTensor_free(inv); THTensor_free(cnt);
    return -1;
  }
  char *bv = THTensor_data(block);
  const char *xv = THTensor_data(x);
  int64_t *iv = (int64_t *)THTensor_data(inv), *cv = (int64_t *)THTensor_data(cnt);
  for (int64_t u = 0; u < U; u++) {
    memcpy(bv + u * m * esz, xv + order[start[u]] * m * esz, (size_t)(m * esz));
    cv[u] = start[u + 1] - start[u];
    for (int64_t j = start[u]; j < start[u + 1]; j++) iv[order[j]] = u;
  }
  free(order); free(start); THTensor_free(x); THTensor_free(block);
  outs[0] = vals; outs[1] = inv; outs[2] = cnt;
  return 0;
}

int at_unique_dim(THTensor **outs, const THTensor *self, int64_t dim, bool sorted, bool return_inverse,
                  bool return_counts) {
  (void)sorted; (void)return_inverse; (void)return_counts;   /* as torch: sorted, and all three made */
  return unique_slices(outs, self, dim, true);
}

int at_unique_consecutive(THTensor **outs, const THTensor *self, bool return_inverse, bool return_counts,
                          ATOptInt dim) {
  if (dim.has) return unique_slices(outs, self, dim.v, false);
  THTensor *x = at_contiguous(self);
  if (!x) return -1;
  int rc = runs_result(outs, self, x, NULL, return_inverse, return_counts);
  THTensor_free(x);
  return rc;
}

THTensor *at_isin(const THTensor *elements, const THTensor *test_elements, bool assume_unique, bool invert) {
  if (at_no_complex(elements, "isin") < 0 || at_no_complex(test_elements, "isin") < 0) return NULL;
  (void)assume_unique;   /* a binary search over the sorted test values needs no uniqueness */
  if (elements->dtype == TH_Bool || test_elements->dtype == TH_Bool) {
    THError_set(TH_ERR_RUNTIME, "Unsupported input type encountered for isin(): Bool");
    return NULL;
  }
  THDtype dt = at_promote_types(elements->dtype, test_elements->dtype);
  THTensor *e0 = at_to_dtype(elements, dt, false), *t0 = e0 ? at_to_dtype(test_elements, dt, false) : NULL;
  THTensor *e = t0 ? at_contiguous(e0) : NULL, *t = e ? at_contiguous(t0) : NULL;
  THTensor_free(e0); THTensor_free(t0);
  THTensor *out = t ? THTensor_new(TH_Bool, elements->ndim, elements->sizes) : NULL;
  int64_t m = t ? THTensor_numel(t) : 0, *order = out ? sorted_order(t, NULL) : NULL;
  char *ts = order ? malloc((m ? m : 1) * THDtype_size(dt)) : NULL;
  if (order && !ts) oom();
  if (ts) {
    gather_elems(ts, THTensor_data(t), order, m, THDtype_size(dt));
    isin_fns[dt](THTensor_data(e), THTensor_numel(e), ts, m, (bool *)THTensor_data(out), invert);
  } else {
    THTensor_free(out);
    out = NULL;
  }
  free(ts); free(order); THTensor_free(e); THTensor_free(t);
  return out;
}

static THTensor *scalar_tensor(ATScalar s) { return at_scalar_tensor(s, at_scalar_dtype(s)); }

THTensor *at_isin_scalar(const THTensor *elements, ATScalar test_element, bool assume_unique, bool invert) {
  THTensor *t = scalar_tensor(test_element);
  THTensor *r = t ? at_isin(elements, t, assume_unique, invert) : NULL;
  THTensor_free(t);
  return r;
}

THTensor *at_isin_scalar_tensor(ATScalar element, const THTensor *test_elements, bool assume_unique, bool invert) {
  THTensor *e = scalar_tensor(element);
  THTensor *r = e ? at_isin(e, test_elements, assume_unique, invert) : NULL;
  THTensor_free(e);
  return r;
}
