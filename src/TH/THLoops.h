/* Loop shapes shared by the generic kernels. Each macro expands to one
 * THLoopFn for the current dtype (see THGenerateTypes.h). The contiguous
 * and scalar-broadcast branches are plain indexed loops the compiler
 * vectorizes; the last branch walks arbitrary byte strides. */
#ifndef TH_LOOPS_H
#define TH_LOOPS_H

#include "THDispatch.h"
#include "THScalarOps.h"   /* THOpArgs, the op math shared with THC */
#include "THVecMath.h"     /* the AVX2 transcendentals of TH_VEC_UNARY_LOOP */
#include <stdatomic.h>

/* Set by a kernel that meets an error it cannot return (integer division
 * by zero), from whichever OpenMP worker runs it: an atomic, so concurrent
 * stores are no data race. A relaxed store is enough, because ATen reads and
 * clears it (at_check_kernel_error) after the parallel region's barrier. */
extern _Atomic int th_kernel_error;
#define TH_KERR_ZERODIV 1
static inline void th_kernel_fail(int code) {
  atomic_store_explicit(&th_kernel_error, code, memory_order_relaxed);
}

#endif

/* These depend on the per-dtype macros, so they are (re)defined on every
 * inclusion by a generic file. */
#undef TH_ARG
#ifdef TH_REAL_IS_FLOATING
#define TH_ARG(k) ((compute_t)((const THOpArgs *)extra)->d[k])
#else
#define TH_ARG(k) ((compute_t)((const THOpArgs *)extra)->i[k])
#endif

/* The contiguous branches of the loops below, TH_CONTIG((chunked), (plain)): float16 takes
 * the chunked form (its inputs converted TH_CHUNK at a time into float buffers by F16C, EXPR
 * over those, the result converted back), every other dtype the plain indexed loop. */
#undef TH_CONTIG
#ifdef TH_REAL_IS_HALF
#define TH_CONTIG(CHUNKED, PLAIN) TH_UNPAREN CHUNKED
#else
#define TH_CONTIG(CHUNKED, PLAIN) TH_UNPAREN PLAIN
#endif

/* THVecMath.c's contiguous vector kernel for this dtype (none for double and the rest) */
#undef TH_VEC_UNARY
#define TH_VEC_UNARY(OP, O, A, N)                                               \
  _Generic((scalar_t *)0, float *: th_vec_unary_float, THHalf *: th_vec_unary_half, \
           THBFloat16 *: th_vec_unary_bf16, default: th_vec_unary_none)(OP, (void *)(O), (const void *)(A), N)

#ifndef TH_LOOP_MACROS
#define TH_LOOP_MACROS
/* gcc cannot see that TH_CHUNKED's LOAD wrote the m elements its loop reads, and warns at
 * the lines of these macros, so the warning is off for this block */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#define TH_S ((int64_t)sizeof(scalar_t))
#define TH_UNPAREN(...) __VA_ARGS__
/* float16's chunked contiguous loop (see TH_CONTIG): LOAD fills the float buffers ca_/cb_ with
 * elements i0 .. i0+m, ELEM declares EXPR's operands from them. A float16 result goes back by
 * th_float2half_n; a bool one (comparisons) is stored directly. */
#define TH_CHUNK 256
#define TH_HALF_LOAD(P, BUF) th_half2float_n((const THHalf *)(const void *)(P) + i0, BUF, m);
#define TH_CHUNKED(OTYPE, OFROM, LOAD, ELEM, EXPR, SIMD)                        \
  for (int64_t i0 = 0; i0 < n; i0 += TH_CHUNK) {                                \
    const int64_t m = n - i0 < TH_CHUNK ? n - i0 : TH_CHUNK;                    \
    float ca_[TH_CHUNK], cb_[TH_CHUNK], co_[TH_CHUNK];                          \
    (void)ca_; (void)cb_;                                                       \
    LOAD                                                                        \
    if (sizeof(OTYPE) == sizeof(THHalf)) {                                      \
      SIMD                                                                      \
      for (int64_t i = 0; i < m; i++) { ELEM co_[i] = (float)(EXPR); }          \
      th_float2half_n(co_, (THHalf *)(void *)o + i0, m);                        \
    } else {                                                                    \
      for (int64_t i = 0; i < m; i++) { ELEM o[i0 + i] = OFROM(EXPR); }         \
    }                                                                           \
  }

/* The loops read op arguments (TH_ARG) from a local copy: read through the
 * caller's pointer, GCC reloaded them after every store to the output (they
 * might alias) and would not vectorize, e.g. leaky_relu's slope. */
#define TH_LOCAL_ARGS                                                           \
  const THOpArgs th_args_ = extra_in ? *(const THOpArgs *)extra_in : (THOpArgs){ { 0 }, { 0 } }; \
  const void *extra = &th_args_;                                                \
  (void)extra;
#define TH_AT(p, s, i) (*(scalar_t *)((p) + (s) * (i)))

/* out = EXPR(x) with x a compute_t */
/* SIMD: empty, or _Pragma("omp simd") for float kernels whose libm calls
 * have vector variants (THMath.h); only the contiguous branch gets it */
#define TH_UNARY_LOOP_P(NAME, EXPR, SIMD)                                       \
  void THTensor_(NAME)(char **data, const int64_t *st, int64_t n, const void *extra_in) { \
    TH_LOCAL_ARGS                                                               \
    char *po = data[0], *pa = data[1];                                          \
    if (st[0] == TH_S && st[1] == TH_S) {                                       \
      scalar_t *o = (scalar_t *)po; const scalar_t *a = (const scalar_t *)pa;   \
      TH_CONTIG((TH_CHUNKED(scalar_t, FROMC, th_half2float_n((const THHalf *)(const void *)a + i0, ca_, m);, \
                            compute_t x = ca_[i];, EXPR, SIMD)),               \
                (SIMD                                                           \
                 for (int64_t i = 0; i < n; i++) { compute_t x = TOC(a[i]); o[i] = FROMC(EXPR); })) \
    } else {                                                                    \
      for (int64_t i = 0; i < n; i++) {                                         \
        compute_t x = TOC(TH_AT(pa, st[1], i)); TH_AT(po, st[0], i) = FROMC(EXPR); \
      }                                                                         \
    }                                                                           \
  }

#define TH_UNARY_LOOP(NAME, EXPR) TH_UNARY_LOOP_P(NAME, EXPR, )
/* TH_UNARY_LOOP_P whose contiguous float32/float16/bfloat16 case goes to THVecMath.c's kernel
 * VOP when the cpu has AVX2/FMA and COND (the op's arguments allow it, e.g. gelu's exact form) */
#define TH_VEC_UNARY_LOOP(NAME, EXPR, SIMD, VOP, COND)                          \
  static TH_UNARY_LOOP_P(NAME##_scalar, EXPR, SIMD)                             \
  void THTensor_(NAME)(char **data, const int64_t *st, int64_t n, const void *extra_in) { \
    TH_LOCAL_ARGS                                                               \
    if (st[0] == TH_S && st[1] == TH_S && (COND) && TH_VEC_UNARY(VOP, data[0], data[1], n)) return; \
    THTensor_(NAME##_scalar)(data, st, n, extra_in);                            \
  }
#define TH_SIMD_UNARY_LOOP(NAME, EXPR) TH_UNARY_LOOP_P(NAME, EXPR, _Pragma("omp simd"))

/* out = EXPR(a, b); OTYPE/OFROM give the output type (bool for comparisons) */
#define TH_BINARY_LOOP_TP(NAME, OTYPE, OFROM, EXPR, SIMD)                       \
  void THTensor_(NAME)(char **data, const int64_t *st, int64_t n, const void *extra_in) { \
    TH_LOCAL_ARGS                                                               \
    char *po = data[0], *pa = data[1], *pb = data[2];                           \
    const int64_t so = st[0], sa = st[1], sb = st[2], S = TH_S;                 \
    OTYPE *o = (OTYPE *)po;                                                     \
    if (so == (int64_t)sizeof(OTYPE) && sa == S && sb == S) {                   \
      const scalar_t *A = (const scalar_t *)pa, *B = (const scalar_t *)pb;      \
      TH_CONTIG((TH_CHUNKED(OTYPE, OFROM, TH_HALF_LOAD(A, ca_) TH_HALF_LOAD(B, cb_), \
                            compute_t a = ca_[i]; compute_t b = cb_[i];, EXPR, SIMD)), \
                (SIMD                                                           \
                 for (int64_t i = 0; i < n; i++) { compute_t a = TOC(A[i]), b = TOC(B[i]); o[i] = OFROM(EXPR); })) \
    } else if (so == (int64_t)sizeof(OTYPE) && sa == S && sb == 0) {            \
      const scalar_t *A = (const scalar_t *)pa; const compute_t b = TOC(*(const scalar_t *)pb); \
      TH_CONTIG((TH_CHUNKED(OTYPE, OFROM, TH_HALF_LOAD(A, ca_), compute_t a = ca_[i];, EXPR, SIMD)), \
                (for (int64_t i = 0; i < n; i++) { compute_t a = TOC(A[i]); o[i] = OFROM(EXPR); })) \
    } else if (so == (int64_t)sizeof(OTYPE) && sa == 0 && sb == S) {            \
      const scalar_t *B = (const scalar_t *)pb; const compute_t a = TOC(*(const scalar_t *)pa); \
      TH_CONTIG((TH_CHUNKED(OTYPE, OFROM, TH_HALF_LOAD(B, cb_), compute_t b = cb_[i];, EXPR, SIMD)), \
                (for (int64_t i = 0; i < n; i++) { compute_t b = TOC(B[i]); o[i] = OFROM(EXPR); })) \
    } else {                                                                    \
      for (int64_t i = 0; i < n; i++) {                                         \
        compute_t a = TOC(TH_AT(pa, sa, i)), b = TOC(TH_AT(pb, sb, i));         \
        *(OTYPE *)(po + so * i) = OFROM(EXPR);                                  \
      }                                                                         \
    }                                                                           \
  }
#define TH_BINARY_LOOP_T(NAME, OTYPE, OFROM, EXPR) TH_BINARY_LOOP_TP(NAME, OTYPE, OFROM, EXPR, )
#define TH_BINARY_LOOP(NAME, EXPR) TH_BINARY_LOOP_T(NAME, scalar_t, FROMC, EXPR)
#define TH_SIMD_BINARY_LOOP(NAME, EXPR) TH_BINARY_LOOP_TP(NAME, scalar_t, FROMC, EXPR, _Pragma("omp simd"))
#define TH_TO_BOOL(v) ((bool)(v))
#define TH_PREDICATE_LOOP(NAME, EXPR) TH_BINARY_LOOP_T(NAME, bool, TH_TO_BOOL, EXPR)

/* out = EXPR(a, b, c). The contiguous branches (c contiguous or one value: lerp's Scalar weight) are
 * indexed loops the compiler vectorizes; through the byte-stride branch alone lerp and addcmul took
 * 2.3-3.5x torch's time */
#define TH_TERNARY_LOOP(NAME, EXPR)                                             \
  void THTensor_(NAME)(char **data, const int64_t *st, int64_t n, const void *extra_in) { \
    TH_LOCAL_ARGS                                                               \
    if (st[0] == TH_S && st[1] == TH_S && st[2] == TH_S && (st[3] == TH_S || st[3] == 0)) { \
      scalar_t *o = (scalar_t *)data[0];                                        \
      const scalar_t *A = (const scalar_t *)data[1], *B = (const scalar_t *)data[2], *C = (const scalar_t *)data[3]; \
      if (st[3] == 0) {                                                         \
        const compute_t c = TOC(*C);                                            \
        for (int64_t i = 0; i < n; i++) { compute_t a = TOC(A[i]), b = TOC(B[i]); o[i] = FROMC(EXPR); } \
      } else {                                                                  \
        for (int64_t i = 0; i < n; i++) {                                       \
          compute_t a = TOC(A[i]), b = TOC(B[i]), c = TOC(C[i]); o[i] = FROMC(EXPR); \
        }                                                                       \
      }                                                                         \
      return;                                                                   \
    }                                                                           \
    for (int64_t i = 0; i < n; i++) {                                           \
      compute_t a = TOC(TH_AT(data[1], st[1], i)), b = TOC(TH_AT(data[2], st[2], i)), \
                c = TOC(TH_AT(data[3], st[3], i));                              \
      TH_AT(data[0], st[0], i) = FROMC(EXPR);                                   \
    }                                                                           \
  }

/* bool out = EXPR(x) */
#define TH_UNARY_PREDICATE_LOOP(NAME, EXPR)                                     \
  void THTensor_(NAME)(char **data, const int64_t *st, int64_t n, const void *extra_in) { \
    TH_LOCAL_ARGS                                                               \
    for (int64_t i = 0; i < n; i++) {                                           \
      compute_t x = TOC(TH_AT(data[1], st[1], i));                              \
      *(bool *)(data[0] + st[0] * i) = (bool)(EXPR);                            \
    }                                                                           \
  }
#pragma GCC diagnostic pop
#endif
