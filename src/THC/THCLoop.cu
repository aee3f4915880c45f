// Elementwise kernels on the GPU: the registry from a CPU TH loop to its
// CUDA launcher (thc_loop, what at_iter_run reaches through
// at_cuda->loop), the launch geometry, and the core kernels: copy, fill,
// where, arithmetic, comparisons, logical ops. The other families live in
// THCLoop{Binary,Unary,Activation,Pointwise}.cu; the kernel itself is in
// THCLoop.cuh.
#include "THCLoop.cuh"
#include <dlfcn.h>
#include <unordered_map>

int thc_geo(THCGeo *g, const ATCudaLoop *L, int nops, const THOpArgs *args, int64_t *n) {
  if (L->nops != nops || nops > THC_MAX_OPS || L->ndim < 1 || L->ndim > TH_MAX_DIMS) {
    THError_set(TH_ERR_RUNTIME, "CUDA elementwise kernel: expected %d operands, got %d (%d dims)", nops, L->nops, L->ndim);
    return -1;
  }
  memset(g, 0, sizeof *g);
  g->ndim = L->ndim;
  int64_t total = 1;
  for (int d = 0; d < L->ndim; d++) {
    g->shape[d] = L->shape[d];
    total *= L->shape[d];
  }
  for (int k = 0; k < nops; k++) {
    g->data[k] = L->data[k];
    g->host[k] = L->host_scalar[k];
    memcpy(&g->scalar[k], L->scalar[k].bytes, sizeof g->scalar[k]);
    for (int d = 0; d < L->ndim; d++) {
      g->st[k][d] = L->host_scalar[k] ? 0 : L->strides[k][d];
    }
  }
  // byte offsets are always 64-bit; the index split (div/mod) takes 32 bits when it can
  g->use32 = total <= INT32_MAX;
  if (args) g->args = *args;
  *n = total;
  return 0;
}

// ---- the registry: CPU kernel pointer -> launcher, built on first use ----
typedef std::unordered_map<THLoopFn, THCLaunchFn> THCRegistry;

static const THCRegistry &registry(void) {
  static const THCRegistry *reg = [] {
    THCRegistry *r = new THCRegistry();
    const THCKernel *tables[] = { thc_kernels_core, thc_kernels_binary, thc_kernels_unary,
                                  thc_kernels_activation, thc_kernels_pointwise };
    const size_t sizes[] = { thc_nkernels_core, thc_nkernels_binary, thc_nkernels_unary,
                             thc_nkernels_activation, thc_nkernels_pointwise };
    for (size_t t = 0; t < sizeof sizes / sizeof sizes[0]; t++)
      for (size_t i = 0; i < sizes[t]; i++) (*r)[tables[t][i].cpu] = tables[t][i].launch;
    return r;
  }();
  return *reg;
}

extern "C" int thc_loop(THLoopFn cpu_fn, const ATCudaLoop *L, const void *extra) {
  const THCRegistry &reg = registry();
  THCRegistry::const_iterator it = reg.find(cpu_fn);
  if (it == reg.end()) {
    Dl_info info;   // the CPU kernel's symbol names the op (THFloatTensor_exp_loop)
    const char *name = dladdr((void *)cpu_fn, &info) && info.dli_sname ? info.dli_sname : "this elementwise op";
    THError_set(TH_ERR_NOTIMPL, "\"%s\" has no CUDA kernel yet", name);
    return -1;
  }
  return it->second(L, extra);
}

// ---- copy (with dtype conversion), fill, where ----
template <int N> struct THCRaw;   // same-dtype copies and where move bits, as the CPU loops
template <> struct THCRaw<1> { typedef uint8_t T; };
template <> struct THCRaw<2> { typedef uint16_t T; };
template <> struct THCRaw<4> { typedef uint32_t T; };
template <> struct THCRaw<8> { typedef uint64_t T; };

struct CopyOp {
  template <class C> __device__ __forceinline__ C operator()(const THOpArgs &, C x) const { return x; }
};

// dst is Dst; the source dtype is the operand's (the CPU loop gets it in extra)
template <class Dst> static int thc_copy(const ATCudaLoop *L, const void *) {
  if (L->nops == 2 && L->dtype[1] == L->dtype[0]) {
    typedef typename THCRaw<sizeof(Dst)>::T U;
    return thc_launch<false, U, CopyOp, U>(L, NULL);
  }
  switch (L->dtype[1]) {
#define THC_COPY_FROM(R, T, _) case TH_##R: return thc_launch<false, Dst, CopyOp, T>(L, NULL);
#define TH_Byte TH_UInt8
#define TH_Char TH_Int8
#define TH_Short TH_Int16
#define TH_Int TH_Int32
#define TH_Long TH_Int64
    THC_ALL(THC_COPY_FROM, _)
#undef TH_Byte
#undef TH_Char
#undef TH_Short
#undef TH_Int
#undef TH_Long
#undef THC_COPY_FROM
    default: break;
  }
  THError_set(TH_ERR_RUNTIME, "copy_: unknown source dtype %d", (int)L->dtype[1]);
  return -1;
}

template <class C> struct FillOp {
  __device__ __forceinline__ C operator()(const THOpArgs &args) const {
    typedef C compute_t;
    return TH_ARG(0);
  }
};

struct WhereOp {
  template <class U> __device__ __forceinline__ U operator()(const THOpArgs &, bool c, U a, U b) const { return c ? a : b; }
};
template <class T> static int thc_where(const ATCudaLoop *L, const void *) {
  typedef typename THCRaw<sizeof(T)>::T U;
  return thc_launch<false, U, WhereOp, bool, U, U>(L, NULL);
}

// ---- arithmetic; bool as the CPU loops: add is or, mul is and ----
struct AddOp {
  template <class C> __device__ __forceinline__ C operator()(const THOpArgs &args, C a, C b) const {
    typedef C compute_t;
    if constexpr (std::is_same<C, bool>::value) return a || (TH_ARG(0) && b);
    else return (C)(a + TH_ARG(0) * b);
  }
};
struct SubOp {
  template <class C> __device__ __forceinline__ C operator()(const THOpArgs &args, C a, C b) const {
    typedef C compute_t;
    if constexpr (std::is_same<C, bool>::value) return a && !(TH_ARG(0) && b);
    else return (C)(a - TH_ARG(0) * b);
  }
};
struct MulOp {
  template <class C> __device__ __forceinline__ C operator()(const THOpArgs &, C a, C b) const {
    if constexpr (std::is_same<C, bool>::value) return a && b;
    else return (C)(a * b);
  }
};
THC_BINARY_OP(DivOp, a / b)
THC_BINARY_PRED(EqOp, a == b)
THC_BINARY_PRED(NeOp, a != b)
THC_BINARY_PRED(LtOp, a < b)
THC_BINARY_PRED(LeOp, a <= b)
THC_BINARY_PRED(GtOp, a > b)
THC_BINARY_PRED(GeOp, a >= b)
THC_BINARY_PRED(LogicalAndOp, (a != 0) && (b != 0))
THC_BINARY_PRED(LogicalOrOp, (a != 0) || (b != 0))
THC_BINARY_PRED(LogicalXorOp, (a != 0) != (b != 0))

// Integer division by zero: the CPU loops flag an error; on the GPU, as in
// PyTorch's CUDA kernels, there is no error. The value is defined here as
// what the hardware's integer division gives: quotient -1 (all bits set),
// remainder a.
template <class C> __device__ __forceinline__ C thc_idiv(C a, C b, bool floor_) {
  if (b == 0) return (C)-1;
  if constexpr (std::is_signed<C>::value) {
    if (b == (C)-1) return (C)(0 - (uint64_t)a);   // INT_MIN / -1 wraps instead of trapping
    C q = a / b;
    if (floor_ && (a % b != 0) && ((a < 0) != (b < 0))) q -= 1;
    return q;
  } else {
    return (C)(a / b);
  }
}
template <class C> __device__ __forceinline__ C thc_imod(C a, C b, bool python) {
  if (b == 0) return a;
  if constexpr (std::is_signed<C>::value) {
    if (b == (C)-1) return 0;
    C m = a % b;
    if (python && m != 0 && ((m < 0) != (b < 0))) m += b;
    return m;
  } else {
    return (C)(a % b);
  }
}
TH_DEFINE_FLOORDIV(th_floordiv, float)
TH_DEFINE_FLOORDIV(th_floordiv, double)
TH_DEFINE_PYMOD(th_pymod, float)
TH_DEFINE_PYMOD(th_pymod, double)

#define THC_FI(FLOAT_EXPR, INT_EXPR) \
  if constexpr (std::is_floating_point<C>::value) return (C)(FLOAT_EXPR); else return (C)(INT_EXPR);
#define THC_FI_OP(NAME, FLOAT_EXPR, INT_EXPR)                                              \
  struct NAME {                                                                           \
    template <class C> __device__ __forceinline__ C operator()(const THOpArgs &, C a, C b) const { \
      THC_FI(FLOAT_EXPR, INT_EXPR)                                                        \
    }                                                                                     \
  };
THC_FI_OP(DivTruncOp, trunc(a / b), thc_idiv(a, b, false))
THC_FI_OP(DivFloorOp, th_floordiv(a, b), thc_idiv(a, b, true))
THC_FI_OP(RemainderOp, th_pymod(a, b), thc_imod(a, b, true))
THC_FI_OP(FmodOp, fmod(a, b), thc_imod(a, b, false))
THC_FI_OP(MaximumOp, (isnan(a) || isnan(b)) ? (C)NAN : (a > b ? a : b), a > b ? a : b)
THC_FI_OP(MinimumOp, (isnan(a) || isnan(b)) ? (C)NAN : (a < b ? a : b), a < b ? a : b)

#define THC_E_COPY(R, T, _) { THC_CPU(R, copy_loop), thc_copy<T> },
#define THC_E_FILL(R, T, _) { THC_CPU(R, fill_loop), thc_launch<true, T, FillOp<THCType<T>::C>> },
#define THC_E_WHERE(R, T, _) { THC_CPU(R, where_loop), thc_where<T> },

const THCKernel thc_kernels_core[] = {
  THC_ALL(THC_E_COPY, _)
  THC_ALL(THC_E_FILL, _)
  THC_ALL(THC_E_WHERE, _)
  THC_ALL(THC_E_BINARY, add_loop, AddOp)
  THC_ALL(THC_E_BINARY, sub_loop, SubOp)
  THC_ALL(THC_E_BINARY, mul_loop, MulOp)
  THC_FLOATING(THC_E_BINARY, div_loop, DivOp)
  THC_ALL(THC_E_BINARY, div_trunc_loop, DivTruncOp)
  THC_ALL(THC_E_BINARY, div_floor_loop, DivFloorOp)
  THC_ALL(THC_E_BINARY, remainder_loop, RemainderOp)
  THC_ALL(THC_E_BINARY, fmod_loop, FmodOp)
  THC_ALL(THC_E_BINARY, maximum_loop, MaximumOp)
  THC_ALL(THC_E_BINARY, minimum_loop, MinimumOp)
  THC_ALL(THC_E_PRED, eq_loop, EqOp)
  THC_ALL(THC_E_PRED, ne_loop, NeOp)
  THC_ALL(THC_E_PRED, lt_loop, LtOp)
  THC_ALL(THC_E_PRED, le_loop, LeOp)
  THC_ALL(THC_E_PRED, gt_loop, GtOp)
  THC_ALL(THC_E_PRED, ge_loop, GeOp)
  THC_ALL(THC_E_PRED, logical_and_loop, LogicalAndOp)
  THC_ALL(THC_E_PRED, logical_or_loop, LogicalOrOp)
  THC_ALL(THC_E_PRED, logical_xor_loop, LogicalXorOp)
};
const size_t thc_nkernels_core = sizeof thc_kernels_core / sizeof thc_kernels_core[0];
