/* The scan family (see ATScan.h). A scan along dim d views the contiguous
 * input as [outer, D, inner]; the TH kernel runs blocks of outer rows and
 * inner columns, which are split between threads here. */
#include "ATScan.h"
#include "ATComplex.h"
#include "ATArgChecks.h"

#include "ATConv.h"   /* at_contiguous_as */
#include "ATCuda.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const THScanFn scan_fns[TH_NDTYPES] = TH_ALL_TABLE(scan);

static void around(const THTensor *t, int64_t d, int64_t *outer, int64_t *D, int64_t *inner) {
  *outer = 1; *inner = 1; *D = t->ndim ? t->sizes[d] : 1;
  for (int i = 0; i < d; i++) *outer *= t->sizes[i];
  for (int i = d + 1; i < t->ndim; i++) *inner *= t->sizes[i];
}

/* Runs the kernel over [outer, D, inner] in tasks of whole outer rows (when
 * inner is 1) or of inner column blocks, in parallel for large work. */
static void scan_run(THScanFn fn, const THScanArgs *a, int64_t outer) {
  int64_t D = a->D, inner = a->inner, line = D * inner > 0 ? D * inner : 1;
  int64_t ib = inner >= 1024 ? 256 : inner;                  /* inner columns per task */
  int64_t ob = 16384 / line > 1 ? 16384 / line : 1;          /* outer rows per task */
  int64_t nib = (inner + ib - 1) / ib, nob = (outer + ob - 1) / ob, tasks = nib * nob;
  bool par = outer * line > 32768 && tasks > 1;
#pragma omp parallel for schedule(static) if (par)
  for (int64_t t = 0; t < tasks; t++) {
    int64_t o0 = (t / nib) * ob, i0 = (t % nib) * ib;
    fn(a, o0, o0 + ob < outer ? o0 + ob : outer, i0, i0 + ib < inner ? i0 + ib : inner);
  }
}

/* A contiguous tensor holding self in dtype dt (self itself when it already is). */

static const char *scan_name(THScanOp op) {
  switch (op) {
    case TH_SCAN_PROD: return "cumprod";
    case TH_SCAN_LOGSUMEXP: case TH_SCAN_LOGSUMEXP_REVERSE: return "logcumsumexp";
    case TH_SCAN_MAX: return "cummax";
    case TH_SCAN_MIN: return "cummin";
    default: return "cumsum";
  }
}

/* The scan of self (cast to dt) along d into a new contiguous tensor. */
static THTensor *scan_into_new(const THTensor *self, int64_t d, THDtype dt, THScanOp op, THTensor *indices) {
  THTensor *x = at_contiguous_as(self, dt);
  if (!x) return NULL;
  int dev = THTensor_device(self);
  THTensor *res = at_new_on(dev, dt, self->ndim, self->sizes, NULL);
  if (res && THTensor_numel(res) > 0 && dev >= 0) {   /* src/THC/THCScan.cu */
    int64_t outer, D, inner;
    around(x, d, &outer, &D, &inner);
    if (at_cuda->scan((int)op, dt, THTensor_data(x), THTensor_data(res), indices ? (int64_t *)THTensor_data(indices) : NULL,
                      outer, D, inner) < 0) {
      THTensor_free(res);
      res = NULL;
    }
  } else if (res && THTensor_numel(res) > 0) {
    int64_t outer, D, inner;
    around(x, d, &outer, &D, &inner);
    THScanArgs a = { op, THTensor_data(x), THTensor_data(res), indices ? (int64_t *)THTensor_data(indices) : NULL,
                     D, inner };
    scan_run(scan_fns[dt], &a, outer);
  }
  THTensor_free(x);
  return res;
}

/* cumsum of complex numbers: the real and imaginary parts add up apart, so the scan runs over
 * view_as_real's pairs along the same dim (a 0-d input has only itself to add) */
static THTensor *complex_sum_scan(const THTensor *self, int64_t d, THDtype dt, THScanOp op) {
  if (self->ndim == 0) return at_to_dtype(self, dt, true);
  THTensor *c = at_to_dtype(self, dt, false);
  if (!c) return NULL;
  THTensor *pairs = at_view_as_real(c);
  THTensor *sums = pairs ? scan_into_new(pairs, d, THDtype_toReal(dt), op, NULL) : NULL;
  THTensor *res = sums ? at_view_as_complex(sums) : NULL;
  THTensor_free(c);
  THTensor_free(pairs);
  THTensor_free(sums);
  return res;
}

THTensor *at_cumulative(const THTensor *self, int64_t dim, THDtype dtype, THScanOp op, THTensor *out) {
  if (out && dtype != TH_Undefined && out->dtype != dtype) {   /* without dtype=, out's dtype is taken */
    THError_set(TH_ERR_RUNTIME, "Expected out tensor to have dtype %s, but got %s instead", at_cpp_dtype_name(dtype),
                at_cpp_dtype_name(out->dtype));
    return NULL;
  }
  THDtype want = dtype != TH_Undefined ? dtype : self->dtype;
  if ((op == TH_SCAN_SUM || op == TH_SCAN_SUM_REVERSE) && THDtype_isComplex(want)) {
    int64_t d;
    if (at_wrap_dim(dim, self->ndim, &d) < 0) return NULL;
    THTensor *res = complex_sum_scan(self, d, want, op);
    return res ? at_into_out(res, out) : NULL;
  }
  if (at_no_complex(self, "cumsum_cpu") < 0) return NULL;
  int64_t d;
  if (at_wrap_dim(dim, self->ndim, &d) < 0) return NULL;
  bool lse = op == TH_SCAN_LOGSUMEXP || op == TH_SCAN_LOGSUMEXP_REVERSE;
  THDtype dt = dtype != TH_Undefined ? dtype : (THDtype_isFloating(self->dtype) || lse ? self->dtype : TH_Int64);
  if (dt == TH_Bool || THDtype_isComplex(dt) || (lse && !THDtype_isFloating(dt))) {   /* no complex scan kernels */
    THError_set(TH_ERR_NOTIMPL, "\"%s_out_cpu\" not implemented for '%s'", scan_name(op), THDtype_info[dt].legacy);
    return NULL;
  }
  return at_into_out(scan_into_new(self, d, dt, op, NULL), out);
}

int at_cumextreme(THTensor **outs, const THTensor *self, int64_t dim, bool is_max) {
  if (at_no_complex(self, is_max ? "cummax_cpu" : "cummin_cpu") < 0) return -1;
  int64_t d;
  if (at_wrap_dim(dim, self->ndim, &d) < 0) return -1;
  THTensor *idx = at_new_on(THTensor_device(self), TH_Int64, self->ndim, self->sizes, NULL);
  THTensor *vals = idx ? scan_into_new(self, d, self->dtype, is_max ? TH_SCAN_MAX : TH_SCAN_MIN, idx) : NULL;
  if (!vals) { THTensor_free(idx); return -1; }
  outs[0] = vals;
  outs[1] = idx;
  return 0;
}

/* cumprod's backward and its two derivatives, per line along dim, in double,
 * with pre[k] = x[0]..x[k-1] and S[k] = g[k] + x[k+1] * S[k+1] (exact with zeros):
 *   BWD:    out[k] = pre[k] * S[k]
 *           (= sum_{j>=k} g[j] * prod_{i<=j, i!=k} x[i])
 *   GGRAD:  out = the adjoint of S for incoming a: B[k] = a[k] pre[k] + x[k] B[k-1]
 *   GSELF:  out[k] = adjoint of x[k] through pre and S (reverse mode). */
enum { CUMPROD_BWD, CUMPROD_GGRAD, CUMPROD_GSELF };

static void cumprod_line(int mode, const double *x, const double *g, const double *a, int64_t K, double *S,
                         double *pre, double *out) {
  pre[0] = 1;
  for (int64_t k = 0; k < K; k++) pre[k + 1] = pre[k] * x[k];
  double s = 0;
  for (int64_t k = K - 1; k >= 0; k--) { s = g[k] + (k + 1 < K ? x[k + 1] * s : 0); S[k] = s; }
  if (mode == CUMPROD_BWD) { for (int64_t k = 0; k < K; k++) out[k] = pre[k] * S[k]; return; }
  if (mode == CUMPROD_GGRAD) {
    double bS = 0;
    for (int64_t k = 0; k < K; k++) { bS = a[k] * pre[k] + x[k] * bS; out[k] = bS; }
    return;
  }
  double bpre = 0;   /* adjoint of pre[k+1], walking down */
  for (int64_t k = K - 1; k >= 0; k--) { out[k] = bpre * pre[k]; bpre = a[k] * S[k] + bpre * x[k]; }
  double bS = 0;     /* adjoint of S[k-1], walking up */
  for (int64_t k = 0; k < K; k++) { if (k) out[k] += bS * S[k]; bS = a[k] * pre[k] + x[k] * bS; }
}

static THTensor *cumprod_kernel(int mode, const THTensor *a, const THTensor *grad, const THTensor *self,
                                int64_t dim) {
  int64_t d;
  /* the lines read grad and ggI element for element with self */
  if (at_check_same_shape(grad, self, "cumprod_backward", "grad_output", "self") < 0 ||
      (a && at_check_same_shape(a, self, "cumprod_backward", "ggI", "self") < 0))
    return NULL;
  if (self->ndim == 0) return at_to_dtype(mode == CUMPROD_BWD ? grad : mode == CUMPROD_GGRAD ? a : self, self->dtype, true);
  if (at_wrap_dim(dim, self->ndim, &d) < 0) return NULL;
  int last = self->ndim - 1;
  const THTensor *src[3] = { self, grad, a };
  THTensor *w[3] = { NULL, NULL, NULL }, *out = NULL, *res = NULL;
  double *buf = NULL;
  for (int i = 0; i < 3; i++) {   /* contiguous double copies with dim last */
    if (!src[i]) continue;
    THTensor *t = at_transpose(src[i], d, last);
    w[i] = t ? at_contiguous_as(t, TH_Double) : NULL;
    THTensor_free(t);
    if (!w[i]) goto done;
  }
  int64_t K = self->sizes[d], n = THTensor_numel(w[0]), L = K ? n / K : 0;
  if (!(out = at_new_on(THTensor_device(self), TH_Double, w[0]->ndim, w[0]->sizes, NULL))) goto done;
  if (THTensor_device(self) >= 0) {   /* the same lines, a GPU thread each (src/THC/THCScan.cu) */
    if (at_cuda->cumprod_grad(mode, (const double *)THTensor_data(w[0]), (const double *)THTensor_data(w[1]),
                              w[2] ? (const double *)THTensor_data(w[2]) : NULL, (double *)THTensor_data(out), L, K) < 0)
      goto done;
  } else {
    if (!(buf = malloc((size_t)(2 * K + 1) * sizeof(double)))) { THError_set(TH_ERR_MEMORY, "cumprod backward: out of memory"); goto done; }
    const double *xv = (double *)THTensor_data(w[0]), *gv = (double *)THTensor_data(w[1]), *av = w[2] ? (double *)THTensor_data(w[2]) : NULL;
    double *ov = (double *)THTensor_data(out);
    for (int64_t l = 0; l < L; l++)
      cumprod_line(mode, xv + l * K, gv + l * K, av ? av + l * K : NULL, K, buf, buf + K, ov + l * K);
  }
  THTensor *back = at_transpose(out, d, last);
  if (back) { res = at_to_dtype(back, self->dtype, false); THTensor_free(back); }
done:
  free(buf);
  THTensor_free(out);
  for (int i = 0; i < 3; i++) THTensor_free(w[i]);
  return res;
}

THTensor *at_cumprod_backward(const THTensor *grad, const THTensor *self, int64_t dim) {
  return cumprod_kernel(CUMPROD_BWD, NULL, grad, self, dim);
}
THTensor *at_cumprod_backward_ggrad(const THTensor *ggI, const THTensor *grad, const THTensor *self, int64_t dim) {
  return cumprod_kernel(CUMPROD_GGRAD, ggI, grad, self, dim);
}
THTensor *at_cumprod_backward_gself(const THTensor *ggI, const THTensor *grad, const THTensor *self, int64_t dim) {
  return cumprod_kernel(CUMPROD_GSELF, ggI, grad, self, dim);
}
