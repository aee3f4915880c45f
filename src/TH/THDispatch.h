/* Per-dtype tables of generic kernels, so ATen can pick one by dtype:
 *   static const THLoopFn exp_loops[TH_NDTYPES] = TH_FLOATING_TABLE(exp_loop);
 * A NULL slot means "not implemented for this dtype". */
#ifndef TH_DISPATCH_H
#define TH_DISPATCH_H

#include "THGeneral.h"

/* The inner loop every elementwise kernel implements: n elements, data[0] is
 * the output, data[1..] the inputs, strides in bytes; extra is op state. */
typedef void (*THLoopFn)(char **data, const int64_t *strides, int64_t n, const void *extra);

#define TH_FLOATING_ENTRIES(N) [TH_Half] = THHalfTensor_##N, [TH_BFloat16] = THBFloat16Tensor_##N, \
  [TH_Float] = THFloatTensor_##N, [TH_Double] = THDoubleTensor_##N
#define TH_INTEGRAL_ENTRIES(N) [TH_UInt8] = THByteTensor_##N, [TH_Int8] = THCharTensor_##N, \
  [TH_Int16] = THShortTensor_##N, [TH_Int32] = THIntTensor_##N, [TH_Int64] = THLongTensor_##N
#define TH_BOOL_ENTRIES(N) [TH_Bool] = THBoolTensor_##N
#define TH_COMPLEX_ENTRIES(N) [TH_ComplexFloat] = THComplexFloatTensor_##N, [TH_ComplexDouble] = THComplexDoubleTensor_##N

#define TH_FLOATING_TABLE(N) { TH_FLOATING_ENTRIES(N) }
#define TH_NUMERIC_TABLE(N) { TH_INTEGRAL_ENTRIES(N), TH_FLOATING_ENTRIES(N) }
#define TH_ALL_TABLE(N) { TH_BOOL_ENTRIES(N), TH_INTEGRAL_ENTRIES(N), TH_FLOATING_ENTRIES(N) }
#define TH_INTEGRAL_BOOL_TABLE(N) { TH_BOOL_ENTRIES(N), TH_INTEGRAL_ENTRIES(N) }

/* Declarations of the instantiated kernels. */
#define TH_DECLARE_FLOATING(N) \
  void THHalfTensor_##N(char **, const int64_t *, int64_t, const void *); \
  void THBFloat16Tensor_##N(char **, const int64_t *, int64_t, const void *); \
  void THFloatTensor_##N(char **, const int64_t *, int64_t, const void *); \
  void THDoubleTensor_##N(char **, const int64_t *, int64_t, const void *);
#define TH_DECLARE_INTEGRAL(N) \
  void THByteTensor_##N(char **, const int64_t *, int64_t, const void *); \
  void THCharTensor_##N(char **, const int64_t *, int64_t, const void *); \
  void THShortTensor_##N(char **, const int64_t *, int64_t, const void *); \
  void THIntTensor_##N(char **, const int64_t *, int64_t, const void *); \
  void THLongTensor_##N(char **, const int64_t *, int64_t, const void *);
#define TH_DECLARE_BOOL(N) void THBoolTensor_##N(char **, const int64_t *, int64_t, const void *);
#define TH_DECLARE_COMPLEX(N) \
  void THComplexFloatTensor_##N(char **, const int64_t *, int64_t, const void *); \
  void THComplexDoubleTensor_##N(char **, const int64_t *, int64_t, const void *);
#define TH_DECLARE_ALL(N) TH_DECLARE_BOOL(N) TH_DECLARE_INTEGRAL(N) TH_DECLARE_FLOATING(N)
#define TH_DECLARE_NUMERIC(N) TH_DECLARE_INTEGRAL(N) TH_DECLARE_FLOATING(N)

#endif
