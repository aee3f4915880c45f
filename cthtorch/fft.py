"""torch.fft: discrete Fourier transforms.

The one kernel is a complex-to-complex DFT along one dimension
(cthtorch._C._internal._fft_c2c_forward/_backward, src/ATen/ATComplex.c:
mixed radix 2/3/5 and Bluestein for other lengths, batched with OpenMP). Every
transform here is written in terms of it and of declared ops, so autograd
comes from their derivatives: the two directions are each other's adjoint,
and the real<->complex steps go through view_as_real/view_as_complex.
  rfft  = the first n//2 + 1 bins of the complex transform of a real signal;
  irfft = the real part of the inverse transform of the Hermitian-extended
          spectrum (which ignores the imaginary parts of the DC and Nyquist
          bins, exactly as a c2r transform does);
  hfft/ihfft = irfft/rfft of the conjugate with the normalisation swapped.
"""
import math

import cthtorch as torch   # as torch's modules have it: old code writes torch.sparse.torch.eye(n)

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn",
           "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]


def _ct():
    import cthtorch
    return cthtorch


def _norm_scale(norm, n, forward):
    if norm is None or norm == "backward":
        return 1.0 if forward else 1.0 / n
    if norm == "ortho":
        return 1.0 / math.sqrt(n)
    if norm == "forward":
        return 1.0 / n if forward else 1.0
    raise RuntimeError('Invalid normalization mode: "%s"' % (norm,))


def _check_norm(norm):
    _norm_scale(norm, 1, True)


def _swap(norm):
    return {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}[norm]


def _check_dtype(x):
    ct = _ct()
    if x.dtype in (ct.float16, ct.bfloat16):
        raise RuntimeError("Unsupported dtype %s" % ("Half" if x.dtype == ct.float16 else "BFloat16"))


def _to_complex(x):
    """x as a complex tensor: complex stays, float32 -> complex64, float64 -> complex128,
    integers -> the default dtype's complex. Real values become (x, 0) by stacking, so the
    gradient back to x is the real part (no complex->real cast warning)."""
    ct = _ct()
    _check_dtype(x)
    if x.is_complex():
        return x
    if not x.is_floating_point():
        x = x.to(ct.get_default_dtype())
    return ct.view_as_complex(ct.stack([x, ct.zeros_like(x)], -1))


def _real_part(z):
    return _ct().view_as_real(z).select(-1, 0)


def _wrap(dim, ndim):
    if ndim == 0:
        ndim = 1
    if not -ndim <= dim < ndim:
        raise IndexError("Dimension out of range (expected to be in range of [%d, %d], but got %d)"
                         % (-ndim, ndim - 1, dim))
    return dim % ndim


def _resize(x, n, dim):
    """x cut or zero-padded to n entries along dim."""
    ct = _ct()
    m = x.shape[dim]
    if n == m:
        return x
    if n < m:
        return x.narrow(dim, 0, n)
    shape = list(x.shape)
    shape[dim] = n - m
    return ct.cat([x, ct.zeros(shape, dtype=x.dtype)], dim)


def _check_n(n):
    if n < 1:
        raise RuntimeError("Invalid number of data points (%d) specified" % n)


def _c2c(x, dim, forward, norm):
    n = x.shape[dim]
    _check_n(n)
    f = _ct()._C._internal._fft_c2c_forward if forward else _ct()._C._internal._fft_c2c_backward
    return f(x, dim, _norm_scale(norm, n, forward))


def _out(r, out):
    if out is None:
        return r
    out.resize_(r.shape)
    out.copy_(r)
    return out


def _fft1(input, n, dim, norm, forward):
    _check_norm(norm)
    x = _to_complex(input)
    d = _wrap(dim, x.dim())
    if x.dim() == 0:
        raise IndexError("Dimension specified as %d but tensor has no dimensions" % dim)
    if n is not None:
        _check_n(n)
        x = _resize(x, n, d)
    return _c2c(x, d, forward, norm)


def fft(input, n=None, dim=-1, norm=None, *, out=None):
    return _out(_fft1(input, n, dim, norm, True), out)


def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    return _out(_fft1(input, n, dim, norm, False), out)


def _rfft1(input, n, dim, norm, name="rfft"):
    if input.is_complex():
        raise RuntimeError("%s expects a real input tensor, but got %s" % (name, _legacy(input.dtype)))
    x = input
    d = _wrap(dim, x.dim())
    if n is not None:
        _check_n(n)
        x = _resize(x, n, d)
    _check_norm(norm)
    if x.dim() > 0 and x.shape[d] % 2 == 0 and x.dtype in (_ct().float32, _ct().float64):
        return _rfft_even(x, d, norm)
    full = _fft1(x, None, d, norm, True)
    return full.narrow(d, 0, full.shape[d] // 2 + 1)


def _rfft_even(x, d, norm):
    """rfft of an even length n through a complex transform of length n/2: the even and odd
    samples as the real and imaginary parts z = x[0::2] + i x[1::2] (a view of the real pairs),
    Z = DFT(z), then for k <= n/2 (Z[n/2] = Z[0], w = exp(-2 pi i k/n))
      X[k] = (Z[k] + conj(Z[n/2-k])) / 2 + w (Z[k] - conj(Z[n/2-k])) / 2i
           = Z[k] a[k] + conj(Z[n/2-k]) b[k],  a = (1 - i w) / 2, b = (1 + i w) / 2 (times the norm's scale).
    Half the transform work of the full complex one; declared ops throughout, so autograd holds."""
    ct = _ct()
    n = x.shape[d]
    m = n // 2
    xl = x.movedim(d, -1).contiguous()
    z = ct.view_as_complex(xl.reshape(*xl.shape[:-1], m, 2))
    zf = _c2c(z, z.dim() - 1, True, None)
    zr = ct.cat([zf, zf.narrow(-1, 0, 1)], -1)
    a, b = _rfft_weights(n, zf.dtype, _norm_scale(norm, n, True))
    out = zr * a + zr.flip(-1).conj() * b
    return out.movedim(-1, d)


_RFFT_WEIGHTS = {}


def _rfft_weights(n, dtype, scale):
    """(a, b) of _rfft_even for one length, dtype and scale, computed in double once (a few
    lengths recur in a program: stft frames, one signal length)"""
    key = (n, str(dtype), scale)
    got = _RFFT_WEIGHTS.get(key)
    if got is None:
        ct = _ct()
        with ct.no_grad():
            ang = ct.arange(n // 2 + 1, dtype=ct.float64) * (-2.0 * math.pi / n)
            iw = ct.complex(-ang.sin(), ang.cos())   # i w
            got = ((1 - iw) * (0.5 * scale)).to(dtype), ((1 + iw) * (0.5 * scale)).to(dtype)
        if len(_RFFT_WEIGHTS) >= 64:
            _RFFT_WEIGHTS.clear()
        _RFFT_WEIGHTS[key] = got
    return got


def _irfft1(input, n, dim, norm):
    ct = _ct()
    _check_norm(norm)
    x = _to_complex(input)
    d = _wrap(dim, x.dim())
    if n is None:
        n = 2 * (x.shape[d] - 1)
    _check_n(n)
    half = _resize(x, n // 2 + 1, d)
    # the Hermitian extension: X[n - k] = conj(X[k]) for k = 1 .. (n - 1) // 2
    tail = half.narrow(d, 1, (n - 1) // 2).flip(d).conj()
    full = ct.cat([half, tail], d) if tail.shape[d] else half
    return _real_part(_c2c(full, d, False, norm))


def _legacy(dt):
    return {"complex64": "ComplexFloat", "complex128": "ComplexDouble"}.get(repr(dt)[len("torch."):], repr(dt))


def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    return _out(_rfft1(input, n, dim, norm), out)


def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    return _out(_irfft1(input, n, dim, norm), out)


def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    _check_norm(norm)
    return _out(_irfft1(_to_complex(input).conj(), n, dim, _swap(norm)), out)


def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    _check_norm(norm)
    return _out(_rfft1(input, n, dim, _swap(norm), "ihfft").conj(), out)


def _dims(x, s, dim, default_all):
    """(sizes or None per dim, wrapped dims) as torch's fftn resolves s and dim."""
    nd = x.dim()
    if dim is not None and not isinstance(dim, (list, tuple)):
        dim = (dim,)
    if s is not None and not isinstance(s, (list, tuple)):
        s = (s,)
    if dim is None:
        if s is None:
            dims = list(range(nd)) if default_all is None else [d % max(nd, 1) for d in default_all]
        else:
            dims = list(range(nd - len(s), nd))
    else:
        dims = [_wrap(d, nd) for d in dim]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None and len(s) != len(dims):
        raise RuntimeError("When given, dim and shape arguments must have the same length")
    if len(dims) > nd:
        raise RuntimeError("Got shape with %d values but input tensor only has %d dimensions." % (len(dims), nd))
    sizes = [None] * len(dims) if s is None else [None if v == -1 else v for v in s]
    return sizes, dims


def _fftn(input, s, dim, norm, forward, default=None):
    _check_norm(norm)
    x = _to_complex(input)
    sizes, dims = _dims(x, s, dim, default)
    for n, d in zip(sizes, dims):
        if n is not None:
            _check_n(n)
            x = _resize(x, n, d)
    for d in dims:
        x = _c2c(x, d, forward, norm)
    return x


def fftn(input, s=None, dim=None, norm=None, *, out=None):
    return _out(_fftn(input, s, dim, norm, True), out)


def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    return _out(_fftn(input, s, dim, norm, False), out)


def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _out(_fftn(input, s, dim, norm, True), out)


def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _out(_fftn(input, s, dim, norm, False), out)


def _rfftn(input, s, dim, norm, name="rfftn"):
    if input.is_complex():
        raise RuntimeError("%s expects a real-valued input tensor, but got %s" % (name, _legacy(input.dtype)))
    _check_norm(norm)
    sizes, dims = _dims(input, s, dim, None)
    if not dims:
        raise RuntimeError("rfftn must transform at least one axis")
    x = input
    for n, d in zip(sizes, dims):
        if n is not None:
            _check_n(n)
            x = _resize(x, n, d)
    x = _rfft1(x, None, dims[-1], norm)
    for d in dims[:-1]:
        x = _c2c(x, d, True, norm)
    return x


def _irfftn(input, s, dim, norm):
    _check_norm(norm)
    x = _to_complex(input)
    sizes, dims = _dims(x, s, dim, None)
    if not dims:
        raise RuntimeError("irfftn must transform at least one axis")
    for n, d in zip(sizes[:-1], dims[:-1]):
        if n is not None:
            _check_n(n)
            x = _resize(x, n, d)
    for d in dims[:-1]:
        x = _c2c(x, d, False, norm)
    return _irfft1(x, sizes[-1], dims[-1], norm)


def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    return _out(_rfftn(input, s, dim, norm), out)


def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    return _out(_irfftn(input, s, dim, norm), out)


def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _out(_rfftn(input, s, dim, norm), out)


def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _out(_irfftn(input, s, dim, norm), out)


def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    _check_norm(norm)
    return _out(_irfftn(_to_complex(input).conj(), s, dim, _swap(norm)), out)


def ihfftn(input, s=None, dim=None, norm=None, *, out=None):
    _check_norm(norm)
    return _out(_rfftn(input, s, dim, _swap(norm), "ihfftn").conj(), out)


def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return hfftn(input, s, dim, norm, out=out)


def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return ihfftn(input, s, dim, norm, out=out)


def fftfreq(n, d=1.0, *, dtype=None, device=None, requires_grad=False, **kwargs):
    import cthtorch
    k = cthtorch.cat([cthtorch.arange(0, (n - 1) // 2 + 1), cthtorch.arange(-(n // 2), 0)])
    return (k.to(dtype or cthtorch.get_default_dtype()) * (1.0 / (n * d))).requires_grad_(requires_grad)


def rfftfreq(n, d=1.0, *, dtype=None, device=None, requires_grad=False, **kwargs):
    import cthtorch
    # torch multiplies by the reciprocal (so do we: the last bit matters to exact comparisons)
    return (cthtorch.arange(0, n // 2 + 1).to(dtype or cthtorch.get_default_dtype()) * (1.0 / (n * d))).requires_grad_(
        requires_grad)


def fftshift(input, dim=None):
    import cthtorch
    dims = tuple(range(input.dim())) if dim is None else ((dim,) if isinstance(dim, int) else tuple(dim))
    return cthtorch.roll(input, tuple(input.shape[d] // 2 for d in dims), dims)


def ifftshift(input, dim=None):
    import cthtorch
    dims = tuple(range(input.dim())) if dim is None else ((dim,) if isinstance(dim, int) else tuple(dim))
    return cthtorch.roll(input, tuple(-(input.shape[d] // 2) for d in dims), dims)
