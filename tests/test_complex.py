"""Complex dtypes vs torch: dtype objects and promotion, creation, casts, numpy
interop, printing, views (view_as_real/complex, .real/.imag), elementwise math,
reductions, matmul/einsum, comparisons and their errors, and autograd with
torch's convention (the conjugate Wirtinger derivative)."""
import pickle
import io
import warnings

import numpy as np
import pytest

import cthtorch as ct
import oracle

torch = oracle.require_torch()
RS = np.random.RandomState(7)
CDT = ["complex64", "complex128"]


def cnp(shape, dtype="complex128"):
    return (RS.randn(*shape) + 1j * RS.randn(*shape)).astype(dtype)


def pair(arr):
    return ct.from_numpy(arr.copy()), torch.from_numpy(arr.copy())


def same(a, b, tol=1e-6):
    assert str(a.dtype) == str(b.dtype), (a.dtype, b.dtype)
    assert tuple(a.shape) == tuple(b.shape), (a.shape, b.shape)
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol, equal_nan=True)


def test_dtype_objects():
    for name in ("complex64", "complex128", "cfloat", "cdouble"):
        d, td = getattr(ct, name), getattr(torch, name)
        assert repr(d) == repr(td)
        assert d.is_complex and not d.is_floating_point and d.itemsize == td.itemsize
        assert repr(d.to_real()) == repr(td.to_real())
    assert ct.cfloat is ct.complex64 and ct.cdouble is ct.complex128
    assert repr(ct.float64.to_complex()) == "torch.complex128"
    assert pickle.loads(pickle.dumps(ct.complex64)) is ct.complex64
    z = ct.zeros(2, dtype=ct.cfloat)
    assert z.is_complex() and ct.is_complex(z) and not z.is_floating_point() and not ct.zeros(2).is_complex()


@pytest.mark.parametrize("a,b", [("float32", "complex64"), ("float64", "complex64"), ("complex64", "complex128"),
                                 ("int64", "complex64"), ("float16", "complex64"), ("bool", "complex128")])
def test_promotion(a, b):
    assert repr(ct.promote_types(getattr(ct, a), getattr(ct, b))) == \
        repr(torch.promote_types(getattr(torch, a), getattr(torch, b)))
    x, y = ct.ones(2, dtype=getattr(ct, a)), ct.ones(2, dtype=getattr(ct, b))
    tx, ty = torch.ones(2, dtype=getattr(torch, a)), torch.ones(2, dtype=getattr(torch, b))
    assert str((x + y).dtype) == str((tx + ty).dtype)


def test_python_complex_scalars():
    for dt in ("float32", "float64", "int64", "complex64"):
        x, tx = ct.ones(3, dtype=getattr(ct, dt)), torch.ones(3, dtype=getattr(torch, dt))
        same(x * 1j, tx * 1j)
        same(x + (2 - 1j), tx + (2 - 1j))
        same((1 + 1j) / (x + 1), (1 + 1j) / (tx + 1))
    same(ct.tensor([1 + 2j, -1j]), torch.tensor([1 + 2j, -1j]))
    same(ct.tensor([[1, 2.5], [1j, 0]]), torch.tensor([[1, 2.5], [1j, 0]]))
    same(ct.tensor([1, 2], dtype=ct.cdouble), torch.tensor([1, 2], dtype=torch.cdouble))
    ct.set_default_dtype(ct.float64)
    try:
        assert ct.tensor([1j]).dtype == ct.complex128 and (ct.ones(2, dtype=ct.float32) * 1j).dtype == ct.complex64
    finally:
        ct.set_default_dtype(ct.float32)


@pytest.mark.parametrize("dt", CDT)
def test_factories(dt):
    d = getattr(ct, dt)
    same(ct.zeros(2, 3, dtype=d), torch.zeros(2, 3, dtype=getattr(torch, dt)))
    same(ct.ones(4, dtype=d), torch.ones(4, dtype=getattr(torch, dt)))
    same(ct.full((2,), 3.0, dtype=d), torch.full((2,), 3.0, dtype=getattr(torch, dt)))
    assert ct.empty(3, dtype=d).dtype == d
    ct.manual_seed(0)
    r = ct.randn(200000, dtype=d)
    assert r.dtype == d
    # torch's complex normal: each part N(0, 1/2), so E|z|^2 = 1
    re, im = r.real.numpy(), r.imag.numpy()
    assert abs(re.var() - 0.5) < 0.01 and abs(im.var() - 0.5) < 0.01 and abs(re.mean()) < 0.01
    u = ct.rand(100000, dtype=d)
    assert 0 <= u.real.min().item() and u.real.max().item() < 1 and abs(u.imag.numpy().mean() - 0.5) < 0.01
    same(ct.zeros_like(r[:3]), torch.zeros(3, dtype=getattr(torch, dt)))


def test_complex_and_polar():
    a, b = RS.rand(5).astype("float32"), RS.rand(5).astype("float32")
    same(ct.complex(ct.from_numpy(a), ct.from_numpy(b)), torch.complex(torch.from_numpy(a), torch.from_numpy(b)))
    same(ct.polar(ct.from_numpy(a), ct.from_numpy(b)), torch.polar(torch.from_numpy(a), torch.from_numpy(b)))
    oracle.raises_like(lambda: ct.complex(ct.ones(2), ct.ones(2, dtype=ct.float64)),
                       lambda: torch.complex(torch.ones(2), torch.ones(2, dtype=torch.float64)))


def test_casts_item_numpy():
    arr = cnp((3, 2))
    z, tz = pair(arr)
    assert z.numpy().dtype == np.complex128 and np.shares_memory(z.numpy(), arr) is False
    shared = ct.from_numpy(arr)
    shared[0, 0] = 5
    assert arr[0, 0] == 5 + 0j
    same(z.to(ct.complex64), tz.to(torch.complex64))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = z.to(ct.float32)
    assert any("discards the imaginary part" in str(x.message) for x in w)
    same(r, tz.to(torch.float32))
    same(ct.arange(3).to(ct.complex64), torch.arange(3).to(torch.complex64))
    assert z[1, 1].item() == tz[1, 1].item() and isinstance(z[0, 0].item(), complex)
    assert z.tolist() == tz.tolist()
    assert np.asarray(ct.tensor([1 + 1j])).dtype == np.complex64


def test_printing():
    cases = [[1 + 2j, -1j], [1.5 - 2.25j, 100 + 0j], [1e-5 + 1j, 3e6 - 2j], [0j, 1 + 1j]]
    for c in cases:
        assert repr(ct.tensor(c)) == repr(torch.tensor(c))
        assert repr(ct.tensor(c, dtype=ct.cdouble)) == repr(torch.tensor(c, dtype=torch.cdouble))
    assert repr(ct.tensor(2 - 3j)) == repr(torch.tensor(2 - 3j))
    arr = cnp((3, 4), "complex64")
    assert repr(ct.from_numpy(arr)) == repr(torch.from_numpy(arr))
    assert repr(ct.zeros(0, dtype=ct.cfloat)) == repr(torch.zeros(0, dtype=torch.cfloat))


def test_save_load():
    z = ct.from_numpy(cnp((2, 3)))
    buf = io.BytesIO()
    ct.save(z, buf)
    buf.seek(0)
    same(ct.load(buf), torch.from_numpy(z.numpy()))


def test_views():
    arr = cnp((2, 3), "complex64")
    z, tz = pair(arr)
    same(ct.view_as_real(z), torch.view_as_real(tz))
    same(z.real, tz.real)
    same(z.imag, tz.imag)
    r = ct.view_as_real(z)
    r[0, 0, 1] = 9.0
    assert z[0, 0].item().imag == 9.0
    z.imag = ct.zeros(2, 3)
    assert (z.imag == 0).all().item()
    z.real[1] = 4.0
    assert z[1, 2].item() == 4 + 0j
    x = ct.arange(12.0).reshape(3, 2, 2)
    same(ct.view_as_complex(x), torch.view_as_complex(torch.arange(12.0).reshape(3, 2, 2)))
    for bad in (lambda m: m.view_as_complex(m.randn(3, 3)), lambda m: m.view_as_complex(m.randn(4, 2).t()),
                lambda m: m.view_as_complex(m.randn(5)[1:].reshape(2, 2)),
                lambda m: m.view_as_real(m.randn(3)), lambda m: m.randn(3).imag):
        oracle.raises_like(lambda: bad(ct), lambda: bad(torch))
    with pytest.raises(NotImplementedError):
        ct.view_as_complex(ct.randn(4, 2, dtype=ct.float16))
    c = z.conj()
    same(c, tz.conj().resolve_conj()) if False else None
    assert not c.is_conj()
    same(c.resolve_conj(), ct.from_numpy(np.conj(z.numpy())))


@pytest.mark.parametrize("dt", CDT)
def test_elementwise(dt):
    tol = 1e-5 if dt == "complex64" else 1e-12
    a, b = cnp((3, 4), dt), cnp((4,), dt)
    (za, ta), (zb, tb) = pair(a), pair(b)
    for f in (lambda x, y: x + y, lambda x, y: x - y, lambda x, y: x * y, lambda x, y: x / y,
              lambda x, y: ct_or(x).add(x, y, alpha=2), lambda x, y: x == y, lambda x, y: x != y,
              lambda x, y: x * 2.5, lambda x, y: 3 - x, lambda x, y: x ** 2, lambda x, y: x ** 0.5):
        same(f(za, zb), f(ta, tb), tol)
    for name in ("neg", "abs", "angle", "exp", "log", "sqrt", "sin", "cos", "tanh", "reciprocal", "sgn", "conj"):
        same(getattr(za, name)(), getattr(ta, name)().resolve_conj(), tol)
    same(ct.abs(za), torch.abs(ta), tol)
    assert ct.isclose(za, za + 1e-9).all().item() and ct.allclose(za, za.clone())
    same(ct.isclose(za, zb), torch.isclose(ta, tb))
    same(za.angle(), ta.angle(), tol)
    same(ct.tensor([1.0, -2.0, 0.0]).angle(), torch.tensor([1.0, -2.0, 0.0]).angle())


def ct_or(x):
    return ct if isinstance(x, ct.Tensor) else torch


def test_unsupported_have_torch_errors():
    z, tz = ct.ones(3, dtype=ct.cfloat), torch.ones(3, dtype=torch.cfloat)
    for f in (lambda x: x < x, lambda x: x.ge(x), lambda x: x.sign(), lambda x: x.view_as_real() if False else x.max()):
        with pytest.raises(Exception) as et:
            f(tz)
        with pytest.raises(Exception) as ec:
            f(z)
        assert type(ec.value).__name__ == type(et.value).__name__ or isinstance(ec.value, NotImplementedError)


@pytest.mark.parametrize("dt", CDT)
def test_reductions(dt):
    tol = 1e-5 if dt == "complex64" else 1e-12
    za, ta = pair(cnp((3, 4, 5), dt))
    same(za.sum(), ta.sum(), tol)
    same(za.sum(1), ta.sum(1), tol)
    same(za.sum((0, 2), keepdim=True), ta.sum((0, 2), keepdim=True), tol)
    same(za.mean(-1), ta.mean(-1), tol)
    same(za.mean(), ta.mean(), tol)
    same(ct.from_numpy(np.array(1 + 2j)).sum(), torch.tensor(1 + 2j, dtype=torch.complex128).sum())


@pytest.mark.parametrize("dt", CDT)
def test_shape_index_ops(dt):
    za, ta = pair(cnp((3, 4), dt))
    for f in (lambda x: x.reshape(4, 3), lambda x: x.permute(1, 0).contiguous(), lambda x: x.t(), lambda x: x[1:, ::2],
              lambda x: x[[0, 2]], lambda x: x.clone(), lambda x: x.flatten(), lambda x: x.unsqueeze(0).expand(2, 3, 4),
              lambda x: x.flip(0), lambda x: x.transpose(0, 1).reshape(-1)):
        same(f(za), f(ta))
    same(ct.cat([za, za]), torch.cat([ta, ta]))
    same(ct.stack([za, za], 1), torch.stack([ta, ta], 1))


@pytest.mark.parametrize("dt", CDT)
def test_matmul_einsum(dt):
    tol = 1e-4 if dt == "complex64" else 1e-10
    (za, ta), (zb, tb) = pair(cnp((2, 3, 4), dt)), pair(cnp((4, 5), dt))
    same(za @ zb, ta @ tb, tol)
    same(ct.matmul(za[0], zb), torch.matmul(ta[0], tb), tol)
    same(ct.einsum("bij,jk->bik", za, zb), torch.einsum("bij,jk->bik", ta, tb), tol)
    same(ct.einsum("bij,bij->b", za, za), torch.einsum("bij,bij->b", ta, ta), tol)


def grads(fn, *arrays):
    cs = [ct.from_numpy(a.copy()).requires_grad_() for a in arrays]
    ts = [torch.from_numpy(a.copy()).requires_grad_() for a in arrays]
    fn(ct, *cs).backward()
    fn(torch, *ts).backward()
    for c, t in zip(cs, ts):
        same(c.grad, t.grad, 1e-9)


def test_autograd_matches_torch():
    z = cnp((4,))
    w = cnp((4,))
    x = RS.randn(4, 2)
    # d|z|^2 = 2 z (the conjugate Wirtinger convention)
    zz = ct.from_numpy(z.copy()).requires_grad_()
    (zz.abs() ** 2).sum().backward()
    np.testing.assert_allclose(zz.grad.numpy(), 2 * z)
    grads(lambda m, a: (a.abs() ** 2).sum(), z)
    grads(lambda m, a, b: (a * b).abs().sum(), z, w)
    grads(lambda m, a, b: (a / b).real.sum() + (a - b).imag.sum(), z, w)
    grads(lambda m, a: (a.exp() + a.log() + a.sqrt()).abs().sum(), z)
    grads(lambda m, a: a.angle().sum(), z)
    grads(lambda m, a: (a ** 2).abs().sum(), z)
    grads(lambda m, a: m.view_as_real(a * (1 + 2j)).sum(), z)
    grads(lambda m, a: (m.view_as_complex(a) * (2 - 1j)).abs().sum(), x)
    grads(lambda m, a, b: m.polar(a, b).real.sum() + m.polar(a, b).imag.sum(), RS.rand(4), RS.randn(4))
    grads(lambda m, a, b: (m.matmul(a.reshape(2, 2), b.reshape(2, 2))).abs().sum(), z, w)
    grads(lambda m, a: a.sum().abs() + a.mean().real, z)
    grads(lambda m, a: a.conj().imag.sum(), z)


def test_rotary_embedding_program():
    """LLaMA's rotary embedding, written as the model writes it."""
    def rope(m, x, dim=8, end=6):
        freqs = 1.0 / (10000 ** (m.arange(0, dim, 2)[: (dim // 2)].float() / dim))
        t = m.arange(end, device=freqs.device)
        freqs = m.outer(t, freqs).float()
        freqs_cis = m.polar(m.ones_like(freqs), freqs)
        xc = m.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
        fc = freqs_cis.view(1, end, 1, dim // 2)
        return m.view_as_real(xc * fc).flatten(3).type_as(x)
    x = RS.randn(2, 6, 3, 8).astype("float32")
    cx, tx = ct.from_numpy(x.copy()).requires_grad_(), torch.from_numpy(x.copy()).requires_grad_()
    a, b = rope(ct, cx), rope(torch, tx)
    same(a, b, 1e-5)
    (a ** 2).sum().backward()
    (b ** 2).sum().backward()
    same(cx.grad, tx.grad, 1e-4)


def test_cuda_complex_is_not_implemented():
    if not ct.cuda.is_available():
        pytest.skip("no CUDA device")
    with pytest.raises(NotImplementedError):
        ct.ones(2, dtype=ct.cfloat).cuda() + 1


@pytest.mark.parametrize("expr", [
    "L.zeros(3, dtype=L.cfloat).fill_(L.tensor(2 + 1j))",
    "L.zeros(3, dtype=L.cdouble).fill_(1j)",
    "L.zeros(3).fill_(L.tensor(1j))",
    "L.zeros(3).fill_(1j)",
    "float(L.tensor(2 + 0j))",
    "float(L.tensor(2 + 1j))",
    "int(L.tensor(3 + 0j))",
    "int(L.tensor(3 - 2j))",
    "bool(L.tensor(1j))",
    "bool(L.tensor(0j))",
    "L.arange(3, dtype=L.complex64)",
    "L.randint(0, 5, (3,), dtype=L.cfloat)",
    "L.tensor([1 + 1j]).abs_()",
    "L.tensor([0.5, -1.5], dtype=L.float64).to(L.complex64)",
])
def test_scalar_conversions_and_fills_match_torch(expr):
    # each gives torch's value or torch's error type, never a silently different value
    def run(L):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                return eval(expr), None
            except Exception as e:   # noqa: BLE001 - compared below
                return None, type(e)
    (va, ea), (vb, eb) = run(ct), run(torch)
    assert ea is eb or (ea is not None and eb is not None and issubclass(ea, eb)), (ea, eb)
    if eb is None:
        if isinstance(vb, torch.Tensor):
            same(va, vb)
        else:
            assert type(va) is type(vb) and va == vb


def _ternary_cases(L, a, b, c, w):
    """lerp (number and tensor weight), addcmul and addcdiv with their in-place forms, and their gradients"""
    A, B, C = (L.tensor(v, requires_grad=True) for v in (a, b, c))
    W = L.tensor(w, requires_grad=True)
    outs = [A.lerp(B, 0.3), A.lerp(B, 0.8), A.lerp(B, W), L.addcmul(A, B, C, value=0.5), L.addcdiv(A, B, C, value=-2)]
    loss = sum(((o * o.conj()).real * (k + 1)).sum() + o.imag.sum() for k, o in enumerate(outs))
    grads = L.autograd.grad(loss, (A, B, C, W))
    inplace = [A.detach().clone().lerp_(B.detach(), 0.6), A.detach().clone().addcmul_(B.detach(), C.detach()),
               A.detach().clone().addcdiv_(B.detach(), C.detach(), value=0.25)]
    return [o.detach().numpy() for o in outs + inplace] + [g.numpy() for g in grads]


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_lerp_addcmul_addcdiv_on_complex_match_torch(dtype):
    """the Adam family's update ops on complex tensors (torch computes them; they raised here), with torch's
    conjugate gradients"""
    a, b, c, w = cnp((3, 4), dtype), cnp((3, 4), dtype), cnp((3, 4), dtype), cnp((3, 4), dtype) * 0.4
    tol = 1e-5 if dtype == np.complex64 else 1e-12
    for ours, theirs in zip(_ternary_cases(ct, a, b, c, w), _ternary_cases(torch, a, b, c, w)):
        assert ours.dtype == theirs.dtype
        np.testing.assert_allclose(ours, theirs, rtol=tol, atol=tol)


def test_ordered_ops_refuse_complex_as_torch():
    x = ct.ones(2, dtype=ct.cfloat)
    xt = torch.ones(2, dtype=torch.cfloat)
    for name in ("maximum", "minimum", "fmax", "fmin"):
        oracle.raises_like(lambda: getattr(ct, name)(x, x), lambda: getattr(torch, name)(xt, xt))
    oracle.raises_like(lambda: x.clamp(min=0), lambda: xt.clamp(min=0))


def test_lerp_checks_end_and_weight_dtypes_as_torch():
    """end and a weight tensor have self's dtype (a real weight for complex inputs is refused, by C++ type names);
    a 0-d weight converts as a Scalar does"""
    for a, e, w in [("complex64", "complex64", "float32"), ("float32", "float32", "float64"),
                    ("float64", "float64", "float32"), ("float16", "float16", "float32"),
                    ("complex128", "complex128", "complex64"), ("float32", "float64", "float32"),
                    ("float32", "float32", "complex64")]:
        oracle.raises_like(lambda: ct.ones(2, dtype=getattr(ct, a)).lerp(ct.ones(2, dtype=getattr(ct, e)),
                                                                         ct.ones(2, dtype=getattr(ct, w))),
                           lambda: torch.ones(2, dtype=getattr(torch, a)).lerp(torch.ones(2, dtype=getattr(torch, e)),
                                                                               torch.ones(2, dtype=getattr(torch, w))))
    r = ct.ones(2).lerp(ct.zeros(2), ct.tensor(0.25, dtype=ct.float64))
    assert r.dtype == ct.float32 and r.tolist() == torch.ones(2).lerp(torch.zeros(2), torch.tensor(0.25,
                                                                      dtype=torch.float64)).tolist()


@pytest.mark.parametrize("dtype", CDT)
def test_vector_norms_of_complex_tensors_match_torch(dtype):
    """p-norms of complex tensors are the moduli's (real results: torch.norm, Tensor.norm, linalg.vector_norm and
    linalg.norm over vectors), with torch's gradients"""
    x = cnp((3, 4), dtype)
    got = []
    for L in (ct, torch):
        X = L.tensor(x, requires_grad=True)
        outs = [L.norm(X), X.norm(2, 1), X.norm(1), X.norm(float("inf"), 0, keepdim=True),
                L.linalg.vector_norm(X, 3, dim=(0, 1)), L.linalg.norm(X, dim=1), L.linalg.vector_norm(X, 0),
                L.linalg.vector_norm(X, dtype=getattr(L, "complex128"))]
        loss = sum(o.sum() * (k + 1) for k, o in enumerate(outs[:6]))
        got.append([o.detach().numpy() for o in outs] + [L.autograd.grad(loss, X)[0].numpy()])
    tol = 1e-5 if dtype == "complex64" else 1e-12
    for ours, theirs in zip(*got):
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs, rtol=tol, atol=tol)


def test_complex_linalg_solvers_say_they_are_not_implemented():
    """what cthtorch has no complex LAPACK path for says so (not "Expected a floating point or complex tensor")"""
    a = ct.tensor(cnp((3, 3)))
    for fn in (ct.linalg.det, ct.linalg.inv, ct.linalg.svdvals, ct.linalg.qr):
        with pytest.raises(NotImplementedError, match="not implemented for complex tensors"):
            fn(a)


def test_mse_loss_and_cosine_similarity_refuse_complex_as_torch():
    """torch's mse kernel has no complex case (the weight= path computes) and cosine_similarity wants a floating
    common dtype, integers included; cthtorch computed complex numbers for both"""
    a, at = pair(cnp((2, 3), "complex64"))
    r, rt = ct.ones(2, 3), torch.ones(2, 3)
    F, Ft = ct.nn.functional, torch.nn.functional
    for fn in (lambda L, x, y: L.nn.functional.mse_loss(x, y), lambda L, x, y: L.nn.MSELoss(reduction="none")(x, y),
               lambda L, x, y: L.nn.functional.cosine_similarity(x, y)):
        oracle.raises_like(lambda: fn(ct, a, r), lambda: fn(torch, at, rt))
        oracle.raises_like(lambda: fn(ct, r, a), lambda: fn(torch, rt, at))
    i, it = ct.ones(2, 3, dtype=ct.long), torch.ones(2, 3, dtype=torch.long)
    oracle.raises_like(lambda: F.cosine_similarity(i, i), lambda: Ft.cosine_similarity(it, it))
    assert F.cosine_similarity(i, r).tolist() == Ft.cosine_similarity(it, rt).tolist()
    same(F.mse_loss(a, a * 0.5, weight=ct.full((2, 3), 2.0)), Ft.mse_loss(at, at * 0.5, weight=torch.full((2, 3), 2.0)))


@pytest.mark.parametrize("dtype", CDT)
def test_cumsum_of_complex_tensors_matches_torch(dtype):
    """cumsum along any dim of complex tensors (strided, 0-d, a complex dtype= for a real input), its gradient,
    and out= (cthtorch refused complex scans)"""
    x = cnp((3, 4), dtype)
    got = []
    for L in (ct, torch):
        X = L.tensor(x, requires_grad=True)
        outs = [X.cumsum(0), X.cumsum(-1), L.cumsum(X.t(), 1), X[0, 0].cumsum(0),
                L.cumsum(X, 1, dtype=L.complex128), L.cumsum(L.tensor(x.real), 0, dtype=getattr(L, dtype))]
        loss = sum(((o * o.conj()).real * (k + 1)).sum() for k, o in enumerate(outs[:5]))
        o = L.empty(0, dtype=getattr(L, dtype))
        L.cumsum(X.detach(), 0, out=o)
        got.append([v.detach().numpy() for v in outs] + [L.autograd.grad(loss, X)[0].numpy(), o.numpy()])
    tol = 1e-5 if dtype == "complex64" else 1e-12
    for ours, theirs in zip(*got):
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", CDT)
def test_var_and_std_of_complex_tensors_match_torch(dtype):
    """var/std (and var_mean/std_mean) of complex tensors are real (the parts' variances added) over all, one
    or several dims, with corrections and keepdim, and torch's (complex) gradients; cthtorch refused them"""
    x = cnp((3, 4, 2), dtype)
    got = []
    for L in (ct, torch):
        X = L.tensor(x, requires_grad=True)
        outs = [X.var(), X.std(), X.var(1), X.std(-1, keepdim=True), L.var(X, (0, 2), correction=0),
                L.std(X, dim=[0, -1], unbiased=False), X.var(dim=None, keepdim=True), L.var_mean(X, 1)[0],
                L.std_mean(X, (0, 1))[0]]
        loss = sum(o.sum() * (k + 1) for k, o in enumerate(outs))
        got.append([o.detach().numpy() for o in outs] + [L.autograd.grad(loss, X)[0].numpy()])
    tol = 1e-5 if dtype == "complex64" else 1e-12
    for ours, theirs in zip(*got):
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs, rtol=tol, atol=tol)


def test_var_and_std_of_a_0d_complex_tensor_match_torch():
    """a 0-d complex tensor's var/std reduce its one element (NaN at the default correction, 0 with
    correction=0), over all dims or dim 0 / -1, with torch's gradient; cthtorch raised NotImplementedError.
    (torch's 'degrees of freedom is <= 0' warning is given by no cthtorch var, real or complex.)"""
    got = []
    for L in (ct, torch):
        X = L.tensor(1.5 - 2j, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            outs = [X.var(), X.std(), X.var(0), X.std(-1, keepdim=True), L.var(X, correction=0),
                    L.std(X, dim=0, unbiased=False)]
        loss = outs[4] + outs[5] * 2
        got.append([o.detach().numpy() for o in outs] + [L.autograd.grad(loss, X)[0].numpy()])
    for ours, theirs in zip(*got):
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-7)


def test_sum_and_mean_of_a_0d_complex_tensor_over_dim_0_match_torch():
    """dim 0 / -1 of a 0-d complex tensor is the tensor itself (cthtorch reduced view_as_real's pair dim)"""
    for L in (ct, torch):
        X = L.tensor(1.5 - 2j)
        got = [X.sum(0), X.mean(-1), X.sum(0, keepdim=True), L.mean(X, [0], keepdim=True)]
        assert [(complex(o), tuple(o.shape), str(o.dtype).split(".")[-1]) for o in got] == \
            [(1.5 - 2j, (), "complex64")] * 4
