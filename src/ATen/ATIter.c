/* The strided N-d loop driver every elementwise op goes through:
 * broadcast -> convert inputs -> allocate or check the output ->
 * order dimensions by the output's layout -> coalesce -> run the kernel's
 * 1-d inner loop over the rest, split across OpenMP threads when large. */
#include "ATen.h"
#include "ATCuda.h"
#include "../TH/THKernels.h"
#include "../TH/THLoops.h"

#include <omp.h>
#include <string.h>

#define AT_MAX_OPS 8
#define AT_GRAIN 32768   /* below this many elements threads cost more than they save */

static int num_threads = 0;
void at_set_num_threads(int n) { if (n > 0) { num_threads = n; omp_set_num_threads(n); } }
int at_get_num_threads(void) { return num_threads > 0 ? num_threads : omp_get_max_threads(); }

/* Reads and clears the error a kernel flagged during the loop just run. */
int at_check_kernel_error(void) {
  if (!atomic_load_explicit(&th_kernel_error, memory_order_relaxed)) return 0;
  atomic_store_explicit(&th_kernel_error, 0, memory_order_relaxed);
  THError_set(TH_ERR_RUNTIME, "ZeroDivisionError");
  return -1;
}

int at_broadcast_sizes(int na, const int64_t *a, int nb, const int64_t *b, int *ndim, int64_t *out) {
  int n = na > nb ? na : nb;
  for (int i = n - 1; i >= 0; i--) {
    int ia = i - (n - na), ib = i - (n - nb);
    int64_t sa = ia >= 0 ? a[ia] : 1, sb = ib >= 0 ? b[ib] : 1;
    if (sa != sb && sa != 1 && sb != 1) {
      THError_set(TH_ERR_RUNTIME,
                  "The size of tensor a (%lld) must match the size of tensor b (%lld) at non-singleton dimension %d",
                  (long long)sa, (long long)sb, i);
      return -1;
    }
    out[i] = sa == 1 ? sb : sa;
  }
  *ndim = n;
  return 0;
}

int at_broadcast_shape(int n, const THTensor *const *ts, int *ndim, int64_t *shape) {
  int nd = 0;
  int64_t cur[TH_MAX_DIMS];
  for (int i = 0; i < n; i++) {
    if (at_broadcast_sizes(nd, cur, ts[i]->ndim, ts[i]->sizes, &nd, cur) < 0) return -1;
  }
  *ndim = nd;
  memcpy(shape, cur, nd * sizeof(int64_t));
  return 0;
}

int at_check_no_internal_overlap(const THTensor *t) {
  /* an empty tensor is written nowhere (torch copies into an empty channels_last one, strides (0, 1, 0, 0)) */
  if (THTensor_isNonOverlappingAndDense(t) || THTensor_numel(t) == 0) return 0;
  for (int i = 0; i < t->ndim; i++)
    if (t->sizes[i] > 1 && t->strides[i] == 0) {
      THError_set(TH_ERR_RUNTIME,
                  "unsupported operation: more than one element of the written-to tensor refers to a single "
                  "memory location. Please clone() the tensor before performing the operation.");
      return -1;
    }
  return 0;
}

static void byte_range(const THTensor *t, char **lo, char **hi) {
  char *p = THTensor_data(t);
  int64_t span = 0;
  for (int i = 0; i < t->ndim; i++) span += (t->sizes[i] - 1) * t->strides[i];
  *lo = p;
  *hi = p + (span + 1) * THDtype_size(t->dtype);
}

int at_check_no_partial_overlap(const THTensor *a, const THTensor *b) {
  if (a == b || a->storage != b->storage) return 0;
  if (THTensor_numel(a) == 0 || THTensor_numel(b) == 0) return 0;
  if (!THTensor_isNonOverlappingAndDense(a) || !THTensor_isNonOverlappingAndDense(b)) return 0;
  char *alo, *ahi, *blo, *bhi;
  byte_range(a, &alo, &ahi);
  byte_range(b, &blo, &bhi);
  bool same = alo == blo && ahi == bhi && a->ndim == b->ndim && a->dtype == b->dtype &&
              !memcmp(a->strides, b->strides, a->ndim * sizeof(int64_t)) &&
              !memcmp(a->sizes, b->sizes, a->ndim * sizeof(int64_t));
  if (same || !(alo < bhi && blo < ahi)) return 0;
  THError_set(TH_ERR_RUNTIME,
              "unsupported operation: some elements of the input tensor and the written-to tensor refer to a "
              "single memory location. Please clone() the tensor before performing the operation.");
  return -1;
}

/* ---- the loop ---- */
typedef struct {
  int ndim, nops;                  /* dims innermost first */
  int64_t shape[TH_MAX_DIMS];
  int64_t strides[AT_MAX_OPS][TH_MAX_DIMS];   /* bytes */
  char *data[AT_MAX_OPS];
} Loop;

/* nops is a constant in each instantiation (run_range): with it read from L, the pointer updates
 * between kernel calls ran as loops over arrays on the stack, and over short rows (kron's broadcast
 * product, 8 elements a row) they took 3x the time of the kernel itself */
static inline __attribute__((always_inline)) void run_range_n(const Loop *L, THLoopFn fn, const void *extra,
                                                              int64_t begin, int64_t end, const int nops) {
  int64_t idx[TH_MAX_DIMS], rem = begin;
  char *ptr[AT_MAX_OPS];
  int64_t inner[AT_MAX_OPS];
  for (int k = 0; k < nops; k++) { ptr[k] = L->data[k]; inner[k] = L->strides[k][0]; }
  for (int d = 0; d < L->ndim; d++) {
    idx[d] = rem % L->shape[d];
    rem /= L->shape[d];
    for (int k = 0; k < nops; k++) ptr[k] += idx[d] * L->strides[k][d];
  }
  const int64_t shape0 = L->shape[0];
  while (begin < end) {
    int64_t n = shape0 - idx[0];
    if (n > end - begin) n = end - begin;
    fn(ptr, inner, n, extra);
    begin += n;
    idx[0] += n;
    for (int k = 0; k < nops; k++) ptr[k] += n * inner[k];
    for (int d = 0; d < L->ndim - 1 && idx[d] == L->shape[d]; d++) {
      idx[d] = 0;
      idx[d + 1]++;
      for (int k = 0; k < nops; k++) ptr[k] += L->strides[k][d + 1] - L->shape[d] * L->strides[k][d];
    }
  }
}

static void run_range(const Loop *L, THLoopFn fn, const void *extra, int64_t begin, int64_t end) {
  switch (L->nops) {
  case 2: run_range_n(L, fn, extra, begin, end, 2); return;
  case 3: run_range_n(L, fn, extra, begin, end, 3); return;
  default: run_range_n(L, fn, extra, begin, end, L->nops); return;
  }
}

static void run_loop(const Loop *L0, THLoopFn fn, const void *extra) {
  /* An innermost dim of 2-4 under a longer one (a pixel_shuffle's permuted copy: x.view(n, c, r, r, h, w)
   * .permute(0, 1, 4, 2, 5, 3).contiguous()) made one kernel call per 2-4 elements, 5x torch's time: the
   * two dims trade places so each call runs the longer one. Only where the output's strides along both
   * are nonzero: each element is then written once, so the order of the elements cannot matter. */
  Loop Ls;
  const Loop *L = L0;
  if (L0->ndim >= 2 && L0->shape[0] <= 4 && L0->shape[1] >= 2 * L0->shape[0] && L0->strides[0][0] != 0 &&
      L0->strides[0][1] != 0) {
    Ls = *L0;
    Ls.shape[0] = L0->shape[1];
    Ls.shape[1] = L0->shape[0];
    for (int k = 0; k < L0->nops; k++) {
      Ls.strides[k][0] = L0->strides[k][1];
      Ls.strides[k][1] = L0->strides[k][0];
    }
    L = &Ls;
  }
  int64_t numel = 1;
  for (int d = 0; d < L->ndim; d++) numel *= L->shape[d];
  if (numel == 0) return;
  int nt = at_get_num_threads();
  if (numel < AT_GRAIN || nt <= 1 || omp_in_parallel()) {
    run_range(L, fn, extra, 0, numel);
    return;
  }
#pragma omp parallel num_threads(nt)
  {
    int tid = omp_get_thread_num(), nth = omp_get_num_threads();
    int64_t chunk = ((numel + nth - 1) / nth + 63) & ~(int64_t)63;
    int64_t b = tid * chunk, e = b + chunk < numel ? b + chunk : numel;
    if (b < e) run_range(L, fn, extra, b, e);
  }
}

/* Fills L from tensors viewed at the broadcast shape (C order dims), then
 * orders dims by ops[0]'s strides (innermost first) and coalesces. */
static void build_loop(Loop *L, int nops, THTensor *const *ops, int ndim, const int64_t *shape) {
  int perm[TH_MAX_DIMS];
  L->nops = nops;
  int64_t bst[AT_MAX_OPS][TH_MAX_DIMS];
  for (int k = 0; k < nops; k++) {
    const THTensor *t = ops[k];
    int es = THDtype_size(t->dtype), off = ndim - t->ndim;
    L->data[k] = THTensor_data(t);
    for (int d = 0; d < ndim; d++) {
      int td = d - off;
      bst[k][d] = (td < 0 || t->sizes[td] == 1) ? 0 : t->strides[td] * es;
    }
  }
  /* innermost first: reverse C order, then stable-sort by |stride of op 0| */
  for (int i = 0; i < ndim; i++) perm[i] = ndim - 1 - i;
  for (int i = 1; i < ndim; i++)
    for (int j = i; j > 0; j--) {
      int64_t s1 = bst[0][perm[j - 1]], s2 = bst[0][perm[j]];
      if (s1 < 0) s1 = -s1;
      if (s2 < 0) s2 = -s2;
      if (s2 != 0 && s1 > s2) { int tmp = perm[j]; perm[j] = perm[j - 1]; perm[j - 1] = tmp; }
      else break;
    }
  int nd = 0;
  for (int i = 0; i < ndim; i++) {
    int d = perm[i];
    if (shape[d] == 1) continue;
    if (nd > 0) {
      bool merge = true;
      for (int k = 0; k < nops && merge; k++)
        merge = bst[k][d] == L->strides[k][nd - 1] * L->shape[nd - 1];
      if (merge) { L->shape[nd - 1] *= shape[d]; continue; }
    }
    L->shape[nd] = shape[d];
    for (int k = 0; k < nops; k++) L->strides[k][nd] = bst[k][d];
    nd++;
  }
  if (nd == 0) {
    L->shape[0] = 1;
    for (int k = 0; k < nops; k++) L->strides[k][0] = 0;
    nd = 1;
  }
  L->ndim = nd;
}

/* Output strides: follow the first input that already has the full shape
 * and a dense permuted layout (so a.t() + b.t() stays transposed). */
static THTensor *alloc_like_inputs(int device, THDtype dtype, int ndim, const int64_t *shape, int nin,
                                   const THTensor *const *in) {
  for (int i = 0; i < nin; i++) {
    const THTensor *t = in[i];
    if (THTensor_device(t) != device) continue;
    if (t->ndim != ndim || memcmp(t->sizes, shape, ndim * sizeof(int64_t)) != 0) continue;
    if (THTensor_isContiguous(t)) break;
    if (!THTensor_isNonOverlappingAndDense(t)) continue;
    int perm[TH_MAX_DIMS];
    for (int d = 0; d < ndim; d++) perm[d] = d;
    for (int a = 1; a < ndim; a++)   /* outermost first: descending stride */
      for (int b = a; b > 0 && t->strides[perm[b - 1]] < t->strides[perm[b]]; b--) {
        int tmp = perm[b]; perm[b] = perm[b - 1]; perm[b - 1] = tmp;
      }
    int64_t strides[TH_MAX_DIMS], st = 1;
    for (int a = ndim - 1; a >= 0; a--) { strides[perm[a]] = st; st *= shape[perm[a]]; }
    return at_new_on(device, dtype, ndim, shape, strides);
  }
  return at_new_on(device, dtype, ndim, shape, NULL);
}

/* The GPU launch of a built loop: 0-d host operands travel by value. */
static int run_loop_cuda(const Loop *L, THTensor *const *ops, THLoopFn fn, const void *extra) {
  ATCudaLoop C;
  memset(&C, 0, sizeof C);
  C.ndim = L->ndim;
  C.nops = L->nops;
  memcpy(C.shape, L->shape, sizeof C.shape);
  for (int k = 0; k < L->nops; k++) {
    memcpy(C.strides[k], L->strides[k], sizeof C.strides[k]);
    C.dtype[k] = ops[k]->dtype;
    if (THTensor_device(ops[k]) < 0) {
      C.host_scalar[k] = true;
      memcpy(C.scalar[k].bytes, THTensor_data(ops[k]), THDtype_size(ops[k]->dtype));
      for (int d = 0; d < TH_MAX_DIMS; d++) C.strides[k][d] = 0;
    } else {
      C.data[k] = L->data[k];
    }
  }
  return at_cuda->loop(fn, &C, extra);
}

THTensor *at_iter_run(ATIterSpec *spec, int nin, const THTensor *const *in, THLoopFn fn, const void *extra) {
  int ndim;
  int64_t shape[TH_MAX_DIMS];
  char buf[2][256];
  THTensor *ops[AT_MAX_OPS] = {0};
  THTensor *conv[AT_MAX_OPS] = {0};
  THTensor *target = NULL, *out = spec->out;
  if (!fn) {
    THError_set(TH_ERR_NOTIMPL, "\"%s\" not implemented for '%s'", spec->name,
                THDtype_info[spec->common_dtype].legacy);
    return NULL;
  }
  if (nin == 0 && out) {   /* fills: the output alone gives the shape */
    ndim = out->ndim;
    memcpy(shape, out->sizes, ndim * sizeof(int64_t));
  } else if (at_broadcast_shape(nin, in, &ndim, shape) < 0) {
    return NULL;
  } else if (out && spec->inplace && (out->ndim > ndim || memcmp(out->sizes, shape, ndim * sizeof(int64_t)))) {
    /* in-place: inputs broadcast to the output's shape (x.copy_(row)) */
    int nd2;
    int64_t s2[TH_MAX_DIMS];
    if (at_broadcast_sizes(out->ndim, out->sizes, ndim, shape, &nd2, s2) == 0) {
      ndim = nd2;
      memcpy(shape, s2, nd2 * sizeof(int64_t));
    } else {
      THError_clear();
    }
  }
  int device;
  {
    const THTensor *all[AT_MAX_OPS];
    for (int i = 0; i < nin; i++) all[i] = in[i];
    all[nin] = out;
    if (at_common_device(nin + 1, all, spec->name, &device) < 0) return NULL;
    if (out && THTensor_device(out) != device) {
      char a[32], b[32];
      THError_set(TH_ERR_RUNTIME, "Expected all tensors to be on the same device, but found at least two devices, %s and %s!",
                  at_device_str(device, a, sizeof a), at_device_str(THTensor_device(out), b, sizeof b));
      return NULL;
    }
  }
  for (int i = 0; i < nin; i++) {
    THDtype want = spec->in_dtypes && spec->in_dtypes[i] != TH_Undefined ? spec->in_dtypes[i] : spec->common_dtype;
    if (in[i]->dtype == want) { ops[i + 1] = (THTensor *)in[i]; continue; }
    conv[i] = at_to_dtype(in[i], want, false);
    if (!conv[i]) goto fail;
    ops[i + 1] = conv[i];
  }
  if (out) {
    if (spec->check_cast && at_check_cast(spec->out_dtype, out->dtype) < 0) goto fail;
    if (out->ndim != ndim || memcmp(out->sizes, shape, ndim * sizeof(int64_t)) != 0) {
      if (spec->inplace) {
        /* torch broadcasts the output with the inputs first: copy_ of a (3, 6) into a (5, 6) is their
         * size mismatch, not the output-shape one */
        int bnd;
        int64_t bshape[TH_MAX_DIMS];
        if (at_broadcast_sizes(out->ndim, out->sizes, ndim, shape, &bnd, bshape) < 0) goto fail;
        THError_set(TH_ERR_RUNTIME, "output with shape %s doesn't match the broadcast shape %s",
                    THTensor_sizeStr(out->ndim, out->sizes, buf[0], 256), THTensor_sizeStr(ndim, shape, buf[1], 256));
        goto fail;
      }
      if (at_resize_out(out, ndim, shape) < 0) goto fail;
    }
    if (at_check_no_internal_overlap(out) < 0) goto fail;
    for (int i = 0; i < nin; i++)
      if (at_check_no_partial_overlap(out, in[i]) < 0) goto fail;
    if (out->dtype == spec->out_dtype) target = THTensor_retain(out);
    else if (!(target = at_new_on(device, spec->out_dtype, ndim, shape, NULL))) goto fail;
  } else if (!(target = alloc_like_inputs(device, spec->out_dtype, ndim, shape, nin, (const THTensor *const *)ops + 1))) {
    goto fail;
  }
  ops[0] = target;
  /* an empty result takes no step: its strides may be huge (as_strided over no
   * elements) and byte strides computed from them would overflow */
  bool empty = false;
  for (int d = 0; d < ndim; d++) empty |= shape[d] == 0;
  if (!empty && device != TH_DEVICE_META) {   /* meta: the shape, dtype and strides are the result */
    Loop L;
    build_loop(&L, nin + 1, ops, ndim, shape);
    if (device >= 0) {
      if (run_loop_cuda(&L, ops, fn, extra) < 0) goto fail;
    } else {
      run_loop(&L, fn, extra);
    }
  }
  for (int i = 0; i < nin; i++) THTensor_free(conv[i]);
  if (at_check_kernel_error() < 0) { THTensor_free(target); return NULL; }
  if (out && target != out) {
    int rc = at_copy_(out, target);
    THTensor_free(target);
    return rc < 0 ? NULL : THTensor_retain(out);
  }
  return target;
fail:
  for (int i = 0; i < nin; i++) THTensor_free(conv[i]);
  THTensor_free(target);
  return NULL;
}
