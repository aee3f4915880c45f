"""Shape and data-movement ops written over numpy views of tensor memory.

Each op's forward runs in numpy on zero-copy views (tensor.numpy()) and
returns a new tensor; its backward is a custom autograd Function, so
gradients flow like PyTorch's. This is the straightforward path for these
ops; moving them into ATen kernels is tracked in the issue notes. gather,
scatter (src/value, every reduce), scatter_add and index_add already run in
C (src/ATen/ATScatter.c, the private _gather_c/_scatter_c/_index_add_c ops).
"""
import numpy as np

import cthtorch
from cthtorch import _C
from cthtorch.autograd.function import Function

_NP_UNSUPPORTED = ("bfloat16",)


def _np(t):
    """A numpy view of t's values (bfloat16 goes through float32)."""
    t = t.detach()
    if str(t.dtype) == "torch.bfloat16":
        return t.float().numpy()
    return t.numpy()


def _back(a, like_dtype):
    r = cthtorch.from_numpy(np.ascontiguousarray(a))
    return r if r.dtype == like_dtype else r.to(like_dtype)


def _needs_grad(*ts):
    return cthtorch.is_grad_enabled() and any(isinstance(t, cthtorch.Tensor) and t.requires_grad for t in ts)


def _wrap_dim(d, n):
    if n == 0:
        n = 1
    if d < -n or d >= n:
        raise IndexError("Dimension out of range (expected to be in range of [%d, %d], but got %d)" % (-n, n - 1, d))
    return d + n if d < 0 else d


# ---------------------------------------------------------------- cat / stack
class _Cat(Function):
    @staticmethod
    def forward(ctx, dim, *tensors):
        ctx.dim = dim
        ctx.sizes = [t.shape[dim] if t.dim() else 0 for t in tensors]
        ctx.skip = [t.dim() == 1 and t.shape[0] == 0 for t in tensors]
        return _cat_values(tensors, dim)

    @staticmethod
    def backward(ctx, g):
        out, start = [None], 0
        for size, skip in zip(ctx.sizes, ctx.skip):
            if skip:
                out.append(None)
                continue
            out.append(g.narrow(ctx.dim, start, size))
            start += size
        return tuple(out)


def _cat_values(tensors, dim):
    dt = tensors[0].dtype
    for t in tensors[1:]:
        dt = cthtorch.promote_types(dt, t.dtype)
    parts = [_np(t.to(dt)) for t in tensors if not (t.dim() == 1 and t.shape[0] == 0)]
    if not parts:
        return cthtorch.empty(0, dtype=dt)
    return _back(np.concatenate(parts, axis=dim), dt)


def cat(tensors, dim=0, *, out=None):
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if not isinstance(t, cthtorch.Tensor):
            raise TypeError("expected Tensor as element %d in argument 0, but got %s" % (i, type(t).__name__))
        if t.is_sparse:
            from cthtorch._sparse_ops import cat as sparse_cat
            return sparse_cat(tensors, dim)
    ref = next((t for t in tensors if not (t.dim() == 1 and t.shape[0] == 0)), tensors[0])
    if ref.dim() == 0:
        raise RuntimeError("zero-dimensional tensor (at position %d) cannot be concatenated" % tensors.index(ref))
    dim = _wrap_dim(dim, ref.dim())
    for i, t in enumerate(tensors):
        if t.dim() == 1 and t.shape[0] == 0:
            continue
        if t.dim() != ref.dim():
            raise RuntimeError("Tensors must have same number of dimensions: got %d and %d" % (ref.dim(), t.dim()))
        for d in range(ref.dim()):
            if d != dim and t.shape[d] != ref.shape[d]:
                raise RuntimeError("Sizes of tensors must match except in dimension %d. Expected size %d but got size "
                                   "%d for tensor number %d in the list." % (dim, ref.shape[d], t.shape[d], i))
    r = _Cat.apply(dim, *tensors) if _needs_grad(*tensors) else _cat_values(tensors, dim)
    if out is not None:
        out.resize_(r.shape).copy_(r)
        return out
    return r


concat = concatenate = cat


def stack(tensors, dim=0, *, out=None):
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    for i, t in enumerate(tensors[1:], 1):
        if t.shape != tensors[0].shape:
            raise RuntimeError("stack expects each tensor to be equal size, but got %s at entry 0 and %s at entry %d"
                               % (list(tensors[0].shape), list(t.shape), i))
    dim = _wrap_dim(dim, tensors[0].dim() + 1)
    return cat([t.unsqueeze(dim) for t in tensors], dim, out=out)


def hstack(tensors, *, out=None):
    tensors = [t if t.dim() else t.reshape(1) for t in tensors]
    return cat(tensors, 0 if tensors[0].dim() == 1 else 1, out=out)


def vstack(tensors, *, out=None):
    return cat([t.reshape(1, -1) if t.dim() < 2 else t for t in tensors], 0, out=out)


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
    return cat(ts, 2, out=out)


def column_stack(tensors, *, out=None):
    return cat([t.reshape(-1, 1) if t.dim() <= 1 else t for t in tensors], 1, out=out)


# ---------------------------------------------------------------- split family (views)
def split(tensor, split_size_or_sections, dim=0):
    dim = _wrap_dim(dim, tensor.dim())
    n = tensor.shape[dim]
    if isinstance(split_size_or_sections, int):
        s = split_size_or_sections
        if s <= 0 and n > 0:
            raise RuntimeError("split_size can only be 0 if dimension size is 0, but got dimension size of %d" % n)
        sizes = [s] * (n // s) + ([n % s] if n % s else []) if s else [0]
    else:
        sizes = list(split_size_or_sections)
        if sum(sizes) != n:
            raise RuntimeError("split_with_sizes expects split_sizes to sum exactly to %d (input tensor's size at "
                               "dimension %d), but got split_sizes=%s" % (n, dim, sizes))
    out, start = [], 0
    for s in sizes:
        out.append(tensor.narrow(dim, start, s))
        start += s
    return tuple(out)


def chunk(input, chunks, dim=0):
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: %d" % chunks)
    dim = _wrap_dim(dim, input.dim())
    n = input.shape[dim]
    size = -(-n // chunks) if n else 0
    return split(input, size if size else 1, dim) if n else tuple(input.narrow(dim, 0, 0) for _ in range(1))


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
    dim = _wrap_dim(dim, input.dim())
    return tuple(input.select(dim, i) for i in range(input.shape[dim]))


# ---------------------------------------------------------------- gathers and scatters
def _idx_np(index, name="index"):
    if index.dtype not in (cthtorch.int64, cthtorch.int32, cthtorch.int16, cthtorch.int8, cthtorch.uint8):
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    return _np(index).astype(np.int64)


# The adjoint pair every gather/scatter backward is built from: taking the
# elements at a numpy key, and adding values into zeros at that key. Each is
# the other's backward, so gradients of gradients (create_graph) flow too.
class _TakeKey(Function):
    @staticmethod
    def forward(ctx, x, key):
        ctx.key, ctx.shape = key, tuple(x.shape)
        return _back(_np(x)[key], x.dtype)

    @staticmethod
    def backward(ctx, g):
        return _PutAddKey.apply(g, ctx.key, ctx.shape), None


class _PutAddKey(Function):
    @staticmethod
    def forward(ctx, v, key, shape):
        ctx.key = key
        a = np.zeros(shape, dtype=_np(v).dtype)
        np.add.at(a, key, _np(v))
        return _back(a, v.dtype)

    @staticmethod
    def backward(ctx, g):
        return _TakeKey.apply(g, ctx.key), None, None


class _IndexSelect(Function):
    @staticmethod
    def forward(ctx, input, dim, index):
        ctx.dim, ctx.shape = dim, input.shape
        ctx.save_for_backward(index)
        return _index_select_values(input, dim, index)

    @staticmethod
    def backward(ctx, g):
        (index,) = ctx.saved_tensors
        if len(ctx.shape) == 0:
            return g.sum(), None, None
        # index_add into zeros: the C kernel, or under create_graph its
        # differentiable scatter_add form
        return _index_add(cthtorch.zeros(tuple(ctx.shape), dtype=g.dtype), ctx.dim, index.reshape(-1), g, 1), None, None


def _index_select_values(input, dim, index):
    i = _idx_np(index).reshape(-1)
    n = input.shape[dim] if input.dim() else 1
    if i.size and (i.min() < -n or i.max() >= n):
        raise IndexError("index out of range in self")
    return _back(np.take(_np(input), i, axis=dim) if input.dim() else _np(input)[()] * np.ones(len(i)), input.dtype)


def index_select(input, dim, index, *, out=None):
    if index.dim() > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    dim = _wrap_dim(dim, input.dim())
    r = _IndexSelect.apply(input, dim, index) if _needs_grad(input) else _index_select_values(input, dim, index)
    if out is not None:
        out.resize_(r.shape).copy_(r)
        return out
    return r


_VF = _C._VariableFunctions


def _d(t):
    return t.detach() if isinstance(t, cthtorch.Tensor) else t


def _gather_values(input, dim, index):
    return _VF._gather_c(_d(input), dim, _d(index))


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
        return scatter_add(cthtorch.zeros(tuple(ctx.shape), dtype=g.dtype), ctx.dim, index, g), None, None


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
    return _VF._scatter_c(_d(base), dim, _d(index), _d(src), 0, "sum")


def _scatter_values(base, dim, index, src, reduce=None):
    reduce = "none" if reduce is None else reduce
    if isinstance(src, cthtorch.Tensor):
        return _VF._scatter_c(_d(base), dim, _d(index), src.detach(), 0, reduce)
    return _VF._scatter_c(_d(base), dim, _d(index), None, src, reduce)


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
                gsrc = _PutAddKey.apply(gsrc, tuple(slice(0, s) for s in index.shape), ctx.src_shape)
        if ctx.add or index.numel() == 0:
            gin = g
        else:   # overwritten positions pass no gradient to input
            gin = g.masked_fill(_touched(g, ctx.dim, index), 0)
        return gin, None, None, gsrc, None


def scatter(input, dim, index, src=None, *, value=None, reduce=None, out=None):
    if src is None:
        src = value
    dim = _wrap_dim(dim, input.dim())
    if reduce is not None:
        if reduce not in ("add", "multiply"):
            raise RuntimeError("reduce argument must be either add or multiply.")
        return _to_out(_scatter_values(input, dim, index, src, reduce), out)
    if _needs_grad(input, src):
        return _to_out(_Scatter.apply(input, dim, index, src, False), out)
    return _to_out(_scatter_values(input, dim, index, src), out)


def scatter_add(input, dim, index, src):
    dim = _wrap_dim(dim, input.dim())
    if _needs_grad(input, src):
        return _Scatter.apply(input, dim, index, src, True)
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
        return -np.inf if reduce == "amax" else np.inf
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
    # prod: r / x for every member; zeros would need the product of the others
    if bool((src.detach() == 0).any()) or (include_self and bool((input.detach() == 0).any())):
        raise NotImplementedError("cthtorch: the gradient of scatter_reduce(reduce='prod') with zeros in the "
                                  "input or src is not implemented")
    return _ScatterProd.apply(input, src, dim, index, include_self, r)


def _touched(like, dim, index):
    return _scatter_values(cthtorch.zeros(tuple(like.shape), dtype=cthtorch.bool), dim, index, True)


class _ScatterProd(Function):
    """d r / d x = r / x for each factor x of a slot (no zeros); r is this
    node's own output, so double backward flows through it."""
    @staticmethod
    def forward(ctx, input, src, dim, index, include_self, r):
        out = r.clone()
        ctx.dim, ctx.include_self = dim, include_self
        ctx.save_for_backward(input, src, index, out)
        return out

    @staticmethod
    def backward(ctx, g):
        input, src, index, r = ctx.saved_tensors
        gr = g * r
        touched = _touched(input, ctx.dim, index)
        gin = cthtorch.where(touched, gr / input if ctx.include_self else cthtorch.zeros((), dtype=g.dtype), g)
        return gin, gather(gr, ctx.dim, index) / src, None, None, None, None


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
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype %s" % str(mask.dtype)[6:])
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


def masked_fill(input, mask, value):
    if _needs_grad(input, value):
        return _MaskedFill.apply(input, mask, value)
    return _masked_fill_values(input, mask, value)


def masked_select(input, mask):
    shape = np.broadcast_shapes(tuple(input.shape), tuple(mask.shape))
    # one flat index (a single gather) rather than one index per dim
    flat = mask.expand(shape).reshape(-1)
    return input.expand(shape).reshape(-1)._index([nonzero(flat, as_tuple=True)[0]])


def masked_scatter(input, mask, source):
    a = np.broadcast_to(_np(input), np.broadcast_shapes(tuple(input.shape), tuple(mask.shape))).copy()
    m = np.broadcast_to(_np(mask), a.shape)
    n = int(m.sum())
    if source.numel() < n:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    if _needs_grad(input, source):
        # where(mask, source's first n elements in mask order, input): differentiable in both
        pos = np.cumsum(m.reshape(-1)) - 1
        taken = source.reshape(-1)[cthtorch.from_numpy(np.maximum(pos, 0).astype(np.int64))].reshape(a.shape)
        return cthtorch.where(cthtorch.from_numpy(np.array(m)), taken, input)
    a[m] = _np(source).reshape(-1)[:n]
    return _back(a, input.dtype)


def nonzero(input, *, as_tuple=False, out=None):
    nz = np.nonzero(_np(input) if input.dim() else _np(input).reshape(1))
    if as_tuple:
        if input.dim() == 0:
            return (cthtorch.from_numpy(nz[0].astype(np.int64)),)
        return tuple(cthtorch.from_numpy(np.ascontiguousarray(x.astype(np.int64))) for x in nz)
    r = cthtorch.from_numpy(np.ascontiguousarray(np.stack(nz, axis=1).astype(np.int64))) if input.dim() else \
        cthtorch.zeros((int(nz[0].size), 0), dtype=cthtorch.int64)
    if out is not None:
        out.resize_(r.shape).copy_(r)
        return out
    return r


def argwhere(input):
    return nonzero(input)


def where(condition, input=None, other=None, *, out=None):
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    return _C._VariableFunctions.where(condition, input, other) if out is None else \
        _C._VariableFunctions.where(condition, input, other, out=out)


# ---------------------------------------------------------------- advanced indexing
def _expand_indices(self, indices):
    """Turns a list of index entries (None / int tensors / bool masks with
    None placeholders) into (dims, integer index arrays broadcast together)."""
    dims, arrays = [], []
    i = 0
    while i < len(indices):
        idx = indices[i]
        if idx is None:
            i += 1
            continue
        if idx.dtype in (cthtorch.bool, cthtorch.uint8) and idx.dtype == cthtorch.bool or idx.dtype == cthtorch.uint8:
            m = _np(idx).astype(bool)
            for k in range(m.ndim):
                if i + k >= self.dim() or m.shape[k] != self.shape[i + k]:
                    raise IndexError("The shape of the mask %s at index %d does not match the shape of the indexed "
                                     "tensor %s at index %d" % (list(m.shape), k, list(self.shape), i + k))
            nz = np.nonzero(m)
            for k in range(m.ndim):
                dims.append(i + k)
                arrays.append(nz[k])
            i += max(m.ndim, 1)
            continue
        a = _idx_np(idx)
        n = self.shape[i]
        if a.size and (a.max() >= n or a.min() < -n):
            bad = int(a.max() if a.max() >= n else a.min())
            raise IndexError("index %d is out of bounds for dimension %d with size %d" % (bad, i, n))
        dims.append(i)
        arrays.append(np.where(a < 0, a + n, a))
        i += 1
    try:
        arrays = np.broadcast_arrays(*arrays)
    except ValueError:
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together with shapes %s"
                         % " ".join(str(list(a.shape)) for a in arrays)) from None
    return dims, arrays


def _index_key(self, dims, arrays):
    key = [slice(None)] * self.dim()
    for d, a in zip(dims, arrays):
        key[d] = a
    return tuple(key)


class _Index(Function):
    @staticmethod
    def forward(ctx, self, indices):
        dims, arrays = _expand_indices(self, indices)
        ctx.key, ctx.shape = _index_key(self, dims, arrays), self.shape
        return _back(_np(self)[ctx.key], self.dtype)

    @staticmethod
    def backward(ctx, g):
        return _PutAddKey.apply(g, ctx.key, tuple(ctx.shape)), None


def _index(self, indices):
    if _needs_grad(self):
        return _Index.apply(self, list(indices))
    dims, arrays = _expand_indices(self, indices)
    return _back(_np(self)[_index_key(self, dims, arrays)], self.dtype)


def _index_put_(self, indices, values, accumulate=False):
    m = indices[0] if indices else None
    if (not accumulate and m is not None and m.dtype == cthtorch.bool
            and (m.dim() == 0 or tuple(m.shape) == tuple(self.shape))
            and all(i is None for i in indices[1:]) and values.numel() == 1
            and not (self.requires_grad or values.requires_grad)):
        # x[mask] = scalar: a select in C instead of numpy's boolean assignment
        with cthtorch.no_grad():
            self.copy_(_C._VariableFunctions.where(m, values.reshape(()).to(self.dtype), self))
        return self
    dims, arrays = _expand_indices(self, indices)
    key = _index_key(self, dims, arrays)
    a = _np(self).copy()
    v = _np(values.to(self.dtype))
    try:
        if accumulate:
            np.add.at(a, key, np.broadcast_to(v, a[key].shape))
        else:
            a[key] = v
    except ValueError:
        raise RuntimeError("shape mismatch: value tensor of shape %s cannot be broadcast to indexing result of "
                           "shape %s" % (list(values.shape), list(a[key].shape))) from None
    new = _back(a, self.dtype)
    if self.requires_grad or values.requires_grad:
        # recorded as a differentiable composite: self outside the written positions, values inside
        mask = np.zeros(a.shape, dtype=bool)
        mask[key] = True
        m = cthtorch.from_numpy(mask)
        placed = _IndexPutValues.apply(values, key, tuple(a.shape), self.dtype) if values.requires_grad else None
        keep = self if accumulate else self.masked_fill(m, 0.0)
        result = keep + (placed if placed is not None else (new - keep).detach())
        if self.is_leaf and self.requires_grad and cthtorch.is_grad_enabled():
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
        return _rebase_inplace(self, result)
    with cthtorch.no_grad():
        self.copy_(new)
    return self


class _IndexPutValues(Function):
    @staticmethod
    def forward(ctx, values, key, shape, dtype):
        ctx.key, ctx.vshape = key, values.shape
        a = np.zeros(shape, dtype=_np(values.to(dtype)).dtype)
        a[key] = _np(values.to(dtype))
        return _back(a, dtype)

    @staticmethod
    def backward(ctx, g):
        r = _TakeKey.apply(g, ctx.key)
        # reduce broadcast dims back to the values' shape
        if tuple(r.shape) != tuple(ctx.vshape):
            r = r.sum_to_size(ctx.vshape) if r.dim() >= len(ctx.vshape) else r.reshape(ctx.vshape)
        return r, None, None, None


def _rebase_inplace(self, result):
    """Makes self hold result's values and history (the in-place contract):
    copy_ records a node whose gradient flows to result."""
    self.copy_(result)
    return self


def index_put_(self, indices, values, accumulate=False):
    return _index_put_(self, list(indices), values, accumulate)


def index_put(self, indices, values, accumulate=False):
    return _index_put_(self.clone(), list(indices), values, accumulate)


# ---------------------------------------------------------------- reorderings
def flip(input, dims):
    dims = [dims] if isinstance(dims, int) else list(dims)
    idx = [slice(None)] * input.dim()
    for d in dims:
        idx[_wrap_dim(d, input.dim())] = slice(None, None, -1)
    return _FlipLike.apply(input, tuple(idx)) if _needs_grad(input) else _back(_np(input)[tuple(idx)], input.dtype)


class _FlipLike(Function):
    @staticmethod
    def forward(ctx, input, key):
        ctx.key = key
        return _back(_np(input)[key], input.dtype)

    @staticmethod
    def backward(ctx, g):
        return _FlipLike.apply(g, ctx.key), None


def fliplr(input):
    return flip(input, [1])


def flipud(input):
    return flip(input, [0])


def roll(input, shifts, dims=None):
    if dims is None:
        return roll(input.reshape(-1), shifts, 0).reshape(input.shape)
    shifts = [shifts] if isinstance(shifts, int) else list(shifts)
    dims = [dims] if isinstance(dims, int) else list(dims)
    out = input
    for s, d in zip(shifts, dims):
        d = _wrap_dim(d, input.dim())
        n = input.shape[d]
        if n == 0:
            continue
        s %= n
        if s:
            out = cat([out.narrow(d, n - s, s), out.narrow(d, 0, n - s)], d)
    return out


def rot90(input, k=1, dims=(0, 1)):
    k %= 4
    d0, d1 = dims
    if k == 1:
        return flip(input, [d1]).transpose(d0, d1)
    if k == 2:
        return flip(input, [d0, d1])
    if k == 3:
        return flip(input, [d0]).transpose(d0, d1)
    return input.clone()


def repeat(input, *sizes):
    if len(sizes) == 1 and not isinstance(sizes[0], int):
        sizes = tuple(sizes[0])
    if len(sizes) < input.dim():
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor")
    x = input.reshape((1,) * (len(sizes) - input.dim()) + tuple(input.shape))
    # expand a new axis before each dim, then fold: a view + one copy
    shape, exp = [], []
    for s, r in zip(x.shape, sizes):
        shape += [1, s]
        exp += [r, s]
    out = x.reshape(shape).expand(exp).reshape([s * r for s, r in zip(x.shape, sizes)])
    return out


def tile(input, *args, dims=None):
    # torch.tile(x, (2, 1)), torch.tile(x, dims=(2, 1)) and x.tile(2, 1)
    if dims is None:
        dims = args[0] if len(args) == 1 and not isinstance(args[0], int) else args
    dims = tuple(dims)
    if len(dims) < input.dim():
        dims = (1,) * (input.dim() - len(dims)) + dims
    return repeat(input, *dims)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    if repeats is None:   # repeat_interleave(repeats_tensor)
        r = _np(input).astype(np.int64)
        return cthtorch.from_numpy(np.repeat(np.arange(len(r)), r))
    if dim is None:
        input, dim = input.reshape(-1), 0
    dim = _wrap_dim(dim, input.dim())
    rep = _np(repeats).astype(np.int64) if isinstance(repeats, cthtorch.Tensor) else np.full(input.shape[dim], repeats)
    if rep.size == 1:
        rep = np.full(input.shape[dim], int(rep.reshape(-1)[0]))
    idx = cthtorch.from_numpy(np.repeat(np.arange(input.shape[dim]), rep))
    return index_select(input, dim, idx)


def broadcast_to(input, size):
    return input.expand(size)


def broadcast_shapes(*shapes):
    out = []
    for s in shapes:
        s = [s] if isinstance(s, int) else list(s)
        n = max(len(out), len(s))
        a = [1] * (n - len(out)) + out
        b = [1] * (n - len(s)) + s
        res = []
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y and x != 1 and y != 1:
                raise RuntimeError("Shape mismatch: objects cannot be broadcast to a single shape.  Mismatch is "
                                   "between arg 0 and arg 1.")
            res.append(y if x == 1 else x)
        out = res
    return cthtorch.Size(out)


def broadcast_tensors(*tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    shape = broadcast_shapes(*[t.shape for t in tensors])
    return tuple(t.expand(shape) for t in tensors)


def take(input, index):
    return _index(input.reshape(-1), [index.reshape(-1)]).reshape(index.shape)


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None):
    side = side or ("right" if right else "left")
    s, v = _np(sorted_sequence), _np(input) if isinstance(input, cthtorch.Tensor) else np.asarray(input)
    if s.ndim == 1:
        r = np.searchsorted(s, v, side=side)
    else:
        r = np.stack([np.searchsorted(s[i], v[i], side=side) for i in range(s.shape[0])])
    return cthtorch.from_numpy(np.ascontiguousarray(r.astype(np.int32 if out_int32 else np.int64)))


def bucketize(input, boundaries, *, out_int32=False, right=False):
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def bincount(input, weights=None, minlength=0):
    if input.dim() != 1 or input.is_floating_point():
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    r = np.bincount(_np(input), None if weights is None else _np(weights), minlength)
    return cthtorch.from_numpy(r.astype(np.int64 if weights is None else _np(weights).dtype))


def histc(input, bins=100, min=0, max=0):
    a = _np(input).astype(np.float64)
    lo, hi = (a.min(), a.max()) if min == max and a.size else (min, max)
    h, _ = np.histogram(a, bins=bins, range=(lo, hi))
    return _back(h.astype(np.float64), input.dtype)


FUNCTIONS = ["cat", "concat", "concatenate", "stack", "hstack", "vstack", "row_stack", "dstack", "column_stack",
             "split", "chunk", "tensor_split", "unbind", "index_select", "gather", "take_along_dim", "scatter",
             "scatter_add", "scatter_reduce", "masked_fill", "masked_select", "masked_scatter", "nonzero", "argwhere",
             "where", "index_put", "index_put_", "flip", "fliplr", "flipud", "roll", "rot90", "tile",
             "repeat_interleave", "broadcast_to", "broadcast_shapes", "broadcast_tensors", "take",
             "searchsorted", "bucketize", "bincount", "histc"]
FUNCTIONS = [f for f in FUNCTIONS if f not in ("meshgrid", "broadcast_shapes")]   # in cthtorch/functional.py

METHODS = ["split", "chunk", "tensor_split", "unbind", "index_select", "gather", "take_along_dim", "scatter",
           "scatter_add", "scatter_reduce", "masked_fill", "masked_select", "masked_scatter", "nonzero", "argwhere",
           "index_put", "index_put_", "flip", "fliplr", "flipud", "roll", "rot90", "repeat", "tile",
           "repeat_interleave", "broadcast_to", "take", "bincount", "histc", "_index", "_index_put_"]


def install(namespace):
    for name in FUNCTIONS:
        namespace[name] = globals()[name]
    T = cthtorch.Tensor
    for name in METHODS:
        setattr(T, name, globals()[name])
    # in-place variants write the out-of-place result back; copy_ records it, so
    # self takes the result's history (a new grad_fn) as PyTorch's in-place ops do
    for name in ("scatter", "scatter_add", "masked_fill", "masked_scatter", "scatter_reduce"):
        setattr(T, name + "_", _inplace_of(globals()[name], name + "_"))
    T.index_add = lambda self, dim, index, source, *, alpha=1: _index_add(self, dim, index, source, alpha)
    T.index_add_ = _inplace_of(T.index_add, "index_add_")
    T.index_fill = lambda self, dim, index, value: _index_fill(self, dim, index, value)
    T.index_fill_ = _inplace_of(T.index_fill, "index_fill_")
    T.index_copy = lambda self, dim, index, source: _index_copy(self, dim, index, source)
    T.index_copy_ = _inplace_of(T.index_copy, "index_copy_")

    namespace["index_add"] = T.index_add
    namespace["index_fill"] = T.index_fill
    namespace["index_copy"] = T.index_copy


def _along(self, dim, index):
    key = [slice(None)] * self.dim()
    key[_wrap_dim(dim, self.dim())] = _idx_np(index).reshape(-1)
    return tuple(key)


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
            from cthtorch._extra_reduce import _dtype_name
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


def _dim_index(self, dim, index, like):
    """index (k,) along dim as a scatter index shaped like `like`."""
    d = _wrap_dim(dim, self.dim())
    if self.dim() == 0:
        return d, index.reshape(-1)
    shape = [1] * self.dim()
    shape[d] = -1
    return d, index.reshape(shape).expand(tuple(like.shape))


def _index_add(self, dim, index, source, alpha):
    if _needs_grad(self, source):
        d, idx = _dim_index(self, dim, index, source)
        src = source * alpha if alpha != 1 else source
        if self.dim() == 0:
            return (self.reshape(1).scatter_add(0, idx, src.reshape(-1))).reshape(())
        return scatter_add(self, d, idx, src)
    return _VF._index_add_c(self.detach(), dim, _d(index), _d(source), alpha)


def _index_fill(self, dim, index, value):
    if _needs_grad(self, value):
        m = np.zeros(tuple(self.shape), dtype=bool)
        m[_along(self, dim, index)] = True
        return masked_fill(self, cthtorch.from_numpy(m), value)
    a = _np(self).copy()
    a[_along(self, dim, index)] = value.item() if isinstance(value, cthtorch.Tensor) else value
    return _back(a, self.dtype)


def _index_copy(self, dim, index, source):
    if _needs_grad(self, source):
        d, idx = _dim_index(self, dim, index, source)
        if self.dim() == 0:
            return scatter(self.reshape(1), 0, idx, source.reshape(-1)).reshape(())
        return scatter(self, d, idx, source)
    a = _np(self).copy()
    a[_along(self, dim, index)] = _np(source)
    return _back(a, self.dtype)
