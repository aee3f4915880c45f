/* initModule: builds cthtorch._C. */
#include "THP.h"
#include "Dispatch.h"
#include "ArgParser.h"
#include "Bindings.h"
#include "../TH/THRandom.h"
#include "../ATen/ATBlas.h"

_Thread_local bool THP_grad_enabled_off = false;
_Thread_local bool THP_inference_mode = false;
bool THP_anomaly_enabled = false;
bool THP_anomaly_check_nan = true;   /* detect_anomaly(check_nan=False) skips the NaN scan */

int THP_initNodes(PyObject *m);
int THP_initEngine(PyObject *m);
int THP_initStorage(PyObject *m);
int THP_initJitInterpreter(PyObject *m);
int THP_initJitFusedKernel(PyObject *m);
extern PyMethodDef THP_generated_functions_main[], THP_generated_functions_nn[],
    THP_generated_functions_linalg[], THP_generated_functions_special[], THP_generated_functions_fft[],
    THP_generated_functions_internal[];

static PyObject *set_grad_enabled(PyObject *m, PyObject *arg) {
  int v = PyObject_IsTrue(arg);
  if (v < 0) return NULL;
  THP_grad_enabled_off = !v;
  Py_RETURN_NONE;
}
static PyObject *is_grad_enabled(PyObject *m, PyObject *u) { return PyBool_FromLong(THP_grad_enabled()); }
static PyObject *set_inference_mode(PyObject *m, PyObject *arg) {
  int v = PyObject_IsTrue(arg);
  if (v < 0) return NULL;
  THP_inference_mode = v;
  Py_RETURN_NONE;
}
static PyObject *is_inference_mode(PyObject *m, PyObject *u) { return PyBool_FromLong(THP_inference_mode); }
/* _is_inference(t): Tensor.is_inference() */
static PyObject *tensor_is_inference(PyObject *m, PyObject *t) {
  if (!THPTensor_Check(t)) {
    PyErr_Format(PyExc_TypeError, "is_inference(): argument 'input' (position 1) must be Tensor, not %s",
                 Py_TYPE(t)->tp_name);
    return NULL;
  }
  return PyBool_FromLong(((THPTensor *)t)->is_inference);
}
/* set_anomaly_enabled(bool enabled, bool check_nan=True): PyTorch takes bools only */
static PyObject *set_anomaly(PyObject *m, PyObject *args) {
  PyObject *v, *nan = Py_True;
  if (!PyArg_ParseTuple(args, "O|O:set_anomaly_enabled", &v, &nan)) return NULL;
  PyObject *arg[2] = { v, nan };
  static const char *names[2] = { "enabled", "check_nan" };
  for (int i = 0; i < 2; i++)
    if (!PyBool_Check(arg[i])) {
      PyErr_Format(PyExc_TypeError, "set_anomaly_enabled(): argument '%s' (position %d) must be bool, not %s",
                   names[i], i + 1, Py_TYPE(arg[i])->tp_name);
      return NULL;
    }
  THP_anomaly_enabled = v == Py_True;
  THP_anomaly_check_nan = nan == Py_True;
  Py_RETURN_NONE;
}
static PyObject *is_anomaly(PyObject *m, PyObject *u) { return PyBool_FromLong(THP_anomaly_enabled); }
static PyObject *is_anomaly_nan(PyObject *m, PyObject *u) { return PyBool_FromLong(THP_anomaly_check_nan); }

/* torch._C._increment_version(iterable of tensors), under torch.autograd.graph.increment_version: mark
 * tensors modified without writing them (their saved copies then refuse to unpack, as after an in-place op) */
static PyObject *increment_version(PyObject *m, PyObject *tensors) {
  PyObject *it = PyObject_GetIter(tensors), *t;
  if (!it) {
    PyErr_SetString(PyExc_RuntimeError, "increment_version expect a Iterable[Tensor] as input");
    return NULL;
  }
  while ((t = PyIter_Next(it))) {
    bool ok = THPTensor_Check(t);
    if (ok) THP_bump_version(t);
    Py_DECREF(t);
    if (!ok) {
      PyErr_SetString(PyExc_RuntimeError, "increment_version expects each element of the iterable to be a tensor");
      break;
    }
  }
  Py_DECREF(it);
  if (PyErr_Occurred()) return NULL;
  Py_RETURN_NONE;
}

static PyObject *set_tensor_class(PyObject *m, PyObject *cls) {
  if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, &THPTensorType)) {
    PyErr_SetString(PyExc_TypeError, "expected a subclass of _TensorBase");
    return NULL;
  }
  Py_INCREF(cls);
  Py_XSETREF(THPTensorClass, cls);
  Py_RETURN_NONE;
}

static PyObject *get_default_dtype(PyObject *m, PyObject *u) { return Py_NewRef(THPDtype_get(at_default_dtype())); }
static PyObject *set_default_dtype(PyObject *m, PyObject *d) {
  if (!THPDtype_Check(d)) { PyErr_SetString(PyExc_TypeError, "set_default_dtype expects a torch.dtype"); return NULL; }
  if (at_set_default_dtype(((THPDtype *)d)->dtype) < 0) return THP_raise();
  Py_RETURN_NONE;
}
/* torch.set_default_device: True makes factories given no device meta ones */
static PyObject *set_default_device_meta(PyObject *m, PyObject *on) {
  int v = PyObject_IsTrue(on);
  if (v < 0) return NULL;
  THP_default_device_meta = v;
  Py_RETURN_NONE;
}
static PyObject *set_num_threads(PyObject *m, PyObject *n) {
  long v = PyLong_AsLong(n);
  if (v == -1 && PyErr_Occurred()) return NULL;
  if (v <= 0) { PyErr_SetString(PyExc_RuntimeError, "set_num_threads expects a positive integer"); return NULL; }
  at_set_num_threads((int)v);
  at_blas_set_threads((int)v);
  Py_RETURN_NONE;
}
static PyObject *get_num_threads(PyObject *m, PyObject *u) { return PyLong_FromLong(at_get_num_threads()); }
static PyObject *live_bytes(PyObject *m, PyObject *u) { return PyLong_FromLongLong(THAllocator_liveBytes()); }
static PyObject *empty_cache(PyObject *m, PyObject *u) { THAllocator_emptyCache(); Py_RETURN_NONE; }

/* _wrap_THTensor(capsule): the Python tensor for a THTensor* that a user C
 * extension returned (cthtorch.utils.cpp_extension / ffi). It takes a
 * PyCapsule named "cthtorch.THTensor", never a bare integer, so no Python
 * value a program can write reaches a dereference; the capsule is renamed
 * "used_cthtorch.THTensor" when wrapped (as DLPack marks its capsules), so
 * handing one over twice cannot free the tensor twice. It takes over the
 * reference the extension owned, as every at_* result is handed over; the
 * other direction is Tensor._cdata, the THTensor* of a tensor (borrowed). */
static PyObject *wrap_THTensor(PyObject *m, PyObject *cap) {
  if (!PyCapsule_CheckExact(cap)) {
    PyErr_Format(PyExc_TypeError, "_wrap_THTensor(): argument must be a PyCapsule named 'cthtorch.THTensor', not %s",
                 Py_TYPE(cap)->tp_name);
    return NULL;
  }
  if (!PyCapsule_IsValid(cap, "cthtorch.THTensor")) {
    PyErr_SetString(PyExc_ValueError, "_wrap_THTensor(): the capsule is not an unused 'cthtorch.THTensor' "
                                      "(each capsule can be wrapped once)");
    return NULL;
  }
  THTensor *t = PyCapsule_GetPointer(cap, "cthtorch.THTensor");
  if (!t || PyCapsule_SetName(cap, "used_cthtorch.THTensor") < 0) return NULL;
  return THPTensor_wrap(t);
}

static PyObject *promote_types(PyObject *m, PyObject *args) {
  PyObject *a, *b;
  if (!PyArg_ParseTuple(args, "O!O!:promote_types", &THPDtypeType, &a, &THPDtypeType, &b)) return NULL;
  return Py_NewRef(THPDtype_get(at_promote_types(((THPDtype *)a)->dtype, ((THPDtype *)b)->dtype)));
}
static PyObject *can_cast(PyObject *m, PyObject *args) {
  PyObject *a, *b;
  if (!PyArg_ParseTuple(args, "O!O!:can_cast", &THPDtypeType, &a, &THPDtypeType, &b)) return NULL;
  return PyBool_FromLong(at_can_cast(((THPDtype *)a)->dtype, ((THPDtype *)b)->dtype));
}
/* result_type(tensor_or_scalar, tensor_or_scalar) */
static PyObject *result_type(PyObject *m, PyObject *args) {
  PyObject *a, *b;
  if (!PyArg_ParseTuple(args, "OO:result_type", &a, &b)) return NULL;
  PyObject *ta = fa_tensor(a);
  if (!ta) return NULL;
  PyObject *tb = fa_tensor(b);
  if (!tb) { Py_DECREF(ta); return NULL; }
  const THTensor *ts[2] = { ((THPTensor *)ta)->t, ((THPTensor *)tb)->t };
  THDtype r = at_result_type(2, ts);
  Py_DECREF(ta);
  Py_DECREF(tb);
  return Py_NewRef(THPDtype_get(r));
}

static PyObject *set_return_types(PyObject *m, PyObject *ns) { return THP_set_return_types(m, ns); }

#ifdef __SANITIZE_ADDRESS__
/* Only in the ASan build (make asan): a deliberate heap overflow, so a test can
 * prove that the sanitizer CI leg really runs under ASan (tests/test_asan_canary.py). */
static PyObject *asan_canary(PyObject *m, PyObject *u) {
  volatile char *p = malloc(8);     /* volatile: the compiler may not drop the bad store */
  if (!p) return PyErr_NoMemory();
  p[8] = 1;
  free((void *)p);
  Py_RETURN_NONE;
}
#endif

PyObject *THP_swap_tensors(PyObject *m, PyObject *args);
PyObject *THP_tensor_reclass(PyObject *m, PyObject *args);
PyObject *THP_set_autocast_cpu(PyObject *m, PyObject *args);
PyMethodDef THP_module_functions[] = {
  {"_swap_tensors", THP_swap_tensors, METH_VARARGS, NULL},
  {"_tensor_reclass", THP_tensor_reclass, METH_VARARGS, NULL},
  {"_set_autocast_cpu", THP_set_autocast_cpu, METH_VARARGS, NULL},
  {"_set_grad_enabled", set_grad_enabled, METH_O, NULL},
  {"_set_inference_mode", set_inference_mode, METH_O, NULL},
  {"_is_inference_mode_enabled", is_inference_mode, METH_NOARGS, NULL},
  {"_is_inference", tensor_is_inference, METH_O, NULL},
  {"_push_saved_tensors_hooks", THP_push_saved_tensors_hooks, METH_VARARGS, NULL},
  {"_pop_saved_tensors_hooks", THP_pop_saved_tensors_hooks, METH_NOARGS, NULL},
  {"_saved_tensors_hooks_top", THP_saved_tensors_hooks_top, METH_NOARGS, NULL},
  {"is_grad_enabled", is_grad_enabled, METH_NOARGS, NULL},
  {"_set_anomaly_enabled", set_anomaly, METH_VARARGS, NULL},
  {"is_anomaly_enabled", is_anomaly, METH_NOARGS, NULL},
  {"is_anomaly_check_nan_enabled", is_anomaly_nan, METH_NOARGS, NULL},
  {"_increment_version", increment_version, METH_O, NULL},
  {"_set_tensor_class", set_tensor_class, METH_O, NULL},
  {"_set_return_types", set_return_types, METH_O, NULL},
  {"_set_sparse_dispatch", THP_set_sparse_dispatch, METH_VARARGS, NULL},
  {"_set_unimplemented_dtype", THP_set_unimplemented_dtype, METH_O, NULL},
  {"_sparse_kernel_missing", THP_sparse_kernel_missing, METH_O, NULL},
  {"get_default_dtype", get_default_dtype, METH_NOARGS, NULL},
  {"_set_default_dtype", set_default_dtype, METH_O, NULL},
  {"_set_default_device_meta", set_default_device_meta, METH_O, NULL},
  {"set_num_threads", set_num_threads, METH_O, NULL},
  {"get_num_threads", get_num_threads, METH_NOARGS, NULL},
  {"_live_bytes", live_bytes, METH_NOARGS, "Bytes held by the default CPU allocator (for leak tests)."},
  {"_empty_cache", empty_cache, METH_NOARGS, NULL},
  {"_sgd_step", THP_sgd_step, METH_VARARGS, "Fused SGD update of one parameter (Optim.c)."},
  {"_adam_step", THP_adam_step, METH_VARARGS, "Fused Adam/AdamW update of one parameter (Optim.c)."},
  {"_sparse_coalesce", THP_sparse_coalesce, METH_VARARGS, "Sorted, summed sparse COO entries (Sparse.c)."},
  {"_sparse_add", THP_sparse_add, METH_VARARGS, "Sum of two sparse COO tensors' entries (Sparse.c)."},
  {"_wrap_THTensor", wrap_THTensor, METH_O, "Wraps (steals) the THTensor* in a 'cthtorch.THTensor' capsule from a C extension."},
  {"promote_types", promote_types, METH_VARARGS, NULL},
  {"can_cast", can_cast, METH_VARARGS, NULL},
  {"result_type", result_type, METH_VARARGS, NULL},
#ifdef __SANITIZE_ADDRESS__
  {"_asan_canary", asan_canary, METH_NOARGS, "ASan builds only: overflows a heap block (the sanitizer's canary)."},
#endif
  {NULL}
};

/* _VariableFunctions: a class whose static methods are the torch.* ops. */
static PyTypeObject VariableFunctionsType = {
  PyVarObject_HEAD_INIT(NULL, 0)
  .tp_name = "torch._C._VariableFunctionsClass",
  .tp_basicsize = sizeof(PyObject),
  .tp_flags = Py_TPFLAGS_DEFAULT,
};

/* Adds defs as static methods of _VariableFunctions. Hand-written ones
 * (factories, random factories, predicates) are wrapped in a `_C._Op` so the
 * dispatch observers see them as they see the generated ops (Dispatch.h). */
static int add_functions(PyObject *holder_dict, PyMethodDef *defs, bool wrap) {
  for (PyMethodDef *d = defs; d && d->ml_name; d++) {
    PyObject *f = PyCFunction_New(d, NULL);
    if (f && wrap) {
      char name[128];
      snprintf(name, sizeof name, "aten::%s", d->ml_name);
      Py_SETREF(f, THPOp_new(name, f));
    }
    if (!f) return -1;
    PyObject *sm = PyStaticMethod_New(f);
    Py_DECREF(f);
    if (!sm || PyDict_SetItemString(holder_dict, d->ml_name, sm) < 0) { Py_XDECREF(sm); return -1; }
    Py_DECREF(sm);
  }
  return 0;
}

static int make_submodule(PyObject *m, const char *name, PyMethodDef *defs) {
  PyObject *sub = PyModule_New(name);
  if (!sub) return -1;
  for (PyMethodDef *d = defs; d && d->ml_name; d++) {
    PyObject *f = PyCFunction_NewEx(d, NULL, NULL);
    if (!f || PyModule_AddObject(sub, d->ml_name, f) < 0) { Py_XDECREF(f); Py_DECREF(sub); return -1; }
  }
  return PyModule_AddObject(m, name, sub);
}

static struct PyModuleDef module_def = {
  PyModuleDef_HEAD_INIT, "cthtorch._C", "cthtorch's C core: tensors, ops and the autograd engine.", -1,
  THP_module_functions,
};

PyMODINIT_FUNC PyInit__C(void) {
  PyObject *m = PyModule_Create(&module_def);
  if (!m) return NULL;
  if (THP_initDtypes(m) < 0 || THP_initDevice(m) < 0 || THP_initSize(m) < 0 || THP_initGenerator(m) < 0 ||
      THP_initTensor(m) < 0 || THP_initNodes(m) < 0 || THP_initEngine(m) < 0 || THP_initStorage(m) < 0 ||
      THP_initDispatch(m) < 0 || THP_initJitInterpreter(m) < 0 ||
      THP_initJitFusedKernel(m) < 0)
    goto fail;
  if (PyType_Ready(&VariableFunctionsType) < 0) goto fail;
  PyObject *vdict = VariableFunctionsType.tp_dict;
  extern PyMethodDef THP_factory_functions[], THP_random_functions[];
  if (add_functions(vdict, THP_generated_functions_main, false) < 0 ||
      add_functions(vdict, THP_manual_functions, true) < 0 || add_functions(vdict, THP_factory_functions, true) < 0 ||
      add_functions(vdict, THP_random_functions, true) < 0)
    goto fail;
  PyType_Modified(&VariableFunctionsType);
  if (PyModule_AddObjectRef(m, "_VariableFunctions", (PyObject *)&VariableFunctionsType) < 0) goto fail;
  if (make_submodule(m, "_nn", THP_generated_functions_nn) < 0 ||
      make_submodule(m, "_linalg", THP_generated_functions_linalg) < 0 ||
      make_submodule(m, "_special", THP_generated_functions_special) < 0 ||
      make_submodule(m, "_fft", THP_generated_functions_fft) < 0 ||
      /* backward/LAPACK helpers of our own formulas and composites (internal: true) */
      make_submodule(m, "_internal", THP_generated_functions_internal) < 0)
    goto fail;
  extern PyMethodDef THP_cuda_functions[], THP_dlpack_functions[];
  if (make_submodule(m, "_cuda", THP_cuda_functions) < 0) goto fail;
  if (PyModule_AddFunctions(m, THP_dlpack_functions) < 0) goto fail;   /* _to_dlpack, _from_dlpack (DLPack.c) */
  PyModule_AddIntConstant(m, "_max_dims", TH_MAX_DIMS);
  at_blas_set_threads(at_get_num_threads());
  return m;
fail:
  Py_DECREF(m);
  return NULL;
}
