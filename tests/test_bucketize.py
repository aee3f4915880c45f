"""The bucketize family vs torch: searchsorted / bucketize / bincount / histc /
histogram values, dtypes, ties, NaN, sorter, weights, density and errors."""
import numpy as np
import pytest

import cthtorch as ct
import oracle

torch = oracle.require_torch()
RS = np.random.RandomState(0)
NUMERIC = ["uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]


def pair(a, dtype=None):
    t = torch.tensor(a)
    if dtype:
        t = t.to(getattr(torch, dtype))
    c = ct.tensor(t.float().numpy() if t.dtype == torch.bfloat16 else t.numpy())
    return (c.to(getattr(ct, dtype)) if dtype else c), t


def same(a, b, tol=0.0):
    oracle.same(a, b, tol)


@pytest.mark.parametrize("dtype", NUMERIC)
def test_searchsorted_dtypes_ties(dtype):
    bd = np.sort(RS.randint(0, 20, 30)).astype(float)          # many ties
    v = RS.randint(-2, 23, (4, 6)).astype(float)
    cb, tb = pair(bd, dtype)
    cv, tv = pair(v, dtype)
    for kw in ({}, {"right": True}, {"side": "right"}, {"side": "left"}, {"out_int32": True}):
        same(ct.searchsorted(cb, cv, **kw), torch.searchsorted(tb, tv, **kw))
        same(ct.bucketize(cv, cb, **{k: w for k, w in kw.items() if k != "side"}),
             torch.bucketize(tv, tb, **{k: w for k, w in kw.items() if k != "side"}))


def test_searchsorted_nd_sorter_nan_promotion_scalar():
    bd = np.sort(RS.randn(3, 8), axis=1)
    v = RS.randn(3, 5)
    cb, tb = pair(bd)
    cv, tv = pair(v)
    same(ct.searchsorted(cb, cv), torch.searchsorted(tb, tv))
    same(ct.searchsorted(cb, cv, right=True), torch.searchsorted(tb, tv, right=True))
    perm = np.stack([RS.permutation(8) for _ in range(3)])
    shuffled = np.take_along_axis(bd, perm, 1)
    srt = np.argsort(shuffled, axis=1)
    cs, ts = pair(shuffled)
    for right in (False, True):
        same(ct.searchsorted(cs, cv, sorter=ct.tensor(srt), right=right),
             torch.searchsorted(ts, tv, sorter=torch.tensor(srt), right=right))
    cn, tn = pair([1., 2., float("nan")])
    qn, qt = pair([float("nan"), 2., 0.5])
    for right in (False, True):
        same(ct.searchsorted(cn, qn, right=right), torch.searchsorted(tn, qt, right=right))
    ci, ti = pair([1, 3, 5])
    cf, tf = pair([2.5, 3.0])
    same(ct.searchsorted(ci, cf), torch.searchsorted(ti, tf))                 # promoted
    same(ct.searchsorted(cf, ci), torch.searchsorted(tf, ti))
    same(ct.searchsorted(ci, 3), torch.searchsorted(ti, 3))                   # Python number -> 0-d
    same(ct.bucketize(3, ci, right=True), torch.bucketize(3, ti, right=True))
    same(ct.searchsorted(ci, ct.tensor(4)), torch.searchsorted(ti, torch.tensor(4)))
    same(ct.searchsorted(ci, ct.zeros(0, dtype=ct.int64)), torch.searchsorted(ti, torch.zeros(0, dtype=torch.int64)))
    o = ct.empty(0, dtype=ct.int64)
    assert ct.searchsorted(ci, ct.tensor([4, 0]), out=o) is o
    same(o, torch.searchsorted(ti, torch.tensor([4, 0])))
    big_b, big_v = np.sort(RS.randn(1000)), RS.randn(100000)                  # threaded
    same(ct.searchsorted(ct.tensor(big_b), ct.tensor(big_v)), torch.searchsorted(torch.tensor(big_b), torch.tensor(big_v)))



@pytest.mark.parametrize("dtype", NUMERIC)
def test_searchsorted_lockstep_path(dtype):
    """Sorted NaN-free boundaries outnumbered by the values take the lockstep
    search (8 values at a time, tails of 1..7): ties, NaN values, rows, both
    sides and int32 out must match torch; unsorted or NaN boundaries keep
    PyTorch's own midpoints."""
    for nb in (0, 1, 2, 5, 64, 333):
        bd = np.sort(RS.randint(0, 40, nb)).astype(float)
        v = RS.randint(-3, 44, 4099).astype(float)
        if dtype.startswith(("float", "bfloat")):
            v[::11] = float("nan")
        cb, tb = pair(bd, dtype)
        cv, tv = pair(v, dtype)
        for kw in ({}, {"right": True}, {"out_int32": True}):
            same(ct.searchsorted(cb, cv, **kw), torch.searchsorted(tb, tv, **kw))
    rows = np.sort(RS.randint(0, 30, (3, 50)), axis=1).astype(float)
    cr, tr = pair(rows, dtype)
    cv, tv = pair(RS.randint(-1, 32, (3, 1001)).astype(float), dtype)
    for right in (False, True):
        same(ct.searchsorted(cr, cv, right=right), torch.searchsorted(tr, tv, right=right))
    unsorted = RS.randint(0, 30, 40).astype(float)
    if dtype.startswith(("float", "bfloat")):
        unsorted[7] = float("nan")
    cu, tu = pair(unsorted, dtype)
    cv, tv = pair(RS.randint(-1, 32, 5000).astype(float), dtype)
    same(ct.searchsorted(cu, cv), torch.searchsorted(tu, tv))

def test_searchsorted_errors():
    s, ts = pair([1., 2., 3.])
    v, tv = pair([2.])
    m, tm = pair(np.ones((2, 3)))
    cases = [
        (lambda L, s, v, m: L.searchsorted(s, v, side="left", right=True)),
        (lambda L, s, v, m: L.searchsorted(s, v, side="foo")),
        (lambda L, s, v, m: L.searchsorted(m, v)),
        (lambda L, s, v, m: L.searchsorted(s, v, sorter=L.tensor([0, 1]))),
        (lambda L, s, v, m: L.searchsorted(s, v, sorter=L.tensor([0, 1, 2.]))),
        (lambda L, s, v, m: L.searchsorted(s, v, sorter=L.tensor([0, 1, 5]))),
        (lambda L, s, v, m: L.searchsorted(L.tensor(1.), v)),
        (lambda L, s, v, m: L.searchsorted(s.bool(), v.bool())),
        (lambda L, s, v, m: L.searchsorted(s, v, out=L.empty(1))),
        (lambda L, s, v, m: L.bucketize(v, m)),
    ]
    for f in cases:
        oracle.raises_like(lambda: f(ct, s, v, m), lambda: f(torch, ts, tv, tm))


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64"])
def test_bincount(dtype):
    x = RS.randint(0, 30, 500)
    cx, tx = pair(x, dtype)
    same(ct.bincount(cx), torch.bincount(tx))
    same(ct.bincount(cx, minlength=50), torch.bincount(tx, minlength=50))
    same(cx.bincount(), tx.bincount())
    for wdt in ("float32", "float64", "int64", "float16"):
        w = RS.rand(500) * 4
        cw, tw = pair(w, wdt)
        same(ct.bincount(cx, cw), torch.bincount(tx, tw), 1e-4)


def test_bincount_large_and_errors():
    x = RS.randint(0, 1000, 300000)
    same(ct.bincount(ct.tensor(x)), torch.bincount(torch.tensor(x)))
    w = RS.rand(300000)
    same(ct.bincount(ct.tensor(x), ct.tensor(w)), torch.bincount(torch.tensor(x), torch.tensor(w)), 1e-9)
    same(ct.bincount(ct.zeros(0, dtype=ct.int64), minlength=3), torch.bincount(torch.zeros(0, dtype=torch.int64), minlength=3))
    cases = [
        lambda L: L.bincount(L.tensor([1.])), lambda L: L.bincount(L.tensor([True])),
        lambda L: L.bincount(L.tensor([-1])), lambda L: L.bincount(L.tensor([[1]])),
        lambda L: L.bincount(L.tensor([1]), minlength=-1), lambda L: L.bincount(L.tensor([1, 2]), L.tensor([1.])),
    ]
    for f in cases:
        oracle.raises_like(lambda: f(ct), lambda: f(torch))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_histc(dtype):
    # torch counts in the input dtype: bfloat16 stops counting at 256 per bin
    # (cthtorch counts exactly), so keep the bins below that
    x = RS.randn(300 if dtype == "bfloat16" else 2000) * 3
    x[:5] = [0., 1., -1., 2.5, 3.]      # on bin edges
    cx, tx = pair(x, dtype)
    for args in ((), (10,), (7, -2, 2), (4, 0, 0), (5, -3.0, 3.0)):
        same(ct.histc(cx, *args), torch.histc(tx, *args))
        same(cx.histc(*args), tx.histc(*args))
    c3, t3 = pair([3., 3.], dtype)
    same(ct.histc(c3, 4), torch.histc(t3, 4))
    same(ct.histc(ct.zeros(0, dtype=cx.dtype), 4), torch.histc(torch.zeros(0, dtype=tx.dtype), 4))


def test_histc_large_out_errors():
    x = RS.randn(200000).astype(np.float32)
    same(ct.histc(ct.tensor(x), 100, -3, 3), torch.histc(torch.tensor(x), 100, -3, 3))
    o = ct.empty(0)
    assert ct.histc(ct.tensor(x), 10, out=o) is o
    same(o, torch.histc(torch.tensor(x), 10))
    assert not ct.histc(ct.tensor(x, requires_grad=True), 5).requires_grad
    cases = [
        lambda L: L.histc(L.tensor([1, 2])), lambda L: L.histc(L.tensor([1, 2.]), bins=0),
        lambda L: L.histc(L.tensor([1, 2.]), bins=4, min=3, max=1),
        lambda L: L.histc(L.tensor([1, float("inf")]), bins=4),
    ]
    for f in cases:
        oracle.raises_like(lambda: f(ct), lambda: f(torch))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_histogram(dtype):
    x = RS.randn(3, 500)
    w = RS.rand(3, 500)
    cx, tx = pair(x, dtype)
    cw, tw = pair(w, dtype)
    tol = 1e-5 if dtype == "float32" else 1e-12
    for kw in ({}, {"density": True}, {"weight": None}, {"range": (-1., 2.)}, {"range": (0, 0)}):
        for bins in (1, 7, 100):
            same(ct.histogram(cx, bins, **kw), torch.histogram(tx, bins, **kw), tol)
    same(ct.histogram(cx, 9, weight=cw, density=True), torch.histogram(tx, 9, weight=tw, density=True), tol)
    e = np.array([-2., -0.5, 0., 0.1, 3.])
    ce, te = pair(e, dtype)
    same(ct.histogram(cx, ce), torch.histogram(tx, te), tol)
    same(ct.histogram(cx, ce, weight=cw, density=True), torch.histogram(tx, te, weight=tw, density=True), tol)
    same(cx.histogram(ce), tx.histogram(te), tol)
    same(ct.histogram(ct.zeros(0, dtype=cx.dtype), 4), torch.histogram(torch.zeros(0, dtype=tx.dtype), 4))
    d, dt = pair([3., 2.], dtype)
    same(ct.histogram(cx, d), torch.histogram(tx, dt))      # decreasing edges count nothing
    oh, oe = ct.empty(0, dtype=cx.dtype), ct.empty(0, dtype=cx.dtype)
    ct.histogram(cx, 5, out=(oh, oe))
    same((oh, oe), tuple(torch.histogram(tx, 5)), tol)


def test_histogram_errors():
    cases = [
        lambda L: L.histogram(L.tensor([1, 2])), lambda L: L.histogram(L.tensor([1, 2.]).half()),
        lambda L: L.histogram(L.tensor([1, 2.]), 4, range=(2., 1)),
        lambda L: L.histogram(L.tensor([1, 2.]), 4, range=(0., float("inf"))),
        lambda L: L.histogram(L.tensor([1, 2.]), 4, weight=L.tensor([1., 2, 3])),
        lambda L: L.histogram(L.tensor([1, 2.]), 4, weight=L.tensor([1., 2]).double()),
        lambda L: L.histogram(L.tensor([1, 2.]), L.tensor([1., 2]).double()),
        lambda L: L.histogram(L.tensor([1, 2.]), L.tensor([[1., 2]])),
        lambda L: L.histogram(L.tensor([1, 2.]), L.tensor([2.])),
        lambda L: L.histogram(L.tensor([1, 2.]), 0),
        lambda L: L.histogram(L.tensor([1, 2.]), 4, range=(0., 1, 3)),
    ]
    for f in cases:
        oracle.raises_like(lambda: f(ct), lambda: f(torch))
