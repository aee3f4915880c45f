"""torch.masked: reductions and normalizations that ignore the elements where `mask` is False.

Each op fills the masked-out elements with the identity of its reduction (0 for sums, 1 for products, -inf for
maxima and logsumexp, +inf for minima, NaN for the median, which nanmedian skips) and runs the ordinary op, so
results and gradients are the dense op's; the mask broadcasts to the input. Where every element of a slice is
masked out the result is that identity (sum, prod, amax, amin, norm, logsumexp), or NaN for the ops without one
(mean, median, var, std, and softmax's row). Strided tensors only; MaskedTensor is not implemented."""
import math

import cthtorch

__all__ = ["amax", "amin", "argmax", "argmin", "as_masked_tensor", "cumprod", "cumsum", "is_masked_tensor",
           "log_softmax", "logaddexp", "logsumexp", "masked_tensor", "mean", "median", "norm", "normalize", "prod",
           "softmax", "softmin", "std", "sum", "var", "MaskedTensor"]

_SMALL_INTS = (cthtorch.uint8, cthtorch.bool, cthtorch.int8, cthtorch.int16, cthtorch.int32)
_builtin_sum = sum


def _dims(dim, ndim):
    """dim (None, () or int or sequence) as a sorted tuple of non-negative dims; () means all, as in torch"""
    if dim is None or dim == ():
        return tuple(range(ndim))
    n = max(ndim, 1)
    out = []
    for d in ((dim,) if isinstance(dim, int) else dim):
        if d in out:
            raise RuntimeError(f"dim={d} appears multiple times in the list of dims")
        if d >= n or d < -n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
        out.append(d % n)
    return tuple(sorted(out))


def _strided(input, name):
    if input.layout != cthtorch.strided:
        raise NotImplementedError(f"cthtorch: torch.masked.{name} of a {input.layout} tensor is not implemented "
                                  f"(strided tensors only)")


def _mask_like(input, mask):
    """mask broadcast to input's shape, as bool"""
    if mask.shape != input.shape:
        if mask.dim() > input.dim():
            raise IndexError("_input_mask expected broadcastable mask (got mask dimensionality higher than of the "
                             "input)")
        mask = cthtorch.broadcast_to(mask.clone(), input.shape)
    if mask.layout != cthtorch.strided:
        mask = mask.to_dense()
    return mask.to(dtype=cthtorch.bool)


def _identity(kind, input):
    dt = input.dtype
    if kind == "zero":
        return 0
    if kind == "one":
        return 1
    if kind == "nan":
        return math.nan
    low = kind == "low"
    if dt.is_floating_point:
        return -math.inf if low else math.inf
    if dt == cthtorch.bool:
        raise NotImplementedError(f"identity of {'amax' if low else 'amin'} on {dt} input")
    info = cthtorch.iinfo(dt)
    return info.min if low else info.max


def _filled(input, mask, kind):
    """input with its masked-out elements replaced by the reduction's identity (input itself when no mask)"""
    if mask is None:
        return input
    return cthtorch.where(_mask_like(input, mask), input,
                          cthtorch.tensor(_identity(kind, input), dtype=input.dtype))


def _sum_dtype(input, dtype):
    if dtype is not None:
        return dtype
    return cthtorch.int64 if input.dtype in _SMALL_INTS else input.dtype


def sum(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    _strided(input, "sum")
    dtype = _sum_dtype(input, dtype)
    return cthtorch.sum(_filled(input, mask, "zero"), _dims(dim, input.dim()), bool(keepdim), dtype=dtype)


def prod(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    _strided(input, "prod")
    r = _filled(input, mask, "one").to(dtype=_sum_dtype(input, dtype))
    for d in reversed(_dims(dim, input.dim())):
        r = r.prod(dim=d, keepdim=bool(keepdim))
    return r


def cumsum(input, dim, *, dtype=None, mask=None):
    _strided(input, "cumsum")
    dtype = input.dtype if dtype is None else dtype
    return cthtorch.cumsum(_filled(input, mask, "zero"), _dims(dim, input.dim())[0], dtype=dtype).to(dtype=dtype)


def cumprod(input, dim, *, dtype=None, mask=None):
    _strided(input, "cumprod")
    dtype = input.dtype if dtype is None else dtype
    return cthtorch.cumprod(_filled(input, mask, "one"), _dims(dim, input.dim())[0], dtype=dtype).to(dtype=dtype)


def _extremum(op, kind, name):
    def f(input, dim=None, *, keepdim=False, dtype=None, mask=None):
        _strided(input, name)
        x = _filled(input, mask, kind)
        return op(x, _dims(dim, x.dim()), bool(keepdim)).to(dtype=input.dtype if dtype is None else dtype)
    f.__name__ = f.__qualname__ = name
    return f


amax = _extremum(cthtorch.amax, "low", "amax")
amin = _extremum(cthtorch.amin, "high", "amin")


def _arg_extremum(op, kind, name):
    def f(input, dim=None, *, keepdim=False, dtype=None, mask=None):
        _strided(input, name)
        # torch casts the index to the input's dtype unless dtype is given
        return op(_filled(input, mask, kind), dim, bool(keepdim)).to(dtype=input.dtype if dtype is None else dtype)
    f.__name__ = f.__qualname__ = name
    return f


argmax = _arg_extremum(cthtorch.argmax, "low", "argmax")
argmin = _arg_extremum(cthtorch.argmin, "high", "argmin")


def _float_dtype(input, dtype, name):
    source = "Input" if dtype is None else "Optional"
    dtype = input.dtype if dtype is None else dtype
    if not (dtype.is_floating_point or dtype.is_complex):
        raise ValueError(f"{name}(): Could not infer output dtype. {source} dtype must be either a floating point "
                         f"or complex dtype. Got: {dtype}")
    return dtype


def _count(input, dim, keepdim, mask):
    if mask is None:
        return sum(cthtorch.ones(input.shape, dtype=cthtorch.int64), dim, keepdim=keepdim)
    return _mask_like(input, mask).sum(dim=_dims(dim, input.dim()), keepdim=bool(keepdim))


def mean(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    _strided(input, "mean")
    dtype = _float_dtype(input, dtype, "mean")
    return sum(input, dim, keepdim=keepdim, dtype=dtype, mask=mask) / _count(input, dim, keepdim, mask)


def median(input, dim=-1, *, keepdim=False, dtype=None, mask=None):
    _strided(input, "median")
    dtype = input.dtype if dtype is None else dtype
    d = _dims(dim, input.dim())[0]
    is_float = input.is_floating_point()
    x = input if is_float else input.to(dtype=cthtorch.float)
    out = cthtorch.nanmedian(_filled(x, mask, "nan"), d, keepdim).values
    if is_float:
        return out
    if cthtorch.isnan(out).any():
        raise ValueError("masked median expects no fully masked out rows if dtype is not floating point")
    return out.to(dtype=dtype)


def logsumexp(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    _strided(input, "logsumexp")
    dtype = input.dtype if dtype is None else dtype
    return cthtorch.logsumexp(_filled(input, mask, "low"), _dims(dim, input.dim()), keepdim=keepdim).to(dtype=dtype)


def logaddexp(input, other, *, dtype=None, input_mask=None, other_mask=None):
    _strided(input, "logaddexp")
    _strided(other, "logaddexp")
    dtype = input.dtype if dtype is None else dtype
    return cthtorch.logaddexp(_filled(input, input_mask, "low"), _filled(other, other_mask, "low")).to(dtype=dtype)


def norm(input, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None):
    _strided(input, "norm")
    dtype = input.dtype if dtype is None else dtype
    x = _filled(input, mask, "high" if ord == -math.inf else "zero")
    return cthtorch.linalg.vector_norm(x, ord, _dims(dim, input.dim()), bool(keepdim), dtype=dtype)


def _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, root):
    _strided(input, "std" if root else "var")
    if unbiased is not None and correction is not None:
        raise AssertionError("Only one of unbiased and correction may be given")
    c = 1.0 if unbiased is None and correction is None else (float(correction) if correction is not None
                                                               else float(bool(unbiased)))
    if dtype is None:
        dtype = input.dtype if (input.dtype.is_floating_point or input.dtype.is_complex) else cthtorch.float32
    work = dtype if (dtype.is_floating_point or dtype.is_complex) else cthtorch.float32
    count = _count(input, dim, True, mask)
    centred = input - sum(input, dim, keepdim=True, dtype=dtype, mask=mask) / count
    total = sum(centred * centred.conj(), dim, keepdim=keepdim, dtype=work, mask=mask)
    count = count.reshape(total.shape)
    if c != 0:
        count = cthtorch.clamp_min(count.to(work) - c, 0)
    out = (total / count).to(dtype=dtype)
    return out.sqrt() if root else out


def var(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None, mask=None):
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, False)


def std(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None, mask=None):
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, True)


def _normalization(fn, kind, name):
    def f(input, dim, *, dtype=None, mask=None):
        _strided(input, name)
        return fn(_filled(input, mask, kind), _dims(dim, input.dim())[0], dtype=input.dtype if dtype is None else dtype)
    f.__name__ = f.__qualname__ = name
    return f


softmax = _normalization(cthtorch.nn.functional.softmax, "low", "softmax")
log_softmax = _normalization(cthtorch.nn.functional.log_softmax, "low", "log_softmax")
softmin = _normalization(cthtorch.nn.functional.softmin, "high", "softmin")


def normalize(input, ord, dim, *, eps=1e-12, dtype=None, mask=None):
    _strided(input, "normalize")
    dtype = input.dtype if dtype is None else dtype
    n = norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask)
    return cthtorch.divide(_filled(input, mask, "zero"), cthtorch.maximum(n, n.new_full([], eps)))


class MaskedTensor:
    """Not implemented: torch.masked's MaskedTensor subclass (masked_tensor / as_masked_tensor)."""

    def __init__(self, *args, **kwargs):
        _no_masked_tensor()


def _no_masked_tensor(*args, **kwargs):
    raise NotImplementedError("cthtorch: torch.masked.MaskedTensor (masked_tensor, as_masked_tensor) is not "
                              "implemented; the torch.masked reductions take mask= on ordinary tensors")


masked_tensor = as_masked_tensor = _no_masked_tensor


def is_masked_tensor(obj):
    return isinstance(obj, MaskedTensor)
