/* Signature-driven argument parsing (see ArgParser.h). */
#include "ArgParser.h"
#include "Dispatch.h"
#include "THP.h"
#include "Bindings.h"
#include "TorchFunction.h"

#include <ctype.h>
#include <string.h>

static int check_one_element(const THTensor *t);   /* a tensor read as one number: numel 1, not meta */

/* ---------- signature strings -> APSignature ---------- */

static char *dupn(const char *s, size_t n) {
  char *d = PyMem_Malloc(n + 1);
  if (d) { memcpy(d, s, n); d[n] = 0; }
  return d;
}

static void trim(const char **s, const char **e) {
  while (*s < *e && isspace((unsigned char)**s)) (*s)++;
  while (*e > *s && isspace((unsigned char)(*e)[-1])) (*e)--;
}

static int parse_type(APParam *p, const char *t, size_t n) {
  char buf[64];
  if (n >= sizeof buf) return -1;
  memcpy(buf, t, n); buf[n] = 0;
  if (n && buf[n - 1] == '?') { p->optional = true; buf[--n] = 0; }
  p->size = 0;
  char *br = strchr(buf, '[');
  if (br) {
    if (br[1] != ']') p->size = atoi(br + 1);
    *br = 0;
    if (!strcmp(buf, "int") || !strcmp(buf, "SymInt")) {
      p->type = p->size == 1 ? AP_DIMLIST : AP_INTLIST;
      p->keep_len = buf[0] == 'S';
      return 0;
    }
    if (!strcmp(buf, "Tensor")) { p->type = AP_TENSORLIST; return 0; }
    if (!strcmp(buf, "Tensor?")) { p->type = AP_OPTTENSORLIST; return 0; }
    if (!strcmp(buf, "float")) { p->type = AP_FLOATLIST; return 0; }
    if (!strcmp(buf, "bool")) {   /* kept at its length: a one-item mask is not repeated */
      p->type = AP_INTLIST;
      p->bool_items = p->keep_len = true;
      return 0;
    }
    return -1;
  }
  static const struct { const char *n; APType t; } names[] = {
    {"Tensor", AP_TENSOR}, {"Scalar", AP_SCALAR}, {"int", AP_INT}, {"SymInt", AP_INT}, {"float", AP_FLOAT},
    {"bool", AP_BOOL}, {"ScalarType", AP_DTYPE}, {"Device", AP_DEVICE}, {"str", AP_STRING},
    {"Generator", AP_GENERATOR}, {"PyObject*", AP_OBJECT}, {"Layout", AP_LAYOUT},
    {"MemoryFormat", AP_MEMFORMAT},
  };
  for (size_t i = 0; i < sizeof names / sizeof *names; i++)
    if (!strcmp(buf, names[i].n)) { p->type = names[i].t; return 0; }
  return -1;
}

static int parse_default(APParam *p, const char *s) {
  p->has_default = true;
  p->def_text = dupn(s, strlen(s));
  if (!strcmp(s, "None")) { p->default_none = true; p->optional = true; return 0; }
  if (!strcmp(s, "True") || !strcmp(s, "False")) { p->def_bool = s[0] == 'T'; p->def_int = p->def_bool; return 0; }
  if (s[0] == '"' || s[0] == '\'') { p->def_str = dupn(s + 1, strlen(s) - 2); return 0; }
  if (s[0] == '[' || s[0] == '(') {
    p->def_list_given = true;
    const char *c = s + 1;
    while (*c && *c != ']' && *c != ')') {
      while (*c == ' ' || *c == ',') c++;
      if (*c == ']' || *c == ')') break;
      p->def_list[p->def_list_n++] = strtoll(c, (char **)&c, 10);
    }
    return 0;
  }
  if (!strcmp(s, "contiguous_format")) { p->def_int = 0; return 0; }
  if (!strcmp(s, "inf")) { p->def_float = INFINITY; p->def_is_float = true; return 0; }
  char *end;
  if (strpbrk(s, ".e")) { p->def_float = strtod(s, &end); p->def_is_float = true; p->def_int = (int64_t)p->def_float; }
  else {
    p->def_int = strtoll(s, &end, 10);
    p->def_float = (double)p->def_int;
    if (p->type == AP_INTLIST || p->type == AP_DIMLIST) {
      p->def_list_given = true;
      int k = p->size > 0 ? p->size : 1;
      for (int i = 0; i < k; i++) p->def_list[p->def_list_n++] = p->def_int;
    }
  }
  return 0;
}

static int parse_signature(APSignature *sig, const char *text) {
  const char *lp = strchr(text, '('), *rp = strrchr(text, ')');
  if (!lp || !rp) return -1;
  sig->text = dupn(text, strlen(text));
  sig->name = dupn(text, lp - text);
  sig->nparams = 0;
  sig->npositional = 0;
  sig->hidden = strstr(rp, "|hidden") != NULL;
  bool kwonly = false;
  const char *s = lp + 1;
  while (s < rp) {
    const char *e = s;
    int depth = 0;
    while (e < rp && (depth || *e != ',')) { if (*e == '[' || *e == '(') depth++; if (*e == ']' || *e == ')') depth--; e++; }
    const char *a = s, *b = e;
    trim(&a, &b);
    s = e + 1;
    if (a == b) continue;
    if (b - a == 1 && *a == '*') { kwonly = true; continue; }
    APParam *p = &sig->params[sig->nparams];
    memset(p, 0, sizeof *p);
    const char *sp = a;
    while (sp < b && !isspace((unsigned char)*sp)) sp++;
    if (parse_type(p, a, sp - a) < 0) {
      PyErr_Format(PyExc_SystemError, "cthtorch: bad type in signature %s", text);
      return -1;
    }
    while (sp < b && isspace((unsigned char)*sp)) sp++;
    const char *eq = memchr(sp, '=', b - sp);
    const char *ne = eq ? eq : b;
    trim(&sp, &ne);
    p->name = dupn(sp, ne - sp);
    p->py_name = PyUnicode_InternFromString(p->name);
    if (eq) {
      const char *d = eq + 1, *de = b;
      trim(&d, &de);
      char *dv = dupn(d, de - d);
      parse_default(p, dv);
      PyMem_Free(dv);
    }
    p->kwonly = kwonly;
    if (!kwonly) sig->npositional++;
    sig->nparams++;
  }
  /* "...)|tensors=a,b": the Tensor parameters a and b take tensors only */
  const char *strict = strstr(rp, "|tensors=");
  for (const char *n = strict ? strict + 9 : NULL; n && *n && *n != '|';) {
    size_t len = strcspn(n, ",|");
    for (int j = 0; j < sig->nparams; j++)
      if (strlen(sig->params[j].name) == len && !strncmp(sig->params[j].name, n, len))
        sig->params[j].no_numbers = true;
    n += len;
    if (*n == ',') n++;
  }
  /* "...)|number_first": the first parameter takes a Python number too (a wrapped 0-d tensor) */
  if (strstr(rp, "|number_first") && sig->nparams > 0) sig->params[0].number_first = true;
  return 0;
}

static int ensure_ready(APParser *p) {
  if (p->ready) return 0;
  p->nsigs = 0;
  for (const char *const *s = p->sigs; *s; s++)
    if (parse_signature(&p->parsed[p->nsigs++], *s) < 0) return -1;
  p->ready = true;
  return 0;
}

/* ---------- type checks ---------- */

bool ap_is_scalar(PyObject *o) {
  if (PyLong_Check(o) || PyFloat_Check(o) || PyBool_Check(o)) return true;
  if (THPTensor_Check(o)) return false;
  if (PyComplex_Check(o)) return false;
  /* numpy scalars */
  return PyIndex_Check(o) || (Py_TYPE(o)->tp_as_number && Py_TYPE(o)->tp_as_number->nb_float && !PySequence_Check(o));
}

static bool is_np_bool(PyObject *o) {
  const char *n = Py_TYPE(o)->tp_name;
  return !strcmp(n, "numpy.bool_") || !strcmp(n, "numpy.bool");
}

/* An int as PyTorch takes one: a Python int (not a bool), a numpy integer
 * scalar, a 0-d integer tensor, and (in_list: an int[] item or size) a 0-d
 * numpy array, as torch.randn(np.array(3)) is. Other arrays are refused
 * here, so they never reach the conversion. */
static bool is_int_like_ex(PyObject *o, bool in_list) {
  if (PyLong_Check(o)) return !PyBool_Check(o);
  if (THPTensor_Check(o)) {
    THTensor *t = ((THPTensor *)o)->t;
    return t->ndim == 0 && !THDtype_isFloating(t->dtype) && t->dtype != TH_Bool;
  }
  if (!PyIndex_Check(o) || is_np_bool(o)) return false;
  if (!PySequence_Check(o)) return true;   /* numpy integer scalars */
  if (!in_list) return false;
  Py_ssize_t n = PySequence_Size(o);       /* a 0-d array has no len() */
  if (n >= 0) return false;
  PyErr_Clear();
  return true;
}

static bool is_int_like(PyObject *o) { return is_int_like_ex(o, false); }

static bool is_float_like(PyObject *o) {
  if (PyFloat_Check(o) || PyLong_Check(o)) return true;
  if (THPTensor_Check(o)) return ((THPTensor *)o)->t->ndim == 0;
  return PyIndex_Check(o) || (Py_TYPE(o)->tp_as_number && Py_TYPE(o)->tp_as_number->nb_float && !PySequence_Check(o));
}

/* As in PyTorch, the first item decides whether a list is an int list; the
 * others are checked when converted ("failed to unpack the object at pos N"). */
static bool is_intlist(PyObject *o, int size) {
  if (PyTuple_Check(o) || PyList_Check(o)) {
    Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
    if (n > TH_MAX_DIMS) return false;
    return n == 0 || is_int_like_ex(PySequence_Fast_GET_ITEM(o, 0), true);
  }
  return size > 0 && is_int_like(o);
}

/* A bool[N] argument: a list or tuple whose first item is a bool (or an int, as torch's list parser
 * takes [1, 1] for output_mask); never a lone bool. */
static bool is_boollist(PyObject *o) {
  if (!PyTuple_Check(o) && !PyList_Check(o)) return false;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
  if (n > TH_MAX_DIMS) return false;
  return n == 0 || PyBool_Check(PySequence_Fast_GET_ITEM(o, 0)) || is_int_like_ex(PySequence_Fast_GET_ITEM(o, 0), true);
}

static bool is_dtype_obj(PyObject *o) {
  return THPDtype_Check(o) || o == (PyObject *)&PyFloat_Type || o == (PyObject *)&PyLong_Type ||
         o == (PyObject *)&PyBool_Type;
}

static bool check_param(const APParam *p, PyObject *o, bool first) {
  if (o == Py_None) return p->optional;
  switch (p->type) {
    case AP_TENSOR: return THPTensor_Check(o) || ((!first || p->number_first) && !p->no_numbers &&
                                                  (ap_is_scalar(o) || PyComplex_Check(o)));
    /* a 0-d tensor is a Scalar, unless complex: a Scalar holds no imaginary part, so a complex
     * one goes to the Tensor overload (fill_.Tensor) or gets the parser's TypeError */
    case AP_SCALAR: return ap_is_scalar(o) || (THPTensor_Check(o) && THTensor_numel(((THPTensor *)o)->t) == 1 &&
                                               ((THPTensor *)o)->t->ndim == 0 &&
                                               !THDtype_isComplex(((THPTensor *)o)->t->dtype));
    case AP_INT: return is_int_like(o);
    case AP_INTLIST: return p->bool_items ? is_boollist(o) : is_intlist(o, p->size);
    case AP_DIMLIST: return is_intlist(o, 1);
    case AP_FLOAT: return is_float_like(o);
    case AP_BOOL: return PyBool_Check(o) || (PyIndex_Check(o) && !PyLong_Check(o) && !THPTensor_Check(o) &&
                                             !strcmp(Py_TYPE(o)->tp_name, "numpy.bool_"));
    case AP_DTYPE: return is_dtype_obj(o);
    case AP_DEVICE: return THPDevice_Check(o) || PyUnicode_Check(o) || PyLong_Check(o);
    case AP_STRING: return PyUnicode_Check(o);
    case AP_GENERATOR: return PyObject_TypeCheck(o, &THPGeneratorType);
    case AP_TENSORLIST:
      if (!PyTuple_Check(o) && !PyList_Check(o)) return false;
      for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(o); i++)
        if (!THPTensor_Check(PySequence_Fast_GET_ITEM(o, i))) return false;
      return true;
    case AP_OPTTENSORLIST:
      if (!PyTuple_Check(o) && !PyList_Check(o)) return false;
      for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(o); i++)
        if (!THPTensor_Check(PySequence_Fast_GET_ITEM(o, i)) && PySequence_Fast_GET_ITEM(o, i) != Py_None) return false;
      return true;
    case AP_FLOATLIST:
      if (!PyTuple_Check(o) && !PyList_Check(o)) return is_float_like(o);
      for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(o); i++)
        if (!is_float_like(PySequence_Fast_GET_ITEM(o, i))) return false;
      return true;
    case AP_OBJECT: return true;
    case AP_LAYOUT: return THPLayout_strided && Py_TYPE(o) == Py_TYPE(THPLayout_strided);
    case AP_MEMFORMAT: return THPMemoryFormat_objs[0] && Py_TYPE(o) == Py_TYPE(THPMemoryFormat_objs[0]);
  }
  return false;
}

static const char *type_label(const APParam *p) {
  switch (p->type) {
    case AP_TENSOR: return "Tensor";
    case AP_SCALAR: return "Number";
    case AP_INT: return "int";
    case AP_INTLIST: return p->bool_items ? "tuple of bools" : "tuple of ints";
    case AP_DIMLIST: return "tuple of ints";
    case AP_FLOAT: return "float";
    case AP_BOOL: return "bool";
    case AP_DTYPE: return "torch.dtype";
    case AP_DEVICE: return "torch.device";
    case AP_STRING: return "str";
    case AP_GENERATOR: return "torch.Generator";
    case AP_TENSORLIST: return "tuple of Tensors";
    case AP_OPTTENSORLIST: return "tuple of Tensors";
    case AP_FLOATLIST: return "tuple of floats";
    case AP_OBJECT: return "object";
    case AP_LAYOUT: return "torch.layout";
    case AP_MEMFORMAT: return "torch.memory_format";
  }
  return "?";
}

static const char *obj_label(PyObject *o) {
  if (THPTensor_Check(o)) return "Tensor";
  return Py_TYPE(o)->tp_name;
}

/* ---------- matching ---------- */

/* Tries one signature. On failure fills why (for single-signature errors). */

/* A Tensor[] given as a list or tuple holding something else: PyTorch's
 * message names the item ("expected Tensor as element 1 in argument 0, but
 * got int"). False when o is not such a sequence. */
static bool bad_list_item(const APSignature *sig, const APParam *p, PyObject *o, int pos, int argpos, char *why,
                          size_t whyn) {
  if (!PyTuple_Check(o) && !PyList_Check(o)) return false;
  /* torch names the first item's type when it decides a list is not an int list */
  if ((p->type == AP_INTLIST || p->type == AP_DIMLIST) && !p->bool_items && PySequence_Fast_GET_SIZE(o) > 0 &&
      PySequence_Fast_GET_SIZE(o) <= TH_MAX_DIMS) {
    snprintf(why, whyn, "%s(): argument '%s' (position %d) must be tuple of ints, but found element of type %s at pos 0",
             sig->name, p->name, argpos, Py_TYPE(PySequence_Fast_GET_ITEM(o, 0))->tp_name);
    return true;
  }
  if (p->type != AP_TENSORLIST) return false;
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(o); i++) {
    PyObject *item = PySequence_Fast_GET_ITEM(o, i);
    if (!THPTensor_Check(item)) {
      snprintf(why, whyn, "expected Tensor as element %zd in argument %d, but got %s", i, pos, Py_TYPE(item)->tp_name);
      return true;
    }
  }
  return false;
}

/* PyTorch's parser also takes NumPy's keyword names: axis for dim, keepdims
 * for keepdim, x/a/x1 for input, x2 for other (x.sum(1, keepdims=True) in
 * karpathy's makemore lectures). The parameter index, or nparams if none. */
static int numpy_alias(const APSignature *sig, PyObject *key) {
  static const char *const alias[][2] = { { "axis", "dim" }, { "keepdims", "keepdim" }, { "x", "input" },
                                          { "a", "input" }, { "x1", "input" }, { "x2", "other" } };
  const char *k = PyUnicode_AsUTF8(key);
  if (!k) { PyErr_Clear(); return sig->nparams; }
  for (size_t a = 0; a < sizeof alias / sizeof alias[0]; a++) {
    if (strcmp(k, alias[a][0]) != 0) continue;
    for (int j = 0; j < sig->nparams; j++)
      if (strcmp(sig->params[j].name, alias[a][1]) == 0) return j;
  }
  return sig->nparams;
}

static bool match(const APSignature *sig, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                  PyObject *kwnames, PyObject **out, char *why, size_t whyn) {
  int pi = 0;
  memset(out, 0, sizeof(PyObject *) * sig->nparams);
  if (self) out[pi++] = self;
  Py_ssize_t npos = nargs;
  /* x.view(2, 3) / torch.zeros(2, 3): varargs ints fill the first int[] parameter */
  if (pi < sig->nparams && (sig->params[pi].type == AP_INTLIST) && npos >= 1 &&
      sig->npositional - pi == 1 &&   /* PyTorch: only a lone positional int[] takes varargs */
      !(npos == 1 && (PyTuple_Check(args[0]) || PyList_Check(args[0])))) {
    /* as in PyTorch, the first decides; the others are checked when converted */
    if (is_int_like_ex(args[0], true) && (npos > 1 || sig->params[pi].size == 0)) {
      /* pack into a tuple held by the caller's result (see ap_parse) */
      out[pi] = (PyObject *)-1;   /* marker: varargs */
      pi++;
      npos = 0;
      args += nargs;
    }
  }
  int available = sig->npositional - (self ? 1 : 0);
  if (npos > available + 0) {
    snprintf(why, whyn, "%s() takes %d positional argument%s but %zd %s given", sig->name, available,
             available == 1 ? "" : "s", nargs, nargs == 1 ? "was" : "were");
    return false;
  }
  for (Py_ssize_t i = 0; i < npos; i++) {
    const APParam *p = &sig->params[pi];
    if (!check_param(p, args[i], pi == 0 && !self)) {
      if (!bad_list_item(sig, p, args[i], pi, (int)(i + 1), why, whyn))
        snprintf(why, whyn, "%s(): argument '%s' (position %d) must be %s, not %s", sig->name, p->name,
                 (int)(i + 1), type_label(p), obj_label(args[i]));
      return false;
    }
    out[pi++] = args[i];
  }
  /* parameters' own names first, then NumPy's aliases for the keys left: as torch, an alias of a
   * parameter given otherwise (dim=0, axis=0) is an unexpected keyword */
  Py_ssize_t nk = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  bool left = false;
  for (int pass = 0; pass < 2 && (pass == 0 || left); pass++)
    for (Py_ssize_t k = 0; k < nk; k++) {
      PyObject *key = PyTuple_GET_ITEM(kwnames, k), *val = args[npos + k];
      int j;
      for (j = 0; j < sig->nparams; j++)
        if (sig->params[j].py_name == key || PyUnicode_Compare(sig->params[j].py_name, key) == 0) break;
      if (pass == 0 && j == sig->nparams) { left = true; continue; }
      if (pass == 1) {
        if (j < sig->nparams) continue;   /* taken in the first pass */
        j = numpy_alias(sig, key);
        if (j < sig->nparams && out[j]) j = sig->nparams;
      }
      if (j == sig->nparams) {
        snprintf(why, whyn, "%s() got an unexpected keyword argument '%s'", sig->name, PyUnicode_AsUTF8(key));
        return false;
      }
      if (out[j]) {
        snprintf(why, whyn, "%s() got multiple values for argument '%s'", sig->name, sig->params[j].name);
        return false;
      }
      if (!check_param(&sig->params[j], val, false)) {
        snprintf(why, whyn, "%s(): argument '%s' must be %s, not %s", sig->name, sig->params[j].name,
                 type_label(&sig->params[j]), obj_label(val));
        return false;
      }
      out[j] = val;
    }
  for (int j = 0; j < sig->nparams; j++)
    if (!out[j] && !sig->params[j].has_default) {
      snprintf(why, whyn, "%s() missing 1 required positional arguments: \"%s\"", sig->name, sig->params[j].name);
      return false;
    }
  return true;
}

/* One overload as PyTorch lists it: "(tuple of ints dim, bool keepdim = False,
 * *, torch.dtype dtype = None)", without the bound self of a method. */
static PyObject *format_signature(const APSignature *sig, bool skip_self) {
  PyObject *acc = PyUnicode_FromString("(");
  bool kw = false, first = true;
  for (int j = skip_self ? 1 : 0; j < sig->nparams && acc; j++) {
    const APParam *q = &sig->params[j];
    PyObject *next;
    if (q->kwonly && !kw) {
      kw = true;
      next = PyUnicode_FromFormat("%U%s*", acc, first ? "" : ", ");
      Py_SETREF(acc, next);
      first = false;
      if (!acc) break;
    }
    next = q->def_text ? PyUnicode_FromFormat("%U%s%s %s = %s", acc, first ? "" : ", ", type_label(q), q->name, q->def_text)
                       : PyUnicode_FromFormat("%U%s%s %s", acc, first ? "" : ", ", type_label(q), q->name);
    Py_SETREF(acc, next);
    first = false;
  }
  if (acc) Py_SETREF(acc, PyUnicode_FromFormat("%U)", acc));
  return acc;
}

/* Whether o is what p's type names, by the stricter reading torch's no-match message uses to mark
 * each argument: there a Python number is no "Tensor", a bool no "int" nor "Number", a complex no
 * "Number", a tensor no "int" (the parser itself converts all of these). */
static bool fits_named_type(const APParam *p, PyObject *o) {
  if (o == Py_None) return p->optional;
  switch (p->type) {
    case AP_TENSOR: return THPTensor_Check(o);
    case AP_SCALAR: return (PyLong_Check(o) && !PyBool_Check(o)) || PyFloat_Check(o);
    case AP_INT: return PyLong_Check(o) && !PyBool_Check(o);
    case AP_BOOL: return PyBool_Check(o);
    default: return check_param(p, o, false);
  }
}

#define APPEND(acc, ...) do { PyObject *tmp_ = (acc) ? PyUnicode_FromFormat(__VA_ARGS__) : NULL; \
                              Py_XDECREF(acc); acc = tmp_; } while (0)

/* One keyword argument in an argument list: "name=type" after positional ones, and as torch writes
 * them, each followed by ", " when there are none ("(dim=str, )"). marked: "!name=type!". */
static PyObject *append_keyword(PyObject *acc, Py_ssize_t npos, PyObject *key, PyObject *val, bool marked) {
  const char *bang = marked ? "!" : "";
  if (npos) APPEND(acc, "%U, %s%U=%s%s", acc, bang, key, obj_label(val), bang);
  else APPEND(acc, "%U%s%U=%s%s, ", acc, bang, key, obj_label(val), bang);
  return acc;
}

/* Why overload sig did not take the call, as the line under it in torch's message, or "" when torch
 * writes none: it writes one only for an overload whose signature text has as many comma-separated
 * items as the call has arguments (the "*" counts as one, "()" as one). Then it names the keywords
 * that overload lacks, or lists the arguments with each one of the wrong type between "!". */
static PyObject *why_not_overload(const APSignature *sig, bool skip_self, PyObject *const *args, Py_ssize_t nargs,
                                  PyObject *kwnames) {
  int item_param[AP_MAX_ARGS + 1], nitems = 0;
  bool star = false;
  for (int j = skip_self ? 1 : 0; j < sig->nparams; j++) {
    if (sig->params[j].kwonly && !star) { star = true; item_param[nitems++] = -1; }
    item_param[nitems++] = j;
  }
  Py_ssize_t nk = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  if (nargs + nk != (nitems ? nitems : 1)) return PyUnicode_FromString("");
  int kw_param[AP_MAX_ARGS * 2];
  PyObject *unknown = PyUnicode_FromString("");
  for (Py_ssize_t k = 0; k < nk && unknown; k++) {
    PyObject *key = PyTuple_GET_ITEM(kwnames, k);
    int j;
    for (j = skip_self ? 1 : 0; j < sig->nparams; j++)
      if (PyUnicode_Compare(sig->params[j].py_name, key) == 0) break;
    kw_param[k] = j;
    if (j == sig->nparams) APPEND(unknown, "%U%s%U", unknown, PyUnicode_GET_LENGTH(unknown) ? ", " : "", key);
  }
  if (!unknown || PyUnicode_GET_LENGTH(unknown)) {
    PyObject *line = unknown ? PyUnicode_FromFormat("\n      didn't match because some of the keywords were incorrect: %U",
                                                    unknown) : NULL;
    Py_XDECREF(unknown);
    return line;
  }
  Py_DECREF(unknown);
  PyObject *desc = PyUnicode_FromString("");
  for (Py_ssize_t i = 0; i < nargs && desc; i++) {
    bool ok = i < nitems && item_param[i] >= 0 && fits_named_type(&sig->params[item_param[i]], args[i]);
    const char *bang = ok ? "" : "!";
    APPEND(desc, "%U%s%s%s%s", desc, i ? ", " : "", bang, obj_label(args[i]), bang);
  }
  /* keywords in the overload's parameter order */
  for (int j = 0; j < sig->nparams && desc; j++)
    for (Py_ssize_t k = 0; k < nk && desc; k++)
      if (kw_param[k] == j)
        desc = append_keyword(desc, nargs, PyTuple_GET_ITEM(kwnames, k), args[nargs + k],
                              !fits_named_type(&sig->params[j], args[nargs + k]));
  if (desc)
    Py_SETREF(desc, PyUnicode_FromFormat("\n      didn't match because some of the arguments have invalid types: (%U)",
                                         desc));
  return desc;
}

/* Whether sig could take this many arguments (positional and keyword
 * together, self apart): torch names the one overload that could as the
 * culprit ("sum(): argument 'input' (position 1) must be Tensor, not
 * NoneType") and lists them all only when several could. */
static bool plausible(const APSignature *sig, bool method, Py_ssize_t nargs) {
  int lo = 0, hi = 0;
  for (int j = method ? 1 : 0; j < sig->nparams; j++) {
    lo += !sig->params[j].has_default;
    hi++;
  }
  return !sig->hidden && nargs >= lo && nargs <= hi;
}

static void raise_no_match(APParser *p, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames, const char *why, const char *plausible_why, int nplausible) {
  int visible = 0;
  for (int i = 0; i < p->nsigs; i++) visible += !p->parsed[i].hidden;
  if (visible <= 1) { PyErr_SetString(PyExc_TypeError, why); return; }
  if (nplausible == 1) { PyErr_SetString(PyExc_TypeError, plausible_why); return; }
  PyObject *got = PyUnicode_FromString("");
  for (Py_ssize_t i = 0; i < nargs; i++)
    APPEND(got, "%U%s%s", got, i ? ", " : "", obj_label(args[i]));
  if (kwnames)
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(kwnames) && got; k++)
      got = append_keyword(got, nargs, PyTuple_GET_ITEM(kwnames, k), args[nargs + k], false);
  if (!got) return;
  PyObject *msg = PyUnicode_FromFormat("%s() received an invalid combination of arguments - got (%U), but expected one of:",
                                       p->parsed[0].name, got);
  for (int i = 0; i < p->nsigs && msg; i++) {
    if (p->parsed[i].hidden) continue;
    PyObject *one = format_signature(&p->parsed[i], self != NULL);
    PyObject *line = one ? why_not_overload(&p->parsed[i], self != NULL, args, nargs, kwnames) : NULL;
    if (!line) Py_CLEAR(msg);
    else APPEND(msg, "%U\n * %U%U", msg, one, line);   /* torch ends each line with a newline */
    Py_XDECREF(one);
    Py_XDECREF(line);
  }
  APPEND(msg, "%U\n", msg);
  if (msg) PyErr_SetObject(PyExc_TypeError, msg);
  Py_XDECREF(msg);
  Py_DECREF(got);
}
#undef APPEND

/* One int64 from o (already accepted by is_int_like). Overflow raises
 * PyTorch's ValueError; anything else, PyNumber_Index's TypeError. */
static int unpack_int(PyObject *o, int64_t *out) {
  if (PyLong_Check(o)) {
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow) { PyErr_SetString(PyExc_ValueError, "Overflow when unpacking long long"); return -1; }
    if (v == -1 && PyErr_Occurred()) return -1;
    *out = v;
    return 0;
  }
  if (THPTensor_Check(o)) {
    THTensor *t = ((THPTensor *)o)->t;
    if (THTensor_numel(t) != 1 || THDtype_isFloating(t->dtype)) {
      PyErr_Format(PyExc_TypeError, "only integer tensors of a single element can be converted to an index");
      return -1;
    }
    if (check_one_element(t) < 0) return -1;   /* a meta one has no value */
    *out = at_item_int(t);
    /* a tracer follows a traced size (a 0-dim tensor while tracing) into the int it becomes */
    if (THP_dispatch_active() && THP_dispatch_note_int(o) < 0) return -1;
    return 0;
  }
  PyObject *i = PyNumber_Index(o);
  if (!i) return -1;
  int rc = unpack_int(i, out);
  Py_DECREF(i);
  return rc;
}

int ap_to_int(PyObject *o, int64_t *out) { return unpack_int(o, out); }

/* An int[] argument: a list/tuple, or a lone int repeated size times
 * (int[2] kernel_size=3). A bad item raises PyTorch's TypeError naming the
 * function, the argument and the 1-based position. */
static int convert_intlist(PyObject *o, ATIntList *out, int size, bool keep_len, const char *fn, const char *arg) {
  if (!PyTuple_Check(o) && !PyList_Check(o)) {
    int64_t v;
    if (unpack_int(o, &v) < 0) return -1;
    out->n = size > 0 ? size : 1;
    for (int i = 0; i < out->n; i++) out->v[i] = v;
    return 0;
  }
  Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
  if (n > TH_MAX_DIMS) {
    PyErr_Format(PyExc_RuntimeError, "%s(): argument '%s' has %zd items; cthtorch supports at most %d dimensions",
                 fn, arg, n, TH_MAX_DIMS);
    return -1;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *item = PySequence_Fast_GET_ITEM(o, i);
    /* bools pass here as in PyTorch (torch.randn(2, True) is (2, 1)); only the first item must be a real int */
    if ((!PyBool_Check(item) && !is_int_like_ex(item, true)) || unpack_int(item, &out->v[i]) < 0) {
      bool overflow = PyErr_ExceptionMatches(PyExc_ValueError);
      PyErr_Clear();
      if (overflow)
        PyErr_Format(PyExc_TypeError, "%s(): argument '%s' failed to unpack the object at pos %zd with error "
                     "\"Overflow when unpacking long long\"", fn, arg, i + 1);
      else
        PyErr_Format(PyExc_TypeError, "%s(): argument '%s' failed to unpack the object at pos %zd with error "
                     "\"type must be tuple of ints,but got %s\"", fn, arg, i + 1, obj_label(item));
      return -1;
    }
  }
  if (size > 1 && n == 1 && !keep_len) {   /* kernel_size=(3,) for int[2] */
    for (int i = 1; i < size; i++) out->v[i] = out->v[0];
    out->n = size;
    return 0;
  }
  out->n = (int)n;
  return 0;
}

/* A tensor given for a Scalar or float: it must hold one element. */
static int check_one_element(const THTensor *t) {
  if (THTensor_numel(t) == 1) return THP_refuse_meta_value(t);
  PyErr_Format(PyExc_RuntimeError, "a Tensor with %lld elements cannot be converted to Scalar",
               (long long)THTensor_numel(t));
  return -1;
}

/* Ints in [2**63, 2**64): PyTorch keeps them as uint64 Scalars. cthtorch has
 * no uint64 dtype, so such an int is exact only where it meets floating
 * point: while parsing an op's arguments (allow_uint64) it becomes the float
 * Scalar of its value, which gives the same dtype and value as an int Scalar
 * wherever a floating tensor or an explicit floating dtype decides the
 * result; check_uint64_scalars refuses it everywhere else, with the text
 * PyTorch gives when the value meets an int64 tensor (where PyTorch wraps it
 * silently in `x + 2**63` and `x < 2**63`, cthtorch raises). Beyond 64
 * bits: PyTorch's OverflowError. */
static __thread bool uint64_seen;   /* one parse at a time per thread (the GIL is held) */

static int scalar_overflow(PyObject *o, ATScalar *out, bool allow_uint64) {
  unsigned long long u = PyLong_AsUnsignedLongLong(o);
  if (u == (unsigned long long)-1 && PyErr_Occurred()) {
    if (PyErr_ExceptionMatches(PyExc_OverflowError) && _PyLong_Sign(o) > 0) {
      PyErr_Clear();
      PyErr_SetString(PyExc_OverflowError, "int too big to convert");
    }
    return -1;
  }
  if (allow_uint64) {
    uint64_seen = true;
    *out = at_scalar_float((double)u);
    return 0;
  }
  PyErr_SetString(PyExc_RuntimeError, "value cannot be converted to type int64_t without overflow");
  return -1;
}

static int to_scalar(PyObject *o, ATScalar *out, bool allow_uint64) {
  if (PyBool_Check(o)) { *out = at_scalar_bool(o == Py_True); return 0; }
  if (PyLong_Check(o)) {
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow) return scalar_overflow(o, out, allow_uint64);
    if (v == -1 && PyErr_Occurred()) return -1;
    *out = at_scalar_int(v);
    return 0;
  }
  if (PyFloat_Check(o)) { *out = at_scalar_float(PyFloat_AS_DOUBLE(o)); return 0; }
  if (THPTensor_Check(o)) {
    THTensor *t = ((THPTensor *)o)->t;
    if (check_one_element(t) < 0) return -1;
    if (THDtype_isFloating(t->dtype)) *out = at_scalar_float(at_item_double(t));
    else if (t->dtype == TH_Bool) *out = at_scalar_bool(at_item_int(t) != 0);
    else *out = at_scalar_int(at_item_int(t));
    return 0;
  }
  if (is_np_bool(o)) {   /* neither a Python bool nor an integer to torch's parser: a float scalar (t - np.True_ is t - 1.) */
    int v = PyObject_IsTrue(o);
    if (v < 0) return -1;
    *out = at_scalar_float(v);
    return 0;
  }
  if (PyIndex_Check(o) && !PySequence_Check(o)) {   /* numpy integer scalars */
    PyObject *i = PyNumber_Index(o);
    if (!i) return -1;
    int rc = to_scalar(i, out, allow_uint64);
    Py_DECREF(i);
    return rc;
  }
  double d = PyFloat_AsDouble(o);
  if (d == -1 && PyErr_Occurred()) return -1;
  *out = at_scalar_float(d);
  return 0;
}

int ap_to_scalar(PyObject *o, ATScalar *out) { return to_scalar(o, out, false); }

/* After a parse that met an int in [2**63, 2**64): it stands as its float
 * value only beside a floating tensor argument (self included; wrapped
 * numbers do not count) or an explicit floating dtype=. */
static int check_uint64_scalars(APResult *r, PyObject *self) {
  if (self && THPTensor_Check(self) && THDtype_isFloating(((THPTensor *)self)->t->dtype)) return 0;
  const char *cpp = "int64_t";   /* the C++ type torch's text names: an integer dtype= given */
  for (int j = 0; j < r->sig->nparams; j++) {
    PyObject *o = r->obj[j];
    if (!o || o == Py_None || o == (PyObject *)-1) continue;
    if (THPTensor_Check(o) && !((THPTensor *)o)->t->wrapped_number &&
        THDtype_isFloating(((THPTensor *)o)->t->dtype))
      return 0;
    if (r->sig->params[j].type == AP_DTYPE && (o == (PyObject *)&PyFloat_Type ||
                                                (THPDtype_Check(o) && THDtype_isFloating(((THPDtype *)o)->dtype))))
      return 0;
    if (r->sig->params[j].type == AP_DTYPE && THPDtype_Check(o)) {
      static const char *names[TH_NDTYPES] = { [TH_Bool] = "bool", [TH_UInt8] = "uint8_t", [TH_Int8] = "int8_t",
                                               [TH_Int16] = "int16_t", [TH_Int32] = "int", [TH_Int64] = "int64_t" };
      THDtype dt = ((THPDtype *)o)->dtype;
      if (dt >= 0 && dt < TH_NDTYPES && names[dt]) cpp = names[dt];
    }
  }
  PyErr_Format(PyExc_RuntimeError, "value cannot be converted to type %s without overflow", cpp);
  return -1;
}

static int to_double(PyObject *o, double *out) {
  if (THPTensor_Check(o)) {
    THTensor *t = ((THPTensor *)o)->t;
    if (check_one_element(t) < 0) return -1;
    *out = at_item_double(t);
    return 0;
  }
  double d = PyFloat_AsDouble(o);
  if (d == -1 && PyErr_Occurred()) return -1;
  *out = d;
  return 0;
}

int ap_to_intlist(PyObject *o, ATIntList *out, const char *fn, const char *arg) {
  if (!is_intlist(o, 1)) {
    PyErr_Format(PyExc_TypeError, "%s(): argument '%s' must be tuple of ints, not %s", fn, arg, obj_label(o));
    return -1;
  }
  return convert_intlist(o, out, 0, false, fn, arg);
}

/* The lists[] slot of int[] parameter j, filled from its default; -1 if none. */
static int default_list(APResult *r, const APParam *p) {
  if (!p->def_list_given) return -1;
  ATIntList *l = &r->lists[r->nlists];
  l->n = p->def_list_n;
  memcpy(l->v, p->def_list, sizeof(int64_t) * p->def_list_n);
  return r->nlists++;
}

/* Second pass, once an overload matched: every argument is converted and
 * checked here, once (ints, int lists, Scalars, floats, bools), so that no
 * accessor can fail later; numbers given for Tensor parameters become
 * wrapped 0-d tensors. Raises PyTorch's error for what does not fit. */
static int finish(APResult *r, PyObject *const *args, Py_ssize_t nargs) {
  const APSignature *sig = r->sig;
  for (int j = 0; j < sig->nparams; j++) {
    const APParam *p = &sig->params[j];
    PyObject *o = r->obj[j];
    r->list_of[j] = -1;
    if (o == (PyObject *)-1) {   /* varargs ints */
      PyObject *t = PyTuple_New(nargs);
      if (!t) return -1;
      for (Py_ssize_t i = 0; i < nargs; i++) { Py_INCREF(args[i]); PyTuple_SET_ITEM(t, i, args[i]); }
      r->owned[r->nowned++] = t;
      r->obj[j] = o = t;
    }
    bool is_list = p->type == AP_INTLIST || p->type == AP_DIMLIST;
    if (is_list && r->nlists >= (int)(sizeof r->lists / sizeof r->lists[0])) {
      PyErr_Format(PyExc_RuntimeError, "%s(): too many int[] parameters for the argument parser", sig->name);
      return -1;
    }
    if (!o || o == Py_None) {
      if (is_list && !o) r->list_of[j] = (int8_t)default_list(r, p);
      continue;
    }
    switch (p->type) {
      case AP_LAYOUT:
        if (o != THPLayout_strided) {   /* sparse tensors come from sparse_coo_tensor */
          PyObject *name = PyObject_Repr(o);
          if (name)
            PyErr_Format(PyExc_NotImplementedError, "cthtorch: %s(layout=%U) is not implemented; only torch.strided "
                         "tensors come from factory functions (build sparse COO tensors with torch.sparse_coo_tensor "
                         "or Tensor.to_sparse())", sig->name, name);
          Py_XDECREF(name);
          return -1;
        }
        break;
      case AP_TENSOR:
        if (!THPTensor_Check(o) && PyComplex_Check(o)) {   /* a wrapped complex128 number */
          THTensor *c = THP_complex_number(o);
          PyObject *w = c ? THPTensor_wrap(c) : NULL;
          if (!w) return -1;
          r->owned[r->nowned++] = w;
          r->obj[j] = w;
        } else if (!THPTensor_Check(o)) {
          ATScalar s;
          if (to_scalar(o, &s, true) < 0) return -1;
          THTensor *t = at_scalar_tensor(s, s.kind == AT_SCALAR_FLOAT ? TH_Double : (s.kind == AT_SCALAR_INT ? TH_Int64 : TH_Bool));
          if (!t) return THP_raise_int();
          t->wrapped_number = true;
          PyObject *w = THPTensor_wrap(t);
          if (!w) return -1;
          r->owned[r->nowned++] = w;
          r->obj[j] = w;
        }
        break;
      case AP_SCALAR:
        if (to_scalar(o, &r->val[j].s, true) < 0) return -1;
        break;
      case AP_INT:
        if (unpack_int(o, &r->val[j].i) < 0) return -1;
        break;
      case AP_INTLIST:
      case AP_DIMLIST:
        if (convert_intlist(o, &r->lists[r->nlists], p->type == AP_DIMLIST ? 1 : p->size, p->keep_len, sig->name,
                            p->name) < 0)
          return -1;
        r->list_of[j] = (int8_t)r->nlists++;
        break;
      case AP_FLOAT:
        if (to_double(o, &r->val[j].d) < 0) return -1;
        break;
      case AP_BOOL: {
        int b = PyObject_IsTrue(o);
        if (b < 0) return -1;
        r->val[j].b = b;
        break;
      }
      default:
        break;
    }
  }
  return 0;
}

/* ---------- sparse tensors (see ArgParser.h) ---------- */

static PyObject *sparse_cls, *sparse_fn;   /* owned; set once by cthtorch/_sparse_factory.py (install) */

bool ap_is_sparse(PyObject *o) {
  return sparse_cls && PyObject_TypeCheck(o, (PyTypeObject *)sparse_cls);
}

static bool any_sparse(PyObject *const *args, Py_ssize_t n) {
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *o = args[i];
    if (ap_is_sparse(o)) return true;
    if (PyList_Check(o) || PyTuple_Check(o))
      for (Py_ssize_t j = 0; j < PySequence_Fast_GET_SIZE(o); j++)
        if (ap_is_sparse(PySequence_Fast_GET_ITEM(o, j))) return true;
  }
  return false;
}

static void set_sparse_error(const char *op) {
  PyErr_Format(PyExc_NotImplementedError,
               "Could not run 'aten::%s' with arguments from the 'SparseCPU' backend. This could be because the "
               "operator doesn't exist for this backend, or was omitted during the selective/custom build process "
               "(if using custom build). (cthtorch implements a few sparse COO ops; see README.md)", op);
}

PyObject *THP_sparse_kernel_missing(PyObject *m, PyObject *name) {
  const char *op = PyUnicode_AsUTF8(name);
  if (op) set_sparse_error(op);
  return NULL;
}

PyObject *THP_set_sparse_dispatch(PyObject *m, PyObject *args) {
  PyObject *cls, *fn;
  if (!PyArg_ParseTuple(args, "O!O", &PyType_Type, &cls, &fn)) return NULL;
  Py_XSETREF(sparse_cls, Py_NewRef(cls));
  Py_XSETREF(sparse_fn, Py_NewRef(fn));
  Py_RETURN_NONE;
}

PyObject *ap_sparse_call(APParser *p, PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
  PyObject *et, *ev, *tb;   /* the NotImplementedError ap_parse set */
  PyErr_Fetch(&et, &ev, &tb);
  PyObject *targs = PyTuple_New(nargs), *kw = PyDict_New(), *res = NULL;
  if (!targs || !kw) goto done;
  for (Py_ssize_t i = 0; i < nargs; i++) PyTuple_SET_ITEM(targs, i, Py_NewRef(args[i]));
  for (Py_ssize_t k = 0; kwnames && k < PyTuple_GET_SIZE(kwnames); k++)
    if (PyDict_SetItem(kw, PyTuple_GET_ITEM(kwnames, k), args[nargs + k]) < 0) goto done;
  res = PyObject_CallFunction(sparse_fn, "sOOO", p->parsed[0].name, self ? self : Py_None, targs, kw);
  if (res == Py_NotImplemented) {   /* no sparse kernel: PyTorch's error */
    Py_CLEAR(res);
    PyErr_Restore(et, ev, tb);
    et = ev = tb = NULL;
  }
done:
  Py_XDECREF(et);
  Py_XDECREF(ev);
  Py_XDECREF(tb);
  Py_XDECREF(targs);
  Py_XDECREF(kw);
  return res;
}

/* dtypes torch has and cthtorch does not (complex, uint16..64, float8, quantized) are
 * objects of one Python class (cthtorch/_dtype_info.py), so programs that name them
 * import; passed to an op they fail its parse and are reported as not implemented,
 * never read as a default dtype. */
static PyObject *unimplemented_dtype_cls;   /* owned; set once at import */

PyObject *THP_set_unimplemented_dtype(PyObject *m, PyObject *cls) {
  if (!PyType_Check(cls)) { PyErr_SetString(PyExc_TypeError, "expected a class"); return NULL; }
  Py_XSETREF(unimplemented_dtype_cls, Py_NewRef(cls));
  Py_RETURN_NONE;
}

bool ap_unimplemented_dtype_error(const char *fn, PyObject *o) {
  if (!unimplemented_dtype_cls || !PyObject_TypeCheck(o, (PyTypeObject *)unimplemented_dtype_cls)) return false;
  PyErr_Format(PyExc_NotImplementedError, "%s(): the dtype %R is not implemented in cthtorch", fn, o);
  return true;
}

static PyObject *find_unimplemented_dtype(PyObject *const *args, Py_ssize_t n) {
  for (Py_ssize_t i = 0; i < n; i++)
    if (PyObject_TypeCheck(args[i], (PyTypeObject *)unimplemented_dtype_cls)) return args[i];
  return NULL;
}

int ap_parse(APParser *p, PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
             APResult *r) {
  char why[512], first_why[512] = "";
  r->sparse = false;
  if (ensure_ready(p) < 0) return -1;
  r->nowned = 0;
  r->nlists = 0;
  for (int i = 0; i < p->nsigs; i++) {
    if (match(&p->parsed[i], self, args, nargs, kwnames, r->obj, why, sizeof why)) {
      r->idx = i;
      r->sig = &p->parsed[i];
      uint64_seen = false;
      if (finish(r, args, nargs) < 0 || (uint64_seen && check_uint64_scalars(r, self) < 0)) {
        ap_release(r);
        return -1;
      }
      return i;
    }
    if (!first_why[0]) memcpy(first_why, why, sizeof why);
  }
  if (sparse_cls && any_sparse(args, nargs + (kwnames ? PyTuple_GET_SIZE(kwnames) : 0))) {
    r->sparse = true;
    set_sparse_error(p->parsed[0].name);
    return -1;
  }
  PyObject *udt = unimplemented_dtype_cls ?
      find_unimplemented_dtype(args, nargs + (kwnames ? PyTuple_GET_SIZE(kwnames) : 0)) : NULL;
  if (udt && ap_unimplemented_dtype_error(p->parsed[0].name, udt)) return -1;
  /* an argument overriding __torch_function__ (a vmap BatchedTensor, an fx Proxy) takes the call
   * in the binding's fallback, which drops this error: every op under vmap comes here, so the
   * list of overloads with their reasons is not built for it */
  if (first_why[0] && THP_has_torch_function(args, nargs + (kwnames ? PyTuple_GET_SIZE(kwnames) : 0))) {
    PyErr_SetString(PyExc_TypeError, first_why);
    return -1;
  }
  /* the error path only (a failed overload is routine when a later one matches): the one overload that
   * could take this many arguments, if just one could, is parsed again for its reason */
  Py_ssize_t nall = nargs + (kwnames ? PyTuple_GET_SIZE(kwnames) : 0);
  int nplausible = 0, which = -1;
  for (int i = 0; i < p->nsigs; i++)
    if (plausible(&p->parsed[i], self != NULL, nall)) { nplausible++; which = i; }
  if (nplausible == 1 && match(&p->parsed[which], self, args, nargs, kwnames, r->obj, why, sizeof why))
    nplausible = 0;   /* cannot happen (it failed above); the list of overloads then */
  raise_no_match(p, self, args, nargs, kwnames, first_why, why, nplausible);
  return -1;
}

int ap_parse_tuple(APParser *p, PyObject *self, PyObject *args, PyObject *kwargs, APResult *r) {
  Py_ssize_t n = args ? PyTuple_GET_SIZE(args) : 0, nk = kwargs ? PyDict_GET_SIZE(kwargs) : 0;
  PyObject *stack[AP_MAX_ARGS * 2];
  PyObject *kwnames = NULL;
  if (n + nk > AP_MAX_ARGS * 2) { PyErr_SetString(PyExc_TypeError, "too many arguments"); return -1; }
  for (Py_ssize_t i = 0; i < n; i++) stack[i] = PyTuple_GET_ITEM(args, i);
  if (nk) {
    kwnames = PyTuple_New(nk);
    if (!kwnames) return -1;
    Py_ssize_t pos = 0, k = 0;
    PyObject *key, *val;
    while (PyDict_Next(kwargs, &pos, &key, &val)) {
      Py_INCREF(key);
      PyTuple_SET_ITEM(kwnames, k, key);
      stack[n + k++] = val;
    }
  }
  int rc = ap_parse(p, self, stack, n, kwnames, r);
  /* obj[] entries borrow from args/kwargs, which outlive the call */
  Py_XDECREF(kwnames);
  return rc;
}

void ap_release(APResult *r) {
  for (int i = 0; i < r->nowned; i++) Py_DECREF(r->owned[i]);
  r->nowned = 0;
}

/* ---------- accessors ---------- */

static const APParam absent_param = { .type = AP_OBJECT };
/* Parameter i of the matched signature, or an absent one past its end
 * (so a wrong index in a caller reads a default instead of garbage). */
static inline const APParam *param(APResult *r, int i) {
  return (i >= 0 && i < r->sig->nparams) ? &r->sig->params[i] : &absent_param;
}

static inline PyObject *get(APResult *r, int i) {
  if (i < 0 || i >= r->sig->nparams) return NULL;
  PyObject *o = r->obj[i];
  return (o == Py_None) ? NULL : o;
}

struct THPTensor *ap_tensor(APResult *r, int i) { return (THPTensor *)get(r, i); }

/* The accessors read what finish() converted; a parameter of another kind
 * (a caller reading an object parameter as an int) is converted here, and
 * its error, which can only come from such a caller, is reported unraisable. */
static bool is_kind(APResult *r, int i, APType t) { return i >= 0 && i < r->sig->nparams && r->sig->params[i].type == t; }

static void lost_error(void) {
  if (PyErr_Occurred()) PyErr_WriteUnraisable(NULL);
}

int ap_warn_deprecated(const char *text) {
  static int warned;
  if (warned) return 0;
  warned = 1;
  return THP_warn(PyExc_UserWarning, text);
}

ATScalar ap_scalar(APResult *r, int i) {
  PyObject *o = get(r, i);
  const APParam *p = param(r, i);
  if (!o) return p->def_is_float ? at_scalar_float(p->def_float) : at_scalar_int(p->def_int);
  if (is_kind(r, i, AP_SCALAR)) return r->val[i].s;
  ATScalar s = at_scalar_int(0);
  if (ap_to_scalar(o, &s) < 0) lost_error();
  return s;
}

ATOptScalar ap_optscalar(APResult *r, int i) {
  ATOptScalar v = { false, at_scalar_int(0) };
  PyObject *o = get(r, i);
  if (!o) return v;
  v.has = true;
  v.v = ap_scalar(r, i);
  return v;
}

int64_t ap_int(APResult *r, int i) {
  PyObject *o = get(r, i);
  int64_t v = (*param(r, i)).def_int;
  if (!o) return v;
  if (is_kind(r, i, AP_INT)) return r->val[i].i;
  if (unpack_int(o, &v) < 0) lost_error();
  return v;
}

ATOptInt ap_optint(APResult *r, int i) {
  PyObject *o = get(r, i);
  ATOptInt v = { false, 0 };
  if (!o) {
    const APParam *p = param(r, i);
    if (p->has_default && !p->default_none && (i < r->sig->nparams && r->obj[i] != Py_None)) { v.has = true; v.v = p->def_int; }
    return v;
  }
  v.has = true;
  v.v = ap_int(r, i);
  return v;
}

double ap_float(APResult *r, int i) {
  PyObject *o = get(r, i);
  if (!o) return (*param(r, i)).def_float;
  if (is_kind(r, i, AP_FLOAT)) return r->val[i].d;
  double d = 0;
  if (to_double(o, &d) < 0) lost_error();
  return d;
}

ATOptDouble ap_optfloat(APResult *r, int i) {
  PyObject *o = get(r, i);
  ATOptDouble v = { false, 0 };
  if (!o) {
    const APParam *p = param(r, i);
    if (p->has_default && !p->default_none && (i < r->sig->nparams && r->obj[i] != Py_None)) { v.has = true; v.v = p->def_float; }
    return v;
  }
  v.has = true;
  v.v = ap_float(r, i);
  return v;
}

bool ap_bool(APResult *r, int i) {
  PyObject *o = get(r, i);
  if (!o) return (*param(r, i)).def_bool;
  if (is_kind(r, i, AP_BOOL)) return r->val[i].b;
  int b = PyObject_IsTrue(o);
  if (b < 0) lost_error();
  return b == 1;
}

int ap_optbool(APResult *r, int i) {
  PyObject *o = get(r, i);
  if (!o) {
    const APParam *p = param(r, i);
    return (p->default_none || (i < r->sig->nparams && r->obj[i] == Py_None)) ? -1 : p->def_bool;
  }
  return ap_bool(r, i);
}

const ATIntList *ap_intlist(APResult *r, int i) {
  if (is_kind(r, i, AP_INTLIST) || is_kind(r, i, AP_DIMLIST))
    return r->list_of[i] >= 0 ? &r->lists[r->list_of[i]] : NULL;
  return NULL;
}

THDtype ap_dtype(APResult *r, int i, THDtype dflt) {
  PyObject *o = get(r, i);
  if (!o) return dflt;
  if (THPDtype_Check(o)) return ((THPDtype *)o)->dtype;
  if (o == (PyObject *)&PyFloat_Type) return TH_Double;
  if (o == (PyObject *)&PyLong_Type) return TH_Int64;
  if (o == (PyObject *)&PyBool_Type) return TH_Bool;
  return dflt;
}

const char *ap_string(APResult *r, int i) {
  PyObject *o = get(r, i);
  if (!o) return (*param(r, i)).def_str;
  return PyUnicode_AsUTF8(o);
}

PyObject *ap_object(APResult *r, int i) { return (i >= 0 && i < r->sig->nparams) ? r->obj[i] : NULL; }
bool ap_isnone(APResult *r, int i) { return get(r, i) == NULL; }

int ap_device_check(APResult *r, int i) {
  int type, index;
  return THPDevice_parse(get(r, i), &type, &index);
}
