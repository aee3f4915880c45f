"""Shape composites (split/chunk/tensor_split/unbind, the stacks over cat,
rot90, tile, broadcasting) and the public gather/scatter/masked_fill/where
entry points over the C kernels (src/ATen/ATScatter.c, ATIndexing.c,
ATShape.c), each written in terms of declared ops so autograd comes from
theirs or from a small Function whose backward is again declared ops."""
import math

import cthtorch
from cthtorch import _C
from cthtorch.autograd.function import Function
from cthtorch._utils import _cpp_dtype_name, _int_arg, _int_list, _warn_once, _wrap_dim
from cthtorch._sparse_tensor import name_node


def _needs_grad(*ts):
    return cthtorch.is_grad_enabled() and any(isinstance(t, cthtorch.Tensor) and t.requires_grad for t in ts)


# ---------------------------------------------------------------- stacks over cat
# cat/concat/concatenate/stack are declared ops (src/ATen/declarations/shape.yaml)
def hstack(tensors, *, out=None):
    tensors = [t if t.dim() else t.reshape(1) for t in tensors]
    return cthtorch.cat(tensors, 0 if tensors[0].dim() == 1 else 1, out=out)


def vstack(tensors, *, out=None):
    return cthtorch.cat([t.reshape(1, -1) if t.dim() < 2 else t for t in tensors], 0, out=out)


row_stack = vstack


def dstack(tensors, *, out=None):
    ts = []
    for t in tensors:
        if t.dim() == 0:
            t = t.reshape(1, 1, 1)
        elif t.dim() == 1:
            t = t.reshape(1, -1, 1)
        elif t.dim() == 2:
            t = t.unsqueeze(-1)
        ts.append(t)
    return cthtorch.cat(ts, 2, out=out)


def column_stack(tensors, *, out=None):
    return cthtorch.cat([t.reshape(-1, 1) if t.dim() <= 1 else t for t in tensors], 1, out=out)


# ---------------------------------------------------------------- split family (views)
from cthtorch.functional import split  # noqa: E402  (torch.functional.split, as in PyTorch)


def chunk(input, chunks, dim=0):
    chunks = _int_arg("chunk", "chunks", 1, chunks)
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: %d" % chunks)
    if input.dim() == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    dim = _wrap_dim(dim, input.dim())
    n = input.shape[dim]
    if n == 0:   # chunks empty pieces, as torch's (its chunk splits with sizes there)
        return _C._internal._split_with_sizes_views(input, [0] * chunks, dim)
    return _C._internal._split_views(input, -(-n // chunks), dim)


def tensor_split(input, indices_or_sections, dim=0):
    dim = _wrap_dim(dim, input.dim())
    n = input.shape[dim]
    if isinstance(indices_or_sections, int):
        k = indices_or_sections
        q, r = divmod(n, k)
        sizes = [q + 1] * r + [q] * (k - r)
        out, start = [], 0
        for s in sizes:
            out.append(input.narrow(dim, start, s))
            start += s
        return tuple(out)
    idx = list(indices_or_sections.tolist() if isinstance(indices_or_sections, cthtorch.Tensor) else indices_or_sections)
    bounds = [0] + [min(max(i, 0), n) for i in idx] + [n]
    return tuple(input.narrow(dim, a, max(b - a, 0)) for a, b in zip(bounds[:-1], bounds[1:]))


def unbind(input, dim=0):
    # one op with several view outputs and one backward node (UnbindBackward0), as torch's
    return _C._internal._unbind_views(input, dim)


# ---------------------------------------------------------------- gathers and scatters
_VF = _C._VariableFunctions


def _d(t):
    return t.detach() if isinstance(t, cthtorch.Tensor) else t


def _gather_values(input, dim, index):
    return _C._internal._gather_c(_d(input), dim, _d(index))


class _Gather(Function):
    @staticmethod
    def forward(ctx, input, dim, index):
        ctx.dim, ctx.shape = dim, input.shape
        ctx.save_for_backward(index)
        return _gather_values(input, dim, index)

    @staticmethod
    def backward(ctx, g):
        (index,) = ctx.saved_tensors
        # scatter_add of the gradient: differentiable again (its src grad is gather)
        return scatter_add(cthtorch.zeros(tuple(ctx.shape), dtype=g.dtype, device=g.device), ctx.dim, index, g), None, None


def _to_out(r, out):
    if out is None:
        return r
    out.resize_(r.shape).copy_(r)
    return out


def gather(input, dim, index, *, sparse_grad=False, out=None):
    dim = _wrap_dim(dim, input.dim())
    r = _Gather.apply(input, dim, index) if _needs_grad(input) else _gather_values(input, dim, index)
    return _to_out(r, out)


def take_along_dim(input, indices, dim=None):
    if dim is None:
        return gather(input.reshape(-1), 0, indices.reshape(-1))
    return gather(input, dim, indices.expand(*[max(a, b) if i != _wrap_dim(dim, input.dim()) else b
                                               for i, (a, b) in enumerate(zip(input.shape, indices.shape))]))


def _scatter_add_values(base, dim, index, src):
    return _C._internal._scatter_c(_d(base), dim, _d(index), _d(src), 0, "sum")


def _scatter_values(base, dim, index, src, reduce=None):
    reduce = "none" if reduce is None else reduce
    if isinstance(src, cthtorch.Tensor):
        return _C._internal._scatter_c(_d(base), dim, _d(index), src.detach(), 0, reduce)
    return _C._internal._scatter_c(_d(base), dim, _d(index), None, src, reduce)


class _Scatter(Function):
    @staticmethod
    def forward(ctx, input, dim, index, src, add):
        ctx.dim, ctx.add, ctx.src_is_tensor = dim, add, isinstance(src, cthtorch.Tensor)
        ctx.src_shape = tuple(src.shape) if ctx.src_is_tensor else None
        ctx.save_for_backward(index)
        return _scatter_add_values(input, dim, index, src) if add else _scatter_values(input, dim, index, src)

    @staticmethod
    def backward(ctx, g):
        (index,) = ctx.saved_tensors
        gsrc = None
        if ctx.src_is_tensor:   # src elements past the index's extent get no gradient
            gsrc = gather(g, ctx.dim, index)
            if tuple(index.shape) != ctx.src_shape:
                pads = []   # zeros after each dim's extent, last dim first (F.pad's order)
                for s, full in reversed(list(zip(index.shape, ctx.src_shape))):
                    pads += [0, full - s]
                gsrc = cthtorch.nn.functional.pad(gsrc, pads)
        if ctx.add or index.numel() == 0:
            gin = g
        else:   # overwritten positions pass no gradient to input
            gin = g.masked_fill(_touched(g, ctx.dim, index), 0)
        return gin, None, None, gsrc, None


# torch's node per overload: scatter.src, scatter.value, scatter_add
class _ScatterSrc(_Scatter):
    pass


class _ScatterValue(_Scatter):
    pass


class _ScatterAdd(_Scatter):
    pass


def scatter(input, dim, index, src=None, *, value=None, reduce=None, out=None):
    if src is None:
        src = value
    dim = _wrap_dim(dim, input.dim())
    if reduce is not None:
        if reduce not in ("add", "multiply"):
            raise RuntimeError("reduce argument must be either add or multiply.")
        _warn_reduce_with_tensor_src(src)
        return _to_out(_scatter_values(input, dim, index, src, reduce), out)
    if _needs_grad(input, src):
        fn = _ScatterSrc if isinstance(src, cthtorch.Tensor) else _ScatterValue
        return _to_out(fn.apply(input, dim, index, src, False), out)
    return _to_out(_scatter_values(input, dim, index, src), out)


def _warn_reduce_with_tensor_src(src):
    if isinstance(src, cthtorch.Tensor):
        _warn_once("scatter_reduce_src", "The reduce argument of torch.scatter with Tensor src is deprecated and "
                   "will be removed in a future PyTorch release. Use torch.scatter_reduce instead for more "
                   "reduction options.")


def scatter_add(input, dim, index, src):
    dim = _wrap_dim(dim, input.dim())
    if _needs_grad(input, src):
        return _ScatterAdd.apply(input, dim, index, src, True)
    return _scatter_add_values(input, dim, index, src)


def _reduce_init(reduce, dtype):
    """The identity a slot starts from when include_self=False."""
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if dtype == cthtorch.bool:
        return reduce == "amin"
    if dtype.is_floating_point:
        return -math.inf if reduce == "amax" else math.inf
    info = cthtorch.iinfo(dtype)
    return info.min if reduce == "amax" else info.max


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    dim = _wrap_dim(dim, input.dim())
    reduce = {"max": "amax", "min": "amin"}.get(reduce, reduce)   # torch's aliases
    if reduce not in ("sum", "prod", "mean", "amax", "amin"):
        raise RuntimeError("reduce argument must be either sum, prod, mean, amax or amin, got %s" % reduce)
    if _needs_grad(input, src):
        return _scatter_reduce_grad(input, dim, index, src, reduce, include_self)
    if reduce == "mean":
        if input.dtype == cthtorch.bool:
            raise NotImplementedError('"scatter_gather_tensor_cpu_reduce_mean" not implemented for \'Bool\'')
        total = _scatter_values(input if include_self else _scatter_values(input, dim, index, 0), dim, index, src,
                                "sum")
        ones = cthtorch.ones_like(input)
        count = _scatter_values(ones if include_self else _scatter_values(ones, dim, index, 0), dim, index, 1, "sum")
        r = total / count.clamp(min=1)
        return r if input.is_floating_point() else r.floor().to(input.dtype)
    base = input if include_self else _scatter_values(input, dim, index, _reduce_init(reduce, input.dtype))
    return _scatter_values(base, dim, index, src, reduce)


def _scatter_reduce_grad(input, dim, index, src, reduce, include_self):
    """scatter_reduce recorded from differentiable pieces (scatter, scatter_add,
    gather), with PyTorch's gradients: amax/amin share among ties, mean divides
    by the count, prod takes the product of the others."""
    with cthtorch.no_grad():
        r = scatter_reduce(input.detach(), dim, index, src.detach(), reduce, include_self=include_self)
    src = src[tuple(slice(0, n) for n in index.shape)] if tuple(src.shape) != tuple(index.shape) else src
    base = input if include_self else scatter(input, dim, index, 0.0)
    if reduce == "sum":
        return scatter_add(base, dim, index, src)
    if reduce == "mean":
        ones = cthtorch.ones_like(input) if include_self else cthtorch.ones_like(input).scatter_(dim, index, 0.0)
        count = _scatter_add_values(ones, dim, index, cthtorch.ones_like(src)).clamp(min=1)
        return scatter_add(base, dim, index, src) / count
    if reduce in ("amax", "amin"):
        return _ScatterExtreme.apply(input, src, dim, index, include_self, r)
    return _ScatterProd.apply(input, src, dim, index, include_self, r)


def _touched(like, dim, index):
    return _scatter_values(cthtorch.zeros(tuple(like.shape), dtype=cthtorch.bool, device=like.device), dim, index, True)


class _ScatterProd(Function):
    """d r / d x = the product of the other factors of x's slot, as torch
    computes it: r / x where x is not 0; for a 0 in self, the slot's product
    with that self set to 1; for the only 0 of a slot among src, the product
    with that 0 set to 1; a src 0 that shares its slot with another 0 gets 0.
    r is this node's own output and the pieces are differentiable ops, so
    double backward flows through them."""
    @staticmethod
    def forward(ctx, input, src, dim, index, include_self, r):
        out = r.clone()
        ctx.dim, ctx.include_self = dim, include_self
        ctx.save_for_backward(input, src, index, out)
        return out

    @staticmethod
    def backward(ctx, g):
        input, src, index, r = ctx.saved_tensors
        dim, include_self = ctx.dim, ctx.include_self
        masked_self = input.masked_fill(input == 0, 1)
        gin = g * scatter_reduce(masked_self, dim, index, src, "prod", include_self=include_self) / masked_self
        if not include_self:
            gin = gin.masked_fill(_touched(input, dim, index), 0.0)
        src_zero = src == 0
        zeros_in_slot = _gather_values(_scatter_add_values(cthtorch.zeros_like(input), dim, index,
                                                           src_zero.to(input.dtype)), dim, index)
        single = src_zero & (zeros_in_slot == 1)
        others = scatter_reduce(input, dim, index, src.masked_fill(single, 1), "prod", include_self=include_self)
        gsrc = cthtorch.where(single, gather(g * others, dim, index),
                              gather(g * r, dim, index) / src.masked_fill(src_zero, 1))
        return gin, gsrc, None, None, None, None


class _ScatterExtreme(Function):
    @staticmethod
    def forward(ctx, input, src, dim, index, include_self, r):
        ctx.dim, ctx.include_self = dim, include_self
        ctx.save_for_backward(input, src, index, r)
        return r.clone()

    @staticmethod
    def backward(ctx, g):
        input, src, index, r = ctx.saved_tensors
        dim = ctx.dim
        # as PyTorch: an excluded self equal to the result still counts in the
        # tie (it only gets no gradient itself)
        hit_self = input == r
        hit_src = src == _gather_values(r, dim, index)
        count = hit_self.to(g.dtype) + _scatter_add_values(cthtorch.zeros_like(g), dim, index, hit_src.to(g.dtype))
        share = g / count.clamp(min=1)
        gin = share * hit_self.to(g.dtype)
        if not ctx.include_self:
            gin = gin.masked_fill(_touched(input, dim, index), 0.0)
        return gin, gather(share, dim, index) * hit_src.to(g.dtype), None, None, None, None


def _inplace(self, r):
    with cthtorch.no_grad():
        self.copy_(r)
    return self


# ---------------------------------------------------------------- masks
class _MaskedFill(Function):
    @staticmethod
    def forward(ctx, input, mask, value):
        ctx.save_for_backward(mask)
        ctx.value_is_tensor = isinstance(value, cthtorch.Tensor)
        return _masked_fill_values(input, mask, value)

    @staticmethod
    def backward(ctx, g):
        (mask,) = ctx.saved_tensors
        gi = masked_fill(g, mask, 0.0)
        gv = None
        if ctx.value_is_tensor:
            gv = (g * mask.to(g.dtype)).sum()
        return gi, None, gv


def _masked_fill_values(input, mask, value):
    if mask.dtype != cthtorch.bool:
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype %s"
                           % _cpp_dtype_name(mask.dtype))
    if isinstance(value, cthtorch.Tensor):
        if value.dim() != 0:
            raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got tensor with %d "
                               "dimension(s)." % value.dim())
        value = value.item()
    # one vectorized select in C (numpy's boolean assignment was ~4x torch's time)
    v = cthtorch.empty((), dtype=input.dtype)
    with cthtorch.no_grad():
        v.fill_(value)   # fill_'s conversion: out-of-range values raise torch's overflow error
    return _C._VariableFunctions.where(mask, v, input)


def _check_masked_fill(name, mask, value, method):
    """torch's TypeError for a mask that is not a tensor or a value that is neither a tensor nor a number
    (numpy scalars are numbers, arrays are not); the method form's signatures leave out input"""
    vt = type(value)
    if isinstance(mask, cthtorch.Tensor) and (isinstance(value, (cthtorch.Tensor, int, float, complex)) or (
            vt.__module__ == "numpy" and vt.__name__ != "ndarray")):
        return
    labels = ["Tensor" if isinstance(a, cthtorch.Tensor) else type(a).__name__ if type(a).__module__ == "builtins"
              else "%s.%s" % (type(a).__module__, type(a).__name__) for a in (mask, value)]
    lead = "" if method else "Tensor input, "
    raise TypeError("%s() received an invalid combination of arguments - got (%s%s), but expected one of:\n"
                    " * (%sTensor mask, Tensor value)\n * (%sTensor mask, Number value)\n"
                    % (name, "" if method else "Tensor, ", ", ".join(labels), lead, lead))


def _masked_fill_m(self, mask, value):
    _check_masked_fill("masked_fill", mask, value, True)
    return masked_fill(self, mask, value)


def _masked_fill_m_(self, mask, value):
    _check_masked_fill("masked_fill_", mask, value, True)
    return _masked_fill_inplace(self, mask, value)


# the method names, which vmap's rules and the aten:: names go by
_masked_fill_m.__name__, _masked_fill_m_.__name__ = "masked_fill", "masked_fill_"


def masked_fill(input, mask, value):
    _check_masked_fill("masked_fill", mask, value, False)
    if _needs_grad(input, value):
        return _MaskedFill.apply(input, mask, value)
    return _masked_fill_values(input, mask, value)


def nonzero(input, *, as_tuple=False, out=None):
    """The C op (cthtorch._C nonzero), with as_tuple's one index per dim."""
    r = _VF.nonzero(input) if out is None else _VF.nonzero(input, out=out)
    if not as_tuple:
        return r
    if input.dim() == 0:
        return (r.reshape(-1),)
    return r.unbind(1)


def where(condition, input=None, other=None, *, out=None):
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    return _VF.where(condition, input, other) if out is None else _VF.where(condition, input, other, out=out)


# ---------------------------------------------------------------- reorderings
# flip/fliplr/flipud/roll are declared ops (shape.yaml); rot90 is their composite
def rot90(input, k=1, dims=(0, 1)):
    k %= 4
    d0, d1 = dims
    if k == 1:
        return cthtorch.flip(input, [d1]).transpose(d0, d1)
    if k == 2:
        return cthtorch.flip(input, [d0, d1])
    if k == 3:
        return cthtorch.flip(input, [d0]).transpose(d0, d1)
    return input.clone()


def repeat(input, *sizes):
    sizes = _int_list("repeat", "repeats", 1, sizes, varargs=True)
    if len(sizes) < input.dim():
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor")
    x = input.reshape((1,) * (len(sizes) - input.dim()) + tuple(input.shape))
    # expand a new axis before each dim, then fold: a view + one copy
    shape, exp = [], []
    for s, r in zip(x.shape, sizes):
        shape += [1, s]
        exp += [r, s]
    target = [s * r for s, r in zip(x.shape, sizes)]
    for n in target:   # torch creates the result first: its text for a negative repeat
        if n < 0:
            raise RuntimeError("Trying to create tensor with negative dimension %d: %s" % (n, target))
    if _needs_grad(input):   # one RepeatBackward0 node, as torch's
        return _Repeat.apply(input, tuple(sizes))
    return _repeat_values(x, shape, exp, target)


def _repeat_values(x, shape, exp, target):
    # a fresh tensor filled through its unfolded view: torch's result never shares memory with the input, and is no
    # view (an in-place op on it is recorded as itself, not through a base)
    out = cthtorch.empty(target, dtype=x.dtype, device=x.device)
    if out.numel():   # an empty result (empty(0).repeat(-1) is tensor([]) in torch) has nothing to fill
        out.view(exp).copy_(x.reshape(shape).expand(exp))
    return out


class _Repeat(Function):
    @staticmethod
    def forward(ctx, input, sizes):
        ctx.in_shape = tuple(input.shape)
        ctx.sizes = sizes
        return repeat(input.detach(), *sizes)

    @staticmethod
    def backward(ctx, g):
        # each repeated axis split off before its dim and summed away
        lead = len(ctx.sizes) - len(ctx.in_shape)
        full = (1,) * lead + ctx.in_shape
        split, axes = [], []
        for i, (r, s) in enumerate(zip(ctx.sizes, full)):
            split += [r, s]
            axes.append(2 * i)
        gi = g.reshape(split).sum(axes) if split else g
        return gi.reshape(ctx.in_shape), None


def tile(input, *args, dims=None):
    # torch.tile(x, (2, 1)), torch.tile(x, dims=(2, 1)) and x.tile(2, 1)
    if dims is None:
        dims = args[0] if len(args) == 1 and not isinstance(args[0], int) else args
    dims = tuple(dims)
    if len(dims) < input.dim():
        dims = (1,) * (input.dim() - len(dims)) + dims
    return repeat(input, *dims)


def broadcast_to(input, size):
    return input.expand(size)


def _broadcast_to_m(self, *size):
    """the method takes the sizes as separate arguments too (x.broadcast_to(2, 3, 4)), as torch's"""
    return self.expand(*size)


def _broadcast_pair(a, b):
    """The broadcast shape (a list) of shapes a and b (lists), with torch's error for sizes
    that cannot broadcast (broadcast_tensors, matmul's batch dimensions)."""
    n = max(len(a), len(b))
    a = [1] * (n - len(a)) + a
    b = [1] * (n - len(b)) + b
    out = []
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError("The size of tensor a (%d) must match the size of tensor b (%d) at non-singleton "
                               "dimension %d" % (x, y, i))
        out.append(y if x == 1 else x)
    return out


def broadcast_tensors(*tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    shape = []
    for t in tensors:
        shape = _broadcast_pair(shape, list(t.shape))
    return tuple(t.expand(shape) for t in tensors)


FUNCTIONS = ["hstack", "vstack", "row_stack", "dstack", "column_stack",
             "split", "chunk", "tensor_split", "unbind", "gather", "take_along_dim", "scatter",
             "scatter_add", "scatter_reduce", "masked_fill", "nonzero",
             "where", "rot90", "tile", "broadcast_to", "broadcast_tensors"]   # broadcast_shapes: cthtorch/functional.py

METHODS = ["chunk", "tensor_split", "unbind", "gather", "take_along_dim", "scatter",
           "scatter_add", "scatter_reduce", "nonzero", "rot90",
           "repeat", "tile"]   # unique: Tensor class body; masked_fill(_): their own argument errors


# composites standing in for a generated binding: they add an overload the
# declarations lack (torch.where(condition) is nonzero(as_tuple=True), and
# nonzero's as_tuple=True unbinds the C result)
_EXTENDS = ("where", "nonzero")


def register():
    """Registers this module's ops (cthtorch/_ops)."""
    from cthtorch import _ops
    g = globals()
    for name in FUNCTIONS:
        if name in _EXTENDS:
            _ops.extend("torch", name, g[name], __name__)
        else:
            _ops.op("torch", name, g[name], __name__)
    for name in METHODS:
        if name in _EXTENDS:
            _ops.extend("Tensor", name, g[name], __name__)
        else:
            _ops.op("Tensor", name, g[name], __name__)
    # in-place variants write the out-of-place result back; copy_ records it, so
    # self takes the result's history (a new grad_fn) as PyTorch's in-place ops do
    _ops.op("Tensor", "scatter_", _scatter_m_, __name__)
    _ops.op("Tensor", "scatter_add_", _scatter_add_m_, __name__)
    _ops.op("Tensor", "scatter_reduce_", _inplace_of(scatter_reduce, "scatter_reduce_"), __name__)
    _ops.op("Tensor", "masked_fill", _masked_fill_m, __name__)
    _ops.op("Tensor", "masked_fill_", _masked_fill_m_, __name__)
    _ops.op("Tensor", "split", _split_m, __name__)
    _ops.op("Tensor", "broadcast_to", _broadcast_to_m, __name__)
    _ops.op("Tensor", "index_add", _index_add_m, __name__)
    _ops.op("Tensor", "index_add_", _index_add_m_, __name__)
    _ops.op("torch", "index_add", _index_add_m, __name__)


def _split_m(self, split_size, dim=0):
    """Tensor.split names its size argument split_size, unlike torch.split (programs pass it by keyword)"""
    return split(self, split_size, dim)


# argument errors name the method as torch's do ("Tensor.split() got an unexpected keyword argument ..."); vmap
# finds its rule by the name
_split_m.__name__, _split_m.__qualname__ = "split", "Tensor.split"


def _index_add_m(self, dim, index, source, *, alpha=1):
    return _index_add(self, dim, index, source, alpha)


def _inplace_of(fn, name):
    """x.op_(...) for an op written in Python: op(x, ...) written back into x.
    Under autograd the op sees a clone, so a backward that saved x does not see
    the overwrite (the generated in-place ops do the same), and copy_ gives x
    the result's history. Results that cannot be cast to x's dtype or do not
    have x's shape are refused, as PyTorch does."""
    def inplace(self, *args, **kwargs):
        if self.requires_grad and self.is_leaf and cthtorch.is_grad_enabled():
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
        r = fn(self.clone() if _needs_grad(self, *args, *kwargs.values()) else self, *args, **kwargs)
        if not cthtorch.can_cast(r.dtype, self.dtype):
            from cthtorch._utils import _dtype_name
            raise RuntimeError("result type %s can't be cast to the desired output type %s"
                               % (_dtype_name(r.dtype), _dtype_name(self.dtype)))
        if tuple(r.shape) != tuple(self.shape):
            raise RuntimeError("output with shape %s doesn't match the broadcast shape %s"
                               % (list(self.shape), list(r.shape)))
        if r.requires_grad:
            return self.copy_(r)
        with cthtorch.no_grad():   # no history to take: skip recording a copy
            self.copy_(r)
        return self
    inplace.__name__ = name
    return inplace


_masked_fill_inplace = _inplace_of(masked_fill, "masked_fill_")

# Without autograd, scatter_, scatter_add_ and index_add_ write into self in C (the kernels' in-place
# forms) instead of computing a copy and writing it back
_scatter_slow_ = _inplace_of(scatter, "scatter_")
_scatter_add_slow_ = _inplace_of(scatter_add, "scatter_add_")
_index_add_slow_ = _inplace_of(_index_add_m, "index_add_")


def _scatter_m_(self, dim, index, src=None, *, value=None, reduce=None):
    if src is None:
        src = value
    if _needs_grad(self, src) or (reduce is not None and reduce not in ("add", "multiply")):
        return _scatter_slow_(self, dim, index, src, value=None, reduce=reduce)
    dim = _wrap_dim(dim, self.dim())
    if reduce is not None:
        _warn_reduce_with_tensor_src(src)
    reduce = "none" if reduce is None else reduce
    if isinstance(src, cthtorch.Tensor):
        return _C._internal._scatter_c(self, dim, _d(index), src, 0, reduce, out=self)
    return _C._internal._scatter_c(self, dim, _d(index), None, src, reduce, out=self)


def _scatter_add_m_(self, dim, index, src):
    if _needs_grad(self, src):
        return _scatter_add_slow_(self, dim, index, src)
    return _C._internal._scatter_c(self, _wrap_dim(dim, self.dim()), _d(index), src, 0, "sum", out=self)


def _index_add_m_(self, dim, index, source, *, alpha=1):
    if _needs_grad(self, source):
        return _index_add_slow_(self, dim, index, source, alpha=alpha)
    return _C._internal._index_add_c(self, dim, _d(index), source, alpha, out=self)


# vmap finds its batching rule (and names the op in its errors) by the method's name, as for split above
for _f, _n in ((_scatter_m_, "scatter_"), (_scatter_add_m_, "scatter_add_"), (_index_add_m_, "index_add_")):
    _f.__name__ = _n


def _dim_index(self, dim, index, like):
    """index (k,) along dim as a scatter index shaped like `like`."""
    d = _wrap_dim(dim, self.dim())
    if self.dim() == 0:
        return d, index.reshape(-1)
    shape = [1] * self.dim()
    shape[d] = -1
    return d, index.reshape(shape).expand(tuple(like.shape))


class _IndexAdd(Function):
    @staticmethod
    def forward(ctx, input, dim, index, source, alpha):
        ctx.dim, ctx.alpha, ctx.src_shape = dim, alpha, tuple(source.shape)
        ctx.save_for_backward(index)
        return _C._internal._index_add_c(input, dim, index, source, alpha)

    @staticmethod
    def backward(ctx, g):
        (index,) = ctx.saved_tensors
        gsrc = g.index_select(ctx.dim, index)
        if tuple(gsrc.shape) != ctx.src_shape:   # a 0-d source of a 1-d self
            gsrc = gsrc.reshape(ctx.src_shape)
        return g, None, None, gsrc * ctx.alpha if ctx.alpha != 1 else gsrc, None


def _index_add(self, dim, index, source, alpha):
    if _needs_grad(self, source) and self.dim() > 0:
        return _IndexAdd.apply(self, _wrap_dim(dim, self.dim()), index, source, alpha)
    if _needs_grad(self, source):
        d, idx = _dim_index(self, dim, index, source)
        src = source * alpha if alpha != 1 else source
        if self.dim() == 0:
            return (self.reshape(1).scatter_add(0, idx, src.reshape(-1))).reshape(())
        return scatter_add(self, d, idx, src)
    return _C._internal._index_add_c(self.detach(), dim, _d(index), _d(source), alpha)


# torch's grad_fn names for the nodes of these Functions
name_node(_Gather, "GatherBackward0")
name_node(_Repeat, "RepeatBackward0")
name_node(_MaskedFill, "MaskedFillBackward0")
name_node(_ScatterSrc, "ScatterBackward0")
name_node(_ScatterValue, "ScatterBackward1")
name_node(_ScatterAdd, "ScatterAddBackward0")
name_node(_IndexAdd, "IndexAddBackward0")
