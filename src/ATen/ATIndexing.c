/* The indexing family (see ATIndexing.h).
 *
 * Every op here is a gather or a put through one Plan. Indexing self with
 * advanced indices at dims d_1..d_k (masks already expanded to their nonzero
 * coordinates, all indices broadcast to one shape B of nb elements) reaches
 * the self slot
 *     pre[p] + off[j] + post[q]        (element offsets from self's data)
 * for p over the dims before the indexed block, j over B and q over the other
 * dims; the result is contiguous with shape pre-dims + B + post-dims and
 * element (p*nb + j)*npost + q. PyTorch's placement rule picks the split:
 * adjacent advanced dims keep their place (pre = the dims before them),
 * separated ones go first (pre empty, every other dim in post).
 * Plain gathers and puts move bytes by element size; only accumulation is
 * typed (src/TH/generic/THTensorIndexing.c). Work is split over threads by
 * (p, j) rows; accumulation splits over p only, so duplicates never race.
 * On a GPU the plan keeps only the geometry (the result's dims, self's
 * strides, the indices broadcast and contiguous on the device) and one
 * at_cuda->index launch gathers or puts; bounds are checked in the kernel. */
#include "ATIndexing.h"
#include "ATComplex.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "../TH/THKernelsIndexing.h"
#include "ATCuda.h"

#define PAR_MIN_WORK 32768

static const THIndexAccumFn accum_fns[TH_NDTYPES] = TH_ALL_TABLE(index_accum);
static const THCountNonzeroFn count_fns[TH_NDTYPES] = TH_ALL_TABLE(count_nonzero);
static const THListNonzeroFn list_fns[TH_NDTYPES] = TH_ALL_TABLE(list_nonzero);

/* How an out-of-bounds index is reported (each op has PyTorch's own text). */
typedef enum { ERR_INDEX, ERR_SELECT, ERR_TAKE, ERR_COPY } ErrStyle;

typedef struct {
  int ndim;                       /* result shape */
  int64_t sizes[TH_MAX_DIMS];
  int64_t nb, npre, npost;
  int64_t *off, *pre, *post;      /* malloc'd */
  bool post_contig;               /* post[q] == q */
  /* one advanced index: off[j] is not built; the moves read iv[j] (wrapped,
   * times istride) and check it against isize while they copy */
  THTensor *ivt;                  /* owns iv */
  const int64_t *iv;
  int64_t isize, istride;
  ErrStyle style;
  int err_dim;                    /* the dim a bad index is reported at */
  /* on a GPU: the launch (self, other and op set per move), its indices and their error dims */
  int device;
  ATCudaIndex cu;
  THTensor *cix[AT_CUDA_INDEX_MAX];
  int cdim[AT_CUDA_INDEX_MAX];
} Plan;

static void plan_free(Plan *p) {
  free(p->off); free(p->pre); free(p->post); THTensor_free(p->ivt);
  for (int k = 0; k < AT_CUDA_INDEX_MAX; k++) THTensor_free(p->cix[k]);
}

static int threads_for(int64_t work) {
  int nt = at_get_num_threads();
#ifdef _OPENMP
  if (omp_in_parallel()) nt = 1;
#endif
  return work < PAR_MIN_WORK ? 1 : nt;
}

static const char *shape_str(const THTensor *t, char *buf) { return THTensor_sizeStr(t->ndim, t->sizes, buf, 256); }

/* ---------------------------------------------------------------- nonzero */

/* Coordinates of the nonzeros of t (any layout): a new (nnz, ndim) int64
 * tensor, or just the flat positions (nnz,) when flat. Chunks count in
 * parallel, a prefix sum places them, then each chunk writes its own rows. */
static THTensor *nonzero_coords(const THTensor *t, bool flat) {
  if (at_no_complex(t, "nonzero_cpu") < 0) return NULL;
  int dev = THTensor_device(t);
  if (dev >= 0) {
    /* the count must reach the host anyway (it sizes the result, as PyTorch's
     * nonzero syncs): the mask crosses, is listed here, and the list returns */
    THTensor *h = at_to_device(t, -1, t->dtype, false);
    THTensor *hr = h ? nonzero_coords(h, flat) : NULL;
    THTensor *r = hr ? at_to_device(hr, dev, TH_Int64, false) : NULL;
    THTensor_free(h);
    THTensor_free(hr);
    return r;
  }
  THTensor *c = at_contiguous(t);
  if (!c) return NULL;
  int64_t n = THTensor_numel(c);
  int nd = flat ? 0 : c->ndim, width = nd ? nd : 1;
  const char *data = THTensor_data(c);
  int nt = threads_for(n);
  int64_t counts[256] = {0};
  if (nt > 256) nt = 256;
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
  for (int k = 0; k < nt; k++) counts[k] = count_fns[c->dtype](data, n * k / nt, n * (k + 1) / nt);
  int64_t total = 0, start[256];
  for (int k = 0; k < nt; k++) { start[k] = total; total += counts[k]; }
  int64_t sizes[2] = {total, nd};
  THTensor *r = THTensor_new(TH_Int64, flat ? 1 : 2, sizes);
  if (!r) { THTensor_free(c); return NULL; }
  int64_t *out = (int64_t *)THTensor_data(r);
  if (n == 0 || (c->ndim == 0 && !flat)) {   /* empty input, or (nnz, 0): nothing to write */
  } else {
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
    for (int k = 0; k < nt; k++)
      list_fns[c->dtype](data, n * k / nt, n * (k + 1) / nt, nd, c->sizes, out + start[k] * width);
  }
  THTensor_free(c);
  return r;
}

/* ---------------------------------------------------------------- the plan */

/* One advanced index as int64 (masks are expanded by the caller). */
static THTensor *long_index(const THTensor *ix) {
  if (ix->dtype == TH_Int64) return THTensor_retain((THTensor *)ix);
  if (THDtype_isIntegral(ix->dtype, false)) return at_to_dtype(ix, TH_Int64, false);
  THError_set(TH_ERR_INDEX, "tensors used as indices must be long, int, byte or bool tensors");
  return NULL;
}

static void bad_index(ErrStyle style, int64_t v, int dim, int64_t size) {
  switch (style) {
    case ERR_SELECT:
      if (dim == 0) { THError_set(TH_ERR_INDEX, "index out of range in self"); break; }
      THError_set(TH_ERR_RUNTIME, "INDICES element is out of DATA bounds, id=%lld axis_dim=%lld", (long long)v,
                  (long long)size);
      break;
    case ERR_TAKE:
      THError_set(TH_ERR_INDEX, "out of range: tried to access index %lld on a tensor of %lld elements.",
                  (long long)v, (long long)size);
      break;
    case ERR_COPY:
      THError_set(TH_ERR_INDEX, "index_copy_(): index %lld is out of bounds for dimension %d with size %lld",
                  (long long)v, dim, (long long)size);
      break;
    default:
      if (size == 0) { THError_set(TH_ERR_INDEX, "index is out of bounds for dimension with size 0"); break; }
      THError_set(TH_ERR_INDEX, "index %lld is out of bounds for dimension %d with size %lld", (long long)v, dim,
                  (long long)size);
  }
}

/* Offsets of every position of the dims `dims` (in order) of t. */
static int64_t *dim_offsets(const THTensor *t, const int *dims, int n, int64_t *count) {
  int64_t total = 1;
  for (int i = 0; i < n; i++) total *= t->sizes[dims[i]];
  int64_t *o = malloc((total ? total : 1) * sizeof(int64_t));
  if (!o) { THError_set(TH_ERR_RUNTIME, "out of memory"); return NULL; }
  *count = total;
  if (!total) return o;
  int64_t ctr[TH_MAX_DIMS] = {0}, cur = 0;
  for (int64_t k = 0; k < total; k++) {
    o[k] = cur;
    for (int i = n - 1; i >= 0; i--) {
      int d = dims[i];
      cur += t->strides[d];
      if (++ctr[i] < t->sizes[d]) break;
      cur -= ctr[i] * t->strides[d];
      ctr[i] = 0;
    }
  }
  return o;
}

/* index_select and index_copy take no negative indices (PyTorch raises);
 * indexing, take, put and index_fill wrap them */
static bool wraps_negative(ErrStyle style) { return style != ERR_SELECT && style != ERR_COPY; }

/* off[j] += (iv[j], wrapped) * stride for every j, each checked against size;
 * -1 with the error of the first bad index. */
static int add_offsets(int64_t *off, const int64_t *iv, int64_t nb, int64_t size, int64_t stride, ErrStyle style,
                       int dim) {
  int64_t badj = INT64_MAX;
  bool wrap = wraps_negative(style);
  int nt = threads_for(nb);
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1) reduction(min : badj)
  for (int64_t j = 0; j < nb; j++) {
    int64_t v = iv[j];
    if (v < 0 && wrap) v += size;
    if ((uint64_t)v >= (uint64_t)size) { if (j < badj) badj = j; continue; }
    off[j] += v * stride;
  }
  if (badj == INT64_MAX) return 0;
  bad_index(style, iv[badj], dim, size);
  return -1;
}

/* The offsets of a one-index plan, built (for the accumulating put, which
 * walks off[]). */
static int plan_offsets(Plan *P) {
  if (P->off || !P->iv) return 0;
  if (!(P->off = calloc(P->nb ? P->nb : 1, sizeof(int64_t)))) { THError_set(TH_ERR_RUNTIME, "out of memory"); return -1; }
  return add_offsets(P->off, P->iv, P->nb, P->isize, P->istride, P->style, P->err_dim);
}

/* The GPU plan: the iteration runs over the result's dims (pre, B, post);
 * self moves along pre and post, each index along B. */
static int plan_cuda(const THTensor *self, THTensor *const *idx, int bnd, const int64_t *bs, int npd,
                     const int *predims, int nqd, const int *postdims, Plan *P) {
  ATCudaIndex *C = &P->cu;
  memset(C, 0, sizeof *C);
  C->ndim = P->ndim;
  C->skip = INT64_MIN;
  C->wrap = wraps_negative(P->style);
  C->alpha = 1;
  memcpy(C->sizes, P->sizes, P->ndim * sizeof(int64_t));
  for (int k = 0; k < npd; k++) C->ss[k] = self->strides[predims[k]];
  for (int k = 0; k < nqd; k++) C->ss[npd + bnd + k] = self->strides[postdims[k]];
  int64_t st = 1;   /* the indices' contiguous strides over B */
  for (int k = bnd - 1; k >= 0; k--) { C->is[npd + k] = st; st *= bs[k]; }
  ATIntList bl = {bnd};
  memcpy(bl.v, bs, bnd * sizeof(int64_t));
  for (int k = 0, ord = 0; k < self->ndim; k++) {
    if (!idx[k]) continue;
    if (ord == AT_CUDA_INDEX_MAX) {
      THError_set(TH_ERR_NOTIMPL, "indexing a CUDA tensor with more than %d index tensors", AT_CUDA_INDEX_MAX);
      return -1;
    }
    THTensor *ex = at_expand(idx[k], &bl), *c = ex ? at_contiguous(ex) : NULL;
    THTensor_free(ex);
    /* a 0-d host index joins a GPU op: it crosses here */
    P->cix[ord] = c ? at_to_device(c, P->device, TH_Int64, false) : NULL;
    THTensor_free(c);
    if (!P->cix[ord]) return -1;
    C->idx[ord] = (const int64_t *)THTensor_data(P->cix[ord]);
    C->isize[ord] = self->sizes[k];
    C->istride[ord] = self->strides[k];
    P->cdim[ord] = P->style == ERR_INDEX ? ord : k;
    C->nidx = ++ord;
  }
  return 0;
}

/* One launch of the GPU plan; -1 with the error of a bad index. */
static int plan_cuda_run(Plan *P, ATIndexOp op, char *self, char *other, const int64_t *os) {
  ATCudaIndex *C = &P->cu;
  C->op = op;
  C->self = self;
  C->other = other;
  memcpy(C->os, os, P->ndim * sizeof(int64_t));
  int rc = at_cuda->index(C);
  if (rc == 1) bad_index(P->style, C->bad_value, P->cdim[C->bad_k], C->isize[C->bad_k]);
  return rc == 0 ? 0 : -1;
}

/* Builds the plan of self[indices] (n entries, NULL = the whole dim). */
static int plan_build(const THTensor *self, int n, THTensor *const *indices, ErrStyle style, Plan *P) {
  memset(P, 0, sizeof *P);
  THTensor *idx[TH_MAX_DIMS] = {0};   /* owned int64 indices by self dim */
  int nadv = 0, d = 0, rc = -1;
  char b1[256], b2[256];
  for (int i = 0; i < n; i++) {
    const THTensor *e = indices[i];
    if (!e) { d++; continue; }
    if (e->dtype == TH_Bool || e->dtype == TH_UInt8) {
      if (e->dtype == TH_UInt8) THWarn("indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead.");
      int span = e->ndim ? e->ndim : 1;   /* a 0-d mask indexes a size-1 dim (getitem unsqueezes it) */
      if (d + span > self->ndim) {
        THError_set(TH_ERR_INDEX, "too many indices for tensor of dimension %d", self->ndim);
        goto done;
      }
      for (int k = 0; k < e->ndim; k++)
        if (e->sizes[k] != self->sizes[d + k]) {
          THError_set(TH_ERR_INDEX, "The shape of the mask %s at index %d does not match the shape of the indexed "
                      "tensor %s at index %d", shape_str(e, b1), k, shape_str(self, b2), d + k);
          goto done;
        }
      int edev = THTensor_device(e);
      THTensor *eh = edev >= 0 ? at_to_device(e, -1, e->dtype, false) : THTensor_retain((THTensor *)e);
      THTensor *nz = eh ? nonzero_coords(eh, false) : NULL;
      THTensor_free(eh);
      if (!nz) goto done;
      int64_t cnt = nz->sizes[0];
      for (int k = 0; k < span; k++) {
        THTensor *col = THTensor_new(TH_Int64, 1, &cnt);
        if (!col) { THTensor_free(nz); goto done; }
        int64_t *cv = (int64_t *)THTensor_data(col), *nv = (int64_t *)THTensor_data(nz);
        for (int64_t r = 0; r < cnt; r++) cv[r] = e->ndim ? nv[r * e->ndim + k] : 0;
        if (edev >= 0) {   /* the coordinates back where the mask lives */
          THTensor *dc = at_to_device(col, edev, TH_Int64, false);
          THTensor_free(col);
          if (!(col = dc)) { THTensor_free(nz); goto done; }
        }
        idx[d + k] = col;
        nadv++;
      }
      THTensor_free(nz);
      d += span;
      continue;
    }
    if (d >= self->ndim) {
      THError_set(TH_ERR_INDEX, "too many indices for tensor of dimension %d", self->ndim);
      goto done;
    }
    if (!(idx[d] = long_index(e))) goto done;
    nadv++;
    d++;
  }
  /* broadcast the indices together */
  int bnd = 0, first = -1, last = -1;
  int64_t bs[TH_MAX_DIMS];
  for (int k = 0; k < self->ndim; k++) {
    if (!idx[k]) continue;
    if (first < 0) first = k;
    last = k;
    if (at_broadcast_sizes(bnd, bs, idx[k]->ndim, idx[k]->sizes, &bnd, bs) < 0) {
      THError_clear();
      char msg[1024] = "shape mismatch: indexing tensors could not be broadcast together with shapes";
      for (int j = 0, c = 0; j < self->ndim; j++)
        if (idx[j]) {
          size_t l = strlen(msg);
          snprintf(msg + l, sizeof msg - l, "%s %s", c++ ? "," : "", shape_str(idx[j], b1));
        }
      THError_set(TH_ERR_INDEX, "%s", msg);
      goto done;
    }
  }
  bool adjacent = last - first + 1 == nadv;
  int predims[TH_MAX_DIMS], postdims[TH_MAX_DIMS], npd = 0, nqd = 0;
  for (int k = 0; k < self->ndim; k++) {
    if (idx[k]) continue;
    if (adjacent && k < first) predims[npd++] = k;
    else postdims[nqd++] = k;
  }
  /* result shape */
  for (int k = 0; k < npd; k++) P->sizes[P->ndim++] = self->sizes[predims[k]];
  for (int k = 0; k < bnd; k++) P->sizes[P->ndim++] = bs[k];
  for (int k = 0; k < nqd; k++) P->sizes[P->ndim++] = self->sizes[postdims[k]];
  P->style = style;
  if ((P->device = THTensor_device(self)) >= 0) {
    rc = plan_cuda(self, idx, bnd, bs, npd, predims, nqd, postdims, P);
    goto done;
  }
  if (!(P->pre = dim_offsets(self, predims, npd, &P->npre)) || !(P->post = dim_offsets(self, postdims, nqd, &P->npost)))
    goto done;
  P->post_contig = true;
  for (int64_t q = 0; q < P->npost && P->post_contig; q++) P->post_contig = P->post[q] == q;
  /* off[j]: the indexed dims' share of the slot offset */
  P->nb = 1;
  for (int k = 0; k < bnd; k++) P->nb *= bs[k];
  if (nadv == 1) {   /* one index: the moves read it directly and check it as they copy */
    if (!(P->ivt = at_contiguous(idx[first]))) goto done;
    P->iv = (const int64_t *)THTensor_data(P->ivt);
    P->isize = self->sizes[first];
    P->istride = self->strides[first];
    P->err_dim = style == ERR_INDEX ? 0 : first;
    rc = 0;
    goto done;
  }
  if (!(P->off = calloc(P->nb ? P->nb : 1, sizeof(int64_t)))) { THError_set(TH_ERR_RUNTIME, "out of memory"); goto done; }
  ATIntList bl = {bnd};
  memcpy(bl.v, bs, bnd * sizeof(int64_t));
  for (int k = 0, ord = 0; k < self->ndim; k++) {
    if (!idx[k]) continue;
    ord++;
    THTensor *ex = at_expand(idx[k], &bl), *c = ex ? at_contiguous(ex) : NULL;
    THTensor_free(ex);
    if (!c) goto done;
    /* x[idx] names the index's ordinal, as PyTorch does; the dim ops name the dim */
    int bad = add_offsets(P->off, (const int64_t *)THTensor_data(c), P->nb, self->sizes[k], self->strides[k], style,
                          style == ERR_INDEX ? ord - 1 : k);
    THTensor_free(c);
    if (bad < 0) goto done;
  }
  rc = 0;
done:
  for (int k = 0; k < TH_MAX_DIMS; k++) THTensor_free(idx[k]);
  if (rc < 0) plan_free(P);
  return rc;
}

/* ---------------------------------------------------------------- moves */

/* dst/src: the result (contiguous, row (p*nb + j), npost long) and self's
 * slots; to_self: put (result -> self) instead of gather. vstep 0: one value
 * broadcast to every slot. OFF(j) sets o, the index share of row j's slot:
 * off[j], or for a one-index plan iv[j] checked on the spot (a bad one is
 * noted in badj and its row skipped). */
#define OFF_BUILT(j) o = off[j];
#define OFF_CHECKED(j)                                                                            \
  {                                                                                               \
    int64_t v_ = iv[j];                                                                           \
    if (v_ < 0 && wrap) v_ += isize;                                                             \
    if ((uint64_t)v_ >= (uint64_t)isize) { if ((j) < badj) badj = (j); continue; }                \
    o = v_ * istride;                                                                             \
  }
#define PF_AHEAD 8   /* rows prefetched ahead in a one-index gather of contiguous rows */
#define MOVE_LOOP(T, OFF)                                                                         \
  {                                                                                               \
    T *S = (T *)slots;                                                                            \
    T *R = (T *)rows;                                                                             \
    _Pragma("omp parallel for collapse(2) num_threads(nt) schedule(static) if (nt > 1) reduction(min : badj)") \
    for (int64_t p = 0; p < npre; p++)                                                            \
      for (int64_t j = 0; j < nb; j++) {                                                          \
        int64_t o;                                                                                \
        if (pf && j + PF_AHEAD < nb) {  /* random rows: start the row PF_AHEAD ahead loading now */ \
          int64_t w_ = iv[j + PF_AHEAD];                                                          \
          if (w_ < 0) w_ += isize;                                                                \
          if ((uint64_t)w_ < (uint64_t)isize) {                                                   \
            const char *a_ = (const char *)(S + pre[p] + w_ * istride);                           \
            for (int64_t b_ = 0; b_ < (int64_t)(npost * sizeof(T)); b_ += 64) __builtin_prefetch(a_ + b_); \
          }                                                                                       \
        }                                                                                         \
        OFF(j)                                                                                    \
        T *s = S + pre[p] + o;                                                                    \
        T *r = R + (p * nb + j) * npost * vstep;                                                  \
        if (npost == 1) {                                                                         \
          if (to_self) *s = *r;                                                                   \
          else *r = *s;                                                                           \
        } else if (!to_self) {                                                                    \
          if (contig) memcpy(r, s, npost * sizeof(T));                                            \
          else for (int64_t q = 0; q < npost; q++) r[q] = s[post[q]];                             \
        } else if (!vstep) {                                                                      \
          for (int64_t q = 0; q < npost; q++) s[post[q]] = r[0];                                  \
        } else if (contig) memcpy(s, r, npost * sizeof(T));                                       \
        else for (int64_t q = 0; q < npost; q++) s[post[q]] = r[q];                               \
      }                                                                                           \
  }
#define MOVE_SIZES(OFF)                                                                           \
  switch (es) {                                                                                   \
    case 1: MOVE_LOOP(uint8_t, OFF) break;                                                        \
    case 2: MOVE_LOOP(uint16_t, OFF) break;                                                       \
    case 4: MOVE_LOOP(uint32_t, OFF) break;                                                       \
    case 8: MOVE_LOOP(uint64_t, OFF) break;                                                       \
    default: MOVE_LOOP(at_bytes16, OFF) break;   /* complex128 */                                 \
  }

/* rows[p * nb + j] = slots[pre[p] + o[j]] */
#define GATHER1(T)                                                                                \
  {                                                                                               \
    const T *S = (const T *)slots;                                                                \
    T *R = (T *)rows;                                                                             \
    _Pragma("omp parallel for num_threads(nt) schedule(static) if (nt > 1)")                      \
    for (int64_t p = 0; p < npre; p++) {                                                          \
      const T *s = S + pre[p];                                                                    \
      T *r = R + p * nb;                                                                          \
      for (int64_t j = 0; j < nb; j++) r[j] = s[o[j]];                                            \
    }                                                                                             \
  }
#define GATHER1_SIZES                                                                             \
  switch (es) {                                                                                   \
    case 1: GATHER1(uint8_t) break;                                                               \
    case 2: GATHER1(uint16_t) break;                                                              \
    case 4: GATHER1(uint32_t) break;                                                              \
    case 8: GATHER1(uint64_t) break;                                                              \
    default: GATHER1(at_bytes16) break;                                                           \
  }

/* -1 with the error of the first bad index (one-index plans check here) */
static int plan_move(const Plan *P, char *slots, char *rows, int es, bool to_self, int64_t vstep) {
  int64_t nb = P->nb, npost = P->npost, npre = P->npre, badj = INT64_MAX;
  int64_t isize = P->isize, istride = P->istride;
  const int64_t *post = P->post, *pre = P->pre, *off = P->off, *iv = P->iv;
  bool contig = P->post_contig, wrap = wraps_negative(P->style);
  /* a one-index gather of contiguous rows of a cache line or more reads rows
   * in the index's (random) order: prefetching a few rows ahead overlaps
   * their memory latency (row gathers of (100k, 64) floats: ~7.4 -> see commit) */
  bool pf = iv && !to_self && contig && npost * es >= 64;
  /* puts run serially when indices may repeat, so the last write wins as in PyTorch's serial loop */
  int nt = threads_for(npre * nb * npost);
  if (!npre || !nb || !npost) {   /* nothing moves: PyTorch checks no index either */
  } else if (iv && npost == 1 && !to_self) {
    /* single elements (index_select along the last dim, x[:, idx]): the index checked and made offsets once,
     * then one tight gather per leading slice, where the general loop paid the checks per element */
    int64_t *o = malloc(nb * sizeof(int64_t));
    if (!o) {
      THError_set(TH_ERR_MEMORY, "index: out of memory");
      return -1;
    }
    for (int64_t j = 0; j < nb && badj == INT64_MAX; j++) {
      int64_t v = iv[j];
      if (v < 0 && wrap) v += isize;
      if ((uint64_t)v >= (uint64_t)isize) badj = j;
      o[j] = v * istride;
    }
    if (badj == INT64_MAX) GATHER1_SIZES
    free(o);
  } else if (iv) {
    MOVE_SIZES(OFF_CHECKED)
  } else {
    MOVE_SIZES(OFF_BUILT)
  }
  if (badj == INT64_MAX) return 0;
  bad_index(P->style, iv[badj], P->err_dim, isize);
  return -1;
}

static THTensor *plan_gather(const THTensor *self, Plan *P) {
  THTensor *r = at_new_on(P->device, self->dtype, P->ndim, P->sizes, NULL);
  if (!r) return NULL;
  if (P->device >= 0) {
    P->cu.dt = self->dtype;
    if (plan_cuda_run(P, AT_IDX_GATHER, THTensor_data(self), THTensor_data(r), r->strides) < 0) {
      THTensor_free(r);
      return NULL;
    }
    return r;
  }
  if (plan_move(P, THTensor_data(self), THTensor_data(r), THDtype_size(self->dtype), false, 1) < 0) {
    THTensor_free(r);
    return NULL;
  }
  return r;
}

/* plan_put on a GPU: values (on the device, or a 0-d host value) read through
 * their broadcast strides; a copy first when they share dst's storage. */
static int plan_put_cuda(THTensor *dst, Plan *P, const THTensor *values, bool accumulate) {
  ATIntList sl = {P->ndim};
  memcpy(sl.v, P->sizes, P->ndim * sizeof(int64_t));
  THTensor *vd = at_to_device(values, P->device, values->dtype, false);
  THTensor *ex = vd ? at_expand(vd, &sl) : NULL, *v = NULL;
  if (ex) v = ex->storage == dst->storage ? at_clone(ex, false) : THTensor_retain(ex);
  THTensor_free(vd);
  THTensor_free(ex);
  if (!v) return -1;
  P->cu.dt = dst->dtype;
  int rc = plan_cuda_run(P, accumulate ? AT_IDX_ACCUM : AT_IDX_PUT, THTensor_data(dst), THTensor_data(v), v->strides);
  THTensor_free(v);
  return rc;
}

/* Puts values (broadcastable to the plan's result shape, self's dtype) into
 * dst's slots; accumulate adds. */
static int plan_put(THTensor *dst, Plan *P, const THTensor *values, bool accumulate, const char *op) {
  if (accumulate && at_no_complex(dst, "index_put_with_sort_cpu") < 0) return -1;
  char b1[256], b2[256];
  int nd;
  int64_t shape[TH_MAX_DIMS];
  if (at_broadcast_sizes(values->ndim, values->sizes, P->ndim, P->sizes, &nd, shape) < 0 || nd != P->ndim ||
      memcmp(shape, P->sizes, nd * sizeof(int64_t))) {
    THError_clear();
    THError_set(TH_ERR_RUNTIME, "shape mismatch: value tensor of shape %s cannot be broadcast to indexing result "
                "of shape %s", shape_str(values, b1), THTensor_sizeStr(P->ndim, P->sizes, b2, 256));
    (void)op;
    return -1;
  }
  if (P->device >= 0) return plan_put_cuda(dst, P, values, accumulate);
  bool one = THTensor_numel(values) == 1 && !accumulate;
  THTensor *v;
  if (one || (values->ndim == P->ndim && !memcmp(values->sizes, P->sizes, P->ndim * sizeof(int64_t)) &&
              THTensor_isContiguous(values) && values->storage != dst->storage)) {
    v = THTensor_retain((THTensor *)values);
  } else {
    ATIntList sl = {P->ndim};
    memcpy(sl.v, P->sizes, P->ndim * sizeof(int64_t));
    THTensor *ex = at_expand(values, &sl);
    v = ex ? at_clone(ex, false) : NULL;   /* a fresh copy: no overlap with dst */
    THTensor_free(ex);
    if (!v) return -1;
  }
  int rc = 0;
  if (!accumulate) {
    rc = plan_move(P, THTensor_data(dst), THTensor_data(v), THDtype_size(dst->dtype), true, one ? 0 : 1);
  } else if ((rc = plan_offsets(P)) == 0) {
    int64_t npre = P->npre, per = P->nb * P->npost;
    int nt = threads_for(npre * per);
    char *dd = THTensor_data(dst);
    const char *vd = THTensor_data(v);
    int es = THDtype_size(dst->dtype);
    THIndexAccumFn fn = accum_fns[dst->dtype];
    const int64_t *post = P->post_contig ? NULL : P->post;
    /* threads take whole leading slices, or (fewer slices than threads: a
     * one-dim index_put_/index_add_, as SparseAdam's dense += sparse) column
     * ranges of every indexed row; each element still adds in index order */
    bool by_cols = npre < nt && P->npost >= 16 * nt;
    if (!by_cols && npre < nt) nt = (int)(npre ? npre : 1);
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
    for (int t = 0; t < nt; t++) {
      if (by_cols) {
        int64_t q0 = P->npost * t / nt, q1 = P->npost * (t + 1) / nt;
        fn(post ? dd : dd + q0 * es, vd + q0 * es, P->pre, npre, P->off, P->nb, post ? post + q0 : NULL, q1 - q0,
           P->npost);
      } else {
        int64_t p0 = npre * t / nt, p1 = npre * (t + 1) / nt;
        if (p1 > p0) fn(dd, vd + p0 * per * es, P->pre + p0, p1 - p0, P->off, P->nb, post, P->npost, P->npost);
      }
    }
  }
  THTensor_free(v);
  return rc;
}

/* ---------------------------------------------------------------- advanced indexing */

THTensor *at_index(const THTensor *self, const ATTensorList *indices) {
  Plan P;
  if (plan_build(self, indices->n, indices->v, ERR_INDEX, &P) < 0) return NULL;
  THTensor *r = plan_gather(self, &P);
  plan_free(&P);
  return r;
}

/* out (in place) or a fresh contiguous copy of self: what a put writes into */
static THTensor *put_target(const THTensor *self, THTensor *out) {
  if (out) return THTensor_retain(out);
  return at_clone(self, false);
}

static const char *legacy(THDtype t) { return THDtype_info[t].legacy; }

THTensor *at_index_put(const THTensor *self, const ATTensorList *indices, const THTensor *values, bool accumulate,
                       THTensor *out) {
  if (values->dtype != self->dtype) {
    THError_set(TH_ERR_RUNTIME, "Index put requires the source and destination dtypes match, got %s for the "
                "destination and %s for the source.", legacy(self->dtype), legacy(values->dtype));
    return NULL;
  }
  /* torch sends a lone mask with a one-element value to masked_fill_, which refuses a uint8 mask
   * (x[byte_mask] = 0 in old code raises there) */
  int nmask = 0, nidx = 0;
  for (int i = 0; i < indices->n; i++)
    if (indices->v[i]) {
      nidx++;
      nmask += indices->v[i]->dtype == TH_UInt8;
    }
  if (!accumulate && nidx == 1 && nmask == 1 && THTensor_numel(values) == 1) {
    THError_set(TH_ERR_RUNTIME, "masked_fill_ only supports boolean masks, but got mask with dtype unsigned char");
    return NULL;
  }
  THTensor *dst = put_target(self, out);
  if (!dst) return NULL;
  Plan P;
  if (plan_build(dst, indices->n, indices->v, ERR_INDEX, &P) < 0) { THTensor_free(dst); return NULL; }
  int rc = plan_put(dst, &P, values, accumulate, "index_put_");
  plan_free(&P);
  if (rc < 0) { THTensor_free(dst); return NULL; }
  return dst;
}

/* ---------------------------------------------------------------- along one dim */

/* The plan of self[(:,)*dim, index] for a 0-/1-d integer index; a 0-d self
 * is seen as shape (1,). */
static int dim_plan(const THTensor *self, int64_t dim, const THTensor *index, ErrStyle style, Plan *P,
                    THTensor **self1) {
  int64_t one = 1;
  *self1 = self->ndim ? THTensor_retain((THTensor *)self)
                      : THTensor_newView(self, 1, &one, &one, self->offset);
  if (!*self1) return -1;
  int64_t d;
  if (at_wrap_dim(dim, self->ndim ? self->ndim : 1, &d) < 0) { THTensor_free(*self1); return -1; }
  THTensor *ix = index->ndim ? THTensor_retain((THTensor *)index) : THTensor_newView(index, 1, &one, &one, index->offset);
  THTensor *list[TH_MAX_DIMS] = {0};
  list[d] = ix;
  int rc = plan_build(*self1, (int)d + 1, list, style, P);
  THTensor_free(ix);
  if (rc < 0) THTensor_free(*self1);
  return rc;
}

/* Writes r into out (resized) when out is given; returns a reference to the result. */
static THTensor *into_out(THTensor *r, THTensor *out) {
  if (!r || !out) return r;
  if (THTensor_resize(out, r->ndim, r->sizes) < 0 || at_copy_(out, r) < 0) { THTensor_free(r); return NULL; }
  THTensor_free(r);
  return THTensor_retain(out);
}

/* torch's index_select of a tensor with no elements (and more than one dim) still checks the indices, in its
 * own words: an empty indexed axis cannot take any, and the others go against the axis's size */
static int empty_select_check(const THTensor *self, int64_t dim, const THTensor *index) {
  int64_t d;
  if (at_wrap_dim(dim, self->ndim, &d) < 0) return -1;
  int64_t size = self->sizes[d];
  if (size == 0) {
    THError_set(TH_ERR_RUNTIME, "index_select(): self indexing axis dim should be positive");
    return -1;
  }
  for (int64_t i = 0, n = THTensor_numel(index); i < n; i++) {
    int64_t off = index->ndim ? i * index->strides[0] : 0;
    int64_t v = index->dtype == TH_Int64 ? ((const int64_t *)THTensor_data(index))[off]
                                         : ((const int32_t *)THTensor_data(index))[off];
    if (v < 0 || v >= size) {
      THError_set(TH_ERR_RUNTIME, "INDICES element is out of DATA bounds, id=%lld axis_dim=%lld", (long long)v,
                  (long long)size);
      return -1;
    }
  }
  return 0;
}

THTensor *at_index_select(const THTensor *self, int64_t dim, const THTensor *index, THTensor *out) {
  if (index->ndim > 1) {
    THError_set(TH_ERR_INDEX, "index_select(): Index is supposed to be a vector");
    return NULL;
  }
  if (index->dtype != TH_Int64 && index->dtype != TH_Int32) {
    THError_set(TH_ERR_RUNTIME, "index_select(): Expected dtype int32 or int64 for index");
    return NULL;
  }
  if (self->ndim == 0 && THTensor_numel(index) != 1) {
    THError_set(TH_ERR_RUNTIME, "index_select(): Index to scalar can have only 1 value, got %lld value(s)",
                (long long)THTensor_numel(index));
    return NULL;
  }
  if (self->ndim > 1 && THTensor_numel(self) == 0 && THTensor_numel(index) > 0 && !at_off_host(index) &&
      empty_select_check(self, dim, index) < 0)
    return NULL;
  Plan P;
  THTensor *s1;
  if (dim_plan(self, dim, index, ERR_SELECT, &P, &s1) < 0) return NULL;
  THTensor *r = plan_gather(s1, &P);
  plan_free(&P);
  THTensor_free(s1);
  if (r && self->ndim == 0) THTensor_resize(r, 0, NULL);
  return into_out(r, out);
}

THTensor *at_index_select_backward(const THTensor *grad, const ATIntList *self_sizes, int64_t dim,
                                   const THTensor *index) {
  THTensor *z = at_new_on(THTensor_device(grad), grad->dtype, self_sizes->n, self_sizes->v, NULL);
  if (z && at_fill_(z, at_scalar_int(0)) < 0) { THTensor_free(z); z = NULL; }
  if (!z) return NULL;
  Plan P;
  THTensor *z1;
  if (dim_plan(z, dim, index, ERR_SELECT, &P, &z1) < 0) { THTensor_free(z); return NULL; }
  int rc = plan_put(z1, &P, grad, true, "index_select_backward");
  plan_free(&P);
  THTensor_free(z1);
  if (rc < 0) { THTensor_free(z); return NULL; }
  return z;
}

THTensor *at_index_fill(const THTensor *self, int64_t dim, const THTensor *index, const THTensor *value,
                        THTensor *out) {
  if (index->dtype != TH_Int64) {
    THError_set(TH_ERR_INDEX, "index_fill_(): Expected dtype int64 for index.");
    return NULL;
  }
  if (value->ndim != 0) {
    THError_set(TH_ERR_RUNTIME, "index_fill_ only supports a 0-dimensional value tensor, but got tensor with %d "
                "dimension(s).", value->ndim);
    return NULL;
  }
  if (index->ndim > 1) {
    THError_set(TH_ERR_INDEX, "Index has to be a vector/scalar");
    return NULL;
  }
  THTensor *v = at_to_dtype(value, self->dtype, false);
  THTensor *dst = v ? put_target(self, out) : NULL;
  if (!dst) { THTensor_free(v); return NULL; }
  Plan P;
  THTensor *d1;
  int rc = dim_plan(dst, dim, index, ERR_INDEX, &P, &d1);
  if (rc == 0) {
    rc = plan_put(d1, &P, v, false, "index_fill_");
    plan_free(&P);
    THTensor_free(d1);
  }
  THTensor_free(v);
  if (rc < 0) { THTensor_free(dst); return NULL; }
  return dst;
}

THTensor *at_index_copy(const THTensor *self, int64_t dim, const THTensor *index, const THTensor *source,
                        THTensor *out) {
  if (index->dtype != TH_Int64) {
    THError_set(TH_ERR_RUNTIME, "index_copy_(): Expected a long tensor for index, but got %s", legacy(index->dtype));
    return NULL;
  }
  if (source->dtype != self->dtype) {
    THError_set(TH_ERR_RUNTIME, "index_copy_(): self and source expected to have the same dtype, but got (self) %s "
                "and (source) %s", legacy(self->dtype), legacy(source->dtype));
    return NULL;
  }
  if (index->ndim > 1) {
    THError_set(TH_ERR_INDEX, "index_copy_(): Index should have dimension 1 or 0 (got %d)", index->ndim);
    return NULL;
  }
  THTensor *dst = put_target(self, out);
  if (!dst) return NULL;
  Plan P;
  THTensor *d1;
  int rc = dim_plan(dst, dim, index, ERR_COPY, &P, &d1);
  if (rc == 0) {
    /* source has self's shape with dim's size = len(index); a 0-d self or source is one element */
    int64_t one = 1;
    THTensor *src = (self->ndim == 0 || source->ndim == 0) && THTensor_numel(source) == 1
                        ? THTensor_newView(source, 1, &one, &one, source->offset) : THTensor_retain((THTensor *)source);
    rc = src ? plan_put(d1, &P, src, false, "index_copy_") : -1;
    THTensor_free(src);
    plan_free(&P);
    THTensor_free(d1);
  }
  if (rc < 0) { THTensor_free(dst); return NULL; }
  return dst;
}

/* ---------------------------------------------------------------- flat: take / put */

/* self seen flat (contiguous): a view, or a copy when self is not contiguous */
static THTensor *flat_of(const THTensor *t) {
  THTensor *c = at_contiguous(t);
  if (!c) return NULL;
  int64_t n = THTensor_numel(c), one = 1;
  THTensor *f = THTensor_newView(c, 1, &n, &one, c->offset);
  THTensor_free(c);
  return f;
}

static int flat_plan(const THTensor *flat, const THTensor *index, Plan *P) {
  THTensor *list[1] = {(THTensor *)index};
  if (index->ndim == 0) {   /* a 0-d index: one slot, result 0-d */
    int64_t one = 1;
    list[0] = THTensor_newView(index, 1, &one, &one, index->offset);
    if (!list[0]) return -1;
    int rc = plan_build(flat, 1, list, ERR_TAKE, P);
    THTensor_free(list[0]);
    if (rc == 0) P->ndim = 0;
    return rc;
  }
  return plan_build(flat, 1, list, ERR_TAKE, P);
}

THTensor *at_take(const THTensor *self, const THTensor *index, THTensor *out) {
  if (index->dtype != TH_Int64) {
    THError_set(TH_ERR_RUNTIME, "take(): Expected a long tensor for index, but got %s", legacy(index->dtype));
    return NULL;
  }
  THTensor *flat = flat_of(self);
  if (!flat) return NULL;
  Plan P;
  if (flat_plan(flat, index, &P) < 0) { THTensor_free(flat); return NULL; }
  THTensor *r = plan_gather(flat, &P);
  plan_free(&P);
  THTensor_free(flat);
  return into_out(r, out);
}

THTensor *at_put(const THTensor *self, const THTensor *index, const THTensor *source, bool accumulate,
                 THTensor *out) {
  if (index->dtype != TH_Int64) {
    THError_set(TH_ERR_RUNTIME, "put_(): Expected a long tensor for index, but got %s", legacy(index->dtype));
    return NULL;
  }
  if (source->dtype != self->dtype) {
    THError_set(TH_ERR_RUNTIME, "put_(): self and source expected to have the same dtype, but got self.dtype = %s "
                "and source.dtype = %s", legacy(self->dtype), legacy(source->dtype));
    return NULL;
  }
  if (THTensor_numel(source) != THTensor_numel(index)) {
    THError_set(TH_ERR_INDEX, "put_(): Expected source and index to have the same number of elements, but got "
                "source.numel() = %lld, index.numel() = %lld", (long long)THTensor_numel(source),
                (long long)THTensor_numel(index));
    return NULL;
  }
  THTensor *dst = put_target(self, out);
  if (!dst) return NULL;
  THTensor *flat = flat_of(dst);   /* dst's storage when dst is contiguous */
  Plan P;
  int rc = flat ? flat_plan(flat, index, &P) : -1;
  if (rc == 0) {
    ATIntList sl = {P.ndim};
    memcpy(sl.v, P.sizes, P.ndim * sizeof(int64_t));
    THTensor *src = at_reshape(source, &sl);
    rc = src ? plan_put(flat, &P, src, accumulate, "put_") : -1;
    THTensor_free(src);
    plan_free(&P);
    if (rc == 0 && flat->storage != dst->storage) {   /* dst was not contiguous: write the copy back */
      ATIntList dl = {dst->ndim};
      memcpy(dl.v, dst->sizes, dst->ndim * sizeof(int64_t));
      THTensor *back = at_view(flat, &dl);
      rc = back ? at_copy_(dst, back) : -1;
      THTensor_free(back);
    }
  }
  THTensor_free(flat);
  if (rc < 0) { THTensor_free(dst); return NULL; }
  return dst;
}

/* ---------------------------------------------------------------- nonzero / masks */

THTensor *at_nonzero(const THTensor *self, THTensor *out) {
  return into_out(nonzero_coords(self, false), out);
}

/* self and mask broadcast together, both contiguous (new refs); -1 on error */
static int masked_pair(const THTensor *self, const THTensor *mask, THTensor **s, THTensor **m) {
  int nd;
  int64_t shape[TH_MAX_DIMS];
  if (at_broadcast_sizes(self->ndim, self->sizes, mask->ndim, mask->sizes, &nd, shape) < 0) return -1;
  ATIntList sl = {nd};
  memcpy(sl.v, shape, nd * sizeof(int64_t));
  THTensor *se = at_expand(self, &sl), *me = se ? at_expand(mask, &sl) : NULL;
  *s = me ? at_contiguous(se) : NULL;
  *m = *s ? at_contiguous(me) : NULL;
  THTensor_free(se);
  THTensor_free(me);
  if (!*m) { THTensor_free(*s); return -1; }
  return 0;
}

THTensor *at_masked_select(const THTensor *self, const THTensor *mask, THTensor *out) {
  if (mask->dtype != TH_Bool) {
    THError_set(TH_ERR_RUNTIME, "masked_select: expected BoolTensor for mask");
    return NULL;
  }
  THTensor *s, *m;
  if (masked_pair(self, mask, &s, &m) < 0) return NULL;
  if (THTensor_device(s) >= 0) {   /* a take at the mask's flat nonzero positions */
    THTensor *pos = nonzero_coords(m, true);
    THTensor *r = pos ? at_take(s, pos, NULL) : NULL;
    THTensor_free(pos);
    THTensor_free(s);
    THTensor_free(m);
    return into_out(r, out);
  }
  int64_t n = THTensor_numel(s);
  const uint8_t *mv = (const uint8_t *)THTensor_data(m);   /* bool bytes read as bytes: any nonzero is true */
  const char *sv = THTensor_data(s);
  int es = THDtype_size(s->dtype), nt = threads_for(n);
  int64_t counts[256] = {0}, start[256], total = 0;
  if (nt > 256) nt = 256;
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
  for (int k = 0; k < nt; k++) counts[k] = count_fns[TH_Bool]((const char *)mv, n * k / nt, n * (k + 1) / nt);
  for (int k = 0; k < nt; k++) { start[k] = total; total += counts[k]; }
  THTensor *r = THTensor_new(s->dtype, 1, &total);
  if (r) {
    char *rv = THTensor_data(r);
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
    for (int k = 0; k < nt; k++) {
      int64_t lo = n * k / nt, hi = n * (k + 1) / nt, w = start[k];
      switch (es) {
#define SEL(T) { const T *a = (const T *)sv; T *o = (T *)rv; for (int64_t i = lo; i < hi; i++) if (mv[i]) o[w++] = a[i]; } break;
        case 1: SEL(uint8_t)
        case 2: SEL(uint16_t)
        case 4: SEL(uint32_t)
        case 8: SEL(uint64_t)
        default: SEL(at_bytes16)
#undef SEL
      }
    }
  }
  THTensor_free(s);
  THTensor_free(m);
  return into_out(r, out);
}

THTensor *at_masked_scatter(const THTensor *self, const THTensor *mask, const THTensor *source, THTensor *out) {
  if (mask->dtype != TH_Bool) {
    THError_set(TH_ERR_RUNTIME, "masked_scatter_ only supports boolean masks, but got mask with dtype %s",
                THDtype_info[mask->dtype].legacy);   /* torch prints the ScalarType here: Float, Long */
    return NULL;
  }
  if (source->dtype != self->dtype) {
    THError_set(TH_ERR_RUNTIME, "masked_scatter: expected self and source to have same dtypes but got%s and %s",
                legacy(self->dtype), legacy(source->dtype));
    return NULL;
  }
  THTensor *s, *m, *src = at_contiguous(source);
  if (!src) return NULL;
  if (masked_pair(out ? out : self, mask, &s, &m) < 0) { THTensor_free(src); return NULL; }
  if (out && (s->ndim != out->ndim || memcmp(s->sizes, out->sizes, out->ndim * sizeof(int64_t)))) {
    char b1[256], b2[256];
    THError_set(TH_ERR_RUNTIME, "output with shape %s doesn't match the broadcast shape %s", shape_str(out, b1),
                shape_str(s, b2));
    THTensor_free(s); THTensor_free(m); THTensor_free(src);
    return NULL;
  }
  THTensor *dst = (s == out || s->storage == self->storage) ? at_clone(s, false) : THTensor_retain(s);
  THTensor_free(s);
  int64_t n = dst ? THTensor_numel(dst) : 0, avail = THTensor_numel(src), k = 0;
  const uint8_t *mv = (const uint8_t *)THTensor_data(m);   /* bool bytes read as bytes: any nonzero is true */
  int es = THDtype_size(self->dtype);
  int rc = dst ? 0 : -1;
  if (dst && THTensor_device(dst) >= 0) {   /* a put of source's first elements at the mask's flat positions */
    THTensor *pos = nonzero_coords(m, true), *head = NULL, *put = NULL;
    int64_t cnt = pos ? THTensor_numel(pos) : 0, one = 1;
    if (pos && cnt > avail) THError_set(TH_ERR_RUNTIME, "Number of elements of source < number of ones in mask");
    else if (pos) head = THTensor_newView(src, 1, &cnt, &one, src->offset);
    if (head) put = at_put(dst, pos, head, false, dst);
    rc = put ? 0 : -1;
    THTensor_free(put);
    THTensor_free(head);
    THTensor_free(pos);
  } else if (dst) {
    char *dv = THTensor_data(dst);
    const char *sv = THTensor_data(src);
    for (int64_t i = 0; i < n; i++)
      if (mv[i]) {
        if (k >= avail) { rc = -1; break; }
        memcpy(dv + i * es, sv + k * es, es);
        k++;
      }
    if (rc < 0) THError_set(TH_ERR_RUNTIME, "Number of elements of source < number of ones in mask");
  }
  THTensor_free(m);
  THTensor_free(src);
  if (rc == 0 && out) rc = at_copy_(out, dst);
  if (rc < 0) { THTensor_free(dst); return NULL; }
  if (out) { THTensor_free(dst); return THTensor_retain(out); }
  return dst;
}
