"""Runs the TorchScript source of an archive's code/ directory.

TorchScript archives carry their methods as TorchScript source
(`code/__torch__/.../<module>.py`), the Python subset the frontend compiles.
The loader compiles that text with the script frontend (jit/_serialization.py,
_compile_methods); a method the frontend cannot compile yet (ops it has no
schema for, packed sequences: the module's _compile_errors says which) runs
here instead, with a small evaluator over Python's `ast`, which is safe by construction:
names resolve only to the archive's own classes and functions (`__torch__.*`),
its constants (`CONSTANTS.cN`), locals, TorchScript builtins and ops
(`torch.<op>`, `ops.aten.<op>`, `ops.prim.<op>`), never to Python globals,
modules or attributes of arbitrary objects.
"""
import ast
import math

import cthtorch
from cthtorch._ops.overloads import _aten_callable
from cthtorch.jit._interpreter import format_string as _format, _convolution as _aten_convolution

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
    "slice": lambda l, start=None, end=None, step=1: l[start:end:step], "any": any, "all": all,
}


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


def _aten_upsample(mode):
    def run(input, output_size, *args):   # the .vec overloads: (size, [align_corners,] scale_factors)
        align_corners = args[0] if mode != "nearest" else None
        scales = args[-1] if args else None
        return cthtorch.nn.functional.interpolate(input, size=output_size, scale_factor=scales, mode=mode,
                                                  align_corners=align_corners)
    return run


def _num_to_tensor(n):
    return cthtorch.tensor(n)


_ATEN_SPECIAL = {
    "_convolution": _aten_convolution, "lstm": _aten_rnn("LSTM"), "gru": _aten_rnn("GRU"),
    "rnn_tanh": _aten_rnn("RNN_TANH", "tanh"), "rnn_relu": _aten_rnn("RNN_RELU", "relu"), "to": _aten_to,
    "size": lambda t, *d: t.size(*d) if d else list(t.size()), "dim": lambda t: t.dim(),
    "numel": lambda t: t.numel(), "item": lambda t: t.item(), "tolist": lambda t: t.tolist(),
    "upsample_nearest1d": _aten_upsample("nearest"), "upsample_nearest2d": _aten_upsample("nearest"),
    "upsample_nearest3d": _aten_upsample("nearest"), "upsample_linear1d": _aten_upsample("linear"),
    "upsample_bilinear2d": _aten_upsample("bilinear"), "upsample_trilinear3d": _aten_upsample("trilinear"),
    "upsample_bicubic2d": _aten_upsample("bicubic"),
    "scaled_dot_product_attention": lambda *a, **k: cthtorch.nn.functional.scaled_dot_product_attention(*a, **k),
}


def _has_tensor(args):
    for a in args:
        if isinstance(a, cthtorch.Tensor):
            return True
    return False


_ATEN_OPS = {}


def _aten_op(name):
    """aten::<name> as a callable on evaluated arguments, resolved by value as TorchScript's overloads are:
    Python's builtins for ints/floats/lists/strings, else the tensor op."""
    always = _ALWAYS_PY.get(name)
    if always is not None:
        return always
    scalar = _SCALAR_PY.get(name)
    resolved = []

    def tensor_op():
        if not resolved:
            f = _ATEN_SPECIAL.get(name) or _aten_callable(name)
            if f is None:
                raise CodeError("cthtorch.jit.load: unknown builtin op aten::%s in TorchScript code" % name)
            resolved.append(f)
        return resolved[0]

    def call(*args, **kwargs):
        if scalar is not None and not _has_tensor(args):
            return scalar(*args, **kwargs)
        if kwargs:
            for k in kwargs:
                conv = _KW_CONVERT.get(k)
                if conv is not None:
                    kwargs[k] = conv(kwargs[k])
        res = (resolved[0] if resolved else tensor_op())(*args, **kwargs)
        if type(res) is cthtorch.Size:   # TorchScript's sizes are List[int]
            res = list(res)
        return res
    return call


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
    "abs": abs, "is_nested": lambda t: False, "is_sparse": lambda t: t.is_sparse, "type": lambda d: d.type,
    "index": lambda d: d.index, "is_quantized": lambda t: False, "is_mkldnn": lambda t: False,
    "is_meta": lambda t: t.is_meta, "is_xpu": lambda t: False, "is_mps": lambda t: False,
    "is_vulkan": lambda t: False, "is_ipu": lambda t: False, "is_maia": lambda t: False,
    "is_sparse_csr": lambda t: False, "name": lambda t: None, "Uninitialized": lambda: None,
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
            f = _ATEN_OPS.get(name)
            if f is None:
                f = _ATEN_OPS[name] = _aten_op(name)
            return f
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


class Function:
    """A TorchScript function or method of code/, run statement by statement."""

    def __init__(self, unit, qualname, node):
        self.unit, self.qualname, self.node = unit, qualname, node
        a = node.args
        self.argnames = [x.arg for x in a.args]
        self.defaults = [_literal(d) for d in a.defaults]
        self._run = None   # compiled on the first call

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
        if self._run is None:
            self._run = self.unit.compile_function(self)
        _DEPTH[0] += 1
        try:
            return self._run(env)
        except _ScriptRaise as e:
            if e.function is None:
                e.function = self
            if _DEPTH[0] == 1:
                raise e.as_jit_error() from None
            raise
        finally:
            _DEPTH[0] -= 1


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


    # ---- compiling a function body into closures ----
    def compile_function(self, fn):
        """The body of fn as one closure over its frame (a dict of locals); returns its return value."""
        c = _Compiler(self, _local_names(fn.node))
        body = c.block(fn.node.body)

        def run(env):
            sig = body(env)
            return env.get(_RET) if sig is _RETURN else None
        return run


_RET = "$return"
_RETURN, _BREAK, _CONTINUE = "return", "break", "continue"   # what a statement closure hands its block


def _local_names(fdef):
    """Names a function binds (its arguments and assignment targets): every other name is a global."""
    names = {a.arg for a in fdef.args.args}
    for node in ast.walk(fdef):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
    return names


class _Compiler:
    """TorchScript statements and expressions -> Python closures, names and ops resolved once."""

    def __init__(self, unit, local_names):
        self.unit, self.locals = unit, local_names

    # ---- statements ----
    def block(self, stmts):
        fns = [(self.stmt(st), st.lineno) for st in stmts]

        def run(env):
            for f, lineno in fns:
                try:
                    sig = f(env)
                except _ScriptRaise as e:
                    if e.lineno is None:
                        e.lineno = lineno
                    raise
                if sig is not None:
                    return sig
            return None
        return run

    def stmt(self, st):
        t = type(st)
        if t is ast.Assign:
            value = self.expr(st.value)
            stores = [self.store(tg) for tg in st.targets]
            if len(stores) == 1:
                store = stores[0]
                return lambda env: store(env, value(env))

            def assign(env):
                v = value(env)
                for s in stores:
                    s(env, v)
            return assign
        if t is ast.Return:
            value = self.expr(st.value) if st.value is not None else (lambda env: None)

            def ret(env):
                env[_RET] = value(env)
                return _RETURN
            return ret
        if t is ast.Expr:
            value = self.expr(st.value)

            def expr(env):
                value(env)
            return expr
        if t is ast.If:
            test, body, orelse = self.expr(st.test), self.block(st.body), self.block(st.orelse)
            return lambda env: body(env) if test(env) else orelse(env)
        if t is ast.For:
            it, store, body, orelse = self.expr(st.iter), self.store(st.target), self.block(st.body), self.block(st.orelse)

            def loop(env):
                for item in it(env):
                    store(env, item)
                    sig = body(env)
                    if sig is _BREAK:
                        return None
                    if sig is _RETURN:
                        return sig
                return orelse(env)
            return loop
        if t is ast.While:
            test, body = self.expr(st.test), self.block(st.body)

            def while_loop(env):
                while test(env):
                    sig = body(env)
                    if sig is _BREAK:
                        return None
                    if sig is _RETURN:
                        return sig
                return None
            return while_loop
        if t is ast.Pass:
            return lambda env: None
        if t is ast.Break:
            return lambda env: _BREAK
        if t is ast.Continue:
            return lambda env: _CONTINUE
        if t is ast.AugAssign:
            load, value, store, op = self.expr(st.target), self.expr(st.value), self.store(st.target), _BINOPS[type(st.op)]
            return lambda env: store(env, op(load(env), value(env)))
        if t is ast.AnnAssign:
            if st.value is None:
                return lambda env: None
            value, store = self.expr(st.value), self.store(st.target)
            return lambda env: store(env, value(env))
        if t is ast.Assert:
            test = self.expr(st.test)
            msg = self.expr(st.msg) if st.msg is not None else (lambda env: "")

            def check(env):
                if not test(env):
                    raise AssertionError(msg(env))
            return check
        raise CodeError("cthtorch.jit.load: unsupported statement in TorchScript code: %s"
                        % ast.unparse(st).splitlines()[0])

    def store(self, target):
        t = type(target)
        if t is ast.Name:
            name = target.id

            def store_name(env, v):
                env[name] = v
            return store_name
        if t in (ast.Tuple, ast.List):
            parts = [self.store(e) for e in target.elts]
            n = len(parts)

            def unpack(env, v):
                vals = list(v)
                if len(vals) != n:
                    raise RuntimeError("expected a tuple of %d elements, got %d" % (n, len(vals)))
                for s, x in zip(parts, vals):
                    s(env, x)
            return unpack
        if t is ast.Subscript:
            obj, key = self.expr(target.value), self.expr(target.slice)

            def store_item(env, v):
                obj(env)[key(env)] = v
            return store_item
        if t is ast.Attribute:   # prim::SetAttr
            obj, attr = self.expr(target.value), target.attr
            return lambda env, v: set_script_attr(obj(env), attr, v)
        raise CodeError("cthtorch.jit.load: unsupported assignment target %s" % ast.unparse(target))

    # ---- expressions ----
    def expr(self, node):
        t = type(node)
        if t is ast.Name:
            name = node.id
            if name in self.locals:
                def load(env):
                    try:
                        return env[name]
                    except KeyError:
                        raise RuntimeError("local variable '%s' is used before it is assigned" % name) from None
                return load
            g = self.unit.global_name(name)
            return lambda env: g
        if t is ast.Constant:
            v = node.value
            return lambda env: v
        if t is ast.Attribute:
            static = self.static_attribute(node)
            if static is not _NOT_STATIC:
                return lambda env: static
            obj, attr = self.expr(node.value), node.attr
            return lambda env: get_script_attr(obj(env), attr)
        if t is ast.Call:
            return self.call(node)
        if t in (ast.Tuple, ast.List):
            elts = [self.expr(e) for e in node.elts]
            if t is ast.Tuple:
                return lambda env: tuple([e(env) for e in elts])
            return lambda env: [e(env) for e in elts]
        if t is ast.Dict:
            items = [(self.expr(k), self.expr(v)) for k, v in zip(node.keys, node.values)]
            return lambda env: {k(env): v(env) for k, v in items}
        if t is ast.Subscript:
            obj, key = self.expr(node.value), self.expr(node.slice)
            return lambda env: obj(env)[key(env)]
        if t is ast.BinOp:
            left, right, op = self.expr(node.left), self.expr(node.right), _BINOPS[type(node.op)]
            return lambda env: op(left(env), right(env))
        if t is ast.UnaryOp:
            operand = self.expr(node.operand)
            op = {ast.USub: lambda v: -v, ast.UAdd: lambda v: +v, ast.Not: lambda v: not v,
                  ast.Invert: lambda v: ~v}[type(node.op)]
            return lambda env: op(operand(env))
        if t is ast.BoolOp:
            values, is_and = [self.expr(e) for e in node.values], isinstance(node.op, ast.And)

            def boolop(env):
                v = None
                for e in values:
                    v = e(env)
                    if is_and != bool(v):
                        return v
                return v
            return boolop
        if t is ast.Compare:
            left = self.expr(node.left)
            pairs = [(_COMPARE[type(op)], self.expr(r)) for op, r in zip(node.ops, node.comparators)]

            def compare(env):
                a = left(env)
                for op, r in pairs:
                    b = r(env)
                    if not op(a, b):
                        return False
                    a = b
                return True
            return compare
        if t is ast.IfExp:
            test, body, orelse = self.expr(node.test), self.expr(node.body), self.expr(node.orelse)
            return lambda env: body(env) if test(env) else orelse(env)
        if t is ast.Slice:
            parts = [None if x is None else self.expr(x) for x in (node.lower, node.upper, node.step)]
            return lambda env: slice(*[None if p is None else p(env) for p in parts])
        raise CodeError("cthtorch.jit.load: unsupported expression in TorchScript code: %s" % ast.unparse(node))

    def static_attribute(self, node):
        """`torch.relu`, `ops.aten.add`, `ops.prim.dtype`, `CONSTANTS.c0`, `__torch__.a.b.f`: resolved now."""
        chain = []
        base = node
        while type(base) is ast.Attribute:
            chain.append(base.attr)
            base = base.value
        if type(base) is not ast.Name or base.id in self.locals:
            return _NOT_STATIC
        if base.id not in ("torch", "ops", "CONSTANTS", "__torch__"):
            return _NOT_STATIC
        obj = self.unit.global_name(base.id)
        for attr in reversed(chain):
            obj = self.unit.attribute(obj, attr)
        if isinstance(obj, QualName):
            name = obj.name
            return _Unresolved(name)
        return obj

    def call(self, node):
        f = node.func
        if type(f) is ast.Name and f.id in _TYPE_FIRST and f.id not in self.locals:
            if f.id == "isinstance":
                value, types = self.expr(node.args[0]), node.args[1]
                names = [ast.unparse(e) for e in types.elts] if isinstance(types, ast.Tuple) else [ast.unparse(types)]
                return lambda env: any(_is_instance(value(env), n) for n in names)
            if f.id == "uninitialized":   # prim::Uninitialized: a value never read
                return lambda env: None
            if len(node.args) != 2:
                raise CodeError("cthtorch.jit.load: %s expects a type and a value" % f.id)
            return self.expr(node.args[1])   # annotate(T, x) / unchecked_cast(T, x): the value
        fn = self.expr(f)
        starred = any(type(a) is ast.Starred for a in node.args)
        args = [(self.expr(a.value), True) if type(a) is ast.Starred else (self.expr(a), False) for a in node.args]
        kws = [(k.arg, self.expr(k.value)) for k in node.keywords]
        if starred or any(k is None for k, _ in kws):
            def call_general(env):
                pos = []
                for a, star in args:
                    if star:
                        pos.extend(a(env))
                    else:
                        pos.append(a(env))
                return fn(env)(*pos, **{k: v(env) for k, v in kws})
            return call_general
        argf = [a for a, _ in args]
        if kws:
            return lambda env: fn(env)(*[a(env) for a in argf], **{k: v(env) for k, v in kws})
        return lambda env: fn(env)(*[a(env) for a in argf])


_NOT_STATIC = object()


class _Unresolved:
    """A `__torch__.x` name that code/ does not define: an error only if it is called."""

    def __init__(self, name):
        self.name = name

    def __call__(self, *args, **kwargs):
        raise CodeError("cthtorch.jit.load: the archive has no code for %s" % self.name)


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


_TYPE_FIRST = ("annotate", "unchecked_cast", "isinstance", "uninitialized")   # their first or second argument is a type


# ---- attributes of script objects (set by the loader) ----
_ATTR_LOOKUP = {}


def get_script_attr(obj, name):
    if isinstance(obj, cthtorch.Tensor):
        raise CodeError("cthtorch.jit.load: attribute access .%s on a Tensor in TorchScript code" % name)
    lookup = _ATTR_LOOKUP.get(type(obj))
    if lookup is None:
        lookup = getattr(type(obj), "_script_attr", None)
        if lookup is not None:
            _ATTR_LOOKUP[type(obj)] = lookup
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
