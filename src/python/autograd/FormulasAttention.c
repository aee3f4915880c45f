/* Gradients of the fused scaled dot-product attention. */
#include "autograd/Formulas.h"
#include "autograd/FormulasAttention.h"
#include "Functions.h"

/* The fused backward kernel records nothing, so under create_graph (grad mode
 * on while the backward runs) the same gradients come from a composite of
 * recorded ops (cthtorch/nn/_functional/attention.py), which autograd can
 * differentiate again. A plain backward takes the kernel. */
PyObject *F_sdpa_grads(PyObject *grad, PyObject *query, PyObject *key, PyObject *value, PyObject *attn_mask,
                       PyObject *out, PyObject *lse, PyObject *dropout_p, PyObject *is_causal, PyObject *scale,
                       PyObject *seed, PyObject *output_mask) {
  if (grad == Py_None) return PyTuple_Pack(4, Py_None, Py_None, Py_None, Py_None);
  if (THP_grad_enabled()) {
    PyObject *mod = PyImport_ImportModule("cthtorch.nn._functional.attention");
    if (!mod) return NULL;
    PyObject *r = PyObject_CallMethod(mod, "_sdpa_backward_composite", "OOOOOOOOO", grad, query, key, value,
                                      attn_mask, dropout_p, is_causal, scale, seed);
    Py_DECREF(mod);
    return r;
  }
  return F__scaled_dot_product_fused_attention_backward(grad, query, key, value, attn_mask, out, lse, dropout_p,
                                                        is_causal, scale, seed, output_mask);
}
