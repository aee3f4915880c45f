"""torch.signal.windows: the scipy.signal.windows family as tensors, built
from linspace and pointwise ops (so requires_grad flows through them).
sym=True gives the symmetric window (filter design); sym=False the periodic
one (spectral analysis: as if one sample longer, with the last dropped)."""
import math

import cthtorch as torch

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine", "general_hamming",
           "hamming", "hann", "kaiser", "nuttall"]


def _checks(name, M, dtype, layout):
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not torch.strided:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if dtype not in (torch.float32, torch.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")


def _trivial(M, dtype, layout, device, requires_grad):
    """The windows of length 0 and 1 (every family agrees on them), else None."""
    if M == 0:
        return torch.empty((0,), dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)
    if M == 1:
        return torch.ones((1,), dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)
    return None


def _ramp(start, step, M, dtype, layout, device, requires_grad):
    """start, start + step, ..., start + (M - 1) step."""
    return torch.linspace(start, start + (M - 1) * step, M, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def _span(M, sym):
    # the periodic window is the symmetric one of length M + 1, less its last sample
    return M - 1 if sym else M


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=torch.strided, device=None,
                requires_grad=False):
    dtype = torch.get_default_dtype() if dtype is None else dtype
    _checks("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    trivial = _trivial(M, dtype, layout, device, requires_grad)
    if trivial is not None:
        return trivial
    if center is None:
        center = _span(M, sym) / 2.0
    k = _ramp(-center / tau, 1 / tau, M, dtype, layout, device, requires_grad)
    return torch.exp(-torch.abs(k))


def cosine(M, *, sym=True, dtype=None, layout=torch.strided, device=None, requires_grad=False):
    dtype = torch.get_default_dtype() if dtype is None else dtype
    _checks("cosine", M, dtype, layout)
    trivial = _trivial(M, dtype, layout, device, requires_grad)
    if trivial is not None:
        return trivial
    step = math.pi / (_span(M, sym) + 1)
    return torch.sin(_ramp(0.5 * step, step, M, dtype, layout, device, requires_grad))


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=torch.strided, device=None, requires_grad=False):
    dtype = torch.get_default_dtype() if dtype is None else dtype
    _checks("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    trivial = _trivial(M, dtype, layout, device, requires_grad)
    if trivial is not None:
        return trivial
    step = 1 / (std * math.sqrt(2))
    start = -_span(M, sym) / 2.0
    k = _ramp(start * step, step, M, dtype, layout, device, requires_grad)
    return torch.exp(-k ** 2)


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=torch.strided, device=None, requires_grad=False):
    dtype = torch.get_default_dtype() if dtype is None else dtype
    _checks("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    trivial = _trivial(M, dtype, layout, device, requires_grad)
    if trivial is not None:
        return trivial
    # I0(beta sqrt(1 - (2n/(M-1) - 1)^2)) / I0(beta), written with k = beta (2n/(M-1) - 1)
    beta_t = torch.tensor(beta, dtype=dtype, device=device)
    step = 2.0 * beta / _span(M, sym)
    end = min(-beta + (M - 1) * step, beta)   # rounding must not carry k past beta (sqrt of a negative)
    k = torch.linspace(-beta, end, M, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)
    return torch.i0(torch.sqrt(beta_t * beta_t - torch.pow(k, 2))) / torch.i0(beta_t)


def general_cosine(M, *, a, sym=True, dtype=None, layout=torch.strided, device=None, requires_grad=False):
    dtype = torch.get_default_dtype() if dtype is None else dtype
    _checks("general_cosine", M, dtype, layout)
    if not isinstance(a, (list, tuple)):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    trivial = _trivial(M, dtype, layout, device, requires_grad)
    if trivial is not None:
        return trivial
    # sum_i (-1)^i a_i cos(2 pi i n / span)
    k = _ramp(0.0, 2 * math.pi / _span(M, sym), M, dtype, layout, device, requires_grad)
    coeffs = torch.tensor([(-1) ** i * w for i, w in enumerate(a)], device=device, dtype=dtype,
                          requires_grad=requires_grad)
    i = torch.arange(coeffs.shape[0], dtype=coeffs.dtype, device=coeffs.device, requires_grad=requires_grad)
    return (coeffs.unsqueeze(-1) * torch.cos(i.unsqueeze(-1) * k)).sum(0)


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=torch.strided, device=None,
                    requires_grad=False):
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def hamming(M, *, sym=True, dtype=None, layout=torch.strided, device=None, requires_grad=False):
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)


def hann(M, *, sym=True, dtype=None, layout=torch.strided, device=None, requires_grad=False):
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=torch.strided, device=None, requires_grad=False):
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def bartlett(M, *, sym=True, dtype=None, layout=torch.strided, device=None, requires_grad=False):
    dtype = torch.get_default_dtype() if dtype is None else dtype
    _checks("bartlett", M, dtype, layout)
    trivial = _trivial(M, dtype, layout, device, requires_grad)
    if trivial is not None:
        return trivial
    k = _ramp(-1.0, 2 / _span(M, sym), M, dtype, layout, device, requires_grad)
    return 1 - torch.abs(k)


def nuttall(M, *, sym=True, dtype=None, layout=torch.strided, device=None, requires_grad=False):
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)
