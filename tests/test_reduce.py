"""max/min/amax/argmax/all/any/prod/var/std/logsumexp/cumsum/sort/topk vs torch, with gradients."""
import numpy as np
import pytest

import cthtorch as ct
import oracle

torch = oracle.require_torch()
RS = np.random.RandomState(0)
X = RS.randn(3, 4, 5)
XT = X.copy()
XT[0, 0, :2] = 1.0   # ties
same = oracle.same   # values, dtype, shape within tol (tests/oracle.py)


CASES = [
    ("max", lambda L, x: x.max()), ("max_dim", lambda L, x: x.max(1)), ("max_dim_k", lambda L, x: x.max(-1, keepdim=True)),
    ("min_dim", lambda L, x: x.min(0)), ("amax", lambda L, x: x.amax((0, 2))), ("amin", lambda L, x: x.amin(1, keepdim=True)),
    ("argmax", lambda L, x: x.argmax()), ("argmax1", lambda L, x: x.argmax(1)), ("argmin_k", lambda L, x: x.argmin(2, keepdim=True)),
    ("all", lambda L, x: (x > -3).all()), ("any_dim", lambda L, x: (x > 1).any(1)), ("prod", lambda L, x: x.prod()),
    ("prod1", lambda L, x: x.prod(1)), ("var", lambda L, x: x.var()), ("var_dim", lambda L, x: x.var(1, keepdim=True)),
    ("var_c", lambda L, x: x.var(dim=(0, 1), correction=0)), ("std", lambda L, x: x.std(2, unbiased=False)),
    ("lse", lambda L, x: x.logsumexp(1)), ("lse2", lambda L, x: L.logsumexp(x, (0, 2), keepdim=True)),
    ("cumsum", lambda L, x: x.cumsum(1)), ("cumprod", lambda L, x: x.cumprod(2)),
    ("sort", lambda L, x: x.sort(1)), ("sort_desc", lambda L, x: x.sort(-1, descending=True)),
    ("argsort", lambda L, x: x.argsort(0)), ("topk", lambda L, x: x.topk(2, 1)), ("topk_small", lambda L, x: x.topk(3, largest=False)),
    ("maximum_via_max", lambda L, x: L.max(x, x * 0.5)),
]


@pytest.mark.parametrize("name,f", CASES, ids=[c[0] for c in CASES])
def test_values(name, f):
    for data in ((X, XT) if "topk" not in name else (X,)):   # tie order in topk is unspecified
        same(f(ct, ct.tensor(data)), f(torch, torch.tensor(data)))
    same(f(ct, ct.tensor(X).float()), f(torch, torch.tensor(X).float()), tol=1e-5)


@pytest.mark.parametrize("name,f", [c for c in CASES if c[0] not in ("argmax", "argmax1", "argmin_k", "all", "any_dim", "argsort", "cumprod")],
                         ids=[c[0] for c in CASES if c[0] not in ("argmax", "argmax1", "argmin_k", "all", "any_dim", "argsort", "cumprod")])
def test_gradients(name, f):
    gs = []
    for L in (ct, torch):
        x = L.tensor(XT, requires_grad=True)
        out = f(L, x)
        out = out[0] if isinstance(out, tuple) else out
        (out * out.detach().abs().add(1)).sum().backward()
        gs.append(np.asarray(x.grad.tolist()))
    np.testing.assert_allclose(gs[0], gs[1], rtol=1e-6, atol=1e-8)


def test_named_tuples_and_ints():
    r = ct.tensor([[1, 5], [7, 2]]).max(1)
    assert r.values.tolist() == [5, 7] and r.indices.tolist() == [1, 0] and r[0].dtype == ct.int64
    assert "torch.return_types.max" in repr(r)
    assert ct.tensor([3, 1, 2]).sort().values.tolist() == [1, 2, 3]
    assert ct.tensor([True, False]).any().item() is True
    assert ct.tensor([2, 3], dtype=ct.int32).prod().dtype == ct.int64
    with pytest.raises(RuntimeError, match="Expected reduction dim to be specified for input.numel\\(\\) == 0"):
        ct.zeros(0).max()
    with pytest.raises(RuntimeError, match="std and var only support floating point"):
        ct.tensor([1, 2]).var()
    nan = ct.tensor([1.0, float("nan"), 3.0])
    assert np.isnan(nan.max().item()) and nan.argmax().item() == 1


def test_topk_selection_matches_torch_with_ties_nans_and_k0():
    """small k takes the insertion selection (k <= 16), k == 0 takes none:
    values equal torch's, indices point at them, sorts stay stable"""
    torch = oracle.require_torch()
    rs = np.random.RandomState(0)
    for _ in range(200):
        shape = tuple(rs.randint(1, 8, size=rs.randint(1, 4)))
        dim = int(rs.randint(-len(shape), len(shape)))
        a = rs.randint(0, 5, size=shape).astype(np.float32)
        if rs.rand() < 0.3:
            a.flat[rs.randint(a.size)] = np.nan
        k, largest = int(rs.randint(0, shape[dim] + 1)), bool(rs.rand() < 0.5)
        tv, _ = torch.tensor(a).topk(k, dim, largest=largest)
        cv, ci = ct.tensor(a).topk(k, dim, largest=largest)
        np.testing.assert_array_equal(cv.numpy(), tv.numpy())
        np.testing.assert_array_equal(np.take_along_axis(a, ci.numpy(), dim), cv.numpy())
        ts = torch.tensor(a).sort(dim=dim, descending=largest, stable=True)
        cs = ct.tensor(a).sort(dim=dim, descending=largest, stable=True)
        np.testing.assert_array_equal(cs[0].numpy(), ts[0].numpy())
        np.testing.assert_array_equal(cs[1].numpy(), ts[1].numpy())
    big = rs.rand(400, 300).astype(np.float32)   # threaded rows
    np.testing.assert_array_equal(ct.tensor(big).topk(7, 1)[1].numpy(), torch.tensor(big).topk(7, 1)[1].numpy())


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_max_min_over_rows_nan_and_ties_match_torch(dt):
    """contiguous last-dim max/min/argmax/argmin run in the input's dtype
    (rows in parallel): the first NaN wins, else the first of equal extremes"""
    torch = oracle.require_torch()
    a = np.random.RandomState(4).randn(300, 257)
    a[5, 100] = np.nan
    a[7, 3] = a[7, 9] = np.nan
    a[9, 4] = a[9, 8] = 50
    a[11, :] = 0.0
    a[11, 3] = -0.0
    x, y = ct.tensor(a).to(getattr(ct, dt)), torch.tensor(a).to(getattr(torch, dt))
    for name in ("max", "min"):
        for keep in (False, True):
            (cv, ci), (tv, ti) = getattr(x, name)(-1, keepdim=keep), getattr(y, name)(-1, keepdim=keep)
            assert tuple(cv.shape) == tuple(tv.shape) and cv.dtype == getattr(ct, dt)
            np.testing.assert_array_equal(cv.numpy(), tv.numpy())
            np.testing.assert_array_equal(ci.numpy(), ti.numpy())
    np.testing.assert_array_equal(x.argmax(1).numpy(), y.argmax(1).numpy())
    np.testing.assert_array_equal(x.argmin(1).numpy(), y.argmin(1).numpy())
    # over a leading dim (inner > 1): columns walked a row at a time, the same rules
    a3 = a[:296].reshape(4, 74, 257)
    a3[1, 9, 3] = np.nan   # a NaN after the column's extreme, and one before a larger value
    a3[2, 0, 5] = np.nan
    a3[2, 50, 5] = 99
    x3, y3 = ct.tensor(a3).to(getattr(ct, dt)), torch.tensor(a3).to(getattr(torch, dt))
    for name in ("max", "min"):
        for d in (0, 1, -2):
            (cv, ci), (tv, ti) = getattr(x3, name)(d), getattr(y3, name)(d)
            np.testing.assert_array_equal(cv.numpy(), tv.numpy())
            np.testing.assert_array_equal(ci.numpy(), ti.numpy())
        n0 = ct.get_num_threads()
        try:   # the same at one and two threads
            ct.set_num_threads(2)
            (cv2, ci2) = getattr(x3, name)(1)
        finally:
            ct.set_num_threads(n0)
        np.testing.assert_array_equal(cv2.numpy(), getattr(y3, name)(1)[0].numpy())
        np.testing.assert_array_equal(ci2.numpy(), getattr(y3, name)(1)[1].numpy())
    (cv, ci), (tv, ti) = x3.transpose(0, 2).max(1), y3.transpose(0, 2).max(1)   # not contiguous: the generic path
    np.testing.assert_array_equal(cv.numpy(), tv.numpy())
    np.testing.assert_array_equal(ci.numpy(), ti.numpy())


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("shape,dim", [((64, 33), 1), ((64, 5), 1), ((300, 3), 0), ((9, 40), 0), ((5, 6, 7), (0, 2)),
                                       ((4, 70), -1), ((70,), 0)])
def test_amax_amin_float_kernel(dt, shape, dim):
    """amax/amin of float32/float64 in the dtype: NaN sticks, and +-0 ties over contiguous rows
    resolve as torch's lanes do (lane l keeps its first, then lanes in order). Column
    reductions keep the first of a +-0 tie, where torch's vector max may keep the later one:
    their signs of zero are not compared"""
    rs = np.random.RandomState(len(shape) * 7 + shape[0])
    x = rs.randn(*shape).astype(dt)
    flat = x.reshape(-1)
    flat[rs.randint(0, flat.size, max(1, flat.size // 10))] = 0.0
    flat[rs.randint(0, flat.size, max(1, flat.size // 10))] = -0.0
    xn = x.copy()
    xn.reshape(-1)[rs.randint(0, flat.size, 3)] = np.nan
    for arr in (x, xn, -np.abs(x)):
        for f in ("amax", "amin"):
            got = getattr(ct, f)(ct.from_numpy(arr), dim).numpy()
            want = getattr(torch, f)(torch.from_numpy(arr), dim).numpy()
            np.testing.assert_array_equal(got, want)
            if dim in (-1, len(shape) - 1):
                assert np.array_equal(np.signbit(got), np.signbit(want)), (f, shape, dim)
    # a transposed (non-contiguous) input
    if x.ndim == 2:
        got = ct.amax(ct.from_numpy(x).t(), dim).numpy()
        np.testing.assert_array_equal(got, torch.amax(torch.from_numpy(x).t(), dim).numpy())


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_amax_amin_rows_of_every_width(dt):
    """rows of 1..20 (under, at and over a vector), contiguous and strided (x[:, ::2]), with
    NaNs and ties on many rows: the picked values match torch's row by row, the sign of a +-0
    best too (a NaN's sign bit is not compared: torch's vector maximum sets it)"""
    rs = np.random.RandomState(3)
    for K in range(1, 21):
        x = rs.randint(-2, 3, size=(97, 2 * K)).astype(dt)   # many ties, many zeros
        x[x == 0] = np.where(rs.rand(int((x == 0).sum())) < 0.5, 0.0, -0.0)
        x[rs.rand(*x.shape) < 0.02] = np.nan
        for arr in (x[:, :K].copy(), x[:, ::2]):
            for f in ("amax", "amin"):
                got = getattr(ct, f)(ct.from_numpy(arr), 1).numpy()
                want = getattr(torch, f)(torch.from_numpy(arr), 1).numpy()
                np.testing.assert_array_equal(got, want)
                num = ~np.isnan(want)
                assert np.array_equal(np.signbit(got[num]), np.signbit(want[num])), (f, K)


def test_amax_lane_zero_order():
    v = [-5.0] * 33
    v[0], v[8], v[1] = -1.0, -0.0, 0.0
    for dt in ("float32", "float64"):
        got = ct.amax(ct.tensor(v, dtype=getattr(ct, dt)), 0).item()
        want = torch.amax(torch.tensor(v, dtype=getattr(torch, dt)), 0).item()
        assert got == want and np.signbit(got) == np.signbit(want)


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_amax_amin_zero_sign_as_torch(dt):
    """a best of +-0 takes torch's sign: rows (its 4 vector accumulators keep the later of equal
    lanes, its lanes and the elements after whole groups of 4 vectors the first; a row under 4
    vectors is all such elements) and outputs in blocks of 4 vectors of columns (the later row), on
    contiguous rows and columns of +-0 and -1 (+1 for amin)"""
    rs = np.random.RandomState(11)
    w = 8 if dt == "float32" else 4
    for K in list(range(w - 1, 12 * w + 3)) + [200]:
        for f, other in (("amax", -1.0), ("amin", 1.0)):
            x = rs.choice([0.0, -0.0, other], size=(40, K), p=[0.3, 0.3, 0.4]).astype(dt)
            for arr, dim in ((x, 1), (x.T.copy(), 0)):
                got = getattr(ct, f)(ct.from_numpy(arr), dim).numpy()
                want = getattr(torch, f)(torch.from_numpy(arr), dim).numpy()
                np.testing.assert_array_equal(got, want)
                assert np.array_equal(np.signbit(got), np.signbit(want)), (f, K, dim)


@pytest.mark.parametrize("dt", ["float32", "float64", "int32", "int64"])
def test_logsumexp_over_a_leading_dim_like_torch(dt):
    # outputs adjacent in memory, elements a row apart (dim 0 of a matrix): walked a block of
    # columns at a time; 300 columns cross a block edge. NaN wins over inf, all -inf stays -inf
    rs = np.random.RandomState(5)
    x = (rs.randn(9, 300, 3) * 4).astype(dt)
    if dt.startswith("float"):
        x[0, 3, 2] = np.nan; x[:, 1, 1] = np.inf; x[:, 2, 0] = -np.inf; x[4, 5, 0] = np.inf; x[6, 5, 0] = np.nan
        x[2, 299, 1] = np.inf
    tol = 1e-12 if dt == "float64" else 1e-5   # integers give float32
    for d in (0, 1, (0, 2), (0, 1)):
        same(ct.tensor(x).logsumexp(d), torch.tensor(x).logsumexp(d), tol=tol)
        same(ct.tensor(x).logsumexp(d, keepdim=True), torch.tensor(x).logsumexp(d, keepdim=True), tol=tol)
    # a transposed view: its dim 1 is the strided one
    same(ct.tensor(x[:, :, 0]).t().logsumexp(1), torch.tensor(x[:, :, 0]).t().logsumexp(1), tol=tol)
    same(ct.zeros(0, 4).logsumexp(0), torch.zeros(0, 4).logsumexp(0))
    g = rs.randn(6, 7)
    a = [L.tensor(g, requires_grad=True) for L in (ct, torch)]
    for t in a:
        t.logsumexp(0).sum().backward()
    np.testing.assert_allclose(a[0].grad.numpy(), a[1].grad.numpy(), rtol=1e-12)
    big = ct.tensor(rs.randn(64, 3000).astype("float32"))
    n0 = ct.get_num_threads()
    try:   # bit-equal at one and two threads
        ct.set_num_threads(1)
        r1 = big.logsumexp(0).numpy()
        ct.set_num_threads(2)
        assert np.array_equal(r1, big.logsumexp(0).numpy())
    finally:
        ct.set_num_threads(n0)


def test_std_gradient_where_the_std_is_zero_is_zero_as_torch():
    """torch's std_backward masks a zero std: a constant row's gradient is 0, not 0 / 0 = NaN"""
    torch = oracle.require_torch()
    got = []
    for L in (ct, torch):
        x = L.tensor([[1.0, 1.0, 1.0], [1.0, 2.0, 4.0]], requires_grad=True)
        s = L.tensor(2.5, requires_grad=True)
        loss = x.std(1).sum() + L.std_mean(x, 1)[0].sum() * 2 + s.std(unbiased=False) + x.std(1, keepdim=True).sum()
        loss.backward()
        got.append((x.grad.numpy(), s.grad.numpy()))
    for ours, theirs in zip(*got):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-7)
