"""The TorchScript frontend: Python source (its `ast`) -> the graph IR, with
TorchScript's rules (torch/csrc/jit/frontend/ir_emitter.cpp is the model).

Values are SSA: each assignment binds a name to a new Value in an Environment;
`if` becomes prim::If whose blocks return the variables either branch assigned,
loops become prim::Loop whose block carries the variables the body assigns.
`return`/`break`/`continue` in the middle of a block are handled by rewriting
the statement list first so that each one ends its path (the rest of the block
moves into the other branch): torch's exit transform reaches the same graphs
with flags; moving code keeps this emitter a single pass.

Calls to `torch.*`, Tensor methods and `nn.functional` become `aten::` nodes,
matched against the op schemas (`_C._jit_get_schemas_for_operator`) with
defaults filled in, as the interpreter expects every argument positionally.
"""
import ast
import builtins
import collections
import inspect
import math
import re
import sys
import textwrap

__all__ = ["NotSupportedError", "FrontendError", "UnsupportedNodeError", "get_jit_def", "compile_function",
           "compile_source"]


class FrontendError(Exception):
    def __init__(self, source_range, msg):
        self.source_range = source_range
        self.msg = msg
        super().__init__(str(self))

    def __str__(self):
        return "\n" + self.msg + (self.source_range.highlight() if self.source_range else "")


def script_error(source_range, msg):
    """What TorchScript raises for code it rejects that Python would run:
    a RuntimeError with the source line highlighted."""
    return RuntimeError("\n" + msg + (source_range.highlight() if source_range else ""))


class NotSupportedError(FrontendError):
    pass


class UnsupportedNodeError(NotSupportedError):
    pass


# --------------------------------------------------------------------------- the IR handle

IR = None    # the module that holds Graph and the types; cthtorch.jit._ir unless a caller sets it


def _loops(block):
    for n in block.nodes():
        if n.kind() == "prim::Loop":
            yield n
        for b in n.blocks():
            yield from _loops(b)


def _ir():
    global IR
    if IR is None:
        from cthtorch.jit import _ir as mod
        IR = mod
    return IR


def _C():
    import cthtorch
    return cthtorch._C


# --------------------------------------------------------------------------- source ranges

class SourceRange:
    """Where a node came from: printed `# file:line:col` and, in errors, the
    source line with the expression underlined (torch's `highlight`)."""

    def __init__(self, ctx, node):
        self.ctx = ctx
        self.lineno = getattr(node, "lineno", 1)
        self.col = getattr(node, "col_offset", 0)
        self.end_lineno = getattr(node, "end_lineno", self.lineno) or self.lineno
        self.end_col = getattr(node, "end_col_offset", self.col + 1) or self.col + 1

    @property
    def filename(self):
        return self.ctx.filename

    @property
    def file_line(self):
        return self.ctx.line_offset + self.lineno

    @property
    def file_col(self):
        return self.ctx.col_offset + self.col

    def __str__(self):
        return "%s:%d:%d" % (self.filename, self.file_line, self.file_col)

    def highlight(self):
        lines = self.ctx.source.splitlines()
        first = max(self.lineno - 3, 0)
        out = lines[first:self.lineno]
        line = lines[self.lineno - 1] if 0 < self.lineno <= len(lines) else ""
        end = self.end_col if self.end_lineno == self.lineno else len(line)
        out.append(" " * self.col + "~" * max(end - self.col, 1) + " <--- HERE")
        return ":\n  File \"%s\", line %d\n%s\n" % (self.filename, self.file_line, "\n".join(out))


class SourceContext:
    def __init__(self, source, filename, line_offset=0, col_offset=0):
        self.source = source
        self.filename = filename
        self.line_offset = line_offset
        self.col_offset = col_offset


# --------------------------------------------------------------------------- types

def _types():
    m = _ir()
    return m


def T_tensor():
    return _types().TensorType.get()


def T_int():
    return _types().IntType.get()


def T_float():
    return _types().FloatType.get()


def T_bool():
    return _types().BoolType.get()


def T_str():
    return _types().StringType.get()


def T_none():
    return _types().NoneType.get()


def T_device():
    m = _types()
    return (getattr(m, "DeviceObjType", None) or m.DeviceType).get()


def T_number():
    return _types().NumberType.get()


def T_list(e):
    return _types().ListType(e)


def T_tuple(es):
    return _types().TupleType(list(es))


def T_opt(e):
    return _types().OptionalType(e)


def T_dict(k, v):
    return _types().DictType(k, v)


def kind(t):
    return t.kind()


def is_tensor(t):
    return kind(t) == "TensorType"


def tstr(t):
    """The annotation spelling of a type (`List[int]`, `Optional[Tensor]`),
    which torch's error messages use."""
    k = kind(t)
    if k == "ListType":
        return "List[%s]" % tstr(t.getElementType())
    if k == "OptionalType":
        return "Optional[%s]" % tstr(t.getElementType())
    if k == "TupleType":
        return "Tuple[%s]" % ", ".join(tstr(e) for e in t.elements())
    if k == "DictType":
        return "Dict[%s, %s]" % (tstr(t.getKeyType()), tstr(t.getValueType()))
    return str(t)


def same_type(a, b):
    return str(a) == str(b)


def is_subtype(a, b):
    """a can be passed where b is expected (no conversion node)."""
    if same_type(a, b):
        return True
    ka, kb = kind(a), kind(b)
    if kb == "AnyType":
        return True
    if kb == "OptionalType":
        return ka == "NoneType" or is_subtype(a, b.getElementType())
    if kb == "NumberType":
        return ka in ("IntType", "FloatType", "NumberType", "BoolType")
    if ka == "ListType" and kb == "ListType":
        return kind(b.getElementType()) == "AnyType" or same_type(a.getElementType(), b.getElementType())
    if ka == "TupleType" and kb == "TupleType":
        ea, eb = a.elements(), b.elements()
        return len(ea) == len(eb) and all(is_subtype(x, y) for x, y in zip(ea, eb))
    if ka == "TensorType" and kb == "TensorType":
        return True
    return False


def unify(a, b):
    """The type a variable has after two branches assigned it (None joins
    into Optional), or None where they cannot join."""
    if is_subtype(a, b):
        return b
    if is_subtype(b, a):
        return a
    ka, kb = kind(a), kind(b)
    if ka == "NoneType":
        return T_opt(b)
    if kb == "NoneType":
        return T_opt(a)
    if ka == "TupleType" and kb == "TupleType" and len(a.elements()) == len(b.elements()):
        es = [unify(x, y) for x, y in zip(a.elements(), b.elements())]
        if all(e is not None for e in es):
            return T_tuple(es)
    return None


# --------------------------------------------------------------------------- annotations

_TYPE_NAMES = {"int": T_int, "float": T_float, "bool": T_bool, "str": T_str, "Tensor": T_tensor,
               "None": T_none, "NoneType": T_none, "device": T_device, "Device": T_device,
               "number": T_number, "Any": lambda: _types().AnyType.get()}


def type_from_annotation(node, sr_ctx, resolver=None):
    """An annotation expression (ast) -> a type: int/float/bool/str/Tensor/
    None/Device, List/Tuple/Dict/Optional and their lowercase builtins."""
    def bad():
        raise script_error(SourceRange(sr_ctx, node), "Unknown type annotation: '%s'" % ast.unparse(node))
    if isinstance(node, ast.Constant):
        if node.value is None:
            return T_none()
        if isinstance(node.value, str):
            return type_from_annotation(ast.parse(node.value, mode="eval").body, sr_ctx, resolver)
        bad()
    if isinstance(node, ast.Name):
        if node.id in _TYPE_NAMES:
            return _TYPE_NAMES[node.id]()
        if resolver is not None:
            obj = resolver(node.id)
            t = type_from_python(obj)
            if t is not None:
                return t
        bad()
    if isinstance(node, ast.Attribute):
        name = ast.unparse(node)
        last = node.attr
        if name.startswith("__torch__.") and resolver is not None:     # a class type of an archive
            obj = resolver(name)
            if obj is not None and (kind(obj) == "ClassType" or isinstance(obj, _ir().NamedTupleType)):
                return obj
        if last in ("Tensor", "device") and name.split(".")[0] in ("torch", "cthtorch"):
            return _TYPE_NAMES[last]()
        if last == "dtype" and name.split(".")[0] in ("torch", "cthtorch"):
            return T_int()      # a ScalarType is an int in TorchScript (prim::dtype gives one)
        if last in ("List", "Tuple", "Dict", "Optional") or last in _TYPE_NAMES:
            return _TYPE_NAMES[last]() if last in _TYPE_NAMES else bad()
        if resolver is not None:             # a class reached through modules: torch.nn.utils.rnn.PackedSequence
            parts = name.split(".")
            try:
                obj = resolver(parts[0])
            except KeyError:       # a name the function cannot see (a closure's variable): torch's error
                raise script_error(SourceRange(sr_ctx, node), "Unknown type name '%s'" % name) from None
            for p in parts[1:]:
                obj = getattr(obj, p, None)
            t = type_from_python(obj) if obj is not None else None
            if t is not None:
                return t
        bad()
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):   # X | None
        a = type_from_annotation(node.left, sr_ctx, resolver)
        b = type_from_annotation(node.right, sr_ctx, resolver)
        t = unify(a, b)
        return t if t is not None else bad()
    if isinstance(node, ast.Subscript):
        base = node.value.attr if isinstance(node.value, ast.Attribute) else getattr(node.value, "id", None)
        args = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        ts = [type_from_annotation(a, sr_ctx, resolver) for a in args
              if not (isinstance(a, ast.Tuple) and not a.elts)]
        if base in ("List", "list") and len(ts) == 1:
            return T_list(ts[0])
        if base in ("BroadcastingList1", "BroadcastingList2", "BroadcastingList3") and len(ts) == 1:
            t = T_list(ts[0])
            t.spelling = "%s[%s]" % (ts[0].annotation_str, base[-1])    # one int fills the list, as torch's
            return t
        if base == "Optional" and len(ts) == 1:
            return T_opt(ts[0])
        if base in ("Tuple", "tuple"):
            return T_tuple(ts)
        if base in ("Dict", "dict") and len(ts) == 2:
            return T_dict(ts[0], ts[1])
        if base == "Final" and len(ts) == 1:
            return ts[0]
        if base == "Union":
            t = ts[0]
            for o in ts[1:]:
                t = unify(t, o)
                if t is None:
                    bad()
            return t
    bad()


def type_from_python(obj):
    """A Python annotation object (typing.List[int], torch.Tensor, int) ->
    a type, or None."""
    import typing
    import cthtorch
    if obj is None or obj is type(None):
        return T_none()
    if obj in (int, float, bool, str):
        return {int: T_int, float: T_float, bool: T_bool, str: T_str}[obj]()
    if obj is cthtorch.Tensor or getattr(obj, "__name__", None) == "Tensor":
        return T_tensor()
    if obj is cthtorch.device:
        return T_device()
    if obj is cthtorch.dtype:
        return T_int()
    if isinstance(obj, type) and "__torch_script_class__" in obj.__dict__:
        return obj.__torch_script_class__.class_type
    if named_tuple_fields(obj) is not None:
        return named_tuple_type(obj)
    origin, args = typing.get_origin(obj), typing.get_args(obj)
    if origin in (list, typing.List):
        return T_list(type_from_python(args[0]))
    if origin in (tuple, typing.Tuple):
        return T_tuple([type_from_python(a) for a in args if a != ()])
    if origin in (dict, typing.Dict):
        return T_dict(type_from_python(args[0]), type_from_python(args[1]))
    if origin is typing.Union:
        ts = [type_from_python(a) for a in args]
        t = ts[0]
        for o in ts[1:]:
            t = unify(t, o) if t is not None and o is not None else None
        return t
    if getattr(obj, "__name__", None) == "Final" or str(obj).startswith("typing.Final"):
        return type_from_python(args[0]) if args else None
    return None


# the field types of NamedTuples whose class does not annotate them (cthtorch's PackedSequence
# is a collections.namedtuple; torch's annotates data/batch_sizes as Tensor and the indices as Tensor?)
_NAMED_TUPLE_FIELDS = {"cthtorch.nn.utils.rnn.PackedSequence": lambda: [T_tensor(), T_tensor(), T_opt(T_tensor()),
                                                                         T_opt(T_tensor())]}


def named_tuple_fields(cls):
    """A NamedTuple class's field names and types, or None for anything else."""
    if not (isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields")):
        return None
    known = _NAMED_TUPLE_FIELDS.get("%s.%s" % (cls.__module__, cls.__qualname__))
    if known is not None:
        return list(cls._fields), known()
    ann = {}
    for c in reversed(cls.__mro__):
        ann.update(getattr(c, "__annotations__", {}) or {})
    types_ = [type_from_python(ann[f]) if f in ann else T_tensor() for f in cls._fields]
    return (list(cls._fields), types_) if all(t is not None for t in types_) else None


def named_tuple_type(cls):
    from ._module import class_type_name
    names, types_ = named_tuple_fields(cls)
    return _ir().NamedTupleType(class_type_name(cls), names, types_, py_class=cls)


def type_of_python_value(v):
    """The type TorchScript gives a Python value it meets (module attributes,
    globals)."""
    import cthtorch
    if isinstance(v, bool):
        return T_bool()
    if isinstance(v, int):
        return T_int()
    if isinstance(v, float):
        return T_float()
    if isinstance(v, str):
        return T_str()
    if v is None:
        return T_none()
    if isinstance(v, cthtorch.Tensor):
        return T_tensor()
    if isinstance(v, cthtorch.device):
        return T_device()
    if isinstance(v, tuple) and named_tuple_fields(type(v)) is not None:
        return named_tuple_type(type(v))
    if isinstance(v, (list, tuple)):
        ts = [type_of_python_value(x) for x in v]
        if any(t is None for t in ts):
            return None
        if isinstance(v, tuple):
            return T_tuple(ts)
        if not ts:
            return T_list(T_tensor())
        t = ts[0]
        for o in ts[1:]:
            t = unify(t, o) if t is not None else None
        return T_list(t) if t is not None else None
    if isinstance(v, dict):
        if not v:
            return T_dict(T_str(), T_tensor())
        k = type_of_python_value(next(iter(v)))
        val = type_of_python_value(next(iter(v.values())))
        return T_dict(k, val) if k is not None and val is not None else None
    return None


def parse_type_comment(comment, sr_ctx, resolver):
    """`# type: (int, Tensor) -> Tensor` -> ([arg types], return type)."""
    text = comment.split("type:", 1)[1].strip()
    args_s, _, ret_s = text.partition("->")
    args_node = ast.parse(args_s.strip() or "()", mode="eval").body
    elts = args_node.elts if isinstance(args_node, ast.Tuple) else [args_node]
    args = [type_from_annotation(e, sr_ctx, resolver) for e in elts]
    ret = type_from_annotation(ast.parse(ret_s.strip(), mode="eval").body, sr_ctx, resolver) if ret_s.strip() else None
    return args, ret


# --------------------------------------------------------------------------- sugared values
# Things a name can stand for that are not IR values: Python modules, ops,
# functions to compile, `self` and its submodules.

class Sugar:
    def attr(self, em, name, loc):
        raise em.error(loc, "'%s' has no attribute '%s'" % (self.describe(), name))

    def call(self, em, args, kwargs, loc):
        raise em.error(loc, "'%s' cannot be called" % self.describe())

    def describe(self):
        return type(self).__name__


class PyModuleSugar(Sugar):
    """`torch`, `torch.nn.functional`, `math`: attribute access picks the op."""

    def __init__(self, mod, name):
        self.mod = mod
        self.name = name

    def describe(self):
        return "module " + self.name

    def attr(self, em, name, loc):
        obj = getattr(self.mod, name, None)
        if obj is None and not hasattr(self.mod, name):
            raise em.error(loc, "Module '%s' has no attribute '%s'" % (self.name, name))
        return em.sugar_python(obj, "%s.%s" % (self.name, name), loc)


# the Tensor methods named for a dtype that TorchScript knows (torch's builtin_cast_method_to_scalar_type)
_CAST_METHODS = {"byte": "uint8", "char": "int8", "double": "float64", "float": "float32", "cfloat": "complex64",
                 "cdouble": "complex128", "int": "int32", "long": "int64", "short": "int16", "half": "float16"}


class _CastMethodSugar(Sugar):
    """x.float() and the other dtype-named casts: aten::to(x, dtype, False, False, None), as torch emits them"""

    def __init__(self, x, name):
        self.x = x
        self.name = name

    def describe(self):
        return "Tensor.%s" % self.name

    def call(self, em, args, kwargs, loc):
        import cthtorch
        if args or kwargs:
            raise em.error(loc, "Expected 0 arguments in call to %s(), but got %d"
                           % (self.name, len(args) + len(kwargs)))
        dtype = getattr(cthtorch, _CAST_METHODS[self.name])
        no = em.const(False, loc)
        return em.emit_op("to", [self.x, em.const(dtype, loc), no, no, em.const(None, loc)], {}, loc)


class BuiltinSugar(Sugar):
    """An aten op: `torch.add`, `F.relu`, a Tensor method bound to self_value."""

    def __init__(self, op, self_value=None, renames=None):
        self.op = op
        self.self_value = self_value
        self.renames = renames or {}

    def describe(self):
        return "aten::" + self.op

    def call(self, em, args, kwargs, loc):
        if self.self_value is not None:
            args = [self.self_value] + list(args)
        kwargs = {self.renames.get(k, k): v for k, v in kwargs.items()}
        if len(args) == 2 and not kwargs and self.op in _SCALAR_OPS and all(
                isinstance(a, _ir().Value) and kind(a.type()) in _SCALAR_KINDS for a in args):
            return em.emit_scalar_op(self.op, args[0], args[1], loc)     # torch.lt(i, 10) on ints
        if len(args) == 1 and not kwargs and self.op in _MATH_UNARY and isinstance(args[0], _ir().Value) \
                and kind(args[0].type()) in ("IntType", "FloatType"):             # math.sqrt(2.0)
            out = T_int() if self.op in ("floor", "ceil") else T_float()
            return em.node("aten::" + self.op, [args[0]], [out], loc).output()
        if self.op in _SOURCE_BUILTINS and not kwargs:                   # as .code prints them
            name, out = _SOURCE_BUILTINS[self.op]
            if name is not None:
                return em.emit_python_builtin(name, args, kwargs, loc)
            return em.node("aten::" + self.op, [em.as_value(a, loc) for a in args], [out()], loc).output()
        return em.emit_op(self.op, args, kwargs, loc)


class FunctionalSugar(Sugar):
    """An nn.functional function: its arguments bound by its Python
    signature, then the aten op of the same name (`inplace=True` picks the
    in-place op, `_stacklevel` goes)."""

    def __init__(self, fn, op, renames):
        self.fn = fn
        self.op = op
        self.renames = renames or {}

    def describe(self):
        return "nn.functional." + self.op

    def call(self, em, args, kwargs, loc):
        try:
            bound = inspect.signature(self.fn).bind(*args, **kwargs)
        except (TypeError, ValueError) as e:
            if isinstance(e, ValueError):       # a C function without a signature: as given
                return em.emit_op(self.op, args, kwargs, loc)
            raise em.error(loc, "%s(): %s" % (self.op, e))
        given = set(bound.arguments)
        bound.apply_defaults()
        items = [(k, v if k in given else em.const(v, loc)) for k, v in bound.arguments.items()
                 if k in given or (v is not None and isinstance(v, (bool, int, float)))]
        op = self.op
        first, rest = items[0][1], {}
        for name, v in items[1:]:
            if name in ("_stacklevel",):
                continue
            if name == "inplace":
                try:
                    if em.const_value(em.as_value(v, loc)):
                        op = op + "_"
                except LookupError:
                    raise em.error(loc, "inplace= must be a constant in scripted code", NotSupportedError)
                continue
            if name == "return_indices" and op.startswith("max_pool"):
                # torch's boolean_dispatch: the constant picks max_poolNd or max_poolNd_with_indices
                try:
                    if em.const_value(em.as_value(v, loc)):
                        op = op + "_with_indices"
                except LookupError:
                    raise em.error(loc, "return_indices= must be a constant in scripted code", NotSupportedError)
                continue
            rest[self.renames.get(name, name)] = v
        for name, val in _F_EXTRA.get(self.op, {}).items():     # aten arguments F fills in itself
            rest.setdefault(name, em.const(val, loc))
        return em.emit_op(op, [first], rest, loc)


_SCALAR_OPS = {"add", "sub", "mul", "div", "floordiv", "remainder", "pow", "lt", "le", "gt", "ge", "eq", "ne",
               "__and__", "__or__", "__xor__", "__lshift__", "__rshift__"}
_SCALAR_KINDS = ("IntType", "FloatType", "BoolType", "NumberType", "StringType", "ListType")


_MATH_UNARY = {"sqrt", "exp", "log", "floor", "ceil", "sin", "cos", "tanh", "fabs"}

# aten names that .code prints for Python builtins and TorchScript's own
# helpers: (builtin to emit, or None and the result type)
_SOURCE_BUILTINS = {"len": ("len", None), "__is__": (None, T_bool), "__isnot__": (None, T_bool),
                    "__not__": (None, T_bool), "__range_length": (None, T_int), "__derive_index": (None, T_int),
                    "format": (None, T_str)}


class PyBuiltinSugar(Sugar):
    """Python builtins TorchScript knows: len, int, float, range, print..."""

    def __init__(self, name):
        self.name = name

    def describe(self):
        return "builtin " + self.name

    def call(self, em, args, kwargs, loc):
        return em.emit_python_builtin(self.name, args, kwargs, loc)


class FunctionSugar(Sugar):
    """A Python function, compiled on first call (prim::CallFunction)."""

    def __init__(self, fn):
        self.fn = fn

    def describe(self):
        return "function " + getattr(self.fn, "__qualname__", "?")

    def call(self, em, args, kwargs, loc):
        return em.emit_call_function(self.fn, args, kwargs, loc)


class MethodSugar(Sugar):
    """`self.method` / `self.sub.method` of a module being scripted."""

    def __init__(self, module_value, module_sugar, name):
        self.value = module_value
        self.module = module_sugar
        self.name = name

    def call(self, em, args, kwargs, loc):
        return em.emit_call_method(self.value, self.module, self.name, args, kwargs, loc)


class _BooleanDispatchSugar(Sugar):
    """An nn.functional function whose constant `return_indices` picks which compiled function is called
    (torch's boolean_dispatch: F.adaptive_max_pool2d is _adaptive_max_pool2d or ..._with_indices)."""

    def __init__(self, name, if_false, if_true, arg="return_indices", index=2):
        self.name, self.if_false, self.if_true, self.arg, self.index = name, if_false, if_true, arg, index

    def describe(self):
        return "function " + self.name

    def call(self, em, args, kwargs, loc):
        flag = kwargs.get(self.arg, args[self.index] if len(args) > self.index else None)
        if flag is None:
            chosen = False
        else:
            try:
                chosen = bool(em.const_value(em.as_value(flag, loc)))
            except LookupError:
                raise em.error(loc, "%s= must be a constant in scripted code" % self.arg, NotSupportedError)
        return em.emit_call_function(self.if_true if chosen else self.if_false, args, kwargs, loc)


class _InterpolateSugar(Sugar):
    """F.interpolate: the compiled overload whose size/scale_factor types fit the call's (torch's first match)."""

    def describe(self):
        return "function interpolate"

    def call(self, em, args, kwargs, loc):
        from . import _functional_source

        def is_list(i, name):
            v = args[i] if len(args) > i else kwargs.get(name)
            if v is None or isinstance(v, Sugar):
                return None
            v = em.as_value(v, loc)
            k = kind(v.type().getElementType() if kind(v.type()) == "OptionalType" else v.type())
            return None if k == "NoneType" else k in ("ListType", "TupleType")
        size_list, scale_list = is_list(1, "size"), is_list(2, "scale_factor")
        for (s, f), fn in _functional_source.INTERPOLATE_OVERLOADS:
            if size_list in (None, s) and scale_list in (None, f):
                return em.emit_call_function(fn, args, kwargs, loc)
        raise em.error(loc, "interpolate: no overload takes these size/scale_factor types")


class NamedTupleSugar(Sugar):
    """A NamedTuple class called in TorchScript: prim::TupleConstruct typed as the NamedTuple."""

    def __init__(self, t):
        self.t = t

    def describe(self):
        return "NamedTuple " + self.t.annotation_str

    def call(self, em, args, kwargs, loc):
        t, cls = self.t, self.t.py_class
        defaults = dict(getattr(cls, "_field_defaults", {}) or {})
        if cls.__new__ is not tuple.__new__:       # PackedSequence(data, batch_sizes=None, ...)
            defaults.update(_py_defaults(cls.__new__))
        vals = em.bind_args(t.names(), t.elements(), defaults, args, kwargs, loc, cls.__name__)
        return em.node("prim::TupleConstruct", vals, [t], loc).output()


class ModuleSugar(Sugar):
    """`self` or a submodule: attributes are prim::GetAttr, calls are
    prim::CallMethod forward."""

    def __init__(self, value, info):
        self.value = value
        self.info = info            # a _recursive.ModuleInfo

    def describe(self):
        return "module " + self.info.qualified_name

    def attr(self, em, name, loc):
        return em.module_attr(self, name, loc)

    def call(self, em, args, kwargs, loc):
        name = "forward"
        if "forward__1" in getattr(self.info, "extra_methods", {}) and args and not isinstance(args[0], Sugar):
            # a recurrent layer: its PackedSequence overload for a NamedTuple argument, as torch picks forward__1
            first = args[0] if not isinstance(args[0], list) else None
            if first is not None and isinstance(first.type(), _ir().NamedTupleType):
                name = "forward__1"
        return em.emit_call_method(self.value, self, name, args, kwargs, loc)

    def iterate(self, em, loc):
        if not self.info.is_container:
            raise em.error(loc, "'%s' object is not iterable" % self.info.qualified_name)
        return [self.attr(em, k, loc) for k in self.info.child_order]


_PY_BUILTINS = {"len", "int", "float", "bool", "str", "range", "print", "isinstance", "min", "max", "abs",
                "list", "tuple", "getattr", "hasattr", "round", "sum", "any", "all", "divmod", "enumerate",
                "zip", "ord", "chr", "hash"}

# nn.functional names whose aten op takes differently named arguments
# nn.functional functions whose TorchScript builtin has another name
_F_OPS = {"interpolate": "__interpolate", "upsample": "__interpolate"}

_F_RENAMES = {"dropout": {"training": "train"}, "alpha_dropout": {"training": "train"},
              "feature_alpha_dropout": {"training": "train"}}


# arguments of the aten op that the nn.functional function passes itself
_F_EXTRA = {"batch_norm": {"cudnn_enabled": True}, "group_norm": {"cudnn_enabled": True},
            "instance_norm": {"cudnn_enabled": True}}


def _binop_name(op):
    return {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.FloorDiv: "floordiv",
            ast.Mod: "remainder", ast.Pow: "pow", ast.MatMult: "matmul", ast.BitAnd: "__and__",
            ast.BitOr: "__or__", ast.BitXor: "__xor__", ast.LShift: "__lshift__",
            ast.RShift: "__rshift__"}.get(type(op))


def _cmp_name(op):
    return {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq", ast.NotEq: "ne",
            ast.Is: "__is__", ast.IsNot: "__isnot__", ast.In: "__contains__"}.get(type(op))


# --------------------------------------------------------------------------- environments

class _Undefined:
    """A name one branch of an `if` assigned and the other did not."""

    def __init__(self, msg):
        self.msg = msg


class Env:
    def __init__(self, block, parent=None, kind="block"):
        self.block = block
        self.parent = parent
        self.kind = kind
        self.vars = {}          # assigned in this block (become block outputs)
        self.refined = {}       # Optional refinements (not assignments)
        self.dead = False       # this path raised: its values are never used

    def lookup(self, name):
        e = self
        while e is not None:
            if name in e.refined:
                return e.refined[name]
            if name in e.vars:
                return e.vars[name]
            e = e.parent
        return None

    def set(self, name, v):
        self.vars[name] = v
        self.refined.pop(name, None)     # an assignment after a refinement (x = x[1:]) is what x is now


# --------------------------------------------------------------------------- exits

def _ends(stmts):
    if not stmts:
        return False
    s = stmts[-1]
    if isinstance(s, (ast.Return, ast.Break, ast.Continue, ast.Raise)):
        return True
    return isinstance(s, ast.If) and _ends(s.body) and _ends(s.orelse)


def _may_exit(stmts, loops=False):
    """Does a return/break/continue sit somewhere in stmts (break/continue
    only outside nested loops)?"""
    for s in stmts:
        if isinstance(s, ast.Return):
            return True
        if isinstance(s, (ast.Break, ast.Continue)) and not loops:
            return True
        if isinstance(s, ast.If) and (_may_exit(s.body, loops) or _may_exit(s.orelse, loops)):
            return True
        if isinstance(s, (ast.For, ast.While)) and _may_exit(s.body, True):
            return True
        if isinstance(s, ast.With) and _may_exit(s.body, loops):
            return True
    return False


def _has_return(stmts):
    return any(isinstance(n, ast.Return) for s in stmts for n in ast.walk(s))


def normalize_exits(stmts):
    """Rewrite a statement list so that every return/break/continue ends its
    path: the statements after an `if` that may exit move into both of its
    branches, and dead code after an exit goes."""
    out = []
    for i, s in enumerate(stmts):
        if isinstance(s, ast.If) and (_may_exit(s.body) or _may_exit(s.orelse)):
            rest = stmts[i + 1:]
            import copy
            s2 = ast.If(test=s.test, body=normalize_exits(s.body + copy.deepcopy(rest)),
                        orelse=normalize_exits(s.orelse + copy.deepcopy(rest)))
            ast.copy_location(s2, s)
            out.append(s2)
            return out
        out.append(s)
        if isinstance(s, (ast.Return, ast.Break, ast.Continue, ast.Raise)):
            return out
    return out


def _assigned_names(stmts):
    """Names a statement list assigns (loop-carried candidates), in order."""
    names = []

    def add(t):
        if isinstance(t, ast.Name):
            if t.id not in names:
                names.append(t.id)
        elif isinstance(t, (ast.Tuple, ast.List)):
            for e in t.elts:
                add(e)
        elif isinstance(t, ast.Starred):
            add(t.value)

    def walk(ss):
        for s in ss:
            if isinstance(s, ast.Assign):
                for t in s.targets:
                    add(t)
            elif isinstance(s, (ast.AugAssign, ast.AnnAssign)):
                add(s.target)
            elif isinstance(s, ast.For):
                add(s.target)
                walk(s.body)
            elif isinstance(s, ast.While):
                walk(s.body)
            elif isinstance(s, ast.If):
                walk(s.body)
                walk(s.orelse)
            elif isinstance(s, ast.With):
                walk(s.body)
    walk(stmts)
    return names


# --------------------------------------------------------------------------- the emitter

_INT_MAX = 9223372036854775807


class Emitter:
    """Emits one function's (or method's) graph."""

    def __init__(self, ctx, resolver, compiler):
        self.ctx = ctx
        self.resolver = resolver        # name -> Python object, or raises KeyError
        self.compiler = compiler        # compiles called functions / methods
        self.graph = _ir().Graph()
        self.block = self.graph.block()
        self.inferred = set()           # arguments typed Tensor for want of an annotation

    # -- errors and locations
    def loc(self, node):
        return SourceRange(self.ctx, node)

    def error(self, loc, msg, cls=None):
        if not isinstance(loc, SourceRange) and loc is not None:
            loc = self.loc(loc)
        return cls(loc, msg) if cls is not None else script_error(loc, msg)

    # -- node building
    def node(self, kind, inputs, out_types, loc=None, block=None):
        n = self.graph.create(kind, list(inputs), len(out_types))
        for o, t in zip(n.outputs(), out_types):
            o.setType(t)
        n.insertBefore((block or self.block).returnNode())
        if loc is not None:
            n.setSourceRange(loc.filename, loc.file_line, loc.file_col)
        return n

    def const(self, val, loc=None):
        n = self.graph.create("prim::Constant", [], 1)
        _ir()._set_constant(n, val)
        n.insertBefore(self.block.returnNode())
        if loc is not None:
            n.setSourceRange(loc.filename, loc.file_line, loc.file_col)
        return n.output()

    def const_value(self, v):
        """The Python value of a constant Value, or raise LookupError."""
        n = v.node()
        if n.kind() != "prim::Constant":
            raise LookupError
        return v.toIValue()

    def is_const(self, v):
        return isinstance(v, _ir().Value) and v.node().kind() == "prim::Constant"

    # -- entry points
    def emit_def(self, fdef, arg_types, ret_type, self_type=None, self_sugar=None):
        g = self.graph
        env = Env(self.block, kind="function")
        args = fdef.args
        if args.vararg is not None or args.kwarg is not None:
            bad = args.kwarg if args.kwarg is not None else args.vararg
            raise self.error(bad, "Compiled functions can't take variable number of arguments or use "
                             "keyword-only arguments with defaults", NotSupportedError)
        names = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
        if self_type is not None:
            # the first parameter is the module whatever its name (torch keeps the name: `def forward(s, x)`)
            self_name = names[0] if names else "self"
            sv = g.addInput(self_name)
            sv.setType(self_type)
            env.set(self_name, self_sugar(sv) if self_sugar is not None else sv)
            names = names[1:]
        for name, t in zip(names, arg_types):
            v = g.addInput(name)
            v.setType(t)
            env.set(name, v)
            if name in getattr(arg_types, "inferred", ()):
                self.inferred.add(v)
        body = list(fdef.body)
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            body = body[1:]       # the docstring
        ret = ast.Return(value=None)
        ast.copy_location(ret, fdef)
        body = normalize_exits(body + [ret])
        self.ret_annot = ret_type
        self.emit_stmts(body, env)
        out = env.lookup("$ret")
        if ret_type is not None and not is_subtype(out.type(), ret_type):
            raise self.error(fdef, "Return value was annotated as having type %s but is actually of type %s"
                             % (tstr(ret_type), tstr(out.type())))
        g.registerOutput(out)
        # torch's frontend reads a variable through a Load named for it, which moves the name off the value
        # read: parameters and loop counters the body reads print as `%x.1`, unread ones as `%x`
        named = list(g.inputs())[1 if self_type is not None else 0:]
        named += [n.blocks()[0].inputs()[0] for n in _loops(g.block())]
        for v in named:
            nm = v.debugName() if v.hasDebugName() else ""
            if nm and v.uses() and not nm.rpartition(".")[2].isdigit():
                g._displace_name(nm)
        # as torch's compiler cleans each graph it makes: static conditions (`if 1 > 2:`) keep the branch
        # taken and dead statements go, so .graph and .code show what runs
        from ._passes import constant_pooling, constant_propagation
        constant_propagation(g, immutable_only=True)
        constant_pooling(g)   # then the constants at the top, once each, as torch's .graph lists them
        return g

    # -- statements
    def emit_stmts(self, stmts, env):
        """Emit into env.block; True when the path ended (return/break/...)."""
        for i, s in enumerate(stmts):
            if self.emit_stmt(s, env):
                return True
            if isinstance(s, (ast.For, ast.While)) and _has_return(s.body):
                return self.after_returning_loop(s, stmts[i + 1:], env)
        return False

    def after_returning_loop(self, loop, rest, env):
        """After a loop that returned from inside: return (or, in an outer
        loop, leave it too) when it did, else go on with the rest."""
        ret = env.lookup("$ret")

        def returned(e):
            e.set("$ret", ret)
            if env_kind_in_loop(e):
                e.set("$did_ret", self.const(True))
                e.set("$cond", self.const(False))
            return True
        return self.emit_if(env.lookup("$did_ret"), self.loc(loop), env, returned,
                            lambda e: self.emit_stmts(rest, e))

    def emit_stmt(self, s, env):
        m = getattr(self, "stmt_" + type(s).__name__, None)
        if m is None:
            raise self.error(s, "%s aren't supported" % _STMT_NAMES.get(type(s).__name__, type(s).__name__),
                             UnsupportedNodeError)
        return m(s, env)

    def stmt_Expr(self, s, env):
        if isinstance(s.value, ast.Constant) and isinstance(s.value.value, str):
            return False      # a string statement: a comment
        self.expr(s.value, env)
        return False

    def stmt_Pass(self, s, env):
        return False

    def stmt_Return(self, s, env):
        if s.value is None:
            v = self.const(None)
        else:
            v = self.value(s.value, env, hint=self.ret_annot)
        if self.ret_annot is not None and not is_subtype(v.type(), self.ret_annot):
            v = self.convert(v, self.ret_annot, self.loc(s), what="return value")
        env.set("$ret", v)
        if env_kind_in_loop(env):          # leave the loop; after it, return (after_returning_loop)
            env.set("$did_ret", self.const(True))
            env.set("$cond", self.const(False))
        return True

    def stmt_Raise(self, s, env):
        msg, cls = "Exception", "builtins.Exception"
        e = s.exc
        if isinstance(e, ast.Call):
            cls = "builtins." + ast.unparse(e.func).split(".")[-1]
            m = self.value(e.args[0], env) if e.args else self.const("")
        elif e is not None:
            cls = "builtins." + ast.unparse(e).split(".")[-1]
            m = self.const("")
        else:
            m = self.const(msg)
        self.node("prim::RaiseException", [m, self.const(cls)], [], self.loc(s))
        env.dead = True
        return True

    def stmt_Assert(self, s, env):
        cond = self.cond(s.test, env)
        n = self.node("prim::If", [cond], [], self.loc(s))
        n.addBlock()
        fb = n.addBlock()
        saved = self.block
        self.block = fb
        msg = self.value(s.msg, env) if s.msg is not None else self.const("AssertionError: ")
        self.node("prim::RaiseException", [msg, self.const("builtins.AssertionError")], [], self.loc(s))
        self.block = saved
        for name, t in self.refinements(s.test, env, True).items():     # `assert x is not None` narrows x
            v = self.node("prim::unchecked_cast", [env.lookup(name)], [t]).output()
            v.setDebugName(name)
            env.refined[name] = v
        return False

    def stmt_Assign(self, s, env):
        if len(s.targets) != 1:
            v = self.value(s.value, env)
            for t in s.targets:
                self.assign(t, v, env)
            return False
        if isinstance(s.targets[0], ast.Name) and isinstance(s.value, ast.Attribute) and \
                ast.unparse(s.value).startswith("__torch__."):
            f = self.expr(s.value, env)
            if isinstance(f, _SourceFunctionSugar):   # `_0 = __torch__.m.f` of .code: a name for the function
                env.set(s.targets[0].id, f)
                return False
        hint = None
        v = self.value(s.value, env, hint=hint)
        self.assign(s.targets[0], v, env, type_comment=getattr(s, "type_comment", None))
        return False

    def stmt_AnnAssign(self, s, env):
        t = type_from_annotation(s.annotation, self.ctx, self.resolve_type_name)
        if s.value is None:
            raise self.error(s, "Variable declarations without a value are not supported", NotSupportedError)
        v = self.value(s.value, env, hint=t)
        v = self.convert(v, t, self.loc(s), what="variable '%s'" % ast.unparse(s.target))
        self.assign(s.target, v, env)
        return False

    def stmt_AugAssign(self, s, env):
        op = _binop_name(s.op)
        if isinstance(s.target, ast.Name):
            cur = self.lookup(s.target.id, env, s.target)
            rhs = self.value(s.value, env)
            if is_tensor(cur.type()):
                v = self.emit_op(op + "_", [cur, rhs], {}, self.loc(s))    # tensors update in place
            elif kind(cur.type()) == "ListType" and op == "add":
                self.emit_op("extend", [cur, rhs], {}, self.loc(s))
                v = cur
            else:
                v = self.emit_binop(op, cur, rhs, self.loc(s))
            if v is not cur:
                self.name_value(v, s.target.id)
            env.set(s.target.id, v)
            return False
        if isinstance(s.target, ast.Subscript):
            load = ast.Subscript(value=s.target.value, slice=s.target.slice, ctx=ast.Load())
            ast.copy_location(load, s.target)
            cur = self.value(load, env)
            rhs = self.value(s.value, env)
            if is_tensor(cur.type()):
                self.emit_op(op + "_", [cur, rhs], {}, self.loc(s))
                return False
            v = self.emit_binop(op, cur, rhs, self.loc(s))
            self.assign(s.target, v, env)
            return False
        if isinstance(s.target, ast.Attribute):
            load = ast.Attribute(value=s.target.value, attr=s.target.attr, ctx=ast.Load())
            ast.copy_location(load, s.target)
            cur = self.value(load, env)
            rhs = self.value(s.value, env)
            v = self.emit_op(op + "_", [cur, rhs], {}, self.loc(s)) if is_tensor(cur.type()) \
                else self.emit_binop(op, cur, rhs, self.loc(s))
            self.assign(s.target, v, env)
            return False
        raise self.error(s, "unsupported augmented assignment target", NotSupportedError)

    def assign(self, target, v, env, type_comment=None):
        loc = self.loc(target)
        if isinstance(target, ast.Name):
            if type_comment:
                t = type_from_annotation(ast.parse(type_comment, mode="eval").body, self.ctx, self.resolve_type_name)
                v = self.convert(v, t, loc, what="variable '%s'" % target.id)
            if isinstance(v, _ir().Value):
                self.name_value(v, target.id)
            env.set(target.id, v)
        elif isinstance(target, (ast.Tuple, ast.List)):
            items = self.unpack(v, len(target.elts), loc)
            for t, item in zip(target.elts, items):
                self.assign(t, item, env)
        elif isinstance(target, ast.Subscript):
            base = self.value(target.value, env)
            bt = base.type()
            if is_tensor(bt):
                view = self.value(target, env)       # x[i] as a view, then copy into it
                if isinstance(v, _ir().Value) and is_tensor(v.type()):
                    self.emit_op("copy_", [view, v], {}, loc)
                else:
                    self.emit_op("fill_", [view, v], {}, loc)
            elif kind(bt) == "ListType":
                idx = self.value(target.slice, env)
                self.node("aten::_set_item", [base, idx, self.convert(v, bt.getElementType(), loc)], [bt], loc)
            elif kind(bt) == "DictType":
                idx = self.value(target.slice, env)
                self.node("aten::_set_item", [base, idx, self.convert(v, bt.getValueType(), loc)], [], loc)
            else:
                raise self.error(target, "'%s' object does not support item assignment" % tstr(bt))
        elif isinstance(target, ast.Attribute):
            obj = self.expr(target.value, env)
            if isinstance(obj, _ir().Value) and kind(obj.type()) == "ClassType":
                ct_ = obj.type()
                t = ct_.getAttribute(target.attr)
                if t is None and getattr(self, "defining_class", None) is ct_:
                    t = v.type()       # `self.x = ...` in a TorchScript class's __init__ declares x
                    ct_.addAttribute(target.attr, t)
                if t is None:
                    raise self.error(target, "Tried to set nonexistent attribute: %s. Did you forget to initialize "
                                     "it in __init__()?" % target.attr)
                self.node_attr("prim::SetAttr", [obj, self.convert(v, t, loc)], [], "name", target.attr, loc)
                return
            if not isinstance(obj, ModuleSugar):
                raise self.error(target, "attribute assignment is only supported on modules", NotSupportedError)
            t = obj.info.attr_type(target.attr)
            if t is None:
                raise self.error(target, "Tried to set nonexistent attribute: %s. Did you forget to initialize "
                                 "it in __init__()?" % target.attr)
            self.node_attr("prim::SetAttr", [obj.value, self.convert(v, t, loc)], [], "name", target.attr, loc)
        elif isinstance(target, ast.Starred):
            raise self.error(target, "Starred expressions are not supported here", NotSupportedError)
        else:
            raise self.error(target, "unexpected expression on left-hand side of assignment", NotSupportedError)

    def name_value(self, v, name):
        """A value assigned to a variable takes its name (`%rv.3`), as torch's
        graphs show; arguments keep theirs."""
        if not name.startswith("$") and v not in self.graph.inputs():
            v.setDebugName(name)

    def unpack(self, v, n, loc):
        if isinstance(v, list):
            vals = v
        elif isinstance(v, ModuleSugar) or isinstance(v, Sugar):
            raise self.error(loc, "cannot unpack %s" % v.describe())
        else:
            t = v.type()
            if kind(t) == "TupleType":
                if v.node().kind() == "prim::TupleConstruct":
                    vals = list(v.node().inputs())
                else:
                    un = self.node("prim::TupleUnpack", [v], list(t.elements()), loc)
                    vals = list(un.outputs())
            elif kind(t) == "ListType":
                un = self.node("prim::ListUnpack", [v], [t.getElementType()] * n, loc)
                vals = list(un.outputs())
            elif is_tensor(t):
                vals = [self.emit_op("select", [v, self.const(0), self.const(i)], {}, loc) for i in range(n)]
            else:
                raise self.error(loc, "cannot unpack a value of type %s" % tstr(t))
        if len(vals) != n:
            raise self.error(loc, "too many values to unpack: need %d but found %d" % (n, len(vals))
                             if len(vals) > n else "need %d values to unpack but found only %d" % (n, len(vals)))
        return vals

    def node_attr(self, kind_, inputs, out_types, attr, val, loc):
        n = self.node(kind_, inputs, out_types, loc)
        n.s_(attr, val)
        return n

    # -- if
    def stmt_If(self, s, env):
        loc = self.loc(s)
        static = self.static_cond(s.test, env)
        if static is not None:        # isinstance / `is None` on a non-Optional: only one branch is compiled
            return self.emit_stmts(s.body if static else s.orelse, env)
        cond = self.cond(s.test, env)
        return self.emit_if(cond, loc, env, lambda e: self.emit_stmts(s.body, e),
                            lambda e: self.emit_stmts(s.orelse, e),
                            self.refinements(s.test, env, True), self.refinements(s.test, env, False))

    def emit_if(self, cond, loc, env, emit_true, emit_false, ref_true=None, ref_false=None):
        n = self.node("prim::If", [cond], [], loc)
        saved = self.block
        envs = []
        for emit, refs in ((emit_true, ref_true), (emit_false, ref_false)):
            b = n.addBlock()
            self.block = b
            e = Env(b, env)
            for name, t in (refs or {}).items():
                e.refined[name] = self.node("prim::unchecked_cast", [env.lookup(name)], [t]).output()
                e.refined[name].setDebugName(name)
            ended = emit(e)
            envs.append((b, e, ended))
        self.block = saved
        names = []
        for _, e, _ in envs:
            for k in e.vars:
                if k not in names:
                    names.append(k)
        (bt, et, endt), (bf, ef, endf) = envs
        for name in names:
            vt, vf = et.lookup(name), ef.lookup(name)
            if isinstance(vt, _Undefined) or isinstance(vf, _Undefined) or vt is None or vf is None:
                if et.dead and vf is not None and not isinstance(vf, _Undefined):
                    vt = self.uninitialized(vf.type(), bt)
                elif ef.dead and vt is not None and not isinstance(vt, _Undefined):
                    vf = self.uninitialized(vt.type(), bf)
                else:
                    which = "true" if vt is None else "false"
                    env.set(name, _Undefined("%s is not defined in the %s branch" % (name, which)))
                    continue
            if isinstance(vt, Sugar) or isinstance(vf, Sugar):
                if vt is vf:
                    env.set(name, vt)
                    continue
                raise self.error(loc, "%s is a module or function in one branch only" % name)
            t = unify(vt.type(), vf.type())
            if t is None:
                raise self.error(loc, "Type mismatch: %s is set to type %s in the true branch and type %s in the "
                                 "false branch" % (name, self.tdesc(vt), self.tdesc(vf)))
            bt.registerOutput(vt)
            bf.registerOutput(vf)
            o = n.addOutput()
            o.setType(t)
            if not name.startswith("$"):
                o.setDebugName(name)
            env.set(name, o)
        if et.dead and ef.dead:
            env.dead = True
        return endt and endf

    def tdesc(self, v):
        """A value's type for messages; `(inferred)` for an argument that
        had no annotation, as torch says."""
        return tstr(v.type()) + (" (inferred)" if v in self.inferred else "")

    def uninitialized(self, t, block):
        saved = self.block
        self.block = block
        v = self.node("prim::Uninitialized", [], [t]).output()
        self.block = saved
        return v

    # -- loops
    def stmt_While(self, s, env):
        if s.orelse:
            raise self.error(s, "else branches of while loops aren't supported", NotSupportedError)
        loc = self.loc(s)
        cond = self.cond(s.test, env)
        return self.emit_loop(self.const(_INT_MAX), cond, None, s.body, env, loc, test=s.test)

    def stmt_For(self, s, env):
        if s.orelse:
            raise self.error(s, "else branches of for loops aren't supported", NotSupportedError)
        loc = self.loc(s)
        it = s.iter
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range" \
                and env.lookup(it.func.id) is None:
            args = [self.convert(self.value(a, env), T_int(), self.loc(a), what="range argument") for a in it.args]
            if not 1 <= len(args) <= 3:
                raise self.error(it, "range expected at most 3 arguments, got %d" % len(args))
            if len(args) == 1:
                trip, start, step = args[0], None, None
            else:
                start, stop = args[0], args[1]
                step = args[2] if len(args) == 3 else None
                trip = self.node("aten::sub", [stop, start], [T_int()], loc).output() if step is None else \
                    self.node("aten::__range_length", [start, stop, step], [T_int()], loc).output()

            def target(idx):
                if start is None:
                    return idx
                if step is None:
                    return self.node("aten::add", [start, idx], [T_int()], loc).output()
                return self.node("aten::__derive_index", [idx, start, step], [T_int()], loc).output()
            return self.emit_loop(trip, self.const(True), (s.target, target), s.body, env, loc)
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id in ("enumerate", "zip") \
                and env.lookup(it.func.id) is None:
            return self.emit_for_zip(s, it, env, loc)
        seq = self.expr(it, env)
        if isinstance(seq, ModuleSugar):           # ModuleList / Sequential: unrolled
            ended = False
            for item in seq.iterate(self, loc):
                self.assign_sugar(s.target, item, env)
                if _may_exit(s.body):
                    raise self.error(s, "break/continue/return in a loop over modules is not supported",
                                     NotSupportedError)
                ended = self.emit_stmts(s.body, env)
            return ended
        if isinstance(seq, list):                   # a tuple literal: unrolled
            for item in seq:
                self.assign(s.target, item, env)
                self.emit_stmts(s.body, env)
            return False
        t = seq.type()
        if kind(t) == "TupleType":
            if _may_exit(s.body):
                raise self.error(s, "break/continue/return in a loop over a tuple is not supported",
                                 NotSupportedError)
            for item in self.unpack(seq, len(t.elements()), loc):
                self.assign(s.target, item, env)
                self.emit_stmts(s.body, env)
            return False
        if kind(t) in ("ListType", "StringType", "DictType") or is_tensor(t):
            if kind(t) == "DictType":
                seq = self.node("aten::keys", [seq], [T_list(t.getKeyType())], loc).output()
                t = seq.type()
            trip = self.node("aten::len", [seq], [T_int()], loc).output()
            et = t.getElementType() if kind(t) == "ListType" else (T_str() if kind(t) == "StringType" else T_tensor())

            def target(idx):
                op = "aten::__getitem__" if not is_tensor(t) else "aten::select"
                ins = [seq, idx] if not is_tensor(t) else [seq, self.const(0), idx]
                return self.node(op, ins, [et], loc).output()
            return self.emit_loop(trip, self.const(True), (s.target, target), s.body, env, loc)
        raise self.error(it, "'%s' object is not iterable" % tstr(t))

    def emit_for_zip(self, s, it, env, loc):
        """for i, x in enumerate(xs) / for a, b in zip(xs, ys): one loop over
        the shortest list, items by aten::__getitem__."""
        if it.keywords or not it.args or (it.func.id == "enumerate" and len(it.args) != 1):
            raise self.error(it, "%s() here takes positional sequences only" % it.func.id, NotSupportedError)
        seqs = [self.value(a, env) for a in it.args]
        for q, a in zip(seqs, it.args):
            if kind(q.type()) != "ListType":
                raise self.error(a, "%s() over a value of type %s is not supported here; only lists"
                                 % (it.func.id, tstr(q.type())), NotSupportedError)
        lens = [self.node("aten::len", [q], [T_int()], loc).output() for q in seqs]
        trip = lens[0]
        for ln in lens[1:]:
            trip = self.node("prim::min", [trip, ln], [T_int()], loc).output()

        def target(idx):
            items = [self.node("aten::__getitem__", [q, idx], [q.type().getElementType()], loc).output()
                     for q in seqs]
            return [idx] + items if it.func.id == "enumerate" else items
        return self.emit_loop(trip, self.const(True), (s.target, target), s.body, env, loc)

    def expr_ListComp(self, node, env):
        """[e for x in xs]: a loop appending to a new list, its element type
        the type of e."""
        if len(node.generators) != 1 or node.generators[0].is_async:
            raise self.error(node, "Only one 'for' clause is supported in a comprehension", NotSupportedError)
        gen = node.generators[0]
        if gen.ifs:
            raise self.error(node, "Comprehension ifs are not supported yet", NotSupportedError)
        loc = self.loc(node)
        lst = self.node("prim::ListConstruct", [], [T_list(T_tensor())], loc).output()
        append = _AppendStmt(lst, node.elt)
        ast.copy_location(append, node)
        body = [append]
        loop = ast.copy_location(ast.For(target=gen.target, iter=gen.iter, body=body, orelse=[]), node)
        self.stmt_For(loop, Env(self.block, env))
        return lst

    def stmt__AppendStmt(self, s, env):
        v = self.value(s.elt, env)
        lt = s.lst.type()
        if not s.typed:
            s.lst.setType(T_list(v.type()))
            s.typed = True
        else:
            v = self.convert(v, lt.getElementType(), self.loc(s), what="list element")
        self.node("aten::append", [s.lst, v], [s.lst.type()], self.loc(s))
        return False

    def assign_sugar(self, target, item, env):
        if not isinstance(target, ast.Name):
            raise self.error(target, "modules can only be bound to a name", NotSupportedError)
        env.set(target.id, item)

    def emit_loop(self, trip, cond, target, body_stmts, env, loc, test=None):
        body_stmts = list(body_stmts)
        if _has_return(body_stmts):
            # a return inside: the loop carries the value and a flag (torch's exit transform)
            if self.ret_annot is None:
                raise self.error(loc, "A return inside a loop needs the function's return type annotated in "
                                 "cthtorch's TorchScript frontend", NotSupportedError)
            env.set("$did_ret", self.const(False))
            env.set("$ret", self.node("prim::Uninitialized", [], [self.ret_annot]).output())
        carried = [nm for nm in _assigned_names(body_stmts) + (["$did_ret", "$ret"] if _has_return(body_stmts)
                                                               else [])
                   if isinstance(env.lookup(nm), _ir().Value)]
        n = self.node("prim::Loop", [trip, cond] + [env.lookup(nm) for nm in carried], [], loc)
        b = n.addBlock()
        saved = self.block
        self.block = b
        idx = b.addInputToBlock()
        idx.setType(T_int())
        e = Env(b, env, kind="loop")
        for nm in carried:
            bv = b.addInputToBlock()
            bv.setType(env.lookup(nm).type())
            if not nm.startswith("$"):
                bv.setDebugName(nm)
            e.set(nm, bv)
        if target is not None:
            tnode, make = target
            self.assign(tnode, make(idx), e)
        cont = ast.Continue()
        ast.copy_location(cont, body_stmts[-1] if body_stmts else ast.Pass(lineno=loc.lineno, col_offset=loc.col))
        e.loop_test = test
        self.emit_stmts(normalize_exits(body_stmts + [cont]), e)
        out_cond = e.lookup("$cond")
        b.registerOutput(out_cond)
        for nm in carried:
            v = e.lookup(nm)
            outer_t = env.lookup(nm).type()
            if isinstance(v, _Undefined):
                raise self.error(loc, v.msg)
            if not is_subtype(v.type(), outer_t):
                raise self.error(loc, "Variable '%s' previously had type %s but is now being assigned to a value "
                                 "of type %s" % (nm, tstr(outer_t), tstr(v.type())))
            b.registerOutput(v)
        self.block = saved
        for nm in carried:
            o = n.addOutput()
            o.setType(env.lookup(nm).type())
            if not nm.startswith("$"):
                o.setDebugName(nm)
            env.set(nm, o)
        return False

    def loop_env(self, env):
        e = env
        while e is not None and e.kind != "loop":
            e = e.parent
        return e

    def stmt_Break(self, s, env):
        if self.loop_env(env) is None:
            raise self.error(s, "SyntaxError: 'break' outside loop")
        env.set("$cond", self.const(False))
        return True

    def stmt_Continue(self, s, env):
        le = self.loop_env(env)
        if le is None:
            raise self.error(s, "SyntaxError: 'continue' not properly in loop")
        test = getattr(le, "loop_test", None)
        env.set("$cond", self.cond(test, env) if test is not None else self.const(True))
        return True

    def stmt_With(self, s, env):
        for item in s.items:
            ce = item.context_expr
            name = ast.unparse(ce.func if isinstance(ce, ast.Call) else ce)
            if name.split(".")[-1] not in ("no_grad", "enable_grad"):
                raise self.error(s, "with statements are only supported for torch.no_grad() here",
                                 NotSupportedError)
        return self.emit_stmts(s.body, env)

    # -- names
    def lookup(self, name, env, node):
        v = env.lookup(name)
        if isinstance(v, _Undefined):
            raise self.error(node, v.msg)
        if v is not None:
            return v
        try:
            obj = self.resolver(name)
        except KeyError:
            if name in _PY_BUILTINS:
                return PyBuiltinSugar(name)
            raise self.error(node, "undefined value %s" % name)
        return self.sugar_python(obj, name, self.loc(node))

    def resolve_type_name(self, name):
        try:
            return self.resolver(name)
        except KeyError:
            return None

    def sugar_python(self, obj, name, loc):
        """A Python object met by name -> a Value (constants) or a Sugar."""
        if isinstance(obj, Sugar):
            return obj
        if isinstance(obj, type) and "__torch_script_class__" in obj.__dict__:
            return ScriptClassSugar(obj.__torch_script_class__)
        if named_tuple_fields(obj) is not None:
            return NamedTupleSugar(named_tuple_type(obj))
        if _is_user_class(obj):   # as torch: a class that script code uses is compiled too
            return ScriptClassSugar(compile_class(obj))
        import types
        import cthtorch
        from cthtorch.nn import functional as F
        if obj is getattr(cthtorch, "ops", None):          # torch.ops.aten.X: the aten op by name
            return PyModuleSugar(_ops_namespace(), "ops")
        if isinstance(obj, types.ModuleType):
            # `import torch as t`: t.relu is torch.relu; a C submodule named bare (_C._nn's "_nn") by its path
            return PyModuleSugar(obj, obj.__name__ if "." in obj.__name__ or "." not in name else name)
        if isinstance(obj, _AtenName):
            return BuiltinSugar(obj.name) if obj.ns == "aten" else _PrimSugar(obj.name)
        if isinstance(obj, (bool, int, float, str)) or obj is None:
            return self.const(obj, loc)
        if isinstance(obj, (cthtorch.dtype, cthtorch.Tensor)):      # CONSTANTS.c0 of an archive
            return self.const(obj, loc)
        if isinstance(obj, cthtorch.device):
            return self.const(obj, loc)
        if isinstance(obj, tuple) and all(isinstance(x, (bool, int, float, str)) for x in obj):
            vals = [self.const(x, loc) for x in obj]
            return self.node("prim::TupleConstruct", vals, [T_tuple([v.type() for v in vals])], loc).output()
        if obj in (builtins.len, builtins.range, builtins.int, builtins.float, builtins.bool, builtins.str,
                   builtins.print, builtins.isinstance, builtins.min, builtins.max, builtins.abs, builtins.list,
                   builtins.getattr, builtins.hasattr, builtins.round, builtins.sum, builtins.any, builtins.all,
                   builtins.divmod, builtins.tuple):
            return PyBuiltinSugar(obj.__name__)
        special = _special_function(obj)
        if special is not None:
            return special
        short = name.split(".")[-1]
        if getattr(obj, "__module__", None) == F.__name__ or obj is getattr(F, short, None):
            from . import _functional_source
            if short in _functional_source.__all__ and obj is getattr(F, short, None):
                return FunctionSugar(getattr(_functional_source, short))     # compiled from source, as torch's
            if short == "interpolate" and obj is F.interpolate:
                return _InterpolateSugar()
            if short in _functional_source.BOOLEAN_DISPATCH and obj is getattr(F, short, None) and \
                    name not in ("torch." + short, "cthtorch." + short):     # torch.adaptive_max_pool1d: the op
                return _BooleanDispatchSugar(short, *_functional_source.BOOLEAN_DISPATCH[short])
            return FunctionalSugar(obj, _F_OPS.get(short, short), _F_RENAMES.get(short))
        from ._module import ScriptFunction
        if isinstance(obj, ScriptFunction) and obj._original is not None:
            return FunctionSugar(obj._original)     # a @torch.jit.script function called by name: CallFunction
        if callable(obj) and (name.startswith(("torch.", "cthtorch.")) or getattr(obj, "__module__", "") and
                              str(getattr(obj, "__module__", "")).startswith("cthtorch")
                              and not inspect.isfunction(obj)):
            if short.startswith("_"):
                raise self.error(loc, "Python builtin <built-in method %s> is currently not supported in "
                                 "Torchscript" % short)
            return BuiltinSugar(short)
        if obj is math or getattr(obj, "__module__", None) == "math":
            return BuiltinSugar(short)
        if inspect.isfunction(obj) or hasattr(obj, "__torch_script_function__"):
            return FunctionSugar(obj)
        raise self.error(loc, "Python value of type '%s' cannot be used as a value. Perhaps it is a closed "
                         "over global variable? If so, please consider passing it in as an argument or use a "
                         "local varible instead." % type(obj).__name__)

    # -- expressions
    def value(self, node, env, hint=None):
        """An expression that must be an IR value."""
        v = self.expr(node, env, hint)
        if isinstance(v, list):
            return self.node("prim::TupleConstruct", v, [T_tuple([x.type() for x in v])], self.loc(node)).output()
        if isinstance(v, Sugar):
            raise self.error(node, "%s cannot be used as a value" % v.describe())
        return v

    def expr(self, node, env, hint=None):
        m = getattr(self, "expr_" + type(node).__name__, None)
        if m is None:
            raise self.error(node, "%s aren't supported" % _EXPR_NAMES.get(type(node).__name__,
                                                                           type(node).__name__),
                             UnsupportedNodeError)
        return m(node, env, hint) if m.__code__.co_argcount == 4 else m(node, env)

    def expr_Constant(self, node, env):
        if node.value is Ellipsis:
            raise self.error(node, "Ellipsis is only supported in indexing here", NotSupportedError)
        if isinstance(node.value, (complex, bytes)):
            raise self.error(node, "%s literals aren't supported" % type(node.value).__name__, NotSupportedError)
        return self.const(node.value, self.loc(node))

    def expr_Name(self, node, env):
        return self.lookup(node.id, env, node)

    def expr_Attribute(self, node, env):
        base = self.expr(node.value, env)
        loc = self.loc(node)
        if isinstance(base, Sugar):
            return base.attr(self, node.attr, loc)
        t = base.type()
        if is_tensor(t):
            return self.tensor_attr(base, node.attr, loc)
        if isinstance(t, _ir().NamedTupleType) and node.attr in t.names():
            i = t.names().index(node.attr)
            return self.node("prim::TupleIndex", [base, self.const(i, loc)], [t.elements()[i]], loc).output()
        if kind(t) == "ClassType" and node.attr in _CLASS_CONSTANTS.get(t.qualified_name(), {}):
            return self.constant_value(_CLASS_CONSTANTS[t.qualified_name()][node.attr], loc)
        if kind(t) == "ClassType" and hasattr(t, "getAttribute"):
            at = t.getAttribute(node.attr)
            if at is not None:
                return self.node_attr("prim::GetAttr", [base], [at], "name", node.attr, loc).output()
        return MethodOnValue(base, node.attr)

    def tensor_attr(self, x, name, loc):
        simple = {"shape": ("aten::size", T_list(T_int())), "dtype": ("prim::dtype", T_int()),
                  "device": ("prim::device", T_device()), "is_cuda": ("prim::is_cuda", T_bool()),
                  "requires_grad": ("prim::requires_grad", T_bool()), "ndim": ("aten::dim", T_int()),
                  "T": ("aten::numpy_T", T_tensor()), "mT": ("aten::mT", T_tensor()),
                  "grad": ("prim::grad", T_opt(T_tensor())), "data": ("prim::data", T_tensor()),
                  "is_sparse": ("prim::is_sparse", T_bool()), "is_meta": ("prim::is_meta", T_bool()),
                  "is_nested": ("prim::is_nested", T_bool()), "layout": ("prim::layout", T_int()),
                  "names": ("prim::names", T_list(T_str()))}
        if name in simple:
            k, t = simple[name]
            return self.node(k, [x], [t], loc).output()
        if name in _CAST_METHODS:
            return _CastMethodSugar(x, name)
        return BuiltinSugar(name, self_value=x)

    def expr_Tuple(self, node, env, hint=None):
        hints = hint.elements() if hint is not None and kind(hint) == "TupleType" else [None] * len(node.elts)
        vals = [self.value(e, env, h) for e, h in zip(node.elts, hints)]
        return self.node("prim::TupleConstruct", vals, [T_tuple([v.type() for v in vals])], self.loc(node)).output()

    def expr_List(self, node, env, hint=None):
        eh = hint.getElementType() if hint is not None and kind(hint) == "ListType" else None
        vals = [self.value(e, env, eh) for e in node.elts]
        loc = self.loc(node)
        if eh is not None:
            vals = [self.convert(v, eh, loc, what="list element") for v in vals]
            et = eh
        elif not vals:
            et = T_tensor()
        else:
            et = vals[0].type()
            for v in vals[1:]:
                u = unify(et, v.type())
                if u is None:
                    raise self.error(node, "Lists must contain only a single type, expected: %s but found %s "
                                     "instead" % (tstr(et), tstr(v.type())))
                et = u
        return self.node("prim::ListConstruct", vals, [T_list(et)], loc).output()

    def expr_Dict(self, node, env, hint=None):
        kh = hint.getKeyType() if hint is not None and kind(hint) == "DictType" else None
        vh = hint.getValueType() if hint is not None and kind(hint) == "DictType" else None
        ins, kt, vt = [], kh, vh
        for k, v in zip(node.keys, node.values):
            if k is None:
                raise self.error(node, "Dict expansion (**) is not supported", NotSupportedError)
            kv, vv = self.value(k, env, kh), self.value(v, env, vh)
            kt = kt or kv.type()
            vt = vt or vv.type()
            ins += [self.convert(kv, kt, self.loc(k)), self.convert(vv, vt, self.loc(v))]
        t = T_dict(kt or T_str(), vt or T_tensor())
        return self.node("prim::DictConstruct", ins, [t], self.loc(node)).output()

    def expr_JoinedStr(self, node, env):
        fmt, args = "", []
        for part in node.values:
            if isinstance(part, ast.Constant):
                fmt += str(part.value).replace("{", "{{").replace("}", "}}")
            else:
                if part.format_spec is not None or part.conversion not in (-1, None):
                    raise self.error(part, "format specifiers in f-strings are not supported", NotSupportedError)
                fmt += "{}"
                args.append(self.value(part.value, env))
        return self.node("aten::format", [self.const(fmt)] + args, [T_str()], self.loc(node)).output()

    def expr_IfExp(self, node, env):
        static = self.static_cond(node.test, env)
        if static is not None:
            return self.value(node.body if static else node.orelse, env)
        cond = self.cond(node.test, env)
        e = Env(self.block, env)
        self.emit_if(cond, self.loc(node), e,
                     lambda b: b.set("$ifexp", self.value(node.body, b)) or False,
                     lambda b: b.set("$ifexp", self.value(node.orelse, b)) or False,
                     self.refinements(node.test, env, True), self.refinements(node.test, env, False))
        return e.vars["$ifexp"]

    def expr_BoolOp(self, node, env):
        # short circuit: `a and b` is `b if a else False`
        is_and = isinstance(node.op, ast.And)
        cur = self.cond(node.values[0], env)
        refs = self.refinements(node.values[0], env, True) if is_and else {}
        for nxt in node.values[1:]:
            e = Env(self.block, env)

            def rhs(b, nxt=nxt):
                b.set("$bool", self.cond(nxt, b))
                return False

            def short(b):
                b.set("$bool", self.const(not is_and))
                return False
            if is_and:
                self.emit_if(cur, self.loc(node), e, rhs, short, refs, {})
            else:
                self.emit_if(cur, self.loc(node), e, short, rhs)
            cur = e.vars["$bool"]
        return cur

    def expr_UnaryOp(self, node, env):
        v = self.value(node.operand, env)
        loc = self.loc(node)
        if isinstance(node.op, ast.Not):
            return self.node("aten::__not__", [self.to_bool(v, loc)], [T_bool()], loc).output()
        if isinstance(node.op, ast.USub):
            if self.is_const(v) and isinstance(v.toIValue(), (int, float)) and not isinstance(v.toIValue(), bool):
                val = v.toIValue()
                if not v.hasUses():
                    v.node().destroy()          # -1 is one constant, as torch folds it
                return self.const(-val, loc)
            return self.emit_op("neg", [v], {}, loc)
        if isinstance(node.op, ast.UAdd):
            return v
        if isinstance(node.op, ast.Invert):
            return self.emit_op("bitwise_not", [v], {}, loc)
        raise self.error(node, "unsupported unary operator", NotSupportedError)

    def expr_BinOp(self, node, env):
        op = _binop_name(node.op)
        a, b = self.value(node.left, env), self.value(node.right, env)
        return self.emit_binop(op, a, b, self.loc(node))

    def emit_binop(self, op, a, b, loc):
        ta, tb = a.type(), b.type()
        if is_tensor(ta) or is_tensor(tb):
            if not is_tensor(ta):      # 2 - x: the reflected form
                if op in ("add", "mul"):
                    a, b = b, a
                elif op == "sub":
                    return self.emit_op("rsub", [b, a], {}, loc)
                else:
                    a = self.emit_op("scalar_tensor", [a], {}, loc)
            if op == "floordiv":
                op = "floor_divide"
            return self.emit_op(op, [a, b], {}, loc)
        return self.emit_scalar_op(op, a, b, loc)

    def emit_scalar_op(self, op, a, b, loc):
        """Arithmetic and comparisons on int/float/bool/str/lists: the
        result type follows Python's."""
        ka, kb = kind(a.type()), kind(b.type())
        nums = ("IntType", "FloatType", "BoolType", "NumberType")
        cmp = op in ("lt", "le", "gt", "ge", "eq", "ne")
        if op == "remainder":
            op = "remainder" if ka != kb or ka == "FloatType" else "remainder"
        if ka in nums and kb in nums:
            if cmp:
                t = T_bool()
            elif op in ("__and__", "__or__", "__xor__") and ka == kb == "BoolType":
                t = T_bool()
            elif op == "div":
                t = T_float()
            elif "FloatType" in (ka, kb):
                t = T_float()
            elif "NumberType" in (ka, kb):
                t = T_number()
            else:
                t = T_int()
            name = {"remainder": "remainder", "floordiv": "floordiv"}.get(op, op)
            return self.node("aten::" + name, [a, b], [t], loc).output()
        if ka == "StringType" and op == "remainder":            # "%d items" % n
            vals = list(b.node().inputs()) if b.node().kind() == "prim::TupleConstruct" else [b]
            return self.node("aten::percentFormat", [a] + vals, [T_str()], loc).output()
        if ka == kb == "StringType" and (cmp or op == "add"):
            return self.node("aten::" + op, [a, b], [T_bool() if cmp else T_str()], loc).output()
        if ka == kb == "ListType" and (op == "add" or op in ("eq", "ne")):
            return self.node("aten::" + op, [a, b], [T_bool() if cmp else a.type()], loc).output()
        if ka == "ListType" and kb == "IntType" and op == "mul":
            return self.node("aten::mul", [a, b], [a.type()], loc).output()
        if op in ("eq", "ne") and (ka == "NoneType" or kb == "NoneType"):
            return self.const((op == "eq") == (ka == kb), loc)
        if cmp and ka == kb and ka in ("DeviceObjType", "DeviceType", "TupleType"):
            return self.node("aten::" + op, [a, b], [T_bool()], loc).output()
        raise self.error(loc, "Arguments for call are not valid.\nThe following variants are available:\n\n"
                         "  aten::%s(...):\n  Expected a value of type 'Tensor' for argument 'self' but instead "
                         "found type '%s'.\n" % (op, tstr(a.type())))

    def expr_Compare(self, node, env):
        loc = self.loc(node)
        static = self.static_cond(node, env)
        if static is not None:
            return self.const(static, loc)
        left = self.value(node.left, env)
        result = None
        for op, rnode in zip(node.ops, node.comparators):
            right = self.value(rnode, env)
            name = _cmp_name(op)
            if isinstance(op, ast.NotIn):
                v = self.emit_contains(right, left, loc)
                v = self.node("aten::__not__", [v], [T_bool()], loc).output()
            elif name == "__contains__":
                v = self.emit_contains(right, left, loc)
            elif name in ("__is__", "__isnot__"):
                v = self.node("aten::" + name, [left, right], [T_bool()], loc).output()
            else:
                v = self.emit_binop(name, left, right, loc)
            if result is None:
                result = v
            else:
                result = self.emit_binop("__and__", self.to_bool(result, loc), self.to_bool(v, loc), loc)
            left = right
        return result

    def emit_contains(self, container, item, loc):
        return self.node("aten::__contains__", [container, item], [T_bool()], loc).output()

    def expr_Subscript(self, node, env):
        base = self.expr(node.value, env)
        loc = self.loc(node)
        if isinstance(base, ModuleSugar):
            idx = node.slice
            if isinstance(idx, ast.Constant):
                return base.attr(self, str(idx.value), loc)
            raise self.error(node, "Indexing a module list needs a constant index here", NotSupportedError)
        t = base.type()
        if is_tensor(t):
            return self.tensor_index(base, node.slice, env, loc)
        k = kind(t)
        if k == "TupleType":
            if isinstance(node.slice, ast.Slice):
                items = self.unpack(base, len(t.elements()), loc)
                s = slice(*[None if p is None else self.const_value(self.value(p, env))
                            for p in (node.slice.lower, node.slice.upper, node.slice.step)])
                vals = items[s]
                return self.node("prim::TupleConstruct", vals, [T_tuple([v.type() for v in vals])], loc).output()
            iv = self.value(node.slice, env)
            try:
                i = self.const_value(iv)
            except LookupError:
                raise self.error(node, "Tuple indexing requires a constant index here", NotSupportedError)
            items = t.elements()
            if not -len(items) <= i < len(items):
                raise self.error(node, "Tuple index out of range. Tuple is length %d and index is %d"
                                 % (len(items), i))
            return self.node("prim::TupleIndex", [base, iv], [items[i]], loc).output()
        if k in ("ListType", "StringType"):
            if isinstance(node.slice, ast.Slice):
                parts = [self.const(None) if p is None else self.value(p, env)
                         for p in (node.slice.lower, node.slice.upper, node.slice.step)]
                if node.slice.step is None:
                    parts[2] = self.const(1)
                return self.node("aten::slice", [base] + parts, [t], loc).output()
            idx = self.convert(self.value(node.slice, env), T_int(), loc, what="index")
            return self.node("aten::__getitem__", [base, idx], [t.getElementType() if k == "ListType" else T_str()],
                             loc).output()
        if k == "DictType":
            key = self.convert(self.value(node.slice, env), t.getKeyType(), loc, what="key")
            return self.node("aten::__getitem__", [base, key], [t.getValueType()], loc).output()
        raise self.error(node, "'%s' object is not subscriptable" % tstr(t))

    def tensor_index(self, x, idx, env, loc):
        """x[i], x[a:b], x[..., None], x[mask]: select/slice/unsqueeze per
        dimension, then aten::index for tensor indices."""
        items = idx.elts if isinstance(idx, ast.Tuple) else [idx]
        items = [_as_slice(it) for it in items]
        dim = 0
        tensors = []
        for pos, it in enumerate(items):
            if isinstance(it, ast.Constant) and it.value is Ellipsis:
                # the dimensions after `...` count from the end
                after = sum(1 for r in items[pos + 1:] if not (isinstance(r, ast.Constant) and r.value is None))
                dim = ("end", after)
                continue
            if isinstance(it, ast.Constant) and it.value is None:
                x = self.emit_op("unsqueeze", [x, self.dim_value(dim, loc)], {}, loc)
                dim = self.bump(dim)
                continue
            if isinstance(it, ast.Slice):
                parts = [self.const(None) if p is None else self.value(p, env)
                         for p in (it.lower, it.upper, it.step)]
                if it.step is None:
                    parts[2] = self.const(1)
                x = self.emit_op("slice", [x, self.dim_value(dim, loc)] + parts, {}, loc)
                dim = self.bump(dim)
                continue
            v = self.value(it, env)
            if is_tensor(v.type()) or kind(v.type()) == "ListType":
                tensors.append((dim, v))
                dim = self.bump(dim)
                continue
            x = self.emit_op("select", [x, self.dim_value(dim, loc), v], {}, loc)
        if tensors:
            if len(tensors) != 1 or tensors[0][0] != 0:
                raise self.error(loc, "only a single tensor index on the first dimension is supported here",
                                 NotSupportedError)
            v = tensors[0][1]
            if kind(v.type()) == "ListType":
                v = self.emit_op("tensor", [v], {}, loc)
            lst = self.node("prim::ListConstruct", [v], [T_list(T_opt(T_tensor()))], loc).output()
            x = self.node("aten::index", [x, lst], [T_tensor()], loc).output()
        return x

    def bump(self, dim):
        return dim + 1 if isinstance(dim, int) else ("end", dim[1] - 1)

    def dim_value(self, dim, loc):
        return self.const(dim if isinstance(dim, int) else -dim[1], loc)

    # -- conditions and refinement
    def to_bool(self, v, loc):
        k = kind(v.type())
        if k == "BoolType":
            return v
        if is_tensor(v.type()):
            return self.node("aten::Bool", [v], [T_bool()], loc).output()
        if k in ("IntType", "FloatType", "NumberType"):
            return self.node("aten::Bool", [v], [T_bool()], loc).output()
        if k in ("ListType", "StringType", "DictType"):
            n = self.node("aten::len", [v], [T_int()], loc).output()
            return self.node("aten::ne", [n, self.const(0)], [T_bool()], loc).output()
        if k == "OptionalType":
            return self.node("aten::__isnot__", [v, self.const(None)], [T_bool()], loc).output()
        raise self.error(loc, "Could not cast value of type %s to bool" % tstr(v.type()))

    def cond(self, node, env):
        return self.to_bool(self.value(node, env), self.loc(node))

    def none_test(self, node, env):
        """`x is None` / `x is not None` on a name -> (name, is_not), else None."""
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Is, ast.IsNot)):
            l, r = node.left, node.comparators[0]
            if isinstance(r, ast.Constant) and r.value is None and isinstance(l, ast.Name):
                return l.id, isinstance(node.ops[0], ast.IsNot)
            if isinstance(l, ast.Constant) and l.value is None and isinstance(r, ast.Name):
                return r.id, isinstance(node.ops[0], ast.IsNot)
        return None

    def static_cond(self, node, env):
        """A condition TorchScript decides while compiling: `x is None` where
        x is not Optional, isinstance(), torch.jit.is_scripting()."""
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Is, ast.IsNot)) \
                and isinstance(node.left, ast.Attribute) and isinstance(node.left.value, ast.Name) and \
                isinstance(node.comparators[0], ast.Constant) and node.comparators[0].value is None:
            # `self.norm is not None`: a module attribute that is None, or a submodule, decides it here
            base = env.lookup(node.left.value.id)
            if isinstance(base, ModuleSugar):
                kind_, payload = base.info.lookup(node.left.attr)
                is_not = isinstance(node.ops[0], ast.IsNot)
                if kind_ == "module":
                    return is_not
                if kind_ == "constant" and payload is None or \
                        kind_ == "attribute" and kind(payload) == "NoneType":
                    return not is_not
        nt = self.none_test(node, env)
        if nt is not None:
            v = env.lookup(nt[0])
            if isinstance(v, _ir().Value):
                k = kind(v.type())
                if k == "NoneType":
                    return not nt[1]
                if k != "OptionalType" and k != "AnyType":
                    return nt[1]
            return None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance" \
                and env.lookup("isinstance") is None:
            return self.static_isinstance(node, env)
        if isinstance(node, ast.Call):
            name = ast.unparse(node.func)
            if name.endswith(("jit.is_scripting", "jit._is_scripting")) or name == "is_scripting":
                return True
            if name.endswith("jit.is_tracing") or name.endswith("_C._get_tracing_state"):
                return False
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            s = self.static_cond(node.operand, env)
            return None if s is None else not s
        if isinstance(node, ast.BoolOp):
            # `w is not None and x` with w None is False while compiling, as torch's short-circuit keeps
            # its operands' static values: the branch that would read w is never emitted
            decisive = isinstance(node.op, ast.Or)
            vals = [self.static_cond(sub, env) for sub in node.values]
            if decisive in vals:
                return decisive
            return (not decisive) if all(v is not None for v in vals) else None
        if isinstance(node, ast.Attribute) and node.attr == "training" and False:
            return None
        return None

    def static_isinstance(self, node, env):
        v = self.value(node.args[0], env)
        targets = node.args[1].elts if isinstance(node.args[1], ast.Tuple) else [node.args[1]]
        t = v.type()
        for tn in targets:
            want = type_from_annotation(tn, self.ctx, self.resolve_type_name) if not (
                isinstance(tn, ast.Name) and tn.id in ("list", "tuple", "dict")) else tn.id
            if isinstance(want, str):
                if kind(t) == {"list": "ListType", "tuple": "TupleType", "dict": "DictType"}[want]:
                    return True
            elif is_subtype(t, want):
                return True
        if kind(t) in ("OptionalType", "AnyType"):
            raise self.error(node, "isinstance on an Optional value is not supported here; test `is None`",
                             NotSupportedError)
        return False

    def refinements(self, node, env, truth):
        """The names a condition narrows from Optional[T] to T on one side."""
        nt = self.none_test(node, env)
        if nt is not None:
            name, is_not = nt
            v = env.lookup(name)
            if isinstance(v, _ir().Value) and kind(v.type()) == "OptionalType" and is_not == truth:
                return {name: v.type().getElementType()}
            return {}
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And) and truth:
            out = {}
            for sub in node.values:
                out.update(self.refinements(sub, env, True))
            return out
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or) and not truth:
            out = {}
            for sub in node.values:
                out.update(self.refinements(sub, env, False))
            return out
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return self.refinements(node.operand, env, not truth)
        return {}

    # -- calls
    def expr_Call(self, node, env):
        loc = self.loc(node)
        fname = ast.unparse(node.func)
        if fname.endswith("jit.annotate") or fname == "annotate":
            t = type_from_annotation(node.args[0], self.ctx, self.resolve_type_name)
            v = self.value(node.args[1], env, hint=t)
            if is_tensor(v.type()) and kind(t) in ("IntType", "FloatType", "BoolType"):
                # torch prints its implicit Tensor->number conversion (aten::IntImplicit) as annotate(int, x)
                op = {"IntType": "aten::Int", "FloatType": "aten::Float", "BoolType": "aten::Bool"}[kind(t)]
                return self.node(op, [v], [t], loc).output()
            return self.convert(v, t, loc, what="annotate()")
        if fname in ("uninitialized",) and env.lookup(fname) is None:
            t = type_from_annotation(node.args[0], self.ctx, self.resolve_type_name)
            return self.node("prim::Uninitialized", [], [t], loc).output()
        if fname in ("unchecked_cast",) and env.lookup(fname) is None:
            t = type_from_annotation(node.args[0], self.ctx, self.resolve_type_name)
            return self.node("prim::unchecked_cast", [self.value(node.args[1], env)], [t], loc).output()
        if fname == "getattr" and env.lookup(fname) is None and len(node.args) == 2 and not node.keywords and \
                isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str):
            # getattr(self, "0") with a constant name (how .code reads a Sequential's children): obj.<name>
            return self.expr(ast.copy_location(ast.Attribute(node.args[0], node.args[1].value, ast.Load()), node), env)
        static = self.static_cond(node, env)
        if static is not None and isinstance(node.func, (ast.Name, ast.Attribute)) and \
                fname.split(".")[-1] in ("isinstance", "is_scripting", "_is_scripting", "is_tracing"):
            return self.const(static, loc)
        callee = self.expr(node.func, env)
        for a in node.args:
            if isinstance(a, ast.Starred):
                raise self.error(a, "Starred arguments are not supported", NotSupportedError)
        args = [self.expr(a, env) for a in node.args]
        kwargs = {}
        for kw in node.keywords:
            if kw.arg is None:
                raise self.error(kw.value, "keyword-arg expansion is not supported", NotSupportedError)
            kwargs[kw.arg] = self.expr(kw.value, env)
        if isinstance(callee, MethodOnValue):
            return self.emit_value_method(callee, args, kwargs, loc)
        if not isinstance(callee, Sugar):
            raise self.error(node, "'%s' object is not callable" % tstr(callee.type()))
        return callee.call(self, args, kwargs, loc)

    def emit_value_method(self, m, args, kwargs, loc):
        """Methods of lists, dicts, strings."""
        v, name = m.value, m.name
        t = v.type()
        k = kind(t)
        args = [self.as_value(a, loc) for a in args]
        if k == "ListType":
            et = t.getElementType()
            outs = {"append": [t], "insert": [], "pop": [et], "extend": [], "clear": [], "reverse": [],
                    "index": [T_int()], "count": [T_int()], "copy": [t], "remove": [], "sort": []}
            if name not in outs:
                raise self.error(loc, "'%s' object has no attribute or method '%s'." % (tstr(t), name))
            if name == "append":
                args = [self.convert(args[0], et, loc, what="append()")]
            n = self.node("aten::" + name, [v] + args, outs[name], loc)
            return n.output() if outs[name] else self.const(None)
        if k == "DictType":
            kt, vt = t.getKeyType(), t.getValueType()
            outs = {"keys": [T_list(kt)], "values": [T_list(vt)], "items": [T_list(T_tuple([kt, vt]))],
                    "get": [T_opt(vt)], "pop": [vt], "clear": [], "update": [], "copy": [t], "setdefault": [vt]}
            if name not in outs:
                raise self.error(loc, "'%s' object has no attribute or method '%s'." % (tstr(t), name))
            if name == "get" and len(args) == 2:
                outs["get"] = [vt]
            n = self.node("aten::" + name, [v] + args, outs[name], loc)
            return n.output() if outs[name] else self.const(None)
        if k == "ClassType":
            cf = _CLASS_METHODS.get(t.qualified_name(), {}).get(name)
            if cf is None:
                raise self.error(loc, "'%s' object has no attribute or method '%s'." % (tstr(t), name))
            vals = self.bind_args(cf.arg_names, cf.arg_types, cf.defaults, args, kwargs, loc, name)
            n = self.node("prim::CallMethod", [v] + vals, [cf.return_type], loc)
            n.s_("name", name)
            return n.output()
        if k == "StringType":
            outs = {"format": T_str(), "lower": T_str(), "upper": T_str(), "strip": T_str(), "split": T_list(T_str()),
                    "join": T_str(), "startswith": T_bool(), "endswith": T_bool(), "replace": T_str(),
                    "find": T_int()}
            if name not in outs:
                raise self.error(loc, "'str' object has no attribute or method '%s'." % name)
            return self.node("aten::" + name, [v] + args, [outs[name]], loc).output()
        raise self.error(loc, "'%s' object has no attribute or method '%s'." % (tstr(t), name))

    def as_value(self, a, loc):
        if isinstance(a, Sugar):
            raise self.error(loc, "%s cannot be used as a value" % a.describe())
        return a

    def emit_python_builtin(self, name, args, kwargs, loc):
        args = [self.as_value(a, loc) for a in args]
        one = args[0] if args else None
        if name == "len":
            if is_tensor(one.type()):
                return self.node("aten::len", [one], [T_int()], loc).output()
            return self.node("aten::len", [one], [T_int()], loc).output()
        if name in ("int", "float", "bool", "str"):
            t = {"int": T_int, "float": T_float, "bool": T_bool, "str": T_str}[name]()
            if not args:
                return self.const({"int": 0, "float": 0.0, "bool": False, "str": ""}[name], loc)
            if same_type(one.type(), t):
                return one
            if name == "bool":
                return self.to_bool(one, loc)
            op = {"int": "Int", "float": "Float", "str": "str"}[name]
            return self.node("aten::" + op, [one], [t], loc).output()
        if name == "print":
            self.node("prim::Print", args, [], loc)
            return self.const(None)
        if name in ("min", "max"):
            if len(args) == 1:
                return self.node("prim::" + name, args, [one.type().getElementType()], loc).output()
            t = args[0].type()
            for a in args[1:]:
                t = T_float() if "FloatType" in (kind(t), kind(a.type())) else t
            if is_tensor(t):
                return self.emit_op(name if len(args) == 1 else name + "imum", args, {}, loc)
            return self.node("prim::" + name, args, [t], loc).output()
        if name == "abs":
            if is_tensor(one.type()):
                return self.emit_op("abs", args, {}, loc)
            return self.node("prim::abs", args, [one.type()], loc).output()
        if name == "round":
            return self.node("aten::round", args, [T_float()], loc).output()
        if name == "list":
            return self.node("aten::list", args, [one.type()], loc).output()
        if name in ("any", "all"):
            return self.node("aten::" + name, args, [T_bool()], loc).output()
        if name == "sum":
            return self.node("aten::sum", args, [one.type().getElementType()], loc).output()
        if name == "divmod":
            t = args[0].type()
            return self.node("aten::divmod", args, [T_tuple([t, t])], loc).output()
        if name == "range":
            raise self.error(loc, "range() can only be used as the iterable of a for loop here",
                             NotSupportedError)
        raise self.error(loc, "Python builtin %s is currently not supported in Torchscript" % name,
                         NotSupportedError)

    def emit_call_function(self, fn, args, kwargs, loc):
        compiled = self.compiler.function(fn, loc)
        schema_args = compiled.arg_types
        names = compiled.arg_names
        vals = self.bind_args(names, schema_args, compiled.defaults, args, kwargs, loc,
                              getattr(fn, "__qualname__", "function"))
        if compiled.graph is None and _is_ignored(compiled.py_fn):
            return self.python_op(compiled, vals, loc)
        fconst = self.graph.create("prim::Constant", [], 1)
        fconst.s_("name", compiled.name)
        from ._script import function_object
        # what the interpreter calls: the ScriptFunction, or for @ignore'd functions the Python one
        fconst.ival_("value", function_object(compiled) if compiled.graph is not None else compiled.py_fn)
        fconst.output().setType(_function_type(compiled.qualified_name))
        fconst.insertBefore(self.block.returnNode())
        return self.node("prim::CallFunction", [fconst.output()] + vals, [compiled.return_type], loc).output()

    def emit_call_method(self, obj_value, module_sugar, name, args, kwargs, loc):
        compiled = self.compiler.method(module_sugar.info, name, loc)
        vals = self.bind_args(compiled.arg_names, compiled.arg_types, compiled.defaults, args, kwargs, loc, name)
        if compiled.graph is None and _is_ignored(compiled.py_fn):
            return self.python_op(compiled, [obj_value] + vals, loc)
        n = self.node("prim::CallMethod", [obj_value] + vals, [compiled.return_type], loc)
        n.s_("name", name)
        return n.output()

    def python_op(self, compiled, vals, loc):
        """A call left to Python (@torch.jit.ignore): prim::PythonOp holding the function, printed as torch
        prints it (`^name[]()(%x)`); a method's takes its module first."""
        n = self.node("prim::PythonOp", vals, [compiled.return_type], loc)
        n.s_("name", compiled.name)
        n.ival_("value", compiled.py_fn)
        return n.output()

    def bind_args(self, names, types, defaults, args, kwargs, loc, what):
        args = [self.as_value(a, loc) for a in args]
        if len(args) > len(names):
            raise self.error(loc, "%s() expected at most %d argument(s) but received %d argument(s)"
                             % (what, len(names), len(args)))
        vals = []
        for i, (nm, t) in enumerate(zip(names, types)):
            if i < len(args):
                v = args[i]
            elif nm in kwargs:
                v = self.as_value(kwargs.pop(nm), loc)
            elif nm in defaults:
                v = self.const(defaults[nm], loc)
            else:
                raise self.error(loc, "%s() is missing value for argument '%s'." % (what, nm))
            vals.append(self.convert(v, t, loc, what="argument '%s'" % nm))
        if kwargs:
            raise self.error(loc, "%s() got an unexpected keyword argument '%s'" % (what, next(iter(kwargs))))
        return vals

    def module_attr(self, sugar, name, loc):
        info = sugar.info
        kind_, payload = info.lookup(name)
        if kind_ == "module":
            v = self.node_attr("prim::GetAttr", [sugar.value], [payload.class_type], "name", name, loc).output()
            v.setDebugName("_" + name if name[:1].isdigit() else name)
            return ModuleSugar(v, payload)
        if kind_ == "constant":
            return self.constant_value(payload, loc)
        if kind_ == "attribute":
            v = self.node_attr("prim::GetAttr", [sugar.value], [payload], "name", name, loc).output()
            v.setDebugName(name)
            return v
        if kind_ == "method":
            return MethodSugar(sugar.value, sugar, name)
        if kind_ == "function":
            return FunctionSugar(payload)
        if kind_ == "python_function":
            return self.sugar_python(payload, getattr(payload, "__name__", name), loc)
        raise self.error(loc, "Module '%s' has no attribute '%s' %s" % (info.py_name, name, payload or ""))

    def constant_value(self, val, loc):
        if isinstance(val, tuple):
            vals = [self.constant_value(x, loc) for x in val]
            return self.node("prim::TupleConstruct", vals, [T_tuple([v.type() for v in vals])], loc).output()
        return self.const(val, loc)

    # -- ops and schemas
    def emit_op(self, op, args, kwargs, loc):
        """aten::op with the first schema the arguments fit; defaults filled."""
        args = [self.as_value(a, loc) for a in args]
        kwargs = {k: self.as_value(v, loc) for k, v in kwargs.items()}
        schemas = get_schemas("aten::" + op)
        if not schemas:
            raise self.error(loc, "Unknown builtin op: aten::%s.\nCould not find any similar ops to aten::%s. "
                             "This op may not exist or may not be currently supported in TorchScript." % (op, op))
        errors = []
        for lenient in (False, True):
            for s in schemas:
                if any(a.name == "out" for a in s.arguments):
                    continue
                r = self.match_schema(s, args, kwargs, loc, lenient)
                if isinstance(r, str):
                    errors.append("  %s:\n  %s" % (s, r))
                    continue
                inputs, rtypes = r
                n = self.node("aten::" + op, inputs, rtypes, loc)
                if hasattr(n, "setSchema"):
                    n.setSchema(s)
                if len(rtypes) == 1:
                    return n.output()
                if not rtypes:
                    return self.const(None)
                outs = list(n.outputs())
                return self.node("prim::TupleConstruct", outs, [T_tuple(rtypes)], loc).output()
        raise self.error(loc, "Arguments for call are not valid.\nThe following variants are available:\n  \n%s\n"
                         "The original call is" % "\n\n".join(dict.fromkeys(errors)))

    def match_schema(self, s, args, kwargs, loc, lenient):
        """The inputs for schema s, or a string saying why it does not fit."""
        params = list(s.arguments)
        positional = [p for p in params if not p.kwarg_only]
        args = list(args)
        # `x.view(2, 3)`, `torch.zeros(3, 4)`: ints given where an int list is the lone list argument
        first_list = next((i for i, p in enumerate(positional)
                           if kind(_arg_type(p)) == "ListType"
                           and kind(_arg_type(p).getElementType()) == "IntType"), None)
        if first_list is not None and first_list == len(positional) - 1 and len(args) > first_list \
                and all(kind(a.type()) == "IntType" for a in args[first_list:]):
            packed = self.node("prim::ListConstruct", args[first_list:], [T_list(T_int())], loc).output()
            args = args[:first_list] + [packed]
        if len(args) > len(positional):
            return "Expected at most %d arguments but found %d positional arguments." % (len(positional), len(args))
        kw = dict(kwargs)
        inputs = []
        for i, p in enumerate(params):
            pt = _arg_type(p)
            if i < len(args) and not p.kwarg_only:
                v = args[i]
            elif p.name in kw:
                v = kw.pop(p.name)
            elif _has_default(p):
                inputs.append(self.const(_default_of(p), loc))
                continue
            else:
                return "Argument %s not provided." % p.name
            c = self.try_convert(v, pt, getattr(p, "_type_str", None) or str(p.type), loc, lenient and i > 0)
            if c is None:
                return "Expected a value of type '%s' for argument '%s' but instead found type '%s'." % (
                    tstr(pt), p.name, tstr(v.type()))
            inputs.append(c)
        if kw:
            return "Keyword argument %s unknown." % next(iter(kw))
        # a type variable (`t`, parsed as Any) takes the type of the first value it matched
        bound = None
        for p, v in zip(params, inputs):
            pt = _arg_type(p)
            if kind(pt) == "AnyType" and kind(v.type()) != "AnyType":
                bound = v.type()
            elif kind(pt) == "ListType" and kind(pt.getElementType()) == "AnyType" and \
                    kind(v.type()) == "ListType":
                bound = v.type().getElementType()
            if bound is not None:
                break
        rtypes = [_bind_typevar(_arg_type(r), bound) for r in s.returns]
        return inputs, rtypes

    def try_convert(self, v, t, spelling, loc, lenient=False):
        vt = v.type()
        kt, kv = kind(t), kind(vt)
        if kt == "OptionalType":
            if kv == "NoneType" or (kv == "OptionalType" and is_subtype(vt.getElementType(), t.getElementType())):
                return v
            return self.try_convert(v, t.getElementType(), spelling.rstrip("?"), loc, lenient)
        if is_subtype(vt, t):
            return v
        if kt in ("DeviceObjType", "DeviceType") and kv == "StringType":   # implicit str -> Device, as torch's
            return self.node("aten::device", [v], [T_device()], loc).output()
        if kt == "FloatType" and kv == "IntType":       # implicit int -> float
            if self.is_const(v):
                return self.const(float(v.toIValue()), loc)
            return self.node("aten::Float", [v], [T_float()], loc).output()
        if kt == "ListType":
            et = t.getElementType()
            fixed = re.search(r"\[(\d+)\]", spelling)
            if kv == "IntType" and kind(et) == "IntType" and fixed:
                # an int where int[N] is expected is N copies of it, as torch's conversion makes it
                return self.node("prim::ListConstruct", [v] * int(fixed.group(1)), [t], loc).output()
            n = v.node()
            if n.kind() in ("prim::ListConstruct", "prim::TupleConstruct") and not n.hasUses() if hasattr(
                    n, "hasUses") else False:
                pass
            if n.kind() in ("prim::ListConstruct", "prim::TupleConstruct"):
                items = list(n.inputs())
                conv = [self.try_convert(x, et, "", loc) for x in items]
                if all(c is not None for c in conv):
                    return self.node("prim::ListConstruct", conv, [t], loc).output()
            if kv == "TupleType" and all(is_subtype(e, et) for e in vt.elements()):
                items = self.unpack(v, len(vt.elements()), loc)
                return self.node("prim::ListConstruct", items, [t], loc).output()
            return None
        if kt == "TensorType" and lenient and kv in ("IntType", "FloatType", "BoolType", "NumberType"):
            return v         # a Scalar where the binding takes Tensor-or-number
        if kt == "AnyType":
            return v
        return None

    def convert(self, v, t, loc, what="value"):
        c = self.try_convert(v, t, getattr(t, "spelling", str(t)), loc)
        if c is None:
            raise self.error(loc, "Expected a value of type '%s' for %s but instead found type '%s'."
                             % (tstr(t), what, tstr(v.type())))
        return c


def _as_slice(node):
    """`slice(a, b, c)` (as torch.fx writes indices) -> the `a:b:c` node."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "slice" \
            and not node.keywords and 1 <= len(node.args) <= 3:
        a = list(node.args) if len(node.args) > 1 else [ast.Constant(None)] + list(node.args)
        a = [None if isinstance(x, ast.Constant) and x.value is None else x for x in a] + [None] * (3 - len(a))
        return ast.copy_location(ast.Slice(lower=a[0], upper=a[1], step=a[2]), node)
    return node


class _AppendStmt(ast.stmt):
    """The body of a list comprehension's loop."""
    _fields = ("elt",)

    def __init__(self, lst, elt):
        super().__init__()
        self.lst = lst
        self.elt = elt
        self.typed = False


class MethodOnValue:
    def __init__(self, value, name):
        self.value = value
        self.name = name


def env_kind_in_loop(env):
    e = env
    while e is not None:
        if e.kind == "loop":
            return True
        e = e.parent
    return False


def _arg_type(p):
    t = p.type
    if isinstance(t, str):
        from cthtorch.jit import _schema
        return _schema.parse_type(t)[0]
    return t


def _bind_typevar(t, bound):
    if bound is None:
        return t
    if kind(t) == "AnyType":
        return bound
    if kind(t) == "ListType" and kind(t.getElementType()) == "AnyType":
        return T_list(bound)
    return t


def _has_default(p):
    h = getattr(p, "has_default_value", None)
    if callable(h):
        return h()
    return p.default_value is not None or str(p.type).endswith("?")


def _default_of(p):
    d = p.default_value
    return d


def _function_type(qualified_name):
    m = _ir()
    ft = getattr(m, "FunctionType", None)
    return ft(qualified_name) if ft is not None else m.AnyType.get()


_SCHEMA_CACHE = {}


def get_schemas(name):
    """The op schemas for a qualified name, from the IR's registry
    (`_C._jit_get_schemas_for_operator`)."""
    if name not in _SCHEMA_CACHE:
        fn = getattr(_C(), "_jit_get_schemas_for_operator", None)
        if fn is None:
            from cthtorch.jit import _schema
            fn = _schema.get_schemas
        _SCHEMA_CACHE[name] = list(fn(name))
    return _SCHEMA_CACHE[name]


def _special_function(obj):
    """torch.jit helpers with compile-time meaning."""
    name = getattr(obj, "__name__", "")
    mod = getattr(obj, "__module__", "") or ""
    if "jit" in mod and name in ("is_scripting", "_is_scripting"):
        return _ConstSugar(True)
    if "jit" in mod and name == "is_tracing":
        return _ConstSugar(False)
    if hasattr(obj, "__torch_script_function__"):
        return FunctionSugar(obj.__torch_script_function__)
    return None


class _ConstSugar(Sugar):
    def __init__(self, val):
        self.val = val

    def call(self, em, args, kwargs, loc):
        return em.const(self.val, loc)


_STMT_NAMES = {"ClassDef": "class definitions", "FunctionDef": "function definitions",
               "AsyncFunctionDef": "async function definitions", "Try": "try blocks", "Import": "imports",
               "ImportFrom": "imports", "Global": "global variables", "Nonlocal": "nonlocal variables",
               "Delete": "del statements", "AsyncFor": "async for loops", "AsyncWith": "async with statements"}
_EXPR_NAMES = {"GeneratorExp": "generator expressions", "Lambda": "Lambda", "Yield": "Yield",
               "YieldFrom": "yield from", "Await": "await", "SetComp": "set comprehensions",
               "Set": "set literals", "Starred": "starred expressions", "ListComp": "list comprehensions",
               "DictComp": "dict comprehensions", "NamedExpr": "assignment expressions"}


# --------------------------------------------------------------------------- compiling functions

class CompiledFunction:
    """A function's graph and calling convention."""

    def __init__(self, name, qualified_name, graph, arg_names, arg_types, defaults, return_type, py_fn=None):
        self.name = name
        self.qualified_name = qualified_name
        self.graph = graph
        self.arg_names = arg_names
        self.arg_types = arg_types
        self.defaults = defaults
        self.return_type = return_type
        self.py_fn = py_fn


def _parse_source(obj):
    """obj's (a function's or class's) source, parsed, with its source context."""
    try:
        lines, first = inspect.getsourcelines(obj)
        filename = inspect.getsourcefile(obj) or "<unknown>"
    except (OSError, TypeError):
        raise OSError("Can't get source for %r. TorchScript requires source access in order to carry out "
                      "compilation, make sure original .py files are available." % (obj,))
    src = "".join(lines)
    dedented = textwrap.dedent(src)
    indent = len(src.splitlines()[0]) - len(dedented.splitlines()[0])
    return ast.parse(dedented, type_comments=True), SourceContext(dedented, filename, first - 1, indent)


def get_jit_def(fn):
    """fn's `def` as an ast node with its source context."""
    tree, ctx = _parse_source(fn)
    fdef = tree.body[0]
    if not isinstance(fdef, (ast.FunctionDef, ast.AsyncFunctionDef)):
        raise RuntimeError("Expected a function definition for %r" % (fn,))
    if isinstance(fdef, ast.AsyncFunctionDef):
        raise NotSupportedError(SourceRange(ctx, fdef), "async functions aren't supported")
    return fdef, ctx


def python_resolver(fn):
    """Names a function's body sees: its closure, then its globals."""
    closure = {}
    if getattr(fn, "__closure__", None):
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
            try:
                closure[name] = cell.cell_contents
            except ValueError:
                pass
    glb = getattr(fn, "__globals__", {})

    def resolve(name):
        if name in closure:
            return closure[name]
        if name in glb:
            return glb[name]
        raise KeyError(name)
    return resolve


def signature_types(fdef, ctx, resolver, py_defaults, skip_self=False):
    """Argument names, types and defaults, and the return type, from
    annotations, a `# type:` comment, or Tensor."""
    args = fdef.args
    if args.vararg is not None or args.kwarg is not None:
        bad = args.kwarg if args.kwarg is not None else args.vararg
        raise NotSupportedError(SourceRange(ctx, bad), "Compiled functions can't take variable number of "
                                "arguments or use keyword-only arguments with defaults")
    params = args.posonlyargs + args.args + args.kwonlyargs
    if skip_self:
        params = params[1:]
    names = [a.arg for a in params]
    comment = fdef.type_comment
    if comment is None:
        body0 = ctx.source.splitlines()[fdef.lineno:fdef.lineno + 1]
        if body0 and body0[0].strip().startswith("# type:"):
            comment = body0[0].strip()[1:].strip()
    ret = None
    types = None
    if comment:
        types, ret = parse_type_comment(comment if comment.startswith("type:") else "type: " + comment, ctx,
                                        resolver)
        if len(types) != len(names):
            raise script_error(SourceRange(ctx, fdef), "Number of type annotations (%d) did not match the number "
                                "of function parameters (%d)" % (len(types), len(names)))
    if types is None:
        types = _ArgTypes()
        for a in params:
            if a.annotation is not None:
                types.append(type_from_annotation(a.annotation, ctx, resolver))
            elif a.arg in py_defaults and py_defaults[a.arg] is not None and \
                    type_of_python_value(py_defaults[a.arg]) is not None and \
                    not is_tensor(type_of_python_value(py_defaults[a.arg])):
                raise script_error(SourceRange(ctx, fdef), "Expected a default value of type Tensor (inferred) on "
                                    "parameter \"%s\".Because \"%s\" was not annotated with an explicit type it "
                                    "is assumed to be type 'Tensor'." % (a.arg, a.arg))
            else:
                types.append(T_opt(T_tensor()) if a.arg in py_defaults else T_tensor())
                types.inferred.add(a.arg)
        if fdef.returns is not None:
            ret = type_from_annotation(fdef.returns, ctx, resolver)
    return names, types, ret


class _ArgTypes(list):
    """Argument types, knowing which were inferred (no annotation)."""

    def __init__(self):
        super().__init__()
        self.inferred = set()


def _py_defaults(fn):
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return {}
    return {k: p.default for k, p in sig.parameters.items() if p.default is not inspect.Parameter.empty}


class Compiler:
    """Compiles functions (and, through _recursive, module methods) once
    each; calls between them become prim::CallFunction/CallMethod."""

    def __init__(self):
        from . import _script_ops
        _script_ops.install()
        self.functions = {}
        self.in_progress = set()

    def function(self, fn, loc=None):
        fn = getattr(fn, "__torch_script_original__", fn)
        if fn in self.functions:
            return self.functions[fn]
        if fn in self.in_progress:
            raise script_error(loc, "Recursive calls are not supported in TorchScript: %s" % fn.__qualname__)
        self.in_progress.add(fn)
        try:
            fdef, ctx = get_jit_def(fn)
            resolver = python_resolver(fn)
            defaults = _py_defaults(fn)
            names, types, ret = signature_types(fdef, ctx, resolver, defaults)
            from ._script import IGNORE, UNUSED, get_modifier
            if get_modifier(fn) in (IGNORE, UNUSED):       # left to Python, called as it is
                cf = CompiledFunction(fn.__name__, fn.__qualname__, None, names, types, defaults,
                                      ret or T_tensor(), fn if get_modifier(fn) == IGNORE else _unused(fn))
                self.functions[fn] = cf
                return cf
            em = Emitter(ctx, resolver, self)
            graph = em.emit_def(fdef, types, ret)
            rt = ret or graph.outputs()[0].type()
            from ._module import class_type_name
            qn = class_type_name(fn)       # cthtorch's own functions read as torch's, as class types do
            cf = CompiledFunction(fn.__name__, qn, graph, names, types, defaults, rt, fn)
            self.functions[fn] = cf
            return cf
        finally:
            self.in_progress.discard(fn)

    def method(self, module_info, name, loc=None):
        return module_info.compile_method(self, name, loc)


class ScriptClass:
    """A Python class compiled by @torch.jit.script: its ClassType (attributes from the `self.x = ...` of
    __init__) and its methods, each a CompiledFunction taking the object first."""

    def __init__(self, py_class, class_type):
        self.py_class = py_class
        self.class_type = class_type
        self.methods = {}


SCRIPT_CLASSES = {}   # qualified name -> ScriptClass: what prim::CreateObject makes at run time


def compile_class(cls):
    """@torch.jit.script on a class: every method compiled (__init__ first, which declares the attributes)."""
    if "__torch_script_class__" in cls.__dict__:
        return cls.__torch_script_class__
    from ._module import class_type_name
    tree, ctx = _parse_source(cls)
    cdef = next(n for n in tree.body if isinstance(n, ast.ClassDef))
    glb = sys.modules[cls.__module__].__dict__ if cls.__module__ in sys.modules else {}

    def resolver(name):
        if name == cdef.name:
            return cls
        if name in glb:
            return glb[name]
        raise KeyError(name)
    qn = class_type_name(cls)
    sc = ScriptClass(cls, _ir().ClassType(qn))
    SCRIPT_CLASSES[qn] = sc
    _CLASS_METHODS[qn] = sc.methods
    cls.__torch_script_class__ = sc   # set before the bodies compile: methods may take or make the class
    defs = [item for item in cdef.body if isinstance(item, ast.FunctionDef)]
    if not any(d.name == "__init__" for d in defs):
        del cls.__torch_script_class__
        raise NotSupportedError(SourceRange(ctx, cdef), "a TorchScript class needs an __init__ method")
    try:
        for item in cdef.body:
            if isinstance(item, (ast.FunctionDef, ast.Pass)) or \
                    (isinstance(item, ast.Expr) and isinstance(item.value, ast.Constant)):
                continue
            raise NotSupportedError(SourceRange(ctx, item), "only methods are supported in the body of a "
                                    "TorchScript class")
        defs.sort(key=lambda d: d.name != "__init__")
        for item in defs:
            fn = cls.__dict__.get(item.name)
            names, types, ret = signature_types(item, ctx, resolver, _py_defaults(fn) if fn else {},
                                                skip_self=True)
            if item.name == "__init__":
                ret = T_none()
            sc.methods[item.name] = CompiledFunction(item.name, "%s.%s" % (qn, item.name), None, names, types,
                                                     _py_defaults(fn) if fn else {}, ret)
        comp = _default_compiler or Compiler()
        for item in defs:
            cf = sc.methods[item.name]
            em = Emitter(ctx, resolver, comp)
            em.defining_class = sc.class_type if item.name == "__init__" else None
            cf.graph = em.emit_def(item, cf.arg_types, cf.return_type, self_type=sc.class_type)
            if cf.return_type is None:
                cf.return_type = cf.graph.outputs()[0].type()
    except BaseException:
        del cls.__torch_script_class__
        SCRIPT_CLASSES.pop(qn, None)
        _CLASS_METHODS.pop(qn, None)
        raise
    return sc


def _is_ignored(fn):
    from ._script import IGNORE, get_modifier
    return fn is not None and get_modifier(fn) == IGNORE


def _is_user_class(obj):
    """A plain class of the user's code (not a module, exception, typing construct or library class)."""
    import cthtorch.nn
    if not isinstance(obj, type) or issubclass(obj, (cthtorch.nn.Module, BaseException, tuple)):
        return False
    mod = getattr(obj, "__module__", "") or ""
    return mod.partition(".")[0] not in ("builtins", "cthtorch", "torch", "typing", "collections", "enum",
                                         "numpy", "abc")


class ScriptClassSugar(Sugar):
    """A scripted class called in TorchScript: prim::CreateObject, then its __init__ (prim::CallMethod)."""

    def __init__(self, sc):
        self.sc = sc

    def describe(self):
        return "class " + self.sc.class_type.qualified_name()

    def call(self, em, args, kwargs, loc):
        init = self.sc.methods["__init__"]
        obj = em.node("prim::CreateObject", [], [self.sc.class_type], loc).output()
        vals = em.bind_args(init.arg_names, init.arg_types, init.defaults, args, kwargs, loc, "__init__")
        n = em.node("prim::CallMethod", [obj] + vals, [T_none()], loc)
        n.s_("name", "__init__")
        return obj


def _unused(fn):
    def stub(*args, **kwargs):
        raise RuntimeError("This function '%s' was marked @torch.jit.unused and cannot be called" % fn.__name__)
    return stub


_default_compiler = None


def compile_function(fn):
    global _default_compiler
    if _default_compiler is None:
        _default_compiler = Compiler()
    return _default_compiler.function(fn)


class SourceClass:
    """A class of TorchScript source (a module's class in an archive's code/):
    its type (attributes declared as `name : T`), parameter and buffer
    names, constants (`name : Final[T] = v`) and compiled methods."""

    def __init__(self, class_type):
        self.class_type = class_type
        self.parameters = []
        self.buffers = []
        self.constants = {}
        self.methods = {}


_CLASS_METHODS = {}      # qualified class name -> {method: CompiledFunction}, for prim::CallMethod
_CLASS_CONSTANTS = {}    # qualified class name -> {name: value}


def compile_source(src, resolver, filename="<string>", prefix="__torch__"):
    """Compiles TorchScript source text (what `.code` prints and what
    archives keep under code/): top-level `def`s and `class X(Module):`
    bodies, `ops.aten.*`/`torch.*` calls, `__torch__.` class types,
    `CONSTANTS.cN`, `annotate`, `uninitialized`, `unchecked_cast`.
    resolver(name) gives the Python object (or class type) for other names,
    KeyError when unknown; classes of this source are `prefix.Name`.
    Returns {function name: CompiledFunction, qualified class name: SourceClass}."""
    return compile_sources([(src, prefix, filename)], resolver)


def compile_sources(sources, resolver, errors=None):
    """compile_source for several files at once ([(src, prefix, filename)],
    e.g. an archive's code/__torch__.py and code/__torch__/torch/nn/...):
    every class is declared before any body compiles, so they may call
    each other's methods in any order. With a list for errors, a body that
    does not compile leaves its CompiledFunction's graph None and its
    (qualified name, error) in the list instead of raising."""
    comp = _default_compiler or Compiler()
    out = {}
    classes = {}
    functions = {}   # qualified name -> CompiledFunction, for `__torch__.a.b.f(...)` calls

    def resolve(name):
        if name in classes:
            return classes[name].class_type
        if name in out:
            raise KeyError(name)
        if name == "__torch__":
            return _QualifiedNamespace("__torch__", functions, classes)
        if name == "ops":
            return _ops_namespace()
        if name == "torch":            # torch.X in TorchScript source is the op aten::X
            return _ops_namespace().aten
        if name == "math":
            return math
        return resolver(name)

    def type_resolve(name):
        return _resolve_opt(resolve, name)
    parsed = []
    named_tuples = []
    for src, prefix, filename in sources:
        src = textwrap.dedent(src)
        tree = ast.parse(src, type_comments=True)
        ctx = SourceContext(src, filename)
        parsed.append((tree, ctx, prefix))
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                sc = SourceClass(_ir().ClassType("%s.%s" % (prefix, node.name)))
                classes[sc.class_type.qualified_name()] = sc
                out[sc.class_type.qualified_name()] = sc
                if [ast.unparse(b) for b in node.bases] == ["NamedTuple"]:
                    named_tuples.append((sc, node, ctx))
    for sc, node, ctx in named_tuples:     # before any signature names them
        sc.class_type = _source_named_tuple(sc.class_type.qualified_name(), node, ctx, type_resolve)
    # then every class's attributes and method signatures, so bodies may refer to any of them
    pending = []
    for tree, ctx, prefix in parsed:
        for node in tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            if isinstance(node, ast.ClassDef):
                sc = classes["%s.%s" % (prefix, node.name)]
                if not isinstance(sc.class_type, _ir().NamedTupleType):
                    pending += _declare_class(sc, node, ctx, type_resolve)
                continue
            if not isinstance(node, ast.FunctionDef):
                raise NotSupportedError(SourceRange(ctx, node), "only function and class definitions are "
                                        "supported in TorchScript source")
            names, types, ret = signature_types(node, ctx, type_resolve, {})
            cf = CompiledFunction(node.name, "%s.%s" % (prefix, node.name), None, names, types,
                                  _source_defaults(node), ret)
            out[node.name] = functions[cf.qualified_name] = cf
            pending.append((node, ctx, cf, None))
    for fdef, ctx, cf, self_type in pending:
        em = Emitter(ctx, resolve, comp)
        try:
            cf.graph = em.emit_def(fdef, cf.arg_types, cf.return_type, self_type=self_type)
        except (FrontendError, RuntimeError, KeyError, TypeError, ValueError, AttributeError,
                NotImplementedError) as e:
            if errors is None:
                raise
            errors.append((cf.qualified_name, e))
            continue
        if cf.return_type is None:
            cf.return_type = cf.graph.outputs()[0].type()
        sf = getattr(cf, "script_function", None)
        if sf is not None:   # called before its body compiled: the ScriptFunction gets the graph now
            sf.graph = cf.graph
    if errors:
        _drop_callers_of_failed(pending, errors)
    return out


def _drop_callers_of_failed(pending, errors):
    """A body that calls a source function which did not compile cannot run either: it is dropped too."""
    def calls_failed(block):
        for n in block.nodes():
            if n.kind() == "prim::CallFunction":
                fn = n.inputs()[0].node()
                f = fn._constant_value() if fn.kind() == "prim::Constant" else None
                if getattr(f, "graph", 0) is None:
                    return True
            if any(calls_failed(b) for b in n.blocks()):
                return True
        return False
    changed = True
    while changed:
        changed = False
        for _, _, cf, _ in pending:
            if cf.graph is not None and calls_failed(cf.graph.block()):
                errors.append((cf.qualified_name, RuntimeError("calls a function that did not compile")))
                cf.graph = None
                sf = getattr(cf, "script_function", None)
                if sf is not None:
                    sf.graph = None
                changed = True


def _source_named_tuple(qualified_name, node, ctx, type_resolve):
    """`class X(NamedTuple):` with `field : T` lines -> its NamedTupleType. Values are built as the class
    torch's name stands for where cthtorch has it (PackedSequence), else as a namedtuple of those fields."""
    names, types_ = [], []
    for item in node.body:
        if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            names.append(item.target.id)
            types_.append(type_from_annotation(item.annotation, ctx, type_resolve))
        elif not (isinstance(item, ast.Expr) and isinstance(item.value, ast.Constant)) and \
                not isinstance(item, ast.Pass):
            raise NotSupportedError(SourceRange(ctx, item), "a NamedTuple's body declares its fields only")
    from cthtorch.nn.utils.rnn import PackedSequence
    known = {named_tuple_type(PackedSequence).annotation_str: PackedSequence}
    cls = known.get(qualified_name)
    if cls is None or list(cls._fields) != names:
        cls = collections.namedtuple(node.name, names)
    return _ir().NamedTupleType(qualified_name, names, types_, py_class=cls)


def _declare_class(sc, node, ctx, type_resolve):
    """A class body's declarations onto sc; its methods to compile."""
    qn = sc.class_type.qualified_name()
    _CLASS_METHODS[qn] = sc.methods
    _CLASS_CONSTANTS[qn] = sc.constants
    pending = []
    for item in node.body:
        if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            t = type_from_annotation(item.annotation, ctx, type_resolve)
            if ast.unparse(item.annotation).startswith("Final") and item.value is not None:
                sc.constants[item.target.id] = ast.literal_eval(item.value)
            else:
                sc.class_type.addAttribute(item.target.id, t)
        elif isinstance(item, ast.Assign) and len(item.targets) == 1 and isinstance(item.targets[0], ast.Subscript) \
                and isinstance(item.targets[0].value, ast.Name) and item.targets[0].value.id == "__annotations__" \
                and isinstance(item.targets[0].slice, ast.Constant):
            # `__annotations__["0"] = T`: an attribute whose name is no identifier (a Sequential's children)
            sc.class_type.addAttribute(str(item.targets[0].slice.value),
                                       type_from_annotation(item.value, ctx, type_resolve))
        elif isinstance(item, ast.Assign) and len(item.targets) == 1 and isinstance(item.targets[0], ast.Name) \
                and item.targets[0].id in ("__parameters__", "__buffers__"):
            names = ast.literal_eval(item.value)
            (sc.parameters if item.targets[0].id == "__parameters__" else sc.buffers).extend(names)
        elif isinstance(item, ast.FunctionDef):
            names, types, ret = signature_types(item, ctx, type_resolve, {}, skip_self=True)
            cf = CompiledFunction(item.name, "%s.%s" % (qn, item.name), None, names, types,
                                  _source_defaults(item), ret)
            sc.methods[item.name] = cf
            pending.append((item, ctx, cf, sc.class_type))
        elif not (isinstance(item, ast.Expr) and isinstance(item.value, ast.Constant)) and \
                not isinstance(item, ast.Pass):
            raise NotSupportedError(SourceRange(ctx, item), "unexpected statement in a TorchScript class")
    return pending


def _source_defaults(fdef):
    params = fdef.args.posonlyargs + fdef.args.args
    return {a.arg: ast.literal_eval(d) for a, d in zip(params[len(params) - len(fdef.args.defaults):],
                                                         fdef.args.defaults)}


def _resolve_opt(resolve, name):
    try:
        return resolve(name)
    except KeyError:
        return None


def _ops_namespace():
    """`ops.aten.relu` in TorchScript source: the aten op by name."""
    import types
    ops = types.ModuleType("ops")
    for ns in ("aten", "prim"):
        sub = types.ModuleType("ops." + ns)
        sub.__getattr__ = lambda name, ns=ns: _op_name(ns, name)
        setattr(ops, ns, sub)
    return ops


def _op_name(ns, name):
    if name in ("__path__", "__file__", "__all__", "__wrapped__", "__loader__"):
        raise AttributeError(name)
    return _AtenName(name, ns)


class _AtenName:
    def __init__(self, name, ns="aten"):
        self.name = name
        self.ns = ns


class _PrimSugar(Sugar):
    """`ops.prim.X(...)` in TorchScript source: min/max/abs as the builtins,
    RaiseException as a raise."""

    def __init__(self, name):
        self.name = name

    def call(self, em, args, kwargs, loc):
        if self.name in ("min", "max", "abs"):
            return em.emit_python_builtin(self.name, args, kwargs, loc)
        if self.name == "RaiseException":
            em.node("prim::RaiseException", [em.as_value(a, loc) for a in args], [], loc)
            return em.const(None)
        out = _PRIM_OUT_TYPES.get(self.name)
        if out is not None and not kwargs:
            vals = [em.as_value(a, loc) for a in args]
            if self.name == "unchecked_unwrap_optional":
                t = vals[0].type()
                out = t.getElementType() if kind(t) == "OptionalType" else t
            else:
                out = out()
            return em.node("prim::" + self.name, vals, [out], loc).output()
        raise em.error(loc, "Unknown builtin op: prim::%s" % self.name)


# ops.prim.X of TorchScript source (what .code prints for tensor properties) -> its output type
_PRIM_OUT_TYPES = {"NumToTensor": T_tensor, "dtype": T_int, "device": T_device, "shape": lambda: T_list(T_int()),
                   "requires_grad": T_bool, "is_cuda": T_bool, "data": T_tensor, "is_nested": T_bool,
                   "is_sparse": T_bool, "is_meta": T_bool, "type": T_str,
                   "unchecked_unwrap_optional": True}


class _QualifiedNamespace(Sugar):
    """`__torch__.a.b` in TorchScript source: a path into the sources' functions and classes."""

    def __init__(self, name, functions, classes):
        self.name, self.functions, self.classes = name, functions, classes

    def describe(self):
        return self.name

    def attr(self, em, name, loc):
        full = "%s.%s" % (self.name, name)
        if full in self.functions:
            return _SourceFunctionSugar(self.functions[full])
        if full in self.classes and isinstance(self.classes[full].class_type, _ir().NamedTupleType):
            return NamedTupleSugar(self.classes[full].class_type)
        if full in self.classes:
            raise em.error(loc, "constructing TorchScript class %s from source is not supported yet" % full,
                           NotSupportedError)
        return _QualifiedNamespace(full, self.functions, self.classes)


class _SourceFunctionSugar(Sugar):
    """A function of TorchScript source, called as prim::CallFunction (its graph may compile later)."""

    def __init__(self, cf):
        self.cf = cf

    def describe(self):
        return "function " + self.cf.qualified_name

    def call(self, em, args, kwargs, loc):
        cf = self.cf
        if cf.return_type is None:
            raise em.error(loc, "%s needs a return annotation to be called from TorchScript source"
                           % cf.qualified_name)
        vals = em.bind_args(cf.arg_names, cf.arg_types, cf.defaults, args, kwargs, loc, cf.name)
        fconst = em.graph.create("prim::Constant", [], 1)
        fconst.s_("name", cf.name)
        from ._script import function_object
        fconst.ival_("value", function_object(cf))
        fconst.output().setType(_function_type(cf.qualified_name))
        fconst.insertBefore(em.block.returnNode())
        return em.node("prim::CallFunction", [fconst.output()] + vals, [cf.return_type], loc).output()
