/* Formula helpers for linalg.yaml (see FormulasLinalg.h). Built from
 * declared ops (tril, triu, narrow, cat), so they are differentiable again. */
#include "autograd/FormulasLinalg.h"
#include "autograd/Formulas.h"
#include "Functions.h"

/* a + b where either may be missing (NULL): a new reference */
static PyObject *add_opt(PyObject *a, PyObject *b) {
  if (!a) return Py_NewRef(b);
  if (!b) return Py_NewRef(a);
  return F_add(a, b, NULL);
}

/* A's gradient laid out as [head + part; tail] along dim: the square factor's
 * gradient fills the first k rows (or columns) of the rectangular one */
static PyObject *join_along(PyObject *rect, PyObject *square, int64_t k, int64_t len, int dim) {
  PyObject *d = PyLong_FromLong(dim), *z = PyLong_FromLong(0), *kk = PyLong_FromLongLong(k),
           *rest = PyLong_FromLongLong(len - k), *res = NULL;
  PyObject *head = NULL, *sum = NULL, *tail = NULL, *parts = NULL;
  if (!d || !z || !kk || !rest) goto done;
  head = F_narrow(rect, d, z, kk);
  sum = head ? F_add(head, square, NULL) : NULL;
  tail = sum ? F_narrow(rect, d, kk, rest) : NULL;
  parts = tail ? PyTuple_Pack(2, sum, tail) : NULL;
  res = parts ? F_cat(parts, d) : NULL;
done:
  Py_XDECREF(d); Py_XDECREF(z); Py_XDECREF(kk); Py_XDECREF(rest);
  Py_XDECREF(head); Py_XDECREF(sum); Py_XDECREF(tail); Py_XDECREF(parts);
  return res;
}

PyObject *F_lu_unpack_backward(PyObject *grad_L, PyObject *grad_U, PyObject *sizes) {
  if (grad_L == Py_None && grad_U == Py_None) return Py_NewRef(Py_None);
  Py_ssize_t nd = PyTuple_GET_SIZE(sizes);
  int64_t dims[TH_MAX_DIMS];
  for (Py_ssize_t i = 0; i < nd; i++) dims[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(sizes, i));
  if (PyErr_Occurred()) return NULL;
  int64_t m = dims[nd - 2], n = dims[nd - 1], k = m < n ? m : n;
  PyObject *m1 = PyLong_FromLong(-1), *z = PyLong_FromLong(0), *l = NULL, *u = NULL, *res = NULL;
  if (!m1 || !z) goto done;
  if (grad_L != Py_None && !(l = F_tril(grad_L, m1))) goto done;
  if (grad_U != Py_None && !(u = F_triu(grad_U, z))) goto done;
  const THTensor *like = ((THPTensor *)(l ? l : u))->t;
  if (m == n) {
    res = add_opt(l, u);
  } else if (m < n) {   /* k == m: L's gradient is the first m columns' lower part */
    if (!u) {
      dims[nd - 2] = m, dims[nd - 1] = n;
      if (!(u = THP_zeros_on((int)nd, dims, like))) goto done;
    }
    res = l ? join_along(u, l, k, n, -1) : Py_NewRef(u);
  } else {              /* k == n: U's gradient is the first n rows' upper part */
    if (!l) {
      dims[nd - 2] = m, dims[nd - 1] = n;
      if (!(l = THP_zeros_on((int)nd, dims, like))) goto done;
    }
    res = u ? join_along(l, u, k, m, -2) : Py_NewRef(l);
  }
done:
  Py_XDECREF(m1); Py_XDECREF(z); Py_XDECREF(l); Py_XDECREF(u);
  return res;
}
