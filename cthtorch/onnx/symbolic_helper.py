"""What symbolic functions use (torch.onnx.symbolic_helper's role): the
GraphContext `g` whose g.op(...) adds ONNX nodes, and readers of the values a
symbolic receives (constants, dtypes, ranks).

A symbolic gets the ONNX graph's values for the aten node's inputs. Non-tensor
arguments arrive as prim::Constant / prim::ListConstruct values, which the
helpers below read; any that an ONNX node ends up consuming become
onnx::Constant tensors after conversion."""
import cthtorch
from cthtorch.jit import _ir

from .errors import SymbolicValueError

__all__ = ["GraphContext", "is_none", "is_constant", "get_const", "dtype_of", "rank_of", "sizes_of",
           "onnx_dtype", "scalar_like"]

# traced scalarType -> (ONNX TensorProto.DataType, cthtorch dtype)
_DTYPES = {"Float": (1, "float32"), "Double": (11, "float64"), "Half": (10, "float16"), "BFloat16": (16, "bfloat16"),
           "Long": (7, "int64"), "Int": (6, "int32"), "Short": (5, "int16"), "Char": (3, "int8"),
           "Byte": (2, "uint8"), "Bool": (9, "bool")}
_SCALAR_OF_DTYPE = {v[1]: k for k, v in _DTYPES.items()}

_NOT_CONST = object()


def _attr_kind(key, v):
    """torch's g.op attribute naming: name_i / _f / _s / _t / _is / _fs / _ss,
    or the kind inferred from the Python value."""
    if "_" in key:
        name, suffix = key.rsplit("_", 1)
        if suffix in ("i", "f", "s", "t", "is", "fs", "ss", "g"):
            return name, suffix
    if isinstance(v, bool) or isinstance(v, int):
        return key, "i"
    if isinstance(v, float):
        return key, "f"
    if isinstance(v, (str, bytes)):
        return key, "s"
    if isinstance(v, cthtorch.Tensor):
        return key, "t"
    if isinstance(v, (list, tuple)):
        if all(isinstance(x, int) for x in v):
            return key, "is"
        if all(isinstance(x, (int, float)) for x in v):
            return key, "fs"
        return key, "ss"
    raise ValueError("ONNX attribute %r: cannot tell the kind of a %s" % (key, type(v).__name__))


class GraphContext:
    """`g` of a symbolic function: g.op adds a node to the ONNX graph being
    built, scoped like the aten node it replaces."""

    def __init__(self, graph, opset, original_node):
        self.graph = graph
        self.opset = opset
        self.original_node = original_node

    def op(self, opname, *raw_args, outputs=1, **kwargs):
        """Adds `opname` ("Relu", or "domain::Op" for other domains) with the
        given inputs (values, or Python numbers/lists made into constants)
        and attributes; returns its output (a tuple when outputs > 1)."""
        kind = opname if "::" in opname else "onnx::" + opname
        if kind == "onnx::Constant":
            return self.constant(kwargs.get("value_t"), **{k: v for k, v in kwargs.items() if k != "value_t"})
        ins = [self._as_value(a) for a in raw_args]
        n = self.graph.create(kind, ins, outputs)
        for key, v in kwargs.items():
            if v is None:
                continue
            name, k = _attr_kind(key, v)
            if k in ("i", "f", "s") and isinstance(v, (list, tuple)):
                k += "s"   # torch's kernel_shape_i=[3, 3]: a list is the plural kind
            if k == "t" and not isinstance(v, cthtorch.Tensor):
                v = cthtorch.tensor(v)
            n._set(name, k, v)
        self._place(n)
        return n.output() if outputs == 1 else tuple(n.outputs())

    def constant(self, value, dtype=None):
        """onnx::Constant holding value (a tensor, or a Python number/list,
        made a tensor of dtype: by default int64 for ints, float32 for floats)."""
        if not isinstance(value, cthtorch.Tensor):
            if dtype is None:
                flat = value
                while isinstance(flat, (list, tuple)) and flat:
                    flat = flat[0]
                dtype = (cthtorch.bool if isinstance(flat, bool) else
                         cthtorch.int64 if isinstance(flat, int) else cthtorch.float32)
            value = cthtorch.tensor(value, dtype=dtype)
        n = self.graph.create("onnx::Constant", [], 1)
        n.t_("value", value.detach())
        n.output().setType(_ir.TensorType.create_from_tensor(value.detach()))
        self._place(n)
        return n.output()

    def _place(self, n):
        if self.original_node is not None:
            n._scope = self.original_node._scope
            n._source = self.original_node._source
        self.graph.insertNode(n)

    def _as_value(self, a):
        if isinstance(a, _ir.Value) or a is None:
            return a
        return self.constant(a)


def is_none(v):
    return v is None or (v.node().kind() == "prim::Constant" and isinstance(v.type(), _ir.NoneType))


def _const(v):
    n = v.node()
    k = n.kind()
    if k == "prim::Constant":
        return n._constant_value()
    if k == "onnx::Constant":
        return n.t("value")
    if k == "prim::ListConstruct":
        vals = [_const(i) for i in n.inputs()]
        return _NOT_CONST if any(x is _NOT_CONST for x in vals) else vals
    return _NOT_CONST


def is_constant(v):
    return _const(v) is not _NOT_CONST


def get_const(v, desc="argument"):
    """The Python value of a constant argument (0-d tensors as numbers);
    SymbolicValueError where it is computed by the graph."""
    c = _const(v)
    if c is _NOT_CONST:
        raise SymbolicValueError("Failed to export a node: %s must be a constant" % desc, v)
    if isinstance(c, cthtorch.Tensor) and c.dim() == 0:
        return c.item()
    if isinstance(c, cthtorch.Tensor):
        return c.tolist()
    return c


def dtype_of(v):
    """The traced scalar type of a value ("Float", "Long", ...) or None."""
    t = v.type()
    if isinstance(t, _ir.TensorType):
        return t.scalarType()
    if isinstance(t, _ir.IntType):
        return "Long"
    if isinstance(t, _ir.FloatType):
        return "Float"
    if isinstance(t, _ir.BoolType):
        return "Bool"
    return None


def sizes_of(v):
    t = v.type()
    if isinstance(t, _ir.TensorType):
        return t.sizes()
    if isinstance(t, (_ir.IntType, _ir.FloatType, _ir.BoolType)):
        return []
    return None


def rank_of(v):
    s = sizes_of(v)
    return None if s is None else len(s)


def onnx_dtype(scalar_type):
    return _DTYPES[scalar_type][0]


def torch_dtype(scalar_type):
    return getattr(cthtorch, _DTYPES[scalar_type][1])


def scalar_like(g, v, ref):
    """v as a tensor of ref's dtype: a Python-number constant becomes a 0-d
    constant of that dtype (torch's scalar rule), a graph value is cast."""
    st = dtype_of(ref) or "Float"
    c = _const(v)
    if c is not _NOT_CONST and not isinstance(c, cthtorch.Tensor):
        return g.constant(c, dtype=torch_dtype(st))
    if c is not _NOT_CONST and isinstance(c, cthtorch.Tensor) and c.dim() == 0:
        return g.constant(c.to(torch_dtype(st)))
    vs = dtype_of(v)
    if vs is not None and vs != st and (rank_of(v) == 0 or rank_of(ref) != 0):
        if rank_of(v) == 0:   # a 0-d operand takes the tensor's dtype, as in torch's promotion
            return g.op("Cast", v, to_i=onnx_dtype(st))
    return v
