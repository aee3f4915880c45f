"""Runs a Graph in Python: each node becomes a step over a value table.

aten ops are called through the dispatch point (the generated binding or the
registered composite of that aten name), so autograd records them exactly as
it does in eager mode, and a profiler or tracer sees them. prim:: nodes
(control flow, lists, tuples, attributes, method calls) and the scalar
arithmetic of size computations run here. The C interpreter (when built)
runs a lowered form of the same graphs; this one is the reference and the
fallback.
"""
import math
import operator

import cthtorch
from cthtorch import _C

from . import _ir

__all__ = ["GraphExecutor", "run_graph", "op_callable", "call_op"]


# ---------------------------------------------------------------- value conversions

_ID_TO_DTYPE = None


def dtype_from_id(i):
    global _ID_TO_DTYPE
    if _ID_TO_DTYPE is None:
        _ID_TO_DTYPE = {v: getattr(cthtorch, k) for k, v in _ir.SCALAR_TYPE_IDS.items()
                        if hasattr(cthtorch, k)}
    return _ID_TO_DTYPE[i]


_MEMORY_FORMAT_NAMES = ["contiguous_format", "preserve_format", "channels_last", "channels_last_3d"]


def _convert_arg(v, type_str):
    """A graph value (dtypes, layouts and memory formats are ints there) as
    the Python op expects it."""
    if v is None or not type_str or isinstance(v, cthtorch.Tensor):
        return v
    base = type_str.rstrip("?")
    if base == "ScalarType" and isinstance(v, int):
        return dtype_from_id(v)
    if base == "Layout" and isinstance(v, int):
        return cthtorch.strided
    if base == "MemoryFormat" and isinstance(v, int):
        return getattr(cthtorch, _MEMORY_FORMAT_NAMES[v])
    if base == "Device" and isinstance(v, str):
        return cthtorch.device(v)
    return v


# ---------------------------------------------------------------- op lookup

_callables = {}


def op_callable(kind):
    """The callable that serves `ns::name`: a generated binding, an in-place
    Tensor method, or a registered composite."""
    f = _callables.get(kind)
    if f is not None:
        return f
    ns, _, name = kind.partition("::")
    f = None
    if ns == "aten":
        if name.endswith("_") and not name.startswith("_"):
            f = getattr(cthtorch.Tensor, name, None)
        if f is None:
            from cthtorch._ops import registered
            for (namespace, rname), obj in registered().items():
                if isinstance(obj, _C._Op) and obj._op_name == kind and namespace in ("torch", "_nn"):
                    f = obj
                    break
        if f is None:
            from cthtorch._ops.overloads import _aten_callable
            f = _aten_callable(name)
    if f is None:
        raise RuntimeError("Unknown builtin op: %s." % kind)
    _callables[kind] = f
    return f


def call_op(kind, schema, args):
    """Calls op `kind` with graph-ordered arguments, kwarg-only ones by name."""
    fn = op_callable(kind)
    if schema is None:
        return fn(*args)
    # required arguments by position, the rest by name (torch's Python
    # signatures take `alpha` of add.Scalar only by keyword)
    pos, kw = [], {}
    for a, v in zip(schema.arguments, args):
        v = _convert_arg(v, a._type_str)
        if a.kwarg_only or a.has_default or kw:
            kw[a.name] = v
        else:
            pos.append(v)
    return fn(*pos, **kw)


# ---------------------------------------------------------------- scalar ops

def _div(a, b):
    return a / b


_SCALAR_BINARY = {
    "aten::add": operator.add, "aten::sub": operator.sub, "aten::mul": operator.mul, "aten::div": _div,
    "aten::floordiv": operator.floordiv, "aten::remainder": operator.mod, "aten::pow": operator.pow,
    "aten::lt": operator.lt, "aten::le": operator.le, "aten::gt": operator.gt, "aten::ge": operator.ge,
    "aten::eq": operator.eq, "aten::ne": operator.ne, "aten::__and__": operator.and_,
    "aten::__or__": operator.or_, "aten::__xor__": operator.xor, "aten::__lshift__": operator.lshift,
    "aten::__rshift__": operator.rshift, "prim::min": min, "prim::max": max, "aten::fmod": math.fmod,
}
_SCALAR_UNARY = {"aten::neg": operator.neg, "aten::__not__": operator.not_, "aten::abs": abs,
                 "aten::floor": math.floor, "aten::ceil": math.ceil, "aten::sqrt": math.sqrt,
                 "aten::exp": math.exp, "aten::log": math.log}


def _is_scalar(v):
    return isinstance(v, (int, float, bool)) and not isinstance(v, cthtorch.Tensor)


def _raise(msg="Exception", cls=None):
    exc = RuntimeError
    if cls:
        import builtins
        exc = getattr(builtins, cls.rpartition(".")[2], RuntimeError)
    raise exc(msg)


def _getitem(c, i):
    return c[i]


def _list_append(lst, v):
    lst.append(v)
    return lst


def _size(t, dim=None):
    return list(t.size()) if dim is None else t.size(dim)


_PRIM_PURE = {   # prim/aten ops on non-tensor values, by kind
    "prim::ListConstruct": lambda *a: list(a),
    "prim::TupleConstruct": lambda *a: tuple(a),
    "prim::DictConstruct": lambda *a: dict(zip(a[::2], a[1::2])),
    "prim::TupleIndex": _getitem,
    "aten::__getitem__": _getitem,
    "prim::NumToTensor": lambda x: cthtorch.tensor(x),
    "prim::ImplicitTensorToNum": lambda t: t.item(),
    "aten::ScalarImplicit": lambda t: t.item(),
    "aten::Int": lambda x: int(x),
    "aten::Float": lambda x: float(x),
    "aten::Bool": lambda x: bool(x),
    "aten::str": str,
    "aten::len": len,
    "aten::dim": lambda t: t.dim(),
    "aten::numel": lambda t: t.numel(),
    "aten::append": _list_append,
    "aten::format": lambda fmt, *a: fmt.format(*a),
    "aten::__is__": lambda a, b: a is b,
    "aten::__isnot__": lambda a, b: a is not b,
    "prim::Uninitialized": lambda: None,
    "prim::unchecked_cast": lambda x: x,
    "prim::RaiseException": _raise,
    "prim::device": lambda t: t.device,
    "prim::dtype": lambda t: _ir.SCALAR_TYPE_IDS[str(t.dtype).rpartition(".")[2]],
    "prim::shape": lambda t: list(t.shape),
    "prim::requires_grad": lambda t: t.requires_grad,
    "prim::is_cuda": lambda t: t.is_cuda,
    "aten::size": _size,
    "prim::data": lambda t: t.detach(),
    "aten::warn": lambda msg, *a: __import__("warnings").warn(msg),
}


# ---------------------------------------------------------------- compilation

class _Program:
    """A block compiled to a list of steps; values live in a dict keyed by
    the Value objects (the graph is not touched while running)."""
    __slots__ = ("steps", "outputs", "inputs")

    def __init__(self, block):
        self.inputs = block.inputs()
        self.steps = [_compile_node(n) for n in block.nodes()]
        self.outputs = block.outputs()

    def run(self, env):
        for s in self.steps:
            s(env)
        return [env[v] for v in self.outputs]


def _bind_outputs(outs, node_kind):
    if len(outs) == 1:
        o = outs[0]
        return lambda env, r: env.__setitem__(o, r)
    if not outs:
        return lambda env, r: None

    def bind(env, r):
        if len(r) != len(outs):
            raise RuntimeError("%s: expected %d values, got %d" % (node_kind, len(outs), len(r)))
        for o, x in zip(outs, r):
            env[o] = x
    return bind


def _compile_node(n):
    k = n.kind()
    ins = n.inputs()
    outs = n.outputs()
    bind = _bind_outputs(outs, k)

    if k == "prim::Constant":
        val = n._constant_value()
        o = outs[0]
        return lambda env: env.__setitem__(o, val)

    if k == "prim::GetAttr":
        name = n.s("name")
        obj, o = ins[0], outs[0]
        return lambda env: env.__setitem__(o, getattr(env[obj], name))

    if k == "prim::SetAttr":
        name = n.s("name")
        obj, val = ins

        def setattr_step(env):
            setattr(env[obj], name, env[val])
        return setattr_step

    if k == "prim::CallMethod":
        name = n.s("name")

        def call_method(env):
            args = [env[v] for v in ins]
            bind(env, getattr(args[0], name)(*args[1:]))
        return call_method

    if k == "prim::CallFunction":
        def call_function(env):
            args = [env[v] for v in ins]
            bind(env, args[0](*args[1:]))
        return call_function

    if k in ("prim::TupleUnpack", "prim::ListUnpack"):
        src = ins[0]
        return lambda env: bind(env, env[src] if len(outs) != 1 else env[src][0])

    if k == "prim::If":
        cond = ins[0]
        then_p, else_p = _Program(n.blocks()[0]), _Program(n.blocks()[1])

        def if_step(env):
            r = (then_p if env[cond] else else_p).run(env)
            for o, x in zip(outs, r):
                env[o] = x
        return if_step

    if k == "prim::Loop":
        body = _Program(n.blocks()[0])
        trip_v, cond_v, carried = ins[0], ins[1], ins[2:]
        b_ins = body.inputs

        def loop_step(env):
            trip = env[trip_v]
            cond = env[cond_v]
            vals = [env[v] for v in carried]
            i = 0
            while cond and i < trip:
                env[b_ins[0]] = i
                for bi, x in zip(b_ins[1:], vals):
                    env[bi] = x
                r = body.run(env)
                cond, vals = r[0], r[1:]
                i += 1
            for o, x in zip(outs, vals):
                env[o] = x
        return loop_step

    if k in _SCALAR_BINARY or k in _SCALAR_UNARY:
        scalar = _SCALAR_BINARY.get(k) or _SCALAR_UNARY[k]
        schema = n.maybeSchema()
        o = outs[0] if outs else None

        def arith(env):
            args = [env[v] for v in ins]
            if all(_is_scalar(a) for a in args):
                env[o] = scalar(*args)
            else:
                bind(env, call_op(k, schema or n.maybeSchema(), args))
        return arith

    if k in _PRIM_PURE:
        fn = _PRIM_PURE[k]

        def pure(env):
            bind(env, fn(*[env[v] for v in ins]))
        return pure

    if k.startswith("prim::") and k not in ("prim::NumToTensor",):
        raise RuntimeError("The JIT interpreter does not run %s nodes yet" % k)

    schema = n.maybeSchema()

    def op_step(env):
        bind(env, call_op(k, schema, [env[v] for v in ins]))
    return op_step


class GraphExecutor:
    """A graph compiled once, run many times."""

    def __init__(self, graph):
        self.graph = graph
        self._prog = _Program(graph.block())

    def __call__(self, *args):
        env = dict(zip(self._prog.inputs, args))
        if len(args) != len(self._prog.inputs):
            raise RuntimeError("expected %d inputs, got %d" % (len(self._prog.inputs), len(args)))
        out = self._prog.run(env)
        return out[0] if len(out) == 1 else tuple(out)


def run_graph(graph, *args):
    return GraphExecutor(graph)(*args)
