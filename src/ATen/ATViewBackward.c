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

/* Where a strided geometry reaches in its storage: false when it reaches
 * before element 0 or past `storage_numel` (or its extent overflows). An
 * empty geometry reaches nothing. */
static bool geometry_fits(const ATIntList *size, const ATIntList *stride, int64_t offset, int64_t storage_numel) {
  int64_t lo = offset, hi = offset;
  for (int k = 0; k < size->n; k++) {
    if (size->v[k] < 0) return false;
    if (size->v[k] == 0) return offset >= 0;
  }
  for (int k = 0; k < size->n; k++) {
    int64_t step;
    if (__builtin_mul_overflow(size->v[k] - 1, stride->v[k], &step)) return false;
    if (step < 0 ? __builtin_add_overflow(lo, step, &lo) : __builtin_add_overflow(hi, step, &hi)) return false;
  }
  return lo >= 0 && hi < storage_numel;
}

/* as_strided: gradient of the input (geometry input_size/input_stride/
 * input_offset over a storage of storage_numel elements) from the gradient
 * of the view (size/stride/offset over that storage). Elements that several
 * view positions alias get the sum of their gradients. Only the input's
 * geometry is needed, not its values, so autograd saves no tensor (an
 * in-place op on the base must not invalidate the view's history). A
 * missing offset is the other geometry's: as_strided(x, size, stride) keeps
 * x's offset, and the double backward swaps the two geometries. */
THTensor *at_as_strided_backward(const THTensor *g, const ATIntList *input_size, const ATIntList *input_stride,
                                 ATOptInt input_offset, int64_t storage_numel, const ATIntList *size,
                                 const ATIntList *stride, ATOptInt offset) {
  /* the walk below steps through g by the view's size */
  int64_t vn, in_n;
  if (size->n != stride->n || th_numel_overflow(size->n, size->v, &vn) || THTensor_numel(g) != vn) {
    char b[256];
    THError_set(TH_ERR_RUNTIME, "as_strided_backward: grad of size %s does not match the view's size and stride",
                THTensor_sizeStr(g->ndim, g->sizes, b, 256));
    return NULL;
  }
  int64_t in_off = input_offset.has ? input_offset.v : offset.has ? offset.v : 0;
  int64_t off = offset.has ? offset.v : in_off;
  /* the input is read back from the storage-sized buffer: its geometry must lie inside it */
  if (input_size->n != input_stride->n || storage_numel < 0 ||
      th_numel_overflow(input_size->n, input_size->v, &in_n) ||
      !geometry_fits(input_size, input_stride, in_off, storage_numel)) {
    THError_set(TH_ERR_RUNTIME, "as_strided_backward: the input's geometry does not fit in a storage of %lld elements",
                (long long)storage_numel);
    return NULL;
  }
  ATIntList flat = { 1, { storage_numel } };
  THTensor *acc = at_full(&flat, at_scalar_int(0), TH_Double);
  THTensor *gc = at_to_dtype(g, TH_Double, true);
  THTensor *res = NULL;
  if (!acc || !gc) goto done;
  if (!THTensor_isContiguous(gc)) {
    THTensor *c = at_contiguous(gc);
    THTensor_free(gc);
    if (!(gc = c)) goto done;
  }
  {
    int64_t n = THTensor_numel(gc), idx[TH_MAX_DIMS] = {0};
    const double *gv = (const double *)THTensor_data(gc);
    double *av = (double *)THTensor_data(acc);
    for (int64_t i = 0; i < n; i++) {
      int64_t pos = off;
      for (int k = 0; k < size->n; k++) pos += idx[k] * stride->v[k];
      if (pos >= 0 && pos < storage_numel) av[pos] += gv[i];
      for (int k = size->n - 1; k >= 0; k--) { if (++idx[k] < size->v[k]) break; idx[k] = 0; }
    }
    THTensor *in_view = THTensor_newWithStorage(acc->storage, TH_Double, in_off, input_size->n, input_size->v,
                                                input_stride->v);
    if (!in_view) goto done;
    THTensor *tmp = THTensor_new(g->dtype, input_size->n, input_size->v);
    if (tmp && at_copy_(tmp, in_view) == 0) res = tmp; else THTensor_free(tmp);
    THTensor_free(in_view);
  }
done:
  THTensor_free(gc);
  THTensor_free(acc);
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
