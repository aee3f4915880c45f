"""torch.fft vs torch and numpy.fft: every transform over random sizes
(powers of 2/3/5 and primes, so both the mixed-radix and the Bluestein paths),
n/s/dim/norm, dtypes, errors, and gradients against torch's."""
import warnings

import numpy as np
import pytest

import cthtorch as ct
import oracle

torch = oracle.require_torch()
RS = np.random.RandomState(3)
SIZES = [1, 2, 3, 4, 5, 6, 7, 8, 12, 13, 16, 30, 31, 45, 64, 97, 100, 127, 243, 1000, 1009]
NORMS = [None, "backward", "ortho", "forward"]


def same(a, b, tol):
    assert str(a.dtype) == str(b.dtype), (a.dtype, b.dtype)
    assert tuple(a.shape) == tuple(b.shape), (a.shape, b.shape)
    bn = b.detach().resolve_conj().numpy()
    scale = max(1.0, float(np.abs(bn).max()) if bn.size else 1.0)
    np.testing.assert_allclose(a.detach().numpy(), bn, rtol=tol, atol=tol * scale)


def cplx(shape, dtype="complex128"):
    return (RS.randn(*shape) + 1j * RS.randn(*shape)).astype(dtype)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_every_radix_and_bluestein_vs_numpy(dtype):
    # lengths 1..70 (radix 4, 2, 3, 5, 7, 11, 13 stages and Bluestein for 17, 19, 23, ...), a
    # product of all the direct radices, large powers and primes; both directions, every norm
    tol = 2e-6 if dtype == "complex64" else 1e-12
    for n in list(range(1, 71)) + [3 * 5 * 7 * 11 * 13, 4096, 4099, 17 * 19, 2 * 1013]:
        x = cplx((2, n), dtype)
        for norm in NORMS:
            for f in ("fft", "ifft"):
                got = getattr(ct.fft, f)(ct.from_numpy(x), norm=norm).numpy()
                want = getattr(np.fft, f)(x.astype("complex128"), norm=norm)
                assert got.dtype == np.dtype(dtype)
                np.testing.assert_allclose(got, want, rtol=0, atol=tol * max(1.0, np.abs(want).max()),
                                           err_msg="%s n=%d norm=%s" % (f, n, norm))


@pytest.mark.parametrize("n", SIZES)
def test_fft_ifft_sizes_vs_numpy_and_torch(n):
    x = cplx((3, n))
    c, t = ct.from_numpy(x), torch.from_numpy(x)
    same(ct.fft.fft(c), torch.fft.fft(t), 1e-10)
    np.testing.assert_allclose(ct.fft.fft(c).numpy(), np.fft.fft(x), rtol=1e-9, atol=1e-9 * n)
    same(ct.fft.ifft(c), torch.fft.ifft(t), 1e-10)
    same(ct.fft.ifft(ct.fft.fft(c)), t, 1e-10)
    r = RS.randn(2, n)
    same(ct.fft.rfft(ct.from_numpy(r)), torch.fft.rfft(torch.from_numpy(r)), 1e-10)
    h = torch.fft.rfft(torch.from_numpy(r))
    same(ct.fft.irfft(ct.from_numpy(h.numpy()), n=n), torch.fft.irfft(h, n=n), 1e-10)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128", "int64"])
def test_norm_dtype_dim_n(norm, dtype):
    x = cplx((4, 6, 5)) if dtype.startswith("complex") else RS.randn(4, 6, 5) * 3
    x = x.astype(dtype)
    c, t = ct.from_numpy(x), torch.from_numpy(x)
    tol = 1e-4 if dtype in ("float32", "complex64", "int64") else 1e-10
    for dim in (0, 1, -1):
        for n in (None, 3, 7):
            same(ct.fft.fft(c, n=n, dim=dim, norm=norm), torch.fft.fft(t, n=n, dim=dim, norm=norm), tol)
            same(ct.fft.ifft(c, n=n, dim=dim, norm=norm), torch.fft.ifft(t, n=n, dim=dim, norm=norm), tol)
            same(ct.fft.hfft(c, n=n, dim=dim, norm=norm), torch.fft.hfft(t, n=n, dim=dim, norm=norm), tol)
            if not dtype.startswith("complex"):
                same(ct.fft.rfft(c, n=n, dim=dim, norm=norm), torch.fft.rfft(t, n=n, dim=dim, norm=norm), tol)
                same(ct.fft.ihfft(c, n=n, dim=dim, norm=norm), torch.fft.ihfft(t, n=n, dim=dim, norm=norm), tol)
            same(ct.fft.irfft(c, n=n, dim=dim, norm=norm), torch.fft.irfft(t, n=n, dim=dim, norm=norm), tol)


@pytest.mark.parametrize("norm", NORMS)
def test_multidim(norm):
    x, r = cplx((3, 5, 6)), RS.randn(3, 5, 6)
    c, t, cr, tr = ct.from_numpy(x), torch.from_numpy(x), ct.from_numpy(r), torch.from_numpy(r)
    tol = 1e-10
    for f in ("fft2", "ifft2", "fftn", "ifftn", "hfft2", "hfftn", "irfft2", "irfftn"):
        same(getattr(ct.fft, f)(c, norm=norm), getattr(torch.fft, f)(t, norm=norm), tol)
    for f in ("rfft2", "rfftn", "ihfft2", "ihfftn"):
        same(getattr(ct.fft, f)(cr, norm=norm), getattr(torch.fft, f)(tr, norm=norm), tol)
    same(ct.fft.fftn(c, s=(4, 7), dim=(0, 2), norm=norm), torch.fft.fftn(t, s=(4, 7), dim=(0, 2), norm=norm), tol)
    same(ct.fft.fftn(c, s=(4, 7)), torch.fft.fftn(t, s=(4, 7)), tol)
    same(ct.fft.rfft2(cr, s=(4, 8)), torch.fft.rfft2(tr, s=(4, 8)), tol)
    spec = torch.fft.rfft2(tr)
    same(ct.fft.irfft2(ct.from_numpy(spec.numpy()), s=(5, 6), norm=norm), torch.fft.irfft2(spec, s=(5, 6), norm=norm),
         tol)
    same(ct.fft.irfftn(ct.from_numpy(spec.numpy()), s=(3, 5, 6)), torch.fft.irfftn(spec, s=(3, 5, 6)), tol)
    np.testing.assert_allclose(ct.fft.fft2(c).numpy(), np.fft.fft2(x), atol=1e-9)
    np.testing.assert_allclose(ct.fft.rfftn(cr).numpy(), np.fft.rfftn(r), atol=1e-9)


def test_helpers():
    for n in (1, 4, 7):
        same(ct.fft.fftfreq(n), torch.fft.fftfreq(n), 0)
        same(ct.fft.rfftfreq(n, d=0.5), torch.fft.rfftfreq(n, d=0.5), 0)
    x = RS.randn(4, 5)
    same(ct.fft.fftshift(ct.from_numpy(x)), torch.fft.fftshift(torch.from_numpy(x)), 0)
    same(ct.fft.ifftshift(ct.from_numpy(x), dim=1), torch.fft.ifftshift(torch.from_numpy(x), dim=1), 0)


def test_errors():
    for f in (lambda m: m.fft.fft(m.randn(4), n=0), lambda m: m.fft.fft(m.randn(4), norm="xx"),
              lambda m: m.fft.rfft(m.randn(4, dtype=m.cfloat)), lambda m: m.fft.fft(m.randn(4), dim=3),
              lambda m: m.fft.irfft(m.randn(1, dtype=m.cfloat)), lambda m: m.fft.fft2(m.randn(4)),
              lambda m: m.fft.fftn(m.randn(4, 4), s=(2,), dim=(0, 1)),
              lambda m: m.fft.fft(m.randn(4, dtype=m.half))):
        oracle.raises_like(lambda: f(ct), lambda: f(torch))


def _grad_pair(fn, x):
    c = ct.from_numpy(x.copy()).requires_grad_()
    t = torch.from_numpy(x.copy()).requires_grad_()
    w = RS.randn(*fn(torch, t).shape)
    (fn(ct, c).abs() * ct.from_numpy(w)).sum().backward()
    (fn(torch, t).abs() * torch.from_numpy(w)).sum().backward()
    same(c.grad, t.grad, 1e-8)


@pytest.mark.parametrize("norm", NORMS)
def test_gradients(norm):
    z, r = cplx((3, 7)), RS.randn(3, 8)
    _grad_pair(lambda m, a: m.fft.fft(a, norm=norm), z)
    _grad_pair(lambda m, a: m.fft.ifft(a, n=9, norm=norm), z)
    _grad_pair(lambda m, a: m.fft.rfft(a, norm=norm), r)
    _grad_pair(lambda m, a: m.fft.irfft(a, n=10, norm=norm), z)
    _grad_pair(lambda m, a: m.fft.fft2(a, norm=norm), z)
    _grad_pair(lambda m, a: m.fft.rfft2(a, norm=norm), r)
    _grad_pair(lambda m, a: m.fft.irfft2(a, s=(3, 12), norm=norm), z)
    _grad_pair(lambda m, a: m.fft.fft(a, norm=norm), r)


def test_spectral_layer_program():
    """An FNO-style spectral convolution, written as such models write it."""
    def spectral(m, x, w):
        xf = m.fft.rfft2(x)
        out = m.zeros(x.shape[0], w.shape[1], x.shape[-2], x.shape[-1] // 2 + 1, dtype=m.cfloat)
        out[:, :, :3, :3] = m.einsum("bixy,ioxy->boxy", xf[:, :, :3, :3], w)
        return m.fft.irfft2(out, s=(x.size(-2), x.size(-1)))
    x = RS.randn(2, 3, 8, 8).astype("float32")
    w = (RS.randn(3, 4, 3, 3) + 1j * RS.randn(3, 4, 3, 3)).astype("complex64")
    cx, tx = ct.from_numpy(x.copy()).requires_grad_(), torch.from_numpy(x.copy()).requires_grad_()
    cw, tw = ct.from_numpy(w.copy()).requires_grad_(), torch.from_numpy(w.copy()).requires_grad_()
    a, b = spectral(ct, cx, cw), spectral(torch, tx, tw)
    same(a, b, 1e-4)
    a.pow(2).sum().backward()
    b.pow(2).sum().backward()
    same(cx.grad, tx.grad, 1e-3)
    same(cw.grad, tw.grad, 1e-3)


@pytest.mark.parametrize("center", [True, False])
def test_stft_istft(center):
    x = RS.randn(2, 200)
    win = np.hanning(14)
    c, t = ct.from_numpy(x), torch.from_numpy(x)
    cw, tw = ct.from_numpy(win), torch.from_numpy(win)
    kw = dict(hop_length=4, win_length=14, center=center, return_complex=True)
    cs, ts = ct.stft(c, 16, window=cw, **kw), torch.stft(t, 16, window=tw, **kw)
    same(cs, ts, 1e-10)
    same(ct.stft(c[0], 16, window=cw, normalized=True, onesided=False, **kw),
         torch.stft(t[0], 16, window=tw, normalized=True, onesided=False, **kw), 1e-10)
    if center:
        tsn = ts.numpy()
        same(ct.istft(ct.from_numpy(tsn), 16, hop_length=4, win_length=14, window=cw, length=200),
             torch.istft(ts, 16, hop_length=4, win_length=14, window=tw, length=200), 1e-9)
    oracle.raises_like(lambda: ct.stft(c, 16), lambda: torch.stft(t, 16), first_line=True)


@pytest.mark.parametrize("pad_mode", ["reflect", "constant"])
def test_stft_istft_method_forms(pad_mode):
    """Tensor.stft / Tensor.istft take the functions' arguments, self first, and round-trip."""
    x = RS.randn(3, 120)
    c, t = ct.from_numpy(x), torch.from_numpy(x)
    cw, tw = ct.hann_window(12, dtype=ct.float64), torch.hann_window(12, dtype=torch.float64)
    kw = dict(hop_length=3, win_length=12, pad_mode=pad_mode, normalized=True, return_complex=True)
    cs, ts = c.stft(16, window=cw, **kw), t.stft(16, window=tw, **kw)
    same(cs, ts, 1e-10)
    same(c.stft(16, window=cw, onesided=False, **kw), t.stft(16, window=tw, onesided=False, **kw), 1e-10)
    back = cs.istft(16, hop_length=3, win_length=12, window=cw, normalized=True, length=120)
    same(back, ts.istft(16, hop_length=3, win_length=12, window=tw, normalized=True, length=120), 1e-9)
    np.testing.assert_allclose(back.numpy(), x, atol=1e-9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        oracle.raises_like(lambda: c.istft(16), lambda: t.istft(16))


_STFT_ERRORS = [
    lambda L, x, w: L.stft(x, 2000, window=L.ones(2000), center=False, return_complex=True),
    lambda L, x, w: L.stft(x, 256, hop_length=0, window=w, return_complex=True),
    lambda L, x, w: L.stft(x, 0, return_complex=True, center=False),
    lambda L, x, w: L.stft(L.ones(2, 2, 100), 16, return_complex=True),
    lambda L, x, w: L.stft(x, 256, window=w.view(16, 16), return_complex=True),
    lambda L, x, w: L.stft(x, 256, window=w, return_complex=True, align_to_window=True),
    lambda L, x, w: L.stft(x.int(), 256, window=w, return_complex=True),
    lambda L, x, w: L.stft(x, 256, window=w),
    lambda L, x, w: L.stft(x[0], 256, win_length=300, return_complex=True, normalized=True, onesided=False),
    lambda L, x, w: L.stft(x, 2000, return_complex=True),
    lambda L, x, w: L.stft(x.double(), 256, window=L.hann_window(100, dtype=L.float64), return_complex=True),
    lambda L, x, w: L.stft(x.to(L.cfloat), 256, window=L.hann_window(100), return_complex=True),
    lambda L, x, w: L.istft(L.stft(x, 256, window=w, return_complex=True), 256, window=L.hann_window(100)),
    lambda L, x, w: L.istft(L.stft(x, 256, window=w, return_complex=True), 256, win_length=300, onesided=True),
]


@pytest.mark.parametrize("k", range(len(_STFT_ERRORS)))
def test_stft_istft_errors_describe_the_call_like_torch(k):
    """stft's checks name the call (the centre-padded input, resolved hop and win lengths, the window) as torch's
    C++ does; a centre pad larger than the signal is F.pad's error on torch's 3-D view; istft words its own"""
    x = np.random.RandomState(0).randn(2, 1000).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        oracle.raises_like(lambda: _STFT_ERRORS[k](ct, ct.tensor(x), ct.hann_window(256)),
                           lambda: _STFT_ERRORS[k](torch, torch.tensor(x), torch.hann_window(256)))


_STFT_WARNINGS = """
import warnings, {lib} as L
x, w = L.ones(2, 600), L.hann_window(256)
with warnings.catch_warnings(record=True) as ws:
    warnings.simplefilter("always")
    L.stft(x, 256, return_complex=False); L.stft(x, 256, window=w, return_complex=False)
    s = L.stft(x, 256, return_complex=True); L.istft(s, 256); L.istft(s, 256)
for m in ws:
    print(m.category.__name__, str(m.message).split(" (Triggered")[0])
"""


def test_stft_istft_warnings_once_per_process_like_torch():
    """no window (stft's and istft's own texts) and return_complex=False warn once per process each"""
    import os
    import subprocess
    import sys
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    outs = [subprocess.run([sys.executable, "-c", _STFT_WARNINGS.format(lib=lib)], capture_output=True, text=True,
                           env=env, timeout=120, check=True).stdout for lib in ("cthtorch", "torch")]
    assert outs[0] == outs[1] and outs[0].count("UserWarning") == 3
