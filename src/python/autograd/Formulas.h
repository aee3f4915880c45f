/* Helpers for generated code: value conversions, and the formula
 * functions derivative entries call (F_*). Every F_ takes and returns
 * PyObject* (new reference, NULL on error) and records autograd itself,
 * so formulas are differentiable again (create_graph=True). */
#ifndef THP_FORMULAS_H
#define THP_FORMULAS_H

#include "THP.h"
#include "ArgParser.h"

/* ---- conversions used by generated code ---- */
PyObject *THP_scalar_to_py(ATScalar s);
PyObject *THP_intlist_to_py(const ATIntList *l);     /* None for NULL */
PyObject *THP_dtype_to_py(THDtype t);                /* None for TH_Undefined */
PyObject *THP_tensor_attr(PyObject *tensor, const char *attr);   /* "sizes", "dtype", "ndim", "numel" */
int THP_tensorlist_from_py(PyObject *seq, ATTensorList *out);   /* borrows the tensors; PyMem_Free(out->v) */
bool THP_seq_requires_grad(PyObject *seq);   /* grad mode on and any item of a Tensor[] requires grad */
void THP_set_edges_from_seq(THPNode *n, PyObject *seq);   /* edge i <- item i of a Tensor[] */
PyObject *THP_wrap_tensorlist(ATTensorList *l, PyObject *view_base);   /* steals the tensors, frees v */
PyObject *THP_make_return(const char *name, int n, PyObject **outs);   /* steals outs */
struct THGenerator *ap_generator(APResult *r, int i);
PyObject *fa_tensor(PyObject *o);              /* tensor, or a number as a wrapped 0-d tensor (new ref) */
int fa_intlist(PyObject *o, ATIntList *out, int size);
THDtype fa_dtype(PyObject *o);
struct THGenerator *fa_generator(PyObject *o);

/* ---- engine support ---- */
PyObject *THP_ones_like(PyObject *t);
PyObject *THP_zeros_for(THPNode *n, int nr);          /* zeros shaped like forward output nr */
/* Reduces/casts a gradient to the receiving input's metadata (new ref). */
PyObject *THP_validate_grad(PyObject *grad, const THPInputMeta *m, THPNode *from);
int THP_run_tensor_hooks(PyObject *var, PyObject **g);  /* *g: borrowed in, new ref out */
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
PyObject *F_zeros_sized(PyObject *sizes, PyObject *like);
PyObject *F_maybe_multiply(PyObject *grad, PyObject *scalar);  /* skips the op when scalar == 1 */
PyObject *F_unsqueeze_dims(PyObject *grad, PyObject *dims, PyObject *ndim); /* undo keepdim=False */
PyObject *F_reduce_grad_expand(PyObject *grad, PyObject *sizes, PyObject *dims, PyObject *keepdim);
PyObject *F_numel_of(PyObject *sizes, PyObject *dims);   /* product of sizes over dims (all if None) */
PyObject *F_not_implemented(PyObject *name);
PyObject *F_permute_back(PyObject *grad, PyObject *dims);
PyObject *F_pow_grad_self(PyObject *grad, PyObject *self, PyObject *e);
PyObject *F_pow_grad_exponent(PyObject *grad, PyObject *self, PyObject *e, PyObject *result);
PyObject *F_minmax_grad(PyObject *grad, PyObject *self, PyObject *other, PyObject *is_max);
PyObject *F_copysign_grad(PyObject *grad, PyObject *self, PyObject *result);
PyObject *F_div_rounding_grad(PyObject *grad, PyObject *mode, PyObject *other);
PyObject *F_div_rounding_grad_other(PyObject *grad, PyObject *mode, PyObject *self, PyObject *other);
PyObject *THP_set_return_types(PyObject *m, PyObject *ns);
bool THP_preserve_format(PyObject *memory_format);
/* ATen-level helpers some declarations call as impl */
THTensor *THP_copy_(const THTensor *self, const THTensor *src);
THTensor *THP_fill_(const THTensor *self, ATScalar v);
THTensor *THP_fill_tensor_(const THTensor *self, const THTensor *v);
THTensor *THP_full_like(const THTensor *self, ATScalar v, THDtype dtype);

#endif
