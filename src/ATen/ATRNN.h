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

#endif
