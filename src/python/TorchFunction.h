/* The __torch_function__ protocol: a call of a public op whose arguments
 * include an object of a foreign type (not a tensor, number, None or str)
 * that defines __torch_function__ is handed to that type instead:
 *
 *     type(arg).__torch_function__(func, types, args, kwargs)
 *
 * func is the public callable the user called (cthtorch.relu, Tensor.add, an
 * `_C._Op`), so torch.fx records `torch.relu`. Two places ask:
 * - a generated binding, only after no overload parsed (a Proxy never parses
 *   as a Tensor, so tensors pay nothing);
 * - a `_C._Op`, after a per-argument exact-type test that passes tensors and
 *   numbers at once.
 * - once a Tensor subclass that takes part exists (THP_tf_armed), every
 *   binding and operator asks first: a subclass instance among the
 *   arguments hands the call to its __torch_function__ (cthtorch.Tensor's
 *   default runs func on the plain tensors and makes the results instances
 *   of the subclass). nn.Parameter opts out with
 *   _disabled_torch_function_impl, so training pays one pointer test. */
#ifndef THP_TORCH_FUNCTION_H
#define THP_TORCH_FUNCTION_H
#include "THP.h"

/* True when some argument (positional, keyword value, or an item of a list or
 * tuple argument) is of a type that overrides __torch_function__. */
bool THP_has_torch_function(PyObject *const *args, Py_ssize_t n);

/* Called by a generated binding whose parse failed (its TypeError pending).
 * module: "" (cthtorch), "nn", "linalg", "fft", "special"; name: the Python
 * name; self: the tensor for methods, NULL for functions. Returns the
 * override's result, or NULL with the parse error kept when no argument
 * overrides __torch_function__ (or the override's error). */
PyObject *THP_torch_function_fallback(const char *module, const char *name, PyObject *self,
                                      PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);

/* Set once a Tensor subclass taking part in dispatch is defined. */
extern int THP_tf_armed;

/* Asked by bindings and operators while THP_tf_armed: when self or an
 * argument overrides, *res is the override's result (NULL on error) and 1 is
 * returned; else 0 and the caller goes on. name is the binding's Python name
 * (module as for the fallback), or a dunder of Tensor with module NULL. */
int THP_tf_binding(const char *module, const char *name, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                   PyObject *kwnames, PyObject **res);

/* The same for a hand-written method taking (args tuple, kwargs dict), asked
 * only about self. */
int THP_tf_method_kw(const char *name, PyObject *self, PyObject *args, PyObject *kw, PyObject **res);

/* A property getter's hand-over (Tensor.data): when self is a subclass taking part, its __torch_function__ gets
 * Tensor.<name>.__get__ and (self,), as torch's getters. Returns 1 with *res set (NULL: an error) when handed. */
int THP_tf_getter(const char *name, PyObject *self, PyObject **res);
/* len(self) handed over (1, *n set; -1 with an error) or not (0) */
int THP_tf_len(PyObject *self, Py_ssize_t *n);

/* Dispatches a vectorcall of `func` to the overriding types of its
 * arguments. Returns a new reference, NULL on error, or Py_NotImplemented
 * (new reference) when no argument overrides: the caller then runs func. */
PyObject *THP_torch_function_dispatch(PyObject *func, PyObject *const *args, size_t nargsf, PyObject *kwnames);

/* _C._has_torch_function, _has_torch_function_unary, _handle_torch_function */
int THP_initTorchFunction(PyObject *module);

#endif
