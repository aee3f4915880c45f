// Indexing on the GPU: one kernel serves every gather, put and accumulating
// put of src/ATen (x[idx], index_select, take/put, index_fill/copy,
// gather/scatter/index_add, embedding and their backwards). ATen lays the
// operation out as an ATCudaIndex (see ATCuda.h); here a thread per position
// of its iteration shape finds the self slot and moves one element.
//
// Gathers and puts move bytes by element size; only accumulation is typed
// (atomicAdd: duplicate indices add up in an unspecified order, as PyTorch's
// CUDA index_add_/index_put_(accumulate=True)). A non-accumulating put with
// duplicate indices keeps one of the writes, unspecified which (as PyTorch).
//
// A bad index is reported through a device flag the host reads once after
// the kernel (as THCNN.cu's nll_loss): the call itself fails with PyTorch's
// message instead of a device assert poisoning the context.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>
#include <type_traits>

#include "THCGeneral.h"

namespace {

// the launch's geometry by value (kernel parameters, ~1 KB)
struct Geo {
  int ndim, nidx;
  bool wrap;
  long long skip;
  double alpha;
  long long sizes[TH_MAX_DIMS], ss[TH_MAX_DIMS], os[TH_MAX_DIMS], is[TH_MAX_DIMS];
  const long long *idx[AT_CUDA_INDEX_MAX];
  long long isize[AT_CUDA_INDEX_MAX], istride[AT_CUDA_INDEX_MAX];
  char *self, *other;
};

// bad[0]: 0 until the first bad index, then 1; bad[1] its value, bad[2] which index
__device__ void note_bad(unsigned long long *bad, long long v, int k) {
  if (atomicCAS(bad, 0ULL, 1ULL) == 0ULL) {
    bad[1] = (unsigned long long)v;
    bad[2] = (unsigned long long)k;
  }
}

// The self and other element offsets of position e; false when it touches
// nothing (a skipped or bad index).
__device__ __forceinline__ bool slot_of(const Geo &g, long long e, long long *so, long long *oo,
                                        unsigned long long *bad) {
  long long s = 0, o = 0, io = 0;
  for (int d = g.ndim - 1; d >= 0; d--) {
    long long c = e % g.sizes[d];
    e /= g.sizes[d];
    s += c * g.ss[d];
    o += c * g.os[d];
    io += c * g.is[d];
  }
  for (int k = 0; k < g.nidx; k++) {
    long long v = g.idx[k][io];
    if (v == g.skip) return false;
    if (v < 0 && g.wrap) v += g.isize[k];
    if (v < 0 || v >= g.isize[k]) { note_bad(bad, g.idx[k][io], k); return false; }
    s += v * g.istride[k];
  }
  *so = s;
  *oo = o;
  return true;
}

// gather (other <- self) or put (self <- other) of T-sized elements
template <typename T, bool PUT>
__global__ void move_kernel(Geo g, long long n, unsigned long long *bad) {
  T *self = (T *)g.self, *other = (T *)g.other;
  for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < n; e += (long long)gridDim.x * blockDim.x) {
    long long so, oo;
    if (!slot_of(g, e, &so, &oo, bad)) continue;
    if (PUT) self[so] = other[oo];
    else other[oo] = self[so];
  }
}

// self += other * alpha, atomically
__device__ __forceinline__ void atomic_acc(float *p, float v, double a) { atomicAdd(p, (float)(v * a)); }
__device__ __forceinline__ void atomic_acc(double *p, double v, double a) { atomicAdd(p, v * a); }
__device__ __forceinline__ void atomic_acc(__half *p, __half v, double a) {
  atomicAdd(p, __float2half((float)(__half2float(v) * a)));
}
__device__ __forceinline__ void atomic_acc(__nv_bfloat16 *p, __nv_bfloat16 v, double a) {
  atomicAdd(p, __float2bfloat16((float)(__bfloat162float(v) * a)));
}
__device__ __forceinline__ void atomic_acc(long long *p, long long v, double a) {
  atomicAdd((unsigned long long *)p, (unsigned long long)(v * (long long)a));
}
__device__ __forceinline__ void atomic_acc(int *p, int v, double a) { atomicAdd(p, (int)(v * (long long)a)); }

// self slot <- f(self slot, other): f does it atomically (Acc, Combine below)
template <typename T, typename F>
__global__ void update_kernel(Geo g, long long n, unsigned long long *bad, F f) {
  T *self = (T *)g.self;
  const T *other = (const T *)g.other;
  for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < n; e += (long long)gridDim.x * blockDim.x) {
    long long so, oo;
    if (!slot_of(g, e, &so, &oo, bad)) continue;
    f(self + so, other[oo], g.alpha);
  }
}
struct Acc {
  template <typename T> __device__ void operator()(T *p, T v, double a) const { atomic_acc(p, v, a); }
};

// scatter_reduce's prod/amax/amin: read the slot, combine, compare-and-swap
// until no other thread got in between. The CAS works on the aligned word
// that holds the element (4 bytes for 1- and 2-byte dtypes, so no 16-bit or
// byte CAS is needed). Combining follows the CPU's TH_SCATTER_MUL/MAX/MIN:
// compare in float for 16-bit floats, a NaN wins amax/amin and stays.
template <typename T> struct Cmp { typedef T C; };
template <> struct Cmp<__half> { typedef float C; };
template <> struct Cmp<__nv_bfloat16> { typedef float C; };
template <typename T> __device__ __forceinline__ typename Cmp<T>::C to_c(T v) { return (typename Cmp<T>::C)v; }
template <typename T> __device__ __forceinline__ T from_c(typename Cmp<T>::C v) { return (T)v; }

// ACCUM here serves the integer dtypes atomicAdd has no form for (int8,
// uint8, int16, bool): cur + v * alpha, wrapping; bool ORs (v && alpha)
template <typename T, int OP>
__device__ __forceinline__ T combine(T cur, T v, double a) {
  typedef typename Cmp<T>::C C;
  C c = to_c(cur), w = to_c(v);
  if constexpr (OP == AT_IDX_ACCUM) {
    if constexpr (std::is_same<T, bool>::value) return cur || (v && a != 0);
    else return (T)((long long)c + (long long)w * (long long)a);
  } else if constexpr (OP == AT_IDX_PROD) {
    if constexpr (std::is_same<T, bool>::value) return cur && v;
    else return from_c<T>(c * w);
  } else if constexpr (OP == AT_IDX_AMAX) {
    return ((w > c) | (w != w)) ? v : cur;
  } else {
    return ((w < c) | (w != w)) ? v : cur;
  }
}

template <typename T> __device__ __forceinline__ unsigned long long bits_of(T v) {
  unsigned long long b = 0;
  memcpy(&b, &v, sizeof(T));
  return b;
}
template <typename T> __device__ __forceinline__ T of_bits(unsigned long long b) {
  T v;
  memcpy(&v, &b, sizeof(T));
  return v;
}

template <typename T, int OP>
__device__ void atomic_combine(T *p, T v, double a) {
  if constexpr (sizeof(T) == 8) {
    unsigned long long *w = (unsigned long long *)p, old = *w, assumed;
    do {
      assumed = old;
      T nv = combine<T, OP>(of_bits<T>(assumed), v, a);
      old = atomicCAS(w, assumed, bits_of(nv));
    } while (old != assumed);
  } else {
    // the 4-byte word holding *p, and the element's bit offset in it (little endian)
    // (named addr: `a` is the alpha that combine() takes)
    uintptr_t addr = (uintptr_t)p;
    unsigned *w = (unsigned *)(addr & ~(uintptr_t)3);
    int shift = (int)(addr & 3) * 8;
    unsigned mask = sizeof(T) == 4 ? 0xffffffffu : (((1u << (8 * (sizeof(T) & 3))) - 1u) << shift);
    unsigned old = *w, assumed;
    do {
      assumed = old;
      T cur = of_bits<T>((unsigned long long)((assumed & mask) >> shift));
      unsigned nb = (unsigned)bits_of(combine<T, OP>(cur, v, a));
      unsigned nw = sizeof(T) == 4 ? nb : ((assumed & ~mask) | ((nb << shift) & mask));
      old = atomicCAS(w, assumed, nw);
    } while (old != assumed);
  }
}

template <int OP> struct Combine {
  template <typename T> __device__ void operator()(T *p, T v, double a) const { atomic_combine<T, OP>(p, v, a); }
};

template <typename T> void launch_reduce(ATIndexOp op, const Geo &g, long long n, unsigned long long *bad) {
  unsigned b = thc_blocks(n, 256);
  if (op == AT_IDX_PROD) update_kernel<T><<<b, 256, 0, thc_stream()>>>(g, n, bad, Combine<AT_IDX_PROD>());
  else if (op == AT_IDX_AMAX) update_kernel<T><<<b, 256, 0, thc_stream()>>>(g, n, bad, Combine<AT_IDX_AMAX>());
  else update_kernel<T><<<b, 256, 0, thc_stream()>>>(g, n, bad, Combine<AT_IDX_AMIN>());
}

struct Elem16 { unsigned long long a, b; };   // complex128: moved, never added

template <typename T> void launch_move(const Geo &g, long long n, bool put, unsigned long long *bad) {
  unsigned b = thc_blocks(n, 256);
  if (put) move_kernel<T, true><<<b, 256, 0, thc_stream()>>>(g, n, bad);
  else move_kernel<T, false><<<b, 256, 0, thc_stream()>>>(g, n, bad);
}

template <typename T> void launch_accum(const Geo &g, long long n, unsigned long long *bad) {
  update_kernel<T><<<thc_blocks(n, 256), 256, 0, thc_stream()>>>(g, n, bad, Acc());
}

template <typename T> void launch_cas_add(const Geo &g, long long n, unsigned long long *bad) {
  update_kernel<T><<<thc_blocks(n, 256), 256, 0, thc_stream()>>>(g, n, bad, Combine<AT_IDX_ACCUM>());
}

// launches; -1 with THError when the dtype has no kernel
int launch(const ATCudaIndex *I, const Geo &g, long long n, unsigned long long *bad) {
  if (I->op == AT_IDX_PROD || I->op == AT_IDX_AMAX || I->op == AT_IDX_AMIN) {
    switch (I->dt) {
      case TH_Float: launch_reduce<float>(I->op, g, n, bad); return 0;
      case TH_Double: launch_reduce<double>(I->op, g, n, bad); return 0;
      case TH_Half: launch_reduce<__half>(I->op, g, n, bad); return 0;
      case TH_BFloat16: launch_reduce<__nv_bfloat16>(I->op, g, n, bad); return 0;
      case TH_Int64: launch_reduce<long long>(I->op, g, n, bad); return 0;
      case TH_Int32: launch_reduce<int>(I->op, g, n, bad); return 0;
      case TH_Int16: launch_reduce<short>(I->op, g, n, bad); return 0;
      case TH_Int8: launch_reduce<signed char>(I->op, g, n, bad); return 0;
      case TH_UInt8: launch_reduce<unsigned char>(I->op, g, n, bad); return 0;
      case TH_Bool: launch_reduce<bool>(I->op, g, n, bad); return 0;
      default: break;
    }
    THError_set(TH_ERR_NOTIMPL, "scatter_reduce on CUDA: no kernel for dtype %s", THDtype_info[I->dt].name);
    return -1;
  }
  if (I->op != AT_IDX_ACCUM) {
    bool put = I->op == AT_IDX_PUT;
    switch (THDtype_size(I->dt)) {
      case 1: launch_move<uint8_t>(g, n, put, bad); return 0;
      case 2: launch_move<uint16_t>(g, n, put, bad); return 0;
      case 4: launch_move<uint32_t>(g, n, put, bad); return 0;
      case 8: launch_move<unsigned long long>(g, n, put, bad); return 0;
      case 16: launch_move<Elem16>(g, n, put, bad); return 0;
    }
  } else {
    switch (I->dt) {
      case TH_Float: launch_accum<float>(g, n, bad); return 0;
      case TH_Double: launch_accum<double>(g, n, bad); return 0;
      case TH_Half: launch_accum<__half>(g, n, bad); return 0;
      case TH_BFloat16: launch_accum<__nv_bfloat16>(g, n, bad); return 0;
      case TH_Int64: launch_accum<long long>(g, n, bad); return 0;
      case TH_Int32: launch_accum<int>(g, n, bad); return 0;
      case TH_Int16: launch_cas_add<short>(g, n, bad); return 0;
      case TH_Int8: launch_cas_add<signed char>(g, n, bad); return 0;
      case TH_UInt8: launch_cas_add<unsigned char>(g, n, bad); return 0;
      case TH_Bool: launch_cas_add<bool>(g, n, bad); return 0;
      default: break;
    }
  }
  THError_set(TH_ERR_NOTIMPL, "indexing on CUDA: no %s kernel for dtype %s",
              I->op == AT_IDX_ACCUM ? "accumulating" : "moving", THDtype_info[I->dt].name);
  return -1;
}

}  // namespace

extern "C" int thc_index(ATCudaIndex *I) {
  if (I->nidx < 0 || I->nidx > AT_CUDA_INDEX_MAX || I->ndim < 0 || I->ndim > TH_MAX_DIMS) {
    THError_set(TH_ERR_RUNTIME, "indexing on CUDA: bad launch geometry (%d indices, %d dims)", I->nidx, I->ndim);
    return -1;
  }
  long long n = 1;
  for (int d = 0; d < I->ndim; d++) n *= I->sizes[d];
  if (n == 0) return 0;
  Geo g;
  g.ndim = I->ndim;
  g.nidx = I->nidx;
  g.wrap = I->wrap;
  g.skip = I->skip;
  g.alpha = I->alpha;
  for (int d = 0; d < I->ndim; d++) {
    g.sizes[d] = I->sizes[d];
    g.ss[d] = I->ss[d];
    g.os[d] = I->os[d];
    g.is[d] = I->is[d];
  }
  for (int k = 0; k < I->nidx; k++) {
    g.idx[k] = (const long long *)I->idx[k];
    g.isize[k] = I->isize[k];
    g.istride[k] = I->istride[k];
  }
  g.self = I->self;
  g.other = I->other;

  // the flag: three 8-byte words, zeroed on the stream before the kernel
  const size_t flag_bytes = 3 * sizeof(unsigned long long);
  void *ctx = NULL;
  unsigned long long *bad = (unsigned long long *)THCCachingAllocator.malloc(&THCCachingAllocator, flag_bytes, &ctx);
  if (!bad) return -1;
  cudaStream_t s = thc_stream();
  unsigned long long host[3] = {0, 0, 0};
  int rc = thc_check(cudaMemsetAsync(bad, 0, flag_bytes, s), "index");
  if (rc == 0) rc = launch(I, g, n, bad);
  if (rc == 0) rc = thc_launched("index");
  if (rc == 0) rc = thc_check(cudaMemcpyAsync(host, bad, flag_bytes, cudaMemcpyDeviceToHost, s), "index");
  if (rc == 0) rc = thc_check(cudaStreamSynchronize(s), "index");
  THCCachingAllocator.free(&THCCachingAllocator, bad, flag_bytes, ctx);
  if (rc < 0) return -1;
  if (host[0]) {
    I->bad_value = (int64_t)host[1];
    I->bad_k = (int)host[2];
    return 1;
  }
  return 0;
}
