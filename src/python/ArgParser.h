/* Parses Python arguments against PyTorch-style signatures, e.g.
 *   "add(Tensor input, Tensor other, *, Scalar alpha=1, Tensor out=None)"
 * A parser holds several overloads; the first that accepts the arguments
 * wins, and a mismatch raises PyTorch's TypeError listing them all.
 * Generated bindings (build/generated/) and hand-written methods use it. */
#ifndef THP_ARG_PARSER_H
#define THP_ARG_PARSER_H

#include <Python.h>
#include "../ATen/ATen.h"

#define AP_MAX_ARGS 16
#define AP_MAX_SIGS 8

typedef enum {
  AP_TENSOR, AP_SCALAR, AP_INT, AP_INTLIST, AP_FLOAT, AP_BOOL, AP_DTYPE, AP_DEVICE,
  AP_STRING, AP_GENERATOR, AP_TENSORLIST, AP_FLOATLIST, AP_OBJECT, AP_LAYOUT, AP_MEMFORMAT,
  AP_DIMLIST,  /* int or int[] (dim=) */
  AP_OPTTENSORLIST,  /* Tensor?[]: a tuple/list of tensors and Nones (indices) */
} APType;

typedef struct {
  APType type;
  char *name;
  PyObject *py_name;     /* interned */
  bool optional;         /* accepts None */
  bool kwonly;
  bool has_default;
  bool default_none;
  int size;              /* int[2]: a lone int expands to this many */
  bool keep_len;         /* SymInt[2]: a one-item list is not expanded (the kernel checks its length, as torch's
                            upsample_* do); int[2] expands it, as torch's pooling/conv kernels accept (3,) */
  bool bool_items;       /* bool[2]: an int list whose items are bools (torch's output_mask), ints taken too */
  /* defaults */
  int64_t def_int;
  double def_float;
  bool def_bool;
  bool def_is_float;     /* Scalar default written with a '.' */
  char *def_str;
  int64_t def_list[8];
  int def_list_n;
  bool def_list_given;
  char *def_text;        /* the default as written, for the no-match message */
  bool no_numbers;       /* a Tensor parameter that a Python number does not match: torch has
                          * no Scalar overload there (gcd(t, 2) is a TypeError) */
  bool number_first;     /* the first Tensor parameter that a Python number matches, as torch
                          * allows for add/sub/mul/div and its Scalar-self overloads (pow(2, t)) */
} APParam;

typedef struct {
  char *name;
  APParam params[AP_MAX_ARGS];
  int nparams;
  int npositional;
  char *text;            /* for error messages */
  bool hidden;
} APSignature;

typedef struct {
  const char *const *sigs;   /* NULL-terminated signature strings */
  APSignature parsed[AP_MAX_SIGS];
  int nsigs;
  bool ready;
} APParser;

typedef struct {
  int idx;                       /* which overload matched */
  const APSignature *sig;
  PyObject *obj[AP_MAX_ARGS];    /* borrowed; NULL when absent (use default) */
  PyObject *owned[AP_MAX_ARGS];  /* temporaries made while converting */
  int nowned;
  /* Every argument is converted and checked once, when its overload has
   * matched (finish() in ArgParser.c); the accessors below only read these. */
  union { int64_t i; double d; ATScalar s; bool b; } val[AP_MAX_ARGS];
  int8_t list_of[AP_MAX_ARGS];   /* lists[] slot of an int[] parameter; -1 when None/absent without default */
  ATIntList lists[8];
  int nlists;
  bool sparse;                   /* no overload matched and an argument was a sparse tensor */
} APResult;

/* self: a tensor bound as the first parameter (methods), or NULL. Returns
 * the overload index or -1 with a Python error set. */
#define AP_CHECK __attribute__((warn_unused_result))
AP_CHECK int ap_parse(APParser *p, PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                      APResult *r);
/* tuple/dict form (tp_new, tp_call) */
AP_CHECK int ap_parse_tuple(APParser *p, PyObject *self, PyObject *args, PyObject *kwargs, APResult *r);
void ap_release(APResult *r);

/* Sparse COO tensors are a Python class (cthtorch/_sparse_tensor.py), not a
 * _TensorBase, so no signature accepts one. When every overload failed and an
 * argument (or a list item) is sparse, ap_parse raises PyTorch's
 * NotImplementedError ("Could not run 'aten::op' with arguments from the
 * 'SparseCPU' backend") and sets r->sparse. A caller that wants sparse support
 * (the generated bindings) then returns ap_sparse_call(...): the Python
 * dispatcher's result for the op, or that error when it has no kernel. Dense
 * calls never get here: this runs only after matching failed. */
bool ap_is_sparse(PyObject *o);   /* an instance of the registered sparse class */
PyObject *ap_sparse_call(APParser *p, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames);
PyObject *THP_set_sparse_dispatch(PyObject *m, PyObject *args);
PyObject *THP_set_unimplemented_dtype(PyObject *m, PyObject *cls);   /* _C._set_unimplemented_dtype(cls) */
/* o is a dtype torch has and cthtorch does not: NotImplementedError set, true returned */
bool ap_unimplemented_dtype_error(const char *fn, PyObject *o);   /* _C._set_sparse_dispatch(cls, fn) */
PyObject *THP_sparse_kernel_missing(PyObject *m, PyObject *name); /* _C._sparse_kernel_missing(name): raises */

/* Accessors: the i-th parameter of the matched signature, converted by
 * ap_parse (which raised for anything that does not fit), so they cannot
 * fail. An int[] accessor returns NULL only for None or an absent parameter
 * without a default. */
struct THPTensor;
struct THPTensor *ap_tensor(APResult *r, int i);          /* NULL when None/absent (optional) */
ATScalar ap_scalar(APResult *r, int i);
/* A call parsed by one of torch's deprecated signatures (x.add_(alpha, other)): torch's UserWarning,
 * once per process for all of them as torch's; -1 when the warning was turned into an error. */
int ap_warn_deprecated(const char *text);
ATOptScalar ap_optscalar(APResult *r, int i);
int64_t ap_int(APResult *r, int i);
ATOptInt ap_optint(APResult *r, int i);
double ap_float(APResult *r, int i);
ATOptDouble ap_optfloat(APResult *r, int i);
bool ap_bool(APResult *r, int i);
int ap_optbool(APResult *r, int i);                        /* -1 for None */
const ATIntList *ap_intlist(APResult *r, int i);           /* NULL when None */
THDtype ap_dtype(APResult *r, int i, THDtype dflt);       /* dflt when None/absent */
const char *ap_string(APResult *r, int i);                 /* NULL when None */
PyObject *ap_object(APResult *r, int i);                   /* borrowed, NULL when absent */
bool ap_isnone(APResult *r, int i);                        /* absent or None */
AP_CHECK int ap_device_check(APResult *r, int i);                   /* -1 (error set) unless cpu/None */

/* Conversions also used outside the parser. */
/* They raise PyTorch's errors: an int beyond int64 is ValueError "Overflow
 * when unpacking long long"; a list item that is not an int, or beyond int64,
 * is TypeError "fn(): argument 'arg' failed to unpack the object at pos N
 * with error ..."; a Scalar beyond uint64 is OverflowError. */
bool ap_is_scalar(PyObject *o);
AP_CHECK int ap_to_scalar(PyObject *o, ATScalar *out);
AP_CHECK int ap_to_intlist(PyObject *o, ATIntList *out, const char *fn, const char *arg);
AP_CHECK int ap_to_int(PyObject *o, int64_t *out);

#endif
