"""Proxy: the stand-in a traced function computes with. Every operation on
a Proxy (a method, an operator, a torch function reached through
__torch_function__) appends a Node to the tracer's graph and returns a new
Proxy, so running the function once records what it does."""
import builtins
import dis
import inspect
import operator

import cthtorch

from .graph import _target_to_str
from .node import Node, map_aggregate

__all__ = ["TracerBase", "GraphAppendingTracer", "TraceError", "Proxy", "Attribute"]


class TraceError(ValueError):
    pass


class TracerBase:
    graph = None
    record_stack_traces = False
    check_mutable_operations = False
    trace_asserts = False
    proxy_buffer_attributes = False
    traced_func_name = "forward"

    def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
        return self.graph.create_node(kind, target, args, kwargs, name, type_expr)

    def proxy(self, node):
        return Proxy(node, self)

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None, proxy_factory_fn=None):
        """Records one operation: its arguments become graph values, and the new
        node comes back wrapped in a Proxy."""
        args_ = self.create_arg(args)
        kwargs_ = self.create_arg(kwargs)
        assert isinstance(args_, tuple)
        assert isinstance(kwargs_, dict)
        node = self.create_node(kind, target, args_, kwargs_, name, type_expr)
        return self.proxy(node) if proxy_factory_fn is None else proxy_factory_fn(node)

    def create_arg(self, a):
        """Turns a value the traced code passed into something a Node can hold:
        proxies become their nodes, containers are rebuilt, constants stay."""
        if isinstance(a, Proxy):
            return a.node
        if hasattr(a, "__fx_create_arg__"):
            return a.__fx_create_arg__(self)
        if isinstance(a, tuple) and hasattr(a, "_fields"):
            return type(a)(*[self.create_arg(e) for e in a])
        if isinstance(a, (tuple, list)):
            return type(a)(self.create_arg(e) for e in a)
        if isinstance(a, dict):
            r = {}
            for k, v in a.items():
                k = self.create_arg(k)
                if isinstance(k, Node):
                    raise RuntimeError("Keys for dictionaries used as an argument cannot contain a Node. "
                                       "Got key: %s" % (k,))
                r[k] = self.create_arg(v)
            return r
        if isinstance(a, slice):
            return slice(self.create_arg(a.start), self.create_arg(a.stop), self.create_arg(a.step))
        if isinstance(a, range):
            return range(self.create_arg(a.start), self.create_arg(a.stop), self.create_arg(a.step))
        if isinstance(a, Node) or a is None or a is Ellipsis or isinstance(a, _BASE_TYPES):
            return a
        import enum
        if isinstance(a, enum.Enum):
            return a
        raise NotImplementedError("argument of type: %s" % (type(a),))

    def to_bool(self, obj):
        raise TraceError("symbolically traced variables cannot be used as inputs to control flow")

    def iter(self, obj):
        raise TraceError("Proxy object cannot be iterated. This can be attempted when the Proxy is used in a loop "
                         "or as a *args or **kwargs function argument. See the torch.fx docs on pytorch.org for a "
                         "more detailed explanation of what types of control flow can be traced, and check out the "
                         "Proxy docstring for help troubleshooting Proxy iteration errors")

    def keys(self, obj):
        return Attribute(obj, "keys")()


_BASE_TYPES = (str, int, float, bool, complex, cthtorch.dtype, cthtorch.Tensor, cthtorch.device,
               cthtorch.memory_format, cthtorch.layout)


class GraphAppendingTracer(TracerBase):
    """A tracer that only appends to an existing graph (for Proxy(node))."""

    def __init__(self, graph):
        super().__init__()
        self.graph = graph
        self.scope = None
        self.module_stack = {}
        self.node_name_to_scope = {}


def _is_tensor_method(fn):
    name = getattr(fn, "__name__", None)
    return name is not None and getattr(cthtorch.Tensor, name, None) is fn


class Proxy:
    """A value of the function being traced. It records, it doesn't compute:
    `bool(proxy)` (an `if` on a traced value) raises TraceError."""

    def __init__(self, node, tracer=None):
        if tracer is None:
            tracer = GraphAppendingTracer(node.graph)
        self.tracer = tracer
        self.node = node

    def __repr__(self):
        return "Proxy(%s)" % (self.node.name,)

    def __getattr__(self, k):
        # only reached for names Proxy itself lacks: a tensor attribute/method
        if k.startswith("__") and k.endswith("__"):
            raise AttributeError(k)
        return Attribute(self, k)

    def __getstate__(self):
        return self.__dict__

    def __setstate__(self, d):
        self.__dict__ = d

    def __deepcopy__(self, memo):
        raise RuntimeError("cthtorch.fx: a Proxy cannot be deep-copied while tracing")

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", "__call__", (self,) + args, kwargs)

    def __iter__(self):
        # `a, b = proxy` unpacks a known number of values: allowed
        frame = inspect.currentframe().f_back
        try:
            for inst in dis.get_instructions(frame.f_code):
                if inst.offset == frame.f_lasti:
                    if inst.opname == "UNPACK_SEQUENCE":
                        return (self[i] for i in range(inst.argval))
                    break
        finally:
            del frame
        return self.tracer.iter(self)

    def __bool__(self):
        return self.tracer.to_bool(self)

    def keys(self):
        return self.tracer.keys(self)

    def __len__(self):
        raise RuntimeError("'len' is not supported in symbolic tracing by default. If you want this call to be "
                           "recorded, please call torch.fx.wrap('len') at module scope")

    __hash__ = object.__hash__

    @classmethod
    def __torch_function__(cls, orig_method, types, args=None, kwargs=None):
        args = args if args else ()
        kwargs = kwargs if kwargs else {}
        tracers = {}

        def find_tracer(a):
            if isinstance(a, cls):
                tracers[a.tracer] = None
            return a
        map_aggregate(args, find_tracer)
        map_aggregate(kwargs, find_tracer)
        if len(tracers) > 1:
            raise RuntimeError("Found multiple different tracers %s while trying to trace operations %s"
                               % (list(tracers.keys()), orig_method))
        tracer = next(iter(tracers))
        if _is_tensor_method(orig_method):
            return tracer.create_proxy("call_method", orig_method.__name__, args, kwargs)
        return tracer.create_proxy("call_function", orig_method, args, kwargs,
                                   name=_target_to_str(orig_method))


class Attribute(Proxy):
    """`proxy.attr`: becomes a call_method when called, else a getattr node
    (made only when something uses it)."""

    def __init__(self, root, attr):
        self.root = root
        self.attr = attr
        self.tracer = root.tracer
        self._node = None

    @property
    def node(self):
        if self._node is None:
            self._node = self.tracer.create_proxy("call_function", builtins.getattr, (self.root, self.attr), {}).node
        return self._node

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", self.attr, (self.root,) + args, kwargs)


# `tensor <op> proxy`: torch sees the tensor's method through __torch_function__
# and records it as a call_method of this name
_TENSOR_LHS_METHODS = {"add": "add", "sub": "sub", "mul": "mul", "truediv": "div", "floordiv": "__floordiv__",
                       "mod": "remainder", "pow": "pow", "matmul": "matmul", "and_": "__and__", "or_": "__or__",
                       "xor": "__xor__", "lshift": "__lshift__", "rshift": "__rshift__"}


def _binary(fn):
    def impl(self, rhs):
        return self.tracer.create_proxy("call_function", fn, (self, rhs), {})

    method = _TENSOR_LHS_METHODS.get(fn.__name__)

    def rimpl(self, lhs):
        if method is not None and isinstance(lhs, cthtorch.Tensor):
            return self.tracer.create_proxy("call_method", method, (lhs, self), {})
        return self.tracer.create_proxy("call_function", fn, (lhs, self), {})
    return impl, rimpl


def _unary(fn):
    def impl(self):
        return self.tracer.create_proxy("call_function", fn, (self,), {})
    return impl


for _name in ("add", "sub", "mul", "floordiv", "truediv", "mod", "pow", "lshift", "rshift", "and_", "or_",
              "xor", "matmul"):
    _dunder = _name.rstrip("_")
    _impl, _rimpl = _binary(getattr(operator, _name))
    setattr(Proxy, "__%s__" % _dunder, _impl)
    setattr(Proxy, "__r%s__" % _dunder, _rimpl)
for _name in ("eq", "ne", "lt", "gt", "le", "ge", "getitem"):
    setattr(Proxy, "__%s__" % _name, _binary(getattr(operator, _name))[0])
for _name in ("neg", "pos", "invert"):
    setattr(Proxy, "__%s__" % _name, _unary(getattr(operator, _name)))
Proxy.__abs__ = _unary(operator.abs)
