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
import os
import sys

import cthtorch
from cthtorch import _C

from . import _ir

__all__ = ["GraphExecutor", "ProfilingGraphExecutor", "run_graph", "run_node", "op_callable"]


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

def _convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups, *flags):
    """aten::_convolution, the op torch's traces record for every conv (1-3 d, transposed or not)."""
    F = cthtorch.nn.functional
    nd = weight.dim() - 2
    if not 1 <= nd <= 3:
        raise RuntimeError("aten::_convolution: weight should have 3 to 5 dimensions, got %d" % weight.dim())
    if transposed:
        fn = [F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d][nd - 1]
        return fn(input, weight, bias, stride, padding, output_padding, groups, dilation)
    fn = [F.conv1d, F.conv2d, F.conv3d][nd - 1]
    return fn(input, weight, bias, stride, padding, dilation, groups)


def format_string(fmt, *args):
    """aten::format: each `{}` takes the next argument, and only that form, as TorchScript's (Python's
    str.format would let a format string reach attributes of its arguments)."""
    parts = fmt.split("{}")
    out = [parts[0]]
    for i, p in enumerate(parts[1:]):
        out.append(_ts_str(args[i]) if i < len(args) else "{}")
        out.append(p)
    return "".join(out)


def _ts_str(v):
    if isinstance(v, list):
        return "[" + ", ".join(_ts_str(x) for x in v) + "]"
    if isinstance(v, tuple):
        return "(" + ", ".join(_ts_str(x) for x in v) + ("," if len(v) == 1 else "") + ")"
    return str(v)


def _pad(input, pad, mode="constant", value=None):
    """aten::pad, what F.pad is in torch (here F.pad is the composite that serves it)."""
    return cthtorch.nn.functional.pad(input, pad, mode, value)


def _sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
    """aten::scaled_dot_product_attention (F.scaled_dot_product_attention is the composite serving it)."""
    return cthtorch.nn.functional.scaled_dot_product_attention(query, key, value, attn_mask, dropout_p, is_causal,
                                                              scale=scale, enable_gqa=enable_gqa)


def _interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None, antialias=False):
    """aten::__interpolate, TorchScript's F.interpolate."""
    return cthtorch.nn.functional.interpolate(input, size, scale_factor, mode, align_corners, recompute_scale_factor,
                                              antialias)


def _adaptive_max_pool1d(self, output_size):
    """aten::adaptive_max_pool1d: (values, indices), as aten's op gives them."""
    return cthtorch.nn.functional.adaptive_max_pool1d(self, output_size, True)


def _upsample_vec(mode, antialias=False):
    """aten::upsample_<mode>.vec(input, output_size, [align_corners,] scale_factors): one of the two lists is
    given, as F.interpolate takes them (the binding of that name is the other overload: sizes and scales)."""
    def upsample(input, output_size, *rest):
        align_corners = rest[0] if len(rest) == 2 else None
        return cthtorch.nn.functional.interpolate(input, output_size, rest[-1], mode, align_corners,
                                                  antialias=antialias)
    return upsample


def _nested_tensor_from_mask_left_aligned(t, mask):
    """Whether each row of the (batch, seq) mask is its True entries, then its False ones (padding at the end)."""
    m = mask.to(cthtorch.int64)
    return bool((m.cumprod(-1) == m).all())


def _no_nested_tensors(kind):
    def raise_not_implemented(*args, **kwargs):
        raise NotImplementedError("%s: nested tensors are not implemented in cthtorch (torch's TransformerEncoder "
                                  "takes this path in eval mode with a key padding mask and enable_nested_tensor=True; "
                                  "build the encoder with enable_nested_tensor=False)" % kind)
    return raise_not_implemented


def _to_prim(self, device=None, dtype=None, non_blocking=False, copy=False):
    """aten::to.prim_Device / prim_dtype / prim_other: the dtype arrives as its int"""
    return self.to(device=device, dtype=_convert_arg(dtype, "ScalarType"), non_blocking=non_blocking, copy=copy)


def _to_prim_dtype(self, dtype=None, non_blocking=False, copy=False):
    return _to_prim(self, None, dtype, non_blocking, copy)


# ops graphs name that no binding or composite serves under that name; `kind.overload` keys serve one overload
_BUILTIN_IMPLS = {"aten::to.prim_Device": _to_prim, "aten::to.prim_dtype": _to_prim_dtype,
                  "aten::to.prim_other": _to_prim_dtype,
"aten::_convolution": _convolution, "aten::pad": _pad,
                  "aten::scaled_dot_product_attention": _sdpa, "aten::__interpolate": _interpolate,
                  "aten::adaptive_max_pool1d": _adaptive_max_pool1d,
                  "aten::_nested_tensor_from_mask_left_aligned": _nested_tensor_from_mask_left_aligned,
                  "aten::_nested_tensor_from_mask": _no_nested_tensors("aten::_nested_tensor_from_mask"),
                  "aten::to_padded_tensor": _no_nested_tensors("aten::to_padded_tensor")}
_BUILTIN_IMPLS.update(("aten::%s.vec" % name, _upsample_vec(mode, name.endswith("_aa"))) for name, mode in (
    ("upsample_nearest1d", "nearest"), ("upsample_nearest2d", "nearest"), ("upsample_nearest3d", "nearest"),
    ("_upsample_nearest_exact1d", "nearest-exact"), ("_upsample_nearest_exact2d", "nearest-exact"),
    ("_upsample_nearest_exact3d", "nearest-exact"), ("upsample_linear1d", "linear"),
    ("upsample_bilinear2d", "bilinear"), ("upsample_trilinear3d", "trilinear"), ("upsample_bicubic2d", "bicubic"),
    ("_upsample_bilinear2d_aa", "bilinear"), ("_upsample_bicubic2d_aa", "bicubic"),
    ("_upsample_lanczos2d_aa", "lanczos")))

_callables = dict(_BUILTIN_IMPLS)


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
                 "aten::exp": math.exp, "aten::log": math.log,
                 "aten::all": all, "aten::any": any}   # all.bool/any.int...: over a list of numbers


def _is_scalar(v):
    return isinstance(v, (int, float, bool)) and not isinstance(v, cthtorch.Tensor)


def _raise(msg="Exception", cls=None):
    exc = RuntimeError
    if cls:
        import builtins
        exc = getattr(builtins, cls.rpartition(".")[2], RuntimeError)
    e = exc(msg)
    e._script_class = cls or "builtins.RuntimeError"   # loaded modules report it as torch.jit.Error
    raise e


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
    "aten::format": format_string,
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
    "aten::__contains__": lambda c, x: x in c,
    "aten::device": lambda name: cthtorch.device(name),
    "aten::list": list,
    "aten::is_floating_point": lambda t: t.is_floating_point(),
    "aten::dropout_": lambda t, p, train: cthtorch.nn.functional.dropout(t, p, train, inplace=True),
}


# ---------------------------------------------------------------- lowering

class _Slots:
    """Register numbers for a graph's values (one flat list per run, shared
    by nested blocks) and the constants pre-filled into it."""

    def __init__(self):
        self.index = {}
        self.template = []

    def __call__(self, v):
        i = self.index.get(v)
        if i is None:
            i = self.index[v] = len(self.template)
            n = v.node()
            self.template.append(n._constant_value() if n.kind() == "prim::Constant" else None)
        return i

    def converted(self, v, type_str):
        """The slot of v as the op wants it: a constant dtype/layout/memory
        format is converted once, here; others at run time (None: no need)."""
        conv = _convert_arg(v.node()._constant_value(), type_str) if v.node().kind() == "prim::Constant" else None
        raw = self(v)
        if v.node().kind() == "prim::Constant":
            if conv is not self.template[raw]:
                self.template.append(conv)
                return len(self.template) - 1, None
            return raw, None
        base = (type_str or "").rstrip("?")
        return raw, (type_str if base in ("ScalarType", "Layout", "MemoryFormat", "Device") else None)


class _Program:
    """A block lowered to a list of steps over register slots."""
    __slots__ = ("steps", "outputs", "inputs", "temps")

    def __init__(self, block, slots):
        self.inputs = [slots(v) for v in block.inputs()]
        self.steps = [s for s in (_lower_node(n, slots) for n in block.nodes()) if s is not None]
        self.outputs = [slots(v) for v in block.outputs()]
        # what the block's nodes made, dropped when it ends: a loop body's temporaries are freed each
        # iteration (as eager frees them), so the allocator hands the same warm memory back
        self.temps = sorted({slots(o) for n in block.nodes() if n.kind() != "prim::Constant"
                             for o in n.outputs()} - set(self.outputs))

    def run(self, regs):
        for s in self.steps:
            s(regs)
        out = [regs[i] for i in self.outputs]
        for i in self.temps:
            regs[i] = None
        return out


def _bind_outputs(outs, node_kind):
    if len(outs) == 1:
        o = outs[0]

        def bind1(regs, r):
            regs[o] = r
        return bind1
    if not outs:
        return lambda regs, r: None

    def bind(regs, r):
        if len(r) != len(outs):
            raise RuntimeError("%s: expected %d values, got %d" % (node_kind, len(outs), len(r)))
        for o, x in zip(outs, r):
            regs[o] = x
    return bind


def _op_step(fn, pos, kw, convs, out, outs, kind):
    """The step for one op call; fixed arities skip building lists."""
    if convs or len(outs) != 1:
        bind = _bind_outputs(outs, kind)
        kw_items = list(kw.items())

        def general(regs):
            args = [regs[i] if c is None else _convert_arg(regs[i], c) for i, c in zip(pos, convs[:len(pos)])] \
                if convs else [regs[i] for i in pos]
            kwargs = {k: (regs[i] if not convs or convs[len(pos) + j] is None
                          else _convert_arg(regs[i], convs[len(pos) + j]))
                      for j, (k, i) in enumerate(kw_items)}
            bind(regs, fn(*args, **kwargs))
        return general
    if kw:
        kw_items = list(kw.items())

        def with_kw(regs):
            regs[out] = fn(*[regs[i] for i in pos], **{k: regs[i] for k, i in kw_items})
        return with_kw
    if len(pos) == 1:
        a, = pos

        def step1(regs):
            regs[out] = fn(regs[a])
        return step1
    if len(pos) == 2:
        a, b = pos

        def step2(regs):
            regs[out] = fn(regs[a], regs[b])
        return step2
    if len(pos) == 3:
        a, b, c = pos

        def step3(regs):
            regs[out] = fn(regs[a], regs[b], regs[c])
        return step3

    def stepn(regs):
        regs[out] = fn(*[regs[i] for i in pos])
    return stepn


def _is_default(v, default):
    n = v.node()
    if n.kind() != "prim::Constant":
        return False
    c = n._constant_value()
    return c is default or (type(c) is type(default) and not isinstance(c, cthtorch.Tensor) and c == default)


def _lower_frozen_linear(n, slots):
    """aten::linear with a constant weight: W^T is made once and each run is
    one addmm (the graph keeps torch's aten::linear)."""
    x, w, b = n.inputs()
    wv = w.node()._constant_value() if w.node().kind() == "prim::Constant" else None
    if not isinstance(wv, cthtorch.Tensor) or wv.dim() != 2 or wv.requires_grad or \
            b.node().kind() != "prim::Constant":
        return None
    bv = b.node()._constant_value()
    if bv is not None and (not isinstance(bv, cthtorch.Tensor) or bv.requires_grad):
        return None
    wt = wv.t().contiguous()
    xi, o = slots(x), slots(n.output())
    linear = op_callable("aten::linear")
    addmm, mm = cthtorch.addmm, cthtorch.mm

    def frozen_linear(regs):
        xv = regs[xi]
        if xv.dim() != 2:
            regs[o] = linear(xv, wv, bv)
        elif bv is None:
            regs[o] = mm(xv, wt)
        else:
            regs[o] = addmm(bv, xv, wt)
    return frozen_linear


def _lower_op(n, slots):
    """An aten op: positional slots for required arguments, the rest by name
    (torch's Python signatures take `alpha` of add.Scalar only by keyword)."""
    k = n.kind()
    if k == "aten::linear" and len(n.inputs()) == 3:
        step = _lower_frozen_linear(n, slots)
        if step is not None:
            return step
    fn, pos, kw, convs = op_call_args(n, slots)
    outs = [slots(o) for o in n.outputs()]
    return _op_step(fn, pos, kw, convs, outs[0] if len(outs) == 1 else None, outs, k)


def op_call_args(n, slots):
    """How an aten node calls its Python op: (callable, positional slots,
    {keyword: slot}, conversions: per argument, the type whose int id a
    run must convert, or [] when none needs it). The C interpreter's
    lowering (jit/_c_interpreter.py) shares it."""
    ins = n.inputs()
    schema = n.maybeSchema()
    fn = _BUILTIN_IMPLS.get("%s.%s" % (n.kind(), schema.overload_name)) if schema is not None else None
    fn = fn or op_callable(n.kind())
    pos, kw, convs = [], {}, []
    if schema is None:
        pos = [slots(v) for v in ins]
    else:
        kw_convs = []
        for a, v in zip(schema.arguments, ins):
            if a.has_default and _is_default(v, a.default_value):
                continue   # the op's own default: one argument fewer to pass
            i, conv = slots.converted(v, a._type_str)
            if a.kwarg_only or a.has_default or kw:
                kw[a.name] = i
                kw_convs.append(conv)
            else:
                pos.append(i)
                convs.append(conv)
        convs += kw_convs
        if not any(c is not None for c in convs):
            convs = []
    return fn, pos, kw, convs


def _lower_node(n, slots):
    k = n.kind()
    ins = [slots(v) for v in n.inputs()]
    outs = [slots(v) for v in n.outputs()]
    bind = _bind_outputs(outs, k)

    if k == "prim::Constant":
        return None   # pre-filled

    if k == "prim::GetAttr":
        name = n.s("name")
        obj, o = ins[0], outs[0]

        def getattr_step(regs):
            regs[o] = getattr(regs[obj], name)
        return getattr_step

    if k == "prim::SetAttr":
        name = n.s("name")
        obj, val = ins

        def setattr_step(regs):
            setattr(regs[obj], name, regs[val])
        return setattr_step

    if k == "prim::CreateObject":
        from .frontend import SCRIPT_CLASSES
        from ._module import ScriptClassObject
        sc = SCRIPT_CLASSES[n.output().type().qualified_name()]
        o = outs[0]

        def create_object(regs):
            regs[o] = ScriptClassObject.make(sc)
        return create_object

    if k == "prim::CallMethod":
        name = n.s("name")

        def call_method(regs):
            args = [regs[i] for i in ins]
            bind(regs, getattr(args[0], name)(*args[1:]))
        return call_method

    if k == "prim::PythonOp":       # an @ignore'd function or method, called in Python
        fn = n.ival("value")

        def python_op(regs):
            bind(regs, fn(*[regs[i] for i in ins]))
        return python_op

    if k == "prim::CallFunction":
        def call_function(regs):
            args = [regs[i] for i in ins]
            bind(regs, args[0](*args[1:]))
        return call_function

    if k in ("prim::TupleUnpack", "prim::ListUnpack"):
        src = ins[0]
        if len(outs) == 1:
            o = outs[0]

            def unpack1(regs):
                regs[o] = regs[src][0]
            return unpack1
        return lambda regs: bind(regs, regs[src])

    if k == "prim::If":
        cond = ins[0]
        then_p, else_p = _Program(n.blocks()[0], slots), _Program(n.blocks()[1], slots)

        def if_step(regs):
            r = (then_p if regs[cond] else else_p).run(regs)
            for o, x in zip(outs, r):
                regs[o] = x
        return if_step

    if k == "prim::Loop":
        body = _Program(n.blocks()[0], slots)
        trip_i, cond_i, carried = ins[0], ins[1], ins[2:]
        b_iter, b_carried = body.inputs[0], body.inputs[1:]

        def loop_step(regs):
            trip = regs[trip_i]
            cond = regs[cond_i]
            vals = [regs[i] for i in carried]
            i = 0
            while cond and i < trip:
                regs[b_iter] = i
                for bi, x in zip(b_carried, vals):
                    regs[bi] = x
                cond, *vals = body.run(regs)
                i += 1
            for o, x in zip(outs, vals):
                regs[o] = x
        return loop_step

    if k in _SCALAR_BINARY or k in _SCALAR_UNARY:
        scalar = _SCALAR_BINARY.get(k) or _SCALAR_UNARY[k]
        tensor_step = [None]
        o = outs[0] if outs else None

        def arith(regs):
            args = [regs[i] for i in ins]
            if not any(isinstance(a, cthtorch.Tensor) for a in args):   # numbers, str, lists: Python's op
                regs[o] = scalar(*args)
                return
            if tensor_step[0] is None:
                tensor_step[0] = _lower_op(n, slots)
            tensor_step[0](regs)
        if any(isinstance(v.type(), _ir.TensorType) for v in n.inputs()):
            return _lower_op(n, slots)
        return arith

    if k == "aten::slice" and n.inputs() and not isinstance(n.inputs()[0].type(), _ir.TensorType):
        # list/str slicing: aten::slice.t / slice.str (start, end, step), None for an open end
        src, lo, hi, st = (ins + [None, None, None])[:4]
        o = outs[0]

        def slice_step(regs):
            regs[o] = regs[src][slice(None if lo is None else regs[lo], None if hi is None else regs[hi],
                                      1 if st is None else regs[st])]
        return slice_step

    if k in ("prim::TensorExprGroup", "prim::FusionGroup"):
        from ._fuser import DynamicFusedKernel
        return DynamicFusedKernel(n.g("Subgraph")).step(ins, outs)

    if k == "prim::TupleConstruct" and named_tuple_class(n) is not None:
        make, o = named_tuple_class(n)._make, outs[0]

        def named_tuple(regs):
            regs[o] = make([regs[i] for i in ins])
        return named_tuple

    if k in _PRIM_PURE:
        fn = _PRIM_PURE[k]

        def pure(regs):
            bind(regs, fn(*[regs[i] for i in ins]))
        return pure

    if k.startswith("prim::") and k != "prim::NumToTensor":
        raise RuntimeError("The JIT interpreter does not run %s nodes yet" % k)
    return _lower_op(n, slots)


def named_tuple_class(n):
    """The Python class a TupleConstruct node builds when its type is a NamedTuple (PackedSequence), else None."""
    return getattr(n.outputs()[0].type(), "py_class", None)


def run_node(n, inputs):
    """Runs one node on the given input values (constant propagation uses it)."""
    slots = _Slots()
    for v in n.inputs():
        slots(v)
    step = _lower_node(n, slots)
    regs = list(slots.template)
    for v, x in zip(n.inputs(), inputs):
        regs[slots.index[v]] = x
    step(regs)
    return [regs[slots.index[o]] for o in n.outputs()]


def _log_executor(ex, graph):
    """With CTHTORCH_JIT_LOG_EXECUTOR=1, says once per graph which executor runs it."""
    if os.environ.get("CTHTORCH_JIT_LOG_EXECUTOR", "0") in ("", "0"):
        return
    if ex.c_program is not None:
        calls = sum(1 for c in ex.c_program.code if c[0] == "CALL")
        what = "the C interpreter (%d instructions, %d Python calls)" % (len(ex.c_program.code), calls)
    else:
        what = "the Python executor"
    first = next(iter(graph.block().nodes()), None)
    sys.stderr.write("cthtorch.jit: graph %x%s runs in %s\n"
                     % (id(graph), " (" + first.sourceRange() + ")" if first is not None and first.sourceRange()
                        else "", what))


class GraphExecutor:
    """A graph lowered once, run many times. With fuse, it runs a copy of
    the graph whose elementwise runs are prim::TensorExprGroups (what
    graph_for shows), as torch's executor optimizes a scripted graph."""

    def __init__(self, graph, fuse=False):
        if fuse:
            from ._fuser import fuse_scripted
            from ._passes.licm import hoist_loop_invariant_views
            opt = graph.copy()
            if hoist_loop_invariant_views(opt.block()) + fuse_scripted(opt.block()):
                graph = opt
        self.graph = graph
        self.optimized = fuse
        # the C interpreter (jit/_c_interpreter.py) when enabled: every graph lowers there, through
        # CALLs of Python steps where a node has no instruction; this executor stays the reference
        self.c_program = None
        from . import _c_interpreter
        if _c_interpreter.enabled():
            self.c_program = _c_interpreter.lower(graph)
        _log_executor(self, graph)
        if self.c_program is None:
            slots = _Slots()
            self._prog = _Program(graph.block(), slots)
            self._template = slots.template
            self._n_in = len(self._prog.inputs)

    @property
    def run(self):
        """What runs the graph: the C program itself where there is one (one Python call fewer)."""
        return self.c_program if self.c_program is not None else self.__call__

    def __call__(self, *args):
        if self.c_program is not None:
            return self.c_program(*args)
        if len(args) != self._n_in:
            raise RuntimeError("expected %d inputs, got %d" % (self._n_in, len(args)))
        regs = self._template.copy()
        for i, a in zip(self._prog.inputs, args):
            regs[i] = a
        out = self._prog.run(regs)
        return out[0] if len(out) == 1 else tuple(out)


class ProfilingGraphExecutor:
    """What a ScriptFunction / ScriptMethod runs: the graph as it is for its
    first calls, then the optimized one (loop-invariant views hoisted,
    elementwise runs fused), as torch's profiling executor optimizes only
    after profiled runs. A function run once or twice (a trace's check, a
    test) never waits for the C compiler."""
    PROFILED_RUNS = 2

    def __init__(self, graph, owner=None):
        self._source = graph
        self._owner = owner      # a method's module: its submodules' methods are inlined when optimizing
        self._runs = 0
        self._ex = GraphExecutor(graph)
        self._run = self._ex.run

    @property
    def graph(self):
        return self._ex.graph

    @property
    def optimized(self):
        return self._ex.optimized

    def __call__(self, *args):
        if self._runs <= self.PROFILED_RUNS:
            self._runs += 1
            if self._runs > self.PROFILED_RUNS:
                src = self._source
                if self._owner is not None and src.findNode("prim::CallMethod") is not None:
                    # as torch's executor inlines: no interpreter-to-interpreter call per submodule
                    from ._passes import inline_calls
                    src = inline_calls(src, self._owner)
                self._ex = GraphExecutor(src, fuse=True)
                self._run = self._ex.run
        return self._run(*args)


def run_graph(graph, *args):
    return GraphExecutor(graph)(*args)
