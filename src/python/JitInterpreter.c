/* The JIT's interpreter in C: `_C._JitProgram`, a graph lowered once (by
 * cthtorch/jit/_c_interpreter.py) into a flat instruction array over a
 * register file of PyObject*, run without going back to Python per op.
 *
 * aten ops run as boxed calls (`boxed_<op>`, generated next to the bindings
 * by tools/generate_code.py): the schema's arguments positionally, through
 * the binding's own parser and VT function, so autograd records and the
 * dispatch observers (tracer, profiler) see each op as in eager mode. What
 * has no boxed call (Python composites, attribute access, scalar arithmetic
 * on Python numbers, fused groups) is a CALL of a Python callable. prim::If
 * and prim::Loop become jumps, as torch's interpreter flattens blocks.
 *
 * References: a register owns its object (None when empty). Every instruction
 * that writes a register releases what it held; a run ends by releasing the
 * whole file, on success and on error alike. The GIL is held throughout
 * (kernels release it inside). */
#include "THP.h"
#include <structmember.h>

/* The generated table (declared in the generated Functions.c too). */
typedef PyObject *(*THPJitBoxedFn)(PyObject *const *stack, Py_ssize_t n);
typedef struct { const char *name; THPJitBoxedFn fn; const char *params; } THPJitBoxedEntry;
enum { THP_JIT_SCALARTYPE, THP_JIT_LAYOUT, THP_JIT_MEMORYFORMAT };
extern const THPJitBoxedEntry THP_generated_boxed_ops[];

/* ---- enum ids: graphs hold dtypes, layouts and memory formats as ints ---- */
static PyObject *enum_tables[3];   /* tuples indexed by id; set by _C._jit_set_enum_tables */

PyObject *THP_jit_enum(int kind, PyObject *id) {
  static const char *const what[] = {"ScalarType", "Layout", "MemoryFormat"};
  Py_ssize_t i = PyLong_AsSsize_t(id);
  if (i == -1 && PyErr_Occurred()) return NULL;
  PyObject *t = enum_tables[kind];
  if (!t || i < 0 || i >= PyTuple_GET_SIZE(t) || PyTuple_GET_ITEM(t, i) == Py_None) {
    PyErr_Format(PyExc_RuntimeError, "the JIT interpreter has no %s with id %zd", what[kind], i);
    return NULL;
  }
  return Py_NewRef(PyTuple_GET_ITEM(t, i));
}

PyObject *THP_jit_too_many_args(const char *op, int max, Py_ssize_t n) {
  PyErr_Format(PyExc_RuntimeError, "%s takes at most %d arguments, but the graph gave %zd", op, max, n);
  return NULL;
}

static PyObject *set_enum_tables(PyObject *m, PyObject *args) {
  PyObject *t[3];
  if (!PyArg_ParseTuple(args, "O!O!O!", &PyTuple_Type, &t[0], &PyTuple_Type, &t[1], &PyTuple_Type, &t[2]))
    return NULL;
  for (int k = 0; k < 3; k++) Py_XSETREF(enum_tables[k], Py_NewRef(t[k]));
  Py_RETURN_NONE;
}

/* ---- attributes of a script module ----
 * A ScriptModule's parameters, buffers and submodules live in its registries
 * (_parameters, _buffers, _modules; methods in _methods), not in its
 * __dict__, so the ordinary lookup misses and runs its Python __getattr__: a
 * scripted forward reads dozens of them. Where the type is known to use that
 * __getattr__ (set by _C._jit_set_module_getattr) and neither the type nor
 * __dict__ holds the name, the registries are read here, in __getattr__'s
 * order; anything else takes the ordinary lookup. */
static PyObject *module_getattr;   /* ScriptModule.__getattr__ (a function) */

static PyObject *set_module_getattr(PyObject *m, PyObject *fn) {
  Py_XSETREF(module_getattr, Py_NewRef(fn));
  Py_RETURN_NONE;
}

static PyObject *getattr_str;        /* "__getattr__", interned */
static PyObject *registry_names[4];  /* "_methods", "_parameters", "_buffers", "_modules": __getattr__'s order */

static int intern_names(void) {
  static const char *const registries[] = {"_methods", "_parameters", "_buffers", "_modules"};
  if (getattr_str) return 0;
  for (int k = 0; k < 4; k++)
    if (!registry_names[k] && !(registry_names[k] = PyUnicode_InternFromString(registries[k]))) return -1;
  return (getattr_str = PyUnicode_InternFromString("__getattr__")) ? 0 : -1;
}

/* A new reference, or NULL with no error set when the fast path does not apply. */
static PyObject *module_registry_attr(PyObject *obj, PyObject *name) {
  PyTypeObject *tp = Py_TYPE(obj);
  if (!module_getattr || !(tp->tp_flags & Py_TPFLAGS_HEAPTYPE)) return NULL;
  if (intern_names() < 0) { PyErr_Clear(); return NULL; }
  if (_PyType_Lookup(tp, getattr_str) != module_getattr || _PyType_Lookup(tp, name)) return NULL;
  PyObject **dp = _PyObject_GetDictPtr(obj);
  if (!dp && PyErr_Occurred()) PyErr_Clear();
  PyObject *d = dp ? *dp : NULL;
  if (!d || !PyDict_CheckExact(d)) return NULL;
  PyObject *own = PyDict_GetItemWithError(d, name);
  if (own || PyErr_Occurred()) { PyErr_Clear(); return NULL; }
  for (int k = 0; k < 4; k++) {
    PyObject *reg = PyDict_GetItemWithError(d, registry_names[k]);
    if (!reg) {
      if (PyErr_Occurred()) { PyErr_Clear(); return NULL; }
      continue;
    }
    if (!PyDict_CheckExact(reg) && !PyODict_CheckExact(reg)) return NULL;   /* dict's own lookup */
    PyObject *v = PyDict_GetItemWithError(reg, name);
    if (v) return Py_NewRef(v);
    if (PyErr_Occurred()) { PyErr_Clear(); return NULL; }
  }
  return NULL;   /* not there: the ordinary lookup raises __getattr__'s error */
}

/* ---- the boxed-op table, looked up by name when a graph is lowered ---- */
static PyObject *boxed_index;   /* name -> int index into THP_generated_boxed_ops */

static int ensure_index(void) {
  if (boxed_index) return 0;
  PyObject *d = PyDict_New();
  if (!d) return -1;
  for (Py_ssize_t i = 0; THP_generated_boxed_ops[i].name; i++) {
    PyObject *v = PyLong_FromSsize_t(i);
    int rc = v ? PyDict_SetItemString(d, THP_generated_boxed_ops[i].name, v) : -1;
    Py_XDECREF(v);
    if (rc < 0) { Py_DECREF(d); return -1; }
  }
  boxed_index = d;
  return 0;
}

/* _C._jit_boxed_params(name) -> "self,other,alpha" (the positional order the
 * boxed call takes), or None when the op has no boxed call. */
static PyObject *boxed_params(PyObject *m, PyObject *name) {
  if (ensure_index() < 0) return NULL;
  PyObject *i = PyDict_GetItemWithError(boxed_index, name);
  if (!i) { if (PyErr_Occurred()) return NULL; Py_RETURN_NONE; }
  return PyUnicode_FromString(THP_generated_boxed_ops[PyLong_AsSsize_t(i)].params);
}

/* _C._jit_boxed_ops() -> {name: "self,other,alpha"}: every boxed call, for
 * the lowering to find an overload by its parameters. */
static PyObject *boxed_ops(PyObject *m, PyObject *unused) {
  PyObject *d = PyDict_New();
  if (!d) return NULL;
  for (Py_ssize_t i = 0; THP_generated_boxed_ops[i].name; i++) {
    PyObject *v = PyUnicode_FromString(THP_generated_boxed_ops[i].params);
    int rc = v ? PyDict_SetItemString(d, THP_generated_boxed_ops[i].name, v) : -1;
    Py_XDECREF(v);
    if (rc < 0) { Py_DECREF(d); return NULL; }
  }
  return d;
}

/* ---- instructions ---- */
typedef enum {
  I_BOXED,    /* out = fn(ins...)               (a tuple result unpacks into outs) */
  I_CALL,     /* outs = callable(ins..., kwnames) */
  I_GETATTR,  /* out = getattr(in0, name) */
  I_TUPLE,    /* out = tuple(ins) */
  I_LIST,     /* out = list(ins) */
  I_UNPACK,   /* outs = in0 (a tuple or list of exactly len(outs)) */
  I_MOVE,     /* outs = ins, all at once (the registers may overlap) */
  I_JF,       /* if not in0: goto target */
  I_JUMP,     /* goto target */
  I_LOOPTEST, /* ins: trip, cond, counter; if cond and counter < trip: out0 = counter, else goto target */
  I_INCR,     /* in0 += 1 (the loop counter) */
  I_CLEAR,    /* ins = NULL (a loop body's temporaries, freed each iteration as eager frees them) */
} IKind;

static const char *const kind_names[] = {"BOXED", "CALL", "GETATTR", "TUPLE", "LIST", "UNPACK", "MOVE", "JF",
                                         "JUMP", "LOOPTEST", "INCR", "CLEAR"};
#define N_KINDS ((int)(sizeof(kind_names) / sizeof(*kind_names)))

typedef struct {
  IKind kind;
  int nin, nout;
  int *in, *out;       /* register numbers */
  int target;          /* jump target (JF, JUMP, LOOPTEST) */
  THPJitBoxedFn fn;    /* BOXED */
  PyObject *obj;       /* CALL: the callable; GETATTR: the name */
  PyObject *kwnames;   /* CALL: names of the last arguments, or NULL */
  PyObject *where;     /* the node, for errors (a str: its kind and source range), or NULL */
} Instr;

typedef struct {
  PyObject_HEAD
  Instr *code;
  int ncode;
  int nregs;
  PyObject *consts;    /* tuple of nregs: the register file's starting values (None = empty) */
  int *inputs, nin;
  int *outputs, nout;
  vectorcallfunc vectorcall;
  long long runs;      /* how many times it ran (tests assert the C path ran) */
  long long ops;       /* instructions executed, over all runs */
} JitProgram;

static int *int_array(PyObject *seq, int *n, int nregs, const char *what) {
  PyObject *f = PySequence_Fast(seq, what);
  if (!f) return NULL;
  Py_ssize_t len = PySequence_Fast_GET_SIZE(f);
  int *a = PyMem_Calloc(len ? len : 1, sizeof(int));
  if (!a) { Py_DECREF(f); PyErr_NoMemory(); return NULL; }
  for (Py_ssize_t i = 0; i < len; i++) {
    long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(f, i));
    if (v == -1 && PyErr_Occurred()) goto bad;
    if (v < 0 || v >= nregs) {
      PyErr_Format(PyExc_ValueError, "_JitProgram: %s register %ld out of range (%d registers)", what, v, nregs);
      goto bad;
    }
    a[i] = (int)v;
  }
  *n = (int)len;
  Py_DECREF(f);
  return a;
bad:
  PyMem_Free(a);
  Py_DECREF(f);
  return NULL;
}

static void program_clear_code(JitProgram *p) {
  for (int i = 0; i < p->ncode; i++) {
    PyMem_Free(p->code[i].in);
    PyMem_Free(p->code[i].out);
    Py_CLEAR(p->code[i].obj);
    Py_CLEAR(p->code[i].kwnames);
    Py_CLEAR(p->code[i].where);
  }
  PyMem_Free(p->code);
  p->code = NULL;
  p->ncode = 0;
}

static int program_traverse(JitProgram *p, visitproc visit, void *arg) {
  Py_VISIT(p->consts);
  for (int i = 0; i < p->ncode; i++) {
    Py_VISIT(p->code[i].obj);
    Py_VISIT(p->code[i].where);
  }
  return 0;
}

static int program_tp_clear(JitProgram *p) {
  Py_CLEAR(p->consts);
  for (int i = 0; i < p->ncode; i++) {
    Py_CLEAR(p->code[i].obj);
    Py_CLEAR(p->code[i].where);
  }
  return 0;
}

static void program_dealloc(JitProgram *p) {
  PyObject_GC_UnTrack(p);
  program_clear_code(p);
  Py_CLEAR(p->consts);
  PyMem_Free(p->inputs);
  PyMem_Free(p->outputs);
  Py_TYPE(p)->tp_free((PyObject *)p);
}

/* One instruction from its Python tuple:
 *   (kind, ins, outs, target, payload, kwnames, where)
 * payload: the boxed op's name (BOXED), the callable (CALL), the attribute name (GETATTR), else None. */
static int parse_instr(JitProgram *p, PyObject *t, Instr *in, int ncode) {
  int kind, target;
  PyObject *ins, *outs, *payload, *kwnames, *where;
  if (!PyTuple_Check(t) || !PyArg_ParseTuple(t, "iOOiOOO", &kind, &ins, &outs, &target, &payload, &kwnames, &where)) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "_JitProgram: an instruction must be a 7-tuple");
    return -1;
  }
  if (kind < 0 || kind >= N_KINDS) { PyErr_Format(PyExc_ValueError, "_JitProgram: bad instruction kind %d", kind); return -1; }
  in->kind = (IKind)kind;
  if (!(in->in = int_array(ins, &in->nin, p->nregs, "input"))) return -1;
  if (!(in->out = int_array(outs, &in->nout, p->nregs, "output"))) return -1;
  if ((kind == I_JF || kind == I_JUMP || kind == I_LOOPTEST) && (target < 0 || target > ncode)) {
    PyErr_Format(PyExc_ValueError, "_JitProgram: jump target %d out of range", target);
    return -1;
  }
  in->target = target;
  if ((kind == I_JF || kind == I_INCR || kind == I_UNPACK || kind == I_GETATTR) && in->nin != 1) goto arity;
  if (kind == I_LOOPTEST && (in->nin != 3 || in->nout != 1)) goto arity;
  if (kind == I_MOVE && in->nin != in->nout) goto arity;
  if ((kind == I_TUPLE || kind == I_LIST || kind == I_GETATTR) && in->nout != 1) goto arity;
  if (kind == I_BOXED) {
    if (ensure_index() < 0) return -1;
    PyObject *i = PyDict_GetItemWithError(boxed_index, payload);
    if (!i) {
      if (!PyErr_Occurred()) PyErr_Format(PyExc_KeyError, "_JitProgram: no boxed call for %R", payload);
      return -1;
    }
    in->fn = THP_generated_boxed_ops[PyLong_AsSsize_t(i)].fn;
  } else if (kind == I_CALL) {
    if (!PyCallable_Check(payload)) { PyErr_SetString(PyExc_TypeError, "_JitProgram: CALL needs a callable"); return -1; }
    in->obj = Py_NewRef(payload);
    if (kwnames != Py_None) {
      if (!PyTuple_Check(kwnames) || PyTuple_GET_SIZE(kwnames) > in->nin) {
        PyErr_SetString(PyExc_ValueError, "_JitProgram: kwnames must be a tuple no longer than the inputs");
        return -1;
      }
      if (PyTuple_GET_SIZE(kwnames)) in->kwnames = Py_NewRef(kwnames);
    }
  } else if (kind == I_GETATTR) {
    if (!PyUnicode_Check(payload)) { PyErr_SetString(PyExc_TypeError, "_JitProgram: GETATTR needs a name"); return -1; }
    in->obj = Py_NewRef(payload);
  }
  if (where != Py_None) in->where = Py_NewRef(where);
  return 0;
arity:
  PyErr_Format(PyExc_ValueError, "_JitProgram: %s with %d inputs and %d outputs", kind_names[kind], in->nin, in->nout);
  return -1;
}

static PyObject *program_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames);

/* _JitProgram(code, consts, inputs, outputs) */
static PyObject *program_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  PyObject *code, *consts, *inputs, *outputs;
  static char *kw[] = {"code", "consts", "inputs", "outputs", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!O!OO", kw, &PyList_Type, &code, &PyTuple_Type, &consts,
                                   &inputs, &outputs))
    return NULL;
  JitProgram *p = (JitProgram *)type->tp_alloc(type, 0);
  if (!p) return NULL;
  p->vectorcall = program_vectorcall;
  p->nregs = (int)PyTuple_GET_SIZE(consts);
  p->consts = Py_NewRef(consts);
  if (!(p->inputs = int_array(inputs, &p->nin, p->nregs, "input"))) goto fail;
  if (!(p->outputs = int_array(outputs, &p->nout, p->nregs, "output"))) goto fail;
  Py_ssize_t n = PyList_GET_SIZE(code);
  p->code = PyMem_Calloc(n ? n : 1, sizeof(Instr));
  if (!p->code) { PyErr_NoMemory(); goto fail; }
  p->ncode = (int)n;
  for (Py_ssize_t i = 0; i < n; i++)
    if (parse_instr(p, PyList_GET_ITEM(code, i), &p->code[i], (int)n) < 0) goto fail;
  return (PyObject *)p;
fail:
  Py_DECREF(p);
  return NULL;
}

static inline void set_reg(PyObject **regs, int r, PyObject *v) {   /* steals v */
  PyObject *old = regs[r];
  regs[r] = v;
  Py_DECREF(old);
}

/* outs = the items of seq (a result of several values) */
static int unpack_into(PyObject **regs, const Instr *in, PyObject *seq) {
  if (!PyTuple_Check(seq) && !PyList_Check(seq)) {
    PyErr_Format(PyExc_RuntimeError, "expected a tuple or list of %d values, got %s", in->nout, Py_TYPE(seq)->tp_name);
    return -1;
  }
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  if (n != in->nout) {
    PyErr_Format(PyExc_RuntimeError, "expected %d values, got %zd", in->nout, n);
    return -1;
  }
  for (int k = 0; k < in->nout; k++) set_reg(regs, in->out[k], Py_NewRef(PySequence_Fast_GET_ITEM(seq, k)));
  return 0;
}

/* the result of a BOXED or CALL instruction into its outputs (steals r) */
static int store_result(PyObject **regs, const Instr *in, PyObject *r) {
  if (in->nout == 1) { set_reg(regs, in->out[0], r); return 0; }
  int rc = in->nout == 0 ? 0 : unpack_into(regs, in, r);
  Py_DECREF(r);
  return rc;
}

#define MAX_STACK_ARGS 32

/* Runs p's code over regs. 0, or -1 with an error set. */
static int execute(JitProgram *p, PyObject **regs) {
  PyObject *argv[MAX_STACK_ARGS + 1];
  int pc = 0;
  long long ops = 0;
  while (pc < p->ncode) {
    const Instr *in = &p->code[pc];
    ops++;
    switch (in->kind) {
      case I_BOXED:
      case I_CALL: {
        PyObject **args = argv + 1;   /* argv[0] free for PY_VECTORCALL_ARGUMENTS_OFFSET */
        PyObject **heap = NULL;
        if (in->nin > MAX_STACK_ARGS) {
          heap = PyMem_Malloc(sizeof(PyObject *) * (in->nin + 1));
          if (!heap) { PyErr_NoMemory(); goto error; }
          args = heap + 1;
        }
        for (int k = 0; k < in->nin; k++) args[k] = regs[in->in[k]];
        PyObject *r;
        if (in->kind == I_BOXED) {
          r = in->fn(args, in->nin);
        } else {
          Py_ssize_t nk = in->kwnames ? PyTuple_GET_SIZE(in->kwnames) : 0;
          r = PyObject_Vectorcall(in->obj, args, (in->nin - nk) | PY_VECTORCALL_ARGUMENTS_OFFSET, in->kwnames);
        }
        PyMem_Free(heap);
        if (!r || store_result(regs, in, r) < 0) goto error;
        pc++;
        break;
      }
      case I_GETATTR: {
        PyObject *r = module_registry_attr(regs[in->in[0]], in->obj);
        if (!r && !(r = PyObject_GetAttr(regs[in->in[0]], in->obj))) goto error;
        set_reg(regs, in->out[0], r);
        pc++;
        break;
      }
      case I_TUPLE:
      case I_LIST: {
        PyObject *r = in->kind == I_TUPLE ? PyTuple_New(in->nin) : PyList_New(in->nin);
        if (!r) goto error;
        for (int k = 0; k < in->nin; k++) {
          PyObject *v = regs[in->in[k]];
          if (in->kind == I_TUPLE) PyTuple_SET_ITEM(r, k, Py_NewRef(v));
          else PyList_SET_ITEM(r, k, Py_NewRef(v));
        }
        set_reg(regs, in->out[0], r);
        pc++;
        break;
      }
      case I_UNPACK: {
        PyObject *seq = Py_NewRef(regs[in->in[0]]);   /* an output may be the sequence's own register */
        int rc = unpack_into(regs, in, seq);
        Py_DECREF(seq);
        if (rc < 0) goto error;
        pc++;
        break;
      }
      case I_MOVE: {
        /* new references to every source first: a source may be a destination too */
        PyObject *tmp[MAX_STACK_ARGS], **vals = tmp;
        if (in->nin > MAX_STACK_ARGS && !(vals = PyMem_Malloc(sizeof(PyObject *) * in->nin))) {
          PyErr_NoMemory();
          goto error;
        }
        for (int k = 0; k < in->nin; k++) vals[k] = Py_NewRef(regs[in->in[k]]);
        for (int k = 0; k < in->nout; k++) set_reg(regs, in->out[k], vals[k]);
        if (vals != tmp) PyMem_Free(vals);
        pc++;
        break;
      }
      case I_JF: {
        int t = PyObject_IsTrue(regs[in->in[0]]);
        if (t < 0) goto error;
        pc = t ? pc + 1 : in->target;
        break;
      }
      case I_JUMP:
        pc = in->target;
        break;
      case I_LOOPTEST: {
        int go = PyObject_IsTrue(regs[in->in[1]]);
        if (go < 0) goto error;
        if (go) {
          int overflow = 0;
          long long trip = PyLong_AsLongLongAndOverflow(regs[in->in[0]], &overflow);
          if (trip == -1 && PyErr_Occurred()) goto error;
          long long i = PyLong_AsLongLong(regs[in->in[2]]);
          if (i == -1 && PyErr_Occurred()) goto error;
          go = overflow > 0 || (overflow == 0 && i < trip);
        }
        if (!go) { pc = in->target; break; }
        set_reg(regs, in->out[0], Py_NewRef(regs[in->in[2]]));
        pc++;
        break;
      }
      case I_INCR: {
        long long i = PyLong_AsLongLong(regs[in->in[0]]);
        if (i == -1 && PyErr_Occurred()) goto error;
        PyObject *v = PyLong_FromLongLong(i + 1);
        if (!v) goto error;
        set_reg(regs, in->in[0], v);
        pc++;
        break;
      }
      case I_CLEAR:
        for (int k = 0; k < in->nin; k++) set_reg(regs, in->in[k], Py_NewRef(Py_None));
        pc++;
        break;
    }
  }
  p->ops += ops;
  return 0;
error:
  p->ops += ops;
  if (p->code[pc].where) {
    /* where it failed, as torch's interpreter names the node; the error's type and text stay the op's */
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (value && !PyObject_HasAttrString(value, "_jit_node") &&
        PyObject_SetAttrString(value, "_jit_node", p->code[pc].where) < 0)
      PyErr_Clear();
    PyErr_Restore(type, value, tb);
  }
  return -1;
}

static PyObject *program_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
  JitProgram *p = (JitProgram *)self;
  Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  if (kwnames && PyTuple_GET_SIZE(kwnames)) {
    PyErr_SetString(PyExc_TypeError, "_JitProgram takes no keyword arguments");
    return NULL;
  }
  if (nargs != p->nin) {
    PyErr_Format(PyExc_RuntimeError, "expected %d inputs, got %zd", p->nin, nargs);
    return NULL;
  }
  PyObject *small[64];
  PyObject **regs = p->nregs <= 64 ? small : PyMem_Malloc(sizeof(PyObject *) * p->nregs);
  if (!regs) return PyErr_NoMemory();
  for (int i = 0; i < p->nregs; i++) regs[i] = Py_NewRef(PyTuple_GET_ITEM(p->consts, i));
  for (int i = 0; i < p->nin; i++) set_reg(regs, p->inputs[i], Py_NewRef(args[i]));
  PyObject *result = NULL;
  p->runs++;
  if (execute(p, regs) == 0) {
    if (p->nout == 1) {
      result = Py_NewRef(regs[p->outputs[0]]);
    } else if ((result = PyTuple_New(p->nout))) {
      for (int i = 0; i < p->nout; i++) {
        PyTuple_SET_ITEM(result, i, Py_NewRef(regs[p->outputs[i]]));
      }
    }
  }
  for (int i = 0; i < p->nregs; i++) Py_DECREF(regs[i]);
  if (regs != small) PyMem_Free(regs);
  return result;
}

static PyObject *program_call(PyObject *self, PyObject *args, PyObject *kwargs) {
  if (kwargs && PyDict_GET_SIZE(kwargs)) {
    PyErr_SetString(PyExc_TypeError, "_JitProgram takes no keyword arguments");
    return NULL;
  }
  return program_vectorcall(self, &PyTuple_GET_ITEM(args, 0), PyTuple_GET_SIZE(args), NULL);
}

/* the instructions as (kind name, ins, outs, target), for tests and debugging */
static PyObject *program_code(JitProgram *p, void *unused) {
  PyObject *l = PyList_New(p->ncode);
  if (!l) return NULL;
  for (int i = 0; i < p->ncode; i++) {
    const Instr *in = &p->code[i];
    PyObject *ins = PyTuple_New(in->nin), *outs = PyTuple_New(in->nout);
    if (!ins || !outs) { Py_XDECREF(ins); Py_XDECREF(outs); Py_DECREF(l); return NULL; }
    for (int k = 0; k < in->nin; k++) PyTuple_SET_ITEM(ins, k, PyLong_FromLong(in->in[k]));
    for (int k = 0; k < in->nout; k++) PyTuple_SET_ITEM(outs, k, PyLong_FromLong(in->out[k]));
    PyObject *t = Py_BuildValue("sNNi", kind_names[in->kind], ins, outs, in->target);
    if (!t) { Py_DECREF(l); return NULL; }
    PyList_SET_ITEM(l, i, t);
  }
  return l;
}

static PyMemberDef program_members[] = {
    {"runs", T_LONGLONG, offsetof(JitProgram, runs), READONLY, "how many times the program ran"},
    {"ops", T_LONGLONG, offsetof(JitProgram, ops), READONLY, "instructions executed over all runs"},
    {"nregs", T_INT, offsetof(JitProgram, nregs), READONLY, "registers in the register file"},
    {NULL}};

static PyGetSetDef program_getset[] = {
    {"code", (getter)program_code, NULL, "the instructions: (kind, inputs, outputs, target)", NULL},
    {NULL}};

PyTypeObject THPJitProgramType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "torch._C._JitProgram",
    .tp_basicsize = sizeof(JitProgram),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "A graph lowered to instructions, run by the C interpreter (cthtorch/jit/_c_interpreter.py).",
    .tp_new = program_new,
    .tp_dealloc = (destructor)program_dealloc,
    .tp_traverse = (traverseproc)program_traverse,
    .tp_clear = (inquiry)program_tp_clear,
    .tp_call = program_call,
    .tp_vectorcall_offset = offsetof(JitProgram, vectorcall),
    .tp_members = program_members,
    .tp_getset = program_getset,
};

static PyMethodDef jit_methods[] = {
    {"_jit_set_enum_tables", set_enum_tables, METH_VARARGS, NULL},
    {"_jit_set_module_getattr", set_module_getattr, METH_O, NULL},
    {"_jit_boxed_params", boxed_params, METH_O, NULL},
    {"_jit_boxed_ops", boxed_ops, METH_NOARGS, NULL},
    {NULL}};

int THP_initJitInterpreter(PyObject *m) {
  if (PyType_Ready(&THPJitProgramType) < 0) return -1;
  if (PyModule_AddObjectRef(m, "_JitProgram", (PyObject *)&THPJitProgramType) < 0) return -1;
  return PyModule_AddFunctions(m, jit_methods);
}
