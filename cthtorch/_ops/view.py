"""Scatter-into-view ops, splits, in-place metadata changes and index_reduce,
composed from declared ops (clone + view + copy_, strided fills, scatter_reduce)."""
import warnings

import cthtorch
from cthtorch.autograd.function import Function
from cthtorch._ops.shape import _needs_grad
from cthtorch._utils import _dtype_name, _warn_once, _wrap_dim


# ---------------------------------------------------------------- *_scatter
def _scatter_into(input, src, view_of):
    """PyTorch's *_scatter: a copy of input whose view view_of(copy) holds src."""
    out = input.clone()
    view = view_of(out)
    if tuple(src.shape) != tuple(view.shape):
        raise RuntimeError("expected src to have a size equal to the slice of self. src size = %s, slice size = %s"
                           % (list(src.shape), list(view.shape)))
    view.copy_(src)
    return out


class _ViewScatter(Function):
    """The gradient of a *_scatter is the op itself: input gets grad with the
    view zeroed, src gets the view of grad (both differentiable again)."""
    @staticmethod
    def forward(ctx, input, src, view_of):
        ctx.view_of, ctx.src_dtype = view_of, src.dtype
        return _scatter_into(input, src, view_of)

    @staticmethod
    def backward(ctx, g):
        view_of = ctx.view_of
        g_src = view_of(g)
        g_input = _view_scatter(g, cthtorch.zeros(tuple(g_src.shape), dtype=g.dtype, device=g.device), view_of)
        return g_input, g_src.to(ctx.src_dtype, copy=True), None


def _view_scatter(input, src, view_of):
    if _needs_grad(input, src):
        return _ViewScatter.apply(input, src, view_of)
    return _scatter_into(input, src, view_of)


def select_scatter(input, src, dim, index):
    return _view_scatter(input, src, lambda t: t.select(dim, index))


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    def view(t):
        key = [slice(None)] * t.dim()
        key[_wrap_dim(dim, t.dim())] = slice(start, end, step)
        return t[tuple(key)]
    return _view_scatter(input, src, view)


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    return _view_scatter(input, src, lambda t: cthtorch.diagonal(t, offset, dim1, dim2))


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    return _view_scatter(input, src, lambda t: t.as_strided(size, stride, 0 if storage_offset is None
                                                            else storage_offset))


# ---------------------------------------------------------------- splits
def split_with_sizes(input, split_sizes, dim=0):
    d = _wrap_dim(dim, input.dim())
    n = input.shape[d]
    if sum(split_sizes) != n:
        raise RuntimeError("split_with_sizes expects split_sizes to sum exactly to %d (input tensor's size at "
                           "dimension %d), but got split_sizes=%s" % (n, d, list(split_sizes)))
    for s in split_sizes:
        if s < 0:
            raise RuntimeError("split_with_sizes expects split_sizes have only non-negative entries, but got "
                               "split_sizes=%s" % list(split_sizes))
    return cthtorch.split(input, list(split_sizes), d)


class _UnsafeSplit(Function):
    """torch's unsafe splits: the pieces share input's memory but are no views to autograd (no _base, each its
    own version counter from 0: .data of split's views), so in-place changes of them or of input are not
    refused as split's multi-output views are; one graph node for all, whose gradient is the pieces'
    gradients concatenated (zeros for the pieces that got none)"""
    @staticmethod
    def forward(ctx, input, pieces, dim):
        ctx.dim, ctx.shapes = dim, [tuple(q.shape) for q in pieces]
        return tuple(q.data for q in pieces)

    @staticmethod
    def backward(ctx, *grads):
        return cthtorch.cat(list(grads), ctx.dim), None, None


def _unsafe(node, input, pieces, dim):
    d = _wrap_dim(dim, input.dim())
    if not _needs_grad(input):
        return tuple(q.data for q in pieces)
    cls = _UNSAFE_NODES.get(node)
    if cls is None:
        from cthtorch._sparse_tensor import name_node
        cls = _UNSAFE_NODES[node] = name_node(type(node, (_UnsafeSplit,), {}), node)
    return cls.apply(input, pieces, d)


_UNSAFE_NODES = {}


def _int_arg(fname, name, v, pos):
    """v as torch's argument parser takes an int, else its TypeError"""
    if isinstance(v, bool) or isinstance(v, float) or not hasattr(v, "__index__"):
        raise TypeError("%s(): argument '%s' (position %d) must be int, not %s" % (fname, name, pos,
                                                                                  type(v).__name__))
    return v.__index__()


def unsafe_split(input, split_size, dim=0, _pos=2):
    split_size = _int_arg("unsafe_split", "split_size", split_size, _pos)
    return _unsafe("UnsafeSplitBackward0", input, cthtorch.split(input, split_size, dim), dim)


def unsafe_chunk(input, chunks, dim=0, _pos=2):
    # torch's unsafe_chunk is unsafe_split by the chunk size
    chunks = _int_arg("unsafe_chunk", "chunks", chunks, _pos)
    return _unsafe("UnsafeSplitBackward0", input, cthtorch.chunk(input, chunks, dim), dim)


# the methods: torch's parser counts their arguments after self
UNSAFE_METHODS = {"unsafe_split": lambda self, split_size, dim=0: unsafe_split(self, split_size, dim, 1),
                  "unsafe_chunk": lambda self, chunks, dim=0: unsafe_chunk(self, chunks, dim, 1)}


def unsafe_split_with_sizes(input, split_sizes, dim=0):
    return _unsafe("UnsafeSplitWithSizesBackward0", input, split_with_sizes(input, split_sizes, dim), dim)


def narrow_copy(input, dim, start, length):
    return input.narrow(dim, start, length).clone()


def _dir_split(name, min_dim, pick_dim):
    def op(input, indices_or_sections):
        if input.dim() < min_dim:
            raise RuntimeError("torch.%s requires a tensor with at least %d dimension, but got a tensor with %d "
                               "dimensions!" % (name, min_dim, input.dim()))
        d = pick_dim(input)
        if isinstance(indices_or_sections, int):
            n = input.shape[d]
            if indices_or_sections == 0 or n % indices_or_sections:
                raise RuntimeError("torch.%s attempted to split along dimension %d, but the size of the dimension %d "
                                   "is not divisible by the split_size %d!" % (name, d, n, indices_or_sections))
        return cthtorch.tensor_split(input, indices_or_sections, d)
    op.__name__ = name
    return op


hsplit = _dir_split("hsplit", 1, lambda t: 1 if t.dim() > 1 else 0)
vsplit = _dir_split("vsplit", 2, lambda t: 0)
dsplit = _dir_split("dsplit", 3, lambda t: 2)


def ravel(input):
    return input.contiguous().view(-1)   # torch's: ViewBackward0, over CloneBackward0 when it copies


# ---------------------------------------------------------------- in-place metadata (set_ onto a view)
def _meta_inplace(name, view):
    def op(self, *args, **kwargs):
        if self.requires_grad and cthtorch.is_grad_enabled():
            raise NotImplementedError("cthtorch: %s on a tensor that requires grad is not implemented (autograd "
                                      "does not track in-place view changes)" % name)
        self.set_(view(self, *args, **kwargs))
        return self
    op.__name__ = name
    return op


def _squeeze(t, dim=None):
    return t.squeeze() if dim is None else t.squeeze(dim)


def _t(t):
    if t.dim() > 2:
        raise RuntimeError("t_() expects a tensor with <= 2 dimensions, but self is %dD" % t.dim())
    return t.t()


METHODS_META = {
    "t_": _t,
    "transpose_": lambda t, d0, d1: t.transpose(d0, d1),
    "swapaxes_": lambda t, d0, d1: t.transpose(d0, d1),
    "swapdims_": lambda t, d0, d1: t.transpose(d0, d1),
    "unsqueeze_": lambda t, d: t.unsqueeze(d),
    "squeeze_": _squeeze,
    "as_strided_": lambda t, size, stride, storage_offset=None: t.as_strided(
        size, stride, t.storage_offset() if storage_offset is None else storage_offset),
}


def resize_as_(self, the_template, *, memory_format=None):
    return self.resize_(the_template.shape)


def resize(self, *sizes):
    """Deprecated autograd-aware resize: only a reshape to the same numel."""
    warnings.warn("non-inplace resize is deprecated")
    if len(sizes) == 1 and not isinstance(sizes[0], int):
        sizes = tuple(sizes[0])
    numel = 1
    for s in sizes:
        numel *= s
    if numel != self.numel():
        raise RuntimeError("requested resize to %s (%d elements in total), but the given tensor has a size of %s "
                           "(%d elements). autograd's resize can only change the shape of a given tensor, while "
                           "preserving the number of elements. " % ("x".join(map(str, sizes)), numel,
                                                                    "x".join(map(str, self.shape)), self.numel()))
    return self.contiguous().view(sizes)


def resize_as(self, tensor):
    warnings.warn("non-inplace resize_as is deprecated")
    return resize(self, tuple(tensor.shape))


def _diagonal_views(t, wrap):
    """The elements fill_diagonal_ writes, as strided views of t (PyTorch's
    walk: one step of every stride at once; for a tall matrix with wrap, the
    same step continues after the square part, skipping one row)."""
    step = sum(t.stride())
    n = min(t.shape) if t.dim() == 2 else t.shape[0]
    views = [t.as_strided((n,), (step,), t.storage_offset())]
    h, w = t.shape[0], t.shape[-1]
    if wrap and t.dim() == 2 and h > w + 1:
        extra = (t.numel() + w) // (w + 1) - n
        views.append(t.as_strided((extra,), (step,), t.storage_offset() + t.stride(0) * (w + 1)))
    return views


def fill_diagonal_(self, fill_value, wrap=False):
    if self.dim() < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.dim() > 2 and len(set(self.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    if not _needs_grad(self):
        for v in _diagonal_views(self, wrap):
            v.fill_(fill_value)
        return self
    # recorded: a masked_fill whose mask marks the same positions of a contiguous layout
    mask = cthtorch.zeros(tuple(self.shape), dtype=cthtorch.bool, device=self.device)
    for v in _diagonal_views(mask, wrap):
        v.fill_(True)
    self.copy_(self.masked_fill(mask, fill_value))
    return self


# ---------------------------------------------------------------- index_reduce
def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """scatter_reduce with the index vector expanded along dim over source's
    shape: the same C kernels and gradients."""
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError("index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got %s." % reduce)
    if index.dim() > 1:
        raise IndexError("index_reduce_(): Index is supposed to be a vector, but got dim: %d with type: %s and size: %s"
                         % (index.dim(), _dtype_name(index.dtype), list(index.shape)))
    if index.dtype not in (cthtorch.int64, cthtorch.int32):
        raise RuntimeError("index_reduce_(): Expected dtype int32/int64 for index but got: %s"
                           % _dtype_name(index.dtype))
    if input.dtype != source.dtype:
        raise RuntimeError("index_reduce_(): self (%s) and source (%s) must have the same scalar type"
                           % (_dtype_name(input.dtype), _dtype_name(source.dtype)))
    d = _wrap_dim(dim, input.dim())
    _warn_once("index_reduce", "index_reduce() is in beta and the API may change at any time.")
    if source.dim() == 0:
        return cthtorch.scatter_reduce(input, 0, index.reshape(()).long(), source, reduce, include_self=include_self)
    if index.numel() != source.shape[d]:
        raise RuntimeError("index_reduce_(): Number of indices (%d) should be equal to source.size(dim): (%d), for "
                           "dim: %d" % (index.numel(), source.shape[d], d))
    if input.dim() != source.dim() or any(a != b for i, (a, b) in enumerate(zip(input.shape, source.shape)) if i != d):
        raise RuntimeError("source tensor shape must match self tensor shape, excluding the specified dimension. "
                           "Got self.shape = %s source.shape = %s" % (list(input.shape), list(source.shape)))
    shape = [1] * source.dim()
    shape[d] = -1
    idx = index.long().reshape(shape).expand(tuple(source.shape))
    return cthtorch.scatter_reduce(input, d, idx, source, reduce, include_self=include_self)
