// Reductions over ATReduce.h's 2-d layout: M rows of K elements, element
// strides sm (row to row) and sk (along a row).
//
// One block per row when rows are long, one thread per row when they are
// short (a block per 4-element row would idle 252 of 256 threads). Both use
// the same serial step and the same combine, so they agree bit for bit in
// what they compute per element. Accumulation: float for float16/bfloat16/
// float32 (as PyTorch's CUDA kernels), double for float64, int64 for the
// integer types and bool.
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <math.h>

#include "THCGeneral.h"

namespace {

const int RB = 256;   // threads of a block-per-row launch

template <typename T> struct Acc { typedef long long type; };
template <> struct Acc<__half> { typedef float type; };
template <> struct Acc<__nv_bfloat16> { typedef float type; };
template <> struct Acc<float> { typedef float type; };
template <> struct Acc<double> { typedef double type; };

template <typename A, typename T> __device__ __forceinline__ A load(const T *p) { return (A)*p; }
template <> __device__ __forceinline__ float load<float, __half>(const __half *p) { return __half2float(*p); }
template <> __device__ __forceinline__ float load<float, __nv_bfloat16>(const __nv_bfloat16 *p) {
  return __bfloat162float(*p);
}

template <typename A> __device__ __forceinline__ bool is_nan(A v) { return v != v; }

// One row's running state. The second pass of VAR/STD and LOGSUMEXP reads
// `pivot` (the mean, the max) that the first pass found.
template <typename A> struct State {
  A v, v2;
  long long i;     // MAX/MIN: index of the extreme; ALL/ANY: count of nonzeros
};

enum Pass { P_SUM, P_PROD, P_MAX, P_MIN, P_NZ, P_SQ, P_DEV, P_EXP };

template <typename A> __device__ __forceinline__ State<A> init(Pass p) {
  State<A> s;
  s.v = p == P_PROD ? (A)1 : (A)0;
  s.v2 = 0;
  s.i = p == P_MAX || p == P_MIN ? -1 : 0;
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

template <typename A> __device__ __forceinline__ void step(Pass p, State<A> &s, A x, long long k, A pivot) {
  switch (p) {
    case P_SUM: s.v += x; break;
    case P_PROD: s.v *= x; break;
    case P_MAX: if (better(x, k, s.v, s.i, true)) { s.v = x; s.i = k; } break;
    case P_MIN: if (better(x, k, s.v, s.i, false)) { s.v = x; s.i = k; } break;
    case P_NZ: s.i += x != (A)0; break;
    case P_SQ: s.v += x * x; break;
    case P_DEV: { A d = x - pivot; s.v += d * d; s.v2 += d; break; }
    case P_EXP: s.v += (A)exp((double)0 + (x - pivot)); break;
  }
}

template <typename A> __device__ __forceinline__ void combine(Pass p, State<A> &s, const State<A> &o) {
  switch (p) {
    case P_PROD: s.v *= o.v; break;
    case P_MAX: if (better(o.v, o.i, s.v, s.i, true)) { s.v = o.v; s.i = o.i; } break;
    case P_MIN: if (better(o.v, o.i, s.v, s.i, false)) { s.v = o.v; s.i = o.i; } break;
    case P_NZ: s.i += o.i; break;
    default: s.v += o.v; s.v2 += o.v2; break;
  }
}

// exp in the accumulation type: float math for float, double for double
__device__ __forceinline__ float exp_acc(float x) { return expf(x); }
__device__ __forceinline__ double exp_acc(double x) { return exp(x); }
__device__ __forceinline__ long long exp_acc(long long x) { return x; }

template <typename T, typename A>
__device__ State<A> run_pass(Pass p, const T *row, long long K, long long sk, A pivot, int lane, int nlanes,
                             State<A> *sh) {
  State<A> s = init<A>(p);
  for (long long k = lane; k < K; k += nlanes) {
    A x = load<A, T>(row + k * sk);
    if (p == P_EXP) s.v += exp_acc(x - pivot);
    else step(p, s, x, k, pivot);
  }
  if (nlanes == 1) return s;
  // tree over the block (nlanes == RB == blockDim.x)
  sh[lane] = s;
  __syncthreads();
  for (int w = nlanes / 2; w > 0; w >>= 1) {
    if (lane < w) combine(p, sh[lane], sh[lane + w]);
    __syncthreads();
  }
  State<A> r = sh[0];
  __syncthreads();   // sh is reused by the next pass
  return r;
}

template <typename O> __device__ __forceinline__ void store_as(void *out, long long m, double v) {
  ((O *)out)[m] = (O)v;
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

// One row m, by `nlanes` cooperating threads (1, or the block).
template <typename T, typename A>
__device__ void reduce_row(ATReduceOp op, const T *x, long long m, long long K, long long sm, long long sk,
                           THDtype out_dt, void *out, long long *idx, double arg, int lane, int nlanes,
                           State<A> *sh) {
  const T *row = x + m * sm;
  const bool is_int = sizeof(A) == 8 && (A)0.5 == (A)0;   // int64 accumulation
  State<A> s;
  double v = 0;
  long long iv = 0;
  bool int_result = false;
  switch (op) {
    case AT_RED_SUM:
      s = run_pass<T, A>(P_SUM, row, K, sk, (A)0, lane, nlanes, sh);
      if (is_int) { iv = (long long)s.v; int_result = true; }
      else v = (double)s.v * arg;
      break;
    case AT_RED_PROD:
      s = run_pass<T, A>(P_PROD, row, K, sk, (A)0, lane, nlanes, sh);
      if (is_int) { iv = (long long)s.v; int_result = true; }
      else v = (double)s.v;
      break;
    case AT_RED_MAX:
    case AT_RED_MIN:
      s = run_pass<T, A>(op == AT_RED_MAX ? P_MAX : P_MIN, row, K, sk, (A)0, lane, nlanes, sh);
      if (is_int) { iv = (long long)s.v; int_result = true; }
      else v = (double)s.v;
      if (idx && lane == 0) idx[m] = s.i < 0 ? 0 : s.i;
      break;
    case AT_RED_ALL:
    case AT_RED_ANY:
      s = run_pass<T, A>(P_NZ, row, K, sk, (A)0, lane, nlanes, sh);
      iv = op == AT_RED_ALL ? s.i == K : s.i > 0;
      int_result = true;
      break;
    case AT_RED_NORM2:
      s = run_pass<T, A>(P_SQ, row, K, sk, (A)0, lane, nlanes, sh);
      v = sqrt((double)s.v);
      break;
    case AT_RED_VAR:
    case AT_RED_STD: {
      // two passes, the second corrected by the deviations' sum (as the CPU)
      s = run_pass<T, A>(P_SUM, row, K, sk, (A)0, lane, nlanes, sh);
      A mean = K ? (A)((double)s.v / (double)K) : (A)0;
      s = run_pass<T, A>(P_DEV, row, K, sk, mean, lane, nlanes, sh);
      double m2 = (double)s.v;
      if (K) m2 -= (double)s.v2 * (double)s.v2 / (double)K;
      if (m2 < 0) m2 = 0;
      double dof = (double)K - arg;
      double var = K == 0 ? NAN : m2 / dof;   // dof <= 0: inf or NaN, as the CPU
      v = op == AT_RED_STD ? sqrt(var) : var;
      break;
    }
    case AT_RED_LOGSUMEXP: {
      s = run_pass<T, A>(P_MAX, row, K, sk, (A)0, lane, nlanes, sh);
      A mx = s.i < 0 ? (A)-INFINITY : s.v;
      if (is_nan(mx) || isinf((double)mx)) { v = (double)mx; break; }
      s = run_pass<T, A>(P_EXP, row, K, sk, mx, lane, nlanes, sh);
      v = (double)mx + log((double)s.v);
      break;
    }
  }
  if (lane == 0) store(out_dt, out, m, v, iv, int_result);
}

template <typename T, typename A>
__global__ void reduce_block_kernel(ATReduceOp op, const T *x, long long M, long long K, long long sm, long long sk,
                                    THDtype out_dt, void *out, long long *idx, double arg) {
  __shared__ State<A> sh[RB];
  for (long long m = blockIdx.x; m < M; m += gridDim.x)
    reduce_row<T, A>(op, x, m, K, sm, sk, out_dt, out, idx, arg, threadIdx.x, RB, sh);
}

template <typename T, typename A>
__global__ void reduce_thread_kernel(ATReduceOp op, const T *x, long long M, long long K, long long sm, long long sk,
                                     THDtype out_dt, void *out, long long *idx, double arg) {
  for (long long m = blockIdx.x * (long long)blockDim.x + threadIdx.x; m < M; m += (long long)gridDim.x * blockDim.x)
    reduce_row<T, A>(op, x, m, K, sm, sk, out_dt, out, idx, arg, 0, 1, (State<A> *)NULL);
}

template <typename T>
int launch(ATReduceOp op, const void *x, int64_t M, int64_t K, int64_t sm, int64_t sk, THDtype out_dt, void *out,
           int64_t *idx, double arg) {
  typedef typename Acc<T>::type A;
  cudaStream_t s = thc_stream();
  // long rows, or too few rows to fill the GPU thread by thread: a block per row
  if (K >= 64 || M < 1024) {
    unsigned blocks = (unsigned)(M < 65535LL * 16 ? M : 65535LL * 16);
    reduce_block_kernel<T, A><<<blocks, RB, 0, s>>>(op, (const T *)x, M, K, sm, sk, out_dt, out, (long long *)idx, arg);
  } else {
    reduce_thread_kernel<T, A><<<thc_blocks(M, 256), 256, 0, s>>>(op, (const T *)x, M, K, sm, sk, out_dt, out,
                                                                   (long long *)idx, arg);
  }
  return thc_launched("reduce");
}

}  // namespace

extern "C" int thc_reduce(ATReduceOp op, THDtype dt, const void *x, int64_t M, int64_t K, int64_t sm, int64_t sk,
                          THDtype out_dt, void *out, int64_t *idx, double arg) {
  if (M <= 0) return 0;
  bool floating_only = op == AT_RED_VAR || op == AT_RED_STD || op == AT_RED_LOGSUMEXP || op == AT_RED_NORM2;
  if (floating_only && !THDtype_isFloating(dt)) {
    THError_set(TH_ERR_RUNTIME, "reduction on CUDA: expected a floating point input, got %s", THDtype_info[dt].legacy);
    return -1;
  }
  switch (dt) {
    case TH_Bool: return launch<bool>(op, x, M, K, sm, sk, out_dt, out, idx, arg);
    case TH_UInt8: return launch<unsigned char>(op, x, M, K, sm, sk, out_dt, out, idx, arg);
    case TH_Int8: return launch<signed char>(op, x, M, K, sm, sk, out_dt, out, idx, arg);
    case TH_Int16: return launch<short>(op, x, M, K, sm, sk, out_dt, out, idx, arg);
    case TH_Int32: return launch<int>(op, x, M, K, sm, sk, out_dt, out, idx, arg);
    case TH_Int64: return launch<long long>(op, x, M, K, sm, sk, out_dt, out, idx, arg);
    case TH_Half: return launch<__half>(op, x, M, K, sm, sk, out_dt, out, idx, arg);
    case TH_BFloat16: return launch<__nv_bfloat16>(op, x, M, K, sm, sk, out_dt, out, idx, arg);
    case TH_Float: return launch<float>(op, x, M, K, sm, sk, out_dt, out, idx, arg);
    case TH_Double: return launch<double>(op, x, M, K, sm, sk, out_dt, out, idx, arg);
    default: break;
  }
  THError_set(TH_ERR_RUNTIME, "reduction on CUDA: unsupported dtype %s", THDtype_info[dt].legacy);
  return -1;
}
