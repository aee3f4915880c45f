// Reductions over ATReduce.h's 2-d layout: M rows of K elements, element
// strides sm (row to row) and sk (along a row).
//
// Paths, by shape (all share the per-element step and the combine below):
//   - few long rows (M < a GPU's worth of blocks, K large): each row is split
//     into chunks, one block per chunk writes a partial State to a scratch
//     buffer, then one warp per row combines the partials and stores. A
//     single block per row would leave all but M SMs idle (a full sum ran in
//     one block).
//   - columns (sm == 1, sk != 1: sum over dim 0 of a [N, C]): a block covers
//     32 consecutive outputs x 8 slices of k, so a warp reads 32 consecutive
//     elements (coalesced); k is split across blocks the same way when the
//     outputs alone cannot fill the GPU.
//   - otherwise a group of lanes per row: the block for long rows, a warp for
//     medium ones, a thread for short ones.
// Contiguous rows (sk == 1) are read 16 bytes at a time from the first
// 16-byte boundary; in-group trees use warp shuffles (and shared memory only
// between the warps of a block). Accumulation: float for float16/bfloat16/
// float32 (as PyTorch's CUDA kernels), double for float64, int64 for the
// integer types and bool. VAR/STD/LOGSUMEXP (two passes over a row) use only
// the group-per-row path.
//
// This header holds the templates; THCReduceIntegral.cu and THCReduceFloating.cu
// instantiate them for their dtypes, so nvcc compiles the two halves in
// parallel (one file took 3.5 minutes of a 2-core build), and THCReduce.cu
// checks the call and picks the half.
#pragma once
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <math.h>
#include <stdint.h>
#include <type_traits>

#include "THCGeneral.h"

namespace {

const int RB = 256;               // threads of every reduction block
const int WARP = 32;
const int CY = RB / WARP;         // column kernel: k slices per block (blockDim 32 x CY)
const long long MIN_PER_THREAD = 32;   // a split gives each thread at least this many elements
const unsigned FULL = 0xffffffffu;

template <typename T> struct Acc { typedef long long type; };
template <> struct Acc<__half> { typedef float type; };
template <> struct Acc<__nv_bfloat16> { typedef float type; };
template <> struct Acc<float> { typedef float type; };
template <> struct Acc<double> { typedef double type; };

template <typename A, typename T> __device__ __forceinline__ A cvt(T v) { return (A)v; }
template <> __device__ __forceinline__ float cvt<float, __half>(__half v) { return __half2float(v); }
template <> __device__ __forceinline__ float cvt<float, __nv_bfloat16>(__nv_bfloat16 v) { return __bfloat162float(v); }

// 16 bytes of T: one vector load
template <typename T> struct alignas(16) Vec16 { T v[16 / sizeof(T)]; };

template <typename A> __device__ __forceinline__ bool is_nan(A v) { return v != v; }

// One row's (or one chunk's) running state. The second pass of VAR/STD and
// LOGSUMEXP reads `pivot` (the mean, the max) that the first pass found.
template <typename A> struct State {
  A v, v2;
  long long i;     // MAX/MIN: index of the extreme (-1: none yet); ALL/ANY: count of nonzeros
};

enum Pass { P_SUM, P_PROD, P_MAX, P_MIN, P_NZ, P_SQ, P_DEV, P_EXP };

template <Pass P, typename A> __device__ __forceinline__ State<A> init() {
  State<A> s;
  s.v = P == P_PROD ? (A)1 : (A)0;
  s.v2 = 0;
  s.i = P == P_MAX || P == P_MIN ? -1 : 0;
  return s;
}

// a replaces the extreme b (index bi) at index ai: NaN wins, then the
// strict extreme, then the lower index (so the first of equals is kept)
template <typename A> __device__ __forceinline__ bool better(A a, long long ai, A b, long long bi, bool is_max) {
  if (bi < 0) return ai >= 0;
  if (ai < 0) return false;
  if (is_nan(b)) return is_nan(a) && ai < bi;
  if (is_nan(a)) return true;
  if (a == b) return ai < bi;
  return is_max ? a > b : a < b;
}

// exp in the accumulation type: float math for float, double for double
__device__ __forceinline__ float exp_acc(float x) { return expf(x); }
__device__ __forceinline__ double exp_acc(double x) { return exp(x); }
__device__ __forceinline__ long long exp_acc(long long x) { return x; }

template <Pass P, typename A> __device__ __forceinline__ void step(State<A> &s, A x, long long k, A pivot) {
  if constexpr (P == P_SUM) s.v += x;
  else if constexpr (P == P_PROD) s.v *= x;
  else if constexpr (P == P_MAX || P == P_MIN) {
    if (better(x, k, s.v, s.i, P == P_MAX)) { s.v = x; s.i = k; }
  } else if constexpr (P == P_NZ) s.i += x != (A)0;
  else if constexpr (P == P_SQ) s.v += x * x;
  else if constexpr (P == P_DEV) { A d = x - pivot; s.v += d * d; s.v2 += d; }
  else s.v += exp_acc(x - pivot);
}

template <Pass P, typename A> __device__ __forceinline__ void combine(State<A> &s, const State<A> &o) {
  if constexpr (P == P_PROD) s.v *= o.v;
  else if constexpr (P == P_MAX || P == P_MIN) {
    if (better(o.v, o.i, s.v, s.i, P == P_MAX)) { s.v = o.v; s.i = o.i; }
  } else if constexpr (P == P_NZ) s.i += o.i;
  else { s.v += o.v; s.v2 += o.v2; }
}

template <Pass P, typename T, typename A>
__device__ __forceinline__ void step_vec(State<A> &s, const Vec16<T> &w, long long k, A pivot) {
#pragma unroll
  for (int j = 0; j < (int)(16 / sizeof(T)); j++) step<P>(s, cvt<A>(w.v[j]), k + j, pivot);
}

// Lane 0 of the warp ends with the warp's combined state.
template <Pass P, typename A> __device__ __forceinline__ State<A> warp_reduce(State<A> s) {
#pragma unroll
  for (int off = WARP / 2; off > 0; off >>= 1) {
    State<A> o;
    o.v = __shfl_down_sync(FULL, s.v, off);
    o.v2 = __shfl_down_sync(FULL, s.v2, off);
    o.i = __shfl_down_sync(FULL, s.i, off);
    combine<P>(s, o);
  }
  return s;
}

// s combined over the `nlanes` threads sharing a row (1, a warp, or the
// block of RB); every one of them gets the result (VAR's second pass reads it).
template <Pass P, typename A> __device__ __forceinline__ State<A> group_reduce(State<A> s, int nlanes, State<A> *sh) {
  if (nlanes == 1) return s;
  s = warp_reduce<P>(s);
  if (nlanes == WARP) {
    s.v = __shfl_sync(FULL, s.v, 0);
    s.v2 = __shfl_sync(FULL, s.v2, 0);
    s.i = __shfl_sync(FULL, s.i, 0);
    return s;
  }
  const int lane = threadIdx.x % WARP, w = threadIdx.x / WARP;
  if (lane == 0) sh[w] = s;
  __syncthreads();
  if (w == 0) {
    s = lane < RB / WARP ? sh[lane] : init<P, A>();
    s = warp_reduce<P>(s);
    if (lane == 0) sh[0] = s;
  }
  __syncthreads();
  State<A> r = sh[0];
  __syncthreads();   // sh is reused by the next reduction
  return r;
}

// Elements k in [k0, k1) of a row into s, the group's lanes taking turns
// (lane, lane + nlanes, ...). A contiguous row reads 16-byte vectors from its
// first 16-byte boundary on, four in flight per lane; the unaligned head and
// the tail go one element at a time.
template <Pass P, typename T, typename A>
__device__ __forceinline__ void accumulate(State<A> &s, const T *row, long long k0, long long k1, long long sk, A pivot,
                                           int lane, int nlanes) {
  if (sk != 1) {
    for (long long k = k0 + lane; k < k1; k += nlanes) step<P>(s, cvt<A>(row[k * sk]), k, pivot);
    return;
  }
  constexpr int V = 16 / sizeof(T);
  const uintptr_t mis = (uintptr_t)(row + k0) % 16;
  long long head = mis ? (long long)((16 - mis) / sizeof(T)) : 0;
  if (head > k1 - k0) head = k1 - k0;
  for (long long k = k0 + lane; k < k0 + head; k += nlanes) step<P>(s, cvt<A>(row[k]), k, pivot);
  const long long kv = k0 + head, nv = (k1 - kv) / V;
  const Vec16<T> *vp = reinterpret_cast<const Vec16<T> *>(row + kv);
  long long i = lane;
  for (; i + 3LL * nlanes < nv; i += 4LL * nlanes) {
    const Vec16<T> a = vp[i], b = vp[i + nlanes], c = vp[i + 2LL * nlanes], d = vp[i + 3LL * nlanes];
    step_vec<P, T, A>(s, a, kv + i * V, pivot);
    step_vec<P, T, A>(s, b, kv + (i + nlanes) * V, pivot);
    step_vec<P, T, A>(s, c, kv + (i + 2LL * nlanes) * V, pivot);
    step_vec<P, T, A>(s, d, kv + (i + 3LL * nlanes) * V, pivot);
  }
  for (; i < nv; i += nlanes) step_vec<P, T, A>(s, vp[i], kv + i * V, pivot);
  for (long long k = kv + nv * V + lane; k < k1; k += nlanes) step<P>(s, cvt<A>(row[k]), k, pivot);
}

__device__ void store(THDtype dt, void *out, long long m, double v, long long iv, bool is_int) {
  switch (dt) {
    case TH_Bool: ((bool *)out)[m] = is_int ? iv != 0 : v != 0; break;
    case TH_UInt8: ((unsigned char *)out)[m] = is_int ? (unsigned char)iv : (unsigned char)v; break;
    case TH_Int8: ((signed char *)out)[m] = is_int ? (signed char)iv : (signed char)v; break;
    case TH_Int16: ((short *)out)[m] = is_int ? (short)iv : (short)v; break;
    case TH_Int32: ((int *)out)[m] = is_int ? (int)iv : (int)v; break;
    case TH_Int64: ((long long *)out)[m] = is_int ? iv : (long long)v; break;
    case TH_Half: ((__half *)out)[m] = __float2half(is_int ? (float)iv : (float)v); break;
    case TH_BFloat16: ((__nv_bfloat16 *)out)[m] = __float2bfloat16(is_int ? (float)iv : (float)v); break;
    case TH_Float: ((float *)out)[m] = is_int ? (float)iv : (float)v; break;
    case TH_Double: ((double *)out)[m] = is_int ? (double)iv : v; break;
    default: break;
  }
}

// Row m's result from its final state, for the one-pass ops (SUM with arg
// the mean's 1/K or 1, PROD, MAX/MIN with the index, ALL/ANY, NORM2).
template <typename A>
__device__ void finish(ATReduceOp op, const State<A> &s, long long m, long long K, THDtype out_dt, void *out,
                       long long *idx, double arg) {
  const bool is_int = std::is_integral<A>::value;
  double v = 0;
  long long iv = 0;
  bool int_result = false;
  switch (op) {
    case AT_RED_SUM:
      if (is_int) { iv = (long long)s.v; int_result = true; }
      else v = (double)s.v * arg;
      break;
    case AT_RED_PROD:
    case AT_RED_MAX:
    case AT_RED_MIN:
      if (is_int) { iv = (long long)s.v; int_result = true; }
      else v = (double)s.v;
      if (idx && (op == AT_RED_MAX || op == AT_RED_MIN)) idx[m] = s.i < 0 ? 0 : s.i;
      break;
    case AT_RED_ALL:
    case AT_RED_ANY:
      iv = op == AT_RED_ALL ? s.i == K : s.i > 0;
      int_result = true;
      break;
    case AT_RED_NORM2: v = sqrt((double)s.v); break;
    default: break;
  }
  store(out_dt, out, m, v, iv, int_result);
}

template <Pass P, typename T, typename A>
__device__ __forceinline__ State<A> run_pass(const T *row, long long K, long long sk, A pivot, int lane, int nlanes,
                                             State<A> *sh) {
  State<A> s = init<P, A>();
  accumulate<P, T, A>(s, row, 0, K, sk, pivot, lane, nlanes);
  return group_reduce<P>(s, nlanes, sh);
}

// One row m, by `nlanes` cooperating threads (1, a warp, or the block).
template <typename T, typename A>
__device__ void reduce_row(ATReduceOp op, const T *x, long long m, long long K, long long sm, long long sk,
                           THDtype out_dt, void *out, long long *idx, double arg, int lane, int nlanes,
                           State<A> *sh) {
  const T *row = x + m * sm;
  State<A> s;
  double v = 0;
  switch (op) {
    case AT_RED_SUM: s = run_pass<P_SUM, T, A>(row, K, sk, (A)0, lane, nlanes, sh); break;
    case AT_RED_PROD: s = run_pass<P_PROD, T, A>(row, K, sk, (A)0, lane, nlanes, sh); break;
    case AT_RED_MAX: s = run_pass<P_MAX, T, A>(row, K, sk, (A)0, lane, nlanes, sh); break;
    case AT_RED_MIN: s = run_pass<P_MIN, T, A>(row, K, sk, (A)0, lane, nlanes, sh); break;
    case AT_RED_ALL:
    case AT_RED_ANY: s = run_pass<P_NZ, T, A>(row, K, sk, (A)0, lane, nlanes, sh); break;
    case AT_RED_NORM2: s = run_pass<P_SQ, T, A>(row, K, sk, (A)0, lane, nlanes, sh); break;
    case AT_RED_VAR:
    case AT_RED_STD: {
      // two passes, the second corrected by the deviations' sum (as the CPU)
      s = run_pass<P_SUM, T, A>(row, K, sk, (A)0, lane, nlanes, sh);
      A mean = K ? (A)((double)s.v / (double)K) : (A)0;
      s = run_pass<P_DEV, T, A>(row, K, sk, mean, lane, nlanes, sh);
      double m2 = (double)s.v;
      if (K) m2 -= (double)s.v2 * (double)s.v2 / (double)K;
      if (m2 < 0) m2 = 0;
      double dof = (double)K - arg;
      double var = K == 0 ? NAN : m2 / dof;   // dof <= 0: inf or NaN, as the CPU
      v = op == AT_RED_STD ? sqrt(var) : var;
      break;
    }
    case AT_RED_LOGSUMEXP: {
      s = run_pass<P_MAX, T, A>(row, K, sk, (A)0, lane, nlanes, sh);
      A mx = s.i < 0 ? (A)-INFINITY : s.v;
      if (is_nan(mx) || isinf((double)mx)) { v = (double)mx; break; }
      s = run_pass<P_EXP, T, A>(row, K, sk, mx, lane, nlanes, sh);
      v = (double)mx + log((double)s.v);
      break;
    }
  }
  if (lane != 0) return;
  if (op == AT_RED_VAR || op == AT_RED_STD || op == AT_RED_LOGSUMEXP) store(out_dt, out, m, v, 0, false);
  else finish(op, s, m, K, out_dt, out, idx, arg);
}

// Rows by groups of nlanes threads (RB / nlanes rows per block); the row
// loop is uniform over a group, so its shuffles and barriers see every lane.
template <typename T, typename A>
__global__ void __launch_bounds__(RB) reduce_rows_kernel(ATReduceOp op, const T *x, long long M, long long K,
                                                         long long sm, long long sk, THDtype out_dt, void *out,
                                                         long long *idx, double arg, int nlanes) {
  __shared__ State<A> sh[RB / WARP];
  const long long per_block = RB / nlanes;
  const int lane = threadIdx.x % nlanes;
  for (long long m = blockIdx.x * per_block + threadIdx.x / nlanes; m < M; m += gridDim.x * per_block)
    reduce_row<T, A>(op, x, m, K, sm, sk, out_dt, out, idx, arg, lane, nlanes, sh);
}

// Split rows, stage 1: block (b, m) reduces elements [b * chunk, (b + 1) * chunk)
// of row m into part[m * gridDim.x + b].
template <Pass P, typename T, typename A>
__global__ void __launch_bounds__(RB) split_rows_kernel(const T *x, long long K, long long sm, long long sk,
                                                        long long chunk, State<A> *part) {
  __shared__ State<A> sh[RB / WARP];
  const long long m = blockIdx.y, k0 = blockIdx.x * chunk, k1 = k0 + chunk < K ? k0 + chunk : K;
  State<A> s = init<P, A>();
  accumulate<P, T, A>(s, x + m * sm, k0, k1, sk, (A)0, threadIdx.x, RB);
  s = group_reduce<P>(s, RB, sh);
  if (threadIdx.x == 0) part[m * gridDim.x + blockIdx.x] = s;
}

// Columns (sm == 1): thread (tx, ty) of block (bx, by) takes output
// m = bx * 32 + tx and every CY-th k of chunk by; the CY states of a column
// meet in shared memory. With one chunk the result is stored, else it goes
// to part[m * gridDim.y + by].
template <Pass P, typename T, typename A>
__global__ void __launch_bounds__(RB) cols_kernel(ATReduceOp op, const T *x, long long M, long long K, long long sk,
                                                  long long chunk, State<A> *part, THDtype out_dt, void *out,
                                                  long long *idx, double arg) {
  __shared__ State<A> sh[CY][WARP];
  const long long m = blockIdx.x * (long long)WARP + threadIdx.x;
  const long long k0 = blockIdx.y * chunk, k1 = k0 + chunk < K ? k0 + chunk : K;
  State<A> s = init<P, A>();
  if (m < M) {
#pragma unroll 4
    for (long long k = k0 + threadIdx.y; k < k1; k += CY) step<P>(s, cvt<A>(x[m + k * sk]), k, (A)0);
  }
  sh[threadIdx.y][threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.y != 0 || m >= M) return;
  for (int y = 1; y < CY; y++) combine<P>(s, sh[y][threadIdx.x]);
  if (part) part[m * gridDim.y + blockIdx.y] = s;
  else finish(op, s, m, K, out_dt, out, idx, arg);
}

// Stage 2 of a split: one warp per row combines its nparts partials, stores.
template <Pass P, typename A>
__global__ void __launch_bounds__(RB) combine_kernel(ATReduceOp op, const State<A> *part, long long M,
                                                     long long nparts, long long K, THDtype out_dt, void *out,
                                                     long long *idx, double arg) {
  const int lane = threadIdx.x % WARP;
  const long long per_block = RB / WARP;
  for (long long m = blockIdx.x * per_block + threadIdx.x / WARP; m < M; m += gridDim.x * per_block) {
    State<A> s = init<P, A>();
    for (long long p = lane; p < nparts; p += WARP) combine<P>(s, part[m * nparts + p]);
    s = warp_reduce<P>(s);
    if (lane == 0) finish(op, s, m, K, out_dt, out, idx, arg);
  }
}

// device scratch for the partials, from the caching allocator: freed when
// the launches are queued, which is safe since a block is reused only in
// this stream's order
struct Scratch {
  void *p = NULL, *ctx = NULL;
  size_t n = 0;
  ~Scratch() { if (p) THCCachingAllocator.free(&THCCachingAllocator, p, n, ctx); }
  int alloc(size_t bytes) {
    n = bytes;
    p = THCCachingAllocator.malloc(&THCCachingAllocator, bytes, &ctx);
    return p ? 0 : -1;
  }
};

// multiprocessors of the current device (cached per device)
int sm_count(int *n) {
  static int cache[64];
  int dev = thc_current_device();
  if (dev < 0) return -1;
  if (dev < 64 && cache[dev]) { *n = cache[dev]; return 0; }
  int c = 0;
  if (thc_check(cudaDeviceGetAttribute(&c, cudaDevAttrMultiProcessorCount, dev), "reduce") < 0) return -1;
  if (c < 1) c = 1;
  if (dev < 64) cache[dev] = c;
  *n = c;
  return 0;
}

// blocks of `kernel` the whole GPU holds at once
template <typename K> int resident_blocks(K kernel, long long *n) {
  int sms, per_sm = 0;
  if (sm_count(&sms) < 0) return -1;
  if (thc_check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, RB, 0), "reduce") < 0) return -1;
  *n = (long long)sms * (per_sm > 0 ? per_sm : 1);
  return 0;
}

long long cdiv(long long a, long long b) { return (a + b - 1) / b; }

unsigned capped(long long blocks) { return (unsigned)(blocks < 65535LL * 16 ? blocks : 65535LL * 16); }

template <Pass P, typename A>
int launch_combine(ATReduceOp op, const State<A> *part, int64_t M, long long nparts, int64_t K, THDtype out_dt,
                   void *out, int64_t *idx, double arg) {
  combine_kernel<P, A><<<capped(cdiv(M, RB / WARP)), RB, 0, thc_stream()>>>(op, part, M, nparts, K, out_dt, out,
                                                                            (long long *)idx, arg);
  return thc_launched("reduce");
}

// The column and split-row paths of a one-pass op: 0 done, -1 error, 1 when
// the shape is better served by a group per row.
template <Pass P, typename T>
int launch_wide(ATReduceOp op, const T *x, int64_t M, int64_t K, int64_t sm, int64_t sk, THDtype out_dt, void *out,
                int64_t *idx, double arg) {
  typedef typename Acc<T>::type A;
  cudaStream_t st = thc_stream();
  if (K <= 0) return 1;
  if (sm == 1 && sk != 1 && M >= 16) {
    long long gx = cdiv(M, WARP), target, splits = 1;
    if (gx > 0x7fffffffLL) return 1;
    if (resident_blocks(cols_kernel<P, T, A>, &target) < 0) return -1;
    if (gx < target) {
      splits = cdiv(target, gx);
      long long most = cdiv(K, CY * MIN_PER_THREAD);
      if (splits > most) splits = most;
    }
    long long chunk = cdiv(K, splits);
    splits = cdiv(K, chunk);
    dim3 block(WARP, CY);
    if (splits <= 1) {
      cols_kernel<P, T, A><<<dim3((unsigned)gx, 1), block, 0, st>>>(op, x, M, K, sk, K, (State<A> *)NULL, out_dt, out,
                                                                   (long long *)idx, arg);
      return thc_launched("reduce");
    }
    Scratch sc;
    if (sc.alloc((size_t)M * splits * sizeof(State<A>)) < 0) return -1;
    cols_kernel<P, T, A><<<dim3((unsigned)gx, (unsigned)splits), block, 0, st>>>(op, x, M, K, sk, chunk,
                                                                                (State<A> *)sc.p, out_dt, out,
                                                                                (long long *)idx, arg);
    if (thc_launched("reduce") < 0) return -1;
    return launch_combine<P, A>(op, (const State<A> *)sc.p, M, splits, K, out_dt, out, idx, arg);
  }
  long long target;
  if (K < 2 * RB * MIN_PER_THREAD) return 1;
  if (resident_blocks(split_rows_kernel<P, T, A>, &target) < 0) return -1;
  if (M >= target) return 1;
  long long bpr = cdiv(target, M), most = cdiv(K, RB * MIN_PER_THREAD);
  if (bpr > most) bpr = most;
  // chunks a multiple of 64 elements: every chunk of an aligned row starts aligned
  long long chunk = cdiv(cdiv(K, bpr), 64) * 64;
  bpr = cdiv(K, chunk);
  if (bpr < 2) return 1;
  Scratch sc;
  if (sc.alloc((size_t)M * bpr * sizeof(State<A>)) < 0) return -1;
  split_rows_kernel<P, T, A><<<dim3((unsigned)bpr, (unsigned)M), RB, 0, st>>>(x, K, sm, sk, chunk, (State<A> *)sc.p);
  if (thc_launched("reduce") < 0) return -1;
  return launch_combine<P, A>(op, (const State<A> *)sc.p, M, bpr, K, out_dt, out, idx, arg);
}

template <typename T>
int launch(ATReduceOp op, const void *xv, int64_t M, int64_t K, int64_t sm, int64_t sk, THDtype out_dt, void *out,
           int64_t *idx, double arg) {
  typedef typename Acc<T>::type A;
  const T *x = (const T *)xv;
  int r = 1;
  switch (op) {
    case AT_RED_SUM: r = launch_wide<P_SUM, T>(op, x, M, K, sm, sk, out_dt, out, idx, arg); break;
    case AT_RED_PROD: r = launch_wide<P_PROD, T>(op, x, M, K, sm, sk, out_dt, out, idx, arg); break;
    case AT_RED_MAX: r = launch_wide<P_MAX, T>(op, x, M, K, sm, sk, out_dt, out, idx, arg); break;
    case AT_RED_MIN: r = launch_wide<P_MIN, T>(op, x, M, K, sm, sk, out_dt, out, idx, arg); break;
    case AT_RED_ALL:
    case AT_RED_ANY: r = launch_wide<P_NZ, T>(op, x, M, K, sm, sk, out_dt, out, idx, arg); break;
    case AT_RED_NORM2: r = launch_wide<P_SQ, T>(op, x, M, K, sm, sk, out_dt, out, idx, arg); break;
    default: break;
  }
  if (r <= 0) return r;
  // a block for long rows; a warp for medium ones, or for short ones when
  // there are few rows; a thread for many short rows
  int nlanes = K >= 1024 ? RB : (K >= 16 || M < 1024) ? WARP : 1;
  reduce_rows_kernel<T, A><<<capped(cdiv(M, RB / nlanes)), RB, 0, thc_stream()>>>(op, x, M, K, sm, sk, out_dt, out,
                                                                                  (long long *)idx, arg, nlanes);
  return thc_launched("reduce");
}

}  // namespace

// the dtype halves (THCReduceIntegral.cu: bool and the integer types;
// THCReduceFloating.cu: float16, bfloat16, float32, float64)
int thc_reduce_integral(ATReduceOp op, THDtype dt, const void *x, int64_t M, int64_t K, int64_t sm, int64_t sk,
                        THDtype out_dt, void *out, int64_t *idx, double arg);
int thc_reduce_floating(ATReduceOp op, THDtype dt, const void *x, int64_t M, int64_t K, int64_t sm, int64_t sk,
                        THDtype out_dt, void *out, int64_t *idx, double arg);
