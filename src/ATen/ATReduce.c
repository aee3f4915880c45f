/* Reductions: sum and mean here; the driver (ATReduce.h) serves the rest. */
#include "ATReduce.h"
#include "ATComplex.h"
#include "ATArgChecks.h"
#include "../TH/THKernels.h"
#include "../TH/THMath.h"   /* libmvec declarations: the simd exp in logsumexp */
#include "ATCuda.h"
#include "ATScatter.h"

#include <omp.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

/* torch's iteration of a float32/float64 sum whose dims do not collapse to 2-d (a middle dim,
 * or kept dims between reduced ones): its dims, fastest first, after torch's reordering and
 * merging; each 2-d slice (dims 0 and 1) is summed by the 2-d kernel and added into its outputs.
 * order (optional) receives the input dims of size > 1, fastest first */
typedef struct {
  int nd;
  int64_t size[TH_MAX_DIMS], is[TH_MAX_DIMS], os[TH_MAX_DIMS];   /* strides in elements */
} SumIter;

/* > 0 when dim a should go inside dim b: reduced dims first, then by output stride (the result
 * is contiguous in the kept dims' order), then by input stride, then the smaller size */
static int sum_iter_swap(const SumIter *it, int a, int b) {
  if ((it->os[a] == 0) != (it->os[b] == 0)) return it->os[b] == 0 ? 1 : -1;
  if (it->os[a] && it->os[b] && it->os[a] != it->os[b]) return it->os[a] < it->os[b] ? -1 : 1;
  if (it->is[a] && it->is[b]) {
    if (it->is[a] != it->is[b]) return it->is[a] < it->is[b] ? -1 : 1;
    if (it->size[a] > it->size[b]) return 1;
  }
  return 0;
}

static void sum_iter_build(SumIter *it, const THTensor *self, const bool *reduced, int *order) {
  SumIter raw = { 0 };
  int raw_dim[TH_MAX_DIMS];
  int64_t ostride = 1;
  for (int i = self->ndim - 1; i >= 0; i--) {   /* last dim first: torch's starting order */
    if (self->sizes[i] == 1) continue;
    raw_dim[raw.nd] = i;
    raw.size[raw.nd] = self->sizes[i];
    raw.is[raw.nd] = self->strides[i];
    raw.os[raw.nd] = reduced[i] ? 0 : ostride;
    if (!reduced[i]) ostride *= self->sizes[i];
    raw.nd++;
  }
  int perm[TH_MAX_DIMS];
  for (int i = 0; i < raw.nd; i++) perm[i] = i;
  /* torch's insertion sort: a tie keeps looking further in */
  for (int i = 1; i < raw.nd; i++)
    for (int d1 = i, d0 = i - 1; d0 >= 0; d0--) {
      int c = sum_iter_swap(&raw, perm[d0], perm[d1]);
      if (c > 0) { int t = perm[d0]; perm[d0] = perm[d1]; perm[d1] = t; d1 = d0; }
      else if (c < 0) break;
    }
  if (order) for (int i = 0; i < raw.nd; i++) order[i] = raw_dim[perm[i]];
  it->nd = 0;
  for (int i = 0; i < raw.nd; i++) {
    int d = perm[i];
    if (it->nd) {   /* merge into the previous dim when both strides continue it */
      int p = it->nd - 1;
      if (it->size[p] * it->is[p] == raw.is[d] && it->size[p] * it->os[p] == raw.os[d]) {
        it->size[p] *= raw.size[d];
        continue;
      }
    }
    it->size[it->nd] = raw.size[d]; it->is[it->nd] = raw.is[d]; it->os[it->nd] = raw.os[d];
    it->nd++;
  }
}

/* copy false: a reduction that keeps dims and does not collapse to 2-d is left uncopied,
 * r->data NULL (the float sums iterate the input as torch does) */
static int reduce_prepare(const THTensor *self, const ATIntList *dims, bool keepdim, ATReduce2D *r, bool copy) {
  int nd = self->ndim;
  memset(r, 0, sizeof *r);
  /* sum and mean of complex tensors reduce their real view (at_complex_sum); no other reduction has a complex kernel */
  if (THDtype_isComplex(self->dtype)) {
    THError_set(TH_ERR_NOTIMPL, "reductions other than sum and mean are not implemented for '%s' in cthtorch",
                THDtype_info[self->dtype].legacy);
    return -1;
  }
  r->dtype = self->dtype;
  bool all = !dims || dims->n == 0;
  for (int i = 0; i < nd; i++) r->reduced[i] = all;
  if (!all)
    for (int i = 0; i < dims->n; i++) {
      int64_t d;
      if (at_wrap_dim(dims->v[i], nd, &d) < 0) return -1;
      if (nd == 0 && i == 0) continue;   /* a 0-d tensor's one dim: a second naming of it is a repeat */
      if (nd == 0 || r->reduced[d]) {
        THError_set(TH_ERR_RUNTIME, "dim %lld appears multiple times in the list of dims", (long long)d);
        return -1;
      }
      r->reduced[d] = true;
    }
  r->out_ndim = 0;
  for (int i = 0; i < nd; i++) {
    if (!r->reduced[i]) r->out_sizes[r->out_ndim++] = self->sizes[i];
    else if (keepdim) r->out_sizes[r->out_ndim++] = 1;
  }
  /* kept dims in order, then reduced dims by descending stride */
  int kept[TH_MAX_DIMS], red[TH_MAX_DIMS], nk = 0, nr = 0;
  for (int i = 0; i < nd; i++) {
    if (self->sizes[i] == 1) continue;
    if (r->reduced[i]) red[nr++] = i; else kept[nk++] = i;
  }
  for (int a = 1; a < nr; a++)
    for (int b = a; b > 0 && self->strides[red[b - 1]] < self->strides[red[b]]; b--) {
      int t = red[b]; red[b] = red[b - 1]; red[b - 1] = t;
    }
  r->M = 1; r->K = 1;
  for (int i = 0; i < nd; i++) { if (r->reduced[i]) r->K *= self->sizes[i]; else r->M *= self->sizes[i]; }
  bool ok = true;
  for (int i = 0; i + 1 < nk && ok; i++) ok = self->strides[kept[i]] == self->strides[kept[i + 1]] * self->sizes[kept[i + 1]];
  for (int i = 0; i + 1 < nr && ok; i++) ok = self->strides[red[i]] == self->strides[red[i + 1]] * self->sizes[red[i + 1]];
  if (ok) {
    r->sm = nk ? self->strides[kept[nk - 1]] : 0;
    r->sk = nr ? self->strides[red[nr - 1]] : 0;
    r->data = THTensor_data(self);
    r->row_len = r->K;
    r->row_vec = r->sk == 1;
    return 0;
  }
  /* a full reduction copies in torch's order of iteration, its rows the first dim of that
   * (a full sum adds their sums in order); else kept dims, then the reduced ones in index order */
  ATIntList perm = { 0 };
  r->row_len = r->K;
  r->row_vec = true;
  if (nk == 0) {
    SumIter it;
    int order[TH_MAX_DIMS];
    sum_iter_build(&it, self, r->reduced, order);
    r->row_len = it.size[0];
    r->row_vec = it.is[0] == 1;
    for (int i = 0; i < nd; i++) if (self->sizes[i] == 1) perm.v[perm.n++] = i;
    for (int i = nr - 1; i >= 0; i--) perm.v[perm.n++] = order[i];
  } else {
    if (!copy) return 0;
    for (int i = 0; i < nd; i++) if (!r->reduced[i]) perm.v[perm.n++] = i;
    for (int i = 0; i < nd; i++) if (r->reduced[i]) perm.v[perm.n++] = i;
  }
  THTensor *p = at_permute(self, &perm);
  if (!p) return -1;
  r->holder = at_clone(p, false);
  THTensor_free(p);
  if (!r->holder) return -1;
  r->sm = r->K;
  r->sk = 1;
  r->data = THTensor_data(r->holder);
  return 0;
}

int at_reduce_prepare(const THTensor *self, const ATIntList *dims, bool keepdim, ATReduce2D *r) {
  return reduce_prepare(self, dims, keepdim, r, true);
}

void at_reduce_release(ATReduce2D *r) {
  THTensor_free(r->holder);
  r->holder = NULL;
}

THTensor *at_reduce_output(const ATReduce2D *r, THDtype dtype, THTensor *out) {
  if (!out) return THTensor_new(dtype, r->out_ndim, r->out_sizes);
  if (out->ndim != r->out_ndim || memcmp(out->sizes, r->out_sizes, r->out_ndim * sizeof(int64_t))) {
    if (THTensor_resize(out, r->out_ndim, r->out_sizes) < 0) return NULL;
  }
  return THTensor_retain(out);
}

/* ---- the GPU path: every reduction below is one at_cuda->reduce over the
 * 2-d layout at_reduce_prepare computes (a device copy when the dims do not
 * coalesce). Meta tensors take it too: the outputs alone, no kernel. idx (MAX/MIN): receives the int64 indices, new ref. ---- */
static THTensor *reduce_cuda(ATReduceOp op, const THTensor *self, const ATIntList *dims, bool keepdim,
                             THDtype out_dt, double arg, THTensor **idx) {
  ATReduce2D r;
  if (at_reduce_prepare(self, dims, keepdim, &r) < 0) return NULL;
  int dev = THTensor_device(self);
  THTensor *res = at_new_on(dev, out_dt, r.out_ndim, r.out_sizes, NULL);
  THTensor *ix = res && idx ? at_new_on(dev, TH_Int64, r.out_ndim, r.out_sizes, NULL) : NULL;
  if (!res || (idx && !ix) ||
      (dev != TH_DEVICE_META && at_cuda->reduce(op, r.dtype, r.data, r.M, r.K, r.sm, r.sk, out_dt, THTensor_data(res),
                      ix ? (int64_t *)THTensor_data(ix) : NULL, arg) < 0)) {
    THTensor_free(res);
    THTensor_free(ix);
    at_reduce_release(&r);
    return NULL;
  }
  at_reduce_release(&r);
  if (idx) *idx = ix;
  return res;
}

/* res into out= (resized, cast), or res itself */
static THTensor *into_out(THTensor *res, THTensor *out) {
  if (!res || !out) return res;
  THTensor *r = NULL;
  if (at_check_cast(res->dtype, out->dtype) == 0 && THTensor_resize(out, res->ndim, res->sizes) == 0 &&
      at_copy_(out, res) == 0)
    r = THTensor_retain(out);
  THTensor_free(res);
  return r;
}

typedef void (*Sum2d)(double *, int64_t *, const void *, int64_t, int64_t, int64_t, int64_t);
static const Sum2d sum2d[TH_NDTYPES] = {
  [TH_Bool] = (Sum2d)THBoolTensor_sum_2d, [TH_UInt8] = (Sum2d)THByteTensor_sum_2d,
  [TH_Int8] = (Sum2d)THCharTensor_sum_2d, [TH_Int16] = (Sum2d)THShortTensor_sum_2d,
  [TH_Int32] = (Sum2d)THIntTensor_sum_2d, [TH_Int64] = (Sum2d)THLongTensor_sum_2d,
  [TH_Half] = (Sum2d)THHalfTensor_sum_2d, [TH_BFloat16] = (Sum2d)THBFloat16Tensor_sum_2d,
  [TH_Float] = (Sum2d)THFloatTensor_sum_2d, [TH_Double] = (Sum2d)THDoubleTensor_sum_2d,
};

/* torch's sum of elements [b, e) of a full reduction: the pieces of its rows
 * (ATReduce2D.row_len) summed one by one and added up in order */
static double sum_rows_torch(const ATReduce2D *r, const char *data, int64_t b, int64_t e) {
  const int64_t L = r->row_len > 0 ? r->row_len : 1;
  const bool isf = r->dtype == TH_Float;
  float fs = 0;
  double ds = 0;
  while (b < e) {
    int64_t re = (b / L + 1) * L;
    if (re > e) re = e;
    if (isf) fs += THFloatTensor_sum_row_torch((const float *)data + b * r->sk, re - b, r->sk, r->row_vec);
    else ds += THDoubleTensor_sum_row_torch((const double *)data + b * r->sk, re - b, r->sk, r->row_vec);
    b = re;
  }
  return isf ? fs : ds;
}

/* torch's full sum of float32/float64: rows in order on one thread; with nt > 1 threads
 * and K >= 32768 elements its two passes: min(nt, ceil(K / 32768)) equal chunks, each
 * summed into its thread's slot of an nt-element buffer, then the buffer summed as a row */
static void sum_full_torch(const ATReduce2D *r, double *od, int nt) {
  const int64_t K = r->K, grain = 32768;
  if (nt <= 1 || K < grain) { od[0] = sum_rows_torch(r, r->data, 0, K); return; }
  int64_t tasks = (K + grain - 1) / grain;
  if (tasks > nt) tasks = nt;
  const int64_t chunk = (K + tasks - 1) / tasks;
  double buf[64] = {0};
#pragma omp parallel for num_threads(tasks)
  for (int64_t t = 0; t < tasks; t++) {
    int64_t b = t * chunk, e = b + chunk < K ? b + chunk : K;
    if (b < e) buf[t] = sum_rows_torch(r, r->data, b, e);
  }
  if (r->dtype == TH_Float) {
    float fbuf[64];
    for (int t = 0; t < nt; t++) fbuf[t] = (float)buf[t];
    od[0] = THFloatTensor_sum_row_torch(fbuf, nt, 1, true);
  } else {
    od[0] = THDoubleTensor_sum_row_torch(buf, nt, 1, true);
  }
}

/* the slices of `it` in order (dims 2.. as a counter), each 2-d sum added into od in the dtype */
static void sum_iter_run(const SumIter *it, const ATReduce2D *r, const char *data, double *od, double *tmp) {
  const int es = THDtype_size(r->dtype);
  const bool isf = r->dtype == TH_Float;
  int64_t n0 = it->nd > 0 ? it->size[0] : 1, n1 = it->nd > 1 ? it->size[1] : 1;
  int64_t is0 = it->nd > 0 ? it->is[0] : 0, is1 = it->nd > 1 ? it->is[1] : 0;
  int64_t os0 = it->nd > 0 ? it->os[0] : 0, os1 = it->nd > 1 ? it->os[1] : 0;
  if (os0 != 0 && os1 == 0) {   /* the reduced dim as the slice's first */
    int64_t t = n0; n0 = n1; n1 = t;
    t = is0; is0 = is1; is1 = t;
    t = os0; os0 = os1; os1 = t;
  }
  int64_t idx[TH_MAX_DIMS] = { 0 }, ioff = 0, ooff = 0;
  for (;;) {
    const char *x = data + ioff * es;
    if (os0 != 0) {   /* no reduced dim in the slice: elementwise adds */
      for (int64_t j = 0; j < n1; j++)
        for (int64_t i = 0; i < n0; i++) {
          double *o = od + ooff + i * os0 + j * os1;
          double v = isf ? (double)((const float *)x)[i * is0 + j * is1] : ((const double *)x)[i * is0 + j * is1];
          *o = isf ? (double)((float)*o + (float)v) : *o + v;
        }
    } else {
      sum2d[r->dtype](tmp, NULL, x, n1, n0, is1, is0);
      for (int64_t j = 0; j < n1; j++) {
        double *o = od + ooff + j * os1;
        *o = isf ? (double)((float)*o + (float)tmp[j]) : *o + tmp[j];
      }
    }
    int d = 2;
    for (; d < it->nd; d++) {
      ioff += it->is[d]; ooff += it->os[d];
      if (++idx[d] < it->size[d]) break;
      ioff -= it->is[d] * it->size[d]; ooff -= it->os[d] * it->size[d];
      idx[d] = 0;
    }
    if (d >= it->nd) break;
  }
}

/* a non-collapsing float32/float64 sum of M > 1 outputs in torch's order into od (zeroed here);
 * with nt > 1 threads and 32768+ elements, torch's split of its outermost kept dim: equal
 * chunks, rounded down to 128 bytes when that dim is unit-stride in the input */
static int sum_nd_torch(const THTensor *self, const ATReduce2D *r, double *od, int nt) {
  SumIter it;
  sum_iter_build(&it, self, r->reduced, NULL);
  for (int64_t m = 0; m < r->M; m++) od[m] = 0;
  const int64_t n1 = it.nd > 1 ? it.size[1] : 1, n0 = it.nd > 0 ? it.size[0] : 1;
  const int64_t tmp_n = n1 > n0 ? n1 : n0;
  const char *data = THTensor_data(self);
  const int es = THDtype_size(r->dtype);
  if (nt <= 1 || r->M * r->K < 32768 || it.nd < 1) {
    double *tmp = malloc(tmp_n * sizeof(double));
    if (!tmp) { THError_set(TH_ERR_MEMORY, "out of memory"); return -1; }
    sum_iter_run(&it, r, data, od, tmp);
    free(tmp);
    return 0;
  }
  int dim = it.nd - 1, best = it.nd - 1;
  for (; dim >= 0 && it.os[dim] != 0; dim--) {
    if (it.size[dim] >= nt) break;
    if (it.size[dim] > it.size[best]) best = dim;
  }
  if (dim < 0 || it.os[dim] == 0) dim = best;
  const int64_t n = it.size[dim];
  const int T = n < nt ? (int)n : nt;
  const int64_t chunk = (n + T - 1) / T, g = 128 / es;
  const bool round = it.is[dim] == 1;
  int err = 0;
#pragma omp parallel for num_threads(T) reduction(| : err)
  for (int t = 0; t < T; t++) {
    int64_t b = t * chunk, e = b + chunk < n ? b + chunk : n;
    if (b >= n) continue;
    if (round) { b -= b % g; if (e != n) e -= e % g; }
    if (b >= e) continue;
    SumIter sub = it;
    sub.size[dim] = e - b;
    double *tmp = malloc(tmp_n * sizeof(double));
    if (!tmp) { err = 1; continue; }
    sum_iter_run(&sub, r, data + b * it.is[dim] * es, od + b * it.os[dim], tmp);
    free(tmp);
  }
  if (err) { THError_set(TH_ERR_MEMORY, "out of memory"); return -1; }
  return 0;
}

/* sums into a double or int64 buffer of M values, threads over m or k */
static int sum_into(const ATReduce2D *r, double *od, int64_t *oi) {
  Sum2d fn = sum2d[r->dtype];
  int es = THDtype_size(r->dtype);
  int nt = at_get_num_threads();
  int64_t work = r->M * r->K;
  bool torch_order = r->dtype == TH_Float || r->dtype == TH_Double;
  if (nt > 64) nt = 64;
  if (torch_order && r->M == 1) { sum_full_torch(r, od, nt); return 0; }
  /* torch splits the outputs of 32768+ elements over its threads (so a column sum's grouping
   * sees the chunk boundaries) */
  if (nt <= 1 || work < (torch_order ? 32768 : 65536)) { fn(od, oi, r->data, r->M, r->K, r->sm, r->sk); return 0; }
  if (r->M >= nt && (r->M >= 16 || torch_order)) {
    /* chunks of whole 128-byte column groups when the outputs are adjacent in the input, as
     * torch rounds its chunks; equal chunks otherwise */
    const int64_t g = !torch_order || r->sm == 1 ? 128 / es : 1;
#pragma omp parallel num_threads(nt)
    {
      int t = omp_get_thread_num(), n = omp_get_num_threads();
      int64_t chunk = (r->M + n - 1) / n;
      chunk = (chunk + g - 1) / g * g;
      int64_t b = t * chunk, e = b + chunk < r->M ? b + chunk : r->M;
      if (b < e) fn(od ? od + b : NULL, oi ? oi + b : NULL, r->data + b * r->sm * es, e - b, r->K, r->sm, r->sk);
    }
    return 0;
  }
  if (torch_order) { fn(od, oi, r->data, r->M, r->K, r->sm, r->sk); return 0; }
  /* few outputs, long rows: split k and add the partial sums */
  for (int64_t m = 0; m < r->M; m++) {
    double pd[64] = {0};
    int64_t pi[64] = {0};
    int used = nt;
#pragma omp parallel num_threads(used)
    {
      int t = omp_get_thread_num(), n = omp_get_num_threads();
      int64_t chunk = (r->K + n - 1) / n, b = t * chunk, e = b + chunk < r->K ? b + chunk : r->K;
      const char *base = r->data + (m * r->sm + b * r->sk) * es;
      if (b < e) fn(od ? &pd[t] : NULL, oi ? &pi[t] : NULL, base, 1, e - b, 0, r->sk);
    }
    double sd = 0;
    int64_t si = 0;
    for (int t = 0; t < used; t++) { sd += pd[t]; si += pi[t]; }
    if (od) od[m] = sd; else oi[m] = si;
  }
  return 0;
}

/* Runs a sum into a fresh result of `dtype`; a mean (mean set) then divides by the count K
 * in the dtype, float32 in float (torch's mean is its sum, div_ by the count) */
static THTensor *sum_impl(const THTensor *self, const ATIntList *dims, bool keepdim, THDtype dtype,
                          THTensor *out, bool mean) {
  THTensor *src = NULL;
  if (dtype != self->dtype && THDtype_isFloating(dtype)) {
    if (!(src = at_to_dtype(self, dtype, false))) return NULL;
    self = src;
  }
  if (at_off_host(self)) {
    double scale = 1.0;
    if (mean) {
      ATReduce2D q;
      if (at_reduce_prepare(self, dims, keepdim, &q) < 0) { THTensor_free(src); return NULL; }
      scale = q.K ? 1.0 / (double)q.K : NAN;
      at_reduce_release(&q);
    }
    THTensor *res = into_out(reduce_cuda(AT_RED_SUM, self, dims, keepdim, dtype, scale, NULL), out);
    THTensor_free(src);
    return res;
  }
  ATReduce2D r;
  const bool torch_order = self->dtype == TH_Float || self->dtype == TH_Double;
  if (reduce_prepare(self, dims, keepdim, &r, !torch_order) < 0) { THTensor_free(src); return NULL; }
  bool fl = THDtype_isFloating(self->dtype);
  THTensor *acc = THTensor_new(fl ? TH_Double : TH_Int64, r.out_ndim, r.out_sizes);
  THTensor *res = NULL;
  if (!acc) goto done;
  if (r.M > 0) {
    if (r.K == 0) memset(THTensor_data(acc), 0, r.M * 8);
    else if (!r.data) {
      int nt = at_get_num_threads();
      if (sum_nd_torch(self, &r, (double *)THTensor_data(acc), nt > 64 ? 64 : nt) < 0) goto done;
    } else sum_into(&r, fl ? (double *)THTensor_data(acc) : NULL, fl ? NULL : (int64_t *)THTensor_data(acc));
  }
  if (mean) {
    double *v = (double *)THTensor_data(acc);
    if (self->dtype == TH_Double)
      for (int64_t m = 0; m < r.M; m++) v[m] /= (double)r.K;
    else
      for (int64_t m = 0; m < r.M; m++) v[m] = (float)v[m] / (float)r.K;
  }
  if (out && at_check_cast(dtype, out->dtype) < 0) goto done;
  res = at_reduce_output(&r, out ? out->dtype : dtype, out);
  if (res && at_copy_(res, acc) < 0) { THTensor_free(res); res = NULL; }
done:
  THTensor_free(acc);
  at_reduce_release(&r);
  THTensor_free(src);
  return res;
}

THTensor *at_sum(const THTensor *self, const ATIntList *dims, bool keepdim, THDtype dtype, THTensor *out) {
  if (THDtype_isComplex(self->dtype)) return at_complex_sum(self, dims, keepdim, dtype, out, false);
  if (dtype == TH_Undefined) dtype = THDtype_isFloating(self->dtype) ? self->dtype : TH_Int64;
  return sum_impl(self, dims, keepdim, dtype, out, false);
}

THTensor *at_mean(const THTensor *self, const ATIntList *dims, bool keepdim, THDtype dtype, THTensor *out) {
  if (THDtype_isComplex(self->dtype)) return at_complex_sum(self, dims, keepdim, dtype, out, true);
  THDtype dt = dtype == TH_Undefined ? self->dtype : dtype;
  if (!THDtype_isFloating(dt)) {
    THError_set(TH_ERR_RUNTIME, "mean(): could not infer output dtype. %s dtype must be either a floating point or "
                "complex dtype. Got: %s", dtype == TH_Undefined ? "Input" : "Optional", THDtype_info[dt].legacy);
    return NULL;
  }
  return sum_impl(self, dims, keepdim, dt, out, true);
}

/* ---- the reductions ---- */
/* Reductions computed on a double (or int64) contiguous copy laid out as
 * [outer, D, inner] around one dim, or through the 2-d driver for dim
 * lists. Values convert back to the input dtype at the end. */
static bool use_int(THDtype t) { return !THDtype_isFloating(t); }

/* contiguous copy in double or int64 */
static THTensor *work_copy(const THTensor *t) {
  THTensor *c = at_to_dtype(t, use_int(t->dtype) ? TH_Int64 : TH_Double, true);
  if (!c) return NULL;
  THTensor *r = at_contiguous(c);
  THTensor_free(c);
  return r;
}

static void around(const THTensor *t, int64_t d, int64_t *outer, int64_t *D, int64_t *inner) {
  *outer = 1; *inner = 1; *D = t->ndim ? t->sizes[d] : 1;
  for (int i = 0; i < d; i++) *outer *= t->sizes[i];
  for (int i = d + 1; i < t->ndim; i++) *inner *= t->sizes[i];
}

static void reduced_sizes(const THTensor *t, int64_t d, bool keepdim, int *nd, int64_t *sizes) {
  int k = 0;
  for (int i = 0; i < t->ndim; i++) {
    if (i == d) { if (keepdim) sizes[k++] = 1; }
    else sizes[k++] = t->sizes[i];
  }
  *nd = k;
}

static double getd(const THTensor *w, int64_t i) {
  return w->dtype == TH_Int64 ? (double)((const int64_t *)THTensor_data(w))[i] : ((const double *)THTensor_data(w))[i];
}

/* better(a, b): a replaces b as the max (min); NaN wins and stays */
static inline bool better(double a, double b, bool is_max) {
  if (isnan(b)) return false;
  if (isnan(a)) return true;
  return is_max ? a > b : a < b;
}

/* max/min over contiguous rows of floats or doubles, in their own dtype
 * (no double copy), rows in parallel: the first NaN wins, else the first
 * of equal extremes */
#define MAX_ROWS(T)                                                                            \
  static void max_rows_##T(const T *x, T *vals, int64_t *iv, int64_t outer, int64_t D, bool is_max) { \
    _Pragma("omp parallel for if (outer * D > 32768)")                                         \
    for (int64_t o = 0; o < outer; o++) {                                                      \
      const T *row = x + o * D;                                                                \
      T bv = row[0];                                                                           \
      int64_t best = 0;                                                                        \
      if (bv == bv)                                                                            \
        for (int64_t k = 1; k < D; k++) {                                                      \
          T v = row[k];                                                                        \
          if (is_max ? v > bv : v < bv) { bv = v; best = k; }                                  \
          else if (v != v) { bv = v; best = k; break; }                                        \
        }                                                                                      \
      vals[o] = bv;                                                                            \
      iv[o] = best;                                                                            \
    }                                                                                          \
  }
MAX_ROWS(float)
MAX_ROWS(double)

/* The same over a dim with inner > 1 (x.max(0)): for each of the outer blocks, the D rows of inner
 * elements are read in memory order, each compared into the running values and indices of its column
 * (the first NaN wins: a column that met one compares no more, as its v > NaN and v < NaN stay false
 * and the NaN test comes first). The per-column walk a row apart, over a double copy, took 1.9x
 * torch's time at (256, 512) over dim 0. */
#define MAX_COLS(T)                                                                            \
  static void max_cols_##T(const T *x, T *vals, int64_t *iv, int64_t outer, int64_t D, int64_t inner, bool is_max) { \
    _Pragma("omp parallel for if (outer * D * inner > 32768 && outer > 1)")                    \
    for (int64_t o = 0; o < outer; o++) {                                                      \
      const T *blk = x + o * D * inner;                                                        \
      T *bv = vals + o * inner;                                                                \
      int64_t *bi = iv + o * inner;                                                            \
      for (int64_t i = 0; i < inner; i++) { bv[i] = blk[i]; bi[i] = 0; }                       \
      for (int64_t k = 1; k < D; k++) {                                                        \
        const T *row = blk + k * inner;                                                        \
        for (int64_t i = 0; i < inner; i++) {                                                  \
          T v = row[i], b = bv[i];                                                             \
          bool take = b == b && (v != v || (is_max ? v > b : v < b));                          \
          bv[i] = take ? v : b;                                                                \
          bi[i] = take ? k : bi[i];                                                            \
        }                                                                                      \
      }                                                                                        \
    }                                                                                          \
  }
MAX_COLS(float)
MAX_COLS(double)

static int max_rows(THTensor **outs, const THTensor *self, int64_t outer, int64_t D, int nd, const int64_t *sz,
                    bool is_max) {
  THTensor *vals = THTensor_new(self->dtype, nd, sz), *idx = THTensor_new(TH_Int64, nd, sz);
  if (!vals || !idx) { THTensor_free(vals); THTensor_free(idx); return -1; }
  if (self->dtype == TH_Float)
    max_rows_float((const float *)THTensor_data(self), (float *)THTensor_data(vals), (int64_t *)THTensor_data(idx),
                   outer, D, is_max);
  else
    max_rows_double((const double *)THTensor_data(self), (double *)THTensor_data(vals), (int64_t *)THTensor_data(idx),
                    outer, D, is_max);
  outs[0] = vals;
  outs[1] = idx;
  return 0;
}

int at_max_dim(THTensor **outs, const THTensor *self, int64_t dim, bool keepdim, bool is_max) {
  if (at_no_complex(self, is_max ? "max_cpu" : "min_cpu") < 0) return -1;
  int64_t d;
  if (at_wrap_dim(dim, self->ndim, &d) < 0) return -1;
  if (self->ndim && self->sizes[d] == 0) {
    THError_set(TH_ERR_INDEX, "%s(): Expected reduction dim %lld to have non-zero size.", is_max ? "max" : "min", (long long)d);
    return -1;
  }
  int nd;
  int64_t sz[TH_MAX_DIMS];
  reduced_sizes(self, d, keepdim, &nd, sz);
  if (at_off_host(self)) {
    ATIntList one = { 1, { d } };
    outs[0] = reduce_cuda(is_max ? AT_RED_MAX : AT_RED_MIN, self, &one, keepdim, self->dtype, 0, &outs[1]);
    return outs[0] ? 0 : -1;
  }
  int64_t outer, D, inner;
  around(self, d, &outer, &D, &inner);
  if ((self->dtype == TH_Float || self->dtype == TH_Double) && inner == 1 && THTensor_isContiguous(self))
    return max_rows(outs, self, outer, D, nd, sz, is_max);
  if ((self->dtype == TH_Float || self->dtype == TH_Double) && THTensor_isContiguous(self)) {
    THTensor *vals = THTensor_new(self->dtype, nd, sz), *idx = THTensor_new(TH_Int64, nd, sz);
    if (!vals || !idx) { THTensor_free(vals); THTensor_free(idx); return -1; }
    if (self->dtype == TH_Float)
      max_cols_float((const float *)THTensor_data(self), (float *)THTensor_data(vals), (int64_t *)THTensor_data(idx),
                     outer, D, inner, is_max);
    else
      max_cols_double((const double *)THTensor_data(self), (double *)THTensor_data(vals),
                      (int64_t *)THTensor_data(idx), outer, D, inner, is_max);
    outs[0] = vals;
    outs[1] = idx;
    return 0;
  }
  THTensor *w = work_copy(self);
  if (!w) return -1;
  THTensor *vals = THTensor_new(w->dtype, nd, sz), *idx = THTensor_new(TH_Int64, nd, sz);
  if (!vals || !idx) { THTensor_free(w); THTensor_free(vals); THTensor_free(idx); return -1; }
  int64_t *iv = (int64_t *)THTensor_data(idx);
  bool isint = w->dtype == TH_Int64;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      int64_t best = 0;
      double bv = getd(w, o * D * inner + i);
      for (int64_t k = 1; k < D; k++) {
        double v = getd(w, (o * D + k) * inner + i);
        if (better(v, bv, is_max)) { bv = v; best = k; }
      }
      int64_t at = o * inner + i;
      if (isint) ((int64_t *)THTensor_data(vals))[at] = ((const int64_t *)THTensor_data(w))[(o * D + best) * inner + i];
      else ((double *)THTensor_data(vals))[at] = bv;
      iv[at] = best;
    }
  THTensor_free(w);
  outs[0] = at_to_dtype(vals, self->dtype, false);
  THTensor_free(vals);
  outs[1] = idx;
  if (!outs[0]) { THTensor_free(idx); outs[1] = NULL; return -1; }
  return 0;
}

THTensor *at_max_all(const THTensor *self, bool is_max) {
  if (at_no_complex(self, is_max ? "max_all" : "min_all") < 0) return NULL;
  if (THTensor_numel(self) == 0) {
    THError_set(TH_ERR_RUNTIME, "%s(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                "reduction dim with the 'dim' argument.", is_max ? "max" : "min");
    return NULL;
  }
  ATIntList shape = { 1, { THTensor_numel(self) } };
  THTensor *flat = at_reshape(self, &shape);
  if (!flat) return NULL;
  THTensor *outs[2];
  int rc = at_max_dim(outs, flat, 0, false, is_max);
  THTensor_free(flat);
  if (rc < 0) return NULL;
  THTensor_free(outs[1]);
  return outs[0];
}

/* amax over an empty reduced dim: the error (true), else false */
static bool amax_empty(const THTensor *self, const ATIntList *dims, const ATReduce2D *r, bool is_max) {
  if (r->K != 0 || r->M == 0) return false;
  int zd = 0;
  while (zd < self->ndim - 1 && !(r->reduced[zd] && self->sizes[zd] == 0)) zd++;
  if (!dims || dims->n == 0)
    THError_set(TH_ERR_RUNTIME, "%s(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                "reduction dim with the 'dim' argument.", is_max ? "amax" : "amin");
  else
    THError_set(TH_ERR_INDEX, "%s(): Expected reduction dim %d to have non-zero size.", is_max ? "amax" : "amin", zd);
  return true;
}

/* amax/amin of float32/float64 in the dtype (no double copy): `a` stays unless `v` is strictly
 * better or NaN, so NaN sticks and the first of equal values (+-0) stays. A contiguous row of at
 * least a vector goes as torch's: lane l keeps elements l, l + W, ..., then the lanes in order,
 * then the tail elements (torch's amax of [-1, +0, .., -0 at 8] is -0). Columns (adjacent
 * outputs) run row by row over all of them, which the compiler vectorizes. */
#define AMAX_KERNEL(T, W, IT, ...)                                                                  \
  typedef T amax_v_##T __attribute__((vector_size(W * sizeof(T))));                             \
  typedef IT amax_m_##T __attribute__((vector_size(W * sizeof(T))));                            \
  typedef T amax_s_##T __attribute__((vector_size(16)));                                        \
  typedef IT amax_sm_##T __attribute__((vector_size(16)));                                       \
  /* b, or v when v is strictly better or NaN, as a lane select: a branch on random data        \
   * mispredicts half the time (4x torch on rows of 5) */                                       \
  static inline __attribute__((always_inline)) T amax_pick_##T(T b, T v, bool mx) {             \
    amax_s_##T vb = { b }, vv = { v };                                                           \
    amax_sm_##T t = (mx ? vv > vb : vv < vb) | (vv != vv);                                       \
    return ((amax_s_##T)(((amax_sm_##T)vb & ~t) | ((amax_sm_##T)vv & t)))[0];                   \
  }                                                                                              \
  /* which zero torch's row answers when its best is a zero: its 4 vector accumulators (vector j \
   * of each whole group of 4) keep the last equal lane, are merged keeping the later one, then   \
   * its lanes in order keep the first; elements after the last whole group (a row of under 4     \
   * vectors: all) go one by one, keeping the first. So the first lane holding a zero, in its     \
   * highest accumulator, the last zero there; else the first zero after the groups */           \
  static T amax_zero_##T(const T *x, int64_t K) {                                                \
    const int64_t groups = K / (4 * W);                                                          \
    for (int l = 0; l < W; l++)                                                                  \
      for (int j = 3; j >= 0; j--)                                                               \
        for (int64_t i = groups - 1; i >= 0; i--)                                                \
          if (x[(4 * i + j) * W + l] == 0) return x[(4 * i + j) * W + l];                        \
    for (int64_t k = groups * 4 * W; k < K; k++)                                                 \
      if (x[k] == 0) return x[k];                                                                \
    return 0;                                                                                    \
  }                                                                                              \
  static inline __attribute__((always_inline)) T amax_row_##T(const T *x, int64_t K, bool mx) {  \
    int64_t k = 0;                                                                               \
    T b = x[0];                                                                                  \
    if (K >= W) {                                                                                \
      amax_v_##T acc, v;                                                                         \
      memcpy(&acc, x, sizeof acc);                                                               \
      for (k = W; k + W <= K; k += W) {                                                          \
        memcpy(&v, x + k, sizeof v);                                                             \
        amax_m_##T take = (mx ? v > acc : v < acc) | (v != v);                                   \
        acc = (amax_v_##T)(((amax_m_##T)acc & ~take) | ((amax_m_##T)v & take));                 \
      }                                                                                          \
      /* a pairwise tree of the lanes (NaN kept) is exact unless the best is NaN or zero,       \
       * whose payload or sign the lanes-in-order pick decides */                               \
      amax_v_##T t = acc;                                                                        \
      static const amax_m_##T swap[] = { __VA_ARGS__ };   /* lane l <-> l ^ (W/2, W/4, .., 1) */ \
      for (unsigned s = 0; s < sizeof swap / sizeof swap[0]; s++) {                              \
        amax_v_##T u = __builtin_shuffle(t, swap[s]);                                            \
        amax_m_##T take = (mx ? u > t : u < t) | (u != u);                                       \
        t = (amax_v_##T)(((amax_m_##T)t & ~take) | ((amax_m_##T)u & take));                     \
      }                                                                                          \
      b = t[0];                                                                                  \
      if (b == 0) b = amax_zero_##T(x, K);                                                       \
      else if (b != b) {                                                                         \
        b = acc[0];                                                                              \
        for (int l = 1; l < W; l++) b = amax_pick_##T(b, acc[l], mx);                          \
      }                                                                                          \
    } else k = 1;                                                                                \
    for (; k < K; k++) b = amax_pick_##T(b, x[k], mx);                                           \
    return b;                                                                                    \
  }                                                                                              \
  static void amax_2d_##T(const T *x, T *out, int64_t M, int64_t K, int64_t sm, int64_t sk, bool mx) { \
    if (sk == 1) {                                                                               \
      _Pragma("omp parallel for if (M * K > 65536)")                                              \
      for (int64_t m = 0; m < M; m++) out[m] = mx ? amax_row_##T(x + m * sm, K, true) : amax_row_##T(x + m * sm, K, false); \
    } else if (sm == 1) {                                                                        \
      memcpy(out, x, M * sizeof(T));                                                             \
      for (int64_t k = 1; k < K; k++) {                                                          \
        const T *row = x + k * sk;                                                               \
        if (mx) for (int64_t m = 0; m < M; m++) out[m] = (row[m] > out[m] || row[m] != row[m]) ? row[m] : out[m]; \
        else for (int64_t m = 0; m < M; m++) out[m] = (row[m] < out[m] || row[m] != row[m]) ? row[m] : out[m]; \
      }                                                                                          \
      /* torch's columns in blocks of 4 vectors keep the later of equal values, the columns      \
       * after them the first (as here): a best zero there is the column's last zero */          \
      for (int64_t m = 0; m < M / (4 * W) * (4 * W); m++)                                        \
        if (out[m] == 0)                                                                         \
          for (int64_t k = K - 1; k >= 0; k--)                                                   \
            if (x[m + k * sk] == 0) { out[m] = x[m + k * sk]; break; }                           \
    } else {                                                                                     \
      for (int64_t m = 0; m < M; m++) {                                                          \
        T b = x[m * sm];                                                                         \
        for (int64_t k = 1; k < K; k++) b = amax_pick_##T(b, x[m * sm + k * sk], mx);           \
        out[m] = b;                                                                              \
      }                                                                                          \
    }                                                                                            \
  }
AMAX_KERNEL(float, 8, int32_t, { 4, 5, 6, 7, 0, 1, 2, 3 }, { 2, 3, 0, 1, 6, 7, 4, 5 }, { 1, 0, 3, 2, 5, 4, 7, 6 })
AMAX_KERNEL(double, 4, int64_t, { 2, 3, 0, 1 }, { 1, 0, 3, 2 })
#undef AMAX_KERNEL

THTensor *at_amax(const THTensor *self, const ATIntList *dims, bool keepdim, bool is_max) {
  if (at_no_complex(self, is_max ? "amax_cpu" : "amin_cpu") < 0) return NULL;
  ATReduce2D r;
  if (at_off_host(self)) {
    if (at_reduce_prepare(self, dims, keepdim, &r) < 0) return NULL;
    bool empty = amax_empty(self, dims, &r, is_max);
    at_reduce_release(&r);
    if (empty) return NULL;
    return reduce_cuda(is_max ? AT_RED_MAX : AT_RED_MIN, self, dims, keepdim, self->dtype, 0, NULL);
  }
  if (self->dtype == TH_Float || self->dtype == TH_Double) {
    if (at_reduce_prepare(self, dims, keepdim, &r) < 0) return NULL;
    THTensor *res = amax_empty(self, dims, &r, is_max) ? NULL : THTensor_new(self->dtype, r.out_ndim, r.out_sizes);
    if (res && r.M > 0) {
      if (self->dtype == TH_Float)
        amax_2d_float((const float *)r.data, (float *)THTensor_data(res), r.M, r.K, r.sm, r.sk, is_max);
      else
        amax_2d_double((const double *)r.data, (double *)THTensor_data(res), r.M, r.K, r.sm, r.sk, is_max);
    }
    at_reduce_release(&r);
    return res;
  }
  THTensor *w = work_copy(self);
  if (!w) return NULL;
  if (at_reduce_prepare(w, dims, keepdim, &r) < 0) { THTensor_free(w); return NULL; }
  if (amax_empty(self, dims, &r, is_max)) {
    at_reduce_release(&r);
    THTensor_free(w);
    return NULL;
  }
  THTensor *out = THTensor_new(w->dtype, r.out_ndim, r.out_sizes), *res = NULL;
  if (out) {
    bool isint = w->dtype == TH_Int64;
    for (int64_t m = 0; m < r.M; m++) {
      const char *base = r.data + m * r.sm * 8;
      if (isint) {
        const int64_t *p = (const int64_t *)base;
        int64_t b = p[0];
        for (int64_t k = 1; k < r.K; k++) { int64_t v = p[k * r.sk]; if (is_max ? v > b : v < b) b = v; }
        ((int64_t *)THTensor_data(out))[m] = b;
      } else {
        const double *p = (const double *)base;
        double b = p[0];
        for (int64_t k = 1; k < r.K; k++) if (better(p[k * r.sk], b, is_max)) b = p[k * r.sk];
        ((double *)THTensor_data(out))[m] = b;
      }
    }
    res = at_to_dtype(out, self->dtype, false);
  }
  THTensor_free(out);
  at_reduce_release(&r);
  THTensor_free(w);
  return res;
}

THTensor *at_argmax(const THTensor *self, ATOptInt dim, bool keepdim, bool is_max) {
  const char *name = is_max ? "argmax" : "argmin";
  if (THDtype_isComplex(self->dtype)) {
    THError_set(TH_ERR_RUNTIME, "%s(): does not support complex input", name);
    return NULL;
  }
  if (self->dtype == TH_Bool) { THError_set(TH_ERR_RUNTIME, "%s(): does not support bool input", name); return NULL; }
  if (!dim.has) {
    if (THTensor_numel(self) == 0) {
      THError_set(TH_ERR_INDEX, "%s(): Expected reduction dim to be specified for input.numel() == 0.", name);
      return NULL;
    }
    ATIntList shape = { 1, { THTensor_numel(self) } };
    THTensor *flat = at_reshape(self, &shape), *outs[2];
    if (!flat) return NULL;
    int rc = at_max_dim(outs, flat, 0, false, is_max);
    THTensor_free(flat);
    if (rc < 0) return NULL;
    THTensor_free(outs[0]);
    if (keepdim) {
      ATIntList ones = { self->ndim };
      for (int i = 0; i < self->ndim; i++) ones.v[i] = 1;
      THTensor *r = at_reshape(outs[1], &ones);
      THTensor_free(outs[1]);
      return r;
    }
    return outs[1];
  }
  int64_t d;
  if (at_wrap_dim(dim.v, self->ndim, &d) < 0) return NULL;
  if (self->ndim > 0 && self->sizes[d] == 0) {
    THError_set(TH_ERR_INDEX, "%s(): Expected reduction dim %lld to have non-zero size.", name, (long long)d);
    return NULL;
  }
  THTensor *outs[2];
  if (at_max_dim(outs, self, dim.v, keepdim, is_max) < 0) return NULL;
  THTensor_free(outs[0]);
  return outs[1];
}

THTensor *at_all_any(const THTensor *self, const ATIntList *dims, bool keepdim, bool is_all) {
  if (dims && dims->n == 0) {   /* torch: all/any over an empty dim list reduce nothing */
    THTensor *zero = at_scalar_tensor(at_scalar_int(0), TH_Int64);
    if (!zero) return NULL;
    zero->wrapped_number = true;
    THTensor *nz = at_ne(self, zero, NULL);
    THTensor_free(zero);
    if (!nz || self->dtype != TH_UInt8) return nz;
    THTensor *r = at_to_dtype(nz, TH_UInt8, false);
    THTensor_free(nz);
    return r;
  }
  if (at_off_host(self))
    return reduce_cuda(is_all ? AT_RED_ALL : AT_RED_ANY, self, dims, keepdim,
                       self->dtype == TH_UInt8 ? TH_UInt8 : TH_Bool, 0, NULL);
  THTensor *nz = at_ne(self, &(THTensor){ .storage = &(THStorage){ .device = -1, .data = &(int64_t){0} }, .dtype = TH_Int64,
                                          .wrapped_number = true }, NULL);
  if (!nz) return NULL;
  THTensor *s = at_sum(nz, dims, keepdim, TH_Int64, NULL);
  THTensor *res = NULL;
  if (s) {
    ATReduce2D r;
    if (at_reduce_prepare(self, dims, keepdim, &r) == 0) {
      int64_t K = r.K;
      at_reduce_release(&r);
      int64_t *v = (int64_t *)THTensor_data(s);
      THTensor *c = at_contiguous(s);
      if (c) {
        v = (int64_t *)THTensor_data(c);
        int64_t n = THTensor_numel(c);
        for (int64_t i = 0; i < n; i++) v[i] = is_all ? (v[i] == K) : (v[i] > 0);
        res = at_to_dtype(c, self->dtype == TH_UInt8 ? TH_UInt8 : TH_Bool, false);
        THTensor_free(c);
      }
    }
  }
  THTensor_free(nz);
  THTensor_free(s);
  return res;
}

THTensor *at_prod(const THTensor *self, const ATIntList *dims, bool keepdim, THDtype dtype) {
  if (at_no_complex(self, "prod_cpu") < 0) return NULL;
  THDtype out_dt = dtype != TH_Undefined ? dtype : (THDtype_isFloating(self->dtype) ? self->dtype : TH_Int64);
  if (at_off_host(self)) {
    /* a floating dtype= computes in it; integers multiply in int64 */
    THTensor *src = THDtype_isFloating(out_dt) ? at_to_dtype(self, out_dt, false) : THTensor_retain((THTensor *)self);
    THTensor *res = src ? reduce_cuda(AT_RED_PROD, src, dims, keepdim, out_dt, 0, NULL) : NULL;
    THTensor_free(src);
    return res;
  }
  THTensor *w = work_copy(self);
  if (!w) return NULL;
  ATReduce2D r;
  if (at_reduce_prepare(w, dims, keepdim, &r) < 0) { THTensor_free(w); return NULL; }
  THTensor *out = THTensor_new(w->dtype, r.out_ndim, r.out_sizes), *res = NULL;
  if (out) {
    for (int64_t m = 0; m < r.M; m++) {
      if (w->dtype == TH_Int64) {
        const int64_t *p = (const int64_t *)(r.data + m * r.sm * 8);
        int64_t acc = 1;
        for (int64_t k = 0; k < r.K; k++) acc *= p[k * r.sk];
        ((int64_t *)THTensor_data(out))[m] = acc;
      } else {
        const double *p = (const double *)(r.data + m * r.sm * 8);
        double acc = 1;
        for (int64_t k = 0; k < r.K; k++) acc *= p[k * r.sk];
        ((double *)THTensor_data(out))[m] = acc;
      }
    }
    res = at_to_dtype(out, out_dt, false);
  }
  THTensor_free(out);
  at_reduce_release(&r);
  THTensor_free(w);
  return res;
}

/* a complex tensor's variance is the mean |x - mean|^2: its real and imaginary parts' variances added, taken
 * over the same dims of view_as_real's pairs (a real result, as torch's) */
static THTensor *var_of(const THTensor *self, const ATIntList *dims, double correction, bool keepdim,
                         bool take_sqrt, const char *name);

static THTensor *complex_var(const THTensor *self, const ATIntList *dims, double correction, bool keepdim,
                             bool take_sqrt) {
  ATIntList d = { 0 };
  if (!dims || dims->n == 0) {   /* all of self's dims, not the pairs' */
    for (int i = 0; i < self->ndim; i++) d.v[d.n++] = i;
  } else {
    for (int i = 0; i < dims->n; i++) {
      int64_t w;
      if (at_wrap_dim(dims->v[i], self->ndim, &w) < 0) return NULL;
      d.v[d.n++] = w;
    }
  }
  ATIntList last = { 1, { -1 } };
  THTensor *pairs = at_view_as_real(self);
  THTensor *parts = pairs ? var_of(pairs, &d, correction, keepdim, false, take_sqrt ? "std" : "var") : NULL;
  THTensor *v = parts ? at_sum(parts, &last, false, TH_Undefined, NULL) : NULL;
  THTensor *res = v && take_sqrt ? at_sqrt(v, NULL) : (v ? THTensor_retain(v) : NULL);
  THTensor_free(pairs);
  THTensor_free(parts);
  THTensor_free(v);
  return res;
}

THTensor *at_var(const THTensor *self, const ATIntList *dims, double correction, bool keepdim, bool take_sqrt) {
  if (THDtype_isComplex(self->dtype) && self->ndim == 0) {
    /* its one element, as a 1-element vector reduced whole (dims 0 and -1 name that one dim) */
    for (int i = 0; dims && i < dims->n; i++) {
      int64_t w;
      if (at_wrap_dim(dims->v[i], 0, &w) < 0) return NULL;
    }
    THTensor *v = at_reshape(self, &(ATIntList){ 1, { 1 } });
    THTensor *r = v ? complex_var(v, NULL, correction, false, take_sqrt) : NULL;
    THTensor_free(v);
    return r;
  }
  if (THDtype_isComplex(self->dtype)) return complex_var(self, dims, correction, keepdim, take_sqrt);
  return var_of(self, dims, correction, keepdim, take_sqrt, take_sqrt ? "std" : "var");
}

/* a real tensor's var (or std); name: the op torch's degrees-of-freedom warning names */
static THTensor *var_of(const THTensor *self, const ATIntList *dims, double correction, bool keepdim,
                        bool take_sqrt, const char *name) {
  if (at_no_complex(self, "var_cpu") < 0) return NULL;
  if (!THDtype_isFloating(self->dtype)) {
    THError_set(TH_ERR_RUNTIME, "std and var only support floating point and complex dtypes");
    return NULL;
  }
  if (at_off_host(self))
    return reduce_cuda(take_sqrt ? AT_RED_STD : AT_RED_VAR, self, dims, keepdim, self->dtype, correction, NULL);
  THTensor *w = work_copy(self);
  if (!w) return NULL;
  ATReduce2D r;
  if (at_reduce_prepare(w, dims, keepdim, &r) < 0) { THTensor_free(w); return NULL; }
  /* torch divides by max(0, K - correction): 0/0 is nan, a spread over no degrees of freedom inf */
  const double dof = (double)r.K - correction > 0 ? (double)r.K - correction : 0;
  if (dof <= 0)
    THWarn("%s(): degrees of freedom is <= 0. Correction should be strictly less than the reduction factor (input "
           "numel divided by output numel).", name);
  THTensor *out = THTensor_new(TH_Double, r.out_ndim, r.out_sizes), *res = NULL;
  if (out) {
#pragma omp parallel for if (r.M > 1 && r.M * r.K > 65536)
    for (int64_t m = 0; m < r.M; m++) {
      const double *p = (const double *)(r.data + m * r.sm * 8);
      const int64_t sk = r.sk, K = r.K;
      /* corrected two-pass in double, both passes vectorizable (Welford
       * divided per element, a serial ~5 ns each): sum of squared
       * deviations minus (sum of deviations)^2 / K, which cancels the
       * rounding of the mean */
      double sum = 0, m2 = 0, dsum = 0;
#pragma omp simd reduction(+:sum)
      for (int64_t k = 0; k < K; k++) sum += p[k * sk];
      double mean = K ? sum / (double)K : 0;
#pragma omp simd reduction(+:m2, dsum)
      for (int64_t k = 0; k < K; k++) { double d = p[k * sk] - mean; m2 += d * d; dsum += d; }
      if (K) m2 -= dsum * dsum / (double)K;
      if (m2 < 0) m2 = 0;
      double v = m2 / dof;
      ((double *)THTensor_data(out))[m] = take_sqrt ? sqrt(v) : v;
    }
    res = at_to_dtype(out, self->dtype, false);
  }
  THTensor_free(out);
  at_reduce_release(&r);
  THTensor_free(w);
  return res;
}

/* logsumexp where the outputs are adjacent and each one's elements lie a row apart (over dim 0 of a
 * matrix): rows are walked in order, LSE_COLS outputs at a time, each pass a unit-stride simd loop across
 * them. One output at a time read every element a row apart and could not vectorize exp: 3.5x torch's time
 * at 256 x 512. The same two passes per output as below, so the same values. */
#define LSE_COLS 256
static void logsumexp_columns(const ATReduce2D *r, double *out) {
  double mx[LSE_COLS], s[LSE_COLS];
  unsigned char bad[LSE_COLS];
  for (int64_t m0 = 0; m0 < r->M; m0 += LSE_COLS) {
    const int64_t n = r->M - m0 < LSE_COLS ? r->M - m0 : LSE_COLS;
    const double *p = (const double *)r->data + m0;
    for (int64_t j = 0; j < n; j++) { mx[j] = -INFINITY; s[j] = 0; bad[j] = 0; }
    for (int64_t k = 0; k < r->K; k++) {
      const double *q = p + k * r->sk;
#pragma omp simd
      for (int64_t j = 0; j < n; j++) { double v = q[j]; mx[j] = v > mx[j] ? v : mx[j]; bad[j] |= v != v; }
    }
    for (int64_t k = 0; k < r->K; k++) {
      const double *q = p + k * r->sk;
#pragma omp simd
      for (int64_t j = 0; j < n; j++) s[j] += exp(q[j] - mx[j]);
    }
    /* a NaN anywhere wins, even beside an inf (PyTorch's max propagates it) */
    for (int64_t j = 0; j < n; j++) out[m0 + j] = bad[j] ? NAN : isinf(mx[j]) ? mx[j] : mx[j] + log(s[j]);
  }
}

THTensor *at_logsumexp(const THTensor *self, const ATIntList *dims, bool keepdim) {
  if (at_no_complex(self, "logsumexp_cpu") < 0) return NULL;
  if (at_off_host(self)) {
    THTensor *src = at_to_dtype(self, THDtype_isFloating(self->dtype) ? self->dtype : at_default_dtype(), false);
    THTensor *res = src ? reduce_cuda(AT_RED_LOGSUMEXP, src, dims, keepdim, src->dtype, 0, NULL) : NULL;
    THTensor_free(src);
    return res;
  }
  THTensor *w = work_copy(self);
  if (!w) return NULL;
  THTensor *wd = w->dtype == TH_Double ? THTensor_retain(w) : at_to_dtype(w, TH_Double, false);
  THTensor_free(w);
  if (!wd) return NULL;
  ATReduce2D r;
  if (at_reduce_prepare(wd, dims, keepdim, &r) < 0) { THTensor_free(wd); return NULL; }
  THTensor *out = THTensor_new(TH_Double, r.out_ndim, r.out_sizes), *res = NULL;
  if (out) {
    /* both passes are simd loops (exp through the vector math library). Serial, as before: with
     * rows split over two threads it ran 1.35x slower than one thread at load 9 on 2 cores */
    if (r.sm == 1 && r.sk != 1 && r.M > 1) logsumexp_columns(&r, (double *)THTensor_data(out));
    else
    for (int64_t m = 0; m < r.M; m++) {
      const double *p = (const double *)(r.data + m * r.sm * 8);
      const int64_t sk = r.sk, K = r.K;
      double mx = -INFINITY;
      int nan = 0;
#pragma omp simd reduction(max:mx) reduction(|:nan)
      for (int64_t k = 0; k < K; k++) { double v = p[sk == 1 ? k : k * sk]; mx = v > mx ? v : mx; nan |= v != v; }
      /* a NaN anywhere wins, even beside an inf (PyTorch's max propagates it) */
      if (nan || isinf(mx)) { ((double *)THTensor_data(out))[m] = nan ? NAN : mx; continue; }
      double s = 0;
      if (sk == 1) {   /* unit stride spelled out: a runtime stride keeps gcc from vectorizing exp */
#pragma omp simd reduction(+:s)
        for (int64_t k = 0; k < K; k++) s += exp(p[k] - mx);
      } else {
#pragma omp simd reduction(+:s)
        for (int64_t k = 0; k < K; k++) s += exp(p[k * sk] - mx);
      }
      ((double *)THTensor_data(out))[m] = mx + log(s);
    }
    res = at_to_dtype(out, THDtype_isFloating(self->dtype) ? self->dtype : at_default_dtype(), false);
  }
  THTensor_free(out);
  at_reduce_release(&r);
  THTensor_free(wd);
  return res;
}

/* scatter_grad and gather_grad walk a (outer, D, inner) layout of one tensor
 * along dim and the (outer, Dg, inner) layout of the other: both must agree
 * on every dim but dim (the indices, read as int64, pass at_check_integral). */
static int along_dim_check(const THTensor *a, const THTensor *b, int64_t d, const char *op, const char *an,
                           const char *bn) {
  bool ok = a->ndim == b->ndim;
  for (int i = 0; ok && i < a->ndim; i++) ok = i == d || a->sizes[i] == b->sizes[i];
  if (ok) return 0;
  char b1[256], b2[256];
  THError_set(TH_ERR_RUNTIME, "%s: expected %s and %s to have the same size apart from dimension %lld, but got %s and %s",
              op, an, bn, (long long)d, THTensor_sizeStr(a->ndim, a->sizes, b1, 256),
              THTensor_sizeStr(b->ndim, b->sizes, b2, 256));
  return -1;
}

THTensor *at_scatter_grad(const THTensor *grad, int64_t dim, const THTensor *indices, const ATIntList *sizes,
                          bool keepdim) {
  int64_t d;
  if (at_wrap_dim(dim, sizes->n, &d) < 0) return NULL;
  if (at_check_integral(indices, "scatter_grad", "indices") < 0 ||
      at_check_same_shape(grad, indices, "scatter_grad", "grad_output", "indices") < 0)
    return NULL;
  if (sizes->n > 0 && grad->ndim != sizes->n - (keepdim ? 0 : 1)) {
    THError_set(TH_ERR_RUNTIME, "scatter_grad: grad_output has %d dimensions, sizes %d (keepdim=%d)", grad->ndim,
                sizes->n, (int)keepdim);
    return NULL;
  }
  const THTensor *g = grad, *ix = indices;
  THTensor *gu = NULL, *iu = NULL;
  if (!keepdim && sizes->n > 0) {
    gu = at_unsqueeze(grad, d);
    iu = gu ? at_unsqueeze(indices, d) : NULL;
    if (!iu) { THTensor_free(gu); return NULL; }
    g = gu; ix = iu;
  }
  if (THTensor_device(grad) >= 0) {   /* zeros, then a scatter-add on the GPU (atomic adds) */
    THTensor *z = at_new_on(THTensor_device(grad), grad->dtype, sizes->n, sizes->v, NULL), *r = NULL;
    if (z && at_fill_(z, at_scalar_int(0)) == 0 &&
        (sizes->n == 0 || along_dim_check(z, g, d, "scatter_grad", "sizes", "grad_output") == 0))
      r = at_scatter_c(z, d, ix, g, at_scalar_int(0), "sum", NULL);
    THTensor_free(z); THTensor_free(gu); THTensor_free(iu);
    return r;
  }
  THTensor *gd = work_copy(g), *ic = gd ? work_copy(ix) : NULL, *out = NULL;
  THTensor *acc = ic ? THTensor_new(TH_Double, sizes->n, sizes->v) : NULL;
  if (acc && sizes->n > 0 && along_dim_check(acc, g, d, "scatter_grad", "sizes", "grad_output") < 0) {
    THTensor_free(acc);
    acc = NULL;
  }
  if (acc) {
    memset(THTensor_data(acc), 0, THTensor_numel(acc) * sizeof(double));
    THTensor *tmpl = acc;
    int64_t outer, D, inner, Dg;
    around(tmpl, d, &outer, &D, &inner);
    Dg = g->ndim ? g->sizes[d] : 1;
    const int64_t *iv = (const int64_t *)THTensor_data(ic);
    double *av = (double *)THTensor_data(acc);
    for (int64_t o = 0; o < outer; o++)
      for (int64_t j = 0; j < Dg; j++)
        for (int64_t i = 0; i < inner; i++) {
          int64_t src = (o * Dg + j) * inner + i, t = iv[src];
          if (t >= 0 && t < D) av[(o * D + t) * inner + i] += getd(gd, src);
        }
    out = at_to_dtype(acc, grad->dtype, false);
  }
  THTensor_free(acc); THTensor_free(gd); THTensor_free(ic); THTensor_free(gu); THTensor_free(iu);
  return out;
}

/* prod's backward and its two derivatives, per reduced line x[0..K) with
 * pre[k] = x[0]..x[k-1] and suf[k] = x[k]..x[K-1] (so zeros are exact):
 *   PROD_BWD:    out[k] = g * pre[k] * suf[k+1]                (d prod / d x_k)
 *   PROD_GGRAD:  out    = sum_k a[k] * pre[k] * suf[k+1]       (d <a, bwd> / d g)
 *   PROD_GSELF:  out[k] = g * d/dx_k sum_i a[i] pre[i] suf[i+1], by reverse
 *                mode through the two running products, O(K) per line. */
typedef enum { PROD_BWD, PROD_GGRAD, PROD_GSELF } ProdGradMode;

static void prod_line(ProdGradMode mode, const double *x, int64_t sx, const double *a, int64_t sa, double g, int64_t K,
                      double *pre, double *suf, double *bp, double *out) {
  pre[0] = 1;
  for (int64_t k = 0; k < K; k++) pre[k + 1] = pre[k] * x[k * sx];
  suf[K] = 1;
  for (int64_t k = K - 1; k >= 0; k--) suf[k] = suf[k + 1] * x[k * sx];
  if (mode == PROD_BWD) { for (int64_t k = 0; k < K; k++) out[k] = g * pre[k] * suf[k + 1]; return; }
  if (mode == PROD_GGRAD) {
    double q = 0;
    for (int64_t k = 0; k < K; k++) q += a[k * sa] * pre[k] * suf[k + 1];
    *out = q;
    return;
  }
  bp[K] = 0;   /* adjoint of pre[k] */
  for (int64_t k = K - 1; k >= 0; k--) bp[k] = a[k * sa] * suf[k + 1] + bp[k + 1] * x[k * sx];
  double bs = 0;   /* adjoint of suf[k], carried forward */
  for (int64_t k = 0; k < K; k++) {
    out[k] = g * (bp[k + 1] * pre[k] + bs * suf[k + 1]);
    bs = a[k * sa] * pre[k] + bs * x[k * sx];
  }
}

/* The elements come in (kept dims, reduced dims) order: permute back to self's layout. */
static THTensor *unflatten_reduced(THTensor *flat, const THTensor *self, const ATReduce2D *r) {
  ATIntList perm = { 0 }, shape = { 0 };
  for (int i = 0; i < self->ndim; i++) if (!r->reduced[i]) { perm.v[perm.n++] = i; shape.v[shape.n++] = self->sizes[i]; }
  for (int i = 0; i < self->ndim; i++) if (r->reduced[i]) { perm.v[perm.n++] = i; shape.v[shape.n++] = self->sizes[i]; }
  THTensor *shaped = at_reshape(flat, &shape), *res = NULL;
  if (!shaped) return NULL;
  ATIntList inv = { perm.n };
  for (int i = 0; i < perm.n; i++) inv.v[perm.v[i]] = i;
  THTensor *back = at_permute(shaped, &inv);
  if (back) { res = at_to_dtype(back, self->dtype, true); THTensor_free(back); }
  THTensor_free(shaped);
  return res;
}

static THTensor *prod_kernel(ProdGradMode mode, const THTensor *a, const THTensor *grad, const THTensor *self,
                             const ATIntList *dims, bool keepdim) {
  ATReduce2D rx, ra;
  THTensor *xd = work_copy(self), *ad = (xd && a) ? work_copy(a) : NULL, *gc = NULL, *flat = NULL, *res = NULL;
  double *buf = NULL;
  if (!xd || (a && !ad)) goto done;
  if (at_reduce_prepare(xd, dims, keepdim, &rx) < 0) goto done;
  if (ad && at_reduce_prepare(ad, dims, keepdim, &ra) < 0) { at_reduce_release(&rx); goto done; }
  int64_t M = rx.M, K = rx.K;
  /* the lines read grad once per reduced line and a like self */
  bool bad_grad = grad && THTensor_numel(grad) != M;
  if (bad_grad)
    THError_set(TH_ERR_RUNTIME, "prod_backward: grad_output has %lld elements, the reduction %lld",
                (long long)THTensor_numel(grad), (long long)M);
  if (bad_grad || (a && at_check_same_shape(a, self, "prod_backward", "ggI", "self") < 0)) {
    if (ad) at_reduce_release(&ra);
    at_reduce_release(&rx);
    goto done;
  }
  gc = grad ? work_copy(grad) : NULL;
  flat = (grad && !gc) ? NULL : THTensor_new(TH_Double, 1, &(int64_t){ mode == PROD_GGRAD ? M : M * K });
  buf = flat ? malloc((size_t)(3 * (K + 1)) * sizeof(double)) : NULL;
  if (flat && !buf) THError_set(TH_ERR_MEMORY, "prod backward: out of memory");
  if (buf) {
    double *ov = (double *)THTensor_data(flat);
    for (int64_t m = 0; m < M; m++)
      prod_line(mode, (const double *)(rx.data + m * rx.sm * 8), rx.sk,
                ad ? (const double *)(ra.data + m * ra.sm * 8) : NULL, ad ? ra.sk : 0, gc ? getd(gc, m) : 1, K,
                buf, buf + K + 1, buf + 2 * (K + 1), mode == PROD_GGRAD ? ov + m : ov + m * K);
    if (mode != PROD_GGRAD) res = unflatten_reduced(flat, self, &rx);
    else {
      ATIntList osz = { rx.out_ndim };
      memcpy(osz.v, rx.out_sizes, sizeof(int64_t) * rx.out_ndim);
      THTensor *shaped = at_reshape(flat, &osz);
      if (shaped) { res = at_to_dtype(shaped, grad ? grad->dtype : self->dtype, true); THTensor_free(shaped); }
    }
  }
  if (ad) at_reduce_release(&ra);
  at_reduce_release(&rx);
done:
  free(buf);
  THTensor_free(flat); THTensor_free(gc); THTensor_free(ad); THTensor_free(xd);
  return res;
}

THTensor *at_prod_backward(const THTensor *grad, const THTensor *self, const ATIntList *dims, bool keepdim) {
  return prod_kernel(PROD_BWD, NULL, grad, self, dims, keepdim);
}
THTensor *at_prod_backward_ggrad(const THTensor *ggI, const THTensor *grad, const THTensor *self,
                                 const ATIntList *dims, bool keepdim) {
  return prod_kernel(PROD_GGRAD, ggI, grad, self, dims, keepdim);
}
THTensor *at_prod_backward_gself(const THTensor *ggI, const THTensor *grad, const THTensor *self,
                                 const ATIntList *dims, bool keepdim) {
  return prod_kernel(PROD_GSELF, ggI, grad, self, dims, keepdim);
}

/* The adjoint of scatter_grad (double backward through max/min/sort/topk...):
 * out[.., j, ..] = self[.., indices[.., j, ..], ..] along dim; with keepdim
 * false the indices lack dim and so does the result. */
THTensor *at_gather_grad(const THTensor *self, int64_t dim, const THTensor *indices, bool keepdim) {
  int64_t d;
  if (at_check_integral(indices, "gather_grad", "indices") < 0) return NULL;
  if (self->ndim == 0) return at_to_dtype(self, self->dtype, true);
  if (at_wrap_dim(dim, self->ndim, &d) < 0) return NULL;
  if (indices->ndim != self->ndim - (keepdim ? 0 : 1)) {
    THError_set(TH_ERR_RUNTIME, "gather_grad: indices has %d dimensions, self %d (keepdim=%d)", indices->ndim,
                self->ndim, (int)keepdim);
    return NULL;
  }
  THTensor *iu = (!keepdim) ? at_unsqueeze(indices, d) : THTensor_retain((THTensor *)indices);
  if (iu && along_dim_check(self, iu, d, "gather_grad", "self", "indices") < 0) { THTensor_free(iu); return NULL; }
  if (iu && at_off_host(self)) {   /* a gather on the GPU */
    THTensor *gth = at_gather_c(self, d, iu), *r = NULL;
    THTensor_free(iu);
    if (!gth || keepdim) return gth;
    r = at_squeeze_dims(gth, &(ATIntList){ 1, { d } });
    THTensor_free(gth);
    return r;
  }
  THTensor *x = iu ? work_copy(self) : NULL, *ic = x ? work_copy(iu) : NULL, *acc = NULL, *out = NULL;
  if (ic && (acc = THTensor_new(TH_Double, iu->ndim, iu->sizes))) {
    int64_t outer, D, inner, Dg = iu->sizes[d];
    around(x, d, &outer, &D, &inner);
    const int64_t *iv = (const int64_t *)THTensor_data(ic);
    double *av = (double *)THTensor_data(acc);
    for (int64_t o = 0; o < outer; o++)
      for (int64_t j = 0; j < Dg; j++)
        for (int64_t i = 0; i < inner; i++) {
          int64_t dst = (o * Dg + j) * inner + i, t = iv[dst];
          av[dst] = (t >= 0 && t < D) ? getd(x, (o * D + t) * inner + i) : 0;
        }
    THTensor *shaped = keepdim ? THTensor_retain(acc) : at_squeeze_dims(acc, &(ATIntList){ 1, { d } });
    if (shaped) { out = at_to_dtype(shaped, self->dtype, false); THTensor_free(shaped); }
  }
  THTensor_free(acc); THTensor_free(x); THTensor_free(ic); THTensor_free(iu);
  return out;
}
