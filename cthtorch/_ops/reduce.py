"""Reductions composed from declared ops: count_nonzero, nansum/nanmean,
var_mean/std_mean, aminmax (sort, median, kthvalue, mode: src/ATen/ATSort.c;
cummax/cummin/logcumsumexp: src/ATen/ATScan.c)."""
import warnings

import cthtorch
from cthtorch import return_types as _rt
from cthtorch.autograd.function import Function, _recomputed_grads

from cthtorch._utils import _dtype_name, _wrap_dim


def _is_float(t):
    return t.dtype in (cthtorch.float16, cthtorch.bfloat16, cthtorch.float32, cthtorch.float64)


def _dims(dim, ndim):
    if dim is None:
        return list(range(ndim))
    dims = [dim] if isinstance(dim, int) else list(dim)
    return sorted(set(_wrap_dim(d, ndim) for d in dims))


# ---------------------------------------------------------------- along one dim
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




# ---------------------------------------------------------------- NaN-aware and paired reductions
def count_nonzero(input, dim=None):
    nz = input != 0
    if dim is None:
        return nz.sum()
    return nz.sum(dim=_dims(dim, input.dim()))


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    if input.is_complex():
        raise RuntimeError("nansum on CPU does not support complex inputs")
    if input.requires_grad and cthtorch.is_grad_enabled() and _is_float(input):
        return _Nansum.apply(input, dim, keepdim, dtype)
    return _nansum_values(input, dim, keepdim, dtype)


class _Nansum(Function):
    """nansum as one node (torch's NansumBackward0): the gradient reaches the non-NaN elements"""
    @staticmethod
    def forward(ctx, input, dim, keepdim, dtype):
        ctx.save_for_backward(input)
        ctx.dims = list(range(input.dim())) if dim is None or (not isinstance(dim, int) and len(dim) == 0) \
            else _dims(dim, input.dim())
        ctx.keepdim = keepdim
        return _nansum_values(input, dim, keepdim, dtype)

    @staticmethod
    def backward(ctx, g):
        (input,) = ctx.saved_tensors
        if not ctx.keepdim and input.dim():
            for d in sorted(_wrap_dim(d, input.dim()) for d in ctx.dims):
                g = g.unsqueeze(d)
        keep = cthtorch.logical_not(cthtorch.isnan(input)).to(input.dtype)
        return g.to(input.dtype).expand(tuple(input.shape)) * keep, None, None, None


def _nansum_values(input, dim, keepdim, dtype):
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
    if not (_is_float(input) or input.is_complex()):
        raise RuntimeError("var_mean only support floating point and complex dtypes")
    if isinstance(dim, bool):     # var_mean(x, unbiased)
        dim, unbiased = None, dim
    c = _correction(unbiased, correction)
    dims = list(range(input.dim())) if dim is None else dim
    return _spread_and_mean(_VarMean, cthtorch.var, input, dims, c, keepdim)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    if not (_is_float(input) or input.is_complex()):
        raise RuntimeError("std_mean only support floating point and complex dtypes")
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    c = _correction(unbiased, correction)
    dims = list(range(input.dim())) if dim is None else dim
    return _spread_and_mean(_StdMean, cthtorch.std, input, dims, c, keepdim)


def _spread_and_mean(fn_cls, spread, input, dims, c, keepdim):
    """(var or std, mean): one node for both when input needs grad, as torch's VarMeanBackward0/StdMeanBackward0.
    The spread's warnings (degrees of freedom <= 0) are torch's var_mean()/std_mean() ones, at the caller's line."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if cthtorch.is_grad_enabled() and input.requires_grad:
            res = fn_cls.apply(input, dims, c, keepdim)
        else:
            res = spread(input, dims, correction=c, keepdim=keepdim), cthtorch.mean(input, dims, keepdim=keepdim)
    name = spread.__name__
    for w in caught:
        text = str(w.message)
        if text.startswith(name + "(): "):
            text = name + "_mean" + text[len(name):]
        warnings.warn(w.category(text), stacklevel=4)   # past var_mean and torch_api's wrapper: the caller
    return res


class _SpreadMean(Function):
    spread = None

    @classmethod
    def forward(cls, ctx, input, dims, c, keepdim):
        ctx.save_for_backward(input)
        ctx.args = (dims, c, keepdim)
        x = input.detach()
        return cls.spread(x, dims, correction=c, keepdim=keepdim), cthtorch.mean(x, dims, keepdim=keepdim)

    @classmethod
    def backward(cls, ctx, g_spread, g_mean):
        # the two reductions' own formulas, differentiated through again
        dims, c, keepdim = ctx.args
        gx, = _recomputed_grads(lambda x: (cls.spread(x, dims, correction=c, keepdim=keepdim),
                                           cthtorch.mean(x, dims, keepdim=keepdim)),
                                ctx.saved_tensors, (True,), (g_spread, g_mean))
        return gx, None, None, None


class _VarMean(_SpreadMean):
    spread = staticmethod(cthtorch.var)


class _StdMean(_SpreadMean):
    spread = staticmethod(cthtorch.std)


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


from cthtorch._sparse_tensor import name_node  # noqa: E402
name_node(_Nansum, "NansumBackward0")
name_node(_VarMean, "VarMeanBackward0")
name_node(_StdMean, "StdMeanBackward0")
