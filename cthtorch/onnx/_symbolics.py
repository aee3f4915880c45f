"""aten -> ONNX symbolic functions (opsets 13..20) and their registry.

Each symbolic is `fn(g, *inputs)` as in torch.onnx: g is a GraphContext,
inputs are the ONNX graph's values for the aten node's inputs (non-tensor
arguments as constants that symbolic_helper reads). It returns the value(s)
standing for the aten node's output(s). The registry maps an op name to
(since opset, fn) entries; register_custom_op_symbolic adds to it."""
import math

import cthtorch

from . import symbolic_helper as sh
from .errors import SymbolicValueError

MIN_OPSET, MAX_OPSET = 13, 20

_registry = {}   # name -> {since_opset: fn}
_custom = {}     # name -> {opset: fn}, registered by users


def _sym(*names, since=MIN_OPSET):
    def deco(fn):
        for n in names:
            _registry.setdefault(n, {})[since] = fn
        return fn
    return deco


def lookup(name, opset):
    """(fn, None) for the symbolic of name at opset, else (None, the lowest
    opset that has one, or None). In-place aten ops (`add_`) export as their
    out-of-place form, as torch's exporter rewrites them."""
    for table in (_custom, _registry):
        for key in (name, name[:-1] if name.endswith("_") and not name.endswith("__") else None):
            versions = table.get(key) if key else None
            if not versions:
                continue
            usable = [v for v in versions if v <= opset]
            if usable:
                return versions[max(usable)], None
    versions = _registry.get(name) or _custom.get(name)
    return None, (min(versions) if versions else None)


def register(name, fn, opset):
    _custom.setdefault(name, {})[opset] = fn


def unregister(name, opset):
    versions = _custom.get(name)
    if versions and opset in versions:
        del versions[opset]


# -- helpers
def _ints(v, desc="argument"):
    c = sh.get_const(v, desc)
    return [c] if isinstance(c, int) else list(c)


def _int64_vector(g, v):
    """A list argument (constant or with traced sizes in it) as a 1-D int64 tensor."""
    if sh.is_constant(v):
        return g.constant(_ints(v), dtype=cthtorch.int64)
    n = v.node()
    if n.kind() != "prim::ListConstruct":
        raise SymbolicValueError("Failed to export a node: a list of ints must be a list construct", v)
    parts = []
    for x in n.inputs():
        if sh.is_constant(x):
            parts.append(g.constant([int(sh.get_const(x))], dtype=cthtorch.int64))
        else:
            x = x if sh.dtype_of(x) == "Long" else g.op("Cast", x, to_i=7)
            parts.append(g.op("Unsqueeze", x, g.constant([0])) if sh.rank_of(x) in (0, None) else x)
    return parts[0] if len(parts) == 1 else g.op("Concat", *parts, axis_i=0)


def _axes(g, axes):
    return g.constant(list(axes), dtype=cthtorch.int64)


def _rank(v):
    r = sh.rank_of(v)
    if r is None:
        raise SymbolicValueError("Failed to export a node: the rank of this input is not known", v)
    return r


def _pool_args(kernel, stride, padding, dilation, n):
    k = kernel * n if len(kernel) == 1 else kernel
    s = (stride * n if len(stride) == 1 else stride) if stride else k
    p = padding * n if len(padding) == 1 else padding
    d = None if dilation is None else (dilation * n if len(dilation) == 1 else dilation)
    return list(k), list(s), list(p) + list(p), d


# -- activations and elementwise
def _unary(op):
    return lambda g, x, *rest: g.op(op, x)


for _name, _op in [("relu", "Relu"), ("sigmoid", "Sigmoid"), ("tanh", "Tanh"), ("exp", "Exp"), ("log", "Log"),
                   ("sqrt", "Sqrt"), ("neg", "Neg"), ("abs", "Abs"), ("erf", "Erf"), ("reciprocal", "Reciprocal"),
                   ("floor", "Floor"), ("ceil", "Ceil"), ("sin", "Sin"), ("cos", "Cos"), ("sign", "Sign"),
                   ("logical_not", "Not")]:
    _sym("aten::" + _name)(_unary(_op))

for _name in ("dropout", "feature_dropout", "alpha_dropout", "feature_alpha_dropout"):
    @_sym("aten::" + _name)
    def _dropout(g, x, p, train):
        if sh.get_const(train, "dropout's train"):
            return g.op("Dropout", x, g.constant(float(sh.get_const(p)), dtype=cthtorch.float32),
                        g.constant(True), outputs=2)[0]
        return x   # dropout in eval is the identity, as in torch's exports


@_sym("aten::contiguous", "aten::clone", "aten::detach", "prim::NumToTensor", "aten::ScalarImplicit",
      "aten::lift_fresh")
def _identity(g, x, *rest):
    return x


@_sym("aten::Int", "aten::Float")
def _scalar_cast(g, x, *rest):
    want = "Long" if g.original_node.kind() == "aten::Int" else "Float"
    return x if sh.dtype_of(x) == want else g.op("Cast", x, to_i=sh.onnx_dtype(want))


@_sym("aten::to", "aten::type_as", "aten::float", "aten::long", "aten::int", "aten::double", "aten::bool",
      "aten::half")
def _to(g, x, *rest):
    want = sh.dtype_of(g.original_node.output())
    if want is None or want == sh.dtype_of(x):
        return x
    return g.op("Cast", x, to_i=sh.onnx_dtype(want))


@_sym("aten::gelu")
def _gelu(g, x, approximate=None):
    approx = "none" if approximate is None else sh.get_const(approximate)
    if g.opset >= 20:
        return g.op("Gelu", x, approximate_s=approx)
    if approx == "tanh":
        inner = g.op("Mul", sh.scalar_like(g, g.constant(math.sqrt(2 / math.pi)), x),
                     g.op("Add", x, g.op("Mul", sh.scalar_like(g, g.constant(0.044715), x),
                                         g.op("Mul", x, g.op("Mul", x, x)))))
        t = g.op("Add", sh.scalar_like(g, g.constant(1.0), x), g.op("Tanh", inner))
    else:
        t = g.op("Add", sh.scalar_like(g, g.constant(1.0), x),
                 g.op("Erf", g.op("Div", x, sh.scalar_like(g, g.constant(math.sqrt(2.0)), x))))
    return g.op("Mul", g.op("Mul", x, sh.scalar_like(g, g.constant(0.5), x)), t)


@_sym("aten::silu")
def _silu(g, x):
    return g.op("Mul", x, g.op("Sigmoid", x))


@_sym("aten::leaky_relu")
def _leaky_relu(g, x, slope=None, *rest):
    return g.op("LeakyRelu", x, alpha_f=0.01 if slope is None else float(sh.get_const(slope)))


@_sym("aten::elu")
def _elu(g, x, alpha, scale, input_scale):
    if sh.get_const(scale) != 1 or sh.get_const(input_scale) != 1:
        raise SymbolicValueError("ONNX Elu has no scale or input_scale", scale)
    return g.op("Elu", x, alpha_f=float(sh.get_const(alpha)))


@_sym("aten::hardtanh")
def _hardtanh(g, x, lo, hi):
    return g.op("Clip", x, sh.scalar_like(g, lo, x), sh.scalar_like(g, hi, x))


@_sym("aten::relu6")
def _relu6(g, x):
    return g.op("Clip", x, sh.scalar_like(g, g.constant(0.0), x), sh.scalar_like(g, g.constant(6.0), x))


@_sym("aten::hardsigmoid")
def _hardsigmoid(g, x):
    return g.op("HardSigmoid", x, alpha_f=1 / 6)


@_sym("aten::hardswish", since=14)
def _hardswish(g, x):
    return g.op("HardSwish", x)


@_sym("aten::softplus")
def _softplus(g, x, beta, threshold):
    b = float(sh.get_const(beta))
    if b == 1:
        return g.op("Softplus", x)
    bc = sh.scalar_like(g, g.constant(b), x)
    return g.op("Div", g.op("Softplus", g.op("Mul", x, bc)), bc)


def _as_dtype(g, v, st):
    """v as a tensor of scalar type st: a Python-number constant becomes a
    constant of that dtype, a graph value of another dtype is cast."""
    c = sh._const(v)
    if c is not sh._NOT_CONST and not isinstance(c, cthtorch.Tensor):
        return g.constant(c, dtype=sh.torch_dtype(st))
    if c is not sh._NOT_CONST and c.dim() == 0:
        return g.constant(c.to(sh.torch_dtype(st)))
    return v if sh.dtype_of(v) in (st, None) else g.op("Cast", v, to_i=sh.onnx_dtype(st))


_COMPARISONS = ("Equal", "Greater", "Less")


def _binary(op):
    def fn(g, a, b, alpha=None):
        # torch's type promotion happened in the trace: compute in the output's
        # dtype (comparisons: in the dtype of their tensor operand)
        st = sh.dtype_of(g.original_node.output())
        if op in _COMPARISONS or st is None:
            tensor_side = b if sh.is_constant(a) else a
            st = sh.dtype_of(tensor_side) or "Float"
        a, b = _as_dtype(g, a, st), _as_dtype(g, b, st)
        if alpha is not None and not sh.is_none(alpha) and sh.get_const(alpha) != 1:
            b = g.op("Mul", b, _as_dtype(g, alpha, st))
        return g.op(op, a, b)
    return fn


_sym("aten::add")(_binary("Add"))
_sym("aten::sub")(_binary("Sub"))
_sym("aten::mul")(_binary("Mul"))
_sym("aten::pow")(_binary("Pow"))
_sym("aten::maximum")(_binary("Max"))
_sym("aten::minimum")(_binary("Min"))
_sym("aten::eq")(_binary("Equal"))
_sym("aten::gt")(_binary("Greater"))
_sym("aten::lt")(_binary("Less"))


@_sym("aten::rsub")
def _rsub(g, a, b, alpha=None):
    return _binary("Sub")(g, b, a, alpha)


@_sym("aten::div")
def _div(g, a, b, rounding_mode=None):
    mode = None if rounding_mode is None or sh.is_none(rounding_mode) else sh.get_const(rounding_mode)
    q = _binary("Div")(g, a, b)
    fl = sh.dtype_of(g.original_node.output()) in ("Float", "Double", "Half", "BFloat16")
    if mode == "floor":
        return g.op("Floor", q) if fl else q   # int64 Div truncates: exact for the nonnegative sizes traced
    if mode == "trunc" and fl:
        return g.op("Mul", g.op("Sign", q), g.op("Floor", g.op("Abs", q)))
    if mode is None and sh.dtype_of(a) == "Long" and fl:
        return g.op("Div", g.op("Cast", a, to_i=1), g.op("Cast", sh.scalar_like(g, b, a), to_i=1))
    return q


@_sym("aten::where")
def _where(g, c, a, b, *rest):
    return g.op("Where", c, a, sh.scalar_like(g, b, a))


# -- linear algebra
@_sym("aten::matmul", "aten::mm", "aten::bmm")
def _matmul(g, a, b, *rest):
    return g.op("MatMul", a, b)


@_sym("aten::linear")
def _linear(g, x, w, b=None):
    if _rank(x) == 2 and b is not None and not sh.is_none(b):
        return g.op("Gemm", x, w, b, alpha_f=1.0, beta_f=1.0, transB_i=1)
    y = g.op("MatMul", x, g.op("Transpose", w, perm_i=[1, 0]))
    return y if b is None or sh.is_none(b) else g.op("Add", y, b)


@_sym("aten::addmm")
def _addmm(g, c, a, b, beta=None, alpha=None):
    be = 1.0 if beta is None else float(sh.get_const(beta))
    al = 1.0 if alpha is None else float(sh.get_const(alpha))
    return g.op("Gemm", a, b, c, alpha_f=al, beta_f=be)


@_sym("aten::t")
def _t(g, x):
    return x if _rank(x) < 2 else g.op("Transpose", x, perm_i=[1, 0])


@_sym("aten::transpose")
def _transpose(g, x, d0, d1):
    r = _rank(x)
    a, b = sh.get_const(d0) % r, sh.get_const(d1) % r
    if a == b:
        return x
    perm = list(range(r))
    perm[a], perm[b] = perm[b], perm[a]
    return g.op("Transpose", x, perm_i=perm)


@_sym("aten::permute")
def _permute(g, x, dims):
    r = _rank(x)
    perm = [d % r for d in _ints(dims)]
    return x if perm == list(range(r)) else g.op("Transpose", x, perm_i=perm)


# -- shapes
@_sym("aten::view", "aten::reshape", "aten::_unsafe_view")
def _reshape(g, x, shape):
    return g.op("Reshape", x, _int64_vector(g, shape))


@_sym("aten::flatten")
def _flatten(g, x, start, end):
    r = _rank(x)
    s, e = sh.get_const(start) % max(r, 1), sh.get_const(end) % max(r, 1)
    if r == 0:
        return g.op("Reshape", x, g.constant([1]))
    if s == 1 and e == r - 1:
        return g.op("Flatten", x, axis_i=1)
    if s == e:
        return x
    if e == r - 1:
        return g.op("Reshape", x, g.constant([0] * s + [-1]))
    # Reshape's 0 copies the input's dim at the same index, so the dims after
    # the merged ones come from the input's shape
    shape = g.op("Shape", x)
    tail = g.op("Slice", shape, g.constant([e + 1]), g.constant([r]), g.constant([0]))
    parts = ([g.op("Slice", shape, g.constant([0]), g.constant([s]), g.constant([0]))] if s else []) + \
        [g.constant([-1]), tail]
    return g.op("Reshape", x, g.op("Concat", *parts, axis_i=0))


@_sym("aten::unsqueeze")
def _unsqueeze(g, x, dim):
    d = sh.get_const(dim)
    return g.op("Unsqueeze", x, _axes(g, [d % (_rank(x) + 1)]))


@_sym("aten::squeeze")
def _squeeze(g, x, dim=None):
    if dim is None or sh.is_none(dim):
        return g.op("Squeeze", x)
    r, sizes = _rank(x), sh.sizes_of(x)
    dims = [d % max(r, 1) for d in _ints(dim)]
    dims = [d for d in dims if sizes is None or sizes[d] == 1]   # torch leaves non-1 dims alone
    return x if not dims else g.op("Squeeze", x, _axes(g, dims))


@_sym("aten::size")
def _size(g, x, dim=None):
    shape = g.op("Shape", x)
    if dim is None or sh.is_none(dim):
        return shape
    return g.op("Gather", shape, g.constant(sh.get_const(dim) % _rank(x)), axis_i=0)


@_sym("aten::cat", "aten::concat")
def _cat(g, tensors, dim):
    ins = [v for v in tensors.node().inputs() if sh.sizes_of(v) != [0]]   # torch's cat skips empty 1-D tensors
    if tensors.node().kind() != "prim::ListConstruct":
        raise SymbolicValueError("Failed to export cat: its tensors must be a list construct", tensors)
    r = _rank(ins[0])
    return g.op("Concat", *ins, axis_i=sh.get_const(dim) % r)


@_sym("aten::stack")
def _stack(g, tensors, dim):
    ins = list(tensors.node().inputs())
    d = sh.get_const(dim) % (_rank(ins[0]) + 1)
    return g.op("Concat", *[g.op("Unsqueeze", t, _axes(g, [d])) for t in ins], axis_i=d)


@_sym("aten::select")
def _select(g, x, dim, index):
    idx = index if not sh.is_constant(index) else g.constant(int(sh.get_const(index)))
    return g.op("Gather", x, idx, axis_i=sh.get_const(dim) % _rank(x))


@_sym("aten::slice")
def _slice(g, x, dim, start=None, end=None, step=None):
    st = 0 if start is None or sh.is_none(start) else sh.get_const(start)
    en = (1 << 63) - 1 if end is None or sh.is_none(end) else sh.get_const(end)
    sp = 1 if step is None else sh.get_const(step)
    d = sh.get_const(dim) % _rank(x)
    return g.op("Slice", x, g.constant([st]), g.constant([min(en, (1 << 63) - 1)]), _axes(g, [d]), g.constant([sp]))


@_sym("aten::chunk", "aten::split", "aten::unsafe_chunk", "aten::unsafe_split")
def _split(g, x, arg, dim):
    return _split_outputs(g, x, sh.get_const(dim) % _rank(x))


def _split_outputs(g, x, d):
    # the traced outputs of the following prim::ListUnpack give each piece's size
    unpack = [u.user for u in g.original_node.output().uses() if u.user.kind() == "prim::ListUnpack"]
    if not unpack:
        raise SymbolicValueError("Failed to export a split whose pieces are not unpacked", g.original_node.output())
    sizes = [o.type().sizes()[d] for o in unpack[0].outputs()]
    return list(g.op("Split", x, g.constant(sizes), axis_i=d, outputs=len(sizes)))


@_sym("aten::expand")
def _expand(g, x, size, implicit=None):
    shape = _int64_vector(g, size)
    # -1 keeps the input's size: ONNX Expand broadcasts, so 1 does the same
    if sh.is_constant(size):
        shape = g.constant([1 if s == -1 else s for s in _ints(size)])
    return g.op("Expand", x, shape)


@_sym("aten::zeros", "aten::ones")
def _zeros(g, size, dtype=None, *rest):
    out = g.original_node.output()
    st = sh.dtype_of(out) or "Float"
    fill = 0 if g.original_node.kind() == "aten::zeros" else 1
    return g.op("ConstantOfShape", _int64_vector(g, size),
                value_t=cthtorch.tensor([fill], dtype=sh.torch_dtype(st)))


# -- reductions and normalization
def _reduce(op):
    def fn(g, x, dims=None, keepdim=None, dtype=None):
        if g.original_node.inputsSize() == 2:   # sum(x, dtype) / mean(x, dtype): over everything
            dims = None
        kd = 0 if keepdim is None or sh.is_none(keepdim) else int(sh.get_const(keepdim))
        if dims is None or sh.is_none(dims) or _ints(dims) == []:
            return g.op(op, x, keepdims_i=0)
        axes = [d % max(_rank(x), 1) for d in _ints(dims)]
        if op == "ReduceSum" or g.opset >= 18:
            return g.op(op, x, _axes(g, axes), keepdims_i=kd)
        return g.op(op, x, axes_i=axes, keepdims_i=kd)
    return fn


_sym("aten::mean")(_reduce("ReduceMean"))
_sym("aten::sum")(_reduce("ReduceSum"))


@_sym("aten::softmax", "aten::_softmax")
def _softmax(g, x, dim, *rest):
    return g.op("Softmax", x, axis_i=sh.get_const(dim) % max(_rank(x), 1))


@_sym("aten::log_softmax", "aten::_log_softmax")
def _log_softmax(g, x, dim, *rest):
    return g.op("LogSoftmax", x, axis_i=sh.get_const(dim) % max(_rank(x), 1))


@_sym("aten::batch_norm")
def _batch_norm(g, x, w, b, mean, var, training, momentum, eps, *rest):
    if sh.get_const(training, "batch_norm's training"):
        raise SymbolicValueError("Failed to export batch_norm in training mode: export the model in eval mode "
                                 "(training=TrainingMode.EVAL, the default)", x)
    c = (sh.sizes_of(x) or [None, None])[1]
    if sh.is_none(w):
        w = g.constant([1.0] * c, dtype=sh.torch_dtype(sh.dtype_of(x)))
    if sh.is_none(b):
        b = g.constant([0.0] * c, dtype=sh.torch_dtype(sh.dtype_of(x)))
    return g.op("BatchNormalization", x, w, b, mean, var, epsilon_f=float(sh.get_const(eps)),
                momentum_f=1 - float(sh.get_const(momentum)))


@_sym("aten::layer_norm")
def _layer_norm(g, x, shape, w, b, eps, *rest):
    n = len(_ints(shape))
    e = float(sh.get_const(eps))
    dt = sh.torch_dtype(sh.dtype_of(x))
    width = 1
    for s in _ints(shape):
        width *= s
    if g.opset >= 17:
        if sh.is_none(w):
            w = g.constant(cthtorch.ones(_ints(shape), dtype=dt))
        args = [x, w] if sh.is_none(b) else [x, w, b]
        return g.op("LayerNormalization", *args, axis_i=-n, epsilon_f=e)
    axes = list(range(-n, 0))
    mean = g.op("ReduceMean", x, axes_i=axes, keepdims_i=1)
    d = g.op("Sub", x, mean)
    var = g.op("ReduceMean", g.op("Mul", d, d), axes_i=axes, keepdims_i=1)
    y = g.op("Div", d, g.op("Sqrt", g.op("Add", var, g.constant(e, dtype=dt))))
    if not sh.is_none(w):
        y = g.op("Mul", y, w)
    if not sh.is_none(b):
        y = g.op("Add", y, b)
    return y


@_sym("aten::embedding")
def _embedding(g, weight, indices, *rest):
    return g.op("Gather", weight, indices, axis_i=0)


# -- convolution and pooling
def _conv(g, x, w, b, stride, padding, dilation, transposed, output_padding, groups):
    k = sh.sizes_of(w)
    nd = len(k) - 2
    attrs = dict(kernel_shape_i=list(k[2:]), strides_i=_ints(stride) * (nd if len(_ints(stride)) == 1 else 1),
                 dilations_i=_ints(dilation) * (nd if len(_ints(dilation)) == 1 else 1),
                 group_i=int(sh.get_const(groups)))
    pad = sh.get_const(padding)
    if isinstance(pad, str):
        if pad == "same":
            attrs["auto_pad_s"] = "SAME_UPPER"
        elif pad != "valid":
            raise SymbolicValueError("Failed to export conv: unknown padding %r" % pad, padding)
    else:
        p = _ints(padding) * (nd if len(_ints(padding)) == 1 else 1)
        attrs["pads_i"] = p + p
    args = [x, w] if b is None or sh.is_none(b) else [x, w, b]
    if transposed is not None and sh.get_const(transposed):
        op = _ints(output_padding) * (nd if len(_ints(output_padding)) == 1 else 1)
        if any(op):
            attrs["output_padding_i"] = op
        attrs["kernel_shape_i"] = list(k[2:])
        return g.op("ConvTranspose", *args, **attrs)
    return g.op("Conv", *args, **attrs)


@_sym("aten::_convolution")
def _convolution(g, x, w, b, stride, padding, dilation, transposed, output_padding, groups, *rest):
    return _conv(g, x, w, b, stride, padding, dilation, transposed, output_padding, groups)


@_sym("aten::conv1d", "aten::conv2d", "aten::conv3d")
def _convnd(g, x, w, b, stride, padding, dilation, groups):
    return _conv(g, x, w, b, stride, padding, dilation, None, None, groups)


@_sym("aten::max_pool1d", "aten::max_pool2d", "aten::max_pool3d")
def _max_pool(g, x, kernel, stride, padding, dilation, ceil_mode):
    n = _rank(x) - 2
    k, s, p, d = _pool_args(_ints(kernel), _ints(stride), _ints(padding), _ints(dilation), n)
    return g.op("MaxPool", x, kernel_shape_i=k, strides_i=s, pads_i=p, dilations_i=d,
                ceil_mode_i=int(sh.get_const(ceil_mode)))


@_sym("aten::avg_pool1d", "aten::avg_pool2d", "aten::avg_pool3d")
def _avg_pool(g, x, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override=None):
    if divisor_override is not None and not sh.is_none(divisor_override):
        raise SymbolicValueError("Failed to export avg_pool: ONNX AveragePool has no divisor_override",
                                 divisor_override)
    n = _rank(x) - 2
    k, s, p, _ = _pool_args(_ints(kernel), _ints(stride), _ints(padding), None, n)
    return g.op("AveragePool", x, kernel_shape_i=k, strides_i=s, pads_i=p,
                ceil_mode_i=int(sh.get_const(ceil_mode)), count_include_pad_i=int(sh.get_const(count_include_pad)))


def _adaptive(global_op, op):
    def fn(g, x, output_size):
        sizes = sh.sizes_of(x)
        out = [o if o is not None else sizes[2 + i] for i, o in enumerate(_ints(output_size))]
        if all(o == 1 for o in out):
            return g.op(global_op, x)
        ins = sizes[2:] if sizes else None
        if ins is None or any(i is None or i % o for i, o in zip(ins, out)):
            raise SymbolicValueError("Failed to export an adaptive pool: ONNX has it only where the output size "
                                     "is 1 or divides the input size", x)
        k = [i // o for i, o in zip(ins, out)]
        kw = dict(kernel_shape_i=k, strides_i=k)
        return g.op(op, x, **kw)
    return fn


_sym("aten::adaptive_avg_pool1d", "aten::adaptive_avg_pool2d", "aten::adaptive_avg_pool3d")(
    _adaptive("GlobalAveragePool", "AveragePool"))


@_sym("aten::adaptive_max_pool1d", "aten::adaptive_max_pool2d", "aten::adaptive_max_pool3d")
def _adaptive_max(g, x, output_size):
    if any(u.user.kind() != "prim::TupleUnpack" for u in g.original_node.outputs()[1].uses()) and \
            g.original_node.outputs()[1].hasUses():
        raise SymbolicValueError("Failed to export adaptive_max_pool's indices", g.original_node.outputs()[1])
    return _adaptive("GlobalMaxPool", "MaxPool")(g, x, output_size), None


# -- recurrent cells
@_sym("aten::_fused_lstm_cell")
def _fused_lstm_cell(g, gates, cx):
    """cthtorch's fused LSTM step: gates (N, 4H) in torch's i, f, g, o order."""
    i, f, c, o = g.op("Split", gates, g.constant([sh.sizes_of(cx)[-1]] * 4), axis_i=1, outputs=4)
    cy = g.op("Add", g.op("Mul", g.op("Sigmoid", f), cx), g.op("Mul", g.op("Sigmoid", i), g.op("Tanh", c)))
    hy = g.op("Mul", g.op("Sigmoid", o), g.op("Tanh", cy))
    return hy, cy, gates


@_sym("aten::_fused_gru_cell")
def _fused_gru_cell(g, ig, hg, hx, *rest):
    """cthtorch's fused GRU step: input and hidden gates (N, 3H) in r, z, n order."""
    h = sh.sizes_of(hx)[-1]
    ir, iz, in_ = g.op("Split", ig, g.constant([h] * 3), axis_i=1, outputs=3)
    hr, hz, hn = g.op("Split", hg, g.constant([h] * 3), axis_i=1, outputs=3)
    r = g.op("Sigmoid", g.op("Add", ir, hr))
    z = g.op("Sigmoid", g.op("Add", iz, hz))
    n = g.op("Tanh", g.op("Add", in_, g.op("Mul", r, hn)))
    hy = g.op("Add", n, g.op("Mul", z, g.op("Sub", hx, n)))
    return (hy,) + tuple(ig for _ in range(len(g.original_node.outputs()) - 1))


@_sym("aten::floor_divide")
def _floor_divide(g, a, b):
    q = _binary("Div")(g, a, b)
    # int64 Div truncates, which is floor for the nonnegative sizes a trace computes with
    return g.op("Floor", q) if sh.dtype_of(g.original_node.output()) in ("Float", "Double", "Half") else q


# -- attention
def _attention(g, q, k, v, mask, dropout_p, is_causal, scale):
    if float(sh.get_const(dropout_p)) != 0.0:
        raise SymbolicValueError("Failed to export scaled_dot_product_attention with dropout: export in eval mode",
                                 dropout_p)
    r = _rank(k)
    perm = list(range(r - 2)) + [r - 1, r - 2]
    sc = None if scale is None or sh.is_none(scale) else float(sh.get_const(scale))
    if sc is None:
        d = (sh.sizes_of(q) or [None])[-1]
        if d is None:
            raise SymbolicValueError("Failed to export attention: the head size is not known", q)
        sc = 1.0 / math.sqrt(d)
    st = sh.dtype_of(q)
    scores = g.op("MatMul", g.op("Mul", q, g.constant(sc, dtype=sh.torch_dtype(st))),
                  g.op("Transpose", k, perm_i=perm))
    neg_inf = g.constant(float("-inf"), dtype=sh.torch_dtype(st))
    if sh.get_const(is_causal):
        lq = g.op("Gather", g.op("Shape", q), g.constant([r - 2]), axis_i=0)
        lk = g.op("Gather", g.op("Shape", k), g.constant([r - 2]), axis_i=0)
        ones = g.op("ConstantOfShape", g.op("Concat", lq, lk, axis_i=0), value_t=cthtorch.tensor([True]))
        scores = g.op("Where", g.op("Trilu", ones, upper_i=0), scores, neg_inf)
    if mask is not None and not sh.is_none(mask):
        if sh.dtype_of(mask) == "Bool":
            scores = g.op("Where", mask, scores, neg_inf)
        else:
            scores = g.op("Add", scores, mask)
    return g.op("MatMul", g.op("Softmax", scores, axis_i=-1), v)


@_sym("aten::_scaled_dot_product_fused_attention", since=14)
def _sdpa_fused(g, q, k, v, mask, dropout_p, is_causal, scale, seed):
    """cthtorch's fused attention op; its logsumexp output is for backward only."""
    return _attention(g, q, k, v, mask, dropout_p, is_causal, scale), None


@_sym("aten::scaled_dot_product_attention", since=14)
def _sdpa(g, q, k, v, mask=None, dropout_p=None, is_causal=None, scale=None, *rest):
    return _attention(g, q, k, v, mask, dropout_p if dropout_p is not None else g.constant(0.0),
                      is_causal if is_causal is not None else g.constant(False), scale)
