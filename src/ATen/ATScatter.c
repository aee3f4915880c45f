/* gather / scatter / index_add (see ATScatter.h). All three run one loop
 * nest over an iteration shape (index's shape, or source's for index_add):
 * at position p the self slot is p with its dim coordinate replaced by the
 * index value there, and the other operand (src, value, or gather's output)
 * is read or written at p. Rows along the last iteration dim go to the
 * per-dtype row kernel (src/TH/generic/THTensorScatter.c).
 * Threads: gather writes a fresh output, so any rows can run in parallel.
 * A scatter may hit one self slot from many positions, but only from
 * positions that agree on every coordinate except dim, so work is split
 * over a non-scatter coordinate (whole blocks of the dims before dim, or
 * column ranges of the last dim) and never races.
 * On a GPU the same nest is one at_cuda->index launch (a thread per
 * position; scatter-add and index_add by atomicAdd, prod/amax/amin by
 * compare-and-swap). */
#include "ATScatter.h"
#include "ATComplex.h"

#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "../TH/THKernelsScatter.h"
#include "ATCuda.h"

#define PAR_MIN_WORK 32768
#define COL_CHUNK 16   /* columns per thread at least: a cache line of floats */

typedef struct {
  int n, dim;
  int64_t size[TH_MAX_DIMS];
  int64_t ss[TH_MAX_DIMS], is[TH_MAX_DIMS], os[TH_MAX_DIMS];   /* self (0 at dim), index, other */
  char *self, *other;
  const int64_t *idx;
  size_t es;
  THScatterRowFn fn;
  THScatterRow proto;
  int device;                     /* >= 0: the nest runs there (run_cuda) */
  THDtype dt;                     /* for the GPU launch, */
  double alpha;                   /* and index_add's alpha there */
} Nest;

/* Rows [lo, hi) (flat over dims 0..n-2), columns [c0, c1) of each; the
 * kernel takes the rows along dim n-2 in one call. false + *bad on a bad index. */
static bool run_rows(const Nest *g, int64_t lo, int64_t hi, int64_t c0, int64_t c1, int64_t *bad) {
  int n = g->n, m = n - 2;   /* m: the dim the kernel walks rows along (none if n == 1) */
  THScatterRow r = g->proto;
  int64_t ctr[TH_MAX_DIMS] = {0}, so = c0 * g->ss[n - 1], io = c0 * g->is[n - 1], oo = c0 * g->os[n - 1], rem = lo;
  for (int d = m; d >= 0; d--) {   /* unravel lo once, then count */
    ctr[d] = rem % g->size[d];
    rem /= g->size[d];
    so += ctr[d] * g->ss[d]; io += ctr[d] * g->is[d]; oo += ctr[d] * g->os[d];
  }
  int64_t run_len = m >= 0 ? g->size[m] : 1;
  r.s_row = m >= 0 ? g->ss[m] : 0; r.i_row = m >= 0 ? g->is[m] : 0; r.o_row = m >= 0 ? g->os[m] : 0;
  for (int64_t row = lo; row < hi;) {
    int64_t at = m >= 0 ? ctr[m] : 0, take = run_len - at < hi - row ? run_len - at : hi - row;
    r.self = g->self + so * (int64_t)g->es;
    r.other = g->other + oo * (int64_t)g->es;
    r.idx = g->idx + io;
    r.nrows = take;
    if (!g->fn(&r, c1 - c0, bad)) return false;
    row += take;
    if (m < 0) continue;
    so += take * r.s_row; io += take * r.i_row; oo += take * r.o_row;
    if ((ctr[m] += take) < run_len) continue;
    so -= ctr[m] * r.s_row; io -= ctr[m] * r.i_row; oo -= ctr[m] * r.o_row;
    ctr[m] = 0;
    for (int d = m - 1; d >= 0; d--) {
      so += g->ss[d]; io += g->is[d]; oo += g->os[d];
      if (++ctr[d] < g->size[d]) break;
      so -= ctr[d] * g->ss[d]; io -= ctr[d] * g->is[d]; oo -= ctr[d] * g->os[d];
      ctr[d] = 0;
    }
  }
  return true;
}

/* The first bad index over parallel parts: the one of the lowest part. */
typedef struct { int64_t part, value; } Bad;
static void note_bad(Bad *b, int64_t part, int64_t value) {
#pragma omp critical(at_scatter_bad)
  if (part < b->part) { b->part = part; b->value = value; }
}

/* Runs the nest; -1 with torch's error at an out-of-bounds index. */
static int run_cuda(const Nest *g);
static int run(const Nest *g, bool any_rows) {
  if (g->device >= 0) return run_cuda(g);
  int n = g->n;
  int64_t inner = g->size[n - 1], rows = 1, block = 1, v = 0;
  for (int d = 0; d < n - 1; d++) rows *= g->size[d];
  if (rows == 0 || inner == 0) return 0;
  int nt = at_get_num_threads();
  Bad bad = {INT64_MAX, 0};
#ifdef _OPENMP
  if (omp_in_parallel()) nt = 1;
#endif
  /* rows in different blocks never share a self slot */
  if (!any_rows && g->dim != n - 1)
    for (int d = g->dim; d < n - 1; d++) block *= g->size[d];
  int64_t nblocks = rows / block, nchunks = inner / COL_CHUNK < nt ? inner / COL_CHUNK : nt;
  if (!any_rows && g->dim == n - 1) nchunks = 1;   /* columns along the scatter dim may collide */
  if (nt < 2 || rows * inner < PAR_MIN_WORK || (nblocks < 2 && nchunks < 2)) {
    if (!run_rows(g, 0, rows, 0, inner, &v)) note_bad(&bad, 0, v);
  } else if (nblocks >= nt || (nblocks > 1 && inner < COL_CHUNK * 2)) {
    int64_t per = (nblocks + nt - 1) / nt;
#pragma omp parallel for num_threads(nt) schedule(static) private(v)
    for (int t = 0; t < nt; t++) {
      int64_t b0 = t * per < nblocks ? t * per : nblocks, b1 = b0 + per < nblocks ? b0 + per : nblocks;
      if (b0 < b1 && !run_rows(g, b0 * block, b1 * block, 0, inner, &v)) note_bad(&bad, t, v);
    }
  } else {
#pragma omp parallel for num_threads((int)nchunks) schedule(static) private(v)
    for (int64_t c = 0; c < nchunks; c++)
      if (!run_rows(g, 0, rows, inner * c / nchunks, inner * (c + 1) / nchunks, &v)) note_bad(&bad, c, v);
  }
  if (bad.part == INT64_MAX) return 0;
  THError_set(TH_ERR_RUNTIME, "index %lld is out of bounds for dimension %d with size %lld", (long long)bad.value,
              g->dim, (long long)g->proto.bound);
  return -1;
}

/* The nest on the GPU: set, add (index_add's alpha too), prod, amax, amin; -1 with the
 * CPU's error at an out-of-bounds index. */
static int run_cuda(const Nest *g) {
  ATCudaIndex C;
  memset(&C, 0, sizeof C);
  switch (g->proto.op) {
    case TH_SCATTER_GATHER: C.op = AT_IDX_GATHER; break;
    case TH_SCATTER_SET: C.op = AT_IDX_PUT; break;
    case TH_SCATTER_ADD: C.op = AT_IDX_ACCUM; C.alpha = 1; break;
    case TH_SCATTER_ADD_ALPHA: C.op = AT_IDX_ACCUM; C.alpha = g->alpha; break;
    case TH_SCATTER_MUL: C.op = AT_IDX_PROD; break;
    case TH_SCATTER_MAX: C.op = AT_IDX_AMAX; break;
    case TH_SCATTER_MIN: C.op = AT_IDX_AMIN; break;
  }
  C.dt = g->dt;
  C.ndim = g->n;
  C.nidx = 1;
  C.skip = INT64_MIN;
  memcpy(C.sizes, g->size, g->n * sizeof(int64_t));
  memcpy(C.ss, g->ss, g->n * sizeof(int64_t));
  memcpy(C.os, g->os, g->n * sizeof(int64_t));
  memcpy(C.is, g->is, g->n * sizeof(int64_t));
  C.idx[0] = g->idx;
  C.isize[0] = g->proto.bound;
  C.istride[0] = g->proto.s_dim;
  C.self = g->self;
  C.other = g->other;
  int rc = at_cuda->index(&C);
  if (rc == 1)
    THError_set(TH_ERR_RUNTIME, "index %lld is out of bounds for dimension %d with size %lld", (long long)C.bad_value,
                g->dim, (long long)g->proto.bound);
  return rc == 0 ? 0 : -1;
}

static const THScatterRowFn row_fns[TH_NDTYPES] = TH_ALL_TABLE(scatter_row);

/* index as int64 (int32 is converted); NULL + error for other dtypes. */
static THTensor *long_index(const THTensor *index, const char *op, bool got) {
  if (index->dtype == TH_Int64) return THTensor_retain((THTensor *)index);
  if (index->dtype == TH_Int32) return at_to_dtype(index, TH_Int64, false);
  if (got)
    THError_set(TH_ERR_RUNTIME, "%s: Expected dtype int32/int64 for index but got: %s", op,
                THDtype_info[index->dtype].legacy);
  else
    THError_set(TH_ERR_RUNTIME, "%s: Expected dtype int32/int64 for index", op);
  return NULL;
}

/* Every value of a strided 1-d index in [0, bound); else torch's error. */
static int check_bounds(const int64_t *idx, int64_t n, int64_t stride, int dim, int64_t bound) {
  for (int64_t j = 0; j < n; j++)
    if (idx[j * stride] < 0 || idx[j * stride] >= bound) {
      THError_set(TH_ERR_RUNTIME, "index %lld is out of bounds for dimension %d with size %lld",
                  (long long)idx[j * stride], dim, (long long)bound);
      return -1;
    }
  return 0;
}

/* Size and stride of t at d, a 0-d tensor read as shape [1]. */
static int64_t sz(const THTensor *t, int d) { return t->ndim ? t->sizes[d] : 1; }
static int64_t st(const THTensor *t, int d) { return t->ndim ? t->strides[d] : 0; }

/* The nest over index's shape; other (may be NULL for now) read at index positions. */
static void index_nest(Nest *g, const THTensor *self, int dim, const THTensor *idx, const THTensor *other) {
  memset(g, 0, sizeof *g);
  g->n = idx->ndim ? idx->ndim : 1;
  g->dim = dim;
  for (int d = 0; d < g->n; d++) {
    g->size[d] = sz(idx, d);
    g->ss[d] = d == dim ? 0 : st(self, d);
    g->is[d] = st(idx, d);
    g->os[d] = other ? st(other, d) : 0;
  }
  g->proto.s_dim = st(self, dim);
  g->idx = (const int64_t *)THTensor_data(idx);
  g->es = (size_t)THDtype_size(self->dtype);
  g->fn = row_fns[self->dtype];
  g->dt = self->dtype;
  g->device = THTensor_device(self);
}

static void finish_rows(Nest *g) {
  g->proto.s_in = g->ss[g->n - 1];
  g->proto.i_in = g->is[g->n - 1];
  g->proto.o_in = g->os[g->n - 1];
}

static int same_ndim(const THTensor *a, const THTensor *idx, const char *what) {
  if (a->ndim == idx->ndim || (a->ndim <= 1 && idx->ndim <= 1)) return 0;
  THError_set(TH_ERR_RUNTIME, "Index tensor must have the same number of dimensions as %s tensor", what);
  return -1;
}

THTensor *at_gather_c(const THTensor *self, int64_t dim, const THTensor *index) {
  if (at_no_complex(self, "gather_cpu") < 0) return NULL;
  int64_t d64;
  if (at_wrap_dim(dim, self->ndim, &d64) < 0) return NULL;
  int dm = (int)d64;
  THTensor *idx = long_index(index, "gather()", false);
  if (!idx) return NULL;
  if (same_ndim(self, idx, "input") < 0) { THTensor_free(idx); return NULL; }
  if (THTensor_numel(idx) > 0)
    for (int d = 0; d < idx->ndim; d++)
      if (d != dm && idx->sizes[d] > sz(self, d)) {
        char a[512], b[512];
        THError_set(TH_ERR_RUNTIME,
                    "Size does not match at dimension %d expected index %s to be no larger than self %s apart "
                    "from dimension %d", d, THTensor_sizeStr(idx->ndim, idx->sizes, a, sizeof a),
                    THTensor_sizeStr(self->ndim, self->sizes, b, sizeof b), dm);
        THTensor_free(idx);
        return NULL;
      }
  THTensor *out = at_new_on(THTensor_device(self), self->dtype, idx->ndim, idx->sizes, NULL);
  Nest g;
  if (out) {
    index_nest(&g, self, dm, idx, out);
    finish_rows(&g);
    g.self = THTensor_data(self);
    g.other = THTensor_data(out);
    g.proto.op = TH_SCATTER_GATHER;
    g.proto.bound = sz(self, dm);
    if (run(&g, true) < 0) { THTensor_free(out); out = NULL; }
  }
  THTensor_free(idx);
  return out;
}

static int scatter_op(const char *reduce, THScatterOp *op) {
  static const struct { const char *name; THScatterOp op; } ops[] = {
    {"none", TH_SCATTER_SET}, {"sum", TH_SCATTER_ADD}, {"add", TH_SCATTER_ADD}, {"prod", TH_SCATTER_MUL},
    {"multiply", TH_SCATTER_MUL}, {"amax", TH_SCATTER_MAX}, {"amin", TH_SCATTER_MIN}};
  for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
    if (!strcmp(reduce, ops[k].name)) { *op = ops[k].op; return 0; }
  THError_set(TH_ERR_RUNTIME, "reduce argument must be either add or multiply.");
  return -1;
}

/* torch's checks of index against self (and src): sizes apart from dim. */
static int scatter_sizes(const THTensor *self, int dm, const THTensor *idx, const THTensor *src) {
  if (THTensor_numel(idx) == 0) return 0;
  for (int d = 0; d < idx->ndim; d++) {
    bool bad_self = d != dm && idx->sizes[d] > sz(self, d), bad_src = src && idx->sizes[d] > sz(src, d);
    if (!bad_self && !bad_src) continue;
    char a[512], b[512], c[512];
    THTensor_sizeStr(idx->ndim, idx->sizes, a, sizeof a);
    THTensor_sizeStr(self->ndim, self->sizes, b, sizeof b);
    if (src)
      THError_set(TH_ERR_RUNTIME, "Expected index %s to be no larger than self %s apart from dimension %d and to "
                  "be no larger size than src %s", a, b, dm, THTensor_sizeStr(src->ndim, src->sizes, c, sizeof c));
    else
      THError_set(TH_ERR_RUNTIME, "Expected index %s to be no larger than self %s apart from dimension %d", a, b, dm);
    return -1;
  }
  return 0;
}

/* What the scatter writes into: self itself in place (out == self), else a copy (written into any other
 * out after). In place skips the
 * copy and the write back (scatter_ of a value into zeros(4096, 100) took 9x torch's time, scatter_add_
 * and index_add_ 2x); an operand that shares self's storage still goes through a copy, so it is read
 * as it was before the writes. NULL + error on failure. */
static THTensor *scatter_target(const THTensor *self, THTensor *out, const THTensor *a, const THTensor *b) {
  if (out == self && !(a && a->storage == out->storage) && !(b && b->storage == out->storage))
    return at_check_no_internal_overlap(out) < 0 ? NULL : THTensor_retain(out);
  return at_clone(self, false);
}

/* The copy's values back into self (in place, after a copy was written) */
static THTensor *scatter_result(THTensor *target, THTensor *out) {
  if (!target || !out || target == out) return target;
  int rc = at_copy_(out, target);
  THTensor_free(target);
  return rc < 0 ? NULL : THTensor_retain(out);
}

THTensor *at_scatter_c(const THTensor *self, int64_t dim, const THTensor *index, const THTensor *src,
                       ATScalar value, const char *reduce, THTensor *out_) {
  if (at_no_complex(self, "scatter_cpu") < 0) return NULL;
  int64_t d64;
  THScatterOp op;
  if (at_wrap_dim(dim, self->ndim, &d64) < 0 || scatter_op(reduce, &op) < 0) return NULL;
  int dm = (int)d64;
  THTensor *idx = long_index(index, "scatter()", false), *val = NULL, *out = NULL;
  if (!idx) return NULL;
  if (same_ndim(self, idx, "self") < 0 || (src && same_ndim(src, idx, "src") < 0)) goto done;
  if (src && src->dtype != self->dtype) {
    THError_set(TH_ERR_RUNTIME, "scatter(): Expected self.dtype to be equal to src.dtype");
    goto done;
  }
  if (scatter_sizes(self, dm, idx, src) < 0) goto done;
  if (!src && !(src = val = at_scalar_tensor(value, self->dtype))) goto done;
  if (val && THTensor_device(self) >= 0) {   /* the value's one element where the kernel reads it */
    THTensor *dv = at_to_device(val, THTensor_device(self), self->dtype, false);
    THTensor_free(val);
    if (!(src = val = dv)) goto done;
  }
  Nest g;
  index_nest(&g, self, dm, idx, val ? NULL : src);
  g.other = THTensor_data(src);
  g.proto.op = op;
  g.proto.bound = sz(self, dm);
  if (!(out = scatter_target(self, out_, idx, val ? NULL : src))) goto done;
  /* the target's strides, not self's */
  for (int d = 0; d < g.n; d++) g.ss[d] = d == dm ? 0 : st(out, d);
  g.proto.s_dim = st(out, dm);
  g.self = THTensor_data(out);
  finish_rows(&g);
  if (run(&g, false) < 0) { THTensor_free(out); out = NULL; }
  out = scatter_result(out, out_);
done:
  THTensor_free(idx);
  THTensor_free(val);
  return out;
}

/* torch's index_add_ checks, in torch's order. */
static int index_add_checks(const THTensor *self, int dm, const THTensor *idx, const THTensor *source) {
  char a[512], b[512];
  if (idx->ndim > 1) {
    THError_set(TH_ERR_INDEX, "index_add_(): Index is supposed to be a vector, but got dim: %d with type: %s and "
                "size: %s", idx->ndim, THDtype_info[idx->dtype].legacy,
                THTensor_sizeStr(idx->ndim, idx->sizes, a, sizeof a));
    return -1;
  }
  if (self->dtype != source->dtype) {
    THError_set(TH_ERR_RUNTIME, "index_add_(): self (%s) and source (%s) must have the same scalar type",
                THDtype_info[self->dtype].legacy, THDtype_info[source->dtype].legacy);
    return -1;
  }
  int64_t nidx = THTensor_numel(idx), ssz = source->ndim > dm ? source->sizes[dm] : 1;
  if (nidx != ssz) {
    THError_set(TH_ERR_RUNTIME, "index_add_(): Number of indices (%lld) should be equal to source.size(dim): "
                "(%lld), for dim: %d", (long long)nidx, (long long)ssz, dm);
    return -1;
  }
  bool ok = (self->ndim > 1 ? self->ndim : 1) == (source->ndim > 1 ? source->ndim : 1) &&
            (self->ndim > 0 || THTensor_numel(source) == 1);
  for (int d = 0; ok && d < self->ndim; d++) ok = d == dm || self->sizes[d] == sz(source, d);
  if (!ok) {
    THError_set(TH_ERR_RUNTIME, "source tensor shape must match self tensor shape, excluding the specified "
                "dimension. Got self.shape = %s source.shape = %s", THTensor_sizeStr(self->ndim, self->sizes, a, sizeof a),
                THTensor_sizeStr(source->ndim, source->sizes, b, sizeof b));
    return -1;
  }
  return 0;
}

THTensor *at_index_add_c(const THTensor *self, int64_t dim, const THTensor *index, const THTensor *source,
                         ATScalar alpha, THTensor *out_) {
  if (at_no_complex(self, "index_add_cpu") < 0) return NULL;
  int64_t d64;
  if (at_wrap_dim(dim, self->ndim, &d64) < 0) return NULL;
  int dm = (int)d64;
  THTensor *idx = long_index(index, "index_add_()", true), *out = NULL;
  if (!idx) return NULL;
  if (index_add_checks(self, dm, idx, source) == 0 &&
      (THTensor_device(idx) >= 0 ||   /* the GPU kernel checks them */
       check_bounds((const int64_t *)THTensor_data(idx), THTensor_numel(idx), st(idx, 0), dm, sz(self, dm)) == 0) &&
      (out = scatter_target(self, out_, idx, source))) {
    /* the nest runs over source; the index varies only along dim */
    Nest g;
    memset(&g, 0, sizeof g);
    g.n = source->ndim ? source->ndim : 1;
    g.dim = dm;
    for (int d = 0; d < g.n; d++) {
      g.size[d] = sz(source, d);
      g.ss[d] = d == dm ? 0 : st(out, d);
      g.is[d] = d == dm ? st(idx, 0) : 0;
      g.os[d] = st(source, d);
    }
    g.proto.s_dim = st(out, dm);
    g.idx = (const int64_t *)THTensor_data(idx);
    g.es = (size_t)THDtype_size(self->dtype);
    g.fn = row_fns[self->dtype];
    g.dt = self->dtype;
    g.device = THTensor_device(out);
    g.alpha = alpha.kind == AT_SCALAR_FLOAT ? alpha.d : (double)alpha.i;
    g.self = THTensor_data(out);
    g.other = THTensor_data(source);
    bool unit = alpha.kind == AT_SCALAR_FLOAT ? alpha.d == 1.0 : alpha.i == 1;
    g.proto.op = unit ? TH_SCATTER_ADD : TH_SCATTER_ADD_ALPHA;
    g.proto.alpha_d = alpha.d;
    g.proto.alpha_i = alpha.i;
    g.proto.bound = sz(self, dm);
    finish_rows(&g);
    if (run(&g, false) < 0) { THTensor_free(out); out = NULL; }
    out = scatter_result(out, out_);
  }
  THTensor_free(idx);
  return out;
}
