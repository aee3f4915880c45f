#!/usr/bin/env python3
"""Writes the C bindings of cthtorch._C from the op declarations.

Input:  src/ATen/declarations/*.yaml   (one entry per op overload)
Output: <out>/Functions_<family>.c, one per declarations/<family>.yaml:
                            the family's backward node types, VT_* (autograd-
                            recording op calls), F_* formula wrappers, Python
                            bindings (argument parsers) and boxed_<op> calls
                            (each overload with its arguments positionally,
                            for the C interpreter, src/python/JitInterpreter.c).
                            One file per family keeps each compile small and
                            lets the build run them side by side.
        <out>/Functions.c   the tables: PyMethodDef of _TensorBase methods and
                            _VariableFunctions / _nn / ..., the boxed-call
                            table THP_generated_boxed_ops, the node types
        <out>/Functions.h   the declarations shared between those files
        <out>/_C.pyi        a stub listing what _C exports

An entry:

  - func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
    variants: function, method     # default: both
    inplace: true                  # also the method add_ (impl called with out=self)
    out: true                      # function takes out= (a tuple of tensors for tuple returns)
    out: copy                      # out=, written from the impl's fresh result (impl takes no out)
    impl: at_add(self, other, alpha, out)   # default: at_<name>(args..., [out])
    module: nn                     # lives in _C._nn instead of _VariableFunctions
    internal: true                 # a backward/LAPACK helper: only in _C._internal
                                   #   (no method, not cthtorch.<name>, not _C._nn)
    view: true                     # result is a view of self (shares version); `alias`: shares
                                   #   the version counter only (detach)
    deprecated: [[self, alpha, other]]   # torch's deprecated positional orders (bindings only)
    grad_composite: THP_f(self, n) # under autograd the call is this C function's instead,
                                   #   which records torch's composite graph (other ops' nodes)
    grad_composite_when: C_cond(n) # ... only where this C condition over the parameters holds
    derivatives:                   # formulas in grad, grads[i], result, inputs
      self: grad                   #   and helper calls; inputs not listed get no
      other: grad * alpha          #   gradient; `name.sizes` saves just a shape
                                   #   (.strides, .storage_offset, .storage_numel, .numel,
                                   #   .dtype, .device, .ndim likewise: src/python/Bindings.c)

Formulas are Python expressions translated to C calls of F_<op> (one per
declared op, recording autograd itself so double backward works) or of the
hand-written helpers in src/python/autograd/Formulas.h.
"""
import argparse
import ast
import glob
import io
import os
import re
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# ---------------------------------------------------------------- parsing


def _load_schema_text():
    """cthtorch/_schema_text.py, the one reader of schema text, by path: cthtorch is not importable yet."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("_schema_text", os.path.join(ROOT, "cthtorch", "_schema_text.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


schema_text = _load_schema_text()


class Param:
    def __init__(self, text, kwonly):
        typ, name, self.default = schema_text.split_arg(text)
        self.type = typ.replace("(a!)", "").replace("(a)", "").strip()
        self.name = name
        self.kwonly = kwonly
        self.optional = self.type.endswith("?") or self.default == "None"
        self.base = self.type.rstrip("?")

    @property
    def is_tensor(self):
        return self.base == "Tensor"

    def sig(self, rename_self=False):
        name = "input" if (rename_self and self.name == "self") else self.name
        s = "%s %s" % (self.type, name)
        if self.default is not None:
            s += "=" + self.default
        return s


class Decl:
    def __init__(self, d, src):
        self.src = src
        func = d["func"]
        parts = schema_text.split_func(func)
        if parts is None or "::" in parts[0]:
            raise SystemExit("%s: cannot parse func: %s" % (src, func))
        full, args, ret = parts
        self.full = full
        self.func_text = func.strip()
        self.name, _, self.overload = full.partition(".")
        self.params = []
        kwonly = False
        for p in schema_text.split_top(args):
            if p == "*":
                kwonly = True
                continue
            self.params.append(Param(p, kwonly))
        self.ret = ret.strip()
        self.variants = [v.strip() for v in str(d.get("variants", "function, method")).split(",")]
        self.inplace = bool(d.get("inplace", False))
        self.out = bool(d.get("out", False))
        self.module = d.get("module", "")
        # Helpers our own formulas and composites call: PyTorch programs must not
        # find them where they look, so they get a namespace of their own.
        self.internal = bool(d.get("internal", False))
        if self.internal:
            self.module = "internal"
            self.variants = ["function"]
        # view: alias (detach) shares self's version counter without being a view of it: torch's
        # detach() is not _is_view(), so in-place writes into it record history on it, not on self
        self.alias = d.get("view") == "alias"
        self.view = d.get("view") is True
        self.grad_composite = d.get("grad_composite")
        # a C condition over the parameters: the composite records only where it holds (global pooling's mean)
        self.grad_composite_when = d.get("grad_composite_when")
        # the body runs on CUDA tensors (its ATen function and every kernel it
        # reaches are device-aware); other ops raise NotImplementedError there
        self.cuda = bool(d.get("cuda", False))
        # the body runs on meta tensors: its ATen function allocates outputs
        # on its inputs' device and skips every kernel (and every data read)
        # for meta ones; other ops raise NotImplementedError there
        self.meta = bool(d.get("meta", False))
        # CUDA autocast policy (torch.autocast('cuda')): "lower" casts float32
        # tensor arguments to the autocast dtype, "fp32" casts float16/bfloat16 up
        self.autocast = d.get("autocast")
        if self.autocast not in (None, "lower", "fp32"):
            raise SystemExit("%s: autocast must be lower or fp32" % d["func"])
        # torch.autocast('cpu') policy: its op lists differ from CUDA's (exp or softmax stay in their
        # input's dtype on the CPU)
        self.autocast_cpu = d.get("autocast_cpu")
        if self.autocast_cpu not in (None, "lower", "fp32"):
            raise SystemExit("%s: autocast_cpu must be lower or fp32" % d["func"])
        self.impl = d.get("impl")
        self.derivs = d.get("derivatives") or {}
        self.nondiff = bool(d.get("nondiff", False))
        # Tensor parameters that refuse Python numbers, as torch's do where it has no
        # Scalar overload (gcd(t, 2): TypeError); elsewhere a number is a wrapped 0-d tensor
        self.tensor_only = list(d.get("tensor_only") or [])
        # torch.add(2, t) / torch.pow(2, t): the first Tensor parameter takes a number as well
        # (torch's numbers-as-tensors list and its Scalar-self overloads)
        self.number_first = bool(d.get("number_first", False))
        self.manual_python = bool(d.get("manual_python", False))
        # torch's deprecated Python signatures (x.add_(alpha, other), addcmul(self, value, t1, t2),
        # addmm(beta, self, alpha, mat1, mat2)): parameter orders, all positional; the method form
        # binds self first. Only the bindings parse them (with torch's one-time UserWarning).
        self.deprecated = [list(o) for o in (d.get("deprecated") or [])]
        for o in self.deprecated:
            if any(not any(p.name == n for p in self.params) for n in o) or "self" not in o:
                raise SystemExit("%s: deprecated order %r names an unknown parameter or lacks self" % (self.full, o))
        self.node = d.get("node")   # grad_fn's Python name when not CamelCase(name)Backward0 (aliases share one)
        # Tensor parameter -> grad_fn name when a Python number was passed for it (a wrapped number): torch
        # parses x ** 2 to its Scalar overload, whose node (PowBackward0) has no edge for the number
        self.scalar_nodes = dict(d.get("scalar_nodes") or {})
        # per output: False keeps it out of the graph (lu_unpack's P, as in PyTorch)
        self.output_diff = d.get("output_differentiability")
        # Tensor parameters torch's kernel has no derivative for (loss weights): with grad mode on, one that
        # requires grad is torch's RuntimeError (its check_no_requires_grad), whatever the other inputs
        self.no_grad_args = list(d.get("no_grad_args") or [])
        self.cname = self.full.replace(".", "_")
        for n in self.no_grad_args:
            if not any(p.name == n and p.is_tensor for p in self.params):
                raise SystemExit("%s: no_grad_args names %r, which is not a Tensor parameter" % (self.full, n))
        for n in self.tensor_only:
            if not any(p.name == n and p.is_tensor for p in self.params):
                raise SystemExit("%s: tensor_only names %r, which is not a Tensor parameter" % (self.full, n))
        for n in self.scalar_nodes:
            if not any(p.name == n and p.is_tensor and p.base == "Tensor" for p in self.params) or n in self.tensor_only:
                raise SystemExit("%s: scalar_nodes names %r, which is not a Tensor parameter taking numbers"
                                 % (self.full, n))
        self.outputs = self.parse_ret(self.ret)
        if self.output_diff is not None and len(self.output_diff) != len(self.outputs):
            raise SystemExit("%s: output_differentiability needs one entry per output" % d["func"])
        # out= written from a fresh result: tuple returns always (their impls
        # take no out), single results with `out: copy`
        self.out_copy = self.out and (d.get("out") == "copy" or len(self.outputs) > 1)

    @staticmethod
    def parse_ret(ret):
        if ret.startswith("("):
            items = [x.strip() for x in ret[1:-1].split(",")]
            return [(i.split(" ")[0], i.split(" ")[1] if " " in i else None) for i in items]
        return [(ret.split(" ")[0], None)]

    @property
    def ret_kind(self):
        if len(self.outputs) > 1:
            return "tuple"
        t = self.outputs[0][0]
        return {"Tensor": "tensor", "Tensor[]": "tensorlist", "bool": "bool", "int": "int",
                "float": "float", "Scalar": "scalar", "()": "none"}.get(t, "tensor")

    def tensor_params(self):
        return [p for p in self.params if p.is_tensor]


def load_decls(paths):
    decls = []
    for path in paths:
        with open(path) as fh:
            entries = yaml.safe_load(fh) or []
        for e in entries:
            decls.append(Decl(e, path))
    # one declaration per name.overload: a second is a build error, not a
    # silent override (cthtorch/_ops checks the Python composites at import)
    seen = {}
    for d in decls:
        if d.full in seen:
            raise SystemExit("generate_code: %s is declared twice (%s and %s)" % (d.full, seen[d.full], d.src))
        seen[d.full] = d.src
    return decls


# ---------------------------------------------------------------- C value plumbing

def is_intlist_type(b):
    """int[N], SymInt[N] and bool[N] (an output_mask) travel as an ATIntList"""
    return b.startswith("int[") or b.startswith("SymInt[") or b.startswith("bool[")


def c_arg_from_parser(p, i):
    """C expression reading parameter i of a parsed result `r`."""
    b = p.base
    if b == "Tensor":
        return "(PyObject *)ap_tensor(&r, %d)" % i
    if b == "Scalar":
        return "ap_optscalar(&r, %d)" % i if p.type.endswith("?") else "ap_scalar(&r, %d)" % i
    if b in ("int", "SymInt"):
        return "ap_optint(&r, %d)" % i if p.type.endswith("?") else "ap_int(&r, %d)" % i
    if is_intlist_type(b):
        return "ap_intlist(&r, %d)" % i
    if b == "float":
        return "ap_optfloat(&r, %d)" % i if p.type.endswith("?") else "ap_float(&r, %d)" % i
    if b == "bool":
        return "ap_optbool(&r, %d)" % i if p.type.endswith("?") else "ap_bool(&r, %d)" % i
    if b == "ScalarType":
        return "ap_dtype(&r, %d, TH_Undefined)" % i
    if b == "str":
        return "ap_string(&r, %d)" % i
    if b == "Generator":
        return "ap_generator(&r, %d)" % i
    if b in ("Tensor[]", "Tensor?[]"):
        return "ap_object(&r, %d)" % i
    if b.startswith("float["):
        return "ap_object(&r, %d)" % i
    if b in ("Device", "Layout", "MemoryFormat", "PyObject*"):
        return "ap_object(&r, %d)" % i
    raise SystemExit("unsupported type %s" % p.type)


def c_type(p):
    b = p.base
    if b == "Tensor":
        return "PyObject *"
    if b == "Scalar":
        return "ATOptScalar " if p.type.endswith("?") else "ATScalar "
    if b in ("int", "SymInt"):
        return "ATOptInt " if p.type.endswith("?") else "int64_t "
    if is_intlist_type(b):
        return "const ATIntList *"
    if b == "float":
        return "ATOptDouble " if p.type.endswith("?") else "double "
    if b == "bool":
        return "int " if p.type.endswith("?") else "bool "
    if b == "ScalarType":
        return "THDtype "
    if b == "str":
        return "const char *"
    if b == "Generator":
        return "struct THGenerator *"
    return "PyObject *"


def to_aten(p, var):
    """Converts the VT-level C value to what the ATen function takes."""
    if p.base == "Tensor":
        return "(%s ? ((THPTensor *)%s)->t : NULL)" % (var, var) if p.optional else "((THPTensor *)%s)->t" % var
    if p.base in ("Tensor[]", "Tensor?[]"):
        return "&%s_list" % var
    return var


def to_pyobj(p, var):
    """C expression making a new PyObject* of a VT-level value (saved in nodes)."""
    b = p.base
    if b == "Scalar":
        if p.type.endswith("?"):
            return "(%s.has ? THP_scalar_to_py(%s.v) : Py_NewRef(Py_None))" % (var, var)
        return "THP_scalar_to_py(%s)" % var
    if b in ("int", "SymInt"):
        if p.type.endswith("?"):
            return "(%s.has ? PyLong_FromLongLong(%s.v) : Py_NewRef(Py_None))" % (var, var)
        return "PyLong_FromLongLong(%s)" % var
    if is_intlist_type(b):
        return "THP_intlist_to_py(%s)" % var
    if b == "float":
        if p.type.endswith("?"):
            return "(%s.has ? PyFloat_FromDouble(%s.v) : Py_NewRef(Py_None))" % (var, var)
        return "PyFloat_FromDouble(%s)" % var
    if b == "bool":
        if p.type.endswith("?"):
            return "(%s < 0 ? Py_NewRef(Py_None) : PyBool_FromLong(%s))" % (var, var)
        return "PyBool_FromLong(%s)" % var
    if b == "ScalarType":
        return "THP_dtype_to_py(%s)" % var
    if b == "str":
        return "(%s ? PyUnicode_FromString(%s) : Py_NewRef(Py_None))" % (var, var)
    return "Py_NewRef(%s ? %s : Py_None)" % (var, var)


def from_pyobj(p, src, dst):
    """C statements converting a PyObject* (NULL = default) into the VT-level
    value `dst` of parameter p (used by the F_ wrappers). Returns lines."""
    b = p.base
    d = p.default
    if b == "Tensor":
        if p.optional:
            return ["PyObject *%s = (%s && %s != Py_None) ? fa_tensor(%s) : NULL;" % (dst, src, src, src),
                    "if (%s && %s != Py_None && !%s) goto fail;" % (src, src, dst),
                    "owned[nowned++] = %s;" % dst]
        return ["PyObject *%s = fa_tensor(%s);" % (dst, src), "if (!%s) goto fail;" % dst,
                "owned[nowned++] = %s;" % dst]
    if b == "Scalar" and p.type.endswith("?"):
        return ["ATOptScalar %s = { false, at_scalar_int(0) };" % dst,
                "if (%s && %s != Py_None) { %s.has = true; if (ap_to_scalar(%s, &%s.v) < 0) goto fail; }"
                % (src, src, dst, src, dst)]
    if b == "Scalar":
        dv = "at_scalar_int(%s)" % d if d and re.match(r"^-?\d+$", d) else (
            "at_scalar_float(%s)" % d if d and d not in ("None",) else "at_scalar_int(0)")
        return ["ATScalar %s = %s;" % (dst, dv),
                "if (%s && %s != Py_None && ap_to_scalar(%s, &%s) < 0) goto fail;" % (src, src, src, dst)]
    if b in ("int", "SymInt"):
        if p.type.endswith("?"):
            has = "true" if d not in (None, "None") else "false"
            dv = d if d not in (None, "None") else "0"
            return ["ATOptInt %s = { %s, %s };" % (dst, has, dv),
                    "if (%s == Py_None) %s.has = false;" % (src, dst),
                    "else if (%s) { %s.has = true; if (ap_to_int(%s, &%s.v) < 0) goto fail; }" % (src, dst, src, dst)]
        return ["int64_t %s = %s;" % (dst, d if d not in (None, "None") else "0"),
                "if (%s && ap_to_int(%s, &%s) < 0) goto fail;" % (src, src, dst)]
    if is_intlist_type(b):
        size = re.search(r"\[(\d*)\]", b).group(1) or "0"
        lines = ["ATIntList %s_buf = {0}; const ATIntList *%s = NULL;" % (dst, dst)]
        if d not in (None, "None"):
            vals = d.strip("[]()").split(",") if d.strip("[]()") else []
            vals = [v.strip() for v in vals if v.strip()]
            if len(vals) == 1 and int(size or 0) > 1:
                vals = vals * int(size)
            lines.append("{ static const int64_t dv_[] = {%s}; %s_buf.n = %d; memcpy(%s_buf.v, dv_, sizeof(int64_t) * %d); %s = &%s_buf; }"
                         % (", ".join(vals) or "0", dst, len(vals), dst, len(vals), dst, dst))
        lines.append("if (%s && %s != Py_None) { if (fa_intlist(%s, &%s_buf, %s) < 0) goto fail; %s = &%s_buf; }"
                     % (src, src, src, dst, size, dst, dst))
        return lines
    if b == "float":
        if p.type.endswith("?"):
            has = "true" if d not in (None, "None") else "false"
            return ["ATOptDouble %s = { %s, %s };" % (dst, has, d if d not in (None, "None") else "0"),
                    "if (%s == Py_None) %s.has = false;" % (src, dst),
                    "else if (%s) { %s.has = true; %s.v = PyFloat_AsDouble(%s); if (%s.v == -1 && PyErr_Occurred()) goto fail; }"
                    % (src, dst, dst, src, dst)]
        dv = {"inf": "INFINITY", "-inf": "-INFINITY"}.get(d, d) if d not in (None, "None") else "0"
        return ["double %s = %s;" % (dst, dv),
                "if (%s) { %s = PyFloat_AsDouble(%s); if (%s == -1 && PyErr_Occurred()) goto fail; }" % (src, dst, src, dst)]
    if b == "bool":
        if p.type.endswith("?"):
            dv = "-1" if d in (None, "None") else ("1" if d == "True" else "0")
            return ["int %s = %s;" % (dst, dv),
                    "if (%s) %s = %s == Py_None ? -1 : PyObject_IsTrue(%s);" % (src, dst, src, src)]
        return ["bool %s = %s;" % (dst, "true" if d == "True" else "false"),
                "if (%s) %s = PyObject_IsTrue(%s) == 1;" % (src, dst, src)]
    if b == "ScalarType":
        return ["THDtype %s = TH_Undefined;" % dst,
                "if (%s && %s != Py_None) %s = fa_dtype(%s);" % (src, src, dst, src)]
    if b == "str":
        dv = '"%s"' % d.strip("'\"") if d not in (None, "None") else "NULL"
        return ["const char *%s = %s;" % (dst, dv),
                "if (%s && %s != Py_None) { %s = PyUnicode_AsUTF8(%s); if (!%s) goto fail; }" % (src, src, dst, src, dst)]
    if b == "Generator":
        return ["struct THGenerator *%s = fa_generator(%s);" % (dst, src)]
    return ["PyObject *%s = %s;" % (dst, src)]


# ---------------------------------------------------------------- formulas

class FormulaEmitter:
    """Turns a formula expression into C statements over PyObject temporaries."""

    BINOPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.Pow: "pow",
              ast.MatMult: "matmul"}

    # name -> [(cname, nparams, nrequired)], filled by main() from the declarations
    OVERLOADS = {}

    def __init__(self, decl, names):
        self.decl = decl
        self.names = names      # formula name -> C expression (borrowed PyObject*)
        self.lines = []
        self.ntemps = 0
        self.attrs = set()      # (input, attr) recorded at forward time
        self.used = set()

    def temp(self):
        self.ntemps += 1
        return "tmp[%d]" % (self.ntemps - 1)

    def call(self, fn, args):
        t = self.temp()
        self.lines.append("%s = %s(%s);" % (t, fn, ", ".join(args)))
        self.lines.append("if (!%s) goto fail;" % t)
        return t

    def const(self, v):
        t = self.temp()
        if isinstance(v, bool):
            self.lines.append("%s = PyBool_FromLong(%d);" % (t, int(v)))
        elif isinstance(v, int):
            self.lines.append("%s = PyLong_FromLongLong(%dLL);" % (t, v))
        elif isinstance(v, float):
            self.lines.append("%s = PyFloat_FromDouble(%r);" % (t, v))
        elif isinstance(v, str):
            self.lines.append('%s = PyUnicode_FromString("%s");' % (t, v))
        elif v is None:
            self.lines.append("%s = Py_NewRef(Py_None);" % t)
        else:
            raise SystemExit("unsupported constant %r" % (v,))
        self.lines.append("if (!%s) goto fail;" % t)
        return t

    def resolve(self, name, args):
        """F_ function for a formula call: a declared op picks the first
        overload that takes this many arguments (the rest default: NULL)."""
        for cname, n, req in self.OVERLOADS.get(name, []):
            if req <= len(args) <= n:
                return "F_" + cname, args + ["NULL"] * (n - len(args))
        if name in self.OVERLOADS:
            raise SystemExit("%s: no overload of %s takes %d arguments" % (self.decl.full, name, len(args)))
        return "F_" + name, args

    def expr(self, node):
        if isinstance(node, ast.Name):
            if node.id not in self.names:
                raise SystemExit("%s: formula for %s uses unknown name %r" % (self.decl.src, self.decl.full, node.id))
            self.used.add(node.id)
            return self.names[node.id]
        if isinstance(node, ast.Constant):
            return self.const(node.value)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            self.attrs.add((node.value.id, node.attr))
            return "n->attr_%s_%s" % (node.value.id, node.attr)
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "grads":
            self.used.add("grads")
            return "grads[%d]" % node.slice.value
        if isinstance(node, ast.BinOp):
            return self.call(*self.resolve(self.BINOPS[type(node.op)], [self.expr(node.left), self.expr(node.right)]))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            if isinstance(node.operand, ast.Constant):
                return self.const(-node.operand.value)
            return self.call(*self.resolve("neg", [self.expr(node.operand)]))
        if isinstance(node, (ast.Tuple, ast.List)):
            items = [self.expr(e) for e in node.elts]
            t = self.temp()
            self.lines.append("%s = PyTuple_Pack(%d%s);" % (t, len(items), "".join(", " + i for i in items)))
            self.lines.append("if (!%s) goto fail;" % t)
            return t
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            args = [self.expr(a) for a in node.args]
            if node.keywords:
                raise SystemExit("%s: keyword arguments are not supported in formulas" % self.decl.full)
            return self.call(*self.resolve(node.func.id, args))
        raise SystemExit("%s: unsupported formula syntax: %s" % (self.decl.full, ast.dump(node)))


# ---------------------------------------------------------------- code generation

HEADER = """/* Generated by tools/generate_code.py from src/ATen/declarations. Do not edit. */
#include "THP.h"
#include "ArgParser.h"
#include "autograd/Formulas.h"
#include "Functions.h"
#include "Dispatch.h"
#include "TorchFunction.h"
%s
/* The boxed calls' table, as src/python/JitInterpreter.c reads it (declared
 * there too: a shared header would make every src/python object rebuild). */
typedef PyObject *(*THPJitBoxedFn)(PyObject *const *stack, Py_ssize_t n);
typedef struct { const char *name; THPJitBoxedFn fn; const char *params; } THPJitBoxedEntry;
enum { THP_JIT_SCALARTYPE, THP_JIT_LAYOUT, THP_JIT_MEMORYFORMAT };
PyObject *THP_jit_enum(int kind, PyObject *id);
PyObject *THP_jit_too_many_args(const char *op, int max, Py_ssize_t n);
#include <math.h>
#include <string.h>
"""


def area_includes():
    """Every ATen area header and formula-helper header, so an area adds
    its own header instead of editing a shared one."""
    inc = []
    for h in sorted(glob.glob(os.path.join(ROOT, "src", "ATen", "*.h"))):
        inc.append('#include "../../src/ATen/%s"' % os.path.basename(h))
    for h in sorted(glob.glob(os.path.join(ROOT, "src", "python", "autograd", "Formulas*.h"))):
        inc.append('#include "autograd/%s"' % os.path.basename(h))
    return "\n".join(inc)


def impl_call(d, argvars):
    """The ATen call, with argument names substituted."""
    if d.impl:
        expr = d.impl
    else:
        names = [p.name for p in d.params]
        if (d.out and not d.out_copy) or d.inplace:
            names.append("out")
        expr = "at_%s(%s)" % (d.name, ", ".join(names))

    def sub(m):
        n = m.group(0)
        return argvars.get(n, n)
    head, _, rest = expr.partition("(")
    # substitute identifiers outside string literals ("threshold" stays a string)
    parts = re.split(r'("(?:[^"\\]|\\.)*")', rest)
    out = [p if p.startswith('"') else re.sub(r"(?<![\w.>])[A-Za-z_]\w*\b", sub, p) for p in parts]
    return head + "(" + "".join(out)


def wrap_result(d, first_t):
    """the C expression wrapping a fresh result r_: a view of, an alias of, or independent of its first tensor"""
    if d.view:
        return "THPTensor_wrapView(r_, %s)" % first_t
    if d.alias:
        return "THPTensor_wrapAlias(r_, %s)" % first_t
    return "THPTensor_wrap(r_)"


def gen_vt(d, out, inplace):
    """One VT function: the op's dispatch point. Every caller of the op (its
    Python binding, the operator slots, indexing, backward formulas through
    F_) reaches it. It reports the call to the dispatch observers (profiler,
    tracer: src/python/Dispatch.h) when one is set, then runs the body:
    autograd recording around the ATen kernel call."""
    proto, body, node_infos = _gen_vt_body(d, out, inplace)
    fname = proto[len("PyObject *"):proto.index("(")]
    params = list(d.params)
    args = [p.name + "_" for p in params] + (["out_"] if out else [])
    name = "aten::%s%s" % (d.name, "_" if inplace else "")
    schema = d.func_text.replace('"', '\\"')
    boxed, frees = [], []
    for i, p in enumerate(params):
        v = p.name + "_"
        if p.base == "Tensor" or p.base == "Tensor[]" or c_type(p).strip() == "PyObject *":
            boxed.append("%s ? %s : Py_None" % (v, v))
        elif p.base == "Generator":
            boxed.append("Py_None")
        else:
            boxed.append("ib_[%d]" % i)
            frees.append(i)
    # the device key: which device the call runs on, and whether this op can
    # run there (a factory runs on the host and its result moves)
    tens = [p.name + "_" for p in params if p.base in ("Tensor", "Tensor[]", "Tensor?[]")]
    if out:
        tens.append("out_")
    devp = [p.name + "_" for p in params if p.base == "Device"]
    dev_fn = ["static inline " + proto.replace(fname + "(", fname + "_dev(", 1) + " {",
              "  int dev_ = -1;"]
    if tens or devp:
        dev_fn.append("  PyObject *dv_[%d] = {%s};" % (max(len(tens), 1), ", ".join(tens) or "NULL"))
        dev_fn.append("  if (THP_op_device(\"%s\", %d, dv_, %s, %s, %s, %s, &dev_) < 0) return NULL;"
                      % (name, len(tens), devp[0] if devp else "NULL", "true" if d.cuda else "false",
                         "true" if devp else "false", "true" if d.meta else "false"))
    tparams_ac = [p for p in params if p.base == "Tensor"]
    for policy, device_test, on_cpu, lower in (
            (d.autocast if d.cuda else None, "dev_ >= 0 && THP_autocast_cuda", "false", "THP_autocast_cuda_dtype"),
            (d.autocast_cpu, "dev_ == -1 && THP_autocast_cpu", "true", "THP_autocast_cpu_dtype")):   # not meta
        if not policy or inplace or not tparams_ac:
            continue
        # autocast: the function form only (in-place and out= calls are not eligible, as in torch)
        n_ac = len(tparams_ac)
        dev_fn.append("  if (%s%s) {" % (device_test, " && !out_" if out else ""))
        dev_fn.append("    PyObject *ac_[%d] = {%s};" % (n_ac, ", ".join(p.name + "_" for p in tparams_ac)))
        dev_fn.append("    if (THP_autocast_args(%d, %d, ac_, %s, %s) < 0) return NULL;"
                      % (1 if policy == "lower" else 2, n_ac, on_cpu, lower))
        sub = {p.name + "_": "ac_[%d]" % i for i, p in enumerate(tparams_ac)}
        dev_fn.append("    PyObject *r_ = %s_body(%s);" % (fname, ", ".join(sub.get(a, a) for a in args)))
        dev_fn.append("    for (int i = 0; i < %d; i++) Py_XDECREF(ac_[i]);" % n_ac)
        dev_fn.append("    return r_;")
        dev_fn.append("  }")
    # meta inputs: the body itself makes meta outputs; a factory asked for
    # the meta device builds on the host and its result moves (no bytes copy)
    dev_fn.append("  if ((dev_ < 0 && !(%s && dev_ == TH_DEVICE_META)) || %s) return %s_body(%s);"
                  % ("true" if devp and not d.cuda else "false", "true" if d.cuda else "false", fname, ", ".join(args)))
    dev_fn.append("  return THP_move_result(%s_body(%s), dev_);" % (fname, ", ".join(args)))
    dev_fn.append("}")
    wrapper = [proto + " {",
               "  if (!THP_dispatch_active()) return %s_dev(%s);" % (fname, ", ".join(args)),
               "  PyObject *tok_ = THP_dispatch_enter(\"%s\");" % name,
               "  if (!tok_) return NULL;",
               "  PyObject *r_ = %s_dev(%s);" % (fname, ", ".join(args))]
    n = len(params)
    if frees:
        wrapper.append("  PyObject *ib_[%d] = {0};" % n)
    if n:
        for i, p in enumerate(params):
            if i in frees:
                wrapper.append("  ib_[%d] = %s;" % (i, to_pyobj(p, p.name + "_")))
        wrapper.append("  PyObject *in_[%d] = {%s};" % (n, ", ".join(boxed)))
    wrapper.append("  r_ = THP_dispatch_exit(tok_, \"%s\", \"%s\", %d, %s, r_);"
                   % (name, schema, n, "in_" if n else "NULL"))
    if frees:
        wrapper.append("  for (int i = 0; i < %d; i++) Py_XDECREF(ib_[i]);" % n)
    wrapper.append("  return r_;")
    wrapper.append("}")
    body_fn = "static inline " + proto.replace(fname + "(", fname + "_body(", 1) + body[len(proto):]
    return proto, body_fn + "\n\n" + "\n".join(dev_fn) + "\n\n" + "\n".join(wrapper), node_infos


def _gen_vt_body(d, out, inplace):
    """The VT body: ATen call + autograd recording."""
    suffix = "_" if inplace else ("_out" if out else "")
    selfmod = d.name.endswith("_")   # copy_, fill_, zero_: the op itself writes self
    if selfmod:
        inplace_self = True
    else:
        inplace_self = inplace
    fname = "VT_%s%s" % (d.cname, suffix)
    params = list(d.params)
    cparams = ["%s%s" % (c_type(p), p.name + "_") for p in params]
    if out:
        cparams.append("PyObject *out_")
    proto = "PyObject *%s(%s)" % (fname, ", ".join(cparams) or "void")
    L = [proto + " {"]
    tparams = [p for p in params if p.is_tensor]
    deriv_names = set()
    for key in d.derivs:
        deriv_names.update(k.strip() for k in str(key).split(","))
    diff_inputs = [p for p in tparams if p.name in deriv_names]
    # a differentiable Tensor[] (cat, stack): one edge per list item, and its
    # formula returns one gradient per item
    list_diff = [p for p in params if p.base == "Tensor[]" and p.name in deriv_names]
    if list_diff:
        if diff_inputs or len(list_diff) > 1:
            raise SystemExit("%s: a differentiable Tensor[] must be the only differentiable input" % d.full)
        diff_inputs = list_diff
    differentiable = bool(d.derivs) and not d.nondiff
    kind = d.ret_kind
    # Tensor[] params become a C array for ATen
    for p in params:
        if p.base in ("Tensor[]", "Tensor?[]"):   # Tensor?[]: None entries become NULL
            conv = "THP_opttensorlist_from_py" if p.base == "Tensor?[]" else "THP_tensorlist_from_py"
            L.append("  ATTensorList %s_list = {0};" % (p.name + "_"))
            L.append("  if (%s(%s, &%s_list) < 0) return NULL;" % (conv, p.name + "_", p.name + "_"))
    argvars = {}
    for p in params:
        argvars[p.name] = to_aten(p, p.name + "_")
    if inplace:
        argvars["out"] = "((THPTensor *)self_)->t"
    elif out and not d.out_copy:
        argvars["out"] = "(out_ ? ((THPTensor *)out_)->t : NULL)"
    else:
        argvars["out"] = "NULL"
    rg_list = [p.name + "_" for p in diff_inputs]
    if differentiable and list_diff:
        L.append("  bool rg_ = THP_seq_requires_grad(%s);" % rg_list[0])
    elif differentiable and rg_list:
        L.append("  PyObject *rg_in_[] = {%s};" % ", ".join(rg_list))
        L.append("  bool rg_ = THP_any_requires_grad(%d, rg_in_);" % len(rg_list))
    else:
        L.append("  bool rg_ = false; (void)rg_;")
    for n in d.no_grad_args:
        L.append('  if (%s && %s != Py_None && THPTensor_requiresGrad(%s) && THP_grad_enabled()) { '
                 'PyErr_SetString(PyExc_RuntimeError, "The function \'%s\' is not differentiable with respect to '
                 'argument \'%s\'. This input cannot have requires_grad True."); return NULL; }'
                 % (n + "_", n + "_", n + "_", d.name, n))
    if out and kind == "tuple":
        # out=(a, b): a sequence of tensors (the parser checked), of the right length
        L.append("  if (out_ == Py_None) out_ = NULL;")
        L.append("  if (out_ && THP_check_out_tuple(out_, %d) < 0) return NULL;" % len(d.outputs))
    if out:
        L.append('  if (out_ && rg_) { PyErr_SetString(PyExc_RuntimeError, "%s(): functions with out=... arguments '
                 'don\'t support automatic differentiation, but one of the arguments requires grad."); return NULL; }' % d.name)
    if d.grad_composite and not inplace_self:
        if any(p.base in ("Tensor[]", "Tensor?[]") for p in params):
            raise SystemExit("%s: grad_composite takes no Tensor[] parameter" % d.full)
        def args(e):
            return re.sub(r"\b(%s)\b" % "|".join(p.name for p in params), lambda m: m.group(1) + "_", e)
        when = " && (%s)" % args(d.grad_composite_when) if d.grad_composite_when else ""
        L.append("  if (rg_%s%s) return %s;" % (" && !out_" if out else "", when, args(d.grad_composite)))
    if inplace_self:
        L.append("  if (!rg_ && THPTensor_requiresGrad(self_) && THP_grad_enabled()) rg_ = true;")
        L.append("  if (THP_check_inplace_rg(self_, rg_) < 0) return NULL;")

    # saved inputs for in-place ops must be taken before the op overwrites self
    first_t = tparams[0].name + "_" if tparams else None
    big = "THP_BIG_WORK(((THPTensor *)%s)->t)" % first_t if first_t and not tparams[0].optional else "false"
    lists = [p.name + "_" for p in params if p.base in ("Tensor[]", "Tensor?[]")]
    if not first_t and lists:
        big = "(%s_list.n > 0 && THP_BIG_WORK(%s_list.v[0]))" % (lists[0], lists[0])
    # the C arrays of Tensor[] params are freed right after the ATen call
    free_lists = "".join(" PyMem_Free(%s_list.v);" % x for x in lists)
    # formulas -> what to save
    emit_names = {"grad": "grad"}
    saved_inputs, saved_outs, attrs, scalars = set(), set(), set(), set()
    used_by = {}   # saved name -> the formula keys that use it
    if differentiable:
        for inp, formula in d.derivs.items():
            tree = ast.parse(str(formula), mode="eval").body
            # `x.sizes` saves only the attribute: x itself is not kept alive
            # (nor version-checked) unless the formula also uses x
            attr_of = {id(node.value) for node in ast.walk(tree)
                       if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)}
            for node in ast.walk(tree):
                if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                    attrs.add((node.value.id, node.attr))
                elif isinstance(node, ast.Name) and id(node) not in attr_of:
                    nm = node.id
                    if nm == "result":
                        saved_outs.add(0)
                        used_by.setdefault(out_name(0), set()).add(inp)
                    elif re.match(r"^result\d+$", nm):
                        saved_outs.add(int(nm[6:]))
                        used_by.setdefault(out_name(int(nm[6:])), set()).add(inp)
                    elif nm in ("grad", "grads"):
                        pass
                    elif any(p.name == nm and p.is_tensor for p in params):
                        saved_inputs.add(nm)
                        used_by.setdefault(nm, set()).add(inp)
                    elif any(p.name == nm for p in params):
                        scalars.add(nm)
    ret_c = {"tensor": "THTensor *", "tuple": None, "tensorlist": None, "bool": "int ", "int": "int64_t ",
             "float": "double ", "scalar": "ATScalar ", "none": "int "}[kind]
    if inplace_self and differentiable:
        L.append("  PyObject *self_saved_ = NULL;")
        if "self" in saved_inputs:
            # a recorded clone (CloneBackward0 to self's old history), as torch's
            # original_self: double backward then reaches what self was made of
            L.append("  if (rg_ && !(self_saved_ = F_clone(self_, NULL))) return NULL;")
    # every error return after the clone above drops it
    fail_extra = "Py_XDECREF(self_saved_); " if inplace_self and differentiable else ""
    call = impl_call(d, argvars)
    if kind == "tensor":
        L.append("  THTensor *r_;")
        L.append("  if (%s) { Py_BEGIN_ALLOW_THREADS r_ = %s; Py_END_ALLOW_THREADS } else { r_ = %s; }%s"
                 % (big, call, call, free_lists))
        L.append("  if (!r_) { %sreturn THP_raise(); }" % fail_extra)
        if inplace_self:
            L.append("  THTensor_free(r_);")
            L.append("  THP_bump_version(self_);")
            L.append("  PyObject *result = Py_NewRef(self_);")
        elif out:
            L.append("  PyObject *result;")
            if d.out_copy:
                L.append("  if (out_) { int wc_ = at_write_out(((THPTensor *)out_)->t, r_); THTensor_free(r_); "
                         "if (wc_ < 0) return THP_raise(); THP_bump_version(out_); result = Py_NewRef(out_); }")
            else:
                L.append("  if (out_) { THTensor_free(r_); THP_bump_version(out_); result = Py_NewRef(out_); }")
            L.append("  else if (!(result = %s)) return NULL;" % (
                wrap_result(d, first_t)))
        else:
            L.append("  PyObject *result = %s;" % wrap_result(d, first_t))
            L.append("  if (!result) return NULL;")
        if not tparams and any(p.name == "requires_grad" and p.base == "bool" for p in params):
            # a factory: the new leaf requires grad when asked (floating dtypes only, as torch)
            L.append('  if (requires_grad_) { if (!THDtype_isFloating(((THPTensor *)result)->t->dtype) && '
                     '!THDtype_isComplex(((THPTensor *)result)->t->dtype)) { '
                     'Py_DECREF(result); PyErr_SetString(PyExc_RuntimeError, "Only Tensors of floating point and '
                     'complex dtype can require gradients"); return NULL; } ((THPTensor *)result)->requires_grad = true; }')
        L.append("  if (THP_flush_warnings() < 0) { Py_DECREF(result); %sreturn NULL; }" % fail_extra)
        outputs = ["result"]
    elif kind == "tuple":
        n = len(d.outputs)
        L.append("  THTensor *r_[%d] = {0};" % n)
        call_t = call.replace("(", "(r_, ", 1) if call.count("(") else call
        L.append("  int rc_;")
        L.append("  if (%s) { Py_BEGIN_ALLOW_THREADS rc_ = %s; Py_END_ALLOW_THREADS } else { rc_ = %s; }%s"
                 % (big, call_t, call_t, free_lists))
        L.append("  if (rc_ < 0) return THP_raise();")
        names = [o[1] for o in d.outputs]
        if out:   # torch names the tuple of out= <name>_out (torch.return_types.sort_out)
            L.append("  if (out_) return THP_write_outs(%s, %d, r_, out_);"
                     % ('"%s_out"' % d.name if all(names) else "NULL", n))
        L.append("  PyObject *outs_[%d];" % n)
        for i in range(n):
            L.append("  outs_[%d] = r_[%d] ? THPTensor_wrap(r_[%d]) : Py_NewRef(Py_None);" % (i, i, i))
        L.append("  for (int i = 0; i < %d; i++) if (!outs_[i]) { for (int j = 0; j < %d; j++) if (j != i) Py_XDECREF(outs_[j]); return NULL; }" % (n, n))
        outputs = ["outs_[%d]" % i for i in range(n)]
    elif kind == "tensorlist":
        L.append("  ATTensorList r_ = {0};")
        L.append("  int rc_ = %s;%s" % (call.replace("(", "(&r_, ", 1), free_lists))
        L.append("  if (rc_ < 0) return THP_raise();")
        L.append("  PyObject *result = THP_wrap_tensorlist(&r_, %s);" % (first_t if d.view else "NULL"))
        L.append("  if (!result) return NULL;")
        outputs = None   # one node output per list item (split, unbind): counted at run time
    else:
        L.append("  THError_clear();")
        L.append("  %sv_ = %s;%s" % (ret_c, call, free_lists))
        L.append("  if (THError_kind()) return THP_raise();")
        conv = {"bool": "PyBool_FromLong(v_)", "int": "PyLong_FromLongLong(v_)", "float": "PyFloat_FromDouble(v_)",
                "scalar": "THP_scalar_to_py(v_)", "none": "Py_NewRef(Py_None)"}[kind]
        L.append("  return %s;" % conv)
        L.append("}")
        return proto, "\n".join(L), None
    node = None
    infos = []
    if differentiable and (diff_inputs or inplace_self):
        node = node_name(d)
        nout = len(outputs) if outputs else 1
        if kind == "tensorlist" and saved_outs:
            raise SystemExit("%s: a Tensor[] result cannot be saved for backward" % d.full)
        drop_outs = "Py_DECREF(result);" if outputs in (["result"], None) else "for (int i = 0; i < %d; i++) Py_DECREF(outs_[i]);" % nout

        def creation(cname, kept, sv_in, sv_out, conditional, numbers=()):
            """the lines making node type cname with an edge per kept input and the named saves"""
            C = []
            nedges = "%s_list.n" % rg_list[0] if list_diff else str(len(kept))
            nin = "(int)PyTuple_GET_SIZE(result)" if kind == "tensorlist" else str(nout)
            C.append("%s *n = (%s *)THPNode_new(&%s_Type, %s, %s);" % (cname, cname, cname, nedges, nin))
            C.append("if (!n) { %s %sreturn NULL; }" % (drop_outs, fail_extra))
            # a saved_tensors_hooks pack hook may raise
            save_fail = "{ Py_DECREF(n); %s %sreturn NULL; }" % (drop_outs, fail_extra)
            C.append("n->base.apply = %s_apply; n->base.traverse_saved = %s_traverse; n->base.release_saved = %s_release;"
                     % (cname, cname, cname))
            for i, p in enumerate(kept):
                src = p.name + "_"
                # an edge fails for a multi-output view whose base changed in place (torch's error)
                if list_diff:
                    C.append("if (THP_set_edges_from_seq((THPNode *)n, %s) < 0) %s" % (src, save_fail))
                else:
                    C.append("if (THPNode_setEdgeFor((THPNode *)n, %d, %s) < 0) %s" % (i, src, save_fail))

            def save_if(nm, src):
                """As torch: a tensor only the gradients of inputs that need none
                use is not saved (nor version-checked; it unpacks as None), so
                embedding_bag's weight may change in place before backward
                unless per_sample_weights needs its gradient. Each formula runs
                only under its inputs' edges, so the test is the same one."""
                if not conditional:
                    return src
                edges = set()
                for key in used_by.get(nm, ()):
                    for m in (k.strip() for k in str(key).split(",")):
                        j = next((j for j, q in enumerate(kept) if q.name == m), None)
                        if j is None or list_diff or inplace_self:
                            return src
                        edges.add(j)
                if not edges:
                    return src
                return "(%s) ? %s : NULL" % (" || ".join("n->base.edges[%d].fn" % j for j in sorted(edges)), src)
            for nm in sorted(sv_in):
                src = "self_saved_" if (inplace_self and nm == "self") else nm + "_"
                C.append("if (THPSavedVar_save(&n->sv_%s, %s, false) < 0) %s" % (nm, save_if(nm, src), save_fail))
            for nm in sorted(scalars):
                p = next(p for p in params if p.name == nm)
                C.append("n->arg_%s = %s;" % (nm, to_pyobj(p, nm + "_")))
            for nm in numbers:   # shown as the Python number, which backward does not free
                C.append('if (!(n->num_%s = PyObject_CallMethod(%s_, "item", NULL))) %s' % (nm, nm, save_fail))
            for (nm, attr) in sorted(attrs):
                if nm == "result":
                    continue
                C.append("n->attr_%s_%s = THP_tensor_attr(%s, \"%s\");" % (nm, attr, nm + "_", attr))
            if inplace_self:
                C.append("THP_rebase_history(self_, (THPNode *)n);")
            elif kind == "tensorlist":
                C.append("for (int i = 0; i < (int)PyTuple_GET_SIZE(result); i++) "
                         "THPNode_setOutput((THPNode *)n, i, PyTuple_GET_ITEM(result, i));")
            else:
                for i, o in enumerate(outputs):
                    if d.output_diff is None or d.output_diff[i]:
                        C.append("THPNode_setOutput((THPNode *)n, %d, %s);" % (i, o))
            for k in sorted(sv_out):
                C.append("if (THPSavedVar_save(&n->sv_%s, %s, true) < 0) %s" % (out_name(k), save_if(out_name(k), outputs[k]),
                                                                             save_fail))
            for (nm, attr) in sorted(attrs):
                if nm == "result":
                    C.append("n->attr_result_%s = THP_tensor_attr(%s, \"%s\");" % (attr, outputs[0], attr))
            C.append("Py_DECREF(n);")
            return C

        L.append("  if (rg_) {")
        for pname, pyname in sorted(d.scalar_nodes.items()):
            # the Scalar overload's node: no edge for the number, only what the other inputs' formulas use saved
            if inplace_self and pname == "self":
                continue   # x.pow_(...): self is the tensor written, never a number
            if list_diff or any("," in str(k) and pname in [m.strip() for m in str(k).split(",")]
                                                  for k in d.derivs):
                raise SystemExit("%s: scalar_nodes needs a plain (not in-place, not grouped) formula for %s"
                                 % (d.full, pname))
            kept = [p for p in diff_inputs if p.name != pname]
            keys = {p.name for p in kept}
            sv_in = {nm for nm in saved_inputs if used_by.get(nm, set()) & keys}
            sv_out = {k for k in saved_outs if used_by.get(out_name(k), set()) & keys}
            cname = "%s_%s" % (node, pname)
            L.append("    if (THPTensor_Check(%s_) && ((THPTensor *)%s_)->t->wrapped_number) {" % (pname, pname))
            L += ["      " + x for x in creation(cname, kept, sv_in, sv_out, False, [pname])]
            L.append("    } else")
            infos.append(dict(name=cname, pyname=pyname, decl=d, diff_inputs=kept, saved_inputs=sorted(sv_in),
                              saved_outs=sorted(sv_out), scalars=sorted(scalars), attrs=sorted(attrs),
                              nout=nout, numbers=[pname]))
        L.append("    {")
        L += ["      " + x for x in creation(node, diff_inputs, saved_inputs, saved_outs, True)]
        L.append("    }")
        L.append("  }")
    if inplace_self and differentiable:
        L.append("  Py_XDECREF(self_saved_);")
    if kind == "tuple":
        names = [o[1] for o in d.outputs]
        L.append("  return THP_make_return(%s, %d, outs_);" % ('"%s"' % d.name if all(names) else "NULL", len(outputs)))
    else:
        L.append("  return result;")
    L.append("}")
    if node:
        infos.insert(0, dict(name=node, decl=d, diff_inputs=diff_inputs, saved_inputs=sorted(saved_inputs),
                             saved_outs=sorted(saved_outs), scalars=sorted(scalars), attrs=sorted(attrs),
                             nout=len(outputs) if outputs else 1, list_out=kind == "tensorlist"))
    return proto, "\n".join(L), infos


def out_name(k):
    """Formula name of forward output k: result (0), result1, result2..."""
    return "result" if k == 0 else "result%d" % k


def camel(name):
    return "".join(x[:1].upper() + x[1:] for x in name.strip("_").split("_"))


_node_names = {}


def node_name(d):
    if d.full in _node_names:
        return _node_names[d.full]
    base = camel(d.name) + "Backward"
    k = 0
    while (base + str(k)) in _node_names.values():
        k += 1
    _node_names[d.full] = base + str(k)
    return base + str(k)


def gen_node(info):
    d = info["decl"]
    name = info["name"]
    S = []
    fields = []
    for nm in info["saved_inputs"]:
        fields.append("  THPSavedVar sv_%s;" % nm)
    for k in info["saved_outs"]:
        fields.append("  THPSavedVar sv_%s;" % out_name(k))
    for nm in info["scalars"]:
        fields.append("  PyObject *arg_%s;" % nm)
    for nm in info.get("numbers", ()):
        fields.append("  PyObject *num_%s;" % nm)
    for (nm, attr) in info["attrs"]:
        fields.append("  PyObject *attr_%s_%s;" % (nm, attr))
    S.append("typedef struct {\n  THPNode base;\n%s\n} %s;" % ("\n".join(fields), name))
    # apply
    is_list = any(p.base == "Tensor[]" for p in info["diff_inputs"])
    nedges = "n_->num_edges" if is_list else str(len(info["diff_inputs"]))
    A = ["static PyObject *%s_apply(THPNode *n_, PyObject *const *grads) {" % name,
         "  %s *n = (%s *)n_;" % (name, name),
         "  PyObject *grad = grads[0];",
         "  (void)n; (void)grad;",
         "  PyObject *out = PyTuple_New(%s);" % nedges,
         "  if (!out) return NULL;",
         "  for (int i = 0; i < %s; i++) PyTuple_SET_ITEM(out, i, Py_NewRef(Py_None));" % nedges]
    names = {"grad": "grad"}
    unpack = []
    for nm in info["saved_inputs"]:
        names[nm] = "u_" + nm
        unpack.append(nm)
    for k in info["saved_outs"]:
        names[out_name(k)] = "u_" + out_name(k)
        unpack.append(out_name(k))
    if 0 in info["saved_outs"]:
        names["result0"] = "u_result"
    for nm in info["scalars"]:
        names[nm] = "n->arg_" + nm
    if info.get("list_out"):
        # `grads`: every piece's gradient as a tuple, zeros (of the piece's recorded shape) where none came
        names["grads"] = "gl_"
    body = []
    ntemps = 0
    groups = {}   # input name -> (formula key, position) for "a, b: f(...)" tuple formulas
    for key in d.derivs:
        names_in_key = [k.strip() for k in str(key).split(",")]
        if len(names_in_key) > 1:
            for pos, nm in enumerate(names_in_key):
                groups[nm] = (key, pos)
    done_groups = set()
    for i, p in enumerate(info["diff_inputs"]):
        if p.name in groups:
            key, pos = groups[p.name]
            if key in done_groups:
                continue
            done_groups.add(key)
            em = FormulaEmitter(d, names)
            em.ntemps = ntemps
            members = [k.strip() for k in str(key).split(",")]
            idxs = [next(j for j, q in enumerate(info["diff_inputs"]) if q.name == m) for m in members]
            if "output_mask" in str(d.derivs[key]):
                # which members' gradients are wanted, so the op can skip the rest
                t = em.temp()
                em.lines.append('%s = Py_BuildValue("(%s)"%s);' % (t, "N" * len(idxs), "".join(
                    ", PyLong_FromLong(n_->edges[%d].fn != NULL)" % j for j in idxs)))
                em.lines.append("if (!%s) goto fail;" % t)
                names["output_mask"] = t
            res = em.expr(ast.parse(str(d.derivs[key]), mode="eval").body)
            names.pop("output_mask", None)
            ntemps = em.ntemps
            body.append("  if (%s) {" % " || ".join("n_->edges[%d].fn" % j for j in idxs))
            body += ["    " + line for line in em.lines]
            body.append("    if (!PyTuple_Check(%s) || PyTuple_GET_SIZE(%s) < %d) { PyErr_SetString(PyExc_SystemError, "
                        "\"%s: tuple formula returned the wrong value\"); goto fail; }" % (res, res, len(idxs), d.full))
            for pos2, j in enumerate(idxs):
                body.append("    Py_DECREF(PyTuple_GET_ITEM(out, %d)); PyTuple_SET_ITEM(out, %d, "
                            "Py_NewRef(PyTuple_GET_ITEM(%s, %d)));" % (j, j, res, pos2))
            body.append("    for (int k = 0; k < %d; k++) Py_CLEAR(tmp[k]);" % max(ntemps, 1))
            body.append("  }")
            continue
        formula = str(d.derivs[p.name])
        em = FormulaEmitter(d, names)
        em.ntemps = ntemps
        tree = ast.parse(formula, mode="eval").body
        res = em.expr(tree)
        ntemps = em.ntemps
        if is_list:   # one gradient per list item
            body.append("  {")
            body += ["    " + line for line in em.lines]
            body.append("    PyObject *t_ = PySequence_Tuple(%s);" % res)
            body.append("    if (!t_) goto fail;")
            body.append("    if (PyTuple_GET_SIZE(t_) != n_->num_edges) { Py_DECREF(t_); PyErr_SetString("
                        "PyExc_SystemError, \"%s: list formula returned the wrong number of gradients\"); goto fail; }"
                        % d.full)
            body.append("    Py_SETREF(out, t_);")
            body.append("    for (int k = 0; k < %d; k++) Py_CLEAR(tmp[k]);" % max(ntemps, 1))
            body.append("  }")
            continue
        body.append("  if (n_->edges[%d].fn) {" % i)
        body += ["    " + line for line in em.lines]
        if res.startswith("tmp["):
            body.append("    Py_SETREF(PyTuple_GET_ITEM(out, %d), %s); %s = NULL;" % (i, res, res))
            body[-1] = "    Py_DECREF(PyTuple_GET_ITEM(out, %d)); PyTuple_SET_ITEM(out, %d, %s); %s = NULL;" % (i, i, res, res)
        else:
            body.append("    Py_DECREF(PyTuple_GET_ITEM(out, %d)); PyTuple_SET_ITEM(out, %d, Py_NewRef(%s));" % (i, i, res))
        body.append("    for (int k = 0; k < %d; k++) Py_CLEAR(tmp[k]);" % max(ntemps, 1))
        body.append("  }")
    A.append("  PyObject *tmp[%d] = {0};" % max(ntemps, 1))
    for nm in unpack:
        A.append("  PyObject *u_%s = NULL;" % nm)
    if info.get("list_out"):
        A.append("  PyObject *gl_ = NULL;")
    A.append("  bool any_grad = false;")
    A.append("  for (int i = 0; i < n_->num_inputs; i++) if (grads[i] != Py_None) any_grad = true;")
    A.append("  if (!any_grad) return out;")
    if info.get("list_out"):
        A.append("  gl_ = PyTuple_New(n_->num_inputs);")
        A.append("  if (!gl_) goto fail;")
        A.append("  for (int i = 0; i < n_->num_inputs; i++) {")
        A.append("    PyObject *g_ = grads[i] != Py_None ? Py_NewRef(grads[i]) : THP_zeros_for(n_, i);")
        A.append("    if (!g_) goto fail;")
        A.append("    PyTuple_SET_ITEM(gl_, i, g_);")
        A.append("  }")
    if info["nout"] > 1:
        A.append("  PyObject *gz_ = NULL;")
        A.append("  if (grad == Py_None) { gz_ = THP_zeros_for(n_, 0); if (!gz_) goto fail; grad = gz_; }")
    for nm in unpack:
        A.append("  if (!(u_%s = THPSavedVar_unpack(&n->sv_%s, n_))) goto fail;" % (nm, nm))
    A += body
    for nm in unpack:
        A.append("  Py_XDECREF(u_%s);" % nm)
    if info["nout"] > 1:
        A.append("  Py_XDECREF(gz_);")
    if info.get("list_out"):
        A.append("  Py_XDECREF(gl_);")
    A.append("  return out;")
    A.append("  goto fail;   /* keeps the label used when no formula can fail */")
    A.append("fail:")
    A.append("  for (int k = 0; k < %d; k++) Py_XDECREF(tmp[k]);" % max(ntemps, 1))
    for nm in unpack:
        A.append("  Py_XDECREF(u_%s);" % nm)
    if info["nout"] > 1:
        A.append("  Py_XDECREF(gz_);")
    if info.get("list_out"):
        A.append("  Py_XDECREF(gl_);")
    A.append("  Py_DECREF(out);")
    A.append("  return NULL;")
    A.append("}")
    S.append("\n".join(A))
    # traverse / release
    T = ["static int %s_traverse(THPNode *n_, visitproc visit, void *arg) {" % name, "  %s *n = (%s *)n_;" % (name, name), "  (void)n;"]
    R = ["static void %s_release(THPNode *n_, bool final) {" % name, "  %s *n = (%s *)n_;" % (name, name),
         "  (void)n; (void)final;"]
    for nm in info["saved_inputs"] + [out_name(k) for k in info["saved_outs"]]:
        T.append("  Py_VISIT(n->sv_%s.data); Py_VISIT(n->sv_%s.packed); Py_VISIT(n->sv_%s.unpack_hook);" % (nm, nm, nm))
        R.append("  THPSavedVar_release(&n->sv_%s);" % nm)
    for nm in info["scalars"]:
        T.append("  Py_VISIT(n->arg_%s);" % nm)
        R.append("  if (final) Py_CLEAR(n->arg_%s);" % nm)
    for nm in info.get("numbers", ()):
        T.append("  Py_VISIT(n->num_%s);" % nm)
        R.append("  if (final) Py_CLEAR(n->num_%s);" % nm)
    for (nm, attr) in info["attrs"]:
        T.append("  Py_VISIT(n->attr_%s_%s);" % (nm, attr))
        R.append("  if (final) Py_CLEAR(n->attr_%s_%s);" % (nm, attr))
    T.append("  return 0;\n}")
    R.append("}")
    S.append("\n".join(T))
    S.append("\n".join(R))
    # saved-tensor attributes visible from Python, as PyTorch names them (_saved_self ...)
    G = []
    getsets = []
    for nm in info["saved_inputs"] + [out_name(k) for k in info["saved_outs"]]:
        if nm in info.get("numbers", ()):   # a Python number the call took: torch shows the number
            G.append("static PyObject *%s_get_saved_%s(PyObject *o, void *c) { %s *n = (%s *)o; "
                     "return Py_NewRef(n->num_%s ? n->num_%s : Py_None); }" % (name, nm, name, name, nm, nm))
            getsets.append('  {"_saved_%s", %s_get_saved_%s, NULL, NULL, NULL},' % (nm, name, nm))
            continue
        G.append("static PyObject *%s_get_saved_%s(PyObject *o, void *c) { %s *n = (%s *)o; "
                 "return THPSavedVar_unpack(&n->sv_%s, (THPNode *)o); }" % (name, nm, name, name, nm))
        getsets.append('  {"_saved_%s", %s_get_saved_%s, NULL, NULL, NULL},' % (nm, name, nm))
        G.append("static PyObject *%s_get_raw_saved_%s(PyObject *o, void *c) { %s *n = (%s *)o; "
                 "return THPSavedVar_raw(&n->sv_%s, o); }" % (name, nm, name, name, nm))
        getsets.append('  {"_raw_saved_%s", %s_get_raw_saved_%s, NULL, NULL, NULL},' % (nm, name, nm))
    # recorded shapes as torch names them (self.sizes: _saved_self_sym_sizes, a tuple of ints)
    attr_names = {"sizes": "sym_sizes", "strides": "sym_strides", "numel": "sym_numel"}
    list_params = {p.name for p in d.params if p.base in ("Tensor[]", "Tensor?[]")}
    for (nm, attr) in info["attrs"]:
        if attr not in attr_names or nm in list_params:
            continue
        conv = "PySequence_Tuple(v)" if attr != "numel" else "Py_NewRef(v)"
        G.append("static PyObject *%s_get_attr_%s_%s(PyObject *o, void *c) { PyObject *v = ((%s *)o)->attr_%s_%s; "
                 "return v ? %s : Py_NewRef(Py_None); }" % (name, nm, attr, name, nm, attr, conv))
        getsets.append('  {"_saved_%s_%s", %s_get_attr_%s_%s, NULL, NULL, NULL},' % (nm, attr_names[attr], name, nm, attr))
    for nm in info["scalars"]:
        G.append("static PyObject *%s_get_arg_%s(PyObject *o, void *c) { %s *n = (%s *)o; "
                 "return Py_NewRef(n->arg_%s ? n->arg_%s : Py_None); }" % (name, nm, name, name, nm, nm))
        getsets.append('  {"_saved_%s", %s_get_arg_%s, NULL, NULL, NULL},' % (nm, name, nm))
    S += G
    S.append("static PyGetSetDef %s_getset[] = {\n%s\n  {NULL}\n};" % (name, "\n".join(getsets)))
    S.append("PyTypeObject %s_Type = {\n  PyVarObject_HEAD_INIT(NULL, 0)\n  .tp_name = \"%s\",\n"
             "  .tp_basicsize = sizeof(%s),\n  .tp_flags = Py_TPFLAGS_DEFAULT,\n"
             "  .tp_getset = %s_getset,\n};" % (name, info.get("pyname") or d.node or name, name, name))
    S.append("static void %s_init(void) { %s_Type.tp_base = &THPNodeType; }" % (name, name))
    return "\n\n".join(S)


def self_first(params):
    """A method's parameters: the one named self first, where the Tensor method binds (where.self's schema
    starts with condition, but x.where(cond, y) is torch.where(cond, x, y))."""
    return sorted(params, key=lambda p: p.name != "self")


def python_sig(d, method, inplace, out):
    params = self_first(d.params) if method else d.params   # methods bind self as the first parameter
    parts = []
    kw = False
    for p in params:
        if p.kwonly and not kw:
            parts.append("*")
            kw = True
        parts.append(p.sig(rename_self=not method))
    if out and not method and not inplace:
        if not kw:
            parts.append("*")
        parts.append("Tensor[]? out=None" if d.ret_kind == "tuple" else "Tensor? out=None")
    name = d.name + ("_" if inplace else "")
    return "%s(%s)" % (name, ", ".join(parts))


def deprecated_params(d, order, method):
    """The parameters of a deprecated signature: order's names positionally (self first for a method),
    then the others keyword-only with their defaults."""
    if method:
        order = ["self"] + [n for n in order if n != "self"]
    by_name = {p.name: p for p in d.params}
    return [by_name[n] for n in order], [p for p in d.params if p.name not in order]


def deprecated_sig(d, order, method, inplace, out, listed_only=False):
    pos, rest = deprecated_params(d, order, method)
    if listed_only:
        rest = []
    parts = ["%s %s" % (p.type, "input" if (p.name == "self" and not method) else p.name) for p in pos]
    if rest or (out and not method and not inplace):
        parts.append("*")
    parts += [p.sig(rename_self=not method) for p in rest]
    if out and not method and not inplace:
        parts.append("Tensor? out=None")
    return "%s(%s)" % (d.name + ("_" if inplace else ""), ", ".join(parts))


def entry_sig(d, method, inplace, out, order):
    """A binding entry's signature: the usual one, or a deprecated positional order's."""
    return python_sig(d, method, inplace, out) if order is None else deprecated_sig(d, order, method, inplace, out)


def _takes_tensors_first(a, b):
    """a's overload is tried before b's, as torch sorts them: the same parameters except where a takes a
    Tensor that refuses numbers (tensor_only) and b a Scalar. So a 0-dim tensor reaches the Tensor overload
    (clamp(x, min=t) keeps t's gradient) and a number still the Scalar one."""
    if len(a.params) != len(b.params):
        return False
    differs = False
    for pa, pb in zip(a.params, b.params):
        if pa.base == pb.base:
            continue
        if pa.base == "Tensor" and pb.base == "Scalar" and pa.name in a.tensor_only:
            differs = True
            continue
        return False
    return differs


def tensor_overloads_first(entries):
    """A binding's entries in declaration order, each moved before the first one it must precede."""
    out = []
    for e in entries:
        at = next((i for i, o in enumerate(out) if e[1] == o[1] and _takes_tensors_first(e[0], o[0])), len(out))
        out.insert(at, e)
    return out


def sig_flags(d, order=None):
    """The parser's per-signature flags after the parameter list (src/python/ArgParser.c). A deprecated
    order is hidden: it parses, but torch leaves it out of its invalid-arguments messages."""
    tensors = ("|tensors=" + ",".join(d.tensor_only)) if d.tensor_only else ""
    if order is not None:
        return tensors + "|hidden"
    return tensors + ("|number_first" if d.number_first else "")


def gen_binding(pyname, entries, method, module=""):
    """entries: list of (decl, inplace, out). One parser, one C function.
    When no overload parses, an argument overriding __torch_function__ (an
    fx Proxy) gets the call (src/python/TorchFunction.h)."""
    fname = "THPVariable_%s%s" % ("m_" if method else "f_", pyname)
    sigs = [entry_sig(d, method, inplace, out, order) + sig_flags(d, order) for (d, inplace, out, order) in entries]
    L = ["PyObject *%s(PyObject *self_, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {" % fname]
    L.append("  static const char *sigs[] = {%s, NULL};" % ", ".join('"%s"' % s for s in sigs))
    L.append("  static APParser parser = { sigs };")
    L.append("  APResult r;")
    # a Tensor subclass argument overriding __torch_function__ takes the call before any parse
    L.append("  if (THP_tf_armed) { PyObject *tfr; if (THP_tf_binding(\"%s\", \"%s\", %s, args, nargs, kwnames, &tfr))"
             " return tfr; }" % (module, pyname, "self_" if method else "NULL"))
    L.append("  int idx = ap_parse(&parser, %s, args, nargs, kwnames, &r);" % ("self_" if method else "NULL"))
    L.append("  if (idx < 0) return r.sparse ? ap_sparse_call(&parser, %s, args, nargs, kwnames)"
             " : THP_torch_function_fallback(\"%s\", \"%s\", %s, args, nargs, kwnames);"
             % ("self_" if method else "NULL", module, pyname, "self_" if method else "NULL"))
    L.append("  PyObject *res = NULL;")
    L.append("  switch (idx) {")
    for k, (d, inplace, out, order) in enumerate(entries):
        # each parameter's index in the parsed signature (a deprecated order moves them)
        pos, rest = (deprecated_params(d, order, method) if order is not None
                     else (self_first(d.params) if method else d.params, []))
        where = {p.name: i for i, p in enumerate(pos + rest)}
        args = [c_arg_from_parser(p, where[p.name]) for p in d.params]
        dev_checks = ["ap_device_check(&r, %d) < 0" % where[p.name] for p in d.params if p.base == "Device"]
        vt = "VT_%s%s" % (d.cname, "_" if inplace else ("_out" if d.out else ""))
        if out and not inplace and d.ret_kind == "tuple":
            args.append("ap_object(&r, %d)" % len(d.params))
        elif out and not inplace:
            args.append("(PyObject *)ap_tensor(&r, %d)" % len(d.params))
        elif d.out and not inplace:
            args.append("NULL")
        guard = ("if (%s) break; " % " || ".join(dev_checks)) if dev_checks else ""
        if order is not None:   # torch's deprecation warning (once per process)
            usual = [python_sig(e[0], method, e[1], e[2]).replace("(Tensor self, ", "(") for e in entries
                     if e[3] is None]
            # torch's parser prints an optional Tensor as Tensor and every default as " = "
            # and lists only the deprecated order's own parameters (the keyword-only rest parses, unlisted)
            dep = re.sub(r" ?= ?", " = ", deprecated_sig(d, order, method, inplace, out, listed_only=True)
                         .replace("(Tensor self, ", "("))
            text = ("This overload of %s is deprecated:\\n\\t%s\\nConsider using one of the following signatures "
                    "instead:\\n\\t%s" % (pyname, dep, "\\n\\t".join(u.replace("=", " = ") for u in usual)))
            text = text.replace("Tensor? ", "Tensor ")
            guard += "if (ap_warn_deprecated(\"%s\") < 0) break; " % text.replace("Scalar", "Number")
        L.append("    case %d: %sres = %s(%s); break;" % (k, guard, vt, ", ".join(args)))
    L.append("  }")
    L.append("  ap_release(&r);")
    L.append("  return res;")
    L.append("}")
    return fname, "\n".join(L)


def gen_fwrapper(d):
    """F_<name>: call an op from C with PyObject arguments (NULL = default)."""
    params = d.params
    proto = "PyObject *F_%s(%s)" % (d.cname, ", ".join("PyObject *a%d" % i for i in range(len(params))) or "void")
    L = [proto + " {", "  PyObject *owned[%d]; int nowned = 0; PyObject *res = NULL;" % max(1, len(params))]
    args = []
    for i, p in enumerate(params):
        L += ["  " + x for x in from_pyobj(p, "a%d" % i, "v%d" % i)]
        args.append("v%d" % i)
    vt = "VT_%s%s" % (d.cname, "_out" if d.out else "")
    if d.out:
        args.append("NULL")
    L.append("  res = %s(%s);" % (vt, ", ".join(args)))
    L.append("fail:")
    L.append("  for (int i = 0; i < nowned; i++) Py_XDECREF(owned[i]);")
    L.append("  return res;")
    L.append("}")
    return proto, "\n".join(L)


def boxed_key(d, inplace):
    """The op's name in graphs: aten::<name>[_][.<overload>]."""
    return "aten::%s%s%s" % (d.name, "_" if inplace else "", "." + d.overload if d.overload else "")


def gen_boxed(d, inplace):
    """boxed_<op>: the op called with its schema's arguments positionally, as
    the C interpreter holds them (src/python/JitInterpreter.h). The arguments
    go through the binding's own parser (one all-positional signature), so a
    bad argument gets the binding's TypeError; a dtype, layout or memory
    format given as the graph's int id is boxed first. Then the same VT call
    (dispatch observers, autograd, kernel) as the binding."""
    fname = "boxed_%s%s" % (d.cname, "_" if inplace else "")
    sig = "%s(%s)" % (d.name + ("_" if inplace else ""), ", ".join(p.sig(rename_self=not inplace) for p in d.params))
    sig += sig_flags(d)
    n = len(d.params)
    L = ["PyObject *%s(PyObject *const *stack, Py_ssize_t n) {" % fname,
         '  static const char *sigs[] = {"%s", NULL};' % sig,
         "  static APParser parser = { sigs };",
         "  PyObject *res = NULL;"]
    enums = [(i, p) for i, p in enumerate(d.params) if p.base in ("ScalarType", "Layout", "MemoryFormat")]
    args_arr = "stack"
    if enums:
        L.append("  PyObject *a_[%d]; PyObject *boxed_[%d] = {0};" % (n, len(enums)))
        L.append("  if (n > %d) return THP_jit_too_many_args(\"%s\", %d, n);" % (n, boxed_key(d, inplace), n))
        L.append("  for (Py_ssize_t i = 0; i < n; i++) a_[i] = stack[i];")
        for k, (i, p) in enumerate(enums):
            L.append("  if (n > %d && PyLong_CheckExact(a_[%d])) { a_[%d] = boxed_[%d] = THP_jit_enum(THP_JIT_%s, a_[%d]);"
                     " if (!a_[%d]) goto fail; }" % (i, i, i, k, p.base.upper(), i, i))
        args_arr = "a_"
    L.append("  APResult r;")
    L.append("  if (ap_parse(&parser, NULL, %s, n, NULL, &r) < 0) goto fail;" % args_arr)
    args = [c_arg_from_parser(p, i) for i, p in enumerate(d.params)]
    vt = "VT_%s%s" % (d.cname, "_" if inplace else ("_out" if d.out else ""))
    if d.out and not inplace:
        args.append("NULL")
    dev_checks = ["ap_device_check(&r, %d) < 0" % i for i, p in enumerate(d.params) if p.base == "Device"]
    guard = ("if (!(%s)) " % " || ".join(dev_checks)) if dev_checks else ""
    L.append("  %sres = %s(%s);" % (guard, vt, ", ".join(args)))
    L.append("  ap_release(&r);")
    L.append("fail:")
    if enums:
        L.append("  for (int i = 0; i < %d; i++) Py_XDECREF(boxed_[i]);" % len(enums))
    L.append("  return res;")
    L.append("}")
    entry = '  {"%s", %s, "%s"},' % (boxed_key(d, inplace), fname, ",".join(p.name for p in d.params))
    return "\n".join(L), entry


class _WriteIfChanged(io.StringIO):
    """A file that is written only if its text changed, so an unchanged
    generated header keeps its mtime and the build recompiles nothing."""
    def __init__(self, path):
        super().__init__()
        self.path = path

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if exc[0] is None:
            text = self.getvalue()
            old = open(self.path).read() if os.path.exists(self.path) else None
            if old != text:
                with open(self.path, "w") as fh:
                    fh.write(text)
        return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--decls", default=os.path.join(ROOT, "src", "ATen", "declarations"))
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    decls = load_decls(sorted(glob.glob(os.path.join(a.decls, "*.yaml"))))
    for d in decls:
        if d.ret_kind in ("tensor", "tuple"):
            req = sum(1 for p in d.params if p.default is None and not p.type.endswith("?"))
            FormulaEmitter.OVERLOADS.setdefault(d.name, []).append((d.cname, len(d.params), req))

    def family(d):
        return os.path.splitext(os.path.basename(d.src))[0]

    # per family: its node types, VT bodies, F_ wrappers, bindings, boxed calls
    fam = {}
    def part(f):
        return fam.setdefault(f, {"nodes": [], "bodies": [], "fw": [], "bind": [], "boxed": []})
    protos, nodes = [], []
    node_family = {}
    fwrappers = {}
    for d in decls:
        variants = [(False, False)]
        if d.out:
            variants = [(False, True)]
        if d.inplace:
            variants.append((True, False))
        for inplace, out in variants:
            proto, body, node_infos = gen_vt(d, out, inplace)
            protos.append(proto + ";")
            part(family(d))["bodies"].append(body)
            for node in node_infos or ():
                # a VT fills its node's struct and calls its static apply: both
                # must be in one file
                if node_family.setdefault(node["name"], family(d)) != family(d):
                    raise SystemExit("generate_code: node %s is made by ops of two families (%s, %s)"
                                     % (node["name"], node_family[node["name"]], family(d)))
                if all(n["name"] != node["name"] for n in nodes):
                    nodes.append(node)
                    part(family(d))["nodes"].append(node)
        if d.ret_kind in ("tensor", "tuple") and d.cname not in fwrappers:
            fwrappers[d.cname] = gen_fwrapper(d)
            part(family(d))["fw"].append(fwrappers[d.cname][1])
    # F_<name> aliases for the first overload of each name
    falias = []
    seen = set(d.cname for d in decls)
    for d in decls:
        if d.name in seen or d.cname not in fwrappers:
            continue
        seen.add(d.name)
        n = len(d.params)
        falias.append("#define F_%s F_%s" % (d.name, d.cname))

    # bindings: group by python name
    groups = {}   # (module, kind, pyname) -> entries (decl, inplace, out, deprecated order or None)
    for d in decls:
        if d.manual_python:
            continue
        mod = d.module or ""
        if "function" in d.variants:
            groups.setdefault((mod, "f", d.name), []).append((d, False, d.out, None))
        if "method" in d.variants and not d.module:
            groups.setdefault(("", "m", d.name), []).append((d, False, False, None))
        if d.inplace and not d.internal:
            groups.setdefault(("", "m", d.name + "_"), []).append((d, True, False, None))
            if "function" in d.variants:
                groups.setdefault((d.module or "", "f", d.name + "_"), []).append((d, True, False, None))
    for key in groups:
        groups[key] = tensor_overloads_first(groups[key])
    # deprecated orders after every usual signature of the name, so they parse only what those reject
    for d in decls:
        for order in ([] if d.manual_python else d.deprecated):
            mod = d.module or ""
            if "function" in d.variants:
                groups[(mod, "f", d.name)].append((d, False, d.out, order))
            if "method" in d.variants and not d.module:
                groups[("", "m", d.name)].append((d, False, False, order))
            if d.inplace and not d.internal:
                groups[("", "m", d.name + "_")].append((d, True, False, order))
    table_protos = []
    boxed_table = []
    for d in decls:
        if d.manual_python:
            continue   # its hand-written binding does more than the VT call (zeros_like's requires_grad)
        for inplace in ([False, True] if d.inplace else [False]):
            body, entry = gen_boxed(d, inplace)
            part(family(d))["boxed"].append(body)
            table_protos.append(body[:body.index(" {")] + ";")
            boxed_table.append(entry)
    tables = {"m": [], "f": {}}
    for (mod, kind, pyname), entries in groups.items():
        fname, body = gen_binding(pyname, entries, kind == "m", mod)
        # a name's overloads may span families: its binding goes with the first
        part(family(entries[0][0]))["bind"].append(body)
        table_protos.append(body[:body.index(" {")] + ";")
        entry = '  {"%s", (PyCFunction)(void (*)(void))%s, METH_FASTCALL | METH_KEYWORDS, NULL},' % (pyname, fname)
        if kind == "m":
            tables["m"].append(entry)
        else:
            tables["f"].setdefault(mod, []).append(entry)

    with _WriteIfChanged(os.path.join(a.out, "Functions.h")) as fh:
        fh.write("/* Generated by tools/generate_code.py. Do not edit. */\n#ifndef THP_GENERATED_FUNCTIONS_H\n"
                 "#define THP_GENERATED_FUNCTIONS_H\n#include \"THP.h\"\n#include \"Bindings.h\"\n\n")
        fh.write("\n".join(protos) + "\n\n")
        fh.write("\n".join(p + ";" for p, _ in fwrappers.values()) + "\n\n")
        fh.write("\n".join(falias) + "\n\n")
        for info in nodes:
            fh.write("extern PyTypeObject %s_Type;\n" % info["name"])
        fh.write("#endif\n")
    written = set()
    for f, P in sorted(fam.items()):
        path = os.path.join(a.out, "Functions_%s.c" % f)
        written.add(path)
        with _WriteIfChanged(path) as fh:
            fh.write(HEADER % area_includes())
            fh.write("\n/* ---- %s: node types ---- */\n" % f)
            for info in P["nodes"]:
                fh.write(gen_node(info) + "\n\n")
            fh.write("void THP_generated_init_nodes_%s(void) {\n%s\n}\n\n"
                     % (f, "\n".join("  %s_init();" % i["name"] for i in P["nodes"])))
            fh.write("\n/* ---- VT: ATen call + autograd recording ---- */\n")
            fh.write("\n\n".join(P["bodies"]) + "\n\n")
            fh.write("/* ---- F_: ops callable from formulas ---- */\n")
            fh.write("\n\n".join(P["fw"]) + "\n\n")
            fh.write("/* ---- Python bindings ---- */\n")
            fh.write("\n\n".join(P["bind"]) + "\n\n")
            fh.write("/* ---- boxed calls: what the C interpreter runs (JitInterpreter.h) ---- */\n")
            fh.write("\n\n".join(P["boxed"]) + "\n")
    path = os.path.join(a.out, "Functions.c")
    written.add(path)
    with _WriteIfChanged(path) as fh:
        fh.write(HEADER % "")
        fh.write("\n".join(table_protos) + "\n\n")
        fh.write("\n".join("void THP_generated_init_nodes_%s(void);" % f for f in sorted(fam)) + "\n\n")
        fh.write("const THPJitBoxedEntry THP_generated_boxed_ops[] = {\n%s\n  {NULL, NULL, NULL}\n};\n\n"
                 % "\n".join(boxed_table))
        fh.write("PyMethodDef THP_generated_tensor_methods[] = {\n%s\n  {NULL}\n};\n\n" % "\n".join(tables["m"]))
        mods = sorted(set(list(tables["f"].keys()) + ["", "nn", "linalg", "special", "fft", "internal"]))
        for mod in mods:
            fh.write("PyMethodDef THP_generated_functions_%s[] = {\n%s\n  {NULL}\n};\n\n"
                     % (mod or "main", "\n".join(tables["f"].get(mod, []))))
        fh.write("PyTypeObject *THP_generated_node_types[] = {\n%s\n  NULL\n};\n"
                 % "\n".join("  &%s_Type," % i["name"] for i in nodes))
        fh.write("void THP_generated_init_nodes(void) {\n%s\n}\n"
                 % "\n".join("  THP_generated_init_nodes_%s();" % f for f in sorted(fam)))
    # a family file left from a renamed or removed family would link twice
    for old in glob.glob(os.path.join(a.out, "Functions*.c")):
        if old not in written:
            os.remove(old)
    with _WriteIfChanged(os.path.join(a.out, "_C.pyi")) as fh:
        fh.write("# Generated by tools/generate_code.py: what cthtorch._C exports.\n"
                 "from typing import Any\n\nclass _TensorBase:\n")
        for (mod, kind, pyname), entries in sorted(groups.items()):
            if kind == "m":
                fh.write("    def %s(self, *args: Any, **kwargs: Any) -> Any: ...  # %s\n"
                         % (pyname, " | ".join(entry_sig(d, True, i, o, od) for d, i, o, od in entries)))
        fh.write("\nclass _VariableFunctions:\n")
        for (mod, kind, pyname), entries in sorted(groups.items()):
            if kind == "f" and not mod:
                fh.write("    @staticmethod\n    def %s(*args: Any, **kwargs: Any) -> Any: ...  # %s\n"
                         % (pyname, " | ".join(entry_sig(d, False, i, o, od) for d, i, o, od in entries)))
    print("generate_code: %d declarations, %d backward nodes -> %s" % (len(decls), len(nodes), a.out))


if __name__ == "__main__":
    main()
