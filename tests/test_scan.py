"""The scan family vs torch: cumsum/cumprod/logcumsumexp/cummax/cummin values,
dtypes, ties, NaN, non-contiguous inputs, out=, errors and gradients."""
import numpy as np
import pytest

import cthtorch as ct
import oracle

torch = oracle.require_torch()
RS = np.random.RandomState(0)
DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]


def pair(a, dtype):
    t = torch.tensor(a).to(getattr(torch, dtype))
    return ct.tensor(t.float().numpy() if dtype == "bfloat16" else t.numpy()).to(getattr(ct, dtype)), t
same = oracle.same


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"])
def test_values_dtypes(op, dtype):
    a = RS.randint(0, 3, (4, 5, 6)).astype(float) * (1 if dtype in ("bool", "uint8") else RS.choice([-1, 1], (4, 5, 6)))
    c, t = pair(a, dtype)
    for d in (0, 1, 2, -1):
        try:
            want = getattr(torch, op)(t, d)
        except Exception:
            oracle.raises_like(lambda: getattr(ct, op)(c, d), lambda: getattr(torch, op)(t, d))
            continue
        tol = 1e-2 if dtype in ("float16", "bfloat16") else 1e-6
        same(getattr(ct, op)(c, d), want, tol)
        same(getattr(c, op)(d), want, tol)


@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_dtype_argument(op):
    c, t = pair(RS.randn(3, 4), "float32")
    for dt in ("int32", "float64", "float16"):
        same(getattr(ct, op)(c, 1, dtype=getattr(ct, dt)), getattr(torch, op)(t, 1, dtype=getattr(torch, dt)), 1e-2)
    oracle.raises_like(lambda: ct.cumsum(c, 0, dtype=ct.bool), lambda: torch.cumsum(t, 0, dtype=torch.bool))


def test_ties_take_last_index_and_nan_takes_over():
    a = [[1., 3., 3., 2., 3., float("nan"), 5., float("nan"), 1.], [2., 2., 1., 1., 0., 0., 4., 4., -1.]]
    c, t = pair(a, "float64")
    for op in ("cummax", "cummin"):
        same(getattr(ct, op)(c, 1), getattr(torch, op)(t, 1))
        same(getattr(ct, op)(c.t(), 0), getattr(torch, op)(t.t(), 0))
    b = [[1., float("nan"), 2.], [float("-inf"), float("-inf"), float("inf")]]
    c, t = pair(b, "float32")
    same(ct.logcumsumexp(c, 1), torch.logcumsumexp(t, 1))
    c, t = pair([[1000., 1000., -1000.]], "float32")
    same(ct.logcumsumexp(c, 1), torch.logcumsumexp(t, 1), 1e-5)   # stable: no overflow


def test_shapes_noncontiguous_scalar_empty():
    a = RS.randn(6, 7, 5)
    c, t = pair(a, "float32")
    for op in ("cumsum", "cumprod", "logcumsumexp", "cummax", "cummin"):
        same(getattr(ct, op)(c.transpose(0, 2)[::2], 1), getattr(torch, op)(t.transpose(0, 2)[::2], 1), 1e-5)
        same(getattr(ct, op)(ct.tensor(2.5), 0), getattr(torch, op)(torch.tensor(2.5), 0))
        same(getattr(ct, op)(ct.zeros(0, 3), 1), getattr(torch, op)(torch.zeros(0, 3), 1))
        same(getattr(ct, op)(ct.zeros(3, 0), 1), getattr(torch, op)(torch.zeros(3, 0), 1))
    big = RS.randn(300, 400)   # threaded paths
    c, t = pair(big, "float64")
    for d in (0, 1):
        for op in ("cumsum", "logcumsumexp", "cummax"):
            same(getattr(ct, op)(c, d), getattr(torch, op)(t, d), 1e-9)


def test_int64_exact():
    a = np.array([2 ** 62, 2 ** 62, -5, 7], dtype=np.int64)
    same(ct.cumsum(ct.tensor(a), 0), torch.cumsum(torch.tensor(a), 0), 0)
    same(ct.cumprod(ct.tensor(a), 0), torch.cumprod(torch.tensor(a), 0), 0)


def test_out_and_errors():
    c, t = pair(RS.randn(3, 4), "float32")
    o = ct.empty(0)
    r = ct.logcumsumexp(c, 1, out=o)
    assert r is o
    same(o, torch.logcumsumexp(t, 1))
    v, i = ct.empty(0), ct.empty(0, dtype=ct.int64)
    r = ct.cummax(c, 0, out=(v, i))
    same((v, i), tuple(torch.cummax(t, 0)))
    oracle.raises_like(lambda: ct.cummax(c, 2), lambda: torch.cummax(t, 2))
    oracle.raises_like(lambda: ct.cumsum(c, -3), lambda: torch.cumsum(t, -3))
    ci, ti = pair([1, 2], "int64")
    oracle.raises_like(lambda: ct.logcumsumexp(ci, 0), lambda: torch.logcumsumexp(ti, 0))


@pytest.mark.parametrize("op", ["cumsum", "cumprod", "logcumsumexp", "cummax", "cummin"])
def test_gradients(op):
    a = RS.randn(3, 4)
    x = ct.tensor(a, requires_grad=True)
    f = (lambda t: getattr(ct, op)(t, 1)[0]) if op.startswith("cumm") else (lambda t: getattr(ct, op)(t, 1))
    g = (lambda t: getattr(ct, op)(t, 0)[0]) if op.startswith("cumm") else (lambda t: getattr(ct, op)(t, 0))
    assert ct.autograd.gradcheck(f, (x,))
    assert ct.autograd.gradcheck(g, (x,))
    if op != "cumprod":
        assert ct.autograd.gradgradcheck(f, (x,))
    # gradient values against torch, with ties for cummax/cummin (not smooth there: no gradcheck)
    a[1, :2] = a[1, 2]
    x = ct.tensor(a, requires_grad=True)
    xt = torch.tensor(a, requires_grad=True)
    ft = (lambda t: getattr(torch, op)(t, 1)[0]) if op.startswith("cumm") else (lambda t: getattr(torch, op)(t, 1))
    w = RS.randn(3, 4)
    (ft(xt) * torch.tensor(w)).sum().backward()
    x.grad = None
    (f(x) * ct.tensor(w)).sum().backward()
    same(x.grad, xt.grad, 1e-9)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_cummax_cummin_large_rows_streamed(dtype):
    """results of 4 MiB and more are stored past the cache: values and
    indices (ties move to the last equal element, NaN takes over) as torch's"""
    a = np.random.RandomState(1).randint(-50, 50, (400, 1500)).astype(np.float64)
    if dtype.startswith("float"):
        a[::7, 3::97] = np.nan
    t = torch.tensor(a).to(getattr(torch, dtype))
    c = ct.tensor(a).to(getattr(ct, dtype))
    for name in ("cummax", "cummin"):
        (cv, ci), (tv, ti) = getattr(ct, name)(c, 1), getattr(torch, name)(t, 1)
        np.testing.assert_array_equal(np.asarray(cv.tolist()), tv.numpy())
        assert ci.tolist() == ti.tolist()


def test_cumsum_and_cumprod_write_out_as_torch():
    """torch.cumsum/cumprod take out= (resized from empty; dtype= and out's dtype must agree, torch's error)"""
    x = np.arange(1.0, 7.0).reshape(2, 3)
    for name in ("cumsum", "cumprod"):
        for L in (ct, torch):
            o = L.empty(0, dtype=L.float64)
            r = getattr(L, name)(L.tensor(x), 1, out=o)
            assert r is o
        o2 = ct.empty(0, dtype=ct.float64)
        getattr(ct, name)(ct.tensor(x), 0, out=o2)
        np.testing.assert_allclose(o2.numpy(), getattr(np, name)(x, 0))
        oracle.raises_like(lambda: getattr(ct, name)(ct.tensor(x), 0, dtype=ct.float32,
                                                    out=ct.empty(0, dtype=ct.float64)),
                    lambda: getattr(torch, name)(torch.tensor(x), 0, dtype=torch.float32,
                                                 out=torch.empty(0, dtype=torch.float64)))
