"""torch.fft: every transform returns complex values, and cthtorch has no
complex dtypes yet, so each function raises NotImplementedError (the names
exist so that importing code and feature checks behave)."""

_NAMES = ("fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn",
          "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn")


def _unsupported(name):
    def f(*args, **kwargs):
        raise NotImplementedError("cthtorch.fft.%s: complex dtypes are not implemented in cthtorch" % name)
    f.__name__ = f.__qualname__ = name
    return f


for _n in _NAMES:
    globals()[_n] = _unsupported(_n)


def fftfreq(n, d=1.0, *, dtype=None, device=None, requires_grad=False, **kwargs):
    import cthtorch
    k = cthtorch.cat([cthtorch.arange(0, (n - 1) // 2 + 1), cthtorch.arange(-(n // 2), 0)])
    return (k.to(dtype or cthtorch.get_default_dtype()) / (n * d)).requires_grad_(requires_grad)


def rfftfreq(n, d=1.0, *, dtype=None, device=None, requires_grad=False, **kwargs):
    import cthtorch
    return (cthtorch.arange(0, n // 2 + 1).to(dtype or cthtorch.get_default_dtype()) / (n * d)).requires_grad_(
        requires_grad)


def fftshift(input, dim=None):
    import cthtorch
    dims = tuple(range(input.dim())) if dim is None else ((dim,) if isinstance(dim, int) else tuple(dim))
    return cthtorch.roll(input, tuple(input.shape[d] // 2 for d in dims), dims)


def ifftshift(input, dim=None):
    import cthtorch
    dims = tuple(range(input.dim())) if dim is None else ((dim,) if isinstance(dim, int) else tuple(dim))
    return cthtorch.roll(input, tuple(-(input.shape[d] // 2) for d in dims), dims)
