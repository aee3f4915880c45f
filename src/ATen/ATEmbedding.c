/* embedding_bag forward and backward (see ATEmbedding.h).
 *
 * The bags are runs of indices: bag b holds indices [start[b], start[b+1]),
 * where start is offsets (the last bag runs to the end of indices unless
 * include_last_offset makes the last offset its end). Rows equal to
 * padding_idx take no part. Float and double compute in their own type, half
 * and bfloat16 in float.
 *
 * Threads: the forward splits the bags, the backward of the rows splits the
 * embedding columns (every thread walks all indices but adds only into its
 * own columns, so no two threads write one element), and the backward of
 * per_sample_weights splits the indices. */
#include "ATArgChecks.h"
#include "ATEmbedding.h"
#include "ATConv.h"   /* at_contiguous_as */
#include "ATCuda.h"
#include "ATIndexing.h"

#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { BAG_SUM = 0, BAG_MEAN = 1, BAG_MAX = 2 };

#define BAG_CT(dt) ((dt) == TH_Double ? TH_Double : TH_Float)

static bool is_index_dtype(THDtype dt) { return dt == TH_Int64 || dt == TH_Int32; }

/* padding_idx as a row, or -1 for none; torch's range check */
static int bag_padding(ATOptInt padding_idx, int64_t V, int64_t *pad) {
  *pad = -1;
  if (!padding_idx.has) return 0;
  if (padding_idx.v < -V || padding_idx.v >= V) {
    THError_set(TH_ERR_RUNTIME, "padding_idx must be within the number of embeddings, -%lld through %lld, but got %lld",
                (long long)V, (long long)(V - 1), (long long)padding_idx.v);
    return -1;
  }
  *pad = padding_idx.v < 0 ? padding_idx.v + V : padding_idx.v;
  return 0;
}

static int bag_checks(const THTensor *weight, const THTensor *indices, const THTensor *offsets, int64_t mode,
                      const THTensor *psw, bool include_last_offset) {
  if (!is_index_dtype(indices->dtype)) {
    THError_set(TH_ERR_RUNTIME, "Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                "Long, Int; but got torch.%sTensor instead (while checking arguments for embedding_bag)",
                THDtype_info[indices->dtype].legacy);
    return -1;
  }
  if (!is_index_dtype(offsets->dtype)) {
    THError_set(TH_ERR_RUNTIME, "Expected tensor for argument #1 'offsets' to have one of the following scalar types: "
                "Long, Int; but got torch.%sTensor instead (while checking arguments for embedding_bag)",
                THDtype_info[offsets->dtype].legacy);
    return -1;
  }
  if (!THDtype_isFloating(weight->dtype)) {
    THError_set(TH_ERR_RUNTIME, "Expected tensor for argument #1 'weight' to have one of the following scalar types: "
                "Half, BFloat16, Float, Double; but got torch.%sTensor instead (while checking arguments for "
                "embedding_bag)", THDtype_info[weight->dtype].legacy);
    return -1;
  }
  if (weight->ndim != 2) {
    THError_set(TH_ERR_RUNTIME, "weight has to be a 2D Tensor, but got Tensor of dimension %d", weight->ndim);
    return -1;
  }
  if (indices->ndim != 1) {
    THError_set(TH_ERR_RUNTIME, "input has to be a 1D Tensor, but got Tensor of dimension %d", indices->ndim);
    return -1;
  }
  if (offsets->ndim != 1) {
    THError_set(TH_ERR_RUNTIME, "offsets has to be a 1D Tensor, but got Tensor of dimension %d", offsets->ndim);
    return -1;
  }
  if (mode < BAG_SUM || mode > BAG_MAX) {
    THError_set(TH_ERR_RUNTIME, "`mode` must be sum, mean, or max.");
    return -1;
  }
  if (psw) {
    if (mode != BAG_SUM) {
      THError_set(TH_ERR_RUNTIME, "embedding_bag: per_sample_weights only supported with mode='sum'");
      return -1;
    }
    if (psw->dtype != weight->dtype) {
      THError_set(TH_ERR_RUNTIME, "Expected tensor for argument #1 'weight' to have the same type as tensor for "
                  "argument #1 'per_sample_weights'; but type torch.%sTensor does not equal torch.%sTensor (while "
                  "checking arguments for embedding_bag)", THDtype_info[weight->dtype].legacy,
                  THDtype_info[psw->dtype].legacy);
      return -1;
    }
    if (psw->ndim != 1 || THTensor_numel(psw) != THTensor_numel(indices)) {
      THError_set(TH_ERR_RUNTIME, "Expected per_sample_weights.value().numel() == indices.numel() to be true, but got "
                  "false.  (Could this error message be improved?  If so, please report an enhancement request to "
                  "PyTorch.)");
      return -1;
    }
  }
  if (include_last_offset && offsets->sizes[0] < 1) {
    THError_set(TH_ERR_RUNTIME, "include_last_offset: number of offset should be at least 1");
    return -1;
  }
  return 0;
}

/* a 1-d index tensor as int64, contiguous (a new reference) */
static THTensor *as_long(const THTensor *t) { return at_contiguous_as(t, TH_Int64); }

/* the B + 1 bag boundaries (malloc'd), checked as torch checks them */
static int64_t *bag_starts(const int64_t *off, int64_t noff, int64_t n, bool include_last_offset, THDtype odt,
                           int64_t *B) {
  *B = include_last_offset ? noff - 1 : noff;
  if (noff > 0 && off[0] != 0) {   /* torch's text ends with an empty tensor's printout */
    THError_set(TH_ERR_RUNTIME, "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                "position 0. However, got %lld\n[ torch.%sTensor{} ]", (long long)off[0], THDtype_info[odt].legacy);
    return NULL;
  }
  if (noff > 0 && off[noff - 1] > n) {
    THError_set(TH_ERR_RUNTIME, "offsets[-1] can not be greater than input's length %lld but got offsets[-1] of %lld",
                (long long)n, (long long)off[noff - 1]);
    return NULL;
  }
  int64_t *start = (int64_t *)malloc((*B + 1) * sizeof(int64_t));
  if (!start) { THError_set(TH_ERR_MEMORY, "embedding_bag: out of memory"); return NULL; }
  for (int64_t b = 0; b < *B; b++) {
    start[b] = off[b];
    if (b > 0 && start[b] < start[b - 1]) {
      THError_set(TH_ERR_RUNTIME, "offsets has to be a non-decreasing sequence, but offsets[%lld] = %lld < offsets[%lld] = %lld",
                  (long long)b, (long long)start[b], (long long)(b - 1), (long long)start[b - 1]);
      free(start);
      return NULL;
    }
  }
  start[*B] = n;   /* as torch: the last bag takes the rest of the indices */
  return start;
}

/* Rows of the table are read (and, in the backward, written) in index order,
 * which is random: the row BAG_AHEAD indices on is prefetched, so several
 * cache misses are in flight instead of one. */
#define BAG_AHEAD 16
static inline void bag_prefetch(const void *p, size_t bytes) {
  /* every line the row touches: a row that starts mid-line (numpy's arrays are only 16-byte
   * aligned) spans one line more than bytes / 64 */
  uintptr_t l = (uintptr_t)p & ~(uintptr_t)63, end = (uintptr_t)p + bytes;
  for (; l < end; l += 64) __builtin_prefetch((const void *)l);
}

/* each of the n indices' bag: bag b holds [off[b], off[b + 1]), the last one runs to n (off[0] is 0).
 * With no bags no index has one: they get 0, and nothing reads them. */
static void bag_owners(const int64_t *off, int64_t B, int64_t n, int64_t *o2b) {
  if (B == 0) memset(o2b, 0, (size_t)n * sizeof(int64_t));
  for (int64_t b = 0; b < B; b++)
    for (int64_t t = off[b], end = b + 1 < B ? off[b + 1] : n; t < end; t++) o2b[t] = b;
}

/* The rows idx[t0..t1) (but padding rows) of w summed into o[0..D), each scaled by psw[t] when given;
 * returns how many rows took part. Columns go in blocks of BAG_NV 32-byte vectors held in registers
 * across the whole bag: sums kept in memory would chain every row's adds through a store and a load.
 * Each column adds its rows in index order. */
#define BAG_NV 8
typedef float bag_vfloat __attribute__((vector_size(32), aligned(4)));     /* unaligned loads */
typedef double bag_vdouble __attribute__((vector_size(32), aligned(8)));
#define BAG_SUM_ROWS(T)                                                                                   \
  static int64_t bag_sum_##T(const T *w, const int64_t *idx, const T *psw, int64_t t0, int64_t t1,         \
                             int64_t nidx, int64_t D, int64_t pad, T *o) {                                 \
    enum { COLS = BAG_NV * 32 / sizeof(T) };                                                              \
    int64_t cnt = 0;                                                                                      \
    for (int64_t c0 = 0; c0 < D; c0 += COLS) {                                                            \
      int64_t nc = D - c0 < COLS ? D - c0 : COLS;                                                         \
      cnt = 0;                                                                                            \
      if (nc == COLS) {                                                                                   \
        bag_v##T a0 = { 0 }, a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;               \
        for (int64_t t = t0; t < t1; t++) {                                                               \
          if (t + BAG_AHEAD < nidx) bag_prefetch(w + idx[t + BAG_AHEAD] * D + c0, COLS * sizeof(T)); \
          int64_t r = idx[t];                                                                             \
          if (r == pad) continue;                                                                         \
          const bag_v##T *v = (const bag_v##T *)(w + r * D + c0);                                         \
          T s = psw ? psw[t] : (T)1;                                                                      \
          cnt++;                                                                                          \
          if (psw) {                                                                                      \
            a0 += s * v[0]; a1 += s * v[1]; a2 += s * v[2]; a3 += s * v[3];                              \
            a4 += s * v[4]; a5 += s * v[5]; a6 += s * v[6]; a7 += s * v[7];                              \
          } else {                                                                                        \
            a0 += v[0]; a1 += v[1]; a2 += v[2]; a3 += v[3]; a4 += v[4]; a5 += v[5]; a6 += v[6]; a7 += v[7]; \
          }                                                                                               \
        }                                                                                                 \
        bag_v##T acc[BAG_NV] = { a0, a1, a2, a3, a4, a5, a6, a7 };                                        \
        memcpy(o + c0, acc, sizeof acc);                                                                  \
      } else {                                                                                            \
        T acc[COLS] = { 0 };                                                                              \
        for (int64_t t = t0; t < t1; t++) {                                                               \
          if (t + BAG_AHEAD < nidx) bag_prefetch(w + idx[t + BAG_AHEAD] * D + c0, nc * sizeof(T)); \
          int64_t r = idx[t];                                                                             \
          if (r == pad) continue;                                                                         \
          const T *row = w + r * D + c0;                                                                  \
          T s = psw ? psw[t] : (T)1;                                                                      \
          cnt++;                                                                                          \
          for (int64_t k = 0; k < nc; k++) acc[k] += s * row[k];                                          \
        }                                                                                                 \
        memcpy(o + c0, acc, nc * sizeof(T));                                                              \
      }                                                                                                   \
    }                                                                                                     \
    return cnt;                                                                                           \
  }
BAG_SUM_ROWS(float)
BAG_SUM_ROWS(double)

#define BAG_FWD(T)                                                                                        \
  static void bag_fwd_##T(const T *w, const int64_t *idx, const T *psw, const int64_t *start, int64_t B,  \
                          int64_t D, int64_t pad, int mode, T *out, int64_t *bag_size, int64_t *argmax) {  \
    _Pragma("omp parallel for schedule(dynamic, 16) if (start[B] * D > 32768)")                           \
    for (int64_t b = 0; b < B; b++) {                                                                     \
      T *o = out + b * D;                                                                                 \
      if (mode != BAG_MAX) {                                                                              \
        int64_t cnt = bag_sum_##T(w, idx, psw, start[b], start[b + 1], start[B], D, pad, o);             \
        if (mode == BAG_MEAN && cnt > 0)                                                                  \
          for (int64_t d = 0; d < D; d++) o[d] /= (T)cnt;                                                 \
        bag_size[b] = mode == BAG_SUM ? 0 : cnt;                                                          \
        continue;                                                                                         \
      }                                                                                                   \
      int64_t *am = argmax + b * D, cnt = 0;                                                              \
      memset(o, 0, D * sizeof(T));                                                                        \
      for (int64_t t = start[b]; t < start[b + 1]; t++) {                                                 \
        if (t + BAG_AHEAD < start[B]) bag_prefetch(w + idx[t + BAG_AHEAD] * D, D * sizeof(T));           \
        int64_t r = idx[t];                                                                               \
        if (r == pad) continue;                                                                           \
        const T *row = w + r * D;                                                                         \
        for (int64_t d = 0; d < D; d++)                                                                   \
          if (cnt == 0 || row[d] > o[d]) { o[d] = row[d]; am[d] = r; }                                     \
        cnt++;                                                                                            \
      }                                                                                                   \
      bag_size[b] = cnt;                                                                                  \
    }                                                                                                     \
  }
BAG_FWD(float)
BAG_FWD(double)

/* every index in [0, V), else torch's error (the CPU's fast path words it differently) */
static int bag_index_check(const int64_t *ix, int64_t n, int64_t V, bool fast) {
  /* one branch-free pass (unsigned: a negative index is huge) that vectorizes; the first bad
   * index is looked for only when there is one */
  uint64_t bad = 0;
#pragma omp simd reduction(|:bad)
  for (int64_t t = 0; t < n; t++) bad |= (uint64_t)ix[t] >= (uint64_t)V;
  for (int64_t t = 0; bad && t < n; t++)
    if (ix[t] < 0 || ix[t] >= V) {
      if (fast)
        THError_set(TH_ERR_RUNTIME, "Index %lld of input takes value %lld which is not in the valid range [0, %lld)",
                    (long long)t, (long long)ix[t], (long long)V);
      else
        THError_set(TH_ERR_RUNTIME, "embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to be %lld",
                    (long long)ix[t]);
      return -1;
    }
  return 0;
}

/* embedding_bag's four results from the forward's pieces (out in the compute
 * type; o2b, bsz, and max's argmax on the host or the device, am NULL for
 * sum/mean): out in the weight's dtype; offset2bag, bag_size and the fourth
 * (max's argmax, mean's bag_size again, sum's B zeros) on device dev (-1: the
 * host) in the index dtype torch gives (int32 when indices and offsets both
 * are). 0, or -1 with outs all NULL. */
static int bag_outputs(THTensor **outs, const THTensor *out, const THTensor *o2b, const THTensor *bsz,
                       const THTensor *am, THDtype wdt, bool i32, int64_t mode, int64_t B, int dev) {
  THTensor *fourth = NULL;
  if (mode == BAG_MAX) fourth = THTensor_retain((THTensor *)am);
  else if (mode == BAG_MEAN) fourth = at_to_dtype(bsz, TH_Int64, true);   /* a copy of bag_size */
  else if ((fourth = THTensor_new(TH_Int64, 1, &B))) memset(THTensor_data(fourth), 0, B * sizeof(int64_t));
  THDtype odt = i32 ? TH_Int32 : TH_Int64;
  outs[0] = at_to_dtype(out, wdt, false);
  outs[1] = at_to_device(o2b, dev, odt, false);
  outs[2] = at_to_device(bsz, dev, odt, false);
  outs[3] = fourth ? at_to_device(fourth, dev, odt, false) : NULL;
  THTensor_free(fourth);
  if (outs[0] && outs[1] && outs[2] && outs[3]) return 0;
  for (int k = 0; k < 4; k++) { THTensor_free(outs[k]); outs[k] = NULL; }
  return -1;
}

/* torch's CPU kernel has a fast path (float types but double, sum or mean, no padding) that checks
 * indices with another message and leaves offset2bag empty for sum */
static bool bag_fast(const THTensor *weight, int64_t mode, int64_t pad) {
  return weight->dtype != TH_Double && mode != BAG_MAX && pad < 0;
}

/* the n host int64 indices checked, and the B + 1 bag starts (malloc'd) of host int64 offsets off */
static int64_t *bag_checked_starts(const int64_t *ix, const THTensor *off, THDtype odt, int64_t n, int64_t V,
                                   bool fast, bool include_last_offset, int64_t *B) {
  if (bag_index_check(ix, n, V, fast) < 0) return NULL;
  return bag_starts((const int64_t *)THTensor_data(off), off->sizes[0], n, include_last_offset, odt, B);
}

static int embedding_bag_cuda(THTensor **outs, const THTensor *weight, const THTensor *indices,
                              const THTensor *offsets, int64_t mode, const THTensor *psw, bool include_last_offset,
                              int64_t pad);

int at_embedding_bag(THTensor **outs, const THTensor *weight, const THTensor *indices, const THTensor *offsets,
                     bool scale_grad_by_freq, int64_t mode, bool sparse, const THTensor *psw, bool include_last_offset,
                     ATOptInt padding_idx) {
  (void)scale_grad_by_freq;   /* a backward-only switch */
  (void)sparse;               /* sparse gradients are not supported (the Python layer says so) */
  outs[0] = outs[1] = outs[2] = outs[3] = NULL;
  if (bag_checks(weight, indices, offsets, mode, psw, include_last_offset) < 0) return -1;
  int64_t V = weight->sizes[0], D = weight->sizes[1], n = indices->sizes[0], pad, B;
  if (bag_padding(padding_idx, V, &pad) < 0) return -1;
  if (THTensor_device(weight) >= 0)
    return embedding_bag_cuda(outs, weight, indices, offsets, mode, psw, include_last_offset, pad);
  THDtype ct = BAG_CT(weight->dtype);
  THTensor *idx = as_long(indices), *off = idx ? as_long(offsets) : NULL;
  THTensor *w = off ? at_contiguous_as(weight, ct) : NULL, *pw = (w && psw) ? at_contiguous_as(psw, ct) : NULL;
  int64_t *start = NULL;
  THTensor *out = NULL, *o2b = NULL, *bsz = NULL, *am = NULL;
  int rc = -1;
  if (!w || (psw && !pw)) goto done;
  bool fast = bag_fast(weight, mode, pad);
  const int64_t *ix = (const int64_t *)THTensor_data(idx);
  if (!(start = bag_checked_starts(ix, off, offsets->dtype, n, V, fast, include_last_offset, &B))) goto done;
  int64_t osz[2] = { B, D };
  out = THTensor_new(ct, 2, osz);
  int64_t n_o2b = fast && mode == BAG_SUM ? 0 : n;
  o2b = THTensor_new(TH_Int64, 1, &n_o2b);
  bsz = THTensor_new(TH_Int64, 1, &B);
  am = mode == BAG_MAX ? THTensor_new(TH_Int64, 2, osz) : NULL;
  if (!out || !o2b || !bsz || (mode == BAG_MAX && !am)) goto done;
  int64_t *o2 = (int64_t *)THTensor_data(o2b), *bs = (int64_t *)THTensor_data(bsz);
  if (n_o2b) bag_owners(start, B, n, o2);
  if (am) memset(THTensor_data(am), 0, B * D * sizeof(int64_t));
  int64_t *amd = am ? (int64_t *)THTensor_data(am) : NULL;
  if (ct == TH_Double)
    bag_fwd_double((const double *)THTensor_data(w), ix, pw ? (const double *)THTensor_data(pw) : NULL, start, B, D,
                   pad, (int)mode, (double *)THTensor_data(out), bs, amd);
  else
    bag_fwd_float((const float *)THTensor_data(w), ix, pw ? (const float *)THTensor_data(pw) : NULL, start, B, D, pad,
                  (int)mode, (float *)THTensor_data(out), bs, amd);
  rc = bag_outputs(outs, out, o2b, bsz, am, weight->dtype, indices->dtype == TH_Int32 && offsets->dtype == TH_Int32,
                   mode, B, -1);
done:
  free(start);
  THTensor_free(idx); THTensor_free(off); THTensor_free(w); THTensor_free(pw);
  THTensor_free(out); THTensor_free(o2b); THTensor_free(bsz); THTensor_free(am);
  return rc;
}

/* the columns [c0, c1) of thread k of nt */
static void col_range(int64_t D, int k, int nt, int64_t *c0, int64_t *c1) {
  *c0 = D * k / nt;
  *c1 = D * (k + 1) / nt;
}

#define BAG_BWD(T)                                                                                          \
  static void bag_bwd_##T(const T *g, const int64_t *idx, const int64_t *o2b, const int64_t *bs,            \
                          const int64_t *am, const T *psw, const int64_t *freq, int64_t n, int64_t B,       \
                          int64_t D, int64_t pad, int mode, T *gw) {                                        \
    _Pragma("omp parallel if ((mode == BAG_MAX ? B : n) * D > 32768)")                                      \
    {                                                                                                       \
      int64_t c0, c1;                                                                                       \
      col_range(D, omp_get_thread_num(), omp_get_num_threads(), &c0, &c1);                                  \
      if (mode == BAG_MAX) {                                                                                \
        for (int64_t b = 0; b < B; b++) {                                                                   \
          if (bs[b] == 0) continue;                                                                         \
          for (int64_t d = c0; d < c1; d++) {                                                               \
            int64_t r = am[b * D + d];                                                                      \
            gw[r * D + d] += g[b * D + d] / (T)(freq ? freq[r] : 1);                                        \
          }                                                                                                 \
        }                                                                                                   \
      } else {                                                                                              \
        for (int64_t t = 0; t < n; t++) {                                                                   \
          if (t + BAG_AHEAD < n) bag_prefetch(gw + idx[t + BAG_AHEAD] * D + c0, (c1 - c0) * sizeof(T));    \
          int64_t r = idx[t], b = o2b[t];                                                                   \
          if (r == pad) continue;                                                                           \
          T s = (psw ? psw[t] : (T)1) / (T)(freq ? freq[r] : 1);                                            \
          if (mode == BAG_MEAN) s /= (T)bs[b];                                                              \
          const T *gr = g + b * D;                                                                          \
          T *wr = gw + r * D;                                                                               \
          _Pragma("omp simd")                                                                               \
          for (int64_t d = c0; d < c1; d++) wr[d] += s * gr[d];                                             \
        }                                                                                                   \
      }                                                                                                     \
    }                                                                                                       \
  }
BAG_BWD(float)
BAG_BWD(double)

/* The backward helpers trust what the forward returned: grad (B, D), indices
 * in [0, V), offset2bag of n bags in [0, B) or else B non-decreasing offsets
 * in [0, n] from 0. Check that before the kernels index with them (a bad call from
 * our own code, or from _C._internal, is an error, not a write out of bounds).
 * With no bags (B == 0) the kernels do not run: no index has a bag. */
static int bag_backward_check(const THTensor *grad, const THTensor *indices, const THTensor *offsets,
                              const THTensor *offset2bag, int64_t V, int64_t D, const char *op) {
  if (at_check_ndim(grad, 2, 2, op, "grad") < 0 || at_check_ndim(indices, 1, 1, op, "indices") < 0 ||
      at_check_ndim(offsets, 1, 1, op, "offsets") < 0)
    return -1;
  if (!is_index_dtype(indices->dtype) || !is_index_dtype(offsets->dtype) || !is_index_dtype(offset2bag->dtype)) {
    THError_set(TH_ERR_RUNTIME, "%s: indices, offsets and offset2bag must be int64 or int32", op);
    return -1;
  }
  int64_t B = grad->sizes[0], n = indices->sizes[0];
  if (grad->sizes[1] != D) {
    THError_set(TH_ERR_RUNTIME, "%s: grad has %lld columns, expected embedding_dim %lld", op,
                (long long)grad->sizes[1], (long long)D);
    return -1;
  }
  if (at_check_index_range(indices, 0, V, op, "index") < 0) return -1;
  if (B == 0) return 0;
  if (THTensor_numel(offset2bag) == n) return at_check_index_range(offset2bag, 0, B, op, "offset2bag");
  if (offsets->sizes[0] < B) {
    THError_set(TH_ERR_RUNTIME, "%s: %lld offsets for %lld bags", op, (long long)offsets->sizes[0], (long long)B);
    return -1;
  }
  THTensor *off = as_long(offsets);
  if (!off) return -1;
  const int64_t *o = (const int64_t *)THTensor_data(off);
  int rc = 0;
  for (int64_t b = 0; b < B && rc == 0; b++)
    if ((b ? o[b] < o[b - 1] : o[b] != 0) || o[b] > n) {
      THError_set(TH_ERR_RUNTIME, "%s: offsets must be non-decreasing from 0 within [0, %lld], got offsets[%lld] = "
                  "%lld", op, (long long)n, (long long)b, (long long)o[b]);
      rc = -1;
    }
  THTensor_free(off);
  return rc;
}

/* offset2bag as int64, or rebuilt from offsets where the forward left it empty */
static THTensor *bag_owner_tensor(const THTensor *offset2bag, const THTensor *offsets, int64_t n, int64_t B) {
  if (THTensor_numel(offset2bag) == n) return as_long(offset2bag);
  THTensor *off = as_long(offsets), *o2b = off ? THTensor_new(TH_Int64, 1, &n) : NULL;
  if (o2b) bag_owners((const int64_t *)THTensor_data(off), B, n, (int64_t *)THTensor_data(o2b));
  THTensor_free(off);
  return o2b;
}

static THTensor *embedding_bag_backward_cuda(const THTensor *grad, const THTensor *indices, const THTensor *offsets,
                                             const THTensor *offset2bag, const THTensor *bag_size,
                                             const THTensor *max_indices, int64_t V, int64_t D,
                                             bool scale_grad_by_freq, int64_t mode, const THTensor *psw,
                                             ATOptInt padding_idx);

THTensor *at_embedding_bag_backward(const THTensor *grad, const THTensor *indices, const THTensor *offsets,
                                    const THTensor *offset2bag, const THTensor *bag_size, const THTensor *max_indices,
                                    const ATIntList *weight_sizes, bool scale_grad_by_freq, int64_t mode,
                                    const THTensor *psw, ATOptInt padding_idx) {
  const char *op = "_embedding_bag_backward";
  if (weight_sizes->n != 2 || weight_sizes->v[0] < 0 || weight_sizes->v[1] < 0) {
    THError_set(TH_ERR_RUNTIME, "%s: weight_sizes must be two non-negative sizes", op);
    return NULL;
  }
  int64_t V = weight_sizes->v[0], D = weight_sizes->v[1], n = THTensor_numel(indices), pad;
  if (THTensor_device(grad) >= 0)
    return embedding_bag_backward_cuda(grad, indices, offsets, offset2bag, bag_size, max_indices, V, D,
                                       scale_grad_by_freq, mode, psw, padding_idx);
  if (bag_padding(padding_idx, V, &pad) < 0 || bag_backward_check(grad, indices, offsets, offset2bag, V, D, op) < 0)
    return NULL;
  int64_t B = grad->sizes[0];
  if (mode < BAG_SUM || mode > BAG_MAX || THTensor_numel(bag_size) < B ||
      (mode == BAG_MAX && THTensor_numel(max_indices) < B * D) || (psw && THTensor_numel(psw) != n)) {
    THError_set(TH_ERR_RUNTIME, "%s: mode, bag_size, max_indices or per_sample_weights do not match the bags", op);
    return NULL;
  }
  THDtype ct = BAG_CT(grad->dtype);
  int64_t wsz[2] = { V, D };
  THTensor *g = at_contiguous_as(grad, ct), *idx = g ? as_long(indices) : NULL;
  THTensor *o2b = idx ? bag_owner_tensor(offset2bag, offsets, n, B) : NULL;
  THTensor *bs = o2b ? as_long(bag_size) : NULL, *am = bs ? as_long(max_indices) : NULL;
  THTensor *pw = (am && psw) ? at_contiguous_as(psw, ct) : NULL, *gw = NULL, *r = NULL;
  int64_t *freq = NULL;
  if (!am || (psw && !pw) || !(gw = THTensor_new(ct, 2, wsz))) goto done;
  const int64_t *ix = (const int64_t *)THTensor_data(idx);
  if (mode == BAG_MAX) {   /* a non-empty bag's argmax rows index the gradient */
    const int64_t *bv = (const int64_t *)THTensor_data(bs), *av = (const int64_t *)THTensor_data(am);
    for (int64_t i = 0; i < B * D; i++)
      if (bv[i / (D ? D : 1)] != 0 && (av[i] < 0 || av[i] >= V)) {
        THError_set(TH_ERR_INDEX, "%s: max_indices value %lld is out of range [0, %lld)", op, (long long)av[i],
                    (long long)V);
        goto done;
      }
  }
  if (scale_grad_by_freq) {
    freq = (int64_t *)calloc(V ? V : 1, sizeof(int64_t));
    if (!freq) { THError_set(TH_ERR_MEMORY, "embedding_bag_backward: out of memory"); goto done; }
    for (int64_t t = 0; t < n; t++) freq[ix[t]]++;
  }
  memset(THTensor_data(gw), 0, V * D * THDtype_size(ct));
  int64_t nk = B ? n : 0;   /* with no bags no index takes a gradient */
  if (ct == TH_Double)
    bag_bwd_double((const double *)THTensor_data(g), ix, (const int64_t *)THTensor_data(o2b),
                   (const int64_t *)THTensor_data(bs), (const int64_t *)THTensor_data(am),
                   pw ? (const double *)THTensor_data(pw) : NULL, freq, nk, B, D, pad, (int)mode,
                   (double *)THTensor_data(gw));
  else
    bag_bwd_float((const float *)THTensor_data(g), ix, (const int64_t *)THTensor_data(o2b),
                  (const int64_t *)THTensor_data(bs), (const int64_t *)THTensor_data(am),
                  pw ? (const float *)THTensor_data(pw) : NULL, freq, nk, B, D, pad, (int)mode,
                  (float *)THTensor_data(gw));
  r = ct == grad->dtype ? THTensor_retain(gw) : at_to_dtype(gw, grad->dtype, false);
done:
  free(freq);
  THTensor_free(g); THTensor_free(idx); THTensor_free(o2b); THTensor_free(bs); THTensor_free(am);
  THTensor_free(pw); THTensor_free(gw);
  return r;
}

#define BAG_PSW_BWD(T)                                                                                       \
  static void bag_psw_bwd_##T(const T *g, const T *w, const int64_t *idx, const int64_t *o2b, int64_t n,    \
                              int64_t D, int64_t pad, T *out) {                                             \
    _Pragma("omp parallel for if (n * D > 32768)")                                                          \
    for (int64_t t = 0; t < n; t++) {                                                                       \
      T s = 0;                                                                                              \
      if (idx[t] != pad) {                                                                                  \
        const T *gr = g + o2b[t] * D, *wr = w + idx[t] * D;                                                 \
        _Pragma("omp simd reduction(+:s)")                                                                  \
        for (int64_t d = 0; d < D; d++) s += gr[d] * wr[d];                                                 \
      }                                                                                                     \
      out[t] = s;                                                                                           \
    }                                                                                                       \
  }
BAG_PSW_BWD(float)
BAG_PSW_BWD(double)

static THTensor *embedding_bag_psw_backward_cuda(const THTensor *grad, const THTensor *weight,
                                                 const THTensor *indices, const THTensor *offsets,
                                                 const THTensor *offset2bag, ATOptInt padding_idx);

THTensor *at_embedding_bag_per_sample_weights_backward(const THTensor *grad, const THTensor *weight,
                                                       const THTensor *indices, const THTensor *offsets,
                                                       const THTensor *offset2bag, int64_t mode,
                                                       ATOptInt padding_idx) {
  if (mode != BAG_SUM) {
    THError_set(TH_ERR_RUNTIME, "embedding_bag_backward: per_sample_weights only supported for mode='sum'");
    return NULL;
  }
  const char *op = "_embedding_bag_per_sample_weights_backward";
  if (at_check_ndim(weight, 2, 2, op, "weight") < 0) return NULL;
  int64_t V = weight->sizes[0], D = weight->sizes[1], n = THTensor_numel(indices), pad;
  if (THTensor_device(weight) >= 0)
    return embedding_bag_psw_backward_cuda(grad, weight, indices, offsets, offset2bag, padding_idx);
  if (bag_padding(padding_idx, V, &pad) < 0 || bag_backward_check(grad, indices, offsets, offset2bag, V, D, op) < 0)
    return NULL;
  THDtype ct = BAG_CT(weight->dtype);
  THTensor *g = at_contiguous_as(grad, ct), *w = g ? at_contiguous_as(weight, ct) : NULL;
  THTensor *idx = w ? as_long(indices) : NULL, *o2b = idx ? bag_owner_tensor(offset2bag, offsets, n, grad->sizes[0]) : NULL;
  THTensor *out = NULL, *r = NULL;
  if (o2b && (out = THTensor_new(ct, 1, &n))) {
    if (grad->sizes[0] == 0)   /* no bags */
      memset(THTensor_data(out), 0, (size_t)n * THDtype_size(ct));
    else if (ct == TH_Double)
      bag_psw_bwd_double((const double *)THTensor_data(g), (const double *)THTensor_data(w),
                         (const int64_t *)THTensor_data(idx), (const int64_t *)THTensor_data(o2b), n, D, pad,
                         (double *)THTensor_data(out));
    else
      bag_psw_bwd_float((const float *)THTensor_data(g), (const float *)THTensor_data(w),
                        (const int64_t *)THTensor_data(idx), (const int64_t *)THTensor_data(o2b), n, D, pad,
                        (float *)THTensor_data(out));
    r = ct == weight->dtype ? THTensor_retain(out) : at_to_dtype(out, weight->dtype, false);
  }
  THTensor_free(g); THTensor_free(w); THTensor_free(idx); THTensor_free(o2b); THTensor_free(out);
  return r;
}

/* ---------------------------------------------------------------- embedding on a GPU */

/* the rows of weight at indices: an index_select of the flattened indices,
 * whose bad index raises "index out of range in self" as embedding's does */
THTensor *at_embedding_cuda(const THTensor *weight, const THTensor *indices) {
  THTensor *ic = at_contiguous_as(indices, TH_Int64);
  if (!ic) return NULL;
  int64_t n = THTensor_numel(ic), one = 1, sizes[TH_MAX_DIMS];
  THTensor *flat = THTensor_newView(ic, 1, &n, &one, ic->offset);
  THTensor *rows = flat ? at_index_select(weight, 0, flat, NULL) : NULL, *out = NULL;
  if (rows) {
    memcpy(sizes, ic->sizes, ic->ndim * sizeof(int64_t));
    sizes[ic->ndim] = weight->sizes[1];
    ATIntList sl = {ic->ndim + 1};
    memcpy(sl.v, sizes, sl.n * sizeof(int64_t));
    out = at_reshape(rows, &sl);
  }
  THTensor_free(rows);
  THTensor_free(flat);
  THTensor_free(ic);
  return out;
}

/* grad_weight (V, D) = 0, then row i of grad added into row indices[i]
 * (atomically; rows equal to padding_idx skipped) */
THTensor *at_embedding_backward_cuda(const THTensor *grad, const THTensor *indices, int64_t V, int64_t D,
                                     int64_t padding_idx, bool scale_grad_by_freq) {
  if (scale_grad_by_freq) {
    THError_set(TH_ERR_NOTIMPL, "embedding_dense_backward: scale_grad_by_freq is not implemented on CUDA");
    return NULL;
  }
  int dev = THTensor_device(grad);
  THTensor *ic = at_contiguous_as(indices, TH_Int64), *gc = ic ? at_contiguous(grad) : NULL;
  THTensor *gw = gc ? at_new_on(dev, grad->dtype, 2, (int64_t[]){ V, D }, NULL) : NULL;
  int rc = gw ? at_fill_(gw, at_scalar_int(0)) : -1;
  if (rc == 0) {
    ATCudaIndex C;
    memset(&C, 0, sizeof C);
    C.op = AT_IDX_ACCUM;
    C.dt = grad->dtype;
    C.alpha = 1;
    C.ndim = 2;
    C.nidx = 1;
    C.skip = padding_idx < 0 ? INT64_MIN : padding_idx;
    C.sizes[0] = THTensor_numel(ic);
    C.sizes[1] = D;
    C.ss[1] = 1;                       /* along a row of grad_weight */
    C.os[0] = D;                       /* grad as (n, D) */
    C.os[1] = 1;
    C.is[0] = 1;
    C.idx[0] = (const int64_t *)THTensor_data(ic);
    C.isize[0] = V;
    C.istride[0] = D;
    C.self = THTensor_data(gw);
    C.other = THTensor_data(gc);
    rc = at_cuda->index(&C);
    if (rc == 1) THError_set(TH_ERR_INDEX, "index out of range in self");
  }
  THTensor_free(ic);
  THTensor_free(gc);
  if (rc != 0) { THTensor_free(gw); return NULL; }
  return gw;
}

/* ---------------------------------------------------------------- embedding_bag on a GPU */

/* embedding_bag's index tensors are read on the host, where the CPU's checks
 * and bag bookkeeping run unchanged (bag starts, offset2bag, bag sizes: a few
 * integers per index); the (B, D) and (V, D) work runs in src/THC/THCEmbedding.cu.
 * Reading the indices waits for the GPU once per call. */

/* t on the host as contiguous int64 (a new reference) */
static THTensor *host_long(const THTensor *t) { return at_to_device(t, -1, TH_Int64, false); }
/* t on device dev as contiguous dtype dt (a new reference) */
static THTensor *dev_as(const THTensor *t, int dev, THDtype dt) {
  THTensor *d = at_to_device(t, dev, dt, false), *c = d ? at_contiguous(d) : NULL;
  THTensor_free(d);
  return c;
}

static int embedding_bag_cuda(THTensor **outs, const THTensor *weight, const THTensor *indices,
                              const THTensor *offsets, int64_t mode, const THTensor *psw, bool include_last_offset,
                              int64_t pad) {
  int dev = THTensor_device(weight);
  int64_t V = weight->sizes[0], D = weight->sizes[1], n = indices->sizes[0], B = 0;
  THDtype ct = BAG_CT(weight->dtype);
  THTensor *idx = host_long(indices), *off = idx ? host_long(offsets) : NULL;
  THTensor *w = off ? at_contiguous_as(weight, ct) : NULL, *pw = (w && psw) ? dev_as(psw, dev, ct) : NULL;
  THTensor *st = NULL, *o2b = NULL, *bsz = NULL, *out = NULL, *am = NULL, *idx_d = NULL, *st_d = NULL;
  int64_t *start = NULL;
  int rc = -1;
  if (!w || (psw && !pw)) goto done;
  bool fast = bag_fast(weight, mode, pad);
  const int64_t *ix = (const int64_t *)THTensor_data(idx);
  if (!(start = bag_checked_starts(ix, off, offsets->dtype, n, V, fast, include_last_offset, &B))) goto done;
  int64_t B1 = B + 1, n_o2b = fast && mode == BAG_SUM ? 0 : n, osz[2] = { B, D };
  st = THTensor_new(TH_Int64, 1, &B1);
  o2b = THTensor_new(TH_Int64, 1, &n_o2b);
  bsz = THTensor_new(TH_Int64, 1, &B);
  if (!st || !o2b || !bsz) goto done;
  memcpy(THTensor_data(st), start, (size_t)B1 * sizeof(int64_t));
  if (n_o2b) bag_owners(start, B, n, (int64_t *)THTensor_data(o2b));
  int64_t *bs = (int64_t *)THTensor_data(bsz);
  for (int64_t b = 0; b < B; b++) {   /* the rows that take part (none counted for sum, as the CPU) */
    int64_t cnt = 0;
    for (int64_t t = start[b]; t < start[b + 1]; t++) cnt += ix[t] != pad;
    bs[b] = mode == BAG_SUM ? 0 : cnt;
  }
  idx_d = dev_as(idx, dev, TH_Int64);
  st_d = idx_d ? dev_as(st, dev, TH_Int64) : NULL;
  out = st_d ? at_new_on(dev, ct, 2, osz, NULL) : NULL;
  am = (out && mode == BAG_MAX) ? at_new_on(dev, TH_Int64, 2, osz, NULL) : NULL;
  if (!out || (mode == BAG_MAX && !am)) goto done;
  if (at_cuda->embedding_bag(ct, THTensor_data(w), (const int64_t *)THTensor_data(idx_d),
                             (const int64_t *)THTensor_data(st_d), pw ? THTensor_data(pw) : NULL, B, D, pad, (int)mode,
                             THTensor_data(out), am ? (int64_t *)THTensor_data(am) : NULL) < 0)
    goto done;
  rc = bag_outputs(outs, out, o2b, bsz, am, weight->dtype, indices->dtype == TH_Int32 && offsets->dtype == TH_Int32,
                   mode, B, dev);
done:
  free(start);
  THTensor_free(idx); THTensor_free(off); THTensor_free(w); THTensor_free(pw); THTensor_free(st);
  THTensor_free(o2b); THTensor_free(bsz); THTensor_free(out); THTensor_free(am); THTensor_free(idx_d);
  THTensor_free(st_d);
  return rc;
}

static THTensor *embedding_bag_backward_cuda(const THTensor *grad, const THTensor *indices, const THTensor *offsets,
                                             const THTensor *offset2bag, const THTensor *bag_size,
                                             const THTensor *max_indices, int64_t V, int64_t D,
                                             bool scale_grad_by_freq, int64_t mode, const THTensor *psw,
                                             ATOptInt padding_idx) {
  const char *op = "_embedding_bag_backward";
  if (scale_grad_by_freq) {
    THError_set(TH_ERR_NOTIMPL, "embedding_bag backward: scale_grad_by_freq is not implemented on CUDA");
    return NULL;
  }
  int dev = THTensor_device(grad);
  int64_t n = THTensor_numel(indices), pad, B = grad->ndim == 2 ? grad->sizes[0] : 0;
  THDtype ct = BAG_CT(grad->dtype);
  /* the index tensors on the host for the CPU's checks */
  THTensor *ih = host_long(indices), *oh = ih ? host_long(offsets) : NULL, *bh = oh ? host_long(offset2bag) : NULL;
  THTensor *sh = bh ? host_long(bag_size) : NULL, *mh = sh ? host_long(max_indices) : NULL;
  THTensor *o2b = NULL, *ix_d = NULL, *o2b_d = NULL, *bs_d = NULL, *am_d = NULL, *g = NULL, *pw = NULL, *gw = NULL;
  THTensor *r = NULL;
  if (!mh || bag_padding(padding_idx, V, &pad) < 0 || bag_backward_check(grad, ih, oh, bh, V, D, op) < 0) goto done;
  if (mode < BAG_SUM || mode > BAG_MAX || THTensor_numel(sh) < B || (mode == BAG_MAX && THTensor_numel(mh) < B * D) ||
      (psw && THTensor_numel(psw) != n)) {
    THError_set(TH_ERR_RUNTIME, "%s: mode, bag_size, max_indices or per_sample_weights do not match the bags", op);
    goto done;
  }
  if (mode == BAG_MAX) {   /* a non-empty bag's argmax rows index the gradient */
    const int64_t *bv = (const int64_t *)THTensor_data(sh), *av = (const int64_t *)THTensor_data(mh);
    for (int64_t i = 0; i < B * D; i++)
      if (bv[i / (D ? D : 1)] != 0 && (av[i] < 0 || av[i] >= V)) {
        THError_set(TH_ERR_INDEX, "%s: max_indices value %lld is out of range [0, %lld)", op, (long long)av[i],
                    (long long)V);
        goto done;
      }
  }
  if (!(o2b = bag_owner_tensor(bh, oh, n, B))) goto done;
  ix_d = dev_as(ih, dev, TH_Int64);
  o2b_d = ix_d ? dev_as(o2b, dev, TH_Int64) : NULL;
  bs_d = o2b_d ? dev_as(sh, dev, TH_Int64) : NULL;
  am_d = bs_d ? dev_as(mh, dev, TH_Int64) : NULL;
  g = am_d ? at_contiguous_as(grad, ct) : NULL;
  pw = (g && psw) ? dev_as(psw, dev, ct) : NULL;
  gw = (g && (!psw || pw)) ? at_new_on(dev, ct, 2, (int64_t[]){ V, D }, NULL) : NULL;
  if (!gw || at_fill_(gw, at_scalar_int(0)) < 0) goto done;
  if (at_cuda->embedding_bag_backward(ct, THTensor_data(g), (const int64_t *)THTensor_data(ix_d),
                                      (const int64_t *)THTensor_data(o2b_d), (const int64_t *)THTensor_data(bs_d),
                                      (const int64_t *)THTensor_data(am_d), pw ? THTensor_data(pw) : NULL, n, B, D,
                                      pad, (int)mode, THTensor_data(gw)) < 0)
    goto done;
  r = ct == grad->dtype ? THTensor_retain(gw) : at_to_dtype(gw, grad->dtype, false);
done:
  THTensor_free(ih); THTensor_free(oh); THTensor_free(bh); THTensor_free(sh); THTensor_free(mh);
  THTensor_free(o2b); THTensor_free(ix_d); THTensor_free(o2b_d); THTensor_free(bs_d); THTensor_free(am_d);
  THTensor_free(g); THTensor_free(pw); THTensor_free(gw);
  return r;
}

static THTensor *embedding_bag_psw_backward_cuda(const THTensor *grad, const THTensor *weight,
                                                 const THTensor *indices, const THTensor *offsets,
                                                 const THTensor *offset2bag, ATOptInt padding_idx) {
  const char *op = "_embedding_bag_per_sample_weights_backward";
  int dev = THTensor_device(weight);
  int64_t V = weight->sizes[0], D = weight->sizes[1], n = THTensor_numel(indices), pad;
  THDtype ct = BAG_CT(weight->dtype);
  THTensor *ih = host_long(indices), *oh = ih ? host_long(offsets) : NULL, *bh = oh ? host_long(offset2bag) : NULL;
  THTensor *o2b = NULL, *ix_d = NULL, *o2b_d = NULL, *g = NULL, *w = NULL, *out = NULL, *r = NULL;
  if (!bh || bag_padding(padding_idx, V, &pad) < 0 || bag_backward_check(grad, ih, oh, bh, V, D, op) < 0) goto done;
  out = at_new_on(dev, ct, 1, &n, NULL);
  if (!out) goto done;
  if (grad->sizes[0] == 0) {   /* no bags */
    if (at_fill_(out, at_scalar_int(0)) < 0) goto done;
  } else {
    o2b = bag_owner_tensor(bh, oh, n, grad->sizes[0]);
    ix_d = o2b ? dev_as(ih, dev, TH_Int64) : NULL;
    o2b_d = ix_d ? dev_as(o2b, dev, TH_Int64) : NULL;
    g = o2b_d ? at_contiguous_as(grad, ct) : NULL;
    w = g ? at_contiguous_as(weight, ct) : NULL;
    if (!w || at_cuda->embedding_bag_psw_backward(ct, THTensor_data(g), THTensor_data(w),
                                                  (const int64_t *)THTensor_data(ix_d),
                                                  (const int64_t *)THTensor_data(o2b_d), n, D, pad,
                                                  THTensor_data(out)) < 0)
      goto done;
  }
  r = ct == weight->dtype ? THTensor_retain(out) : at_to_dtype(out, weight->dtype, false);
done:
  THTensor_free(ih); THTensor_free(oh); THTensor_free(bh); THTensor_free(o2b); THTensor_free(ix_d);
  THTensor_free(o2b_d); THTensor_free(g); THTensor_free(w); THTensor_free(out);
  return r;
}
