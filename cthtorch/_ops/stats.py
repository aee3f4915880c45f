"""Statistics and finite differences composed from existing ops:
quantile, diff, gradient, cov/corrcoef, trapezoid, vander, combinations,
histogram."""
import itertools
import math

import cthtorch
from cthtorch import return_types as _rt
from cthtorch._ops.reduce import _is_float
from cthtorch._utils import _wrap_dim

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
