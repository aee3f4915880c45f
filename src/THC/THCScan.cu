// Scans on the GPU (cumsum/cumprod, their reverse forms, logcumsumexp,
// cummax/cummin of src/ATen/ATScan.c) along D of a contiguous
// [outer, D, inner] block, with the CPU's accumulators
// (src/TH/generic/THTensorScan.c): double for float/double, float for
// half/bfloat16, wrapping 64-bit integers for the integral types; the
// log-add-exp step is PyTorch's (NaN propagates, equal infinities stay).
//
// Two layouts:
//  - inner > 1, or short lines: a thread per (outer, inner) line walks D;
//    neighbouring threads read neighbouring columns, so loads coalesce.
//  - inner == 1 with long lines (cumsum of a vector, of rows): a block per
//    line scans tiles of 256 * ITEMS elements with cub::BlockScan, carrying
//    the running total from tile to tile. Sums then add in a tree order
//    within a tile, so float results can differ from the CPU's in the last
//    bits (as PyTorch's CUDA scans do).
// cummax/cummin keep the sequential walk: ties take the later index and a
// NaN takes over, which the block path would have to carry as pairs.
#include <cub/cub.cuh>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math.h>
#include <stdint.h>

#include "THCGeneral.h"
extern "C" {
#include "../TH/THKernelsScan.h"
}

namespace {

// storage <-> accumulator conversions
template <typename S> struct Acc { typedef double A; };   // float, double
template <> struct Acc<__half> { typedef float A; };
template <> struct Acc<__nv_bfloat16> { typedef float A; };
#define INT_ACC(T) template <> struct Acc<T> { typedef unsigned long long A; };
INT_ACC(bool) INT_ACC(uint8_t) INT_ACC(int8_t) INT_ACC(int16_t) INT_ACC(int32_t) INT_ACC(long long)
#undef INT_ACC

template <typename A, typename S> __device__ __forceinline__ A to_acc(S v) { return (A)v; }
template <> __device__ __forceinline__ float to_acc<float, __half>(__half v) { return __half2float(v); }
template <> __device__ __forceinline__ float to_acc<float, __nv_bfloat16>(__nv_bfloat16 v) { return __bfloat162float(v); }
// integers go through their signed value so negative ones wrap correctly
template <> __device__ __forceinline__ unsigned long long to_acc<unsigned long long, int8_t>(int8_t v) { return (unsigned long long)(long long)v; }
template <> __device__ __forceinline__ unsigned long long to_acc<unsigned long long, int16_t>(int16_t v) { return (unsigned long long)(long long)v; }
template <> __device__ __forceinline__ unsigned long long to_acc<unsigned long long, int32_t>(int32_t v) { return (unsigned long long)(long long)v; }

template <typename S, typename A> __device__ __forceinline__ S from_acc(A v) { return (S)v; }
template <> __device__ __forceinline__ __half from_acc<__half, float>(float v) { return __float2half(v); }
template <> __device__ __forceinline__ __nv_bfloat16 from_acc<__nv_bfloat16, float>(float v) { return __float2bfloat16(v); }
template <> __device__ __forceinline__ bool from_acc<bool, unsigned long long>(unsigned long long v) { return v != 0; }

template <typename A> __device__ __forceinline__ A log_add_exp(A x, A y) {
  A mn = isnan(y) ? y : (y < x ? y : x), mx = isnan(y) ? y : (x < y ? y : x);
  if (mn != mx || isfinite(mn)) return log1p(exp(mn - mx)) + mx;
  return x;
}

// the combining step of each accumulating op (acc first, as the CPU's fold)
template <typename A> struct SumOp { __device__ __forceinline__ A operator()(A a, A b) const { return a + b; } };
template <typename A> struct ProdOp { __device__ __forceinline__ A operator()(A a, A b) const { return a * b; } };
template <typename A> struct LseOp { __device__ __forceinline__ A operator()(A a, A b) const { return log_add_exp(b, a); } };

// sequential lines: line l = (o, i) walks k = 0..D-1 (or back)
template <typename S, typename Op>
__global__ void scan_lines(const S *x, S *y, long long outer, long long D, long long inner, bool rev,
                           typename Acc<S>::A init, Op op) {
  typedef typename Acc<S>::A A;
  long long L = outer * inner;
  for (long long l = blockIdx.x * (long long)blockDim.x + threadIdx.x; l < L; l += (long long)gridDim.x * blockDim.x) {
    long long o = l / inner, i = l % inner, base = o * D * inner + i;
    A acc = init;
    for (long long j = 0; j < D; j++) {
      long long k = rev ? D - 1 - j : j, at = base + k * inner;
      acc = op(acc, to_acc<A>(x[at]));
      y[at] = from_acc<S>(acc);
    }
  }
}

// the running total handed from one tile to the next (thread 0 keeps it)
template <typename A, typename Op> struct Carry {
  A total;
  Op op;
  __device__ A operator()(A tile) {
    A before = total;
    total = op(total, tile);
    return before;
  }
};

// one block per line of D contiguous elements
constexpr int BT = 256, ITEMS = 4;
template <typename S, typename Op>
__global__ void scan_rows_block(const S *x, S *y, long long D, bool rev, typename Acc<S>::A init, Op op) {
  typedef typename Acc<S>::A A;
  typedef cub::BlockScan<A, BT> Scan;
  __shared__ typename Scan::TempStorage tmp;
  const S *xr = x + blockIdx.x * D;
  S *yr = y + blockIdx.x * D;
  Carry<A, Op> carry{init, op};
  for (long long t0 = 0; t0 < D; t0 += (long long)BT * ITEMS) {
    A v[ITEMS];
    for (int j = 0; j < ITEMS; j++) {
      long long p = t0 + (long long)threadIdx.x * ITEMS + j;
      long long k = rev ? D - 1 - p : p;
      v[j] = p < D ? to_acc<A>(xr[k]) : init;
    }
    Scan(tmp).InclusiveScan(v, v, op, carry);
    __syncthreads();   // tmp is reused by the next tile
    for (int j = 0; j < ITEMS; j++) {
      long long p = t0 + (long long)threadIdx.x * ITEMS + j;
      if (p < D) yr[rev ? D - 1 - p : p] = from_acc<S>(v[j]);
    }
  }
}

// running max/min with the index of the current extreme (TAKES of the CPU)
template <typename S>
__global__ void scan_extreme(const S *x, S *y, long long *idx, long long outer, long long D, long long inner,
                             bool is_max) {
  typedef typename std::conditional<sizeof(S) == 2 && !std::is_integral<S>::value, float, S>::type C;
  long long L = outer * inner;
  for (long long l = blockIdx.x * (long long)blockDim.x + threadIdx.x; l < L; l += (long long)gridDim.x * blockDim.x) {
    long long o = l / inner, i = l % inner, base = o * D * inner + i;
    C c = 0;
    long long ci = 0;
    for (long long k = 0; k < D; k++) {
      long long at = base + k * inner;
      C v = (C)x[at];
      bool vn = v != v, cn = c != c;
      if (k == 0 || vn || (!cn && (is_max ? v >= c : v <= c))) { c = v; ci = k; }
      y[at] = x[base + ci * inner];
      idx[at] = ci;
    }
  }
}

template <typename S, typename Op>
int run_acc(const void *xv, void *yv, long long outer, long long D, long long inner, bool rev,
            typename Acc<S>::A init, Op op) {
  const S *x = (const S *)xv;
  S *y = (S *)yv;
  cudaStream_t s = thc_stream();
  long long lines = outer * inner;
  // a block per line when lines are long and too few to fill the GPU with a thread each
  if (inner == 1 && D >= 1024 && outer <= 65535LL * 32 && outer < 64 * 1024)
    scan_rows_block<S, Op><<<(unsigned)outer, BT, 0, s>>>(x, y, D, rev, init, op);
  else
    scan_lines<S, Op><<<thc_blocks(lines, 128), 128, 0, s>>>(x, y, outer, D, inner, rev, init, op);
  return thc_launched("scan");
}

template <typename S>
int run(int op, const void *x, void *y, int64_t *idx, long long outer, long long D, long long inner) {
  typedef typename Acc<S>::A A;
  switch (op) {
    case TH_SCAN_SUM: return run_acc<S>(x, y, outer, D, inner, false, (A)0, SumOp<A>());
    case TH_SCAN_SUM_REVERSE: return run_acc<S>(x, y, outer, D, inner, true, (A)0, SumOp<A>());
    case TH_SCAN_PROD: return run_acc<S>(x, y, outer, D, inner, false, (A)1, ProdOp<A>());
    case TH_SCAN_LOGSUMEXP:
    case TH_SCAN_LOGSUMEXP_REVERSE:
      if constexpr (!std::is_integral<A>::value)
        return run_acc<S>(x, y, outer, D, inner, op == TH_SCAN_LOGSUMEXP_REVERSE, (A)-INFINITY, LseOp<A>());
      break;
    case TH_SCAN_MAX:
    case TH_SCAN_MIN:
      scan_extreme<S><<<thc_blocks(outer * inner, 128), 128, 0, thc_stream()>>>(
          (const S *)x, (S *)y, (long long *)idx, outer, D, inner, op == TH_SCAN_MAX);
      return thc_launched("scan");
    default: break;
  }
  THError_set(TH_ERR_NOTIMPL, "scan %d on CUDA is not implemented for this dtype", op);
  return -1;
}

}  // namespace

extern "C" int thc_scan(int op, THDtype dt, const void *x, void *y, int64_t *idx, int64_t outer, int64_t D,
                        int64_t inner) {
  if (outer * D * inner == 0) return 0;
  switch (dt) {
    case TH_Bool: return run<bool>(op, x, y, idx, outer, D, inner);
    case TH_UInt8: return run<uint8_t>(op, x, y, idx, outer, D, inner);
    case TH_Int8: return run<int8_t>(op, x, y, idx, outer, D, inner);
    case TH_Int16: return run<int16_t>(op, x, y, idx, outer, D, inner);
    case TH_Int32: return run<int32_t>(op, x, y, idx, outer, D, inner);
    case TH_Int64: return run<long long>(op, x, y, idx, outer, D, inner);
    case TH_Half: return run<__half>(op, x, y, idx, outer, D, inner);
    case TH_BFloat16: return run<__nv_bfloat16>(op, x, y, idx, outer, D, inner);
    case TH_Float: return run<float>(op, x, y, idx, outer, D, inner);
    case TH_Double: return run<double>(op, x, y, idx, outer, D, inner);
    default: break;
  }
  THError_set(TH_ERR_NOTIMPL, "scans on CUDA are not implemented for '%s'", THDtype_info[dt].legacy);
  return -1;
}

// ---- cumprod's backward and its two derivatives (ATScan.c's cumprod_line),
// a thread per line of K doubles, with pre (K + 1) and S (K) of scratch each:
//   mode 0 (BWD):   out[k] = pre[k] * S[k], S[k] = g[k] + x[k+1] * S[k+1]
//   mode 1 (GGRAD): the adjoint of S for incoming a
//   mode 2 (GSELF): the adjoint of x through pre and S ----
namespace {
__global__ void cumprod_grad_lines(int mode, const double *x, const double *g, const double *a, double *out,
                                   long long L, long long K, double *scratch) {
  for (long long l = blockIdx.x * (long long)blockDim.x + threadIdx.x; l < L; l += (long long)gridDim.x * blockDim.x) {
    const double *xl = x + l * K, *gl = g + l * K, *al = a ? a + l * K : NULL;
    double *ol = out + l * K, *pre = scratch + l * (2 * K + 1), *S = pre + K + 1;
    pre[0] = 1;
    for (long long k = 0; k < K; k++) pre[k + 1] = pre[k] * xl[k];
    double s = 0;
    for (long long k = K - 1; k >= 0; k--) { s = gl[k] + (k + 1 < K ? xl[k + 1] * s : 0); S[k] = s; }
    if (mode == 0) { for (long long k = 0; k < K; k++) ol[k] = pre[k] * S[k]; continue; }
    if (mode == 1) {
      double bS = 0;
      for (long long k = 0; k < K; k++) { bS = al[k] * pre[k] + xl[k] * bS; ol[k] = bS; }
      continue;
    }
    double bpre = 0;
    for (long long k = K - 1; k >= 0; k--) { ol[k] = bpre * pre[k]; bpre = al[k] * S[k] + bpre * xl[k]; }
    double bS = 0;
    for (long long k = 0; k < K; k++) { if (k) ol[k] += bS * S[k]; bS = al[k] * pre[k] + xl[k] * bS; }
  }
}
}  // namespace

extern "C" int thc_cumprod_grad(int mode, const double *x, const double *g, const double *a, double *out, int64_t L,
                                int64_t K) {
  if (L * K == 0) return 0;
  size_t bytes = (size_t)L * (size_t)(2 * K + 1) * sizeof(double);
  void *ctx = NULL;
  double *scratch = (double *)THCCachingAllocator.malloc(&THCCachingAllocator, bytes, &ctx);
  if (!scratch) return -1;
  cumprod_grad_lines<<<thc_blocks(L, 128), 128, 0, thc_stream()>>>(mode, x, g, a, out, L, K, scratch);
  int rc = thc_launched("cumprod_backward");
  THCCachingAllocator.free(&THCCachingAllocator, scratch, bytes, ctx);
  return rc;
}
