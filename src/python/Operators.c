/* Python operators of tensors: the number protocol and rich comparisons,
 * routed to the same generated ops as their named forms (x + y == x.add(y)).
 * Reflected forms (2 - x) put the number first; unsupported operand types
 * return NotImplemented so Python can try the other side. */
#include "THP.h"
#include "Bindings.h"
#include "Functions.h"
#include "TorchFunction.h"

/* A tensor or a number. A numpy array (a sequence, 0-d ones too) is not: the operator returns NotImplemented,
 * so numpy's reflected ufunc computes it and __array_wrap__ makes the result a tensor, as with torch. */
static bool operand_ok(PyObject *o) {
  return THPTensor_Check(o) || PyComplex_Check(o) || (ap_is_scalar(o) && !PySequence_Check(o));
}

PyObject *THP_as_tensor(PyObject *data, THDtype dtype, bool dtype_given);

/* o as a tensor operand beside other. An int in [2**63, 2**64) beside a
 * floating tensor stands as its float value, as the argument parser takes it
 * (ArgParser.c, to_scalar); anywhere else fa_tensor refuses it. */
static PyObject *operand(PyObject *o, PyObject *other) {
  if (PyLong_Check(o) && !PyBool_Check(o) && THPTensor_Check(other) &&
      THDtype_isFloating(((THPTensor *)other)->t->dtype)) {
    int overflow;
    PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow > 0) {
      unsigned long long u = PyLong_AsUnsignedLongLong(o);
      if (u == (unsigned long long)-1 && PyErr_Occurred()) return NULL;   /* beyond 64 bits */
      THTensor *t = at_scalar_tensor(at_scalar_float((double)u), TH_Double);
      if (!t) return THP_raise();
      t->wrapped_number = true;
      return THPTensor_wrap(t);
    }
  }
  return fa_tensor(o);
}

/* While a Tensor subclass taking part in __torch_function__ exists, an
 * operator on one is handed to it as Tensor.<dunder>(tensor, other), the
 * reflected dunder when the tensor is on the right. Returns 1 with *res set
 * when handed over. */
static int tf_operator(const char *dunder, const char *rdunder, PyObject *a, PyObject *b, PyObject **res) {
  if (!THP_tf_armed) return 0;
  bool left = THPTensor_Check(a);
  PyObject *other = left ? b : a;
  if (!THP_tf_binding(NULL, left || !rdunder ? dunder : rdunder, left ? a : b, &other, 1, NULL, res)) return 0;
  /* a TypeError (every handler declined: unrelated subclasses) is NotImplemented, as torch's operators make it,
   * so Python tries the other operand and then raises its "unsupported operand type(s)" */
  if (!*res && PyErr_ExceptionMatches(PyExc_TypeError)) {
    PyErr_Clear();
    *res = Py_NewRef(Py_NotImplemented);
  }
  return 1;
}

#define BINARY_SLOT(NAME, LNAME, RNAME, CALL)                     \
  static PyObject *NAME(PyObject *a, PyObject *b) {               \
    PyObject *tfr;                                                \
    if (tf_operator(LNAME, RNAME, a, b, &tfr)) return tfr;       \
    if (!operand_ok(a) || !operand_ok(b)) Py_RETURN_NOTIMPLEMENTED; \
    PyObject *ta = operand(a, b);                                  \
    if (!ta) return NULL;                                          \
    PyObject *tb = operand(b, a);                                  \
    if (!tb) { Py_DECREF(ta); return NULL; }                       \
    PyObject *r = CALL;                                            \
    Py_DECREF(ta);                                                 \
    Py_DECREF(tb);                                                 \
    return r;                                                      \
  }

/* A number on the left of + or * is the second operand, as torch's __radd__/__rmul__ make it (2 * x is
 * x.mul(2)): the autograd node lists x's edge first, as torch's next_functions does. */
#define SCALAR_LEFT (!THPTensor_Check(a) && THPTensor_Check(b))
BINARY_SLOT(nb_add, "add", "add", SCALAR_LEFT ? F_add(tb, ta, NULL) : F_add(ta, tb, NULL))
BINARY_SLOT(nb_sub, "sub", "__rsub__", F_sub(ta, tb, NULL))
BINARY_SLOT(nb_mul, "mul", "mul", SCALAR_LEFT ? F_mul(tb, ta) : F_mul(ta, tb))
BINARY_SLOT(nb_truediv, "div", "__rdiv__", F_div(ta, tb))
BINARY_SLOT(nb_floordiv, "__floordiv__", "__rfloordiv__", F_floor_divide(ta, tb))
BINARY_SLOT(nb_mod, "remainder", "__rmod__", F_remainder(ta, tb))
BINARY_SLOT(nb_and, "__and__", "bitwise_and", F_bitwise_and(ta, tb))
BINARY_SLOT(nb_or, "__or__", "bitwise_or", F_bitwise_or(ta, tb))
BINARY_SLOT(nb_xor, "__xor__", "bitwise_xor", F_bitwise_xor(ta, tb))
BINARY_SLOT(nb_lshift, "__lshift__", "__rlshift__", F_bitwise_left_shift(ta, tb))
BINARY_SLOT(nb_rshift, "__rshift__", "__rrshift__", F_bitwise_right_shift(ta, tb))
static PyObject *nb_matmul(PyObject *a, PyObject *b) {
  PyObject *tfr;
  if (tf_operator("matmul", "__rmatmul__", a, b, &tfr)) return tfr;
  /* a number has no matrix product: Python's TypeError, as torch's */
  if (!THPTensor_Check(a) || !THPTensor_Check(b)) Py_RETURN_NOTIMPLEMENTED;
  return PyObject_CallMethod(a, "matmul", "O", b);
}

/* ** is binary here: a three-argument pow(x, y, mod) is not a tensor operation */
BINARY_SLOT(nb_pow2, "pow", "__rpow__", F_pow(ta, tb))
static PyObject *nb_pow(PyObject *a, PyObject *b, PyObject *mod) {
  if (mod != Py_None) Py_RETURN_NOTIMPLEMENTED;
  return nb_pow2(a, b);
}

/* In-place: x += y calls add_, keeping x's identity (a sparse y goes
 * through the named method, whose parser hands it to the sparse kernels; so
 * does a y overriding __torch_function__, which then takes the call as
 * Tensor.add_: returning NotImplemented would let Python fall back to x + y
 * and rebind x, where torch's vmap raises for a batched y). */
#define INPLACE_SLOT(NAME, TFNAME, METHOD, CALL)                        \
  static PyObject *NAME(PyObject *a, PyObject *b) {               \
    PyObject *tfr;                                                \
    if (tf_operator(TFNAME, NULL, a, b, &tfr)) return tfr;      \
    if (THPTensor_Check(a) && (ap_is_sparse(b) || THP_has_torch_function(&b, 1))) return PyObject_CallMethod(a, METHOD, "O", b); \
    if (!THPTensor_Check(a) || !operand_ok(b)) Py_RETURN_NOTIMPLEMENTED; \
    PyObject *tb = operand(b, a);                                  \
    if (!tb) return NULL;                                          \
    PyObject *r = CALL;                                            \
    Py_DECREF(tb);                                                 \
    return r;                                                      \
  }
INPLACE_SLOT(nb_iadd, "add_", "add_", VT_add_Tensor_(a, tb, at_scalar_int(1)))
INPLACE_SLOT(nb_isub, "sub_", "sub_", VT_sub_Tensor_(a, tb, at_scalar_int(1)))
INPLACE_SLOT(nb_imul, "mul_", "mul_", VT_mul_Tensor_(a, tb))
INPLACE_SLOT(nb_itruediv, "div_", "div_", VT_div_Tensor_(a, tb))
INPLACE_SLOT(nb_ifloordiv, "floor_divide_", "floor_divide_", VT_floor_divide_(a, tb))
INPLACE_SLOT(nb_imod, "remainder_", "remainder_", VT_remainder_Tensor_(a, tb))
INPLACE_SLOT(nb_iand, "__iand__", "bitwise_and_", VT_bitwise_and_Tensor_(a, tb))
INPLACE_SLOT(nb_ior, "__ior__", "bitwise_or_", VT_bitwise_or_Tensor_(a, tb))
INPLACE_SLOT(nb_ixor, "__ixor__", "bitwise_xor_", VT_bitwise_xor_Tensor_(a, tb))
INPLACE_SLOT(nb_ilshift, "__ilshift__", "bitwise_left_shift_", VT_bitwise_left_shift_Tensor_(a, tb))
INPLACE_SLOT(nb_irshift, "__irshift__", "bitwise_right_shift_", VT_bitwise_right_shift_Tensor_(a, tb))
INPLACE_SLOT(nb_ipow2, "pow_", "pow_", VT_pow_Tensor_Tensor_(a, tb))
static PyObject *nb_ipow(PyObject *a, PyObject *b, PyObject *mod) { return nb_ipow2(a, b); }

/* a unary operator's hand-over to a Tensor subclass: Tensor.<dunder>(a) */
#define TF_UNARY(DUNDER)                                                              \
  PyObject *tfr;                                                                      \
  if (THP_tf_armed && THP_tf_binding(NULL, DUNDER, a, NULL, 0, NULL, &tfr)) return tfr;
static PyObject *nb_neg(PyObject *a) { TF_UNARY("neg") return F_neg(a); }
static PyObject *nb_pos(PyObject *a) { return Py_NewRef(a); }
static PyObject *nb_abs(PyObject *a) { TF_UNARY("abs") return F_abs(a); }
static PyObject *nb_invert(PyObject *a) {
  TF_UNARY("__invert__")
  if (((THPTensor *)a)->t->dtype != TH_Bool && THDtype_isFloating(((THPTensor *)a)->t->dtype)) {
    PyErr_SetString(PyExc_TypeError, "~ (operator.invert) is only implemented on integer and Boolean-type tensors");
    return NULL;
  }
  return F_bitwise_not(a);
}

void THP_fill_number_slots(PyNumberMethods *nb) {
  nb->nb_add = nb_add;
  nb->nb_subtract = nb_sub;
  nb->nb_multiply = nb_mul;
  nb->nb_true_divide = nb_truediv;
  nb->nb_floor_divide = nb_floordiv;
  nb->nb_remainder = nb_mod;
  nb->nb_power = nb_pow;
  nb->nb_and = nb_and;
  nb->nb_or = nb_or;
  nb->nb_xor = nb_xor;
  nb->nb_lshift = nb_lshift;
  nb->nb_rshift = nb_rshift;
  nb->nb_matrix_multiply = nb_matmul;
  nb->nb_inplace_add = nb_iadd;
  nb->nb_inplace_subtract = nb_isub;
  nb->nb_inplace_multiply = nb_imul;
  nb->nb_inplace_true_divide = nb_itruediv;
  nb->nb_inplace_floor_divide = nb_ifloordiv;
  nb->nb_inplace_remainder = nb_imod;
  nb->nb_inplace_power = nb_ipow;
  nb->nb_inplace_and = nb_iand;
  nb->nb_inplace_or = nb_ior;
  nb->nb_inplace_xor = nb_ixor;
  nb->nb_inplace_lshift = nb_ilshift;
  nb->nb_inplace_rshift = nb_irshift;
  nb->nb_negative = nb_neg;
  nb->nb_positive = nb_pos;
  nb->nb_absolute = nb_abs;
  nb->nb_invert = nb_invert;
}

/* tensor == ndarray (either side) compares with the array as a tensor of its dtype, as torch's __eq__ does (its
 * other comparisons and operators leave arrays to numpy); what cannot be a tensor (a str array, a list) is
 * NotImplemented: Python's identity comparison */
static PyObject *eq_array(PyObject *a, PyObject *b) {
  PyObject *arr = THPTensor_Check(a) ? b : a;
  if (!PySequence_Check(arr) || PyList_Check(arr) || PyTuple_Check(arr) || PyUnicode_Check(arr) ||
      !PyObject_HasAttrString(arr, "__array_interface__"))
    Py_RETURN_NOTIMPLEMENTED;
  PyObject *t = THP_as_tensor(arr, TH_Undefined, false);
  if (!t) {
    if (!PyErr_ExceptionMatches(PyExc_TypeError)) return NULL;
    PyErr_Clear();
    Py_RETURN_NOTIMPLEMENTED;
  }
  PyObject *r = arr == b ? F_eq(a, t) : F_eq(t, b);
  Py_DECREF(t);
  return r;
}

PyObject *THP_tensor_richcompare(PyObject *a, PyObject *b, int op) {
  static const char *const dunders[] = {"lt", "le", "__eq__", "ne", "gt", "ge"};   /* torch's funcs */
  static const int swapped[] = {Py_GT, Py_GE, Py_EQ, Py_NE, Py_LT, Py_LE};
  PyObject *tfr;   /* a tensor on the right sees the swapped comparison, as Python's reflection */
  if (tf_operator(dunders[op], dunders[swapped[op]], a, b, &tfr)) return tfr;
  if (op == Py_EQ && (!operand_ok(a) || !operand_ok(b))) return eq_array(a, b);
  if (!operand_ok(a) || !operand_ok(b)) Py_RETURN_NOTIMPLEMENTED;
  PyObject *ta = operand(a, b);
  if (!ta) return NULL;
  PyObject *tb = operand(b, a);
  if (!tb) { Py_DECREF(ta); return NULL; }
  PyObject *r = NULL;
  switch (op) {
    case Py_EQ: r = F_eq(ta, tb); break;
    case Py_NE: r = F_ne(ta, tb); break;
    case Py_LT: r = F_lt(ta, tb); break;
    case Py_LE: r = F_le(ta, tb); break;
    case Py_GT: r = F_gt(ta, tb); break;
    case Py_GE: r = F_ge(ta, tb); break;
  }
  Py_DECREF(ta);
  Py_DECREF(tb);
  return r;
}
