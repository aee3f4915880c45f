/* Reductions: sum and mean here; the driver (ATReduce.h) serves the rest. */
#include "ATReduce.h"
#include "../TH/THKernels.h"

#include <omp.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

int at_reduce_prepare(const THTensor *self, const ATIntList *dims, bool keepdim, ATReduce2D *r) {
  int nd = self->ndim;
  memset(r, 0, sizeof *r);
  r->dtype = self->dtype;
  bool all = !dims || dims->n == 0;
  for (int i = 0; i < nd; i++) r->reduced[i] = all;
  if (!all)
    for (int i = 0; i < dims->n; i++) {
      int64_t d;
      if (at_wrap_dim(dims->v[i], nd, &d) < 0) return -1;
      if (nd == 0) continue;
      if (r->reduced[d]) {
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
    return 0;
  }
  /* copy into kept-then-reduced order, contiguous */
  ATIntList perm = { 0 };
  for (int i = 0; i < nd; i++) if (!r->reduced[i]) perm.v[perm.n++] = i;
  for (int i = 0; i < nd; i++) if (r->reduced[i]) perm.v[perm.n++] = i;
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

typedef void (*Sum2d)(double *, int64_t *, const void *, int64_t, int64_t, int64_t, int64_t);
static const Sum2d sum2d[TH_NDTYPES] = {
  [TH_Bool] = (Sum2d)THBoolTensor_sum_2d, [TH_UInt8] = (Sum2d)THByteTensor_sum_2d,
  [TH_Int8] = (Sum2d)THCharTensor_sum_2d, [TH_Int16] = (Sum2d)THShortTensor_sum_2d,
  [TH_Int32] = (Sum2d)THIntTensor_sum_2d, [TH_Int64] = (Sum2d)THLongTensor_sum_2d,
  [TH_Half] = (Sum2d)THHalfTensor_sum_2d, [TH_BFloat16] = (Sum2d)THBFloat16Tensor_sum_2d,
  [TH_Float] = (Sum2d)THFloatTensor_sum_2d, [TH_Double] = (Sum2d)THDoubleTensor_sum_2d,
};

/* sums into a double or int64 buffer of M values, threads over m or k */
static int sum_into(const ATReduce2D *r, double *od, int64_t *oi) {
  Sum2d fn = sum2d[r->dtype];
  int es = THDtype_size(r->dtype);
  int nt = at_get_num_threads();
  int64_t work = r->M * r->K;
  if (nt <= 1 || work < 65536) { fn(od, oi, r->data, r->M, r->K, r->sm, r->sk); return 0; }
  if (r->M >= nt && r->M >= 16) {
#pragma omp parallel num_threads(nt)
    {
      int t = omp_get_thread_num(), n = omp_get_num_threads();
      int64_t chunk = (r->M + n - 1) / n, b = t * chunk, e = b + chunk < r->M ? b + chunk : r->M;
      if (b < e) fn(od ? od + b : NULL, oi ? oi + b : NULL, r->data + b * r->sm * es, e - b, r->K, r->sm, r->sk);
    }
    return 0;
  }
  /* few outputs, long rows: split k and add the partial sums */
  for (int64_t m = 0; m < r->M; m++) {
    double pd[64] = {0};
    int64_t pi[64] = {0};
    int used = nt < 64 ? nt : 64;
#pragma omp parallel num_threads(used)
    {
      int t = omp_get_thread_num(), n = omp_get_num_threads();
      int64_t chunk = (r->K + n - 1) / n, b = t * chunk, e = b + chunk < r->K ? b + chunk : r->K;
      const char *base = r->data + (m * r->sm + b * r->sk) * es;
      /* contiguous float/double rows take the vectorized full-sum loop inside sum_2d */
      if (b < e) fn(od ? &pd[t] : NULL, oi ? &pi[t] : NULL, base, 1, e - b, 0, r->sk);
    }
    double sd = 0;
    int64_t si = 0;
    for (int t = 0; t < used; t++) { sd += pd[t]; si += pi[t]; }
    if (od) od[m] = sd; else oi[m] = si;
  }
  return 0;
}

/* Runs a sum into a fresh result of `dtype`. */
static THTensor *sum_impl(const THTensor *self, const ATIntList *dims, bool keepdim, THDtype dtype,
                          THTensor *out, double scale) {
  THTensor *src = NULL;
  if (dtype != self->dtype && THDtype_isFloating(dtype)) {
    if (!(src = at_to_dtype(self, dtype, false))) return NULL;
    self = src;
  }
  ATReduce2D r;
  if (at_reduce_prepare(self, dims, keepdim, &r) < 0) { THTensor_free(src); return NULL; }
  bool fl = THDtype_isFloating(self->dtype);
  THTensor *acc = THTensor_new(fl ? TH_Double : TH_Int64, r.out_ndim, r.out_sizes);
  THTensor *res = NULL;
  if (!acc) goto done;
  if (r.M > 0) {
    if (r.K == 0) memset(THTensor_data(acc), 0, r.M * 8);
    else sum_into(&r, fl ? (double *)THTensor_data(acc) : NULL, fl ? NULL : (int64_t *)THTensor_data(acc));
  }
  if (scale != 1.0) {
    double *v = (double *)THTensor_data(acc);
    for (int64_t m = 0; m < r.M; m++) v[m] *= scale;
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
  if (dtype == TH_Undefined) dtype = THDtype_isFloating(self->dtype) ? self->dtype : TH_Int64;
  return sum_impl(self, dims, keepdim, dtype, out, 1.0);
}

THTensor *at_mean(const THTensor *self, const ATIntList *dims, bool keepdim, THDtype dtype, THTensor *out) {
  THDtype dt = dtype == TH_Undefined ? self->dtype : dtype;
  if (!THDtype_isFloating(dt)) {
    THError_set(TH_ERR_RUNTIME, "mean(): could not infer output dtype. %s dtype must be either a floating point or "
                "complex dtype. Got: %s", dtype == TH_Undefined ? "Input" : "Optional", THDtype_info[dt].legacy);
    return NULL;
  }
  ATReduce2D r;
  if (at_reduce_prepare(self, dims, keepdim, &r) < 0) return NULL;
  int64_t K = r.K;
  at_reduce_release(&r);
  return sum_impl(self, dims, keepdim, dt, out, K ? 1.0 / (double)K : NAN);
}
