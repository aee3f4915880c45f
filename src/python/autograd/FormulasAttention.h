/* Formula helpers for attention.yaml */
#ifndef THP_FORMULAS_ATTENTION_H
#define THP_FORMULAS_ATTENTION_H
#include "THP.h"
PyObject *F_sdpa_grads(PyObject *grad, PyObject *query, PyObject *key, PyObject *value, PyObject *attn_mask,
                       PyObject *out, PyObject *lse, PyObject *dropout_p, PyObject *is_causal, PyObject *scale,
                       PyObject *seed, PyObject *output_mask);
#endif
