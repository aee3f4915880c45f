/* Fused recurrent-cell kernels (generic/THTensorRNN.c), floating dtypes.
 * All operands are contiguous row-major (B, k*H) blocks; only the workspace
 * gradient may be NULL (zero). Layouts of the gates and the workspaces are in the generic file. */
#ifndef TH_KERNELS_RNN_H
#define TH_KERNELS_RNN_H
#include "THGeneral.h"

#define TH_DECLARE_RNN(Real)                                                                              \
  void TH##Real##Tensor_lstm_cell_forward(int64_t B, int64_t H, const void *gates, const void *cx,        \
                                          void *hy, void *cy, void *ws);                                  \
  void TH##Real##Tensor_lstm_cell_backward(int64_t B, int64_t H, const void *ghy, const void *gcy,        \
                                           const void *gws, const void *cx, const void *cy,               \
                                           const void *ws, void *dgates, void *dcx);                      \
  void TH##Real##Tensor_gru_cell_forward(int64_t B, int64_t H, const void *ig, const void *hg,            \
                                         const void *hx, void *hy, void *ws);                             \
  void TH##Real##Tensor_gru_cell_backward(int64_t B, int64_t H, const void *ghy, const void *gws,         \
                                          const void *hx, const void *ws, void *dig, void *dhg, void *dhx);
TH_DECLARE_RNN(Half)
TH_DECLARE_RNN(BFloat16)
TH_DECLARE_RNN(Float)
TH_DECLARE_RNN(Double)

#endif
