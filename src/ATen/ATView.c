/* View ops: new geometry over the same storage, never a copy
 * (except reshape, which copies only when no view can express it). */
#include "ATen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int at_wrap_dim(int64_t dim, int ndim, int64_t *out) {
  int64_t n = ndim > 0 ? ndim : 1;
  if (dim < -n || dim >= n) {
    THError_set(TH_ERR_INDEX, "Dimension out of range (expected to be in range of [%lld, %lld], but got %lld)",
                (long long)-n, (long long)(n - 1), (long long)dim);
    return -1;
  }
  *out = dim < 0 ? dim + n : dim;
  return 0;
}

THTensor *at_alias(const THTensor *t) {
  return THTensor_newView(t, t->ndim, t->sizes, t->strides, t->offset);
}

/* Resolves one -1 in a requested shape against numel. */
static int infer_size(const ATIntList *size, int64_t numel, int64_t *out) {
  int infer = -1;
  int64_t prod = 1;
  char buf[512];
  for (int i = 0; i < size->n; i++) {
    if (size->v[i] == -1) {
      if (infer >= 0) { THError_set(TH_ERR_RUNTIME, "only one dimension can be inferred"); return -1; }
      infer = i;
    } else if (size->v[i] < 0) {
      THError_set(TH_ERR_RUNTIME, "invalid shape dimension %lld at index %d of shape %s", (long long)size->v[i], i,
                  THTensor_sizeStr(size->n, size->v, buf, sizeof buf));
      return -1;
    } else if (th_mul_overflow(prod, size->v[i], &prod)) {
      prod = -1;
    }
    out[i] = size->v[i];
  }
  if (infer >= 0 && prod > 0 && numel % prod == 0) { out[infer] = numel / prod; return 0; }
  if (infer < 0 && prod == numel) return 0;
  if (infer >= 0 && prod == 0 && numel == 0) {
    THError_set(TH_ERR_RUNTIME, "cannot reshape tensor of 0 elements into shape %s because the unspecified "
                "dimension size -1 can be any value and is ambiguous", THTensor_sizeStr(size->n, size->v, buf, 512));
    return -1;
  }
  THError_set(TH_ERR_RUNTIME, "shape '%s' is invalid for input of size %lld",
              THTensor_sizeStr(size->n, size->v, buf, sizeof buf), (long long)numel);
  return -1;
}

/* Strides for viewing t as newshape without copying, if possible (the
 * "chunks of contiguous dims" rule). Returns false when a copy is needed. */
static bool view_strides(const THTensor *t, int nd, const int64_t *shape, int64_t *out) {
  int64_t numel = THTensor_numel(t);
  if (numel == 0 || THTensor_isContiguous(t)) {   /* any shape views a contiguous block */
    int64_t st = 1;
    for (int i = nd - 1; i >= 0; i--) { out[i] = st; st *= shape[i] ? shape[i] : 1; }
    return true;
  }
  int view_d = nd - 1;
  int64_t chunk_base = t->ndim ? t->strides[t->ndim - 1] : 1, tensor_numel = 1, view_numel = 1;
  for (int td = t->ndim - 1; td >= 0; td--) {
    tensor_numel *= t->sizes[td];
    if (td == 0 || (t->sizes[td - 1] != 1 && t->strides[td - 1] != tensor_numel * chunk_base)) {
      while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
        out[view_d] = view_numel * chunk_base;
        view_numel *= shape[view_d];
        view_d--;
      }
      if (view_numel != tensor_numel) return false;
      if (td > 0) { chunk_base = t->strides[td - 1]; tensor_numel = 1; view_numel = 1; }
    }
  }
  return view_d == -1;
}

THTensor *at_view(const THTensor *t, const ATIntList *size) {
  int64_t shape[TH_MAX_DIMS], strides[TH_MAX_DIMS];
  if (infer_size(size, THTensor_numel(t), shape) < 0) return NULL;
  if (!view_strides(t, size->n, shape, strides)) {
    THError_set(TH_ERR_RUNTIME, "view size is not compatible with input tensor's size and stride (at least one "
                "dimension spans across two contiguous subspaces). Use .reshape(...) instead.");
    return NULL;
  }
  return THTensor_newView(t, size->n, shape, strides, t->offset);
}

THTensor *at_view_dtype(const THTensor *t, THDtype dtype) {
  int from = THDtype_size(t->dtype), to = THDtype_size(dtype);
  const char *a = THDtype_info[t->dtype].legacy, *b = THDtype_info[dtype].legacy;
  if (from == to) return THTensor_newWithStorage(t->storage, dtype, t->offset, t->ndim, t->sizes, t->strides);
  if (t->ndim == 0) {
    THError_set(TH_ERR_RUNTIME, "self.dim() cannot be 0 to view %s as %s (different element sizes)", a, b);
    return NULL;
  }
  int last = t->ndim - 1;
  if (t->strides[last] != 1) {
    THError_set(TH_ERR_RUNTIME, "self.stride(-1) must be 1 to view %s as %s (different element sizes), but got %lld",
                a, b, (long long)t->strides[last]);
    return NULL;
  }
  int64_t sizes[TH_MAX_DIMS], strides[TH_MAX_DIMS], offset;
  memcpy(sizes, t->sizes, sizeof(int64_t) * t->ndim);
  if (to < from) {   /* each element becomes `ratio` smaller ones */
    int64_t ratio = from / to;
    for (int i = 0; i < last; i++)
      if (th_mul_overflow(t->strides[i], ratio, &strides[i])) goto overflow;
    strides[last] = 1;
    if (th_mul_overflow(t->sizes[last], ratio, &sizes[last]) || th_mul_overflow(t->offset, ratio, &offset))
      goto overflow;
  } else {           /* `ratio` elements merge into one bigger one */
    int64_t ratio = to / from;
    if (t->sizes[last] % ratio) {
      THError_set(TH_ERR_RUNTIME, "self.size(-1) must be divisible by %lld to view %s as %s (different element sizes), "
                  "but got %lld", (long long)ratio, a, b, (long long)t->sizes[last]);
      return NULL;
    }
    if (t->offset % ratio) {
      THError_set(TH_ERR_RUNTIME, "self.storage_offset() must be divisible by %lld to view %s as %s (different element "
                  "sizes), but got %lld", (long long)ratio, a, b, (long long)t->offset);
      return NULL;
    }
    for (int i = 0; i < last; i++) {
      if (t->strides[i] % ratio) {
        THError_set(TH_ERR_RUNTIME, "self.stride(%d) must be divisible by %lld to view %s as %s (different element "
                    "sizes), but got %lld", i, (long long)ratio, a, b, (long long)t->strides[i]);
        return NULL;
      }
      strides[i] = t->strides[i] / ratio;
    }
    strides[last] = 1;
    sizes[last] = t->sizes[last] / ratio;
    offset = t->offset / ratio;
  }
  return THTensor_newWithStorage(t->storage, dtype, offset, t->ndim, sizes, strides);
overflow:
  THError_set(TH_ERR_RUNTIME, "numel: integer multiplication overflow");
  return NULL;
}

int at_reshape_views(const THTensor *t, const ATIntList *size) {
  int64_t shape[TH_MAX_DIMS], strides[TH_MAX_DIMS];
  if (infer_size(size, THTensor_numel(t), shape) < 0) return -1;
  return view_strides(t, size->n, shape, strides);
}

THTensor *at_reshape(const THTensor *t, const ATIntList *size) {
  int64_t shape[TH_MAX_DIMS], strides[TH_MAX_DIMS];
  if (infer_size(size, THTensor_numel(t), shape) < 0) return NULL;
  if (view_strides(t, size->n, shape, strides)) return THTensor_newView(t, size->n, shape, strides, t->offset);
  THTensor *c = at_clone(t, false);
  if (!c) return NULL;
  THTensor *r = at_view(c, size);
  THTensor_free(c);
  return r;
}

THTensor *at_as_strided(const THTensor *t, const ATIntList *size, const ATIntList *stride, ATOptInt offset) {
  if (size->n != stride->n) {
    THError_set(TH_ERR_RUNTIME, "mismatch in length of strides and shape");
    return NULL;
  }
  for (int i = 0; i < stride->n; i++)
    if (stride->v[i] < 0) {
      THError_set(TH_ERR_RUNTIME, "as_strided: Negative strides are not supported at the moment, got strides: [%lld]",
                  (long long)stride->v[i]);
      return NULL;
    }
  return THTensor_newView(t, size->n, size->v, stride->v, offset.has ? offset.v : t->offset);
}

THTensor *at_permute(const THTensor *t, const ATIntList *dims) {
  int64_t sizes[TH_MAX_DIMS], strides[TH_MAX_DIMS];
  bool seen[TH_MAX_DIMS] = {0};
  if (dims->n != t->ndim) {
    THError_set(TH_ERR_RUNTIME, "permute(sparse_coo): number of dimensions in the tensor input does not match "
                "the length of the desired ordering of dimensions i.e. input.dim() = %d is not equal to len(dims) = %d",
                t->ndim, dims->n);
    return NULL;
  }
  for (int i = 0; i < dims->n; i++) {
    int64_t d;
    if (at_wrap_dim(dims->v[i], t->ndim, &d) < 0) return NULL;
    if (seen[d]) { THError_set(TH_ERR_RUNTIME, "permute(): duplicate dims are not allowed."); return NULL; }
    seen[d] = true;
    sizes[i] = t->sizes[d];
    strides[i] = t->strides[d];
  }
  return THTensor_newView(t, t->ndim, sizes, strides, t->offset);
}

THTensor *at_transpose(const THTensor *t, int64_t d0, int64_t d1) {
  int64_t a, b;
  if (at_wrap_dim(d0, t->ndim, &a) < 0 || at_wrap_dim(d1, t->ndim, &b) < 0) return NULL;
  if (t->ndim == 0) return at_alias(t);
  int64_t sizes[TH_MAX_DIMS], strides[TH_MAX_DIMS];
  memcpy(sizes, t->sizes, t->ndim * sizeof(int64_t));
  memcpy(strides, t->strides, t->ndim * sizeof(int64_t));
  sizes[a] = t->sizes[b]; sizes[b] = t->sizes[a];
  strides[a] = t->strides[b]; strides[b] = t->strides[a];
  return THTensor_newView(t, t->ndim, sizes, strides, t->offset);
}

THTensor *at_t(const THTensor *t) {
  if (t->ndim > 2) {
    THError_set(TH_ERR_RUNTIME, "t() expects a tensor with <= 2 dimensions, but self is %dD", t->ndim);
    return NULL;
  }
  return t->ndim < 2 ? at_alias(t) : at_transpose(t, 0, 1);
}

THTensor *at_expand(const THTensor *t, const ATIntList *size) {
  char b1[256], b2[256];
  if (size->n < t->ndim) {
    /* torch's Tensor::toString: the legacy tensor type, or the backend's type name where none exists */
    char tn[48];
    const char *legacy = THDtype_info[t->dtype].legacy;
    bool cuda = THTensor_device(t) >= 0;
    if (t->dtype == TH_Bool || t->dtype == TH_BFloat16 || THDtype_isComplex(t->dtype))
      snprintf(tn, sizeof tn, "%s%sType", cuda ? "CUDA" : "CPU", legacy);
    else
      snprintf(tn, sizeof tn, "torch.%s%sTensor", cuda ? "cuda." : "", legacy);
    THError_set(TH_ERR_RUNTIME, "expand(%s{%s}, size=%s): the number of sizes provided (%d) must be "
                "greater or equal to the number of dimensions in the tensor (%d)", tn,
                THTensor_sizeStr(t->ndim, t->sizes, b1, 256), THTensor_sizeStr(size->n, size->v, b2, 256), size->n, t->ndim);
    return NULL;
  }
  int64_t sizes[TH_MAX_DIMS], strides[TH_MAX_DIMS];
  int off = size->n - t->ndim;
  for (int i = size->n - 1; i >= 0; i--) {
    int td = i - off;
    int64_t want = size->v[i];
    if (td < 0) {
      if (want < 0) {
        THError_set(TH_ERR_RUNTIME, "The expanded size of the tensor (%lld) isn't allowed in a leading, non-existing dimension %d",
                    (long long)want, i);
        return NULL;
      }
      sizes[i] = want; strides[i] = 0;
      continue;
    }
    if (want == -1) want = t->sizes[td];
    if (t->sizes[td] == want) { sizes[i] = want; strides[i] = t->strides[td]; }
    else if (t->sizes[td] == 1 && want >= 0) { sizes[i] = want; strides[i] = 0; }
    else {
      THError_set(TH_ERR_RUNTIME, "The expanded size of the tensor (%lld) must match the existing size (%lld) at "
                  "non-singleton dimension %d.  Target sizes: %s.  Tensor sizes: %s",
                  (long long)want, (long long)t->sizes[td], i, THTensor_sizeStr(size->n, size->v, b1, 256),
                  THTensor_sizeStr(t->ndim, t->sizes, b2, 256));
      return NULL;
    }
  }
  return THTensor_newView(t, size->n, sizes, strides, t->offset);
}

THTensor *at_narrow(const THTensor *t, int64_t dim, int64_t start, int64_t length) {
  int64_t d;
  if (t->ndim == 0) { THError_set(TH_ERR_RUNTIME, "narrow() cannot be applied to a 0-dim tensor."); return NULL; }
  if (at_wrap_dim(dim, t->ndim, &d) < 0) return NULL;
  if (length < 0) { THError_set(TH_ERR_RUNTIME, "narrow(): length must be non-negative."); return NULL; }
  int64_t n = t->sizes[d];
  if (start < -n || start > n) {
    THError_set(TH_ERR_INDEX, "start out of range (expected to be in range of [%lld, %lld], but got %lld)",
                (long long)-n, (long long)n, (long long)start);
    return NULL;
  }
  if (start < 0) start += n;
  if (start > n - length) {
    THError_set(TH_ERR_RUNTIME, "start (%lld) + length (%lld) exceeds dimension size (%lld).",
                (long long)start, (long long)length, (long long)n);
    return NULL;
  }
  int64_t sizes[TH_MAX_DIMS];
  memcpy(sizes, t->sizes, t->ndim * sizeof(int64_t));
  sizes[d] = length;
  return THTensor_newView(t, t->ndim, sizes, t->strides, t->offset + start * t->strides[d]);
}

THTensor *at_select(const THTensor *t, int64_t dim, int64_t index) {
  int64_t d;
  if (t->ndim == 0) { THError_set(TH_ERR_INDEX, "select() cannot be applied to a 0-dim tensor."); return NULL; }
  if (at_wrap_dim(dim, t->ndim, &d) < 0) return NULL;
  int64_t n = t->sizes[d];
  if (index < -n || index >= n) {
    THError_set(TH_ERR_INDEX, "index %lld is out of bounds for dimension %lld with size %lld",
                (long long)index, (long long)d, (long long)n);
    return NULL;
  }
  if (index < 0) index += n;
  int64_t sizes[TH_MAX_DIMS], strides[TH_MAX_DIMS];
  int k = 0;
  for (int i = 0; i < t->ndim; i++)
    if (i != d) { sizes[k] = t->sizes[i]; strides[k] = t->strides[i]; k++; }
  return THTensor_newView(t, t->ndim - 1, sizes, strides, t->offset + index * t->strides[d]);
}

THTensor *at_slice(const THTensor *t, int64_t dim, ATOptInt start, ATOptInt end, int64_t step) {
  int64_t d;
  if (at_wrap_dim(dim, t->ndim, &d) < 0) return NULL;
  if (step <= 0) { THError_set(TH_ERR_VALUE, "step must be greater than zero"); return NULL; }
  int64_t n = t->sizes[d];
  int64_t s = start.has ? start.v : 0, e = end.has ? end.v : n;
  if (s < 0) s += n;
  if (e < 0) e += n;
  if (s < 0) s = 0; else if (s > n) s = n;
  if (e < s) e = s; else if (e > n) e = n;
  int64_t sizes[TH_MAX_DIMS], strides[TH_MAX_DIMS];
  memcpy(sizes, t->sizes, t->ndim * sizeof(int64_t));
  memcpy(strides, t->strides, t->ndim * sizeof(int64_t));
  sizes[d] = e == s ? 0 : (e - s - 1) / step + 1;   /* no e - s + step - 1: a huge step would overflow */
  /* a step beyond the dim leaves one element, whose stride never matters */
  if (th_mul_overflow(t->strides[d], step, &strides[d])) strides[d] = t->strides[d];
  return THTensor_newView(t, t->ndim, sizes, strides, t->offset + s * t->strides[d]);
}

/* ---- multi-output views: one op, several views of t (one autograd node holds them all) ---- */

/* n views of t along d, the i-th starting at starts[i] with length lens[i] (select when lens is NULL) */
static int views_along(ATTensorList *out, const THTensor *t, int64_t d, int64_t n, const int64_t *starts,
                       const int64_t *lens) {
  out->n = 0;
  out->v = malloc((n ? n : 1) * sizeof(THTensor *));
  if (!out->v) { THError_set(TH_ERR_MEMORY, "out of memory"); return -1; }
  for (int64_t i = 0; i < n; i++) {
    THTensor *v = lens ? at_narrow(t, d, starts[i], lens[i]) : at_select(t, d, starts[i]);
    if (!v) {
      for (int j = 0; j < out->n; j++) THTensor_free(out->v[j]);
      free(out->v);
      out->v = NULL;
      out->n = 0;
      return -1;
    }
    out->v[out->n++] = v;
  }
  return 0;
}

int at_split_views(ATTensorList *out, const THTensor *t, int64_t split_size, int64_t dim) {
  int64_t d;
  if (t->ndim == 0) { THError_set(TH_ERR_RUNTIME, "split expects at least a 1-dimensional tensor"); return -1; }
  if (at_wrap_dim(dim, t->ndim, &d) < 0) return -1;
  int64_t len = t->sizes[d];
  if (split_size < 0) {
    THError_set(TH_ERR_RUNTIME, "split expects split_size be non-negative, but got split_size=%lld", (long long)split_size);
    return -1;
  }
  if (split_size == 0 && len != 0) {
    THError_set(TH_ERR_RUNTIME, "split_size can only be 0 if dimension size is 0, but got dimension size of %lld",
                (long long)len);
    return -1;
  }
  /* a split_size of 0 (over an empty dim) still gives one (empty) piece, as torch's */
  /* the ceiling without len + split_size - 1, which wraps for a split_size near INT64_MAX (one piece) */
  int64_t n = split_size ? len / split_size + (len % split_size != 0) : 1;
  if (n == 0) n = 1;
  int64_t *starts = malloc(2 * n * sizeof(int64_t));
  if (!starts) { THError_set(TH_ERR_MEMORY, "out of memory"); return -1; }
  int64_t *lens = starts + n;
  for (int64_t i = 0; i < n; i++) {
    starts[i] = i * split_size;
    lens[i] = split_size < len - starts[i] ? split_size : len - starts[i];
  }
  int rc = views_along(out, t, d, n, starts, lens);
  free(starts);
  return rc;
}

int at_split_with_sizes_views(ATTensorList *out, const THTensor *t, const ATIntList *split_sizes, int64_t dim) {
  int64_t d;
  if (t->ndim == 0) { THError_set(TH_ERR_RUNTIME, "split expects at least a 1-dimensional tensor"); return -1; }
  if (at_wrap_dim(dim, t->ndim, &d) < 0) return -1;
  int64_t sum = 0;
  char buf[512];
  for (int i = 0; i < split_sizes->n; i++) {
    if (split_sizes->v[i] < 0) {
      THTensor_sizeStr(split_sizes->n, split_sizes->v, buf, sizeof buf);
      THError_set(TH_ERR_RUNTIME, "split_with_sizes expects split_sizes have only non-negative entries, but got "
                  "split_sizes=%s", buf);
      return -1;
    }
    sum += split_sizes->v[i];
  }
  if (sum != t->sizes[d]) {
    THTensor_sizeStr(split_sizes->n, split_sizes->v, buf, sizeof buf);
    THError_set(TH_ERR_RUNTIME, "split_with_sizes expects split_sizes to sum exactly to %lld (input tensor's size at "
                "dimension %lld), but got split_sizes=%s", (long long)t->sizes[d], (long long)d, buf);
    return -1;
  }
  int64_t n = split_sizes->n > 0 ? split_sizes->n : 0;
  int64_t *starts = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
  if (!starts) { THError_set(TH_ERR_MEMORY, "out of memory"); return -1; }
  for (int64_t i = 0, s = 0; i < n; s += split_sizes->v[i], i++) starts[i] = s;
  int rc = views_along(out, t, d, n, starts, split_sizes->v);
  free(starts);
  return rc;
}

int at_unbind_views(ATTensorList *out, const THTensor *t, int64_t dim) {
  int64_t d;
  if (t->ndim == 0) {
    THError_set(TH_ERR_INDEX, "Dimension specified as %lld but tensor has no dimensions", (long long)dim);
    return -1;
  }
  if (at_wrap_dim(dim, t->ndim, &d) < 0) return -1;
  int64_t n = t->sizes[d];
  int64_t *idx = malloc((n ? n : 1) * sizeof(int64_t));
  if (!idx) { THError_set(TH_ERR_MEMORY, "out of memory"); return -1; }
  for (int64_t i = 0; i < n; i++) idx[i] = i;
  int rc = views_along(out, t, d, n, idx, NULL);
  free(idx);
  return rc;
}

THTensor *at_squeeze(const THTensor *t) {
  int64_t sizes[TH_MAX_DIMS], strides[TH_MAX_DIMS];
  int k = 0;
  for (int i = 0; i < t->ndim; i++)
    if (t->sizes[i] != 1) { sizes[k] = t->sizes[i]; strides[k] = t->strides[i]; k++; }
  return THTensor_newView(t, k, sizes, strides, t->offset);
}

THTensor *at_squeeze_dims(const THTensor *t, const ATIntList *dims) {
  bool drop[TH_MAX_DIMS] = {0};
  for (int i = 0; i < dims->n; i++) {
    int64_t d;
    if (at_wrap_dim(dims->v[i], t->ndim, &d) < 0) return NULL;
    if (t->ndim && t->sizes[d] == 1) drop[d] = true;
  }
  int64_t sizes[TH_MAX_DIMS], strides[TH_MAX_DIMS];
  int k = 0;
  for (int i = 0; i < t->ndim; i++)
    if (!drop[i]) { sizes[k] = t->sizes[i]; strides[k] = t->strides[i]; k++; }
  return THTensor_newView(t, k, sizes, strides, t->offset);
}

THTensor *at_unsqueeze(const THTensor *t, int64_t dim) {
  int64_t d;
  if (at_wrap_dim(dim, t->ndim + 1, &d) < 0) return NULL;
  if (t->ndim + 1 > TH_MAX_DIMS) { THError_set(TH_ERR_RUNTIME, "too many dimensions"); return NULL; }
  int64_t sizes[TH_MAX_DIMS], strides[TH_MAX_DIMS];
  for (int i = 0, k = 0; i <= t->ndim; i++) {
    if (i == d) {
      sizes[i] = 1;
      strides[i] = d < t->ndim ? t->sizes[d] * t->strides[d] : 1;
    } else {
      sizes[i] = t->sizes[k]; strides[i] = t->strides[k]; k++;
    }
  }
  return THTensor_newView(t, t->ndim + 1, sizes, strides, t->offset);
}

/* flatten's result shape into *shape; 1 when one dim flattens onto itself (torch then
 * returns the input itself), -1 on a bad dim */
int at_flatten_shape(const THTensor *t, int64_t start, int64_t end, ATIntList *shape) {
  int64_t s, e;
  if (at_wrap_dim(start, t->ndim, &s) < 0 || at_wrap_dim(end, t->ndim, &e) < 0) return -1;
  if (s > e) { THError_set(TH_ERR_RUNTIME, "flatten() has invalid args: start_dim cannot come after end_dim"); return -1; }
  shape->n = 0;
  if (t->ndim == 0) { shape->v[shape->n++] = 1; return 0; }
  for (int i = 0; i < s; i++) shape->v[shape->n++] = t->sizes[i];
  int64_t m = 1;
  for (int64_t i = s; i <= e; i++) m *= t->sizes[i];
  shape->v[shape->n++] = m;
  for (int i = e + 1; i < t->ndim; i++) shape->v[shape->n++] = t->sizes[i];
  return s == e;
}

THTensor *at_flatten(const THTensor *t, int64_t start, int64_t end) {
  ATIntList shape;
  if (at_flatten_shape(t, start, end, &shape) < 0) return NULL;
  return at_reshape(t, &shape);
}

THTensor *at_unflatten(const THTensor *t, int64_t dim, const ATIntList *sizes) {
  int64_t d;
  if (at_wrap_dim(dim, t->ndim, &d) < 0) return NULL;
  if (sizes->n == 0) { THError_set(TH_ERR_RUNTIME, "unflatten: sizes must be non-empty"); return NULL; }
  ATIntList shape = { 0 };
  for (int i = 0; i < d; i++) shape.v[shape.n++] = t->sizes[i];
  int64_t prod = 1; int infer = -1;
  for (int i = 0; i < sizes->n; i++) {
    if (sizes->v[i] == -1) infer = shape.n; else prod *= sizes->v[i];
    shape.v[shape.n++] = sizes->v[i];
  }
  if (infer >= 0 && prod) shape.v[infer] = t->sizes[d] / prod;
  if ((infer >= 0 ? shape.v[infer] * prod : prod) != t->sizes[d]) {
    char b[256];
    THError_set(TH_ERR_RUNTIME, "unflatten: Provided sizes %s don't multiply up to the size of dim %lld (%lld) in the input tensor",
                THTensor_sizeStr(sizes->n, sizes->v, b, 256), (long long)d, (long long)t->sizes[d]);
    return NULL;
  }
  for (int i = d + 1; i < t->ndim; i++) shape.v[shape.n++] = t->sizes[i];
  return at_view(t, &shape);
}

THTensor *at_unfold(const THTensor *t, int64_t dim, int64_t size, int64_t step) {
  int64_t d;
  if (at_wrap_dim(dim, t->ndim, &d) < 0) return NULL;
  int64_t n = t->ndim ? t->sizes[d] : 1, st = t->ndim ? t->strides[d] : 1;
  if (size > n) {
    THError_set(TH_ERR_RUNTIME, "maximum size for tensor at dimension %lld is %lld but size is %lld",
                (long long)d, (long long)n, (long long)size);
    return NULL;
  }
  if (step <= 0) { THError_set(TH_ERR_RUNTIME, "step is %lld but must be > 0", (long long)step); return NULL; }
  int64_t sizes[TH_MAX_DIMS], strides[TH_MAX_DIMS];
  memcpy(sizes, t->sizes, t->ndim * sizeof(int64_t));
  memcpy(strides, t->strides, t->ndim * sizeof(int64_t));
  int nd = t->ndim ? t->ndim : 0;
  if (nd) { sizes[d] = (n - size) / step + 1; strides[d] = st * step; }
  sizes[nd] = size; strides[nd] = st;
  return THTensor_newView(t, nd + 1, sizes, strides, t->offset);
}

THTensor *at_movedim(const THTensor *t, const ATIntList *src, const ATIntList *dst) {
  if (src->n != dst->n) {
    THError_set(TH_ERR_RUNTIME, "movedim: Invalid source or destination dims: source (%d dims) should contain the same "
                "number of dims as destination (%d dims)", src->n, dst->n);
    return NULL;
  }
  int n = t->ndim;
  int64_t order[TH_MAX_DIMS];
  bool used_src[TH_MAX_DIMS] = {0}, used_dst[TH_MAX_DIMS] = {0};
  for (int i = 0; i < n; i++) order[i] = -1;
  for (int i = 0; i < src->n; i++) {
    int64_t s, d;
    if (at_wrap_dim(src->v[i], n, &s) < 0 || at_wrap_dim(dst->v[i], n, &d) < 0) return NULL;
    if (used_src[s] || used_dst[d]) { THError_set(TH_ERR_RUNTIME, "movedim: repeated dim in `source` or `destination`"); return NULL; }
    used_src[s] = used_dst[d] = true;
    order[d] = s;
  }
  int next = 0;
  for (int i = 0; i < n; i++) {
    if (order[i] >= 0) continue;
    while (used_src[next]) next++;
    order[i] = next++;
  }
  ATIntList perm = { n };
  memcpy(perm.v, order, n * sizeof(int64_t));
  return at_permute(t, &perm);
}

THTensor *at_diagonal(const THTensor *t, int64_t offset, int64_t dim1, int64_t dim2) {
  int64_t a, b;
  if (at_wrap_dim(dim1, t->ndim, &a) < 0 || at_wrap_dim(dim2, t->ndim, &b) < 0) return NULL;
  if (a == b) { THError_set(TH_ERR_RUNTIME, "diagonal dimensions cannot be identical %lld, %lld", (long long)dim1, (long long)dim2); return NULL; }
  /* the offset is used only once it is known to lie inside the matrix, so
   * diagonal(x, 2**63 - 1) or (x, -2**63) cannot overflow */
  int64_t len, off = t->offset;
  if (offset >= 0) len = t->sizes[a] < t->sizes[b] - offset ? t->sizes[a] : t->sizes[b] - offset;
  else len = t->sizes[a] + offset < t->sizes[b] ? t->sizes[a] + offset : t->sizes[b];
  if (len <= 0) len = 0;
  else if (offset >= 0) off += offset * t->strides[b];
  else off -= offset * t->strides[a];
  int64_t sizes[TH_MAX_DIMS], strides[TH_MAX_DIMS];
  int k = 0;
  for (int i = 0; i < t->ndim; i++)
    if (i != a && i != b) { sizes[k] = t->sizes[i]; strides[k] = t->strides[i]; k++; }
  sizes[k] = len; strides[k] = t->strides[a] + t->strides[b]; k++;
  return THTensor_newView(t, k, sizes, strides, off);
}
