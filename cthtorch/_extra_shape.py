"""Scatter-into-view ops, splits and in-place metadata changes composed
from existing ops (index_select/where/scatter_reduce carry autograd)."""
import warnings

import numpy as np

import cthtorch
from cthtorch.autograd.function import Function, once_differentiable
from cthtorch._shape_ops import _idx_np, _np
from cthtorch._utils import _wrap_dim
from cthtorch._extra_reduce import _from_np


# ---------------------------------------------------------------- *_scatter
def _embed(input, src, view_of):
    """input with the elements of view_of(input) replaced by src. The view's
    element positions come from applying view_of to an arange, so one
    composite (index_select + where) serves every *_scatter op."""
    pos = view_of(cthtorch.arange(input.numel()).reshape(input.shape))
    if tuple(src.shape) != tuple(pos.shape):
        raise RuntimeError("expected src to have a size equal to the slice of self. src size = %s, slice size = %s"
                           % (list(src.shape), list(pos.shape)))
    p = _idx_np(pos).reshape(-1)
    inv = np.zeros(input.numel(), dtype=np.int64)
    inv[p] = np.arange(p.size)
    mask = np.zeros(input.numel(), dtype=bool)
    mask[p] = True
    flat_src = src.to(input.dtype).reshape(-1)
    if flat_src.numel() == 0:
        return input.clone()
    placed = cthtorch.index_select(flat_src, 0, cthtorch.from_numpy(inv))
    out = cthtorch.where(cthtorch.from_numpy(mask), placed, input.reshape(-1))
    return out.reshape(input.shape)


def select_scatter(input, src, dim, index):
    return _embed(input, src, lambda t: t.select(dim, index))


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    def view(t):
        key = [slice(None)] * t.dim()
        key[_wrap_dim(dim, t.dim())] = slice(start, end, step)
        return t[tuple(key)]
    return _embed(input, src, view)


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    return _embed(input, src, lambda t: cthtorch.diagonal(t, offset, dim1, dim2))


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    return _embed(input, src, lambda t: t.as_strided(size, stride, 0 if storage_offset is None else storage_offset))


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


def unsafe_split(input, split_size, dim=0):
    return cthtorch.split(input, split_size, dim)


def unsafe_chunk(input, chunks, dim=0):
    return cthtorch.chunk(input, chunks, dim)


def unsafe_split_with_sizes(input, split_sizes, dim=0):
    return split_with_sizes(input, split_sizes, dim)


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
    return input.reshape(-1)


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


def fill_diagonal_(self, fill_value, wrap=False):
    from cthtorch._shape_ops import masked_fill
    if self.dim() < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.dim() > 2 and len(set(self.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    shape = tuple(self.shape)
    mask = np.zeros(shape, dtype=bool)
    if self.dim() == 2:
        h, w = shape
        # the diagonal steps w + 1 through the flat layout; wrap continues past the square
        flat = np.arange(0, h * w, w + 1)
        mask.reshape(-1)[flat if wrap else flat[:min(h, w)]] = True
    else:
        i = np.arange(shape[0])
        mask[tuple([i] * self.dim())] = True
    r = masked_fill(self, cthtorch.from_numpy(mask), fill_value)
    self.copy_(r)
    return self


# ---------------------------------------------------------------- index_reduce
_IDENTITY = {"prod": 1, "mean": 0, "amax": -np.inf, "amin": np.inf}
_UFUNC = {"prod": np.multiply, "mean": np.add, "amax": np.maximum, "amin": np.minimum}


class _IndexReduce(Function):
    """index_reduce along dim 0 of numpy-moved arrays; its backward follows
    PyTorch's: mean divides by the count, amax/amin share among ties, prod
    takes the product of the other members."""
    @staticmethod
    def forward(ctx, input, source, dim, index, reduce, include_self):
        x = np.moveaxis(_np(input), dim, 0)
        s = np.moveaxis(_np(source), dim, 0)
        idx = _idx_np(index).reshape(-1)
        r = x.astype(np.float64 if x.dtype.kind == "f" else x.dtype, copy=True)
        hit = np.zeros(x.shape[0], dtype=bool)
        hit[idx] = True
        if not include_self:
            ident = _IDENTITY[reduce]
            r[hit] = ident if np.isfinite(ident) or r.dtype.kind == "f" else (
                np.iinfo(r.dtype).min if ident < 0 else np.iinfo(r.dtype).max)
        _UFUNC[reduce].at(r, idx, s)
        cnt = np.zeros(x.shape[0], dtype=np.int64)
        np.add.at(cnt, idx, 1)
        cnt = (cnt + (1 if include_self else 0)).reshape((-1,) + (1,) * (x.ndim - 1))
        if reduce == "mean":
            safe = np.where(cnt > 0, cnt, 1)
            r = np.where(hit.reshape(cnt.shape), r / safe if r.dtype.kind == "f" else r // safe, r)
        ctx.args = (dim, idx, reduce, include_self, x, s, r, hit, cnt)
        ctx.save_for_backward(input, source)   # only so once_differentiable links a double backward
        return _from_np(np.moveaxis(r, 0, dim), input.dtype)

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        dim, idx, reduce, include_self, x, s, r, hit, cnt = ctx.args
        ga = np.moveaxis(_np(g), dim, 0).astype(np.float64)
        hit_b = hit.reshape((-1,) + (1,) * (x.ndim - 1))
        keep_x = 1.0 if include_self else 0.0
        if reduce == "mean":
            gx = np.where(hit_b, ga * keep_x / np.where(cnt > 0, cnt, 1), ga)
            gs = ga[idx] / cnt[idx]
        elif reduce in ("amax", "amin"):
            eq_x = (x == r) & include_self
            eq_s = s == r[idx]
            n_eq = eq_x.astype(np.float64)
            np.add.at(n_eq, idx, eq_s)
            n_eq = np.where(n_eq > 0, n_eq, 1)
            gx = np.where(hit_b, ga * eq_x / n_eq, ga)
            gs = ga[idx] * eq_s / n_eq[idx]
        else:
            others = np.ones_like(r, dtype=np.float64)
            np.multiply.at(others, idx, s)
            gx = np.where(hit_b, ga * others * keep_x, ga)
            gs = np.empty(s.shape, dtype=np.float64)
            for row in np.unique(idx):
                members = np.flatnonzero(idx == row)
                vals = s[members].astype(np.float64)
                # product of every other member: prefix * suffix cumulative products
                pre = np.cumprod(np.concatenate([np.ones_like(vals[:1]), vals[:-1]]), axis=0)
                suf = np.cumprod(np.concatenate([vals[:0:-1], np.ones_like(vals[:1])]), axis=0)[::-1]
                base = x[row] if include_self else 1.0
                gs[members] = ga[row] * pre * suf * base
        gx, gs = _from_np(np.moveaxis(gx, 0, dim), g.dtype), _from_np(np.moveaxis(gs, 0, dim), g.dtype)
        return gx, gs, None, None, None, None


def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError("index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got %s." % reduce)
    if index.dim() > 1:
        raise IndexError("index_reduce_(): Index is supposed to be a vector")
    d = _wrap_dim(dim, input.dim())
    return _IndexReduce.apply(input, source, d, index, reduce, include_self)
