"""Lowers a Graph once into the C interpreter's instructions (`_C._JitProgram`,
src/python/JitInterpreter.c), which then runs it without going back to
Python per op.

- an aten node whose declared overload has a generated boxed call (and whose
  schema lists the declaration's parameters in order) is a BOXED instruction:
  the binding's parser and VT function, called from C;
- prim::If / prim::Loop become jumps over the flattened blocks (a loop
  carries its values through MOVEs and frees its body's temporaries each
  iteration, as the Python executor does);
- tuples, lists, unpacking and attribute reads are instructions of their own;
- a fused group is a CALL of its `_C._JitFusedKernel`, which runs its
  compiled loop from C;
- everything else (composites written in Python, scalar arithmetic on
  Python numbers, method calls) is a CALL of a Python callable:
  the op itself where its arguments need no conversion, else the Python
  executor's step for that one node. So every graph lowers; CALL is the
  fallback, not a second implementation.
"""
import os

import cthtorch
from cthtorch import _C

from . import _interpreter as _py
from . import _ir

__all__ = ["lower", "enabled"]

# JitInterpreter.c's IKind, in order
(BOXED, CALL, GETATTR, TUPLE, LIST, UNPACK, MOVE, JF, JUMP, LOOPTEST, INCR, CLEAR) = range(12)

_tables_set = False

# graph value types whose runtime values are plain Python scalars (never tensors)
_SCALAR_TYPES = (_ir.IntType, _ir.FloatType, _ir.BoolType, _ir.StringType, _ir.NoneType, _ir.ComplexType)


def enabled():
    """CTHTORCH_JIT_C_INTERPRETER=0 runs graphs in the Python executor."""
    return os.environ.get("CTHTORCH_JIT_C_INTERPRETER", "1") != "0"


def _set_enum_tables():
    """The C side boxes a graph's dtype / layout / memory-format ids into these objects."""
    global _tables_set
    if _tables_set:
        return
    ids = _ir.SCALAR_TYPE_IDS
    dtypes = [None] * (max(ids.values()) + 1)
    for name, i in ids.items():
        d = getattr(cthtorch, name, None)
        if d is not None:
            dtypes[i] = d
    mem = tuple(getattr(cthtorch, n) for n in _py._MEMORY_FORMAT_NAMES)
    _C._jit_set_enum_tables(tuple(dtypes), (cthtorch.strided,), mem)
    from ._module import ScriptModule
    _C._jit_set_module_getattr(ScriptModule.__getattr__)   # GETATTR reads its registries from C
    _tables_set = True


def _where(n):
    src = n.sourceRange()
    return n.kind() + (" (" + src + ")" if src else "")


_boxed = None   # schema name -> [(boxed key, parameter names)], in declaration order


def _boxed_key(n):
    """The boxed call serving n, or None: the node's declared overload, or
    (where the schema is one of torch's that we serve from another overload,
    as mul.Scalar by mul.Tensor: the binding takes numbers there too) the
    first declared overload of its name whose parameters are the schema's
    arguments, in order."""
    global _boxed
    schema = n.maybeSchema()
    if schema is None:
        return None
    if _boxed is None:
        _boxed = {}
        for key, params in _C._jit_boxed_ops().items():
            _boxed.setdefault(key.partition(".")[0], []).append((key, params.split(",") if params else []))
    names = [a.name for a in schema.arguments]
    if len(n.inputs()) > len(names):
        return None
    key = schema.name + ("." + schema.overload_name if schema.overload_name else "")
    cands = _boxed.get(schema.name, ())
    for k, params in cands:
        if k == key and params == names:
            return k
    for k, params in cands:
        if params == names:
            return k
    return None


def _named_tuple_maker(n):
    make = _py.named_tuple_class(n)._make
    return lambda *a: make(a)


def _node_step_callable(n):
    """The Python executor's step for one node, as a callable over its
    inputs (the fallback for what has no instruction of its own)."""
    slots = _py._Slots()
    for v in n.inputs():
        slots(v)
    step = _py._lower_node(n, slots)
    ins = [slots.index[v] for v in n.inputs()]
    outs = [slots(o) for o in n.outputs()]
    template = slots.template
    if len(outs) == 1:
        o = outs[0]

        def call1(*args):
            regs = template.copy()
            for i, a in zip(ins, args):
                regs[i] = a
            step(regs)
            return regs[o]
        return call1

    def call(*args):
        regs = template.copy()
        for i, a in zip(ins, args):
            regs[i] = a
        step(regs)
        return tuple(regs[i] for i in outs)
    return call


class _Lowering(_py._Slots):
    """Registers (one per graph value; constants pre-filled) and code."""

    def __init__(self):
        super().__init__()
        self.code = []

    def const(self, x):
        self.template.append(x)
        return len(self.template) - 1

    def emit(self, kind, ins=(), outs=(), target=-1, payload=None, kwnames=None, where=None):
        self.code.append([kind, list(ins), list(outs), target, payload, kwnames, where])
        return len(self.code) - 1

    def block(self, b):
        for n in b.nodes():
            self.node(n)

    def node(self, n):
        k = n.kind()
        if k == "prim::Constant":
            return
        ins = [self(v) for v in n.inputs()]
        outs = [self(v) for v in n.outputs()]
        where = _where(n)
        if k == "prim::If":
            then_b, else_b = n.blocks()
            jf = self.emit(JF, ins[:1], where=where)
            self.block(then_b)
            self.emit(MOVE, [self(v) for v in then_b.outputs()], outs)
            j = self.emit(JUMP)
            self.code[jf][3] = len(self.code)
            self.block(else_b)
            self.emit(MOVE, [self(v) for v in else_b.outputs()], outs)
            self.code[j][3] = len(self.code)
            return
        if k == "prim::Loop":
            body = n.blocks()[0]
            b_in = [self(v) for v in body.inputs()]
            b_out = [self(v) for v in body.outputs()]
            cond, ctr = self.const(None), self.const(None)
            self.emit(MOVE, [ins[1]] + ins[2:] + [self.const(0)], [cond] + b_in[1:] + [ctr])
            head = self.emit(LOOPTEST, [ins[0], cond, ctr], b_in[:1], where=where)
            self.block(body)
            self.emit(MOVE, b_out, [cond] + b_in[1:])
            self.emit(INCR, [ctr])
            temps = sorted({self(o) for m in body.nodes() if m.kind() != "prim::Constant" for o in m.outputs()})
            if temps:
                self.emit(CLEAR, temps)
            self.emit(JUMP, target=head)
            self.code[head][3] = len(self.code)
            self.emit(MOVE, b_in[1:], outs)
            return
        if k == "prim::GetAttr":
            self.emit(GETATTR, ins, outs, payload=n.s("name"), where=where)
            return
        if k == "prim::TupleConstruct" and _py.named_tuple_class(n) is not None:
            self.emit(CALL, ins, outs, payload=_named_tuple_maker(n), where=where)
            return
        if k in ("prim::TupleConstruct", "prim::ListConstruct"):
            self.emit(TUPLE if k == "prim::TupleConstruct" else LIST, ins, outs, where=where)
            return
        if k in ("prim::TupleUnpack", "prim::ListUnpack"):
            self.emit(UNPACK, ins, outs, where=where)
            return
        if k in ("prim::TensorExprGroup", "prim::FusionGroup"):
            # the group's _C._JitFusedKernel: its compiled loop called from C, no Python step
            from ._fuser import DynamicFusedKernel
            self.emit(CALL, ins, outs, payload=DynamicFusedKernel(n.g("Subgraph")).run, where=where)
            return
        if k == "prim::unchecked_cast":
            self.emit(MOVE, ins, outs, where=where)   # a static cast only: the same object
            return
        if k in _py._PRIM_PURE and k not in _py._SCALAR_BINARY and len(outs) == 1:
            # the Python step is just outs[0] = fn(*ins): call fn from C, no step in between
            self.emit(CALL, ins, outs, payload=_py._PRIM_PURE[k], where=where)
            return
        if self.op(n, k, ins, outs, where):
            return
        self.emit(CALL, ins, outs, payload=_node_step_callable(n), where=where)

    def op(self, n, k, ins, outs, where):
        """An aten node as BOXED, or CALL of its op; False when neither fits."""
        if not (k.startswith("aten::") or k == "prim::NumToTensor"):
            return False
        scalar = _py._SCALAR_BINARY.get(k) or _py._SCALAR_UNARY.get(k)
        if scalar is not None and len(outs) == 1 and \
                all(isinstance(v.type(), _SCALAR_TYPES) for v in n.inputs()):
            # numbers only (by type), so the Python step would take its scalar branch every run
            self.emit(CALL, ins, outs, payload=scalar, where=where)
            return True
        tensor_in = any(isinstance(v.type(), _ir.TensorType) for v in n.inputs())
        if (k in _py._SCALAR_BINARY or k in _py._SCALAR_UNARY or k in _py._PRIM_PURE) and not tensor_in:
            return False   # Python numbers, lists, strings: the Python step's arithmetic
        if k == "aten::slice" and n.inputs() and not isinstance(n.inputs()[0].type(), _ir.TensorType):
            return False
        if k == "aten::linear" and len(ins) == 3 and self.frozen_linear(n, outs, where):
            return True
        key = _boxed_key(n)
        if key is not None:
            self.emit(BOXED, ins, outs, payload=key, where=where)
            return True
        if k in _py._PRIM_PURE:
            return False
        try:
            fn, pos, kw, convs = _py.op_call_args(n, self)
        except RuntimeError:
            return False
        if convs:
            return False   # an argument's id converts at run time: the Python step does it
        self.emit(CALL, pos + list(kw.values()), outs, payload=fn, kwnames=tuple(kw) or None, where=where)
        return True

    def frozen_linear(self, n, outs, where):
        """aten::linear with a constant weight on a 2-d input (known from the
        graph's types): one addmm with W^T made once, as the Python executor does."""
        x, w, b = n.inputs()
        wv = w.node()._constant_value() if w.node().kind() == "prim::Constant" else None
        xt = x.type()
        if not isinstance(wv, cthtorch.Tensor) or wv.dim() != 2 or wv.requires_grad or \
                b.node().kind() != "prim::Constant" or not isinstance(xt, _ir.TensorType) or xt.dim() != 2:
            return False
        bv = b.node()._constant_value()
        if bv is not None and (not isinstance(bv, cthtorch.Tensor) or bv.requires_grad):
            return False
        wt = self.const(wv.t().contiguous())
        if bv is None:
            self.emit(BOXED, [self(x), wt], outs, payload="aten::mm", where=where)
        else:
            self.emit(BOXED, [self(b), self(x), wt], outs, payload="aten::addmm", where=where)
        return True


def lower(graph):
    """The `_C._JitProgram` running graph."""
    _set_enum_tables()
    L = _Lowering()
    b = graph.block()
    inputs = [L(v) for v in b.inputs()]
    L.block(b)
    outputs = [L(v) for v in b.outputs()]
    return _C._JitProgram([tuple(c) for c in L.code], tuple(L.template), inputs, outputs)
