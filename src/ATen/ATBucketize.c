/* The bucketize family (see ATBucketize.h): checks, promotion and output
 * allocation here, the per-element work in TH kernels, split between
 * threads for large inputs (counting ops sum per-thread histograms). */
#include "ATBucketize.h"
#include "ATReduce.h"
#include "../TH/THKernelsBucketize.h"

#include "ATConv.h"   /* at_contiguous_as */

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

static const THSearchFn search_fns[TH_NDTYPES] = TH_NUMERIC_TABLE(searchsorted);
static const THSearchOrderedFn ordered_fns[TH_NDTYPES] = TH_NUMERIC_TABLE(search_ordered);
static const THMinMaxFn minmax_fns[TH_NDTYPES] = { TH_INTEGRAL_ENTRIES(minmax_int) };
static const THBincountFn bincount_fns[TH_NDTYPES] = { TH_INTEGRAL_ENTRIES(bincount) };
static const THHistFn hist_fns[TH_NDTYPES] = TH_FLOATING_TABLE(histogram);

#define PAR_MIN 32768   /* elements below which the work stays on one thread */

static const char *legacy(THDtype t) { return THDtype_info[t].legacy; }

/* ---------------------------------------------------------------- searchsorted */

static int search_checks(const THTensor *bd, const THTensor *self, bool out_int32, bool right, const char *side,
                         const THTensor *sorter, const THTensor *out) {
  char b1[256], b2[256];
  if (side) {
    if (strcmp(side, "left") && strcmp(side, "right")) {
      THError_set(TH_ERR_RUNTIME, "torch.searchsorted(): side can only be 'left' or 'right' but got %s", side);
      return -1;
    }
    if (right && strcmp(side, "right")) {
      THError_set(TH_ERR_RUNTIME, "torch.searchsorted(): side and right can't be set to opposites, got side of %s "
                  "while right was True", side);
      return -1;
    }
  }
  if (sorter) {
    if (sorter->ndim != bd->ndim || memcmp(sorter->sizes, bd->sizes, sizeof(int64_t) * bd->ndim)) {
      THError_set(TH_ERR_RUNTIME, "torch.searchsorted(): boundary and sorter must have the same size, but got "
                  "boundary tensor %sand got sorter tensor %s", THTensor_sizeStr(bd->ndim, bd->sizes, b1, sizeof b1),
                  THTensor_sizeStr(sorter->ndim, sorter->sizes, b2, sizeof b2));
      return -1;
    }
    if (sorter->dtype != TH_Int64) {
      THError_set(TH_ERR_RUNTIME, "torch.searchsorted(): sorter must be a tensor of long dtype but got dtype %s",
                  legacy(sorter->dtype));
      return -1;
    }
  }
  if (self->ndim == 0 && bd->ndim > 1) {
    THError_set(TH_ERR_RUNTIME, "torch.searchsorted(): input value can be a scalar only when boundaries tensor "
                "dimension is 1, but we got boundaries tensor dim(%d) and input value's dim(%d) numel(%lld)",
                bd->ndim, self->ndim, (long long)THTensor_numel(self));
    return -1;
  }
  if (bd->ndim == 0) {
    THError_set(TH_ERR_RUNTIME, "torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 "
                "dimension");
    return -1;
  }
  if (bd->ndim > 1 && (bd->ndim != self->ndim || memcmp(bd->sizes, self->sizes, sizeof(int64_t) * (bd->ndim - 1)))) {
    THError_set(TH_ERR_RUNTIME, "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                "dimensions of boundaries tensor and input value tensor must match, but we got boundaries tensor %s "
                "and input value tensor %s", THTensor_sizeStr(bd->ndim, bd->sizes, b1, sizeof b1),
                THTensor_sizeStr(self->ndim, self->sizes, b2, sizeof b2));
    return -1;
  }
  if (out && out->dtype != (out_int32 ? TH_Int32 : TH_Int64)) {
    THError_set(TH_ERR_RUNTIME, "torch.searchsorted(): output tensor's dtype is wrong, it can only be Int(int32) or "
                "Long(int64) depending on whether out_int32 flag is True, but we got output tensor's dtype %s and "
                "out_int32 flag is %s", legacy(out->dtype), out_int32 ? "True" : "False");
    return -1;
  }
  return 0;
}

THTensor *at_searchsorted(const THTensor *bd, const THTensor *self, bool out_int32, bool right, const char *side,
                          const THTensor *sorter, THTensor *out) {
  if (search_checks(bd, self, out_int32, right, side, sorter, out) < 0) return NULL;
  bool is_right = side ? !strcmp(side, "right") : right;
  THDtype dt = bd->dtype == self->dtype ? bd->dtype : at_result_type(2, (const THTensor *const[]){ bd, self });
  if (!search_fns[dt]) {
    THError_set(TH_ERR_NOTIMPL, "\"searchsorted_out_cpu\" not implemented for '%s'", legacy(dt));
    return NULL;
  }
  int64_t n_bd = bd->sizes[bd->ndim - 1];
  if (sorter && THTensor_numel(sorter) > 0) {   /* every index within a row */
    THTensor *sc = at_contiguous(sorter);
    if (!sc) return NULL;
    const int64_t *s = (const int64_t *)THTensor_data(sc);
    int64_t n = THTensor_numel(sc), bad = 0;
    for (int64_t i = 0; i < n; i++) bad |= (uint64_t)s[i] >= (uint64_t)n_bd;
    THTensor_free(sc);
    if (bad) { THError_set(TH_ERR_RUNTIME, "torch.searchsorted(): sorter index out of range"); return NULL; }
  }
  THDtype odt = out_int32 ? TH_Int32 : TH_Int64;
  THTensor *res = THTensor_new(odt, self->ndim, self->sizes);
  THTensor *b = res ? at_contiguous_as(bd, dt) : NULL, *v = b ? at_contiguous_as(self, dt) : NULL;
  THTensor *st = (v && sorter) ? at_contiguous(sorter) : NULL;
  if (!v || (sorter && !st)) goto fail;
  int64_t n = THTensor_numel(v);
  THSearchArgs a = { THTensor_data(b), THTensor_data(v), st ? (const int64_t *)THTensor_data(st) : NULL,
                     THTensor_data(res), out_int32, is_right, bd->ndim == 1, n_bd,
                     self->ndim ? self->sizes[self->ndim - 1] : 1, false };
  /* the lockstep search pays off once the values outnumber the boundaries */
  if (!st && n >= THTensor_numel(b)) a.ordered = ordered_fns[dt](THTensor_data(b), THTensor_numel(b) / (n_bd ? n_bd : 1), n_bd);
  THSearchFn fn = search_fns[dt];
  int64_t chunk = 4096, tasks = (n + chunk - 1) / chunk;
#pragma omp parallel for schedule(static) if (n > PAR_MIN)
  for (int64_t t = 0; t < tasks; t++) fn(&a, t * chunk, (t + 1) * chunk < n ? (t + 1) * chunk : n);
  THTensor_free(b); THTensor_free(v); THTensor_free(st);
  return at_into_out(res, out);
fail:
  THTensor_free(res); THTensor_free(b); THTensor_free(v); THTensor_free(st);
  return NULL;
}

/* a Python number searched for: a 0-d tensor of its own type (weak in promotion) */
THTensor *at_searchsorted_scalar(const THTensor *bd, ATScalar self, bool out_int32, bool right, const char *side,
                                 const THTensor *sorter) {
  THTensor *s = at_scalar_tensor(self, at_scalar_dtype(self));
  if (!s) return NULL;
  THTensor *r = at_searchsorted(bd, s, out_int32, right, side, sorter, NULL);
  THTensor_free(s);
  return r;
}

THTensor *at_bucketize(const THTensor *self, const THTensor *boundaries, bool out_int32, bool right, THTensor *out) {
  if (boundaries->ndim != 1) {
    THError_set(TH_ERR_RUNTIME, "boundaries tensor must be 1 dimension, but got dim(%d)", boundaries->ndim);
    return NULL;
  }
  return at_searchsorted(boundaries, self, out_int32, right, NULL, NULL, out);
}

THTensor *at_bucketize_scalar(ATScalar self, const THTensor *boundaries, bool out_int32, bool right) {
  if (boundaries->ndim != 1) {
    THError_set(TH_ERR_RUNTIME, "boundaries tensor must be 1 dimension, but got dim(%d)", boundaries->ndim);
    return NULL;
  }
  return at_searchsorted_scalar(boundaries, self, out_int32, right, NULL, NULL);
}

/* ---------------------------------------------------------------- bincount */

/* Per-thread histograms of nbins elements of esize bytes, summed into the
 * result: each thread counts one slice of the input. */
THTensor *at_bincount(const THTensor *self, const THTensor *weights, int64_t minlength) {
  if (!minmax_fns[self->dtype]) {
    THError_set(TH_ERR_NOTIMPL, "\"bincount_cpu\" not implemented for '%s'", legacy(self->dtype));
    return NULL;
  }
  if (minlength < 0) { THError_set(TH_ERR_RUNTIME, "minlength should be >= 0"); return NULL; }
  if (self->ndim == 1 && self->sizes[0] == 0) return at_full(&(ATIntList){ 1, { minlength } }, at_scalar_int(0), TH_Int64);
  THTensor *x = self->ndim == 1 ? at_contiguous(self) : NULL;
  int64_t n = self->ndim == 1 ? self->sizes[0] : 0, mn = 0, mx = 0;
  if (x) minmax_fns[self->dtype](THTensor_data(x), n, &mn, &mx);
  if (!x || mn < 0) {
    THTensor_free(x);
    if (self->ndim == 1 && !x) return NULL;
    THError_set(TH_ERR_RUNTIME, "bincount only supports 1-d non-negative integral inputs.");
    return NULL;
  }
  if (weights && (weights->ndim != 1 || weights->sizes[0] != n)) {
    THTensor_free(x);
    THError_set(TH_ERR_RUNTIME, "weights should be 1-d and have the same length as input");
    return NULL;
  }
  THDtype hdt = !weights ? TH_Int64 : weights->dtype == TH_Float ? TH_Float : TH_Double;
  THTensor *w = weights ? at_contiguous_as(weights, hdt) : NULL;
  int64_t nbins = mx + 1 > minlength ? mx + 1 : minlength;
  THTensor *res = (!weights || w) ? at_full(&(ATIntList){ 1, { nbins } }, at_scalar_int(0), hdt) : NULL;
  if (!res) { THTensor_free(x); THTensor_free(w); return NULL; }
  THBincountFn fn = bincount_fns[self->dtype];
  int es = THDtype_size(hdt);
  int nt = at_get_num_threads();
  /* threads only when the per-thread histograms are small next to the input */
  if (nt > 1 && n > PAR_MIN && nbins * 4 < n) {
    char *bufs = calloc((size_t)nt * (size_t)nbins, (size_t)es);
    if (!bufs) { THTensor_free(x); THTensor_free(w); THTensor_free(res); THError_set(TH_ERR_MEMORY, "bincount: out of memory"); return NULL; }
#pragma omp parallel num_threads(nt)
    {
      int t = omp_get_thread_num(), T = omp_get_num_threads();
      int64_t i0 = n * t / T, i1 = n * (t + 1) / T;
      fn(THTensor_data(x), w ? THTensor_data(w) : NULL, hdt, bufs + (size_t)t * nbins * es, i0, i1);
    }
    char *h = THTensor_data(res);
    for (int t = 0; t < nt; t++) {
      const char *b = bufs + (size_t)t * nbins * es;
      for (int64_t k = 0; k < nbins; k++) {
        if (hdt == TH_Int64) ((int64_t *)h)[k] += ((const int64_t *)b)[k];
        else if (hdt == TH_Float) ((float *)h)[k] += ((const float *)b)[k];
        else ((double *)h)[k] += ((const double *)b)[k];
      }
    }
    free(bufs);
  } else {
    fn(THTensor_data(x), w ? THTensor_data(w) : NULL, hdt, THTensor_data(res), 0, n);
  }
  THTensor_free(x); THTensor_free(w);
  return res;
}

/* ---------------------------------------------------------------- histc / histogram */

/* hist (double, nbins) of x (contiguous, floating) with optional weights */
static int hist_count(const THTensor *x, const THTensor *w, const THTensor *edges, int64_t nbins, THHistMode mode,
                      double *hist) {
  int64_t n = THTensor_numel(x);
  THHistArgs a = { THTensor_data(x), w ? THTensor_data(w) : NULL, THTensor_data(edges), nbins, mode };
  THHistFn fn = hist_fns[x->dtype];
  int nt = at_get_num_threads();
  if (nt > 1 && n > PAR_MIN && nbins * 4 < n) {
    double *bufs = calloc((size_t)nt * (size_t)nbins, sizeof(double));
    if (!bufs) { THError_set(TH_ERR_MEMORY, "histogram: out of memory"); return -1; }
#pragma omp parallel num_threads(nt)
    {
      int t = omp_get_thread_num(), T = omp_get_num_threads();
      fn(&a, bufs + (size_t)t * nbins, n * t / T, n * (t + 1) / T);
    }
    for (int t = 0; t < nt; t++)
      for (int64_t k = 0; k < nbins; k++) hist[k] += bufs[(size_t)t * nbins + k];
    free(bufs);
  } else {
    fn(&a, hist, 0, n);
  }
  return 0;
}

/* min and max of a non-empty tensor (NaN if an element is NaN) */
static int data_range(const THTensor *x, double *lo, double *hi) {
  THTensor *mn = at_max_all(x, false), *mx = mn ? at_max_all(x, true) : NULL;
  if (mx) { *lo = at_item_double(mn); *hi = at_item_double(mx); }
  THTensor_free(mn); THTensor_free(mx);
  return mx ? 0 : -1;
}

/* hist (double) as a tensor of dt, divided by its sum and the bin widths
 * when density is asked for (in dt's precision, as PyTorch's div_ does) */
static THTensor *hist_result(const double *hist, int64_t nb, const THTensor *edges, THDtype dt, bool density) {
  THTensor *h = THTensor_new(TH_Double, 1, &nb);
  if (!h) return NULL;
  double *hv = (double *)THTensor_data(h), sum = 0;
  memcpy(hv, hist, sizeof(double) * nb);
  if (density) {
    THTensor *ed = at_contiguous_as(edges, TH_Double);
    if (!ed) { THTensor_free(h); return NULL; }
    const double *e = (const double *)THTensor_data(ed);
    for (int64_t k = 0; k < nb; k++) sum += hv[k];
    for (int64_t k = 0; k < nb; k++) {
      if (dt == TH_Float) hv[k] = (float)((float)hv[k] / (float)sum) / (float)((float)e[k + 1] - (float)e[k]);
      else hv[k] = hv[k] / sum / (e[k + 1] - e[k]);
    }
    THTensor_free(ed);
  }
  THTensor *r = at_to_dtype(h, dt, false);
  THTensor_free(h);
  return r;
}

static int hist_dtype_check(const THTensor *self, const char *name) {
  if (THDtype_isFloating(self->dtype) && (strcmp(name, "histogramdd") || (self->dtype != TH_Half && self->dtype != TH_BFloat16)))
    return 0;
  THError_set(TH_ERR_NOTIMPL, "\"%s\" not implemented for '%s'", name, legacy(self->dtype));
  return -1;
}

THTensor *at_histc(const THTensor *self, int64_t bins, ATScalar min, ATScalar max, THTensor *out) {
  if (hist_dtype_check(self, "histogram_cpu") < 0) return NULL;
  double lo = min.d, hi = max.d;
  if (lo == hi && THTensor_numel(self) > 0 && data_range(self, &lo, &hi) < 0) return NULL;
  if (lo == hi) { lo -= 1; hi += 1; }
  if (!isfinite(lo) || !isfinite(hi)) {
    THError_set(TH_ERR_RUNTIME, "torch.histc: range of [%g, %g] is not finite", lo, hi);
    return NULL;
  }
  if (!(lo < hi)) { THError_set(TH_ERR_RUNTIME, "torch.histc: max must be larger than min"); return NULL; }
  if (bins <= 0) {
    THError_set(TH_ERR_RUNTIME, "torch.histogram(): bins must be > 0, but got %lld for dimension 0", (long long)bins);
    return NULL;
  }
  THTensor *edges = at_linspace(at_scalar_float(lo), at_scalar_float(hi), bins + 1, self->dtype);
  THTensor *x = edges ? at_contiguous(self) : NULL, *res = NULL;
  double *hist = x ? calloc((size_t)bins, sizeof(double)) : NULL;
  if (x && !hist) THError_set(TH_ERR_MEMORY, "histc: out of memory");
  if (hist && hist_count(x, NULL, edges, bins, TH_HIST_LINEAR, hist) == 0)
    res = hist_result(hist, bins, edges, self->dtype, false);
  free(hist);
  THTensor_free(x); THTensor_free(edges);
  return at_into_out(res, out);
}

static int histogram_checks(const THTensor *self, int64_t nb, const THTensor *bin_edges, const THTensor *weight) {
  char b1[64], b2[64];
  if (hist_dtype_check(self, "histogramdd") < 0) return -1;
  if (nb <= 0) {
    THError_set(TH_ERR_RUNTIME, "torch.histogram(): bins must be > 0, but got %lld for dimension 0", (long long)nb);
    return -1;
  }
  if (bin_edges && bin_edges->dtype != self->dtype) {
    THError_set(TH_ERR_RUNTIME, "torch.histogramdd: input tensor and bins tensors should have the same dtype, but got "
                "input with dtype %s and bins for dimension 0 with dtype %s", at_cpp_dtype_name(self->dtype),
                at_cpp_dtype_name(bin_edges->dtype));
    return -1;
  }
  if (bin_edges && bin_edges->ndim != 1) {
    THError_set(TH_ERR_RUNTIME, "torch.histogramdd: bins tensor should have one dimension, but got %d dimensions in "
                "the bins tensor for dimension 0", bin_edges->ndim);
    return -1;
  }
  if (weight && weight->dtype != self->dtype) {
    THError_set(TH_ERR_RUNTIME, "torch.histogramdd: if weight tensor is provided, input tensor and weight tensor "
                "should have the same dtype, but got input(%s), and weight(%s)", at_cpp_dtype_name(self->dtype),
                at_cpp_dtype_name(weight->dtype));
    return -1;
  }
  int64_t n = THTensor_numel(self), nw = weight ? THTensor_numel(weight) : n;
  if (nw != n) {
    int64_t in_sz[2] = { n, 1 };
    THError_set(TH_ERR_RUNTIME, "torch.histogramdd: if weight tensor is provided it should have the same shape as the "
                "input tensor excluding its innermost dimension, but got input with shape %s and weight with shape %s",
                THTensor_sizeStr(2, in_sz, b1, sizeof b1), THTensor_sizeStr(1, &nw, b2, sizeof b2));
    return -1;
  }
  return 0;
}

int at_histogram(THTensor **outs, const THTensor *self, int64_t bins, const THTensor *bin_edges, ATOptDouble min,
                 ATOptDouble max, const THTensor *weight, bool density) {
  int64_t nb = bin_edges ? THTensor_numel(bin_edges) - 1 : bins;
  if (histogram_checks(self, nb, bin_edges, weight) < 0) return -1;
  THTensor *edges = NULL;
  if (bin_edges) {
    edges = at_contiguous(bin_edges);
  } else {
    double lo = 0, hi = 1;
    if (min.has && max.has) { lo = min.v; hi = max.v; }
    else if (THTensor_numel(self) > 0 && data_range(self, &lo, &hi) < 0) return -1;
    if (!isfinite(lo) || !isfinite(hi)) {
      THError_set(TH_ERR_RUNTIME, "torch.histogramdd: dimension 0's range [%g, %g] is not finite", lo, hi);
      return -1;
    }
    if (lo > hi) {
      THError_set(TH_ERR_RUNTIME, "torch.histogramdd: min should not exceed max, but got min %g max %g for dimension 0",
                  lo, hi);
      return -1;
    }
    if (lo == hi) { lo -= 0.5; hi += 0.5; }
    edges = at_linspace(at_scalar_float(lo), at_scalar_float(hi), nb + 1, self->dtype);
  }
  THTensor *x = edges ? at_contiguous(self) : NULL, *w = (x && weight) ? at_contiguous(weight) : NULL, *res = NULL;
  double *hist = (x && (w || !weight)) ? calloc((size_t)nb, sizeof(double)) : NULL;
  if (x && (w || !weight) && !hist) THError_set(TH_ERR_MEMORY, "histogram: out of memory");
  if (hist && hist_count(x, w, edges, nb, bin_edges ? TH_HIST_BINARY : TH_HIST_LINEAR_LOCAL, hist) == 0)
    res = hist_result(hist, nb, edges, self->dtype, density);
  free(hist);
  THTensor_free(x); THTensor_free(w);
  if (!res) { THTensor_free(edges); return -1; }
  outs[0] = res;
  outs[1] = bin_edges ? at_clone(edges, false) : edges;
  if (bin_edges) THTensor_free(edges);
  if (!outs[1]) { THTensor_free(res); return -1; }
  return 0;
}
