/* Autograd's helpers, for autograd code only (the engine, nodes, custom
 * Functions, and the backward formulas in the generated Functions.c):
 * engine support, and the hand-written formula functions derivative entries
 * call (F_*). Every F_ takes and returns PyObject* (new reference, NULL on
 * error) and records autograd itself, so formulas are differentiable again
 * (create_graph=True). Bindings' conversions are in Bindings.h. */
#ifndef THP_FORMULAS_H
#define THP_FORMULAS_H

#include "Bindings.h"

/* ---- Tensor[] inputs of differentiable ops ---- */
bool THP_seq_requires_grad(PyObject *seq);   /* grad mode on and any item of a Tensor[] requires grad */
int THP_set_edges_from_seq(THPNode *n, PyObject *seq);   /* edge i <- item i of a Tensor[]; -1 with an error set */

/* ---- engine support ---- */
PyObject *THP_ones_like(PyObject *t);
PyObject *THP_zeros_for(THPNode *n, int nr);          /* zeros shaped like forward output nr */
/* Reduces/casts a gradient to the receiving input's metadata (new ref). */
PyObject *THP_validate_grad(PyObject *grad, const THPInputMeta *m, THPNode *from);
int THP_run_tensor_hooks(PyObject *var, PyObject **g);  /* *g: borrowed in, new ref out */
/* torch's checks of a hook's result: one gradient (a Tensor or None, of the value's
 * type and size), or a tuple of them, one per value */
int THP_check_hook_result(PyObject *hook, PyObject *value, PyObject *result);
int THP_check_hook_results(PyObject *hook, PyObject *values, PyObject *result);
int THP_accumulate_into_grad(THPTensor *v, PyObject *g);
PyObject *THP_make_removable_handle(PyObject *list, PyObject *item);
PyObject *THP_current_traceback(void);
void THP_anomaly_note(THPNode *n);
int THP_anomaly_check(THPNode *n, PyObject *grads);
extern PyTypeObject THPAccumulateGradType;

/* ---- hand-written formula helpers (the rest come from declarations) ---- */
PyObject *F_sum_to(PyObject *grad, PyObject *sizes);   /* sum broadcast dims away to `sizes` */
PyObject *F_expand_to(PyObject *grad, PyObject *sizes);
PyObject *F_to_dtype_of(PyObject *grad, PyObject *dtype);
/* zeros of the given sizes in like's dtype, on like's device */
PyObject *THP_zeros_on(int ndim, const int64_t *sizes, const THTensor *like);
PyObject *F_zeros_sized(PyObject *sizes, PyObject *like);
PyObject *F_maybe_multiply(PyObject *grad, PyObject *scalar);  /* skips the op when scalar == 1 */
PyObject *F_unsqueeze_dims(PyObject *grad, PyObject *dims, PyObject *ndim); /* undo keepdim=False */
PyObject *F_reduce_grad_expand(PyObject *grad, PyObject *sizes, PyObject *dims, PyObject *keepdim);
PyObject *F_numel_of(PyObject *sizes, PyObject *dims);   /* product of sizes over dims (all if None) */
PyObject *F_not_implemented(PyObject *name);
PyObject *F_permute_back(PyObject *grad, PyObject *dims);
PyObject *F_pow_grad_self(PyObject *grad, PyObject *self, PyObject *e);
/* lerp's d/dself, grad * (1 - weight): a number weight's 1 - w in double, as torch's Scalar overload */
PyObject *F_lerp_grad_self(PyObject *grad, PyObject *weight);
PyObject *F_pow_grad_exponent(PyObject *grad, PyObject *self, PyObject *e, PyObject *result);
PyObject *F_minmax_grad(PyObject *grad, PyObject *self, PyObject *other, PyObject *is_max);
PyObject *F_copysign_grad(PyObject *grad, PyObject *self, PyObject *result);
PyObject *F_div_rounding_grad(PyObject *grad, PyObject *mode, PyObject *other);
PyObject *F_div_rounding_grad_other(PyObject *grad, PyObject *mode, PyObject *self, PyObject *other);

#endif
