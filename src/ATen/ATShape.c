/* The shape family (see ATShape.h). These ops only move bytes, so one
 * routine serves every dtype: copies are memcpy of contiguous runs, or
 * element loops typed by the element size (1, 2, 4, 8 bytes). Large outputs
 * are split over the OpenMP pool. Ownership: every THTensor a new/retain call
 * returned here is freed or returned. */
#include "ATShape.h"
#include "ATConv.h"
#include "ATScatter.h"
#include "ATCuda.h"

#include <omp.h>
#ifdef __AVX__
#include <immintrin.h>
#endif
#include <stdlib.h>
#include <string.h>

/* bytes of output below which a copy runs on one thread */
#define SHAPE_PAR_BYTES (256 * 1024)
/* the largest piece of one memcpy a thread takes */
#define SHAPE_PIECE_BYTES (128 * 1024)

static int64_t prod(const int64_t *v, int a, int b) {
  int64_t p = 1;
  for (int i = a; i < b; i++) p *= v[i];
  return p;
}

/* ---------------------------------------------------------------- cat / stack */

/* PyTorch skips 1-d empty inputs whatever the other inputs' shapes */
static bool legacy_empty(const THTensor *t) { return t->ndim == 1 && t->sizes[0] == 0; }

/* out (contiguous, dtype of every input, all inputs contiguous): each of the
 * `outer` rows of out is the inputs' rows side by side. Rows are cut into
 * pieces of at most SHAPE_PIECE_BYTES, and the pieces shared by the pool. */
/* an output at least this large is written with streaming stores: it would not
 * stay in cache anyway, and they skip reading each destination line first */
#define SHAPE_STREAM_BYTES (4 * 1024 * 1024)

/* memcpy with non-temporal stores for the 32-byte-aligned middle of dst; the
 * caller fences (_mm_sfence) before the output is read */
static void copy_streaming(char *dst, const char *src, size_t n) {
#ifdef __AVX__
  size_t head = (32 - ((uintptr_t)dst & 31)) & 31;
  if (n < head + 64) {
    memcpy(dst, src, n);
    return;
  }
  memcpy(dst, src, head);
  dst += head; src += head; n -= head;
  size_t body = n & ~(size_t)31;
  for (size_t i = 0; i < body; i += 32)
    _mm256_stream_si256((__m256i *)(dst + i), _mm256_loadu_si256((const __m256i *)(src + i)));
  memcpy(dst + body, src + body, n - body);
#else
  memcpy(dst, src, n);
#endif
}

static int cat_contiguous(THTensor *out, const ATTensorList *ts, int dim, int64_t outer, int64_t inner_bytes) {
  int n = ts->n;
  int64_t *chunk = malloc(sizeof(int64_t) * 3 * n + 1);
  if (!chunk) { THError_set(TH_ERR_MEMORY, "cat: out of memory"); return -1; }
  int64_t *pieces = chunk + n, *first = chunk + 2 * n;   /* first: prefix count of pieces */
  int64_t row = 0, per_row = 0;
  for (int i = 0; i < n; i++) {
    const THTensor *t = ts->v[i];
    chunk[i] = legacy_empty(t) ? 0 : t->sizes[dim] * inner_bytes;
    pieces[i] = (chunk[i] + SHAPE_PIECE_BYTES - 1) / SHAPE_PIECE_BYTES;
    first[i] = per_row;
    per_row += pieces[i];
    row += chunk[i];
  }
  char *dst = THTensor_data(out);
  bool same_elem = outer >= 64 && (chunk[0] == 1 || chunk[0] == 2 || chunk[0] == 4 || chunk[0] == 8);
  for (int i = 1; i < n && same_elem; i++) same_elem = chunk[i] == chunk[0];
  if (same_elem) {
    /* one element per input and row (stack along the last dim): an
     * interleave, done per block of rows input by input, so each input is
     * read in sequence and the block's strided writes stay in L1 */
    bool par = outer * row > SHAPE_PAR_BYTES && !omp_in_parallel();
    const int64_t B = 512;
#pragma omp parallel for schedule(static) if (par)
    for (int64_t ob = 0; ob < outer; ob += B) {
      int64_t oe = ob + B < outer ? ob + B : outer;
      for (int i = 0; i < n; i++) {
        const char *src = THTensor_data(ts->v[i]);
        switch (chunk[0]) {
#define INTERLEAVE(T)                                                             \
          {                                                                       \
            const T *restrict ss = (const T *)src;                                \
            T *restrict dd = (T *)dst + i;                                        \
            for (int64_t o = ob; o < oe; o++) dd[o * n] = ss[o];                  \
            break;                                                                \
          }
          case 1: INTERLEAVE(uint8_t)
          case 2: INTERLEAVE(uint16_t)
          case 4: INTERLEAVE(uint32_t)
          default: INTERLEAVE(uint64_t)
#undef INTERLEAVE
        }
      }
    }
    free(chunk);
    return 0;
  }
  if (outer >= 64 && row <= 16 * 1024) {
    /* many short rows (stack along a late dim): rows in parallel, each
     * input's run copied as a typed element when it is one */
    bool par = outer * row > SHAPE_PAR_BYTES && !omp_in_parallel();
#pragma omp parallel for schedule(static) if (par)
    for (int64_t o = 0; o < outer; o++) {
      char *d = dst + o * row;
      for (int i = 0; i < n; i++) {
        const char *src = THTensor_data(ts->v[i]) + o * chunk[i];
        switch (chunk[i]) {
          case 0: break;
          case 1: *d = *src; break;
          case 2: *(uint16_t *)d = *(const uint16_t *)src; break;
          case 4: *(uint32_t *)d = *(const uint32_t *)src; break;
          case 8: *(uint64_t *)d = *(const uint64_t *)src; break;
          default: memcpy(d, src, (size_t)chunk[i]);
        }
        d += chunk[i];
      }
    }
    free(chunk);
    return 0;
  }
  int64_t total = outer * per_row;
  bool par = outer * row > SHAPE_PAR_BYTES && !omp_in_parallel();
  bool stream = outer * row >= SHAPE_STREAM_BYTES;
#pragma omp parallel if (par)
  {
#pragma omp for schedule(static)
    for (int64_t w = 0; w < total; w++) {
      int64_t o = w / per_row, k = w % per_row;
      int i = 0;
      while (i + 1 < n && first[i + 1] <= k) i++;
      int64_t p = k - first[i], off = 0;
      for (int j = 0; j < i; j++) off += chunk[j];
      int64_t a = p * SHAPE_PIECE_BYTES, len = chunk[i] - a < SHAPE_PIECE_BYTES ? chunk[i] - a : SHAPE_PIECE_BYTES;
      if (stream) copy_streaming(dst + o * row + off + a, THTensor_data(ts->v[i]) + o * chunk[i] + a, (size_t)len);
      else memcpy(dst + o * row + off + a, THTensor_data(ts->v[i]) + o * chunk[i] + a, (size_t)len);
    }
#ifdef __AVX__
    if (stream) _mm_sfence();   /* each thread orders its streamed stores before the region's end */
#endif
  }
  free(chunk);
  return 0;
}

THTensor *at_cat(const ATTensorList *ts, int64_t dim_, THTensor *out) {
  if (ts->n == 0) {
    THError_set(TH_ERR_VALUE, "torch.cat(): expected a non-empty list of Tensors");
    return NULL;
  }
  THDtype dt = ts->v[0]->dtype;
  const THTensor *ref = NULL;
  for (int i = 0; i < ts->n; i++) {
    const THTensor *t = ts->v[i];
    if (t->ndim == 0) {
      THError_set(TH_ERR_RUNTIME, "zero-dimensional tensor (at position %d) cannot be concatenated", i);
      return NULL;
    }
    dt = at_promote_types(dt, t->dtype);
    if (!ref && !legacy_empty(t)) ref = t;
  }
  if (out && !at_can_cast(dt, out->dtype)) {
    THError_set(TH_ERR_TYPE, "torch.cat(): input types can't be cast to the desired output type %s",
                THDtype_info[out->dtype].legacy);
    return NULL;
  }
  int64_t sizes[TH_MAX_DIMS] = {0}, dim = 0;
  int nd = 1;
  if (ref) {
    nd = ref->ndim;
    if (at_wrap_dim(dim_, nd, &dim) < 0) return NULL;
    memcpy(sizes, ref->sizes, sizeof(int64_t) * nd);
    sizes[dim] = 0;
    for (int i = 0; i < ts->n; i++) {
      const THTensor *t = ts->v[i];
      if (legacy_empty(t)) continue;
      if (t->ndim != nd) {
        THError_set(TH_ERR_RUNTIME, "Tensors must have same number of dimensions: got %d and %d", nd, t->ndim);
        return NULL;
      }
      for (int d = 0; d < nd; d++)
        if (d != dim && t->sizes[d] != ref->sizes[d]) {
          THError_set(TH_ERR_RUNTIME,
                      "Sizes of tensors must match except in dimension %d. Expected size %lld but got size %lld "
                      "for tensor number %d in the list.",
                      (int)dim, (long long)ref->sizes[d], (long long)t->sizes[d], i);
          return NULL;
        }
      sizes[dim] += t->sizes[dim];
    }
  }
  /* GPU tensors: the output on their device, each input copied into its
   * slice by a device copy (at_copy_), never the host loops below */
  int dev = -1;
  {
    const THTensor **all = malloc(sizeof(THTensor *) * (ts->n + 1));
    if (!all) { THError_set(TH_ERR_MEMORY, "cat: out of memory"); return NULL; }
    for (int i = 0; i < ts->n; i++) all[i] = ts->v[i];
    all[ts->n] = out;
    int rc = at_common_device(ts->n + 1, all, "cat", &dev);
    free(all);
    if (rc < 0) return NULL;
  }
  THTensor *r;
  if (out) {
    for (int i = 0; i < ts->n; i++)
      if (ts->v[i]->storage == out->storage && THTensor_numel(ts->v[i]) > 0) {
        THError_set(TH_ERR_RUNTIME, "torch.cat(): unsupported operation: the input tensors cannot refer to any of "
                    "the output memory locations. Found overlap in input tensor %d", i);
        return NULL;
      }
    if (THTensor_resize(out, nd, sizes) < 0) return NULL;
    r = THTensor_retain(out);
  } else {
    if (!(r = at_new_on(dev, dt, nd, sizes, NULL))) return NULL;
    /* channels-last when every input is, as torch's (one contiguous input makes it contiguous, a legacy
     * empty (0,) one too: torch asks every input, the ones it skips in the copy included) */
    ATMemoryFormat f = ref ? at_suggest_format(ref) : AT_CONTIGUOUS_FORMAT;
    for (int i = 0; i < ts->n && f != AT_CONTIGUOUS_FORMAT; i++)
      if (at_suggest_format(ts->v[i]) != f) f = AT_CONTIGUOUS_FORMAT;
    if (f != AT_CONTIGUOUS_FORMAT && at_restride_format(r, f) < 0) { THTensor_free(r); return NULL; }
  }
  if (!ref || THTensor_numel(r) == 0) return r;
  bool fast = dev == -1 && THTensor_isContiguous(r);   /* host memory only (not GPU, not meta) */
  for (int i = 0; i < ts->n && fast; i++)
    fast = legacy_empty(ts->v[i]) || (ts->v[i]->dtype == r->dtype && THTensor_isContiguous(ts->v[i]));
  if (fast) {
    if (cat_contiguous(r, ts, (int)dim, prod(sizes, 0, (int)dim), prod(sizes, (int)dim + 1, nd) *
                       THDtype_size(r->dtype)) < 0) {
      THTensor_free(r);
      return NULL;
    }
    return r;
  }
  /* strided or mixed-dtype inputs: each one copied (cast) into its slice */
  int64_t off = 0;
  for (int i = 0; i < ts->n; i++) {
    const THTensor *t = ts->v[i];
    if (legacy_empty(t)) continue;
    THTensor *slice = at_narrow(r, dim, off, t->sizes[dim]);
    int rc = slice ? at_copy_(slice, t) : -1;
    THTensor_free(slice);
    if (rc < 0) { THTensor_free(r); return NULL; }
    off += t->sizes[dim];
  }
  return r;
}

THTensor *at_stack(const ATTensorList *ts, int64_t dim_, THTensor *out) {
  if (ts->n == 0) {
    THError_set(TH_ERR_RUNTIME, "stack expects a non-empty TensorList");
    return NULL;
  }
  const THTensor *t0 = ts->v[0];
  for (int i = 1; i < ts->n; i++) {
    const THTensor *t = ts->v[i];
    if (t->ndim != t0->ndim || memcmp(t->sizes, t0->sizes, sizeof(int64_t) * t0->ndim)) {
      char a[256], b[256];
      THError_set(TH_ERR_RUNTIME, "stack expects each tensor to be equal size, but got %s at entry 0 and %s at "
                  "entry %d", THTensor_sizeStr(t0->ndim, t0->sizes, a, sizeof a),
                  THTensor_sizeStr(t->ndim, t->sizes, b, sizeof b), i);
      return NULL;
    }
  }
  int64_t dim;
  if (at_wrap_dim(dim_, t0->ndim + 1, &dim) < 0) return NULL;
  THTensor **v = calloc(ts->n, sizeof(THTensor *));
  if (!v) { THError_set(TH_ERR_MEMORY, "stack: out of memory"); return NULL; }
  ATTensorList views = {ts->n, v};
  THTensor *r = NULL;
  int i = 0;
  for (; i < ts->n; i++)
    if (!(v[i] = at_unsqueeze(ts->v[i], dim))) break;
  if (i == ts->n) r = at_cat(&views, dim, out);
  for (int j = 0; j < i; j++) THTensor_free(v[j]);
  free(v);
  return r;
}

/* ---------------------------------------------------------------- flip */

/* Copies rows x len elements of es bytes: row r from p + r * rs, element j
 * at + j * s (bytes; s may be negative), into q, contiguous. One dtype
 * switch per block, so many short rows (a flip of the last dim) cost a typed
 * loop each rather than a call; a reversed run is a loop the compiler
 * vectorizes. */
static void copy_block(char *q, const char *p, int64_t rows, int64_t len, int64_t rs, int64_t s, int es) {
  if (s == es) {   /* contiguous rows: memcpy each (one call when they follow each other) */
    if (rs == len * es) { memcpy(q, p, (size_t)(rows * len * es)); return; }
    for (int64_t r = 0; r < rows; r++) memcpy(q + r * len * es, p + r * rs, (size_t)(len * es));
    return;
  }
  switch (es) {
#define BLOCK_CASE(T)                                                                         \
    case sizeof(T): {                                                                         \
      T *restrict qq = (T *)q;                                                                \
      int64_t rr = rs / (int64_t)sizeof(T);                                                   \
      if (s == -es) {                                                                         \
        const T *pp = (const T *)p - (len - 1);                                               \
        for (int64_t r = 0; r < rows; r++, qq += len, pp += rr)                               \
          for (int64_t j = 0; j < len; j++) qq[j] = pp[len - 1 - j];                          \
      } else {                                                                                \
        const T *pp = (const T *)p;                                                           \
        int64_t ss = s / (int64_t)sizeof(T);                                                  \
        for (int64_t r = 0; r < rows; r++, qq += len, pp += rr)                               \
          for (int64_t j = 0; j < len; j++) qq[j] = pp[j * ss];                               \
      }                                                                                       \
      return;                                                                                 \
    }
    BLOCK_CASE(uint8_t)
    BLOCK_CASE(uint16_t)
    BLOCK_CASE(uint32_t)
    BLOCK_CASE(uint64_t)
#undef BLOCK_CASE
    default:
      for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < len; j++) memcpy(q + (r * len + j) * es, p + r * rs + j * s, (size_t)es);
  }
}

/* Copies, for every index of a tensor of sizes sz (nd dims, the last one
 * innermost), the element at src + sum(index[d] * st[d]) bytes (st may be
 * negative) into dst, contiguous. Each thread takes one block of the output,
 * split anywhere (inside a row too, so one long row is shared as well): it
 * finds its first row's offset once and then steps the row counters. */
static void gather_rows(char *dst, const char *src, int nd, const int64_t *sz, const int64_t *st, int es) {
  int64_t n = sz[nd - 1], s = st[nd - 1], total = prod(sz, 0, nd);
  int nt = total * es > SHAPE_PAR_BYTES && !omp_in_parallel() ? at_get_num_threads() : 1;
#pragma omp parallel num_threads(nt) if (nt > 1)
  {
    int k = omp_get_num_threads(), t = omp_get_thread_num();
    int64_t e0 = total * t / k, left = total * (t + 1) / k - e0;
    int64_t idx[TH_MAX_DIMS], rem = e0 / n, c = e0 % n, off = 0;
    for (int d = nd - 2; d >= 0; d--) {
      idx[d] = rem % sz[d];
      off += idx[d] * st[d];
      rem /= sz[d];
    }
    char *q = dst + e0 * es;
    while (left > 0) {
      if (c == 0 && nd >= 2 && left >= n) {   /* whole rows: the rest of this run of rows as one 2-d block */
        int64_t rows = sz[nd - 2] - idx[nd - 2];
        if (rows > left / n) rows = left / n;
        copy_block(q, src + off, rows, n, st[nd - 2], s, es);
        q += rows * n * es;
        left -= rows * n;
        off += rows * st[nd - 2];
        idx[nd - 2] += rows;
        if (idx[nd - 2] < sz[nd - 2]) continue;
        off -= idx[nd - 2] * st[nd - 2];   /* carry into the outer dims */
        idx[nd - 2] = 0;
        for (int d = nd - 3; d >= 0; d--) {
          off += st[d];
          if (++idx[d] < sz[d]) break;
          off -= idx[d] * st[d];
          idx[d] = 0;
        }
        continue;
      }
      int64_t len = n - c < left ? n - c : left;
      copy_block(q, src + off + c * s, 1, len, 0, s, es);
      q += len * es;
      left -= len;
      c = 0;
      for (int d = nd - 2; d >= 0; d--) {   /* the next row */
        off += st[d];
        if (++idx[d] < sz[d]) break;
        off -= idx[d] * st[d];
        idx[d] = 0;
      }
    }
  }
}

/* Reads dims ATIntList of self into a mask of wrapped dims; -1 on a bad or
 * repeated dim. */
static int dims_mask(const ATIntList *dims, int nd, bool *mask) {
  memset(mask, 0, sizeof(bool) * TH_MAX_DIMS);
  for (int i = 0; dims && i < dims->n; i++) {
    int64_t d;
    if (at_wrap_dim(dims->v[i], nd, &d) < 0) return -1;
    if (mask[d]) {
      THError_set(TH_ERR_RUNTIME, "dim %lld appears multiple times in the list of dims", (long long)d);
      return -1;
    }
    mask[d] = true;
  }
  return 0;
}

/* flip on a GPU: one gather launch with no index (src/THC/THCIndex.cu) that
 * reads self through the flipped view's element strides (negative along the
 * flipped dims, from their last element) into the contiguous result */
static int flip_cuda(THTensor *r, const THTensor *self, const bool *mask) {
  ATCudaIndex C;
  memset(&C, 0, sizeof C);
  C.op = AT_IDX_GATHER;
  C.dt = self->dtype;
  C.ndim = self->ndim ? self->ndim : 1;
  C.nidx = 0;
  C.skip = INT64_MIN;
  int64_t start = 0;
  for (int d = 0; d < self->ndim; d++) {
    C.sizes[d] = self->sizes[d];
    C.ss[d] = mask[d] ? -self->strides[d] : self->strides[d];
    if (mask[d]) start += (self->sizes[d] - 1) * self->strides[d];
    C.os[d] = r->strides[d];
  }
  if (self->ndim == 0) { C.sizes[0] = 1; C.ss[0] = C.os[0] = 1; }
  C.self = (char *)THTensor_data(self) + start * THDtype_size(self->dtype);
  C.other = THTensor_data(r);
  return at_cuda->index(&C) == 0 ? 0 : -1;
}

THTensor *at_flip(const THTensor *self, const ATIntList *dims) {
  bool mask[TH_MAX_DIMS];
  if (dims_mask(dims, self->ndim, mask) < 0) return NULL;
  THTensor *r = at_new_on(THTensor_device(self), self->dtype, self->ndim, self->sizes, NULL);
  if (!r || THTensor_numel(r) == 0) return r;
  if (THTensor_device(self) >= 0) {
    if (flip_cuda(r, self, mask) < 0) { THTensor_free(r); return NULL; }
    return r;
  }
  int es = THDtype_size(self->dtype);
  /* the flipped view in bytes: flipped dims start at their last element and
   * step backwards; size-1 dims are dropped and mergeable dims merged */
  const char *src = THTensor_data(self);
  int64_t sz[TH_MAX_DIMS], st[TH_MAX_DIMS];
  int nd = 0;
  for (int d = 0; d < self->ndim; d++) {
    int64_t n = self->sizes[d], s = self->strides[d] * es;
    if (n == 1) continue;
    if (mask[d]) { src += (n - 1) * s; s = -s; }
    if (nd > 0 && st[nd - 1] == s * n) {
      sz[nd - 1] *= n;
      st[nd - 1] = s;
    } else {
      sz[nd] = n;
      st[nd++] = s;
    }
  }
  if (nd == 0) { sz[0] = 1; st[0] = es; nd = 1; }
  gather_rows(THTensor_data(r), src, nd, sz, st, es);
  return r;
}

THTensor *at_fliplr(const THTensor *self) {
  if (self->ndim < 2) {
    THError_set(TH_ERR_RUNTIME, "Input must be >= 2-d.");
    return NULL;
  }
  return at_flip(self, &(ATIntList){1, {1}});
}

THTensor *at_flipud(const THTensor *self) {
  if (self->ndim < 1) {
    THError_set(TH_ERR_RUNTIME, "Input must be >= 1-d.");
    return NULL;
  }
  return at_flip(self, &(ATIntList){1, {0}});
}

/* ---------------------------------------------------------------- roll */

THTensor *at_diag_embed(const THTensor *self, int64_t offset, int64_t dim1, int64_t dim2) {
  int nd = self->ndim + 1;
  int64_t d1, d2;
  if (nd > TH_MAX_DIMS) { THError_set(TH_ERR_RUNTIME, "diag_embed: too many dimensions"); return NULL; }
  if (at_wrap_dim(dim1, nd, &d1) < 0 || at_wrap_dim(dim2, nd, &d2) < 0) return NULL;
  if (d1 == d2) {
    THError_set(TH_ERR_RUNTIME, "diagonal dimensions cannot be identical %lld, %lld", (long long)dim1, (long long)dim2);
    return NULL;
  }
  uint64_t un = (uint64_t)self->sizes[self->ndim - 1] + (offset < 0 ? -(uint64_t)offset : (uint64_t)offset);
  if (un > (uint64_t)INT64_MAX) {   /* torch's words for a size beyond int64 (shown wrapped, as it does) */
    THError_set(TH_ERR_RUNTIME, "IntArrayRef contains an int that cannot be represented as a SymInt: %lld",
                (long long)(int64_t)un);
    return NULL;
  }
  int64_t n = (int64_t)un;
  /* the result's dims: self's leading dims in order, with the two diagonal dims (n each) at d1 and d2; the
   * diagonal of those is self (diagonal() puts the diagonal last), so diagonal's backward builds it */
  ATIntList sizes = { nd, {0} };
  for (int i = 0, k = 0; i < nd; i++) sizes.v[i] = (i == d1 || i == d2) ? n : self->sizes[k++];
  return at_diagonal_backward(self, &sizes, offset, d1, d2);
}

THTensor *at_roll(const THTensor *self, const ATIntList *shifts, const ATIntList *dims) {
  int nshift = shifts ? shifts->n : 0, ndims = dims ? dims->n : 0;
  if (nshift == 0) {
    THError_set(TH_ERR_RUNTIME, "`shifts` required");
    return NULL;
  }
  if (ndims == 0 && nshift == 1) {   /* the flattened tensor, rolled, in self's shape */
    THTensor *c = at_contiguous(self);
    if (!c) return NULL;
    int64_t n = THTensor_numel(c);
    ATIntList flat = {1, {n}}, d0 = {1, {0}};
    THTensor *f = at_view(c, &flat);
    THTensor_free(c);
    if (!f) return NULL;
    THTensor *rf = at_roll(f, shifts, &d0);
    THTensor_free(f);
    if (!rf) return NULL;
    ATIntList shape = {self->ndim};
    memcpy(shape.v, self->sizes, sizeof(int64_t) * self->ndim);
    THTensor *r = at_view(rf, &shape);
    THTensor_free(rf);
    return r;
  }
  if (nshift != ndims) {
    THError_set(TH_ERR_RUNTIME, "shifts and dimensions must align. shifts: %d, dims:%d", nshift, ndims);
    return NULL;
  }
  /* per dim the amount s in [0, n): out[(i + s) % n] = in[i] (a dim named
   * twice rolls by the sum); only dims with s != 0 are split */
  if (self->ndim == 0) {   /* roll does not wrap a 0-d tensor's dims, as torch */
    THError_set(TH_ERR_INDEX, "Dimension specified as %lld but tensor has no dimensions", (long long)dims->v[0]);
    return NULL;
  }
  int64_t tot[TH_MAX_DIMS] = {0}, dim[TH_MAX_DIMS], s[TH_MAX_DIMS];
  for (int k = 0; k < ndims; k++) {
    int64_t d;
    if (at_wrap_dim(dims->v[k], self->ndim, &d) < 0) return NULL;
    int64_t n = self->sizes[d];
    if (n) tot[d] = (((tot[d] + shifts->v[k]) % n) + n) % n;
  }
  int k = 0;
  for (int d = 0; d < self->ndim; d++)
    if (tot[d]) { dim[k] = d; s[k++] = tot[d]; }
  THTensor *r = at_new_on(THTensor_device(self), self->dtype, self->ndim, self->sizes, NULL);
  if (!r || THTensor_numel(r) == 0) return r;
  /* 2^k blocks: for each rolled dim, the input's head [0, n-s) goes to
   * [s, n) and its tail [n-s, n) to [0, s) */
  for (int64_t b = 0; b < (1LL << k); b++) {
    THTensor *in = THTensor_retain((THTensor *)self), *o = THTensor_retain(r);
    for (int j = 0; j < k; j++) {
      int64_t n = self->sizes[dim[j]], head = n - s[j];
      bool tail = (b >> j) & 1;
      int64_t istart = tail ? head : 0, len = tail ? s[j] : head, ostart = tail ? 0 : s[j];
      THTensor *in2 = at_narrow(in, dim[j], istart, len), *o2 = at_narrow(o, dim[j], ostart, len);
      THTensor_free(in);
      THTensor_free(o);
      in = in2;
      o = o2;
      if (!in || !o) { THTensor_free(in); THTensor_free(o); THTensor_free(r); return NULL; }
    }
    int rc = at_copy_(o, in);
    THTensor_free(in);
    THTensor_free(o);
    if (rc < 0) { THTensor_free(r); return NULL; }
  }
  return r;
}

/* ---------------------------------------------------------------- repeat_interleave */

/* repeats (0-d/1-d int32/int64, or `repeat` when NULL) as n counts; NULL
 * (error set) when they do not fit. n == -1: as many as repeats has. */
static int64_t *repeat_counts(const THTensor *repeats, int64_t repeat, int64_t *n) {
  int64_t *c;
  if (!repeats) {
    if (repeat < 0) {
      THError_set(TH_ERR_RUNTIME, "Repeats must be non-negative");
      return NULL;
    }
    c = malloc(sizeof(int64_t) * (*n > 0 ? *n : 1));
    if (!c) { THError_set(TH_ERR_MEMORY, "repeat_interleave: out of memory"); return NULL; }
    for (int64_t i = 0; i < *n; i++) c[i] = repeat;
    return c;
  }
  if (repeats->ndim > 1) {
    THError_set(TH_ERR_RUNTIME, "repeats must be 0-dim or 1-dim tensor");
    return NULL;
  }
  if (repeats->dtype != TH_Int32 && repeats->dtype != TH_Int64) {
    THError_set(TH_ERR_NOTIMPL, "\"repeat_interleave_cpu\" not implemented for '%s'", THDtype_info[repeats->dtype].legacy);
    return NULL;
  }
  int64_t m = THTensor_numel(repeats);
  bool bcast = m == 1 && *n >= 0;   /* one count for every slice */
  if (*n < 0) *n = m;
  else if (!bcast && m != *n) {
    THError_set(TH_ERR_RUNTIME, "repeats must have the same size as input along dim, but got repeats.size(0) = %lld "
                "and input.size(0) = %lld", (long long)m, (long long)*n);
    return NULL;
  }
  c = malloc(sizeof(int64_t) * (*n > 0 ? *n : 1));
  if (!c) { THError_set(TH_ERR_MEMORY, "repeat_interleave: out of memory"); return NULL; }
  const char *p = THTensor_data(repeats);
  int64_t st = repeats->ndim ? repeats->strides[0] : 0;
  for (int64_t i = 0; i < *n; i++) {
    int64_t j = bcast ? 0 : i * st;
    c[i] = repeats->dtype == TH_Int32 ? ((const int32_t *)p)[j] : ((const int64_t *)p)[j];
    if (c[i] < 0) {
      THError_set(TH_ERR_RUNTIME, "repeats can not be negative");
      free(c);
      return NULL;
    }
  }
  return c;
}

/* prefix sums of counts (n + 1 entries), checked against output_size */
static int64_t *count_offsets(const int64_t *c, int64_t n, ATOptInt output_size) {
  int64_t *pre = malloc(sizeof(int64_t) * (n + 1));
  if (!pre) { THError_set(TH_ERR_MEMORY, "repeat_interleave: out of memory"); return NULL; }
  pre[0] = 0;
  for (int64_t i = 0; i < n; i++) pre[i + 1] = pre[i] + c[i];
  if (output_size.has && output_size.v != pre[n]) {
    THError_set(TH_ERR_RUNTIME, "allocated size does not match required size");
    free(pre);
    return NULL;
  }
  return pre;
}

/* dst[e R + k] = src[e] for k < R, e < m: single elements (the last dim)
 * repeated a few times each. R and the width fixed at compile time make the
 * loop one vector load, shuffles and R stores per lane group, where a loop per
 * element's R copies runs a short scalar loop each. */
#define REPEAT_LOOP(T, R)                                                                     \
  {                                                                                           \
    const T *restrict ss = (const T *)src;                                                    \
    T *restrict dd = (T *)dst;                                                                \
    _Pragma("omp parallel for schedule(static) if (par)")                                     \
    for (int64_t e = 0; e < m; e++)                                                           \
      for (int k = 0; k < R; k++) dd[e * R + k] = ss[e];                                      \
    return;                                                                                   \
  }
#define REPEAT_WIDTH(T)                                                                       \
  switch (R) {                                                                                \
    case 2: REPEAT_LOOP(T, 2)                                                                 \
    case 3: REPEAT_LOOP(T, 3)                                                                 \
    default: REPEAT_LOOP(T, 4)                                                                \
  }
static void repeat_elements(char *dst, const char *src, int64_t m, int64_t R, int es, bool par) {
#ifdef __AVX2__
  if (es == 4) {   /* 8 elements give R vectors, each a lane permutation of them: lane l of vector j is (8 j + l) / R */
    __m256i perm[4];
    for (int j = 0; j < R; j++) {
      int ix[8];
      for (int l = 0; l < 8; l++) ix[l] = (int)((8 * j + l) / R);
      perm[j] = _mm256_loadu_si256((const __m256i *)ix);
    }
    const float *ss = (const float *)src;
    float *dd = (float *)dst;
    int64_t blocks = m / 8;
#pragma omp parallel for schedule(static) if (par)
    for (int64_t b = 0; b < blocks; b++) {
      __m256 x = _mm256_loadu_ps(ss + 8 * b);
      for (int j = 0; j < R; j++) _mm256_storeu_ps(dd + 8 * (b * R + j), _mm256_permutevar8x32_ps(x, perm[j]));
    }
    for (int64_t e = blocks * 8; e < m; e++)
      for (int k = 0; k < R; k++) dd[e * R + k] = ss[e];
    return;
  }
#endif
  switch (es) {
    case 1: REPEAT_WIDTH(uint8_t)
    case 2: REPEAT_WIDTH(uint16_t)
    case 4: REPEAT_WIDTH(uint32_t)
    default: REPEAT_WIDTH(uint64_t)
  }
}
#undef REPEAT_WIDTH
#undef REPEAT_LOOP

THTensor *at_repeat_interleave(const THTensor *self, const THTensor *repeats, int64_t repeat, ATOptInt dim_,
                               ATOptInt output_size) {
  if (!dim_.has) {   /* over the flattened input */
    THTensor *c = at_contiguous(self);
    if (!c) return NULL;
    ATIntList flat = {1, {THTensor_numel(c)}};
    THTensor *f = at_view(c, &flat);
    THTensor_free(c);
    if (!f) return NULL;
    THTensor *r = at_repeat_interleave(f, repeats, repeat, (ATOptInt){true, 0}, output_size);
    THTensor_free(f);
    return r;
  }
  int64_t dim;
  if (at_wrap_dim(dim_.v, self->ndim, &dim) < 0) return NULL;
  int nd = self->ndim ? self->ndim : 1;
  int64_t sizes[TH_MAX_DIMS];
  if (self->ndim) memcpy(sizes, self->sizes, sizeof(int64_t) * nd);
  else sizes[0] = 1;
  int64_t n = sizes[dim];
  int64_t *c = repeat_counts(repeats, repeat, &n);
  if (!c) return NULL;
  int64_t *pre = count_offsets(c, n, output_size);
  if (!pre) { free(c); return NULL; }
  THTensor *x = at_contiguous(self), *r = NULL;
  int64_t total = pre[n];
  sizes[dim] = total;
  if (x) r = THTensor_new(self->dtype, nd, sizes);
  if (r && THTensor_numel(r) > 0) {
    int es = THDtype_size(self->dtype);
    int64_t outer = prod(sizes, 0, (int)dim), inner = prod(sizes, (int)dim + 1, nd) * es;
    const char *src = THTensor_data(x);
    char *dst = THTensor_data(r);
    bool par = THTensor_numel(r) * es > SHAPE_PAR_BYTES && !omp_in_parallel();
    bool same = true;   /* one count R for every slice */
    for (int64_t i = 1; i < n && same; i++) same = c[i] == c[0];
    if (same && inner == es && c[0] >= 2 && c[0] <= 4 && (es == 4 || es == 8 || es == 2 || es == 1))
      repeat_elements(dst, src, outer * n, c[0], es, par);
    else
    /* (i, o) pairs in parallel, o-major (rows stay in cache) */
#pragma omp parallel for collapse(2) schedule(static) if (par)
    for (int64_t o = 0; o < outer; o++)
      for (int64_t i = 0; i < n; i++) {
        const char *s = src + (o * n + i) * inner;
        char *d = dst + (o * total + pre[i]) * inner;
        switch (inner) {   /* single elements: a typed fill */
#define FILL_CASE(T)                                                                   \
          case sizeof(T): {                                                             \
            T v;                                                                        \
            memcpy(&v, s, sizeof(T));                                                   \
            for (int64_t k = 0; k < c[i]; k++) ((T *)d)[k] = v;                         \
            break;                                                                      \
          }
          FILL_CASE(uint8_t)
          FILL_CASE(uint16_t)
          FILL_CASE(uint32_t)
          FILL_CASE(uint64_t)
#undef FILL_CASE
          default:
            for (int64_t k = 0; k < c[i]; k++) memcpy(d + k * inner, s, (size_t)inner);
        }
      }
  }
  THTensor_free(x);
  free(c);
  free(pre);
  return r;
}

THTensor *at_repeat_interleave_index(const THTensor *repeats, ATOptInt output_size) {
  int64_t n = -1;
  if (repeats->ndim != 1) {
    THError_set(TH_ERR_RUNTIME, "repeat_interleave only accept 1D vector as repeat");
    return NULL;
  }
  int64_t *c = repeat_counts(repeats, 0, &n);
  if (!c) return NULL;
  int64_t *pre = count_offsets(c, n, output_size);
  THTensor *r = pre ? THTensor_new(repeats->dtype, 1, &pre[n]) : NULL;
  if (r) {
    char *d = THTensor_data(r);
    for (int64_t i = 0; i < n; i++)
      for (int64_t k = pre[i]; k < pre[i + 1]; k++) {
        if (repeats->dtype == TH_Int32) ((int32_t *)d)[k] = (int32_t)i;
        else ((int64_t *)d)[k] = i;
      }
  }
  free(c);
  free(pre);
  return r;
}

THTensor *at_repeat_interleave_backward(const THTensor *grad, const ATIntList *sizes, ATOptInt dim_,
                                        const THTensor *repeats, int64_t repeat) {
  int nd = sizes->n;
  int64_t sz[TH_MAX_DIMS], dim = 0;
  if (!dim_.has) {   /* over the flattened input */
    sz[0] = prod(sizes->v, 0, nd);
    nd = 1;
  } else {
    memcpy(sz, sizes->v, sizeof(int64_t) * nd);
    if (nd == 0) { sz[0] = 1; nd = 1; }
    if (at_wrap_dim(dim_.v, nd, &dim) < 0) return NULL;
  }
  int64_t n = sz[dim], outer = prod(sz, 0, (int)dim), inner = prod(sz, (int)dim + 1, nd);
  ATIntList shape = {sizes->n};
  memcpy(shape.v, sizes->v, sizeof(int64_t) * sizes->n);
  THTensor *r = NULL;
  if (!repeats || THTensor_numel(repeats) == 1) {
    /* every slice repeated k times: grad viewed as (outer, n, k, inner), summed over k */
    if (repeats && !THDtype_isIntegral(repeats->dtype, false)) {
      THError_set(TH_ERR_RUNTIME, "repeat_interleave_backward: repeats has to be an integer tensor, got %s",
                  THDtype_info[repeats->dtype].name);
      return NULL;
    }
    int64_t k = repeats ? at_item_int(repeats) : repeat;
    ATIntList v4 = {4, {outer, n, k, inner}}, two = {1, {2}};
    THTensor *g4 = at_reshape(grad, &v4);
    THTensor *s = g4 ? at_sum(g4, &two, false, grad->dtype, NULL) : NULL;
    THTensor_free(g4);
    r = s ? at_reshape(s, &shape) : NULL;
    THTensor_free(s);
    return r;
  }
  /* per-slice counts: index_add of grad's slices into slice index i */
  ATOptInt none = {false, 0};
  THTensor *ar = at_arange(at_scalar_int(0), at_scalar_int(n), at_scalar_int(1), TH_Int64, true);
  THTensor *idx = ar ? at_repeat_interleave(ar, repeats, 0, (ATOptInt){true, 0}, none) : NULL;
  int64_t oi = outer * inner;
  ATIntList v3 = {3, {outer, oi ? THTensor_numel(grad) / oi : 0, inner}};
  ATIntList z3 = {3, {outer, n, inner}};
  THTensor *g3 = idx ? at_reshape(grad, &v3) : NULL;
  THTensor *zeros = g3 ? at_full(&z3, at_scalar_int(0), grad->dtype) : NULL;
  THTensor *acc = zeros ? at_index_add_c(zeros, 1, idx, g3, at_scalar_int(1), NULL) : NULL;
  r = acc ? at_reshape(acc, &shape) : NULL;
  THTensor_free(ar);
  THTensor_free(idx);
  THTensor_free(g3);
  THTensor_free(zeros);
  THTensor_free(acc);
  return r;
}

/* ---------------------------------------------------------------- F.unfold / F.fold */

/* The checks PyTorch's im2col/col2im share; g gets the window geometry. */
static int window_args(ConvGeom *g, const ATIntList *k, const ATIntList *d, const ATIntList *p, const ATIntList *s) {
  g->KH = k->v[0]; g->KW = k->v[k->n > 1];
  g->DH = d->v[0]; g->DW = d->v[d->n > 1];
  g->PH = p->v[0]; g->PW = p->v[p->n > 1];
  g->SH = s->v[0]; g->SW = s->v[s->n > 1];
  if (g->KH <= 0 || g->KW <= 0) {
    THError_set(TH_ERR_RUNTIME, "kernel size should be greater than zero, but got kernel_height: %lld kernel_width: "
                "%lld", (long long)g->KH, (long long)g->KW);
    return -1;
  }
  if (g->SH <= 0 || g->SW <= 0) {
    THError_set(TH_ERR_RUNTIME, "stride should be greater than zero, but got stride_height: %lld stride_width: %lld",
                (long long)g->SH, (long long)g->SW);
    return -1;
  }
  if (g->DH <= 0 || g->DW <= 0) {
    THError_set(TH_ERR_RUNTIME, "dilation should be greater than zero, but got dilation_height: %lld "
                "dilation_width: %lld", (long long)g->DH, (long long)g->DW);
    return -1;
  }
  if (g->PH < 0 || g->PW < 0) {
    THError_set(TH_ERR_RUNTIME, "padding should be non-negative, but got pad_height: %lld pad_width: %lld",
                (long long)g->PH, (long long)g->PW);
    return -1;
  }
  g->OH = (g->H + 2 * g->PH - (g->DH * (g->KH - 1) + 1)) / g->SH + 1;
  g->OW = (g->W + 2 * g->PW - (g->DW * (g->KW - 1) + 1)) / g->SW + 1;
  return 0;
}

/* the dtype the kernels run in: float/double as they are, half/bfloat16/bool
 * through float; integers are refused as PyTorch does */
static THDtype window_dtype(const THTensor *t, const char *op) {
  if (t->dtype == TH_Float || t->dtype == TH_Double) return t->dtype;
  if (t->dtype == TH_Half || t->dtype == TH_BFloat16 || t->dtype == TH_Bool) return TH_Float;
  THError_set(TH_ERR_NOTIMPL, "\"%s\" not implemented for '%s'", op, THDtype_info[t->dtype].legacy);
  return TH_Undefined;
}

/* r (allocated in compute dtype ct) as the input's dtype */
static THTensor *as_input_dtype(THTensor *r, THDtype dt) {
  if (!r || r->dtype == dt) return r;
  THTensor *c = at_to_dtype(r, dt, false);
  THTensor_free(r);
  return c;
}

THTensor *at_im2col(const THTensor *self, const ATIntList *kernel_size, const ATIntList *dilation,
                    const ATIntList *padding, const ATIntList *stride) {
  bool batched = self->ndim == 4;
  bool ok = self->ndim == 3 || self->ndim == 4;
  for (int d = batched ? 1 : 0; ok && d < self->ndim; d++) ok = self->sizes[d] != 0;
  if (!ok) {
    char buf[256];
    THError_set(TH_ERR_RUNTIME, "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
                "dimensions for input, but got: %s", THTensor_sizeStr(self->ndim, self->sizes, buf, sizeof buf));
    return NULL;
  }
  ConvGeom g = {0};
  int b = batched ? 1 : 0;
  g.N = batched ? self->sizes[0] : 1;
  g.C = self->sizes[b];
  g.H = self->sizes[b + 1];
  g.W = self->sizes[b + 2];
  if (window_args(&g, kernel_size, dilation, padding, stride) < 0) return NULL;
  if (g.OH < 1 || g.OW < 1) {
    THError_set(TH_ERR_RUNTIME, "Given input with spatial size (%lld, %lld), kernel_size=(%lld, %lld), "
                "dilation=(%lld, %lld), padding=(%lld, %lld), calculated shape of the array of sliding blocks as "
                "(%lld, %lld), but its components must be at least one.", (long long)g.H, (long long)g.W,
                (long long)g.KH, (long long)g.KW, (long long)g.DH, (long long)g.DW, (long long)g.PH,
                (long long)g.PW, (long long)g.OH, (long long)g.OW);
    return NULL;
  }
  THDtype ct = window_dtype(self, "im2col_out_cpu");
  if (ct == TH_Undefined) return NULL;
  THTensor *x = at_contiguous_as(self, ct);
  if (!x) return NULL;
  int64_t sizes[3] = {g.N, g.C * g.KH * g.KW, g.OH * g.OW};
  THTensor *r = THTensor_new(ct, batched ? 3 : 2, batched ? sizes : sizes + 1);
  if (r && THTensor_numel(r) > 0) at_im2col_images(ct == TH_Double, THTensor_data(x), THTensor_data(r), &g);
  THTensor_free(x);
  return as_input_dtype(r, self->dtype);
}

THTensor *at_col2im(const THTensor *self, const ATIntList *output_size, const ATIntList *kernel_size,
                    const ATIntList *dilation, const ATIntList *padding, const ATIntList *stride) {
  bool batched = self->ndim == 3;
  bool ok = self->ndim == 2 || self->ndim == 3;
  for (int d = batched ? 1 : 0; ok && d < self->ndim; d++) ok = self->sizes[d] != 0;
  if (!ok) {
    char buf[256];
    THError_set(TH_ERR_RUNTIME, "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and "
                "non-zero dimensions for input, but got: %s", THTensor_sizeStr(self->ndim, self->sizes, buf, sizeof buf));
    return NULL;
  }
  ConvGeom g = {0};
  int b = batched ? 1 : 0;
  g.N = batched ? self->sizes[0] : 1;
  g.H = output_size->v[0];
  g.W = output_size->v[output_size->n > 1];
  if (window_args(&g, kernel_size, dilation, padding, stride) < 0) return NULL;
  int64_t ckk = self->sizes[b], L = self->sizes[b + 1], taps = g.KH * g.KW;
  if (ckk % taps) {
    THError_set(TH_ERR_RUNTIME, "Expected size of input's dimension 1 to be divisible by the product of kernel_size, "
                "but got input.size(1)=%lld and kernel_size=(%lld, %lld).", (long long)ckk, (long long)g.KH,
                (long long)g.KW);
    return NULL;
  }
  if (g.OH < 1 || g.OW < 1 || g.OH * g.OW != L) {
    const char *fmt = g.OH * g.OW == L
        ? "Given output_size=(%lld, %lld), kernel_size=(%lld, %lld), dilation=(%lld, %lld), padding=(%lld, %lld), "
          "stride=(%lld, %lld), calculated shape of the array of sliding blocks as (%lld, %lld), which is too small "
          "(non-positive)%.0lld"
        : "Given output_size=(%lld, %lld), kernel_size=(%lld, %lld), dilation=(%lld, %lld), padding=(%lld, %lld), "
          "stride=(%lld, %lld), expected size of input's dimension 2 to match the calculated number of sliding "
          "blocks %lld * %lld = %lld, but got input.size(2)=%lld.";
    THError_set(TH_ERR_RUNTIME, fmt, (long long)g.H, (long long)g.W, (long long)g.KH, (long long)g.KW,
                (long long)g.DH, (long long)g.DW, (long long)g.PH, (long long)g.PW, (long long)g.SH,
                (long long)g.SW, (long long)g.OH, (long long)g.OW, (long long)(g.OH * g.OW), (long long)L);
    return NULL;
  }
  g.C = ckk / taps;
  THDtype ct = window_dtype(self, "col2im_out_cpu");
  if (ct == TH_Undefined) return NULL;
  THTensor *col = at_contiguous_as(self, ct);
  if (!col) return NULL;
  int64_t sizes[4] = {g.N, g.C, g.H, g.W};
  THTensor *r = THTensor_new(ct, batched ? 4 : 3, batched ? sizes : sizes + 1);
  if (r && THTensor_numel(r) > 0) at_col2im_images(ct == TH_Double, THTensor_data(col), THTensor_data(r), &g);
  THTensor_free(col);
  return as_input_dtype(r, self->dtype);
}

/* One output filled with value and the (cropped) input copied into its interior: the composite it
 * replaces built a cat of two full() blocks per padded dim, 1.7-2x torch's time. */
THTensor *at_constant_pad_nd(const THTensor *self, const ATIntList *pad, ATScalar value) {
  if (pad->n % 2) {
    THError_set(TH_ERR_RUNTIME, "Length of pad must be even but instead it equals %d", pad->n);
    return NULL;
  }
  if (pad->n / 2 > self->ndim) {   /* torch's message, its missing spaces included */
    THError_set(TH_ERR_RUNTIME, "Length of pad should be no more than twice the number of dimensions of the input. "
                "Pad length is %dwhile the input has %ddimensions.", pad->n, self->ndim);
    return NULL;
  }
  int nd = self->ndim;
  int64_t osz[TH_MAX_DIMS], isz[TH_MAX_DIMS], ioff = self->offset, ooff = 0;
  bool grows = false;
  for (int d = 0; d < nd; d++) osz[d] = isz[d] = self->sizes[d];
  for (int i = 0; i < pad->n / 2; i++) {
    int d = nd - 1 - i;
    int64_t lo = pad->v[2 * i], hi = pad->v[2 * i + 1];
    int64_t kept = self->sizes[d] + (lo < 0 ? lo : 0) + (hi < 0 ? hi : 0);
    if (kept < 0) {
      THError_set(TH_ERR_RUNTIME, "narrow(): length must be non-negative.");
      return NULL;
    }
    isz[d] = kept;
    osz[d] = self->sizes[d] + lo + hi;
    if (lo < 0) ioff += -lo * self->strides[d];
    grows |= lo > 0 || hi > 0;
  }
  THTensor *out = at_new_on(THTensor_device(self), self->dtype, nd, osz, NULL);
  if (!out) return NULL;
  for (int i = 0; i < pad->n / 2; i++) {
    int64_t lo = pad->v[2 * i];
    if (lo > 0) ooff += lo * out->strides[nd - 1 - i];
  }
  THTensor *src = THTensor_newView(self, nd, isz, self->strides, ioff);
  THTensor *dst = src ? THTensor_newView(out, nd, isz, out->strides, out->offset + ooff) : NULL;
  int rc = dst && (!grows || at_fill_(out, value) == 0) ? at_copy_(dst, src) : -1;
  THTensor_free(src);
  THTensor_free(dst);
  if (rc < 0) { THTensor_free(out); return NULL; }
  return out;
}

THTensor *at_constant_pad_nd_backward(const THTensor *grad, const ATIntList *pad) {
  ATIntList neg = *pad;
  for (int i = 0; i < neg.n; i++) neg.v[i] = -neg.v[i];
  return at_constant_pad_nd(grad, &neg, at_scalar_int(0));
}

/* ---------------------------------------------------------------- F.pad's reflect / replicate / circular */

/* Every padded dim gets a table from output index to the input index it
 * copies, so one gather serves the three modes and every dtype (the
 * composite it replaces built a cat of flipped narrows per dim, 2-3.5x
 * torch's time). Within a row the run that copies the input unchanged is
 * one memcpy; the backward adds each output's gradient at its table entry. */
enum { PAD_REFLECT = 0, PAD_REPLICATE = 1, PAD_CIRCULAR = 2 };

typedef struct {
  int nsp;                  /* padded dims; s = 0 the outermost of them, nsp - 1 the last (W) */
  int64_t B, in[3], out[3];
  int64_t *map[3];          /* out[s] entries each */
  int64_t run0, run1;       /* the last dim's outputs [run0, run1) read input run0 - run0 + map[nsp-1][run0] on */
} PadGeom;

static const char *const pad_op_names[3][3] = {
  { "reflection_pad1d", "reflection_pad2d", "reflection_pad3d" },
  { "replication_pad1d", "replication_pad2d", "replication_pad3d" },
  { "_pad_circular", "_pad_circular", "_pad_circular" } };

/* torch's checks (reflection_pad*d / replication_pad*d / _pad_circular), in its order; fills g but the tables */
static int pad_check(const THTensor *self, const ATIntList *pad, int mode, int nsp, PadGeom *g) {
  char a[256];
  for (int s = 0; s < 3; s++) g->map[s] = NULL;
  if (pad->n != 2 * nsp && mode != PAD_CIRCULAR) {
    THError_set(TH_ERR_RUNTIME, "padding size is expected to be %d, but got: %d", 2 * nsp, pad->n);
    return -1;
  }
  nsp = pad->n / 2;
  int nd = self->ndim;
  if (nsp < 1 || nsp > 3 || pad->n % 2) {
    THError_set(TH_ERR_RUNTIME, "_pad_circular: expected 2, 4 or 6 padding values, but got %d", pad->n);
    return -1;
  }
  {
    bool ok = nd == nsp + 1 || nd == nsp + 2;   /* only a batch dim may be empty (circular: any) */
    for (int d = nd == nsp + 2 ? 1 : 0; ok && mode != PAD_CIRCULAR && d < nd; d++) ok = self->sizes[d] != 0;
    if (!ok) {
      THError_set(TH_ERR_RUNTIME, "Expected %dD or %dD (batch mode) tensor with possibly 0 batch size and other "
                  "non-zero dimensions for input, but got: %s", nsp + 1, nsp + 2,
                  THTensor_sizeStr(self->ndim, self->sizes, a, sizeof a));
      return -1;
    }
  }
  g->nsp = nsp;
  g->B = prod(self->sizes, 0, nd - nsp);
  bool any_pos = false;
  for (int s = 0; s < nsp; s++) {
    int i = nsp - 1 - s;   /* pad pair i pads dim s counted from the last */
    int64_t S = self->sizes[nd - nsp + s], lo = pad->v[2 * i], hi = pad->v[2 * i + 1];
    g->in[s] = S;
    g->out[s] = S + lo + hi;
    any_pos = any_pos || g->out[s] >= 1;
    if (mode == PAD_REFLECT && (lo >= S || hi >= S)) {
      THError_set(TH_ERR_RUNTIME, "Argument #%d: Padding size should be less than the corresponding input dimension, "
                  "but got: padding (%lld, %lld) at dimension %d of input %s", 4 + 2 * i, (long long)lo,
                  (long long)hi, nd - nsp + s, THTensor_sizeStr(self->ndim, self->sizes, a, sizeof a));
      return -1;
    }
    if (mode == PAD_CIRCULAR) {
      if (lo > S || hi > S) {
        THError_set(TH_ERR_RUNTIME, "Padding value causes wrapping around more than once.");
        return -1;
      }
      int64_t kept = S - (lo < 0 ? -lo : 0) - (hi < 0 ? -hi : 0);
      if (g->out[s] < 0 || (g->out[s] > 0 && kept <= 0)) {
        THError_set(TH_ERR_RUNTIME, "Negative padding value is resulting in an empty dimension");
        return -1;
      }
    }
  }
  if (mode != PAD_CIRCULAR && (nsp == 1 ? g->out[0] < 1 : !any_pos)) {
    if (nsp == 1)
      THError_set(TH_ERR_RUNTIME, "input (W: %lld) is too small. Calculated output W: %lld", (long long)g->in[0],
                  (long long)g->out[0]);
    else if (nsp == 2)   /* replication's text has the stray space, as torch's */
      THError_set(TH_ERR_RUNTIME, "input (H: %lld, W: %lld%s) is too small. Calculated output H: %lld W: %lld",
                  (long long)g->in[0], (long long)g->in[1], mode == PAD_REPLICATE ? " " : "",
                  (long long)g->out[0], (long long)g->out[1]);
    else
      THError_set(TH_ERR_RUNTIME, "input (D: %lld H: %lld, W: %lld) is too small. Calculated output D: %lld H: "
                  "%lld W: %lld", (long long)g->in[0], (long long)g->in[1], (long long)g->in[2],
                  (long long)g->out[0], (long long)g->out[1], (long long)g->out[2]);
    return -1;
  }
  for (int s = 0; s < nsp; s++)
    if (g->out[s] < 0) {
      int64_t osz[TH_MAX_DIMS];
      for (int d = 0; d < nd; d++) osz[d] = d < nd - nsp ? self->sizes[d] : g->out[d - (nd - nsp)];
      if (mode == PAD_REFLECT && nsp == 2)   /* torch's reflection_pad2d sizes its output before any check */
        THError_set(TH_ERR_RUNTIME, "numel: integer multiplication overflow");
      else
        THError_set(TH_ERR_RUNTIME, "Trying to create tensor with negative dimension %lld: %s",
                    (long long)g->out[s], THTensor_sizeStr(nd, osz, a, sizeof a));
      return -1;
    }
  return 0;
}

/* the tables of g (freed by pad_free) */
static int pad_tables(const ATIntList *pad, int mode, PadGeom *g) {
  int nsp = g->nsp;
  for (int s = 0; s < nsp; s++) {
    int i = nsp - 1 - s;
    int64_t S = g->in[s], O = g->out[s], lo = pad->v[2 * i];
    int64_t *m = g->map[s] = malloc((O > 0 ? O : 1) * sizeof(int64_t));
    if (!m) {
      THError_set(TH_ERR_MEMORY, "%s: out of memory", pad_op_names[mode][nsp - 1]);
      return -1;
    }
    /* circular pads the kept (cropped) part [s0, s0 + kept) with the positive pads */
    int64_t s0 = lo < 0 ? -lo : 0, pl = lo > 0 ? lo : 0, hi = pad->v[2 * i + 1];
    int64_t kept = S - s0 - (hi < 0 ? -hi : 0);
    for (int64_t o = 0; o < O; o++) {
      int64_t j = o - lo;
      if (mode == PAD_REFLECT)
        j = j < 0 ? -j : j >= S ? 2 * (S - 1) - j : j;
      else if (mode == PAD_REPLICATE)
        j = j < 0 ? 0 : j >= S ? S - 1 : j;
      else
        j = s0 + (((o - pl) % kept) + kept) % kept;
      m[o] = j;
    }
    if (s == nsp - 1) {   /* the identity run of the last dim */
      int64_t a = mode == PAD_CIRCULAR ? pl : (lo > 0 ? lo : 0);
      int64_t b = mode == PAD_CIRCULAR ? pl + kept : S + lo;
      g->run0 = a < O ? a : O;
      g->run1 = b < O ? b : O;
      if (g->run1 < g->run0) g->run1 = g->run0;
    }
  }
  return 0;
}

static void pad_free(PadGeom *g) {
  for (int s = 0; s < 3; s++) free(g->map[s]);
}

/* output rows (every index of the dims before the last): the input row each reads */
static inline int64_t pad_src_row(const PadGeom *g, int64_t r) {
  int nsp = g->nsp;
  if (nsp == 1) return r;
  int64_t oh = r % g->out[nsp - 2], t = r / g->out[nsp - 2], src = g->map[nsp - 2][oh];
  if (nsp == 3) src += g->map[0][t % g->out[0]] * g->in[1], t /= g->out[0];
  return t * (nsp == 3 ? g->in[0] * g->in[1] : g->in[0]) + src;
}

#define PAD_ROW(T)                                                                     \
  do {                                                                                 \
    const T *s_ = (const T *)src;                                                      \
    T *d_ = (T *)dst;                                                                  \
    for (int64_t o = 0; o < g->run0; o++) d_[o] = s_[mw[o]];                           \
    if (g->run1 > g->run0)                                                             \
      memcpy(d_ + g->run0, s_ + mw[g->run0], (g->run1 - g->run0) * sizeof(T));        \
    for (int64_t o = g->run1; o < OW; o++) d_[o] = s_[mw[o]];                          \
  } while (0)

typedef struct { uint64_t v[2]; } PadBytes16;

static void pad_forward(const PadGeom *g, const char *x, char *y, int es) {
  int64_t IW = g->in[g->nsp - 1], OW = g->out[g->nsp - 1], rows = g->B;
  for (int s = 0; s < g->nsp - 1; s++) rows *= g->out[s];
  const int64_t *mw = g->map[g->nsp - 1];
#pragma omp parallel for if (rows * OW * es > SHAPE_PAR_BYTES)
  for (int64_t r = 0; r < rows; r++) {
    const char *src = x + pad_src_row(g, r) * IW * es;
    char *dst = y + r * OW * es;
    switch (es) {
      case 1: PAD_ROW(uint8_t); break;
      case 2: PAD_ROW(uint16_t); break;
      case 4: PAD_ROW(uint32_t); break;
      case 8: PAD_ROW(uint64_t); break;
      default: PAD_ROW(PadBytes16); break;
    }
  }
}

/* gi zeroed; L lanes per element (2: complex) */
#define PAD_BACKWARD(T)                                                                         \
  static void pad_backward_##T(const PadGeom *g, const T *go, T *gi, int L) {                   \
    int64_t IW = g->in[g->nsp - 1], OW = g->out[g->nsp - 1], orows = 1, irows = 1;              \
    for (int s = 0; s < g->nsp - 1; s++) orows *= g->out[s], irows *= g->in[s];                 \
    const int64_t *mw = g->map[g->nsp - 1];                                                     \
    /* one batch plane per thread: each input element's sum runs in output order */            \
    _Pragma("omp parallel for if (g->B > 1 && g->B * orows * OW > SHAPE_PAR_BYTES / 8)")        \
    for (int64_t b = 0; b < g->B; b++)                                                          \
      for (int64_t r = b * orows; r < (b + 1) * orows; r++) {                                   \
        const T *src = go + r * OW * L;                                                         \
        T *dst = gi + pad_src_row(g, r) * IW * L;                                               \
        if (L == 1) { /* the identity run as one vectorizable add, the rest scattered */       \
          T *d0 = dst + (g->run1 > g->run0 ? mw[g->run0] : 0);                                  \
          const T *s0 = src + g->run0;                                                          \
          for (int64_t o = 0; o < g->run0; o++) dst[mw[o]] += src[o];                           \
          for (int64_t o = 0; o < g->run1 - g->run0; o++) d0[o] += s0[o];                       \
          for (int64_t o = g->run1; o < OW; o++) dst[mw[o]] += src[o];                          \
          continue;                                                                             \
        }                                                                                       \
        for (int64_t o = 0; o < OW; o++)                                                        \
          for (int l = 0; l < L; l++) dst[mw[o] * L + l] += src[o * L + l];                     \
      }                                                                                         \
    (void)irows;                                                                                \
  }
PAD_BACKWARD(float)
PAD_BACKWARD(double)

static THTensor *pad_out(const THTensor *self, const PadGeom *g, THDtype dt) {
  int64_t osz[TH_MAX_DIMS];
  int nd = self->ndim;
  for (int d = 0; d < nd; d++) osz[d] = d < nd - g->nsp ? self->sizes[d] : g->out[d - (nd - g->nsp)];
  return THTensor_new(dt, nd, osz);
}

static int pad_device(const THTensor *t, int mode, int nsp) {
  if (THTensor_device(t) != -1) {
    THError_set(TH_ERR_NOTIMPL, "%s is implemented for CPU tensors only in cthtorch", pad_op_names[mode][nsp - 1]);
    return -1;
  }
  return 0;
}

THTensor *at_pad_mode(const THTensor *self, const ATIntList *padding, int mode, int nsp) {
  PadGeom g;
  if (pad_device(self, mode, nsp) < 0 || pad_check(self, padding, mode, nsp, &g) < 0) return NULL;
  if (self->dtype == TH_Bool && mode != PAD_CIRCULAR) {
    THError_set(TH_ERR_NOTIMPL, "\"%s\" not implemented for 'Bool'", pad_op_names[mode][g.nsp - 1]);
    return NULL;
  }
  THTensor *y = pad_out(self, &g, self->dtype), *x = y ? at_contiguous(self) : NULL;
  if (x && pad_tables(padding, mode, &g) == 0) {
    if (THTensor_numel(y) > 0) pad_forward(&g, THTensor_data(x), THTensor_data(y), THDtype_size(self->dtype));
    pad_free(&g);
    THTensor_free(x);
    return y;
  }
  pad_free(&g);
  THTensor_free(x);
  THTensor_free(y);
  return NULL;
}

THTensor *at_pad_mode_backward(const THTensor *grad_output, const THTensor *self, const ATIntList *padding, int mode,
                               int nsp) {
  PadGeom g;
  char a[256], b[256];
  if (pad_device(self, mode, nsp) < 0 || pad_check(self, padding, mode, nsp, &g) < 0) return NULL;
  THTensor *expect = pad_out(self, &g, self->dtype);
  if (!expect) return NULL;
  bool same = grad_output->ndim == expect->ndim;
  for (int d = 0; same && d < expect->ndim; d++) same = grad_output->sizes[d] == expect->sizes[d];
  if (!same || grad_output->dtype != self->dtype) {
    THError_set(TH_ERR_RUNTIME, "%s_backward: expected grad_output of sizes %s and dtype %s, but got sizes %s and "
                "dtype %s", pad_op_names[mode][g.nsp - 1], THTensor_sizeStr(expect->ndim, expect->sizes, a, sizeof a),
                THDtype_info[self->dtype].name, THTensor_sizeStr(grad_output->ndim, grad_output->sizes, b, sizeof b),
                THDtype_info[grad_output->dtype].name);
    THTensor_free(expect);
    return NULL;
  }
  THTensor_free(expect);
  THDtype dt = self->dtype;
  if (!THDtype_isFloating(dt) && !THDtype_isComplex(dt)) {
    THError_set(TH_ERR_NOTIMPL, "\"%s_backward_cpu\" not implemented for '%s'", pad_op_names[mode][g.nsp - 1],
                THDtype_info[dt].legacy);
    return NULL;
  }
  /* half/bfloat16 sum in float; complex as interleaved pairs of its real type */
  THDtype rt = THDtype_toReal(dt), ct = rt == TH_Double ? TH_Double : TH_Float;
  THDtype wt = THDtype_isComplex(dt) ? dt : ct;
  int L = THDtype_isComplex(dt) ? 2 : 1;
  THTensor *gi = THTensor_new(wt, self->ndim, self->sizes), *go = gi ? at_contiguous_as(grad_output, wt) : NULL;
  THTensor *r = NULL;
  if (go && at_fill_(gi, at_scalar_int(0)) == 0 && pad_tables(padding, mode, &g) == 0) {
    if (THTensor_numel(go) > 0) {
      if (ct == TH_Double)
        pad_backward_double(&g, (const double *)(void *)THTensor_data(go), (double *)(void *)THTensor_data(gi), L);
      else
        pad_backward_float(&g, (const float *)(void *)THTensor_data(go), (float *)(void *)THTensor_data(gi), L);
    }
    r = wt == dt ? THTensor_retain(gi) : at_to_dtype(gi, dt, false);
  }
  pad_free(&g);
  THTensor_free(go);
  THTensor_free(gi);
  return r;
}
