/* The THP layer: everything that talks to CPython. Shared declarations. */
#ifndef THP_H
#define THP_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include "../ATen/ATen.h"

/* ---- version counters: shared by a tensor and its views ---- */
typedef struct { int64_t refcount; int64_t version; } THPVersion;
THPVersion *THPVersion_new(void);
static inline THPVersion *THPVersion_retain(THPVersion *v) { v->refcount++; return v; }
void THPVersion_free(THPVersion *v);

/* ---- Tensor (_TensorBase) ---- */
typedef struct THPTensor {
  PyObject_HEAD
  THTensor *t;
  THPVersion *version;
  PyObject *grad;          /* .grad (leaf or retained), or NULL */
  PyObject *grad_fn;       /* a Node for non-leaves, else NULL */
  PyObject *grad_acc;      /* borrowed: the AccumulateGrad node while alive */
  PyObject *hooks;         /* list of tensor hooks, or NULL */
  PyObject *base;          /* the tensor this is a view of, or NULL */
  PyObject *dict;
  PyObject *weakreflist;
  int64_t view_version;    /* views: the version their grad_fn was made at (stale: regenerated) */
  int output_nr;
  bool requires_grad;      /* meaningful for leaves */
  bool retains_grad;
  bool view_multi;         /* one of several views one op returned (unbind, split): no in-place */
  uint8_t view_mode;       /* a view made with grad mode off (or a view of one): torch's creation meta,
                              THP_VIEW_NO_GRAD / THP_VIEW_INFERENCE, else 0 */
  bool is_inference;       /* made under inference_mode (or a view of such a tensor) */
} THPTensor;

extern PyTypeObject THPTensorType;
extern PyObject *THPTensorClass;   /* cthtorch.Tensor, set by _set_tensor_class; results are made of this type */
#define THPTensor_Check(o) PyObject_TypeCheck(o, &THPTensorType)
/* Wraps (steals) a THTensor into a new Python tensor of class cthtorch.Tensor.
 * NULL t (an ATen error) raises and returns NULL. */
PyObject *THPTensor_wrap(THTensor *t);
/* Same, for a view of `base`: shares base's version counter. */
PyObject *THPTensor_wrapView(THTensor *t, PyObject *base);
PyObject *THPTensor_wrapAlias(THTensor *t, PyObject *of);
PyObject *THPTensor_wrapType(PyTypeObject *type, THTensor *t);
enum { THP_VIEW_NO_GRAD = 1, THP_VIEW_INFERENCE = 2 };
/* A view made in no_grad mode requires grad when its (root) base does, as torch's, though it has neither
 * history nor an accumulator: gradients through it go nowhere. */
static inline bool THPTensor_requiresGrad(PyObject *o) {
  THPTensor *t = (THPTensor *)o;
  if (t->requires_grad || t->grad_fn) return true;
  if (!t->view_mode || !t->base) return false;
  THPTensor *b = (THPTensor *)t->base;
  return b->requires_grad || b->grad_fn;
}

/* ---- dtype, device, Size, Generator, layout ---- */
typedef struct { PyObject_HEAD THDtype dtype; const char *name; } THPDtype;
extern PyTypeObject THPDtypeType;
extern PyObject *THPDtype_objs[TH_NDTYPES];
#define THPDtype_Check(o) (Py_TYPE(o) == &THPDtypeType)
PyObject *THPDtype_get(THDtype t);     /* borrowed */

typedef struct { PyObject_HEAD int type; int index; } THPDevice;  /* type: 0 cpu, 1 cuda, 2 meta */
extern PyTypeObject THPDeviceType;
#define THPDevice_Check(o) (Py_TYPE(o) == &THPDeviceType)
PyObject *THPDevice_cpu(void);         /* borrowed */
/* Parses a device argument (str, int, device); 0 cpu, -1 error (CUDA absent raises). */
int THPDevice_parse(PyObject *o, int *type, int *index);
/* torch.device for a storage device number (-1 cpu, N cuda:N); new reference */
PyObject *THPDevice_of(int device);
/* A device argument as a storage device number: -1 for cpu, N for cuda (the
 * current device when the index is omitted; CUDA initialised on first use). */
int THPDevice_index(PyObject *o, int *device);
/* Cuda.c: initialises CUDA (once) and turns an index of -1 into the current
 * device; raises when there is no GPU or the index is out of range. */
int THP_cuda_resolve(int *index);

extern PyTypeObject THPSizeType;
PyObject *THPSize_new(int ndim, const int64_t *sizes);

struct THGenerator;
typedef struct { PyObject_HEAD struct THGenerator *gen; } THPGenerator;
extern PyTypeObject THPGeneratorType;

extern PyObject *THPLayout_strided;
extern PyObject *THPMemoryFormat_objs[4];   /* contiguous, preserve, channels_last, channels_last_3d */

/* ---- errors: THError -> Python exception ---- */
PyObject *THP_raise(void);            /* sets the Python error from THError; returns NULL */
int THP_raise_int(void);              /* same, returns -1 */
int THP_warn(PyObject *category, const char *text);   /* warns at the user's line, past cthtorch's Python wrappers */
int THP_flush_warnings(void);         /* THWarn queue -> UserWarning; -1 if a warning became an error */
#define THP_CHECK(t) ((t) ? (t) : (THP_raise(), (void *)NULL))
/* torch's RuntimeError for reading the value of a meta tensor (it has none): -1 when t is
 * meta, else 0. Every path that reads a tensor as a Python number asks this first. */
static inline int THP_refuse_meta_value(const THTensor *t) {
  if (!THTensor_isMeta(t)) return 0;
  PyErr_SetString(PyExc_RuntimeError, "Tensor.item() cannot be called on meta tensors");
  return -1;
}

/* ---- grad mode (thread-local) ---- */
extern _Thread_local bool THP_grad_enabled_off;   /* inverted so zero-init means enabled */
static inline bool THP_grad_enabled(void) { return !THP_grad_enabled_off; }
extern _Thread_local bool THP_inference_mode;   /* torch.inference_mode() is on */
extern bool THP_anomaly_enabled;
extern bool THP_anomaly_check_nan;

/* ---- autograd nodes ---- */
typedef struct { PyObject *fn; int input_nr; } THPEdge;   /* fn NULL: no gradient flows */
typedef struct THPNode THPNode;
/* grads: num_inputs borrowed gradients (Py_None when absent). Returns a new
 * tuple of num_edges gradients (None allowed) or NULL. */
typedef PyObject *(*THPNodeApply)(THPNode *self, PyObject *const *grads);
typedef int (*THPNodeTraverse)(THPNode *self, visitproc visit, void *arg);
/* final: tp_clear/dealloc (drop everything); otherwise after a backward
 * without retain_graph (drop saved tensors, keep sizes and scalars so a node
 * that saved no tensor can run again, as in PyTorch) */
typedef void (*THPNodeRelease)(THPNode *self, bool final);
typedef struct {
  THDtype dtype;
  int device;                       /* -1 host, N cuda:N: where the gradient must land */
  int ndim;
  int64_t sizes[TH_MAX_DIMS];
} THPInputMeta;
struct THPNode {
  PyObject_HEAD
  THPNodeApply apply;
  THPNodeTraverse traverse_saved;   /* visits the subclass's saved objects */
  THPNodeRelease release_saved;     /* drops them (after backward, tp_clear) */
  int num_inputs;                   /* gradients flowing in = forward outputs */
  int num_edges;
  THPEdge *edges;                   /* next_functions */
  THPInputMeta *meta;               /* shape/dtype of each forward output */
  uint64_t seq;
  PyObject *pre_hooks;              /* list or NULL */
  PyObject *post_hooks;
  PyObject *dict;
  PyObject *anomaly_trace;          /* str or NULL */
  PyObject *weakreflist;
  bool released;
};
extern PyTypeObject THPNodeType;
#define THPNode_Check(o) PyObject_TypeCheck(o, &THPNodeType)
/* Allocates a node of `type` (a THPNodeType subtype) with n edges and n inputs. */
THPNode *THPNode_new(PyTypeObject *type, int num_edges, int num_inputs);
/* Edge for an input tensor: its grad_fn, or its leaf's AccumulateGrad. */
int THPNode_setEdgeFor(THPNode *node, int i, PyObject *tensor);
/* The tensor's grad_fn, first regenerating a view's from its base's history
 * when an in-place op changed that history since (borrowed; NULL if none). */
PyObject *THPTensor_gradFn(THPTensor *t);
/* Records node as grad_fn of output tensor number nr. */
void THPNode_setOutput(THPNode *node, int nr, PyObject *tensor);
uint64_t THPNode_nextSeq(void);
PyObject *THPAccumulateGrad_get(PyObject *leaf);   /* new ref */

/* Saved variables (version-checked). */
typedef struct {
  PyObject *data;        /* input tensor (strong), or an alias of an output without grad_fn; when packed
                            by hooks, a non-leaf input's grad_fn (the unpacked tensor gets it back) or NULL */
  int64_t version;
  bool is_output;
  int output_nr;
  bool was_none;
  bool requires_grad;
  PyObject *packed;      /* with saved_tensors_hooks: what pack_hook returned (data is then NULL) */
  PyObject *unpack_hook; /* and the hook that turns it back into the tensor */
} THPSavedVar;
/* 0, or -1 with an error set (a saved_tensors_hooks pack hook raised) */
int THPSavedVar_save(THPSavedVar *sv, PyObject *tensor, bool is_output);
/* _C._push_saved_tensors_hooks(pack, unpack), _C._pop_saved_tensors_hooks() */
PyObject *THP_push_saved_tensors_hooks(PyObject *m, PyObject *args);
PyObject *THP_pop_saved_tensors_hooks(PyObject *m, PyObject *noargs);
PyObject *THP_saved_tensors_hooks_top(PyObject *m, PyObject *noargs);
/* New reference to the saved tensor (None when it was None), or NULL with
 * PyTorch's "modified by an inplace operation" / "backward through the graph
 * a second time" error. */
PyObject *THPSavedVar_unpack(THPSavedVar *sv, THPNode *owner);
void THPSavedVar_release(THPSavedVar *sv);
/* grad_fn._raw_saved_X: a SavedTensor handle on sv, which lives inside owner (a node; new ref) */
PyObject *THPSavedVar_raw(THPSavedVar *sv, PyObject *owner);

/* Autograd recording helpers for generated code. */
bool THP_any_requires_grad(int n, PyObject *const *tensors);   /* grad mode on and any requires */
int THP_check_inplace(PyObject *self_tensor);                    /* leaf-requires-grad error */
/* the same, told whether the op records (rg: some input requires grad, grad mode on): torch's error for a
 * view made in no_grad mode modified in place where the op records */
int THP_check_inplace_rg(PyObject *self_tensor, bool rg);
void THP_bump_version(PyObject *tensor);
/* After an in-place op recorded `node`: self's history now ends at node. */
void THP_rebase_history(PyObject *self_tensor, THPNode *node);

/* Optim.c */
PyObject *THP_sgd_step(PyObject *m, PyObject *args);
PyObject *THP_adam_step(PyObject *m, PyObject *args);

/* Sparse.c: sparse COO kernels and the sparse side of autograd */
PyObject *THP_sparse_coalesce(PyObject *m, PyObject *args);
PyObject *THP_sparse_add(PyObject *m, PyObject *args);
int THP_sparse_accumulate(THPTensor *v, PyObject *g);
PyObject *THP_validate_sparse_grad(PyObject *grad, const THPInputMeta *m, THPNode *from);

/* ---- the module ---- */
int THP_initDtypes(PyObject *m);
int THP_initDevice(PyObject *m);
int THP_initSize(PyObject *m);
int THP_initGenerator(PyObject *m);
int THP_initTensor(PyObject *m);
int THP_initAutograd(PyObject *m);
int THP_initFunctions(PyObject *m);        /* generated: _VariableFunctions, _nn, return types */
extern PyMethodDef THP_generated_tensor_methods[];   /* generated */
extern PyMethodDef THP_manual_tensor_methods[];
extern PyMethodDef THP_manual_functions[];           /* added to _VariableFunctions */
extern PyMethodDef THP_module_functions[];           /* module-level _C functions */
extern PyNumberMethods THP_tensor_as_number;         /* generated from the operator table */

/* release the GIL around large work */
#define THP_BIG_WORK(t) ((t) && THTensor_numel(t) >= 65536)

/* reshape and flatten under autograd, recorded as torch's view ops (autograd/ReshapeGraph.c) */
PyObject *THP_reshape_graph(PyObject *self, const ATIntList *shape);
PyObject *THP_flatten_graph(PyObject *self, int64_t start, int64_t end);

#endif
