"""Statistics and finite differences composed from existing ops:
quantile, diff, gradient, cov/corrcoef, trapezoid, vander, combinations,
histogram."""
import builtins
import functools
import itertools
import math

import cthtorch
from cthtorch import return_types as _rt
from cthtorch._ops.reduce import _is_float
from cthtorch._utils import _dtype_name, _wrap_dim

_INTERP = ("linear", "lower", "higher", "midpoint", "nearest")


# ---------------------------------------------------------------- quantile
def _quantile(name, input, q, dim, keepdim, interpolation, ignore_nan):
    if input.dtype not in (cthtorch.float32, cthtorch.float64):
        raise RuntimeError("%s() input tensor must be either float or double dtype" % name)
    if interpolation not in _INTERP:
        raise RuntimeError("%s() interpolation must be one of linear, lower, higher, midpoint or nearest, but got %s"
                           % (name, interpolation))
    scalar_q = not isinstance(q, cthtorch.Tensor)
    if scalar_q:
        if not 0 <= q <= 1:
            raise RuntimeError("%s() q must be in the range [0, 1] but got %s" % (name, q))
        q = cthtorch.tensor(q, dtype=input.dtype)
    else:
        if q.dim() > 1:
            raise RuntimeError("%s() q must be a scalar or 1D tensor" % name)
        if q.dtype != input.dtype:
            raise RuntimeError("%s() q tensor must be same dtype as the input tensor" % name)
        if q.numel() and (bool((q < 0).any()) or bool((q > 1).any())):
            raise RuntimeError("%s() q values must be in the range [0, 1]" % name)
    if input.numel() == 0:
        raise RuntimeError("%s() input tensor must be non-empty" % name)
    # rows to reduce: the flattened input, or dim moved last
    if dim is None:
        x = input.reshape(-1)
        out_shape = [1] * input.dim() if keepdim else []
    else:
        d = _wrap_dim(dim, input.dim())
        x = input.movedim(d, -1) if input.dim() else input.reshape(1)
        out_shape = list(input.shape)
        if input.dim():
            if keepdim:
                out_shape[d] = 1
            else:
                del out_shape[d]
    sv = cthtorch.sort(x, dim=-1).values
    n = sv.shape[-1]
    nan_count = cthtorch.isnan(sv.detach()).sum(dim=-1, keepdim=True)
    # ranks keep q's history: linear interpolation is differentiable in q too
    qs = q.reshape(-1).double()
    if ignore_nan:
        valid = (n - nan_count).double()
        ranks = qs * (valid - 1)                       # [..., Q]
        ranks = cthtorch.where(valid > 0, ranks, cthtorch.full_like(ranks.detach(), n - 1))
    else:
        ranks = (qs * (n - 1)).expand(*sv.shape[:-1], qs.numel())
        ranks = cthtorch.where(nan_count > 0, cthtorch.full_like(ranks.detach(), n - 1), ranks)
    if interpolation == "lower":
        ranks = ranks.detach().floor()
    elif interpolation == "higher":
        ranks = ranks.detach().ceil()
    elif interpolation == "nearest":
        ranks = ranks.detach().round()
    below = ranks.detach().floor().long().clamp(0, max(n - 1, 0))
    above = ranks.detach().ceil().long().clamp(0, max(n - 1, 0))
    lo = cthtorch.gather(sv, -1, below)
    hi = cthtorch.gather(sv, -1, above)
    if interpolation in ("linear", "midpoint"):
        w = (ranks - below.double()).to(input.dtype) if interpolation == "linear" \
            else cthtorch.full_like(lo.detach(), 0.5)
        res = cthtorch.lerp(lo, hi, w)
    else:
        res = lo
    if ignore_nan:
        res = cthtorch.where((n - nan_count) > 0, res, cthtorch.full((), math.nan, dtype=res.dtype))
    # [..., Q] -> [Q, *out_shape]
    res = res.movedim(-1, 0).reshape([qs.numel()] + out_shape)
    return res.reshape(out_shape) if scalar_q or q.dim() == 0 else res


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    r = _quantile("quantile", input, q, dim, keepdim, interpolation, False)
    return _into(r, out)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    r = _quantile("nanquantile", input, q, dim, keepdim, interpolation, True)
    return _into(r, out)


def _into(r, out):
    if out is None:
        return r
    out.resize_(r.shape)
    out.copy_(r)
    return out


# ---------------------------------------------------------------- differences
def diff(input, n=1, dim=-1, prepend=None, append=None):
    if input.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError("order must be non-negative but got %d" % n)
    d = _wrap_dim(dim, input.dim())
    parts = [t for t in (prepend, input, append) if t is not None]
    x = cthtorch.cat(parts, d) if len(parts) > 1 else input
    for _ in range(n):
        m = x.shape[d]
        if m == 0:
            break
        a, b = x.narrow(d, 1, m - 1), x.narrow(d, 0, m - 1)
        x = cthtorch.logical_xor(a, b) if x.dtype == cthtorch.bool else a - b
    return x


def _spacing_list(spacing, dims, input):
    if spacing is None:
        return [1.0] * len(dims)
    if isinstance(spacing, (int, float)):
        return [float(spacing)] * len(dims)
    sp = list(spacing)
    if len(sp) == 1 and len(dims) > 1 and not isinstance(sp[0], cthtorch.Tensor):
        sp = sp * len(dims)
    if len(sp) != len(dims):
        raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
                           "arguments to have the same length, but got a spacing argument of length %d and a dim "
                           "argument of length %d." % (len(sp), len(dims)))
    for s in sp:
        if isinstance(s, cthtorch.Tensor) and s.dim() != 0:
            raise NotImplementedError("cthtorch.gradient: coordinate tensors as spacing are not implemented")
    return [float(s) for s in sp]


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    if dim is None:
        dims = list(range(input.dim()))
    else:
        dims = [_wrap_dim(d, input.dim()) for d in ([dim] if isinstance(dim, int) else dim)]
    hs = _spacing_list(spacing, dims, input)
    x = input if _is_float(input) else input.to(cthtorch.get_default_dtype())
    out = []
    for d, h in zip(dims, hs):
        n = x.shape[d]
        if n < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
        sl = lambda s, ln: x.narrow(d, s, ln)
        interior = (sl(2, n - 2) - sl(0, n - 2)) / (2 * h)
        if edge_order == 1:
            first = (sl(1, 1) - sl(0, 1)) / h
            last = (sl(n - 1, 1) - sl(n - 2, 1)) / h
        else:
            first = (-1.5 * sl(0, 1) + 2 * sl(1, 1) - 0.5 * sl(2, 1)) / h
            last = (0.5 * sl(n - 3, 1) - 2 * sl(n - 2, 1) + 1.5 * sl(n - 1, 1)) / h
        out.append(cthtorch.cat([first, interior, last], d))
    return tuple(out)


# ---------------------------------------------------------------- covariance
def cov(input, *, correction=1, fweights=None, aweights=None):
    if input.dim() > 2:
        raise RuntimeError("cov(): expected input to have two or fewer dimensions but got an input with %d dimensions"
                         % input.dim())
    if fweights is not None or aweights is not None:
        raise NotImplementedError("cthtorch.cov: fweights/aweights are not implemented")
    x = input if input.dim() == 2 else input.reshape(1, -1)
    if not _is_float(x):
        x = x.to(cthtorch.get_default_dtype())
    n = x.shape[1]
    xc = x - x.mean(dim=1, keepdim=True)
    c = cthtorch.matmul(xc, xc.t()) / max(n - correction, 0)
    return c.reshape(()) if x.shape[0] == 1 else c     # one variable: a 0-d variance


def corrcoef(input):
    if input.dim() > 2:
        raise RuntimeError("corrcoef(): expected input to have two or fewer dimensions but got an input with %d "
                         "dimensions" % input.dim())
    c = cov(input)
    if c.dim() == 0:
        return c / c
    d = cthtorch.diagonal(c)
    sd = cthtorch.sqrt(d)
    c = c / sd.reshape(-1, 1)
    c = c / sd.reshape(1, -1)
    return cthtorch.clamp(c, -1, 1)


# ---------------------------------------------------------------- integration
def trapezoid(y, x=None, *, dx=None, dim=-1):
    d = _wrap_dim(dim, y.dim())
    n = y.shape[d]
    if n == 0:
        return y.sum(d)
    pair = y.narrow(d, 1, n - 1) + y.narrow(d, 0, n - 1)
    if x is not None:
        if isinstance(x, cthtorch.Tensor):
            if x.dim() == 1:
                shape = [1] * y.dim()
                shape[d] = x.shape[0]
                x = x.reshape(shape)
            dxs = diff(x, dim=d if x.dim() == y.dim() else -1)
            return (pair * dxs).sum(d) / 2
        dx = x
    return pair.sum(d) * ((1.0 if dx is None else dx) / 2)


def trapz(y, x=None, *, dx=None, dim=-1):
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    d = _wrap_dim(dim, y.dim())
    n = y.shape[d]
    pair = y.narrow(d, 1, max(n - 1, 0)) + y.narrow(d, 0, max(n - 1, 0))
    if isinstance(x, cthtorch.Tensor):
        if x.dim() == 1:
            shape = [1] * y.dim()
            shape[d] = x.shape[0]
            x = x.reshape(shape)
        return cthtorch.cumsum(pair * diff(x, dim=d) / 2, d)
    step = x if x is not None else (1.0 if dx is None else dx)
    return cthtorch.cumsum(pair * (step / 2), d)


# ---------------------------------------------------------------- misc
def vander(x, N=None, increasing=False):
    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    if n == 0:
        return cthtorch.empty((x.shape[0], 0), dtype=cthtorch.promote_types(x.dtype, cthtorch.int64))
    xx = x if x.dtype != cthtorch.bool else x.long()
    if not _is_float(xx):
        xx = xx.long()
    # x^k as one cumprod over x repeated N-1 times (a stride-0 view), so a huge N
    # fails at once in the allocation instead of looping N times in Python
    cols = xx.unsqueeze(1).expand(xx.shape[0], n - 1).cumprod(1)
    m = cthtorch.cat([cthtorch.ones_like(xx).unsqueeze(1), cols], 1)
    return m if increasing else m.flip([1])


def combinations(input, r=2, with_replacement=False):
    if input.dim() != 1:
        raise RuntimeError("Expect a 1D vector, but got shape %s" % list(input.shape))
    if r < 0:
        raise RuntimeError("Expect a non-negative number, but got %d" % r)
    if r == 0:
        return cthtorch.empty(0, dtype=input.dtype)
    gen = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    idx = list(gen(range(input.shape[0]), r))
    if not idx:
        return cthtorch.empty((0, r), dtype=input.dtype)
    it = cthtorch.tensor(idx, dtype=cthtorch.int64)
    cols = [cthtorch.index_select(input, 0, it[:, j].contiguous()) for j in range(r)]
    return cthtorch.stack(cols, 1)


def histogram(input, bins=100, *, range=None, weight=None, density=False, out=None):
    """Reads range=(min, max) (a float list the op declarations cannot type
    yet) and counts in C (cthtorch._C._internal._histogram, src/ATen/ATBucketize.c)."""
    if isinstance(bins, cthtorch.Tensor):
        r = cthtorch._C._internal._histogram(input, 0, bins, None, None, weight, density)
    else:
        lo = hi = None
        if range is not None:
            if len(range) != 2:
                raise RuntimeError("torch.histogramdd: for a 1-dimensional histogram range should have 2 elements, "
                                   "but got %d" % len(range))
            lo, hi = float(range[0]), float(range[1])
        r = cthtorch._C._internal._histogram(input, bins, None, lo, hi, weight, density)
    return _rt.histogram(*r)


def _histogramdd_edges(col, nb, lo, hi, d):
    """torch's outer edges for one dimension: the given range or the data's, widened by 1/2 each way when empty
    of width, then nb + 1 evenly spaced edges in the input's dtype"""
    if nb <= 0:
        raise RuntimeError("torch.histogram(): bins must be > 0, but got %d for dimension %d" % (nb, d))
    if lo is None:
        lo, hi = (float(col.min()), float(col.max())) if col.numel() else (0.0, 1.0)
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError("torch.histogramdd: dimension %d's range [%s, %s] is not finite"
                           % (d, _num(lo), _num(hi)))
    if lo > hi:
        raise RuntimeError("torch.histogramdd: min should not exceed max, but got min %s max %s for dimension %d"
                           % (_num(lo), _num(hi), d))
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return cthtorch.linspace(lo, hi, nb + 1, dtype=col.dtype)


def _num(v):
    return "%g" % v   # as C++ streams a double


def histogramdd(input, bins, *, range=None, weight=None, density=False, out=None):
    """Each point (input's innermost dimension) lands in the bin whose edges hold it, the last edge closing the
    last bin; points outside the edges (and NaN) are dropped. Bin indices by searchsorted, counts by index_add."""
    if out is not None:
        raise NotImplementedError("cthtorch: torch.histogramdd(..., out=) is not implemented")
    if input.dim() < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    if input.dtype not in (cthtorch.float32, cthtorch.float64):
        raise NotImplementedError("\"histogramdd\" not implemented for '%s'" % _dtype_name(input.dtype))
    D = input.shape[-1]
    tensor_bins = isinstance(bins, (list, tuple)) and len(bins) > 0 and isinstance(bins[0], cthtorch.Tensor)
    if isinstance(bins, int):
        bins = [bins] * D
    if len(bins) != D:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost dimension of the input.")
    if range is not None and not tensor_bins and len(range) != 2 * D:
        raise RuntimeError("torch.histogramdd: for a %d-dimensional histogram range should have %d elements, but got "
                           "%d" % (D, 2 * D, len(range)))
    lead = tuple(input.shape[:-1])
    if weight is not None and tuple(weight.shape) != lead:
        raise RuntimeError("torch.histogramdd: if weight tensor is provided it should have the same shape as the input "
                           "tensor excluding its innermost dimension, but got input with shape %s and weight with "
                           "shape %s" % (list(input.shape), list(weight.shape)))
    x = input.detach().reshape(-1, D)
    edges = []
    for d in builtins.range(D):
        if tensor_bins:
            edges.append(bins[d].detach().to(input.dtype))
        else:
            lo, hi = (None, None) if range is None else (float(range[2 * d]), float(range[2 * d + 1]))
            edges.append(_histogramdd_edges(x[:, d], int(bins[d]), lo, hi, d))
    shape = [e.numel() - 1 for e in edges]
    lin = cthtorch.zeros(x.shape[0], dtype=cthtorch.int64)
    keep = cthtorch.ones(x.shape[0], dtype=cthtorch.bool)
    for d, e in enumerate(edges):
        col, nb = x[:, d].contiguous(), shape[d]
        if nb <= 0:   # a single edge: no bin holds anything
            keep = keep & False
            continue
        idx = cthtorch.searchsorted(e, col, right=True) - 1
        idx = cthtorch.where(col == e[-1], nb - 1, idx)
        keep = keep & (col >= e[0]) & (col <= e[-1])
        lin = lin * nb + idx.clamp(0, nb - 1)
    w = (cthtorch.ones(x.shape[0], dtype=input.dtype) if weight is None
         else weight.detach().reshape(-1).to(input.dtype))
    n = 1
    for s in shape:
        n *= max(s, 0)
    hist = cthtorch.zeros(n, dtype=input.dtype).index_add_(0, lin[keep], w[keep]).reshape(shape)
    if density:
        hist = hist / hist.sum()
        for d, e in enumerate(edges):
            view = [1] * D
            view[d] = -1
            hist = hist / e.diff().reshape(view)
    if input.requires_grad and cthtorch.is_grad_enabled():   # torch's outputs are on a graph whose backward raises
        hist, *edges = _histogramdd_node().apply((hist,) + tuple(edges), input)
    return _rt.histogramdd(hist, tuple(edges))



@functools.lru_cache(None)
def _histogramdd_node():
    """made at first use: cthtorch.linalg imports after this module"""
    from cthtorch.linalg._functions import not_differentiable
    return not_differentiable("NotImplemented", "derivative for aten::_histogramdd_from_bin_cts is not implemented",
                              RuntimeError, "torch::autograd::NotImplemented")
