/* What generated and hand-written bindings share: conversions between C
 * values and Python objects, named-tuple returns, formula-argument readers
 * (fa_*), and the helpers some declarations call as impl. Autograd's own
 * helpers are in autograd/Formulas.h; the generated op calls (F_*, VT_*) in
 * the generated Functions.h. */
#ifndef THP_BINDINGS_H
#define THP_BINDINGS_H

#include "THP.h"
#include "ArgParser.h"

/* ATTensorList (a borrowed array of tensors) is ATen's: src/ATen/ATen.h */

/* ---- conversions (Bindings.c) ---- */
PyObject *THP_scalar_to_py(ATScalar s);
PyObject *THP_intlist_to_py(const ATIntList *l);     /* None for NULL */
PyObject *THP_dtype_to_py(THDtype t);                /* None for TH_Undefined */
PyObject *THP_tensor_attr(PyObject *tensor, const char *attr);
/* The device key of the dispatch point: the device an op call runs on (-1
 * host, N cuda:N, TH_DEVICE_META), from its tensor arguments (Tensor,
 * Tensor[]) and, for factories, its device= argument (which wins). Mixed
 * devices raise PyTorch's error; a GPU call of an op without CUDA support
 * (cuda_ok false) raises NotImplementedError, except factories, whose host
 * result is moved. A meta call of an op without meta support (meta_ok false)
 * raises NotImplementedError, factories included: its body would read data. */
int THP_op_device(const char *name, int n, PyObject *const *tensors, PyObject *device_arg, bool cuda_ok,
                  bool factory, bool meta_ok, int *device);
/* NotImplementedError for op on the meta device; returns -1. */
int THP_meta_notimpl(const char *name);
/* A device argument's storage device number, self's device when None
 * (the argument was checked by the parser, so this cannot fail). */
int THP_device_or(PyObject *device_arg, const THTensor *self);
/* torch.autocast('cuda') state of this thread (set by cthtorch.amp) */
extern _Thread_local int THP_autocast_cuda;
extern _Thread_local THDtype THP_autocast_cuda_dtype;
/* torch.autocast('cpu') state of this thread */
extern _Thread_local int THP_autocast_cpu;
extern _Thread_local THDtype THP_autocast_cpu_dtype;
/* Replaces the n tensor arguments in args (NULL/None kept) by new references
 * cast for autocast, those on the host (on_cpu) or else on a GPU: policy 1
 * floating ones other than float64 to `lower`, policy 2 float16/bfloat16 ones
 * to float32. The caller DECREFs them. */
int THP_autocast_args(int policy, int n, PyObject **args, bool on_cpu, THDtype lower);
PyObject *THP_set_autocast_state(PyObject *args, const char *fmt, int *enabled, THDtype *dtype);
/* Steals r (NULL passes through): the same tensor on device, requires_grad kept. */
PyObject *THP_move_result(PyObject *r, int device);
/* A factory's device= argument: -2 when None (the result stays where it is made), -1 cpu, N cuda:N. */
int THP_factory_device(PyObject *arg, int *dev);
extern _Thread_local bool THP_default_device_meta;   /* factories without device= make meta tensors (per thread) */
int THP_tensorlist_from_py(PyObject *seq, ATTensorList *out);   /* borrows the tensors; PyMem_Free(out->v) */
int THP_opttensorlist_from_py(PyObject *seq, ATTensorList *out);   /* the same, with None entries as NULL */
PyObject *THP_wrap_tensorlist(ATTensorList *l, PyObject *view_base);   /* steals the tensors, frees v */
PyObject *THP_make_return(const char *name, int n, PyObject **outs);   /* steals outs */
/* out=(a, b, ...) of an op returning n tensors: -1 with torch's TypeError
 * unless out holds n of them (the parser checked they are tensors) */
int THP_check_out_tuple(PyObject *out, int n);
/* writes the op's results r[0..n) (consumed; NULL ones skipped) into the
 * tensors of out (at_write_out) and returns them as the op's (named) tuple */
PyObject *THP_write_outs(const char *name, int n, THTensor **r, PyObject *out);
PyObject *THP_set_return_types(PyObject *m, PyObject *ns);
struct THGenerator *ap_generator(APResult *r, int i);
/* a Python complex as a wrapped 0-d complex128 tensor (new ref; NULL + Python error) */
THTensor *THP_complex_number(PyObject *o);
PyObject *fa_tensor(PyObject *o);              /* tensor, or a number as a wrapped 0-d tensor (new ref) */
int fa_intlist(PyObject *o, ATIntList *out, int size);
THDtype fa_dtype(PyObject *o);
struct THGenerator *fa_generator(PyObject *o);

/* ---- ATen-level helpers some declarations call as impl ---- */
ATMemoryFormat THP_memory_format(PyObject *memory_format, ATMemoryFormat absent);   /* TensorMethods.c */
THTensor *THP_copy_(const THTensor *self, const THTensor *src);         /* TensorMethods.c */
THTensor *THP_fill_(const THTensor *self, ATScalar v);                  /* TensorMethods.c */
THTensor *THP_fill_tensor_(const THTensor *self, const THTensor *v);    /* TensorMethods.c */
THTensor *THP_full_like(const THTensor *self, ATScalar v, THDtype dtype);   /* Factories.c */
/* a fresh tensor laid out in a memory_format argument (None: as it is; preserve: as it is for a *_like) */
int THP_lay_out(THTensor *t, PyObject *memory_format, bool like);   /* Factories.c */

#endif
