/* Fused recurrent cells: the gate math of one LSTM or GRU time step, forward
 * and backward, over the pre-activation gates the GEMMs produced. The kernels
 * (and the layout of gates and workspaces) are in TH/generic/THTensorRNN.c. */
#ifndef AT_RNN_H
#define AT_RNN_H

#include "ATen.h"

/* outs: hy, cy, workspace (i, f, g, o activated) */
AT_API int at_fused_lstm_cell(THTensor **outs, const THTensor *gates, const THTensor *cx);
/* outs: grad_gates, grad_cx; NULL gradients count as zero */
AT_API int at_fused_lstm_cell_backward(THTensor **outs, const THTensor *grad_hy, const THTensor *grad_cy,
                                       const THTensor *grad_workspace, const THTensor *cx, const THTensor *cy,
                                       const THTensor *workspace);
/* outs: hy, workspace (r, z, n, hidden_gates' n part) */
AT_API int at_fused_gru_cell(THTensor **outs, const THTensor *input_gates, const THTensor *hidden_gates,
                             const THTensor *hx);
/* outs: grad_input_gates, grad_hidden_gates, grad_hx */
AT_API int at_fused_gru_cell_backward(THTensor **outs, const THTensor *grad_hy, const THTensor *grad_workspace,
                                      const THTensor *hx, const THTensor *workspace);
/* A float32 LSTM layer's recurrence (one direction) in one call. Forward: gates (T, B, 4H), the input
 * projection, contiguous; each step adds h @ W_hh^T (packed: _gemm_pack(W_hh^T)) and bias (4H, both
 * biases summed; NULL: none) and runs the fused cell. gates is overwritten with each step's workspace.
 * outs: out (T, B, H), the cell states cs (T, B, H) and their tanh (T, B, H). */
AT_API int at_lstm_layer_forward(THTensor **outs, THTensor *gates, const THTensor *h0, const THTensor *c0,
                                 const THTensor *packed, const THTensor *bias, bool reverse);
/* Backward of the same from its saved workspace (the forward's gates), cell states and their tanh; packed is
 * _gemm_pack(W_hh). dh, dc (the last state's gradients) may be NULL. packed_ih (_gemm_pack(W_ih), or
 * NULL): outs[0] is then the input's gradient dx (T, B, input_size), each step's rows formed from its gates'
 * gradient in cache; without it outs[0] is the pre-activation gates' gradient G (T, B, 4H). outs[1..]: dh0
 * (zeros unless need_h0), dc0, G^T as (4H, T * B) (the weight gradients G^T X and G^T H read it in place),
 * and the bias gradient (4H), G's column sums. */
AT_API int at_lstm_layer_backward(THTensor **outs, const THTensor *dout, const THTensor *dh, const THTensor *dc,
                                  const THTensor *ws, const THTensor *cs, const THTensor *tcs, const THTensor *c0,
                                  const THTensor *packed, const THTensor *packed_ih, int64_t input_size, bool reverse,
                                  bool need_h0);

#endif
