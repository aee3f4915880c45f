/* Formula helpers for rnn.yaml */
#ifndef THP_FORMULAS_RNN_H
#define THP_FORMULAS_RNN_H
#include "THP.h"
PyObject *F_lstm_cell_grad(PyObject *grad_hy, PyObject *grad_cy, PyObject *grad_ws, PyObject *cx, PyObject *cy,
                           PyObject *ws);
PyObject *F_gru_cell_grad(PyObject *grad_hy, PyObject *grad_ws, PyObject *hx, PyObject *ws);
#endif
