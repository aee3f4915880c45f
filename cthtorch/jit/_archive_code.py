"""Runs the TorchScript source of an archive's code/ directory.

TorchScript archives carry their methods as TorchScript source
(`code/__torch__/.../<module>.py`), the Python subset the frontend compiles.
Until the loader hands that text to the script frontend's compiler, it runs it
here with a small evaluator over Python's `ast`, which is safe by construction:
names resolve only to the archive's own classes and functions (`__torch__.*`),
its constants (`CONSTANTS.cN`), locals, TorchScript builtins and ops
(`torch.<op>`, `ops.aten.<op>`, `ops.prim.<op>`), never to Python globals,
modules or attributes of arbitrary objects.
"""
import ast
import math

import cthtorch
from cthtorch._ops.overloads import _aten_callable

_SCALAR_TYPES = ["uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64", "complex32",
                 "complex64", "complex128", "bool", "qint8", "quint8", "qint32", "bfloat16"]
_MEMORY_FORMATS = ["contiguous_format", "preserve_format", "channels_last", "channels_last_3d"]


class CodeError(RuntimeError):
    pass


def scalar_type(v):
    """An archive's ScalarType (the enum's integer, as TorchScript source writes dtype=6) as a dtype."""
    if isinstance(v, int) and not isinstance(v, bool):
        if not 0 <= v < len(_SCALAR_TYPES) or not hasattr(cthtorch, _SCALAR_TYPES[v]):
            raise CodeError("unsupported ScalarType %d in TorchScript code" % v)
        return getattr(cthtorch, _SCALAR_TYPES[v])
    return v


def _memory_format(v):
    if isinstance(v, int) and not isinstance(v, bool):
        return getattr(cthtorch, _MEMORY_FORMATS[v])
    return v


def _layout(v):
    if isinstance(v, int) and not isinstance(v, bool):
        return [cthtorch.strided, cthtorch.sparse_coo][v]
    return v


_KW_CONVERT = {"dtype": scalar_type, "memory_format": _memory_format, "layout": _layout}


# ---- TorchScript builtins over Python values (aten::add.int, aten::len.t, aten::format...) ----
def _format(fmt, *args):
    return fmt.format(*[_ts_str(a) for a in args])


def _ts_str(v):
    if isinstance(v, list):
        return "[" + ", ".join(_ts_str(x) for x in v) + "]"
    if isinstance(v, tuple):
        return "(" + ", ".join(_ts_str(x) for x in v) + ("," if len(v) == 1 else "") + ")"
    return v


def _set_item(container, key, value):
    container[key] = value
    return container


def _append(lst, v):
    lst.append(v)
    return lst


def _range_length(lo, hi, step):
    if step == 0:
        raise CodeError("range() arg 3 must not be zero")
    return len(range(lo, hi, step))


def _div(a, b):
    return a / b


def _device(name):
    return cthtorch.device(name)


# These take Python values (and tensors as opaque objects): never an aten tensor op
_ALWAYS_PY = {
    "__is__": lambda a, b: a is b, "__isnot__": lambda a, b: a is not b,
    "__contains__": lambda c, x: x in c, "__getitem__": lambda c, i: c[i], "_set_item": _set_item,
    "len": len, "list": list, "append": _append, "format": _format, "device": _device, "__not__": lambda a: not a,
    "__range_length": _range_length, "__derive_index": lambda i, start, step: start + i * step,
    "str": str, "keys": lambda d: list(d.keys()), "values": lambda d: list(d.values()),
    "items": lambda d: list(d.items()), "extend": lambda l, o: l.extend(o), "insert": lambda l, i, v: l.insert(i, v),
    "pop": lambda l, *i: l.pop(*i), "warn": lambda *a, **k: None, "startswith": str.startswith,
    "endswith": str.endswith, "join": lambda s, parts: s.join(parts), "lower": str.lower, "upper": str.upper,
    "copy": lambda c: c.copy() if isinstance(c, (list, dict)) else cthtorch.ops.aten.copy(c),
}
# These are Python's when no argument is a tensor (aten::lt.int, aten::add.float ...)
_SCALAR_PY = {
    "lt": lambda a, b: a < b, "gt": lambda a, b: a > b, "le": lambda a, b: a <= b, "ge": lambda a, b: a >= b,
    "eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "add": lambda a, b: a + b, "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b, "div": _div, "floordiv": lambda a, b: a // b, "remainder": lambda a, b: a % b,
    "pow": lambda a, b: a ** b, "neg": lambda a: -a, "__and__": lambda a, b: a and b,
    "__or__": lambda a, b: a or b, "__xor__": lambda a, b: a != b, "floor": math.floor, "ceil": math.ceil,
    "sqrt": math.sqrt, "exp": math.exp, "log": math.log, "abs": abs, "min": min, "max": max,
    "Int": int, "Float": float, "Bool": bool, "ScalarImplicit": lambda t: t.item(), "sum": sum,
}


def _aten_convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups, *flags):
    F = cthtorch.nn.functional
    nd = weight.dim() - 2
    if transposed:
        fn = [F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d][nd - 1]
        return fn(input, weight, bias, stride, padding, output_padding, groups, dilation)
    fn = [F.conv1d, F.conv2d, F.conv3d][nd - 1]
    return fn(input, weight, bias, stride, padding, dilation, groups)


class _FlatRNN:
    """What nn.RNNBase.forward reads, over aten::lstm/gru/rnn_*'s flat weight list."""
    from cthtorch.nn.modules.rnn import RNNBase as _Base
    forward = _Base.forward

    def __init__(self, mode, params, has_biases, num_layers, dropout, train, bidirectional, batch_first,
                 nonlinearity="tanh"):
        per = 4 if has_biases else 2
        dirs = 2 if bidirectional else 1
        if len(params) not in (per * num_layers * dirs, (per + 1) * num_layers * dirs):
            raise CodeError("%s: expected %d weights, got %d" % (mode.lower(), per * num_layers * dirs, len(params)))
        self.proj = len(params) != per * num_layers * dirs
        per += self.proj
        self.groups = [params[i * per:(i + 1) * per] for i in range(num_layers * dirs)]
        self.mode, self.num_layers, self.bias, self.batch_first = mode, num_layers, has_biases, batch_first
        self.dropout, self.training, self.bidirectional = dropout, train, bidirectional
        self.nonlinearity = nonlinearity
        self.hidden_size = params[1].shape[1] if not self.proj else params[per - 1].shape[1]
        self.proj_size = params[per - 1].shape[0] if self.proj else 0
        self.input_size = params[0].shape[1]

    def _weights(self, layer, direction):
        g = list(self.groups[layer * (2 if self.bidirectional else 1) + direction])
        w_hr = g.pop() if self.proj else None
        if not self.bias:
            g += [None, None]
        return g[0], g[1], g[2], g[3], w_hr


def _aten_rnn(mode, nonlinearity="tanh"):
    def run(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first, *rest):
        if isinstance(hx, cthtorch.Tensor) and not isinstance(params, (list, tuple)):   # the packed overload
            raise NotImplementedError("cthtorch.jit.load: the packed-sequence form of aten::%s is not implemented"
                                      % mode.lower())
        rnn = _FlatRNN(mode, list(params), has_biases, num_layers, dropout, train, bidirectional, batch_first,
                       nonlinearity)
        if mode == "LSTM":
            out, (h, c) = rnn.forward(input, tuple(hx))
            return out, h, c
        return rnn.forward(input, hx)
    return run


def _aten_to(x, *args, **kwargs):
    """aten::to's overloads: (dtype, ...), (device, dtype, ...), (other tensor, ...), with ScalarType integers."""
    a = list(args)
    opts = {}
    if a and isinstance(a[0], cthtorch.Tensor):
        other = a.pop(0)
        opts["device"], opts["dtype"] = other.device, other.dtype
    elif a and (a[0] is None or isinstance(a[0], (cthtorch.device, str))):
        opts["device"] = a.pop(0)
        if a:
            opts["dtype"] = a.pop(0)
    elif a:
        opts["dtype"] = a.pop(0)
    opts.update(zip(("non_blocking", "copy", "memory_format"), a))
    opts.update(kwargs)
    return x.to(**{k: _KW_CONVERT.get(k, lambda v: v)(v) for k, v in opts.items() if v is not None})


def _num_to_tensor(n):
    return cthtorch.tensor(n)


_ATEN_SPECIAL = {
    "_convolution": _aten_convolution, "lstm": _aten_rnn("LSTM"), "gru": _aten_rnn("GRU"),
    "rnn_tanh": _aten_rnn("RNN_TANH", "tanh"), "rnn_relu": _aten_rnn("RNN_RELU", "relu"), "to": _aten_to,
    "size": lambda t, *d: t.size(*d) if d else list(t.size()), "dim": lambda t: t.dim(),
    "numel": lambda t: t.numel(), "item": lambda t: t.item(), "tolist": lambda t: t.tolist(),
}


def _has_tensor(args):
    for a in args:
        if isinstance(a, cthtorch.Tensor):
            return True
    return False


def aten_call(name, args, kwargs):
    """aten::<name> on the evaluated arguments, resolved by value as TorchScript's overloads are."""
    f = _ALWAYS_PY.get(name)
    if f is not None:
        return f(*args, **kwargs)
    if not _has_tensor(args):
        f = _SCALAR_PY.get(name)
        if f is not None:
            return f(*args, **kwargs)
    for k in list(kwargs):
        conv = _KW_CONVERT.get(k)
        if conv is not None:
            kwargs[k] = conv(kwargs[k])
    f = _ATEN_SPECIAL.get(name)
    if f is None:
        f = _aten_callable(name)
        if f is None:
            raise CodeError("cthtorch.jit.load: unknown builtin op aten::%s in TorchScript code" % name)
    res = f(*args, **kwargs)
    if isinstance(res, cthtorch.Size):   # TorchScript's sizes are List[int]
        res = list(res)
    return res


class Error(Exception):
    """torch.jit.Error, until the JIT package defines it: what an exception raised by TorchScript code becomes."""


class _ScriptRaise(Exception):
    """prim::RaiseException on its way out: the innermost statement and function it came from are noted."""

    def __init__(self, msg, cls_name):
        super().__init__(msg)
        self.msg, self.cls_name = msg, cls_name
        self.lineno = self.function = None

    def as_jit_error(self):
        where = ""
        if self.function is not None:
            path = self.function.qualname.split(".")
            src = None
            for cut in range(len(path) - 1, 0, -1):
                src = self.function.unit.sources.get("/".join(path[:cut]))
                if src is not None:
                    where = '  File "code/%s.py", line %d, in %s\n' % ("/".join(path[:cut]), self.lineno or 0,
                                                                     self.function.node.name)
                    if self.lineno:
                        where += "    %s\n    <--- HERE\n" % src.splitlines()[self.lineno - 1].strip()
                    break
        err = getattr(getattr(cthtorch, "jit", None), "Error", None) or Error
        return err("The following operation failed in the TorchScript interpreter.\n"
                   "Traceback of TorchScript (most recent call last):\n%s%s: %s\n" % (where, self.cls_name, self.msg))


def _raise_exception(msg, cls_name="builtins.RuntimeError"):
    raise _ScriptRaise(msg, cls_name)


_DEPTH = [0]   # nesting of TorchScript calls: the outermost turns a _ScriptRaise into torch.jit.Error

_PRIM = {
    "NumToTensor": _num_to_tensor, "RaiseException": _raise_exception, "dtype": lambda t: t.dtype,
    "device": lambda t: t.device, "layout": lambda t: t.layout, "requires_grad": lambda t: t.requires_grad,
    "is_cuda": lambda t: t.is_cuda, "data": lambda t: t.detach(), "shape": lambda t: list(t.shape),
    "min": min, "max": max, "unchecked_unwrap_optional": lambda x: x, "TupleIndex": lambda t, i: t[i],
    "abs": abs, "is_nested": lambda t: False, "is_sparse": lambda t: t.is_sparse,
}


class _OpNamespace:
    """`torch` / `ops.aten` / `ops.prim` inside TorchScript source."""

    def __init__(self, ns):
        self.ns = ns

    def op(self, name):
        if self.ns == "prim":
            f = _PRIM.get(name)
            if f is None:
                raise CodeError("cthtorch.jit.load: unsupported prim::%s in TorchScript code" % name)
            return f
        if self.ns == "aten":
            return lambda *args, **kwargs: aten_call(name, args, kwargs)
        raise CodeError("cthtorch.jit.load: unsupported operator namespace ops.%s" % self.ns)


class _Ops:
    def op(self, name):
        return _OpNamespace(name)


_TORCH = _OpNamespace("aten")
_OPS = _Ops()


class QualName:
    """A partly written `__torch__.a.b` path, resolved against the archive's code/ files."""

    def __init__(self, unit, name):
        self.unit, self.name = unit, name


# ---- the archive's classes and functions ----
class ClassDef:
    """One `class X(Module):` of code/: its parameter/buffer names, attribute annotations, constants and methods."""

    def __init__(self, unit, qualname, node):
        self.unit, self.qualname, self.name = unit, qualname, node.name
        bases = [b.id if isinstance(b, ast.Name) else ast.unparse(b) for b in node.bases]
        self.base = bases[0] if bases else "object"
        self.is_module = self.base == "Module"
        self.parameters, self.buffers, self.constants, self.methods = [], [], {}, {}
        for st in node.body:
            if isinstance(st, ast.Assign) and isinstance(st.targets[0], ast.Name):
                if st.targets[0].id == "__parameters__":
                    self.parameters = [_literal(e) for e in st.value.elts]
                elif st.targets[0].id == "__buffers__":
                    self.buffers = [_literal(e) for e in st.value.elts]
            elif isinstance(st, ast.AnnAssign) and st.value is not None and isinstance(st.target, ast.Name):
                self.constants[st.target.id] = _literal(st.value)
            elif isinstance(st, ast.FunctionDef):
                self.methods[st.name] = Function(unit, "%s.%s" % (qualname, st.name), st)


def _literal(node):
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.List, ast.Tuple)):
        vals = [_literal(e) for e in node.elts]
        return vals if isinstance(node, ast.List) else tuple(vals)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_literal(node.operand)
    if isinstance(node, ast.Name) and node.id in ("inf", "nan"):
        return float(node.id)
    raise CodeError("cthtorch.jit.load: unsupported constant %s in TorchScript code" % ast.unparse(node))


class _Return(Exception):
    def __init__(self, value):
        self.value = value


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


_NONE_TYPE_ARG = object()


class Function:
    """A TorchScript function or method of code/, run statement by statement."""

    def __init__(self, unit, qualname, node):
        self.unit, self.qualname, self.node = unit, qualname, node
        a = node.args
        self.argnames = [x.arg for x in a.args]
        self.defaults = [_literal(d) for d in a.defaults]

    def __call__(self, *args, **kwargs):
        names = self.argnames
        if len(args) > len(names):
            raise RuntimeError("%s() expected at most %d argument(s) but received %d argument(s)"
                               % (self.node.name, len(names), len(args)))
        env = dict(zip(names, args))
        first_default = len(names) - len(self.defaults)
        for i in range(len(args), len(names)):
            n = names[i]
            if n in kwargs:
                env[n] = kwargs.pop(n)
            elif i >= first_default:
                d = self.defaults[i - first_default]
                env[n] = list(d) if isinstance(d, list) else d
            else:
                raise RuntimeError("%s() is missing value for argument '%s'." % (self.node.name, n))
        if kwargs:
            raise RuntimeError("%s() got an unexpected keyword argument '%s'" % (self.node.name, next(iter(kwargs))))
        _DEPTH[0] += 1
        try:
            self.unit.run_block(self.node.body, env)
        except _Return as r:
            return r.value
        except _ScriptRaise as e:
            if e.function is None:
                e.function = self
            if _DEPTH[0] == 1:
                raise e.as_jit_error() from None
            raise
        finally:
            _DEPTH[0] -= 1
        return None


class CodeUnit:
    """The code/ directory of one archive: qualified names resolve to its classes and functions on demand."""

    def __init__(self, sources, constants):
        self.sources = sources       # "__torch__/torch/nn/modules/linear" -> source text
        self.constants = constants   # constants.pkl's tuple
        self._parsed = {}
        self._names = {}

    def _file(self, path):
        if path not in self._parsed:
            src = self.sources.get(path)
            if src is None:
                self._parsed[path] = None
            else:
                try:
                    tree = ast.parse(src, filename=path + ".py")
                except SyntaxError as e:
                    raise CodeError("cthtorch.jit.load: code/%s.py is not TorchScript source: %s" % (path, e)) from None
                qual = path.replace("/", ".")
                items = {}
                for node in tree.body:
                    if isinstance(node, ast.ClassDef):
                        items[node.name] = ClassDef(self, "%s.%s" % (qual, node.name), node)
                    elif isinstance(node, ast.FunctionDef):
                        items[node.name] = Function(self, "%s.%s" % (qual, node.name), node)
                self._parsed[path] = items
        return self._parsed[path]

    def resolve(self, qualname):
        """`__torch__.a.b.C` -> its ClassDef/Function, or None where code/ has no such name."""
        if qualname not in self._names:
            parts = qualname.split(".")
            found = None
            for cut in range(len(parts) - 1, 0, -1):
                items = self._file("/".join(parts[:cut]))
                if items is not None:
                    found = items.get(parts[cut])
                    for p in parts[cut + 1:]:   # a nested class's method: not written by torch, kept simple
                        found = found.methods.get(p) if isinstance(found, ClassDef) else None
                    break
            self._names[qualname] = found
        return self._names[qualname]

    def class_def(self, qualname):
        c = self.resolve(qualname)
        if not isinstance(c, ClassDef):
            raise RuntimeError("cthtorch.jit.load: the archive has no code for class %s" % qualname)
        return c

    # ---- statements ----
    def run_block(self, body, env):
        for st in body:
            try:
                self.run_stmt(st, env)
            except _ScriptRaise as e:
                if e.lineno is None:
                    e.lineno = st.lineno
                raise

    def run_stmt(self, st, env):
        t = type(st)
        if t is ast.Assign:
            v = self.ev(st.value, env)
            for target in st.targets:
                self.assign(target, v, env)
        elif t is ast.Return:
            raise _Return(None if st.value is None else self.ev(st.value, env))
        elif t is ast.Expr:
            self.ev(st.value, env)
        elif t is ast.If:
            self.run_block(st.body if self.ev(st.test, env) else st.orelse, env)
        elif t is ast.For:
            for item in self.ev(st.iter, env):
                self.assign(st.target, item, env)
                try:
                    self.run_block(st.body, env)
                except _Break:
                    break
                except _Continue:
                    continue
            else:
                self.run_block(st.orelse, env)
        elif t is ast.While:
            while self.ev(st.test, env):
                try:
                    self.run_block(st.body, env)
                except _Break:
                    break
                except _Continue:
                    continue
        elif t is ast.Pass:
            pass
        elif t is ast.Break:
            raise _Break()
        elif t is ast.Continue:
            raise _Continue()
        elif t is ast.AugAssign:
            self.assign(st.target, _binop(st.op, self.ev(st.target, env), self.ev(st.value, env)), env)
        elif t is ast.AnnAssign:
            if st.value is not None:
                self.assign(st.target, self.ev(st.value, env), env)
        elif t is ast.Assert:
            if not self.ev(st.test, env):
                raise AssertionError(self.ev(st.msg, env) if st.msg is not None else "")
        else:
            raise CodeError("cthtorch.jit.load: unsupported statement in TorchScript code: %s"
                            % ast.unparse(st).splitlines()[0])

    def assign(self, target, v, env):
        t = type(target)
        if t is ast.Name:
            env[target.id] = v
        elif t in (ast.Tuple, ast.List):
            vals = list(v)
            if len(vals) != len(target.elts):
                raise RuntimeError("expected a tuple of %d elements, got %d" % (len(target.elts), len(vals)))
            for tg, x in zip(target.elts, vals):
                self.assign(tg, x, env)
        elif t is ast.Subscript:
            self.ev(target.value, env)[self.ev(target.slice, env)] = v
        elif t is ast.Attribute:   # prim::SetAttr
            obj = self.ev(target.value, env)
            set_script_attr(obj, target.attr, v)
        else:
            raise CodeError("cthtorch.jit.load: unsupported assignment target %s" % ast.unparse(target))

    # ---- expressions ----
    def ev(self, node, env):
        t = type(node)
        if t is ast.Name:
            n = node.id
            if n in env:
                return env[n]
            return self.global_name(n)
        if t is ast.Constant:
            return node.value
        if t is ast.Call:
            return self.call(node, env)
        if t is ast.Attribute:
            return self.attribute(self.ev(node.value, env), node.attr)
        if t is ast.Tuple:
            return tuple(self.ev(e, env) for e in node.elts)
        if t is ast.List:
            return [self.ev(e, env) for e in node.elts]
        if t is ast.Dict:
            return {self.ev(k, env): self.ev(v, env) for k, v in zip(node.keys, node.values)}
        if t is ast.Subscript:
            return self.ev(node.value, env)[self.ev(node.slice, env)]
        if t is ast.BinOp:
            return _binop(node.op, self.ev(node.left, env), self.ev(node.right, env))
        if t is ast.UnaryOp:
            v = self.ev(node.operand, env)
            return {ast.USub: lambda: -v, ast.UAdd: lambda: +v, ast.Not: lambda: not v,
                    ast.Invert: lambda: ~v}[type(node.op)]()
        if t is ast.BoolOp:
            v = None
            for e in node.values:
                v = self.ev(e, env)
                if isinstance(node.op, ast.And) != bool(v):
                    return v
            return v
        if t is ast.Compare:
            left = self.ev(node.left, env)
            for op, right_node in zip(node.ops, node.comparators):
                right = self.ev(right_node, env)
                if not _COMPARE[type(op)](left, right):
                    return False
                left = right
            return True
        if t is ast.IfExp:
            return self.ev(node.body if self.ev(node.test, env) else node.orelse, env)
        if t is ast.Slice:
            return slice(*[None if x is None else self.ev(x, env) for x in (node.lower, node.upper, node.step)])
        raise CodeError("cthtorch.jit.load: unsupported expression in TorchScript code: %s" % ast.unparse(node))

    def global_name(self, n):
        g = _GLOBALS.get(n)
        if g is not None:
            return g
        if n == "__torch__":
            return QualName(self, n)
        if n == "CONSTANTS":
            return _CONSTANTS_NS
        if n in ("inf", "nan"):
            return float(n)
        raise CodeError("cthtorch.jit.load: unknown name '%s' in TorchScript code" % n)

    def attribute(self, obj, attr):
        if isinstance(obj, QualName):
            name = "%s.%s" % (obj.name, attr)
            found = self.resolve(name)
            if isinstance(found, Function):
                return found
            if isinstance(found, ClassDef):
                return _ClassConstructor(found)
            return QualName(self, name)
        if isinstance(obj, (_OpNamespace, _Ops)):
            return obj.op(attr)
        if obj is _CONSTANTS_NS:
            if not attr.startswith("c") or not attr[1:].isdigit() or int(attr[1:]) >= len(self.constants):
                raise CodeError("cthtorch.jit.load: the archive has no constant %s" % attr)
            return self.constants[int(attr[1:])]
        return get_script_attr(obj, attr)

    def call(self, node, env):
        f = node.func
        if type(f) is ast.Name and f.id in _TYPE_FIRST:   # annotate(T, x), unchecked_cast(T, x), isinstance(x, T)
            return _TYPE_FIRST[f.id](self, node, env)
        fn = self.ev(f, env)
        args = []
        for a in node.args:
            if type(a) is ast.Starred:
                args.extend(self.ev(a.value, env))
            else:
                args.append(self.ev(a, env))
        kwargs = {k.arg: self.ev(k.value, env) for k in node.keywords}
        if isinstance(fn, QualName):
            raise CodeError("cthtorch.jit.load: the archive has no code for %s" % fn.name)
        if not callable(fn):
            raise CodeError("cthtorch.jit.load: %s is not callable" % ast.unparse(f))
        return fn(*args, **kwargs)


class _ClassConstructor:
    """Calling a code/ class by name: NamedTuples build a tuple; other classes are not supported."""

    def __init__(self, cdef):
        self.cdef = cdef

    def __call__(self, *args, **kwargs):
        if self.cdef.base == "NamedTuple":
            return tuple(args) + tuple(kwargs.values())
        raise NotImplementedError("cthtorch.jit.load: constructing TorchScript class %s in code is not implemented"
                                  % self.cdef.qualname)


def _binop(op, a, b):
    return _BINOPS[type(op)](a, b)


_BINOPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
           ast.Div: lambda a, b: a / b, ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b,
           ast.Pow: lambda a, b: a ** b, ast.MatMult: lambda a, b: a @ b, ast.BitAnd: lambda a, b: a & b,
           ast.BitOr: lambda a, b: a | b, ast.BitXor: lambda a, b: a ^ b, ast.LShift: lambda a, b: a << b,
           ast.RShift: lambda a, b: a >> b}
_COMPARE = {ast.Lt: lambda a, b: a < b, ast.Gt: lambda a, b: a > b, ast.LtE: lambda a, b: a <= b,
            ast.GtE: lambda a, b: a >= b, ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b,
            ast.Is: lambda a, b: a is b, ast.IsNot: lambda a, b: a is not b, ast.In: lambda a, b: a in b,
            ast.NotIn: lambda a, b: a not in b}


class _ConstantsNS:
    pass


_CONSTANTS_NS = _ConstantsNS()


def _to_int(x):
    return int(x.item()) if isinstance(x, cthtorch.Tensor) else int(x)


def _to_float(x):
    return float(x.item()) if isinstance(x, cthtorch.Tensor) else float(x)


def _to_bool(x):
    return bool(x.item()) if isinstance(x, cthtorch.Tensor) else bool(x)


def _getattr(obj, name, *default):
    return get_script_attr(obj, name)


def _uninitialized(*args):
    return None


_GLOBALS = {
    "torch": _TORCH, "ops": _OPS, "int": _to_int, "float": _to_float, "bool": _to_bool, "str": str, "len": len,
    "getattr": _getattr, "range": range, "enumerate": lambda x, start=0: list(enumerate(x, start)),
    "zip": lambda *a: list(zip(*a)), "min": min, "max": max, "abs": abs, "print": print,
    "uninitialized": _uninitialized, "round": round, "divmod": divmod, "hash": hash, "ord": ord, "chr": chr,
}


def _type_first_value(unit, node, env):   # annotate(T, x) / unchecked_cast(T, x): the value
    if len(node.args) != 2:
        raise CodeError("cthtorch.jit.load: %s expects a type and a value" % node.func.id)
    return unit.ev(node.args[1], env)


def _isinstance(unit, node, env):
    v = unit.ev(node.args[0], env)
    t = node.args[1]
    names = [ast.unparse(e) for e in t.elts] if isinstance(t, ast.Tuple) else [ast.unparse(t)]
    for n in names:
        if _is_instance(v, n):
            return True
    return False


def _is_instance(v, type_text):
    base = type_text.split("[", 1)[0]
    checks = {"Tensor": lambda: isinstance(v, cthtorch.Tensor), "int": lambda: isinstance(v, int) and not isinstance(v, bool),
              "float": lambda: isinstance(v, float), "bool": lambda: isinstance(v, bool), "str": lambda: isinstance(v, str),
              "List": lambda: isinstance(v, list), "Tuple": lambda: isinstance(v, tuple),
              "Dict": lambda: isinstance(v, dict), "NoneType": lambda: v is None,
              "Optional": lambda: True}
    if base in checks:
        return checks[base]()
    return getattr(v, "_qualified_name", None) == base


_TYPE_FIRST = {"annotate": _type_first_value, "unchecked_cast": _type_first_value, "isinstance": _isinstance}


# ---- attributes of script objects (set by the loader) ----
def get_script_attr(obj, name):
    if isinstance(obj, cthtorch.Tensor):
        raise CodeError("cthtorch.jit.load: attribute access .%s on a Tensor in TorchScript code" % name)
    lookup = getattr(type(obj), "_script_attr", None)
    if lookup is None:
        raise CodeError("cthtorch.jit.load: attribute access .%s on %s in TorchScript code"
                        % (name, type(obj).__name__))
    return lookup(obj, name)


def set_script_attr(obj, name, value):
    setter = getattr(type(obj), "_script_setattr", None)
    if setter is None:
        raise CodeError("cthtorch.jit.load: cannot set attribute .%s on %s in TorchScript code"
                        % (name, type(obj).__name__))
    setter(obj, name, value)
