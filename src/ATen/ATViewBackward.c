/* Backward of view ops: scatter a gradient of the view's shape into zeros
 * of the base's shape, through the same view. */
#include "ATen.h"

#include <string.h>

typedef THTensor *(*ViewFn)(const THTensor *base, const void *args);

/* zeros of the base's shape on grad's device */
static THTensor *zeros_on(const THTensor *grad, const ATIntList *sizes) {
  THTensor *z = at_new_on(THTensor_device(grad), grad->dtype, sizes->n, sizes->v, NULL);
  if (z && at_fill_(z, at_scalar_int(0)) < 0) { THTensor_free(z); return NULL; }
  return z;
}

static THTensor *into_zeros(const THTensor *grad, const ATIntList *sizes, ViewFn view, const void *args) {
  THTensor *z = zeros_on(grad, sizes);
  if (!z) return NULL;
  THTensor *v = view(z, args);
  if (!v) { THTensor_free(z); return NULL; }
  int rc = at_copy_(v, grad);
  THTensor_free(v);
  if (rc < 0) { THTensor_free(z); return NULL; }
  return z;
}

typedef struct { int64_t a, b, c; ATOptInt s, e; } Args;

static THTensor *v_narrow(const THTensor *t, const void *p) { const Args *a = p; return at_narrow(t, a->a, a->b, a->c); }
static THTensor *v_select(const THTensor *t, const void *p) { const Args *a = p; return at_select(t, a->a, a->b); }
static THTensor *v_slice(const THTensor *t, const void *p) { const Args *a = p; return at_slice(t, a->a, a->s, a->e, a->b); }
static THTensor *v_diag(const THTensor *t, const void *p) { const Args *a = p; return at_diagonal(t, a->a, a->b, a->c); }
static THTensor *v_unfold(const THTensor *t, const void *p) { const Args *a = p; return at_unfold(t, a->a, a->b, a->c); }

THTensor *at_narrow_backward(const THTensor *g, const ATIntList *sizes, int64_t dim, int64_t start, int64_t len) {
  Args a = { dim, start, len };
  return into_zeros(g, sizes, v_narrow, &a);
}
THTensor *at_select_backward(const THTensor *g, const ATIntList *sizes, int64_t dim, int64_t index) {
  Args a = { dim, index };
  return into_zeros(g, sizes, v_select, &a);
}
THTensor *at_slice_backward(const THTensor *g, const ATIntList *sizes, int64_t dim, ATOptInt start, ATOptInt end,
                            int64_t step) {
  Args a = { dim, step, 0, start, end };
  return into_zeros(g, sizes, v_slice, &a);
}
THTensor *at_diagonal_backward(const THTensor *g, const ATIntList *sizes, int64_t off, int64_t d1, int64_t d2) {
  Args a = { off, d1, d2 };
  return into_zeros(g, sizes, v_diag, &a);
}

/* unfold windows may overlap: accumulate window by window */
THTensor *at_unfold_backward(const THTensor *g, const ATIntList *sizes, int64_t dim, int64_t size, int64_t step) {
  THTensor *z = zeros_on(g, sizes);
  if (!z) return NULL;
  int64_t d;
  if (at_wrap_dim(dim, sizes->n, &d) < 0) { THTensor_free(z); return NULL; }
  if (g->ndim != sizes->n + 1) {   /* unfold's result: the base's dims and the window */
    THError_set(TH_ERR_RUNTIME, "unfold_backward: expected grad with %d dimensions, got %d", sizes->n + 1, g->ndim);
    THTensor_free(z);
    return NULL;
  }
  int64_t nwin = g->sizes[d];
  for (int64_t w = 0; w < nwin; w++) {
    THTensor *gw = at_select(g, d, w);              /* [..., size] window */
    THTensor *zw = gw ? at_narrow(z, d, w * step, size) : NULL;
    THTensor *zm = zw ? at_movedim(zw, &(ATIntList){1, {d}}, &(ATIntList){1, {-1}}) : NULL;
    THTensor *sum = zm ? at_add(zm, gw, at_scalar_int(1), zm) : NULL;
    THTensor_free(sum);
    THTensor_free(zm);
    THTensor_free(zw);
    THTensor_free(gw);
    if (!sum) { THTensor_free(z); return NULL; }
  }
  return z;
}

/* as_strided: elements of the base that several view positions alias get
 * the sum of their gradients (accumulated element by element). */
THTensor *at_as_strided_backward(const THTensor *g, const THTensor *self, const ATIntList *size,
                                 const ATIntList *stride, ATOptInt offset) {
  /* the walk below steps through g by the view's size */
  int64_t vn;
  if (size->n != stride->n || th_numel_overflow(size->n, size->v, &vn) || THTensor_numel(g) != vn) {
    char b[256];
    THError_set(TH_ERR_RUNTIME, "as_strided_backward: grad of size %s does not match the view's size and stride",
                THTensor_sizeStr(g->ndim, g->sizes, b, 256));
    return NULL;
  }
  int64_t need = self->storage->nbytes / THDtype_size(self->dtype);
  ATIntList flat = { 1, { need } };
  THTensor *storage_grad = at_full(&flat, at_scalar_int(0), g->dtype);
  if (!storage_grad) return NULL;
  THTensor *gd = at_to_dtype(g, TH_Double, true);
  THTensor *acc = at_to_dtype(storage_grad, TH_Double, true);
  THTensor *res = NULL;
  if (!gd || !acc) goto done;
  {
    int64_t n = THTensor_numel(gd), idx[TH_MAX_DIMS] = {0};
    int64_t off = offset.has ? offset.v : self->offset;
    double *gv = (double *)THTensor_data(gd), *av = (double *)THTensor_data(acc);
    THTensor *gc = at_contiguous(gd);
    if (!gc) goto done;
    gv = (double *)THTensor_data(gc);
    for (int64_t i = 0; i < n; i++) {
      int64_t pos = off;
      for (int k = 0; k < size->n; k++) pos += idx[k] * stride->v[k];
      if (pos >= 0 && pos < need) av[pos] += gv[i];
      for (int k = size->n - 1; k >= 0; k--) { if (++idx[k] < size->v[k]) break; idx[k] = 0; }
    }
    THTensor_free(gc);
    THTensor *base_view = THTensor_newWithStorage(acc->storage, TH_Double, self->offset, self->ndim, self->sizes, self->strides);
    if (!base_view) goto done;
    THTensor *tmp = THTensor_new(g->dtype, self->ndim, self->sizes);
    if (tmp && at_copy_(tmp, base_view) == 0) res = tmp; else THTensor_free(tmp);
    THTensor_free(base_view);
  }
done:
  THTensor_free(gd);
  THTensor_free(acc);
  THTensor_free(storage_grad);
  return res;
}

THTensor *at_sum_to_size(const THTensor *t, const ATIntList *size) {
  char b1[256], b2[256];
  if (size->n > t->ndim) goto bad;
  ATIntList dims = { 0 };
  int lead = t->ndim - size->n;
  for (int i = 0; i < lead; i++) dims.v[dims.n++] = i;
  for (int i = 0; i < size->n; i++) {
    int64_t have = t->sizes[lead + i];
    if (size->v[i] == 1 && have != 1) dims.v[dims.n++] = lead + i;
    else if (size->v[i] != have) goto bad;
  }
  if (dims.n == 0) return at_alias(t);
  THTensor *s = at_sum(t, &dims, true, t->dtype, NULL);
  if (!s) return NULL;
  THTensor *r = at_reshape(s, size);
  THTensor_free(s);
  return r;
bad:
  THError_set(TH_ERR_RUNTIME, "size {%s} is not expandable to size {%s}.",
              THTensor_sizeStr(size->n, size->v, b1, 256), THTensor_sizeStr(t->ndim, t->sizes, b2, 256));
  return NULL;
}
