/* AVX2+FMA float32 LSTM cell kernels (THVecRNN.c): the fast path of the
 * float32 THFloatTensor_lstm_cell_forward/backward (generic/THTensorRNN.c),
 * which a recurrent layer runs once per step. Same operands and layouts as
 * those; each returns 0, having written nothing, when this cpu lacks AVX2/FMA
 * or CTHTORCH_VEC_MATH=scalar is set, and the caller runs its libmvec loop. */
#ifndef TH_VEC_RNN_H
#define TH_VEC_RNN_H
#include "THGeneral.h"

/* bias (4H) is added to every row's gates as they are read, and tcy (B x H) receives tanh(cy), each when not
 * NULL (a recurrent layer's steps: the backward reads tanh(cy) instead of computing it again) */
TH_API int th_vec_lstm_cell_forward(int64_t B, int64_t H, const float *gates, const float *bias, const float *cx,
                                    float *hy, float *cy, float *ws, float *tcy);
/* the backward without a workspace gradient (the double-backward case keeps the generic loop); tcy is the
 * forward's tanh(cy), or NULL to compute it */
TH_API int th_vec_lstm_cell_backward(int64_t B, int64_t H, const float *ghy, const float *gcy, const float *cx,
                                     const float *cy, const float *tcy, const float *ws, float *dgates, float *dcx);

#endif
