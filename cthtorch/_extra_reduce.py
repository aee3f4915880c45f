"""Order statistics and NaN-aware reductions composed from sort/gather/sum.

Values are picked with gather (or computed with differentiable ops), so
autograd comes from those ops; only index bookkeeping runs in numpy.
"""
import numpy as np

import cthtorch
from cthtorch import return_types as _rt
from cthtorch.autograd.function import Function

from cthtorch._shape_ops import _np
from cthtorch._utils import _dtype_name, _wrap_dim


def _from_np(a, dtype=None):
    """A tensor owning a copy of numpy data; 0-d stays 0-d (ascontiguousarray would make it 1-d)."""
    r = cthtorch.from_numpy(np.array(a, order="C", copy=True))
    return r if dtype is None or r.dtype == dtype else r.to(dtype)


def _is_float(t):
    return t.dtype in (cthtorch.float16, cthtorch.bfloat16, cthtorch.float32, cthtorch.float64)


def _dims(dim, ndim):
    if dim is None:
        return list(range(ndim))
    dims = [dim] if isinstance(dim, int) else list(dim)
    return sorted(set(_wrap_dim(d, ndim) for d in dims))


# ---------------------------------------------------------------- median family
class _EvenlyPick(Function):
    """A global order statistic: its gradient is spread evenly over every
    element equal to the result (PyTorch's rule for median()/max())."""
    @staticmethod
    def forward(ctx, input, value):
        ctx.save_for_backward(input, value)
        return value.clone()

    @staticmethod
    def backward(ctx, g):
        input, value = ctx.saved_tensors
        mask = cthtorch.isnan(input) if bool(cthtorch.isnan(value)) else (input == value)
        mask = mask.to(g.dtype)
        return g * mask / mask.sum(), None


def _rows(input, dim):
    """input (a 0-d tensor as shape [1]) and dim wrapped, for ops along one dim."""
    d = _wrap_dim(dim, input.dim())
    return (input if input.dim() else input.reshape(1)), d


def _finish(name, input, values, idx, d, keepdim):
    """Drop the reduced dim (kept size 1 so far) and name the pair."""
    if not input.dim():
        values, idx = values.reshape(()), idx.reshape(())
    elif not keepdim:
        values, idx = values.squeeze(d), idx.squeeze(d)
    return getattr(_rt, name)(values, idx)


def _check_nonempty(name, x, d):
    if x.shape[d] == 0:
        raise IndexError("%s(): Expected reduction dim %d to have non-zero size." % (name, d))


def _median_index(x, d, skip_nan):
    """Index along d of each row's lower median. A row holding NaN gives its
    first NaN (median) or the median of its other values (nanmedian)."""
    n = x.shape[d]
    si = cthtorch.sort(x.detach(), dim=d, stable=True).indices   # NaN sorts last, in order
    if not _is_float(x):
        rank = cthtorch.full_like(si.narrow(d, 0, 1), (n - 1) // 2)
    else:
        nan_count = cthtorch.isnan(x.detach()).sum(dim=d, keepdim=True)
        if skip_nan:
            rank = ((n - nan_count - 1) // 2).clamp(min=0)
        else:
            rank = cthtorch.where(nan_count > 0, n - nan_count, cthtorch.full_like(nan_count, (n - 1) // 2))
    return cthtorch.gather(si, d, rank)


def _median(name, input, dim, keepdim, skip_nan):
    if dim is None:
        if input.numel() == 0:
            return cthtorch.full((), float("nan"), dtype=input.dtype)
        flat = input.reshape(-1)
        value = cthtorch.gather(flat.detach(), 0, _median_index(flat, 0, skip_nan)).reshape(())
        if input.requires_grad and cthtorch.is_grad_enabled():
            return _EvenlyPick.apply(input, value)
        return value
    x, d = _rows(input, dim)
    # torch names median() in the empty-dim message of both median and nanmedian
    _check_nonempty("median", x, d)
    idx = _median_index(x, d, skip_nan)
    return _finish(name, input, cthtorch.gather(x, d, idx), idx, d, keepdim)


def median(input, dim=None, keepdim=False):
    return _median("median", input, dim, keepdim, False)


def nanmedian(input, dim=None, keepdim=False):
    return _median("nanmedian", input, dim, keepdim, True)


def kthvalue(input, k, dim=-1, keepdim=False):
    x, d = _rows(input, dim)
    _check_nonempty("kthvalue", x, d)
    if k < 1 or k > x.shape[d]:
        raise RuntimeError("kthvalue(): selected number k out of range for dimension %d" % d)
    idx = cthtorch.sort(x.detach(), dim=d, stable=True).indices.narrow(d, k - 1, 1)
    return _finish("kthvalue", input, cthtorch.gather(x, d, idx), idx, d, keepdim)


def _mode_row(row):
    """Index of the mode: the most frequent value, ties to the smallest value,
    then its last occurrence. NaNs count together, ranked above all values."""
    nan = np.isnan(row) if row.dtype.kind == "f" else np.zeros(row.shape, dtype=bool)
    nan_pos = np.flatnonzero(nan)
    vals, counts = np.unique(row[~nan], return_counts=True)
    if nan_pos.size and (vals.size == 0 or nan_pos.size > counts.max()):
        return nan_pos[-1] if vals.size else nan_pos[0]
    return np.flatnonzero(row == vals[np.argmax(counts)])[-1]


def mode(input, dim=-1, keepdim=False):
    x, d = _rows(input, dim)
    _check_nonempty("mode", x, d)
    a = np.moveaxis(_np(x), d, -1)
    rows = a.reshape(-1, a.shape[-1])
    idx = np.array([_mode_row(r) for r in rows], dtype=np.int64).reshape(a.shape[:-1] + (1,))
    idx = _from_np(np.moveaxis(idx, -1, d))
    return _finish("mode", input, cthtorch.gather(x, d, idx), idx, d, keepdim)


# ---------------------------------------------------------------- NaN-aware and paired reductions
def count_nonzero(input, dim=None):
    nz = input != 0
    if dim is None:
        return nz.sum()
    return nz.sum(dim=_dims(dim, input.dim()))


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    x = cthtorch.where(cthtorch.isnan(input), cthtorch.zeros((), dtype=input.dtype), input) if _is_float(input) \
        else input
    if dim is None or (not isinstance(dim, int) and len(dim) == 0):
        return x.sum(dtype=dtype) if not keepdim else x.sum(dim=list(range(x.dim())), keepdim=True, dtype=dtype)
    return x.sum(dim=dim, keepdim=keepdim, dtype=dtype)


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    if not _is_float(input):
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype but got %s"
                           % _dtype_name(input.dtype))
    count = cthtorch.logical_not(cthtorch.isnan(input)).sum(
        dim=dim if dim is not None else list(range(input.dim())), keepdim=keepdim)
    return nansum(input, dim, keepdim, dtype=dtype) / count


def _correction(unbiased, correction):
    if correction is not None:
        return correction
    return 1 if unbiased is None or unbiased else 0


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    if not _is_float(input):
        raise RuntimeError("var_mean only support floating point and complex dtypes")
    if isinstance(dim, bool):     # var_mean(x, unbiased)
        dim, unbiased = None, dim
    c = _correction(unbiased, correction)
    dims = list(range(input.dim())) if dim is None else dim
    return (cthtorch.var(input, dims, correction=c, keepdim=keepdim),
            cthtorch.mean(input, dims, keepdim=keepdim))


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    if not _is_float(input):
        raise RuntimeError("std_mean only support floating point and complex dtypes")
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    c = _correction(unbiased, correction)
    dims = list(range(input.dim())) if dim is None else dim
    return (cthtorch.std(input, dims, correction=c, keepdim=keepdim),
            cthtorch.mean(input, dims, keepdim=keepdim))


def aminmax(input, *, dim=None, keepdim=False):
    if input.numel() == 0 and dim is None:
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                           "identity.")
    if dim is None:
        dims = list(range(input.dim()))
        if keepdim:
            return _rt.aminmax(cthtorch.amin(input, dims, True), cthtorch.amax(input, dims, True))
        return _rt.aminmax(cthtorch.amin(input), cthtorch.amax(input))
    return _rt.aminmax(cthtorch.amin(input, dim, keepdim), cthtorch.amax(input, dim, keepdim))


def msort(input):
    return cthtorch.sort(input, dim=0).values
