// The elementwise machinery of THC: one templated N-d kernel, its launcher
// and the registry entries that tie a CUDA kernel to its CPU twin (the TH
// loop ATen passes to at_cuda->loop). Kernels live by family in
// THCLoop*.cu; each file exports one table of THCKernel entries.
#ifndef THC_LOOP_CUH
#define THC_LOOP_CUH

#include "THCGeneral.h"
#include "../TH/THScalarOps.h"
#include <stdint.h>
#include <string.h>
#include <type_traits>
#include <utility>

extern "C" {
#include "../TH/THKernels.h"
#include "../TH/THKernelsActivation.h"
#include "../TH/THKernelsBinary.h"
#include "../TH/THKernelsPointwise.h"
#include "../TH/THKernelsUnary.h"
}

typedef int (*THCLaunchFn)(const ATCudaLoop *L, const void *extra);
struct THCKernel { THLoopFn cpu; THCLaunchFn launch; };

// ---- storage types and their compute types (float for half/bfloat16) ----
struct thc_half { uint16_t x; };
struct thc_bf16 { uint16_t x; };

template <class S> struct THCType {
  typedef S C;
  static __device__ __forceinline__ C toc(S v) { return v; }
  static __device__ __forceinline__ S fromc(C v) { return (S)v; }
};
template <> struct THCType<thc_half> {
  typedef float C;
  static __device__ __forceinline__ float toc(thc_half v) { return th_half2float_dev(v.x); }
  static __device__ __forceinline__ thc_half fromc(float v) { thc_half h; h.x = th_float2half_dev(v); return h; }
};
template <> struct THCType<thc_bf16> {
  typedef float C;
  static __device__ __forceinline__ float toc(thc_bf16 v) { return th_bf2float_dev(v.x); }
  static __device__ __forceinline__ thc_bf16 fromc(float v) { thc_bf16 h; h.x = th_float2bf_dev(v); return h; }
};

// TH_ARG(k) as the CPU loops read it: slot d[k] for floating compute types,
// i[k] for integers and bool
template <class C> __device__ __forceinline__ C thc_arg(const THOpArgs &a, int k) {
  if constexpr (std::is_floating_point<C>::value) return (C)a.d[k];
  else return (C)a.i[k];
}

// ---- the geometry one launch needs (kernel parameters, ~1.1 KB) ----
#define THC_MAX_OPS 4
struct THCGeo {
  int ndim;
  bool use32;                                 // every index fits 32 bits: cheaper div/mod
  int64_t shape[TH_MAX_DIMS];                 // innermost first
  int64_t st[THC_MAX_OPS][TH_MAX_DIMS];       // byte strides
  char *data[THC_MAX_OPS];
  bool host[THC_MAX_OPS];                     // a 0-d host operand: its value is in scalar[k]
  uint64_t scalar[THC_MAX_OPS];
  THOpArgs args;
};

template <class... In> struct THCIn {};

template <class T> __device__ __forceinline__ T thc_load(const THCGeo &g, int k, int64_t off) {
  if (g.host[k]) { T v; memcpy(&v, &g.scalar[k], sizeof(T)); return v; }
  return *reinterpret_cast<const T *>(g.data[k] + off);
}

template <class O, class F, class... In, size_t... K>
__device__ __forceinline__ void thc_apply(const THCGeo &g, const int64_t *off, const F &f, THCIn<In...>,
                                          std::index_sequence<K...>) {
  typedef typename THCType<O>::C OC;
  *reinterpret_cast<O *>(g.data[0] + off[0]) =
      THCType<O>::fromc(static_cast<OC>(f(g.args, THCType<In>::toc(thc_load<In>(g, K + 1, off[K + 1]))...)));
}

// The contiguous fast path moves VE elements per operand in one access of
// VE * sizeof(T) bytes: 16 bytes for the widest operand (4 floats, 2
// doubles, 8 halves), fewer for the narrower ones (a bool result of a float
// compare: 4 bytes).
template <class... T> constexpr size_t thc_max_size() {
  size_t m = 1;
  ((m = sizeof(T) > m ? sizeof(T) : m), ...);
  return m;
}
template <class O, class... In> constexpr int thc_vec_width() { return (int)(16 / thc_max_size<O, In...>()); }
template <class T, int VE> struct alignas(sizeof(T) * VE) THCPack { T v[VE]; };

// pack i of operand k; a host scalar or a stride-0 operand repeats its one value
template <int VE, class T> __device__ __forceinline__ THCPack<T, VE> thc_load_pack(const THCGeo &g, int k, int64_t i) {
  THCPack<T, VE> p;
  if (g.host[k] || g.st[k][0] == 0) {
    const T v = thc_load<T>(g, k, 0);
#pragma unroll
    for (int j = 0; j < VE; j++) p.v[j] = v;
  } else {
    p = reinterpret_cast<const THCPack<T, VE> *>(g.data[k])[i];
  }
  return p;
}

template <int VE, class O, class F, class... In>
__device__ __forceinline__ void thc_apply_pack(const THCGeo &g, int64_t i, const F &f, const THCPack<In, VE> &...in) {
  typedef typename THCType<O>::C OC;
  THCPack<O, VE> r;
#pragma unroll
  for (int j = 0; j < VE; j++) r.v[j] = THCType<O>::fromc(static_cast<OC>(f(g.args, THCType<In>::toc(in.v[j])...)));
  reinterpret_cast<THCPack<O, VE> *>(g.data[0])[i] = r;
}

// every input pack is loaded (the call's arguments) before any is used
template <int VE, class O, class F, class... In, size_t... K>
__device__ __forceinline__ void thc_apply_vec(const THCGeo &g, int64_t i, const F &f, THCIn<In...>,
                                              std::index_sequence<K...>) {
  thc_apply_pack<VE, O, F, In...>(g, i, f, thc_load_pack<VE, In>(g, K + 1, i)...);
}

// Grid-stride over the elements. nvec > 0 (a 1-d loop whose operands are
// contiguous and aligned, or scalars): packs 0..nvec-1 first, then the tail
// (under VE elements) one by one. Otherwise one thread per element: a
// coalesced loop of one dimension takes no division; else the element index
// is split over the shape.
template <class O, class F, class... In>
__global__ void thc_elementwise(THCGeo g, int64_t n, int64_t nvec, F f) {
  constexpr int NOPS = sizeof...(In) + 1;
  constexpr int VE = thc_vec_width<O, In...>();
  const int64_t step = (int64_t)blockDim.x * gridDim.x;
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (nvec > 0) {
    for (int64_t v = i; v < nvec; v += step)
      thc_apply_vec<VE, O>(g, v, f, THCIn<In...>(), std::make_index_sequence<sizeof...(In)>());
    i += nvec * VE;
  }
  for (; i < n; i += step) {
    int64_t off[NOPS];
    if (g.ndim == 1) {
#pragma unroll
      for (int k = 0; k < NOPS; k++) off[k] = i * g.st[k][0];
    } else if (g.use32) {
#pragma unroll
      for (int k = 0; k < NOPS; k++) off[k] = 0;
      uint32_t r = (uint32_t)i;
      for (int d = 0; d < g.ndim; d++) {
        const uint32_t sz = (uint32_t)g.shape[d], q = r % sz;
        r /= sz;
#pragma unroll
        for (int k = 0; k < NOPS; k++) off[k] += (int64_t)q * g.st[k][d];
      }
    } else {
#pragma unroll
      for (int k = 0; k < NOPS; k++) off[k] = 0;
      int64_t r = i;
      for (int d = 0; d < g.ndim; d++) {
        const int64_t sz = g.shape[d], q = r % sz;
        r /= sz;
#pragma unroll
        for (int k = 0; k < NOPS; k++) off[k] += q * g.st[k][d];
      }
    }
    thc_apply<O>(g, off, f, THCIn<In...>(), std::make_index_sequence<sizeof...(In)>());
  }
}

// Packs for the fast path: 0 unless the loop is 1-d, long enough, and every
// operand is a scalar (host or stride 0) or contiguous with its data aligned
// to its pack (a view such as x[1:] is not: it takes the per-element path).
template <class O, class... In> int64_t thc_vec_count(const THCGeo &g, int64_t n) {
  constexpr int VE = thc_vec_width<O, In...>();
  const size_t sizes[] = { sizeof(O), sizeof(In)... };
  if (g.ndim != 1 || n < 4 * VE) return 0;
  for (int k = 0; k < (int)(sizeof sizes / sizeof sizes[0]); k++) {
    if (g.host[k] || (k > 0 && g.st[k][0] == 0)) continue;
    if (g.st[k][0] != (int64_t)sizes[k] || (uintptr_t)g.data[k] % (sizes[k] * VE)) return 0;
  }
  return n / VE;
}

// Fills g from ATen's loop; the element count through n. args: the THOpArgs
// the CPU loop would get (NULL: zeros, as TH_LOCAL_ARGS).
int thc_geo(THCGeo *g, const ATCudaLoop *L, int nops, const THOpArgs *args, int64_t *n);

// The launcher registered for one (op, dtypes): ARGS says whether `extra`
// is a THOpArgs (copy passes a THDtype, where nothing).
template <bool ARGS, class O, class F, class... In>
int thc_launch(const ATCudaLoop *L, const void *extra) {
  THCGeo g;
  int64_t n;
  if (thc_geo(&g, L, (int)sizeof...(In) + 1, ARGS ? (const THOpArgs *)extra : NULL, &n) < 0) return -1;
  if (n == 0) return 0;
  const int64_t nvec = thc_vec_count<O, In...>(g, n);
  thc_elementwise<O, F, In...><<<thc_blocks(nvec ? nvec : n, 256), 256, 0, thc_stream()>>>(g, n, nvec, F());
  return thc_launched("elementwise kernel");
}

// ---- functor shapes: EXPR sees compute_t, x (unary) or a, b (binary) or
// a, b, c (ternary), and TH_ARG(k), as the CPU loop bodies do ----
#undef TH_ARG
#define TH_ARG(k) thc_arg<compute_t>(args, k)
#define THC_UNARY_OP(NAME, EXPR)                                                       \
  struct NAME {                                                                        \
    template <class C> __device__ __forceinline__ C operator()(const THOpArgs &args, C x) const { \
      typedef C compute_t; (void)args; return (C)(EXPR);                               \
    }                                                                                  \
  };
#define THC_UNARY_PRED(NAME, EXPR)                                                     \
  struct NAME {                                                                        \
    template <class C> __device__ __forceinline__ bool operator()(const THOpArgs &args, C x) const { \
      typedef C compute_t; (void)args; return (bool)(EXPR);                            \
    }                                                                                  \
  };
#define THC_BINARY_OP(NAME, EXPR)                                                      \
  struct NAME {                                                                        \
    template <class C> __device__ __forceinline__ C operator()(const THOpArgs &args, C a, C b) const { \
      typedef C compute_t; (void)args; return (C)(EXPR);                               \
    }                                                                                  \
  };
#define THC_BINARY_PRED(NAME, EXPR)                                                    \
  struct NAME {                                                                        \
    template <class C> __device__ __forceinline__ bool operator()(const THOpArgs &args, C a, C b) const { \
      typedef C compute_t; (void)args; return (bool)(EXPR);                            \
    }                                                                                  \
  };
#define THC_TERNARY_OP(NAME, EXPR)                                                     \
  struct NAME {                                                                        \
    template <class C> __device__ __forceinline__ C operator()(const THOpArgs &args, C a, C b, C c) const { \
      typedef C compute_t; (void)args; return (C)(EXPR);                               \
    }                                                                                  \
  };

// ---- dtype lists: X(Real, storage type, ...) per dtype of a CPU table ----
#define THC_BOOL(X, ...) X(Bool, bool, __VA_ARGS__)
#define THC_INTEGRAL(X, ...) X(Byte, uint8_t, __VA_ARGS__) X(Char, int8_t, __VA_ARGS__) \
  X(Short, int16_t, __VA_ARGS__) X(Int, int32_t, __VA_ARGS__) X(Long, int64_t, __VA_ARGS__)
#define THC_FLOATING(X, ...) X(Half, thc_half, __VA_ARGS__) X(BFloat16, thc_bf16, __VA_ARGS__) \
  X(Float, float, __VA_ARGS__) X(Double, double, __VA_ARGS__)
#define THC_NUMERIC(X, ...) THC_INTEGRAL(X, __VA_ARGS__) THC_FLOATING(X, __VA_ARGS__)
#define THC_ALL(X, ...) THC_BOOL(X, __VA_ARGS__) THC_NUMERIC(X, __VA_ARGS__)
#define THC_INTEGRAL_BOOL(X, ...) THC_BOOL(X, __VA_ARGS__) THC_INTEGRAL(X, __VA_ARGS__)

// ---- registry entries: the CPU kernel TH<Real>Tensor_<NAME> -> launcher ----
#define THC_CPU(R, NAME) (THLoopFn)TH##R##Tensor_##NAME
#define THC_E_UNARY(R, T, NAME, F) { THC_CPU(R, NAME), thc_launch<true, T, F, T> },
#define THC_E_UPRED(R, T, NAME, F) { THC_CPU(R, NAME), thc_launch<true, bool, F, T> },
#define THC_E_BINARY(R, T, NAME, F) { THC_CPU(R, NAME), thc_launch<true, T, F, T, T> },
#define THC_E_PRED(R, T, NAME, F) { THC_CPU(R, NAME), thc_launch<true, bool, F, T, T> },
#define THC_E_TERNARY(R, T, NAME, F) { THC_CPU(R, NAME), thc_launch<true, T, F, T, T, T> },

// the family tables (each THCLoop*.cu defines one)
extern const THCKernel thc_kernels_core[], thc_kernels_binary[], thc_kernels_unary[],
    thc_kernels_activation[], thc_kernels_pointwise[];
extern const size_t thc_nkernels_core, thc_nkernels_binary, thc_nkernels_unary,
    thc_nkernels_activation, thc_nkernels_pointwise;

#endif
