// Sorting rows on the GPU (sort/argsort/msort/topk/kthvalue of
// src/ATen/ATSort.c): rows contiguous rows of n elements each get their
// stable order.
//
// Every dtype goes through one CUB segmented radix sort of 64-bit keys: each
// value is first mapped to an unsigned key whose integer order is the value
// order the CPU uses (floats: sign-magnitude flipped, -0.0 made +0.0 so the
// two tie, every NaN the largest key; signed integers: sign bit flipped).
// A descending sort inverts the key bits, so ties still keep their index
// order (radix sort is stable) and NaN comes first, as on the CPU. Only the
// low 8 * element-size bits take part, so narrow dtypes need few passes.
// The sorted positions come out of the sort; the values are then gathered
// from x through them, so the values are the input's own bits (a -0.0 stays).
//
// CUB counts items in int: rows are sorted in chunks of whole rows that fit.
#include <cub/cub.cuh>
#include <limits.h>
#include <stdint.h>

#include "THCGeneral.h"

namespace {

typedef unsigned long long u64;

// the order key of one element of esz bytes (its raw bits in u) and kind
enum KeyKind { K_UNSIGNED, K_SIGNED, K_HALF, K_BF16, K_FLOAT, K_DOUBLE };

__device__ __forceinline__ u64 float_key(u64 u, int bits, u64 abs_mask, u64 inf_bits) {
  u64 sign = 1ULL << (bits - 1), all = bits == 64 ? ~0ULL : (1ULL << bits) - 1;
  if ((u & abs_mask) > inf_bits) return all;      // any NaN: above +inf
  if (u == sign) u = 0;                           // -0.0 ties with +0.0
  return (u & sign) ? (~u & all) : (u | sign);
}

template <typename U, int KIND>
__global__ void make_keys(const U *x, long long N, long long n, bool desc, u64 *keys, long long *pos) {
  const int bits = 8 * sizeof(U);
  const u64 all = bits == 64 ? ~0ULL : (1ULL << bits) - 1;
  for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < N; e += (long long)gridDim.x * blockDim.x) {
    u64 u = (u64)x[e], k;
    if (KIND == K_UNSIGNED) k = u;
    else if (KIND == K_SIGNED) k = u ^ (1ULL << (bits - 1));
    else if (KIND == K_HALF) k = float_key(u, 16, 0x7fffULL, 0x7c00ULL);
    else if (KIND == K_BF16) k = float_key(u, 16, 0x7fffULL, 0x7f80ULL);
    else if (KIND == K_FLOAT) k = float_key(u, 32, 0x7fffffffULL, 0x7f800000ULL);
    else k = float_key(u, 64, 0x7fffffffffffffffULL, 0x7ff0000000000000ULL);
    keys[e] = desc ? (~k & all) : k;
    pos[e] = e % n;
  }
}

__global__ void row_offsets(int *off, long long count, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count; i += (long long)gridDim.x * blockDim.x)
    off[i] = (int)(i * n);
}

// vals[e] = x[row(e) * n + idx[e]]
template <typename U>
__global__ void gather_rows(const U *x, const long long *idx, U *vals, long long N, long long n) {
  for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < N; e += (long long)gridDim.x * blockDim.x)
    vals[e] = x[(e / n) * n + idx[e]];
}

// the keys of every element of x; -1 with THError for a dtype without one
int launch_keys(THDtype dt, const void *x, long long N, long long n, bool desc, u64 *keys, long long *pos) {
  unsigned b = thc_blocks(N, 256);
  cudaStream_t s = thc_stream();
  switch (dt) {
    case TH_Bool: case TH_UInt8: make_keys<uint8_t, K_UNSIGNED><<<b, 256, 0, s>>>((const uint8_t *)x, N, n, desc, keys, pos); break;
    case TH_Int8: make_keys<uint8_t, K_SIGNED><<<b, 256, 0, s>>>((const uint8_t *)x, N, n, desc, keys, pos); break;
    case TH_Int16: make_keys<uint16_t, K_SIGNED><<<b, 256, 0, s>>>((const uint16_t *)x, N, n, desc, keys, pos); break;
    case TH_Int32: make_keys<uint32_t, K_SIGNED><<<b, 256, 0, s>>>((const uint32_t *)x, N, n, desc, keys, pos); break;
    case TH_Int64: make_keys<u64, K_SIGNED><<<b, 256, 0, s>>>((const u64 *)x, N, n, desc, keys, pos); break;
    case TH_Half: make_keys<uint16_t, K_HALF><<<b, 256, 0, s>>>((const uint16_t *)x, N, n, desc, keys, pos); break;
    case TH_BFloat16: make_keys<uint16_t, K_BF16><<<b, 256, 0, s>>>((const uint16_t *)x, N, n, desc, keys, pos); break;
    case TH_Float: make_keys<uint32_t, K_FLOAT><<<b, 256, 0, s>>>((const uint32_t *)x, N, n, desc, keys, pos); break;
    case TH_Double: make_keys<u64, K_DOUBLE><<<b, 256, 0, s>>>((const u64 *)x, N, n, desc, keys, pos); break;
    default:
      THError_set(TH_ERR_NOTIMPL, "sort on CUDA is not implemented for '%s'", THDtype_info[dt].legacy);
      return -1;
  }
  return thc_launched("sort");
}

int launch_gather(int esz, const void *x, const long long *idx, void *vals, long long N, long long n) {
  unsigned b = thc_blocks(N, 256);
  cudaStream_t s = thc_stream();
  switch (esz) {
    case 1: gather_rows<uint8_t><<<b, 256, 0, s>>>((const uint8_t *)x, idx, (uint8_t *)vals, N, n); break;
    case 2: gather_rows<uint16_t><<<b, 256, 0, s>>>((const uint16_t *)x, idx, (uint16_t *)vals, N, n); break;
    case 4: gather_rows<uint32_t><<<b, 256, 0, s>>>((const uint32_t *)x, idx, (uint32_t *)vals, N, n); break;
    default: gather_rows<u64><<<b, 256, 0, s>>>((const u64 *)x, idx, (u64 *)vals, N, n); break;
  }
  return thc_launched("sort");
}

// scratch from the caching allocator, freed in reverse by Scratch's owner
struct Scratch {
  void *p[5] = {0, 0, 0, 0, 0}, *ctx[5] = {0, 0, 0, 0, 0};
  size_t bytes[5] = {0, 0, 0, 0, 0};
  int k = 0;
  void *get(size_t b) {
    void *q = THCCachingAllocator.malloc(&THCCachingAllocator, b ? b : 1, &ctx[k]);
    if (q) { p[k] = q; bytes[k] = b ? b : 1; k++; }
    return q;
  }
  ~Scratch() {
    while (k > 0) { k--; THCCachingAllocator.free(&THCCachingAllocator, p[k], bytes[k], ctx[k]); }
  }
};

}  // namespace

extern "C" int thc_sort_rows(THDtype dt, const void *x, int64_t rows, int64_t n, bool descending, void *vals,
                             int64_t *idx) {
  long long N = (long long)rows * n;
  if (N == 0) return 0;
  if (n > INT_MAX) {
    THError_set(TH_ERR_NOTIMPL, "sort on CUDA: rows of more than %d elements are not supported (got %lld)", INT_MAX,
                (long long)n);
    return -1;
  }
  long long chunk = INT_MAX / n;   // whole rows per CUB call
  if (chunk > rows) chunk = rows;
  int esz = THDtype_size(dt), bits = 8 * esz;
  cudaStream_t s = thc_stream();
  Scratch sc;
  u64 *keys = (u64 *)sc.get(N * sizeof(u64)), *keys_out = keys ? (u64 *)sc.get(N * sizeof(u64)) : NULL;
  long long *pos = keys_out ? (long long *)sc.get(N * sizeof(long long)) : NULL;
  int *off = pos ? (int *)sc.get((chunk + 1) * sizeof(int)) : NULL;
  if (!off) return -1;
  size_t temp_bytes = 0;
  int rc = thc_check(cub::DeviceSegmentedRadixSort::SortPairs(NULL, temp_bytes, keys, keys_out, pos, (long long *)idx,
                                                              (int)(chunk * n), (int)chunk, off, off + 1, 0, bits, s),
                     "sort");
  void *temp = rc == 0 ? sc.get(temp_bytes) : NULL;
  if (!temp) return -1;
  if (launch_keys(dt, x, N, n, descending, keys, pos) < 0) return -1;
  row_offsets<<<thc_blocks(chunk + 1, 256), 256, 0, s>>>(off, chunk + 1, n);
  if (thc_launched("sort") < 0) return -1;
  for (long long r0 = 0; r0 < rows; r0 += chunk) {
    long long cr = rows - r0 < chunk ? rows - r0 : chunk, base = r0 * n;
    size_t tb = temp_bytes;
    rc = thc_check(cub::DeviceSegmentedRadixSort::SortPairs(temp, tb, keys + base, keys_out + base, pos + base,
                                                            (long long *)idx + base, (int)(cr * n), (int)cr, off,
                                                            off + 1, 0, bits, s),
                   "sort");
    if (rc < 0) return -1;
  }
  if (vals && launch_gather(esz, x, (const long long *)idx, vals, N, n) < 0) return -1;
  return 0;
}

// ---- one pick per sorted row (kthvalue, median, nanmedian) ----
namespace {

template <typename U, int KIND> __device__ __forceinline__ bool is_nan_bits(U u) {
  if (KIND == K_HALF) return (u & 0x7fff) > 0x7c00;
  if (KIND == K_BF16) return (u & 0x7fff) > 0x7f80;
  if (KIND == K_FLOAT) return (u & 0x7fffffffu) > 0x7f800000u;
  if (KIND == K_DOUBLE) return (u & 0x7fffffffffffffffULL) > 0x7ff0000000000000ULL;
  return false;
}

// NaNs sit at the end of an ascending row: count them from there
template <typename U, int KIND>
__global__ void select_rows(const U *vals, const long long *idx, long long rows, long long n, int mode, long long kth,
                            U *ov, long long *oi) {
  for (long long r = blockIdx.x * (long long)blockDim.x + threadIdx.x; r < rows; r += (long long)gridDim.x * blockDim.x) {
    const U *v = vals + r * n;
    long long at = kth;
    if (mode != 0) {
      long long nan = 0;
      while (nan < n && is_nan_bits<U, KIND>(v[n - 1 - nan])) nan++;
      if (mode == 1) at = nan ? n - nan : (n - 1) / 2;
      else at = nan < n ? (n - nan - 1) / 2 : 0;
    }
    ov[r] = v[at];
    oi[r] = idx[r * n + at];
  }
}

template <typename U, int KIND>
int launch_select(const void *vals, const int64_t *idx, long long rows, long long n, int mode, long long kth, void *ov,
                  int64_t *oi) {
  select_rows<U, KIND><<<thc_blocks(rows, 128), 128, 0, thc_stream()>>>((const U *)vals, (const long long *)idx, rows,
                                                                        n, mode, kth, (U *)ov, (long long *)oi);
  return thc_launched("sort_select");
}

}  // namespace

extern "C" int thc_sort_select(THDtype dt, const void *vals, const int64_t *idx, int64_t rows, int64_t n, int mode,
                               int64_t kth, void *out_vals, int64_t *out_idx) {
  if (rows == 0 || n == 0) return 0;
  switch (dt) {
    case TH_Half: return launch_select<uint16_t, K_HALF>(vals, idx, rows, n, mode, kth, out_vals, out_idx);
    case TH_BFloat16: return launch_select<uint16_t, K_BF16>(vals, idx, rows, n, mode, kth, out_vals, out_idx);
    case TH_Float: return launch_select<uint32_t, K_FLOAT>(vals, idx, rows, n, mode, kth, out_vals, out_idx);
    case TH_Double: return launch_select<u64, K_DOUBLE>(vals, idx, rows, n, mode, kth, out_vals, out_idx);
    default: break;
  }
  switch (THDtype_size(dt)) {   // integers: no NaN, the pick moves bytes
    case 1: return launch_select<uint8_t, K_UNSIGNED>(vals, idx, rows, n, mode, kth, out_vals, out_idx);
    case 2: return launch_select<uint16_t, K_UNSIGNED>(vals, idx, rows, n, mode, kth, out_vals, out_idx);
    case 4: return launch_select<uint32_t, K_UNSIGNED>(vals, idx, rows, n, mode, kth, out_vals, out_idx);
    default: return launch_select<u64, K_UNSIGNED>(vals, idx, rows, n, mode, kth, out_vals, out_idx);
  }
}
