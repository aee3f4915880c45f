"""The TorchScript IR: Graph, Block, Node, Value and the JIT types.

The same classes and method names as torch._C's Python API (so code and tests
written against PyTorch carry over), in plain Python: a graph is a tree of
blocks, a block a doubly linked list of nodes closed by its return node (the
list's sentinel, as in torch/csrc/jit/ir/ir.h), a node has a kind
("aten::add", "prim::If"), input and output values, attributes and nested
blocks. `str(graph)` prints PyTorch's text format. The C interpreter runs a
lowered copy of a graph (jit/_lower.py), never these objects.
"""
import contextlib
import itertools
import math

__all__ = ["Graph", "Block", "Node", "Value", "Use", "JitType", "TensorType", "IntType", "FloatType",
           "BoolType", "StringType", "NoneType", "DeviceObjType", "NumberType", "ListType", "TupleType", "NamedTupleType",
           "OptionalType", "DictType", "ClassType", "AnyType", "ComplexType", "GeneratorType",
           "InterfaceType", "FunctionType", "type_of_value"]


# ---------------------------------------------------------------- types

class JitType:
    """A TorchScript type. `str()` is the annotation form (List[int]),
    `repr_str()` the graph-printing form (int[])."""
    _name = "?"

    def __str__(self):
        return self.annotation_str

    def __repr__(self):
        return self.annotation_str

    @property
    def annotation_str(self):
        return self._name

    def repr_str(self):
        return self.annotation_str

    def str(self):
        return self.annotation_str

    def kind(self):
        return type(self).__name__

    def __eq__(self, other):
        return isinstance(other, JitType) and type(self) is type(other) and self._key() == other._key()

    def __hash__(self):
        return hash((type(self).__name__, self._key()))

    def _key(self):
        return ()

    def containedTypes(self):
        return []

    def isSubtypeOf(self, other):
        return is_subtype(self, other)

    def is_subtype_of(self, other):
        return is_subtype(self, other)

    def requires_grad(self):
        return False


class _Singleton(JitType):
    _instance = None

    @classmethod
    def get(cls):
        inst = cls.__dict__.get("_instance")
        if inst is None:
            inst = object.__new__(cls)
            cls._instance = inst
        return inst

    def __new__(cls):
        return cls.get()


def _singleton_type(name, text, repr_text=None):
    body = {"_name": text, "__module__": __name__, "__qualname__": name}
    if repr_text:
        body["repr_str"] = lambda self: repr_text
    return type(name, (_Singleton,), body)


IntType = _singleton_type("IntType", "int")
FloatType = _singleton_type("FloatType", "float")
ComplexType = _singleton_type("ComplexType", "complex")
BoolType = _singleton_type("BoolType", "bool")
StringType = _singleton_type("StringType", "str")
NoneType = _singleton_type("NoneType", "NoneType")
DeviceObjType = _singleton_type("DeviceObjType", "Device")
GeneratorType = _singleton_type("GeneratorType", "Generator")
NumberType = _singleton_type("NumberType", "number", "Scalar")   # int, float or complex
AnyType = _singleton_type("AnyType", "Any")


# torch.dtype / layout / memory_format travel as ints in TorchScript
_SCALAR_NAMES = {  # cthtorch/torch dtype name -> TorchScript scalar type name
    "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int", "int64": "Long",
    "float16": "Half", "float32": "Float", "float64": "Double", "complex64": "ComplexFloat",
    "complex128": "ComplexDouble", "bool": "Bool", "bfloat16": "BFloat16",
}
# c10::ScalarType numbering (what a dtype constant's int is)
SCALAR_TYPE_IDS = {"uint8": 0, "int8": 1, "int16": 2, "int32": 3, "int64": 4, "float16": 5, "float32": 6,
                   "float64": 7, "complex64": 9, "complex128": 10, "bool": 11, "bfloat16": 15}


def _dtype_name(dtype):
    return str(dtype).rpartition(".")[2]


class TensorType(JitType):
    """A tensor, with what is known about it: dtype, sizes, strides,
    requires_grad, device (None where unknown). `TensorType.get()` knows
    nothing and prints `Tensor`."""

    def __init__(self, dtype=None, sizes=None, strides=None, requires_grad=None, device=None):
        self._dtype = dtype
        self._sizes = None if sizes is None else tuple(sizes)
        self._strides = None if strides is None else tuple(strides)
        self._requires_grad = requires_grad
        self._device = device

    _plain = None

    @classmethod
    def get(cls):
        if cls._plain is None:
            cls._plain = cls()
        return cls._plain

    @classmethod
    def create_from_tensor(cls, t):
        return cls(t.dtype, tuple(t.shape), tuple(t.stride()), bool(t.requires_grad), t.device)

    @classmethod
    def create_contiguous(cls, dtype, device, sizes):
        strides, acc = [], 1
        for s in reversed(list(sizes)):
            strides.append(acc)
            acc *= s
        return cls(dtype, sizes, tuple(reversed(strides)), None, device)

    def _key(self):
        return (str(self._dtype), self._sizes, self._strides, self._requires_grad, str(self._device))

    def scalarType(self):
        return None if self._dtype is None else _SCALAR_NAMES.get(_dtype_name(self._dtype))

    def dtype(self):
        return self._dtype

    def sizes(self):
        return None if self._sizes is None else list(self._sizes)

    def varyingSizes(self):
        return self.sizes()

    def strides(self):
        return None if self._strides is None else list(self._strides)

    def dim(self):
        return None if self._sizes is None else len(self._sizes)

    def requires_grad(self):
        return True if self._requires_grad is None else self._requires_grad

    def requiresGrad(self):
        return self._requires_grad

    def device(self):
        return self._device

    def isComplete(self):
        return self._dtype is not None and self._sizes is not None and self._strides is not None \
            and self._device is not None

    def with_dtype(self, dtype):
        return TensorType(dtype, self._sizes, self._strides, self._requires_grad, self._device)

    def with_sizes(self, sizes):
        return TensorType(self._dtype, sizes, None, self._requires_grad, self._device)

    def with_requires_grad(self, rg):
        return TensorType(self._dtype, self._sizes, self._strides, rg, self._device)

    def undefined(self):
        return None

    @property
    def annotation_str(self):
        return "Tensor"

    def repr_str(self):
        return self._repr()

    def __str__(self):
        return self._repr()

    __repr__ = __str__

    def _repr(self):
        # torch's TensorType::repr: Float(3, 4, strides=[4, 1], requires_grad=0, device=cpu)
        name = self.scalarType()
        if name is None:
            return "Tensor"
        parts = []
        if self._sizes is not None:
            parts += [str(s) if s is not None else "*" for s in self._sizes]
            if self._strides is not None and self._sizes:
                parts.append("strides=[%s]" % ", ".join(str(s) for s in self._strides))
        if self._requires_grad is not None:
            parts.append("requires_grad=%d" % int(self._requires_grad))
        if self._device is not None:
            parts.append("device=%s" % self._device)
        return "%s(%s)" % (name, ", ".join(parts))


class _OneElementType(JitType):
    def __init__(self, elem):
        self._elem = elem

    def getElementType(self):
        return self._elem

    def containedTypes(self):
        return [self._elem]

    def _key(self):
        return (self._elem,)


class ListType(_OneElementType):
    @property
    def annotation_str(self):
        return "List[%s]" % self._elem.annotation_str

    def repr_str(self):
        return "%s[]" % self._elem.repr_str()

    @staticmethod
    def ofInts():
        return ListType(IntType.get())

    @staticmethod
    def ofFloats():
        return ListType(FloatType.get())

    @staticmethod
    def ofBools():
        return ListType(BoolType.get())

    @staticmethod
    def ofTensors():
        return ListType(TensorType.get())

    @staticmethod
    def ofStrings():
        return ListType(StringType.get())


class OptionalType(_OneElementType):
    @property
    def annotation_str(self):
        return "Optional[%s]" % self._elem.annotation_str

    def repr_str(self):
        return "%s?" % self._elem.repr_str()

    @staticmethod
    def ofTensor():
        return OptionalType(TensorType.get())


class TupleType(JitType):
    def __init__(self, elems, names=None):
        self._elems = list(elems)
        self._names = names

    def elements(self):
        return list(self._elems)

    def containedTypes(self):
        return list(self._elems)

    def _key(self):
        return tuple(self._elems)

    @property
    def annotation_str(self):
        return "Tuple[%s]" % ", ".join(e.annotation_str for e in self._elems) if self._elems else "Tuple[()]"

    def repr_str(self):
        return "(%s)" % ", ".join(e.repr_str() for e in self._elems)


class NamedTupleType(TupleType):
    """A NamedTuple (PackedSequence): a tuple whose fields have names; `annotation_str` is its class
    (`__torch__.torch.nn.utils.rnn.PackedSequence`), graphs print `NamedTuple(data : Tensor, ...)`.
    py_class builds the Python value when a graph constructs one."""

    def __init__(self, qualified_name, names, elems, py_class=None):
        super().__init__(elems, names=list(names))
        self._qualified_name = qualified_name
        self.py_class = py_class

    def kind(self):
        return "TupleType"      # unpacked, indexed and matched as any tuple

    def names(self):
        return list(self._names)

    def qualified_name(self):
        return self._qualified_name

    def _key(self):
        return (self._qualified_name, tuple(self._names), tuple(self._elems))

    @property
    def annotation_str(self):
        return self._qualified_name

    def repr_str(self):
        return "NamedTuple(%s)" % ", ".join("%s : %s" % (n, e.repr_str()) for n, e in zip(self._names, self._elems))


class DictType(JitType):
    def __init__(self, key, value):
        self._k, self._v = key, value

    def getKeyType(self):
        return self._k

    def getValueType(self):
        return self._v

    def containedTypes(self):
        return [self._k, self._v]

    def _key(self):
        return (self._k, self._v)

    @property
    def annotation_str(self):
        return "Dict[%s, %s]" % (self._k.annotation_str, self._v.annotation_str)

    def repr_str(self):
        return "Dict(%s, %s)" % (self._k.repr_str(), self._v.repr_str())


class ClassType(JitType):
    """A module or TorchScript class, by qualified name (`__torch__.M`)."""

    def __init__(self, qualified_name, methods=None):
        self._qualname = qualified_name
        self._methods = dict(methods or {})
        self._attributes = {}

    def name(self):
        return self._qualname.rpartition(".")[2]

    def qualified_name(self):
        return self._qualname

    def _key(self):
        return (self._qualname,)

    @property
    def annotation_str(self):
        return self._qualname

    def addAttribute(self, name, typ):
        self._attributes[name] = typ

    def getAttribute(self, name):
        return self._attributes.get(name)

    def attributes(self):
        return dict(self._attributes)

    def findMethod(self, name):
        return self._methods.get(name)


class InterfaceType(ClassType):
    pass


class FunctionType(JitType):
    def __init__(self, qualified_name):
        self._qualname = qualified_name

    def _key(self):
        return (self._qualname,)

    @property
    def annotation_str(self):
        return self._qualname


def is_subtype(a, b):
    """a can be used where b is expected (torch's isSubtypeOf, the common cases)."""
    if a == b or isinstance(b, AnyType):
        return True
    if isinstance(b, TensorType) and isinstance(a, TensorType):
        return b == TensorType.get() or a == b
    if isinstance(b, OptionalType):
        return isinstance(a, NoneType) or is_subtype(a, b._elem) or \
            (isinstance(a, OptionalType) and is_subtype(a._elem, b._elem))
    if isinstance(b, NumberType):
        return isinstance(a, (IntType, FloatType, ComplexType))
    if isinstance(a, ListType) and isinstance(b, ListType):
        return is_subtype(a._elem, b._elem) and (type(a._elem) is type(b._elem))
    if isinstance(a, TupleType) and isinstance(b, TupleType):
        return len(a._elems) == len(b._elems) and all(is_subtype(x, y) for x, y in zip(a._elems, b._elems))
    return False


def type_of_value(v):
    """The JIT type of a Python value (complete for tensors), as tracing and
    insertConstant see it."""
    import cthtorch
    if isinstance(v, cthtorch.Tensor):
        return TensorType.create_from_tensor(v)
    if isinstance(v, bool):
        return BoolType.get()
    if isinstance(v, int):
        return IntType.get()
    if isinstance(v, float):
        return FloatType.get()
    if isinstance(v, complex):
        return ComplexType.get()
    if isinstance(v, str):
        return StringType.get()
    if v is None:
        return NoneType.get()
    if isinstance(v, cthtorch.device):
        return DeviceObjType.get()
    if isinstance(v, (cthtorch.dtype, cthtorch.layout, cthtorch.memory_format)):
        return IntType.get()
    if isinstance(v, tuple):
        return TupleType([type_of_value(x) for x in v])
    if isinstance(v, list):
        if not v:
            return ListType(TensorType.get())
        t = type_of_value(v[0])
        if isinstance(t, TensorType):
            t = TensorType.get()
        return ListType(t)
    if isinstance(v, dict):
        k, val = next(iter(v.items())) if v else ("", None)
        vt = type_of_value(val) if v else TensorType.get()
        return DictType(type_of_value(k), TensorType.get() if isinstance(vt, TensorType) else vt)
    if isinstance(v, cthtorch.Generator):
        return GeneratorType.get()
    return AnyType.get()


# ---------------------------------------------------------------- values

class Use:
    __slots__ = ("user", "offset")

    def __init__(self, user, offset):
        self.user, self.offset = user, offset

    def __repr__(self):
        return "<Use %s[%d]>" % (self.user.kind(), self.offset)


def _is_number_name(s):
    return s.isdigit()


class Value:
    """An SSA value: an output of one node, used by others."""

    def __init__(self, node, offset, graph):
        self._node = node
        self._offset = offset
        self._graph = graph
        self._unique = graph._next_unique()
        self._name = None
        self._type = TensorType.get()
        self._uses = []

    def type(self):
        return self._type

    def setType(self, t):
        self._type = t
        return self

    def inferTypeFrom(self, tensor):
        self._type = TensorType.create_from_tensor(tensor)

    def unique(self):
        return self._unique

    def offset(self):
        return self._offset

    def hasDebugName(self):
        return self._name is not None

    def debugName(self):
        return self._name if self._name is not None else str(self._unique)

    def debugNameBase(self):
        n = self.debugName()
        base, dot, suffix = n.rpartition(".")
        return base if dot and suffix.isdigit() else n

    def setDebugName(self, name):
        """Names are unique in a graph: a name already taken moves to its
        holder as `name.N` (the newest value gets the plain name, as torch)."""
        if name and _is_number_name(name):
            raise RuntimeError("names may not be integers: %s" % name)
        names = self._graph._names
        if self._name is not None and names.get(self._name) is self:
            del names[self._name]
        if not name:
            self._name = None
            return self
        old = names.get(name)
        if old is not None and old is not self:
            self._graph._displace_name(name)
        names[name] = self
        self._name = name
        return self

    def node(self):
        return self._node

    def uses(self):
        return list(self._uses)

    def hasUses(self):
        return bool(self._uses)

    def replaceAllUsesWith(self, other):
        for u in list(self._uses):
            u.user.replaceInput(u.offset, other)

    def replaceAllUsesAfterNodeWith(self, node, other):
        for u in list(self._uses):
            if u.user.isAfter(node):
                u.user.replaceInput(u.offset, other)

    def isCompleteTensor(self):
        return isinstance(self._type, TensorType) and self._type.isComplete()

    def requires_grad(self):
        return self._type.requires_grad()

    def toIValue(self):
        n = self._node
        if n.kind() != "prim::Constant":
            return None
        return n._constant_value()

    def owningGraph(self):
        return self._graph

    def __repr__(self):
        return "%s defined in (%s)" % (self.debugName(), str(self._node).rstrip("\n"))


# ---------------------------------------------------------------- nodes

_ATTR_KINDS = {"s": "s", "i": "i", "f": "f", "t": "t", "ss": "ss", "is": "is", "fs": "fs", "ts": "ts",
               "g": "g", "gs": "gs", "ival": "ival", "c": "c", "ty": "ty", "tys": "tys"}


def _fmt_float(x):
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if math.isnan(x):
        return "nan"
    s = "%.17g" % x
    if all(c.isdigit() or c == "-" for c in s):
        s += "."
    return s


_TENSOR_TYPE_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
                      "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
                      "bool": "Bool"}


def _fmt_tensor(t):
    """A tensor attribute as torch's graphs print it: one element as `{v}`, up to ten as their data in
    torch's C++ layout (lines joined by spaces; 2-d slices of higher-dimensional tensors under their
    `(i,.,.) =` headers), else `<Tensor>`."""
    if t.is_meta or t.is_complex():
        return "<Tensor>"
    if t.numel() == 1:
        v = t.reshape(()).item()
        return "{%s}" % ("%g" % v if isinstance(v, float) else int(v))
    type_name = _TENSOR_TYPE_NAMES.get(str(t.dtype).rpartition(".")[2])
    if t.numel() > 10 or t.numel() == 0 or type_name is None or t.device.type != "cpu":
        return "<Tensor>"
    if t.dim() == 1:
        scale, width, text = _data_format(t.tolist())
        lines = [text(x / scale).rjust(width) for x in t.tolist()]
        body = " ".join(([("%d *" if scale >= 1 else "%g *") % scale] if scale != 1 else []) + lines)
    elif t.dim() == 2:
        body = _fmt_matrix(t.tolist())
    else:
        slices = [_fmt_matrix(t[idx].tolist(), nested=True)
                  for idx in itertools.product(*[range(d) for d in t.shape[:-2]])]
        heads = ["(%s,.,.) = " % ",".join(str(i + 1) for i in idx)
                 for idx in itertools.product(*[range(d) for d in t.shape[:-2]])]
        body = None if None in slices else "  ".join(h + " " + m for h, m in zip(heads, slices))
    if body is None:
        return "<Tensor>"
    return "%s [ CPU%sType{%s} ]" % (body, type_name, ",".join(str(d) for d in t.shape))


def _fmt_matrix(rows, nested=False):
    """A matrix's lines as torch prints them: a scaled matrix's rows, and all lines of a slice of a
    higher-dimensional tensor, are indented one more space."""
    scale, width, text = _data_format([x for r in rows for x in r])
    if len(rows[0]) * (width + 1) > 80:
        return None     # torch splits rows wider than a line into column blocks; not reproduced here
    body = ("  " if scale != 1 or nested else " ").join(" ".join(text(x / scale).rjust(width) for x in r)
                                                          for r in rows)
    if scale == 1:
        return body
    return ("%d *" if scale >= 1 else "%g *") % scale + ("  " if nested else " ") + body


def _data_format(values):
    """(scale, width, formatter) of torch's C++ tensor printing for these values: integers as integers;
    others with 4 decimals, scaled by a power of ten printed in front when all are large or all below
    1, or in scientific notation when their magnitudes are far apart."""
    finite = [abs(float(x)) for x in values if math.isfinite(float(x))]
    nonzero = [x for x in finite if x != 0]
    exp_max = math.floor(math.log10(max(nonzero))) + 1 if nonzero else 1
    exp_min = math.floor(math.log10(min(finite))) + 1 if finite and min(finite) != 0 else 1
    sci = (1, 11, lambda x: _fmt_fixed_or_special(x, "%.4e"))
    if all(x == int(x) for x in finite):
        # integers print in the C++ stream's default notation (6 significant digits)
        return sci if exp_max > 9 else (1, max(exp_max, 1) + 1, lambda x: "%g" % x)
    if exp_max - exp_min > 4:
        return sci
    if exp_max > 5 or exp_max < 0:
        return 10.0 ** (exp_max - 1), 7, lambda x: _fmt_fixed_or_special(x, "%.4f")
    return 1, (7 if exp_max == 0 else exp_max + 6), lambda x: _fmt_fixed_or_special(x, "%.4f")


def _fmt_fixed_or_special(x, fmt):
    return fmt % x if math.isfinite(x) else ("nan" if math.isnan(x) else ("inf" if x > 0 else "-inf"))


def _fmt_ival(v):
    import cthtorch
    if isinstance(v, bool):
        return str(int(v))
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return _fmt_float(v)
    if isinstance(v, str):
        return '"%s"' % v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    if isinstance(v, cthtorch.Tensor):
        return _fmt_tensor(v)
    if isinstance(v, cthtorch.device):
        return '"%s"' % v
    if isinstance(v, list):
        return "[%s]" % ", ".join(_fmt_ival(x) for x in v)
    if isinstance(v, tuple):
        return "(%s)" % ", ".join(_fmt_ival(x) for x in v)
    if v is None:
        return "None"
    return "<%s>" % type(v).__name__


def _fmt_attr(kind, v):
    if kind == "s":
        return _fmt_ival(str(v))
    if kind == "i":
        return str(int(v))
    if kind == "f":
        return _fmt_float(v)
    if kind == "t":
        return _fmt_tensor(v)
    if kind in ("ss", "is", "fs"):
        inner = {"ss": lambda x: _fmt_ival(str(x)), "is": str, "fs": _fmt_float}[kind]
        return "[%s]" % ", ".join(inner(x) for x in v)
    if kind == "ts":
        return "[%s]" % ", ".join(_fmt_tensor(x) for x in v)
    if kind == "g":
        return "<Graph>"
    if kind == "ty":
        return v.repr_str()
    return _fmt_ival(v)


class Node:
    """One operation in a block."""

    def __init__(self, graph, kind):
        self._graph = graph
        self._kind = kind
        self._inputs = []
        self._outputs = []
        self._blocks = []
        self._attrs = {}       # name -> (kind, value), insertion order kept for printing
        self._block = None     # owning block while in its list
        self._prev = self._next = None
        self._source = None    # (filename, line, col) or None
        self._scope = ""
        self._schema = None    # a FunctionSchema once resolved

    # -- structure
    def kind(self):
        return self._kind

    def owningGraph(self):
        return self._graph

    def owningBlock(self):
        return self._block

    def inputs(self):
        return list(self._inputs)

    def outputs(self):
        return list(self._outputs)

    def input(self):
        if len(self._inputs) != 1:
            raise RuntimeError("Expected a single input on node %s, but found %d" % (self._kind, len(self._inputs)))
        return self._inputs[0]

    def output(self):
        if len(self._outputs) != 1:
            raise RuntimeError("Expected a single output on node %s, but found %d" % (self._kind, len(self._outputs)))
        return self._outputs[0]

    def inputsAt(self, i):
        return self._inputs[i]

    def outputsAt(self, i):
        return self._outputs[i]

    def outputsSize(self):
        return len(self._outputs)

    def inputsSize(self):
        return len(self._inputs)

    def blocks(self):
        return list(self._blocks)

    def addBlock(self):
        b = Block(self._graph, self)
        self._blocks.append(b)
        return b

    def eraseBlock(self, i):
        self._blocks[i]._destroy()
        del self._blocks[i]

    def addInput(self, v):
        v._uses.append(Use(self, len(self._inputs)))
        self._inputs.append(v)
        return v

    def insertInput(self, i, v):
        for u_v in self._inputs[i:]:
            for u in u_v._uses:
                if u.user is self and u.offset >= i:
                    u.offset += 1
        self._inputs.insert(i, v)
        v._uses.append(Use(self, i))
        return v

    def _drop_use(self, i):
        v = self._inputs[i]
        for k, u in enumerate(v._uses):
            if u.user is self and u.offset == i:
                del v._uses[k]
                return

    def replaceInput(self, i, v):
        self._drop_use(i)
        self._inputs[i] = v
        v._uses.append(Use(self, i))
        return v

    def replaceInputWith(self, old, new):
        for i, v in enumerate(self._inputs):
            if v is old:
                self.replaceInput(i, new)

    def removeInput(self, i):
        self._drop_use(i)
        del self._inputs[i]
        for v in self._inputs[i:]:
            for u in v._uses:
                if u.user is self and u.offset > i:
                    u.offset -= 1

    def removeAllInputs(self):
        for i in range(len(self._inputs)):
            self._drop_use(i)
        self._inputs = []

    def addOutput(self):
        v = Value(self, len(self._outputs), self._graph)
        self._outputs.append(v)
        return v

    def insertOutput(self, i):
        v = Value(self, i, self._graph)
        self._outputs.insert(i, v)
        for k, o in enumerate(self._outputs):
            o._offset = k
        return v

    def eraseOutput(self, i):
        v = self._outputs[i]
        if v._uses:
            raise RuntimeError("eraseOutput: output %s still has uses" % v.debugName())
        v.setDebugName("")
        del self._outputs[i]
        for k, o in enumerate(self._outputs):
            o._offset = k

    def hasUses(self):
        return any(o._uses for o in self._outputs)

    def replaceAllUsesWith(self, other):
        for a, b in zip(self._outputs, other._outputs):
            a.replaceAllUsesWith(b)

    # -- position in the block
    def next(self):
        return self._next

    def prev(self):
        return self._prev

    def _in_list(self):
        return self._next is not None

    def insertBefore(self, n):
        if self._in_list():
            raise RuntimeError("node is already in a block")
        b = n._block
        p = n._prev
        self._prev, self._next = p, n
        p._next = self
        n._prev = self
        self._block = b
        return self

    def insertAfter(self, n):
        return self.insertBefore(n._next)

    def _unlink(self):
        self._prev._next = self._next
        self._next._prev = self._prev
        self._prev = self._next = None
        self._block = None

    def moveBefore(self, n):
        self._unlink()
        return self.insertBefore(n)

    def moveAfter(self, n):
        self._unlink()
        return self.insertAfter(n)

    def isBefore(self, n):
        return self is not n and not self.isAfter(n)

    def isAfter(self, n):
        # same block: walk forward from n; nested: compare the ancestors in a shared block
        a, b = self, n
        chain_b = {}
        x = b
        while x is not None:
            chain_b[id(x._block)] = x
            x = x._block._owning_node if x._block is not None else None
        x = a
        while x is not None and id(x._block) not in chain_b:
            x = x._block._owning_node if x._block is not None else None
        if x is None:
            return False
        y = chain_b[id(x._block)]
        if x is y:
            return a is not b and a is not x   # a is nested inside b
        k = y._next
        while k is not None and k._kind != "prim::Return":
            if k is x:
                return True
            k = k._next
        return False

    def destroy(self):
        if any(o._uses for o in self._outputs):
            raise RuntimeError("cannot destroy node %s: its outputs have uses" % self._kind)
        for b in self._blocks:
            b._destroy()
        self.removeAllInputs()
        for o in self._outputs:
            o.setDebugName("")
        if self._in_list():
            self._unlink()

    # -- attributes
    def _set(self, name, kind, v):
        self._attrs[name] = (kind, v)
        return self

    def _get(self, name, kind=None):
        try:
            k, v = self._attrs[name]
        except KeyError:
            raise RuntimeError("required keyword attribute '%s' is undefined" % name) from None
        return v

    def s_(self, name, v): return self._set(name, "s", str(v))
    def i_(self, name, v): return self._set(name, "i", int(v))
    def f_(self, name, v): return self._set(name, "f", float(v))
    def t_(self, name, v): return self._set(name, "t", v)
    def ss_(self, name, v): return self._set(name, "ss", [str(x) for x in v])
    def is_(self, name, v): return self._set(name, "is", [int(x) for x in v])
    def fs_(self, name, v): return self._set(name, "fs", [float(x) for x in v])
    def ts_(self, name, v): return self._set(name, "ts", list(v))
    def g_(self, name, v): return self._set(name, "g", v)
    def ival_(self, name, v): return self._set(name, "ival", v)
    def ty_(self, name, v): return self._set(name, "ty", v)

    def s(self, name): return self._get(name)
    def i(self, name): return self._get(name)
    def f(self, name): return self._get(name)
    def t(self, name): return self._get(name)
    def ss(self, name): return list(self._get(name))
    def is_list(self, name): return list(self._get(name))
    def fs(self, name): return list(self._get(name))
    def ts(self, name): return list(self._get(name))
    def g(self, name): return self._get(name)
    def ival(self, name): return self._get(name)
    def ty(self, name): return self._get(name)

    def attributeNames(self):
        return list(self._attrs)

    def hasAttribute(self, name):
        return name in self._attrs

    def hasAttributes(self):
        return bool(self._attrs)

    def pyname(self):
        """A prim::PythonOp's function name (torch's Node.pyname)."""
        return self.s("name")

    def pyobj(self):
        """A prim::PythonOp's Python function."""
        return self.ival("value")

    def kindOf(self, name):
        return self._attrs[name][0]

    def removeAttribute(self, name):
        del self._attrs[name]
        return self

    def copyAttributes(self, other):
        self._attrs = dict(other._attrs)
        return self

    def _constant_value(self):
        """The value of a prim::Constant, as the interpreter sees it."""
        if "value" not in self._attrs:
            return None
        k, v = self._attrs["value"]
        t = self._outputs[0]._type if self._outputs else None
        if k == "i" and isinstance(t, BoolType):
            return bool(v)
        if k == "s" and isinstance(t, DeviceObjType):
            import cthtorch
            return cthtorch.device(v)
        if k in ("is", "fs", "ss", "ts"):
            return list(v)
        return v

    # -- metadata
    def sourceRange(self):
        if self._source is None:
            return ""
        return "%s:%d:%d" % self._source

    def setSourceRange(self, filename, line, col=0):
        self._source = (filename, line, col)
        return self

    def scopeName(self):
        return self._scope

    def setScope(self, scope):
        self._scope = scope
        return self

    def schema(self):
        from . import _schema
        s = self._schema or _schema.match_node(self)
        if s is None:
            raise RuntimeError("Schema not found for node. File a bug report.\nNode: %s" % str(self).rstrip())
        return s

    def maybeSchema(self):
        from . import _schema
        return self._schema or _schema.match_node(self)

    def setSchema(self, s):
        self._schema = s
        return self

    def matches(self, schema_str):
        s = self.maybeSchema()
        return s is not None and str(s) == schema_str

    def isNondeterministic(self):
        from . import _schema
        return _schema.is_nondeterministic(self._kind)

    def pyname(self):
        return self._attrs.get("name", (None, self._kind))[1]

    def __repr__(self):
        return str(self)

    def __str__(self):
        out = []
        _print_node(self, 0, out, _Names())
        return "".join(out)


# ---------------------------------------------------------------- blocks

class Block:
    """A list of nodes with block inputs (the param node's outputs) and block
    outputs (the return node's inputs)."""

    def __init__(self, graph, owning_node):
        self._graph = graph
        self._owning_node = owning_node
        self._param = Node(graph, "prim::Param")
        self._return = Node(graph, "prim::Return")
        r = self._return
        r._next = r._prev = r   # the sentinel closes the ring: return <-> first ... last <-> return
        r._block = self
        self._param._block = self

    def inputs(self):
        return list(self._param._outputs)

    def outputs(self):
        return list(self._return._inputs)

    def nodes(self):
        return _NodeIter(self._return)

    def paramNode(self):
        return self._param

    def returnNode(self):
        return self._return

    def param_node(self):
        return self._param

    def return_node(self):
        return self._return

    def owningNode(self):
        return self._owning_node

    def owningGraph(self):
        return self._graph

    def addInputToBlock(self, name=""):
        v = self._param.addOutput()
        if name:
            v.setDebugName(name)
        return v

    addInput = addInputToBlock

    def insertInput(self, i, name=""):
        v = self._param.insertOutput(i)
        if name:
            v.setDebugName(name)
        return v

    def eraseInput(self, i):
        self._param.eraseOutput(i)

    def registerOutput(self, v):
        self._return.addInput(v)
        return len(self._return._inputs) - 1

    def eraseOutput(self, i):
        self._return.removeInput(i)

    def appendNode(self, n):
        return n.insertBefore(self._return)

    def prependNode(self, n):
        return n.insertAfter(self._return)

    def _destroy(self):
        for n in reversed(list(self.nodes())):
            for o in n._outputs:
                o._uses = []
            n.destroy()
        self._return.removeAllInputs()


class _NodeIter:
    """Iterates a block's nodes; safe against destroying the current node."""

    def __init__(self, sentinel, reverse=False):
        self._sentinel = sentinel
        self._reverse = reverse

    def __iter__(self):
        s = self._sentinel
        n = s._prev if self._reverse else s._next
        while n is not s:
            nxt = n._prev if self._reverse else n._next
            yield n
            n = nxt

    def reverse(self):
        return _NodeIter(self._sentinel, not self._reverse)

    def __len__(self):
        return sum(1 for _ in self)


# ---------------------------------------------------------------- graphs

class Graph:
    """A function's body: one top block, and where new nodes go."""

    def __init__(self):
        self._unique = 0
        self._names = {}
        self._name_suffix = {}
        self._block = Block(self, None)
        self._insert_before = self._block._return

    def _displace_name(self, name):
        """The value holding `name` moves to `name.N`, torch's Value::setDebugName
        numbering (so names match its printouts); the name is then free."""
        names = self._names
        old = names.pop(name, None)
        if old is None:
            return
        base, dot, suffix = name.rpartition(".")
        k = 1
        if dot and suffix.isdigit():
            k = int(suffix)
        else:
            base = name
        if base in self._name_suffix:
            k = max(k, self._name_suffix[base] + 1)
        while "%s.%d" % (base, k) in names:
            k += 1
        new = "%s.%d" % (base, k)
        self._name_suffix[base] = k + 1
        old._name = new
        names[new] = old

    def _next_unique(self):
        u = self._unique
        self._unique += 1
        return u

    def block(self):
        return self._block

    def inputs(self):
        return self._block.inputs()

    def outputs(self):
        return self._block.outputs()

    def nodes(self):
        return self._block.nodes()

    def param_node(self):
        return self._block._param

    def return_node(self):
        return self._block._return

    def addInput(self, name=""):
        return self._block.addInputToBlock(name)

    def insertInput(self, i, name=""):
        return self._block.insertInput(i, name)

    def eraseInput(self, i):
        self._block.eraseInput(i)

    def registerOutput(self, v):
        return self._block.registerOutput(v)

    def eraseOutput(self, i):
        self._block.eraseOutput(i)

    def create(self, kind, inputs=None, num_outputs=1):
        if isinstance(inputs, int):     # create(kind, num_outputs)
            inputs, num_outputs = None, inputs
        n = Node(self, kind)
        for v in inputs or ():
            n.addInput(v)
        for _ in range(num_outputs):
            n.addOutput()
        return n

    def createClone(self, n, value_map, copy_blocks=True):
        """A copy of n (from any graph) whose inputs are value_map(old input)."""
        c = Node(self, n._kind)
        c._attrs = {k: (kk, list(v) if isinstance(v, list) else v) for k, (kk, v) in n._attrs.items()}
        c._source, c._scope, c._schema = n._source, n._scope, n._schema
        for v in n._inputs:
            c.addInput(value_map(v))
        for o in n._outputs:
            co = c.addOutput()
            co.setType(o._type)
            if o._name is not None:
                co.setDebugName(o.debugNameBase() if o._name in self._names else o._name)
        if copy_blocks:
            for b in n._blocks:
                nb = c.addBlock()
                _clone_block_into(b, nb, value_map)
        return c

    def insertNode(self, n):
        return n.insertBefore(self._insert_before)

    def appendNode(self, n):
        return self._block.appendNode(n)

    def prependNode(self, n):
        return self._block.prependNode(n)

    def insertConstant(self, val, loc=None, scope=None):
        n = self.create("prim::Constant")
        _set_constant(n, val)
        if loc is not None:
            n._source = loc
        self.insertNode(n)
        return n.output()

    def setInsertPoint(self, n):
        """New nodes go before n (a block: at its end)."""
        self._insert_before = n._return if isinstance(n, Block) else n

    def insertPoint(self):
        return self._insert_before

    @contextlib.contextmanager
    def insert_point_guard(self, n):
        old = self._insert_before
        self.setInsertPoint(n)
        try:
            yield
        finally:
            self._insert_before = old

    def copy(self):
        g = Graph()
        env = {}
        for v in self.inputs():
            nv = g.addInput()
            nv.setType(v._type)
            if v._name is not None:
                nv.setDebugName(v._name)
            env[v] = nv
        _clone_nodes(self._block, g._block, env)
        for v in self.outputs():
            g.registerOutput(env[v])
        g._unique = max(g._unique, self._unique)
        return g

    def findNode(self, kind, recurse=True):
        for n in self.findAllNodes(kind, recurse):
            return n
        return None

    def findAllNodes(self, kind, recurse=True):
        return [n for n in _walk(self._block, recurse) if n._kind == kind]

    def lint(self):
        _lint(self)

    def str(self, print_source_locations=True):
        return _print_graph(self, print_source_locations)

    def __str__(self):
        return _print_graph(self, True)

    def __repr__(self):
        return str(self)

    def makeMultiOutputIntoTuple(self):
        if len(self.outputs()) == 1:
            return
        tup = self.create("prim::TupleConstruct", self.outputs())
        tup.output().setType(TupleType([v.type() for v in self.outputs()]))
        self.appendNode(tup)
        while self.outputs():
            self.eraseOutput(0)
        self.registerOutput(tup.output())


def _set_constant(n, val):
    import cthtorch
    out = n._outputs[0]
    if isinstance(val, bool):
        n.i_("value", int(val))
        out.setType(BoolType.get())
    elif isinstance(val, int):
        n.i_("value", val)
        out.setType(IntType.get())
    elif isinstance(val, float):
        n.f_("value", val)
        out.setType(FloatType.get())
    elif isinstance(val, str):
        n.s_("value", val)
        out.setType(StringType.get())
    elif val is None:
        out.setType(NoneType.get())
    elif isinstance(val, cthtorch.Tensor):
        n.t_("value", val)
        t = TensorType.create_from_tensor(val)
        out.setType(t.with_requires_grad(False) if val.requires_grad is False else t)
    elif isinstance(val, cthtorch.device):
        n.s_("value", str(val))
        out.setType(DeviceObjType.get())
    elif isinstance(val, cthtorch.dtype):
        n.i_("value", SCALAR_TYPE_IDS[_dtype_name(val)])
        out.setType(IntType.get())
    elif isinstance(val, (list, tuple)) and all(isinstance(x, bool) for x in val) and val and isinstance(val, list):
        n.ival_("value", list(val))
        out.setType(ListType(BoolType.get()))
    elif isinstance(val, list) and all(isinstance(x, int) and not isinstance(x, bool) for x in val):
        n.is_("value", val)
        out.setType(ListType(IntType.get()))
    elif isinstance(val, list) and all(isinstance(x, float) for x in val):
        n.fs_("value", val)
        out.setType(ListType(FloatType.get()))
    elif isinstance(val, list) and all(isinstance(x, str) for x in val):
        n.ss_("value", val)
        out.setType(ListType(StringType.get()))
    elif isinstance(val, list) and all(isinstance(x, cthtorch.Tensor) for x in val):
        n.ts_("value", val)
        out.setType(ListType(TensorType.get()))
    elif isinstance(val, tuple):
        n.ival_("value", val)
        out.setType(type_of_value(val))
    else:
        raise RuntimeError("Unsupported value kind: %s" % type(val).__name__)


def _clone_nodes(src_block, dst_block, env):
    g = dst_block._graph
    for n in src_block.nodes():
        c = g.createClone(n, lambda v: env.get(v, v), copy_blocks=False)
        for b in n._blocks:
            nb = c.addBlock()
            for v in b.inputs():
                nv = nb.addInputToBlock()
                nv.setType(v._type)
                if v._name is not None:
                    nv.setDebugName(v._name)
                env[v] = nv
            _clone_nodes(b, nb, env)
            for v in b.outputs():
                nb.registerOutput(env.get(v, v))
        dst_block.appendNode(c)
        for o, co in zip(n._outputs, c._outputs):
            env[o] = co


def _clone_block_into(src, dst, value_map):
    env = {}
    for v in src.inputs():
        nv = dst.addInputToBlock()
        nv.setType(v._type)
        env[v] = nv
    look = lambda v: env[v] if v in env else value_map(v)   # noqa: E731
    g = dst._graph
    for n in src.nodes():
        c = g.createClone(n, look)
        dst.appendNode(c)
        for o, co in zip(n._outputs, c._outputs):
            env[o] = co
    for v in src.outputs():
        dst.registerOutput(look(v))


def _walk(block, recurse=True):
    for n in block.nodes():
        yield n
        if recurse:
            for b in n._blocks:
                yield from _walk(b, True)


def _lint(graph):
    """Every input is defined before use, uses lists agree with inputs."""
    seen = set(graph.inputs())

    def check_block(b, scope):
        scope = set(scope) | set(b.inputs())
        for n in b.nodes():
            for i, v in enumerate(n._inputs):
                if v not in scope:
                    raise RuntimeError("lint: %%%s used by %s before it is defined" % (v.debugName(), n.kind()))
                if not any(u.user is n and u.offset == i for u in v._uses):
                    raise RuntimeError("lint: use list of %%%s misses %s" % (v.debugName(), n.kind()))
            for sb in n._blocks:
                check_block(sb, scope)
            scope |= set(n._outputs)
        for v in b.outputs():
            if v not in scope:
                raise RuntimeError("lint: block output %%%s is not defined" % v.debugName())
    check_block(graph._block, seen)


# ---------------------------------------------------------------- printing

class _Names:
    def name(self, v):
        return "%" + v.debugName()


def _value_decl(v, names):
    return "%s : %s" % (names.name(v), v._type.repr_str())


def _print_node(n, indent, out, names, source=True):
    pad = "  " * indent
    outs = ", ".join(_value_decl(v, names) for v in n._outputs)
    line = pad + outs + " = " + n._kind
    if n._kind == "prim::PythonOp":       # torch's form: ^name[scalar arguments]()(inputs)
        line = pad + outs + " = ^%s[]()" % n._attrs["name"][1]
    elif n._attrs:
        line += "[%s]" % ", ".join("%s=%s" % (k, _fmt_attr(kind, v)) for k, (kind, v) in n._attrs.items())
    line += "(%s)" % ", ".join(names.name(v) for v in n._inputs)
    if n._scope:
        line += ", scope: %s" % n._scope
    if source and n._source is not None:
        line += " # %s:%d:%d" % n._source
    out.append(line + "\n")
    for i, b in enumerate(n._blocks):
        _print_block(b, "block%d" % i, indent + 1, out, names, source)


def _print_block(b, label, indent, out, names, source):
    pad = "  " * indent
    out.append("%s%s(%s):\n" % (pad, label, ", ".join(_value_decl(v, names) for v in b.inputs())))
    for n in b.nodes():
        _print_node(n, indent + 1, out, names, source)
    out.append("%s  -> (%s)\n" % (pad, ", ".join(names.name(v) for v in b.outputs())))


def _print_graph(g, source=True):
    names = _Names()
    out = ["graph(%s):\n" % ",\n      ".join(_value_decl(v, names) for v in g.inputs())]
    subgraphs = []
    for n in g.nodes():
        _print_node(n, 1, out, names, source)
    out.append("  return (%s)\n" % ", ".join(names.name(v) for v in g.outputs()))
    for n in _walk(g._block):
        for k, (kind, v) in n._attrs.items():
            if kind == "g" and n._kind not in [s[0] for s in subgraphs]:
                subgraphs.append((n._kind, v))
    for kind, sg in subgraphs:
        out.append("with %s = %s" % (kind, _print_graph(sg, source)))
    return "".join(out)


# `n.is("name")` reads an int-list attribute ("is" is a Python keyword)
setattr(Node, "is", Node.is_list)
