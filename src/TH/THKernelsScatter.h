/* Row kernels of gather/scatter/index_add (generic/THTensorScatter.c). */
#ifndef TH_KERNELS_SCATTER_H
#define TH_KERNELS_SCATTER_H
#include "THGeneral.h"

typedef enum {
  TH_SCATTER_GATHER, TH_SCATTER_SET, TH_SCATTER_ADD, TH_SCATTER_ADD_ALPHA,
  TH_SCATTER_MUL, TH_SCATTER_MAX, TH_SCATTER_MIN
} THScatterOp;

/* nrows rows of n elements: self/other/idx at the first row's start (self
 * with the dim coordinate 0), the next row *_row elements further on. */
typedef struct {
  THScatterOp op;
  char *self, *other;
  const int64_t *idx;
  int64_t s_in, s_dim, i_in, o_in;   /* strides in elements */
  int64_t nrows, s_row, i_row, o_row;
  int64_t bound;                     /* an index outside [0, bound) stops the kernel */
  double alpha_d;
  int64_t alpha_i;
} THScatterRow;

/* false (and *bad = the index) at the first out-of-bounds index */
typedef bool (*THScatterRowFn)(const THScatterRow *r, int64_t n, int64_t *bad);

#define TH_DECLARE_SCATTER(R) bool TH##R##Tensor_scatter_row(const THScatterRow *r, int64_t n, int64_t *bad);
TH_DECLARE_SCATTER(Bool) TH_DECLARE_SCATTER(Byte) TH_DECLARE_SCATTER(Char) TH_DECLARE_SCATTER(Short)
TH_DECLARE_SCATTER(Int) TH_DECLARE_SCATTER(Long) TH_DECLARE_SCATTER(Half) TH_DECLARE_SCATTER(BFloat16)
TH_DECLARE_SCATTER(Float) TH_DECLARE_SCATTER(Double)
#undef TH_DECLARE_SCATTER
#endif
