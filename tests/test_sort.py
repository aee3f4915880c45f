"""The sort family (src/ATen/ATSort.c) against torch: sort/argsort/msort,
topk, kthvalue, median/nanmedian, mode, unique/unique_consecutive, isin.
Values and indices (ties included where torch's pick is deterministic),
NaN placement, int64 beyond 2**53, dtypes, errors and gradients."""
import numpy as np
import pytest

import cthtorch as ct
import oracle

torch = oracle.require_torch()
RS = np.random.RandomState(0)
DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8"]


def pair(a, dtype):
    """the same data as a cthtorch and a torch tensor of dtype"""
    t = torch.tensor(np.asarray(a, dtype=np.float64)).to(getattr(torch, dtype))
    return ct.tensor(t.double().numpy()).to(getattr(ct, dtype)), t


def same(a, b):
    if isinstance(b, (tuple, list)):
        assert type(a).__name__ == type(b).__name__ and len(a) == len(b)
        for x, y in zip(a, b):
            same(x, y)
        return
    assert str(a.dtype) == str(b.dtype), (a.dtype, b.dtype)
    assert tuple(a.shape) == tuple(b.shape), (a.shape, b.shape)
    if b.dtype == torch.int64:   # exact, beyond 2**53 too
        assert a.tolist() == b.tolist()
    else:
        np.testing.assert_array_equal(np.asarray(a.double().tolist()).reshape(tuple(a.shape)), b.double().numpy())


def ties(shape, hi, nan=False):
    a = RS.randint(0, hi, shape).astype(np.float64)
    if nan:
        a[a == hi - 1] = np.nan
    return a


OPS = [
    ("sort", lambda L, x: L.sort(x, stable=True)),
    ("sort_desc", lambda L, x: L.sort(x, dim=0, descending=True, stable=True)),
    ("sort_method", lambda L, x: x.sort(dim=1, stable=True)),
    ("argsort", lambda L, x: L.argsort(x, dim=1, stable=True)),
    ("argsort_desc", lambda L, x: x.argsort(dim=0, descending=True, stable=True)),
    ("msort", lambda L, x: L.msort(x)),
    ("kthvalue", lambda L, x: L.kthvalue(x, 3, 1)),
    ("kthvalue0", lambda L, x: x.kthvalue(2, 0, keepdim=True)),
    ("median_dim", lambda L, x: L.median(x, 1)),
    ("median_dim0", lambda L, x: x.median(0, keepdim=True)),
    ("nanmedian_dim", lambda L, x: L.nanmedian(x, 1)),
    ("mode", lambda L, x: L.mode(x, 1)),
    ("mode0", lambda L, x: x.mode(0, True)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,f", OPS, ids=[o[0] for o in OPS])
def test_ops_with_ties_match_torch(name, f, dtype):
    for shape, hi in (((5, 7), 4), ((3, 40), 3), ((40, 3), 5), ((4, 100), 6)):
        c, t = pair(ties(shape, hi, nan=dtype.startswith(("float", "bf")) and "nan" not in name), dtype)
        same(f(ct, c), f(torch, t))


@pytest.mark.parametrize("dtype", DTYPES)
def test_median_nan_rows(dtype):
    a = ties((6, 9), 5)
    if dtype.startswith(("float", "bf")):
        a[1, 3] = a[2, :] = a[4, ::2] = np.nan
    c, t = pair(a, dtype)
    for f in (lambda L, x: L.median(x, 1), lambda L, x: L.nanmedian(x, 1), lambda L, x: L.median(x),
              lambda L, x: L.nanmedian(x), lambda L, x: L.kthvalue(x, 9, 1), lambda L, x: L.mode(x)):
        same(f(ct, c), f(torch, t))


@pytest.mark.parametrize("dtype", DTYPES)
def test_median_long_rows_packed_selection(dtype):
    """median/nanmedian pick by a selection on packed (rank, index) keys: rows past its
    insertion-sort cutoff, heavy ties, sorted/reversed/constant rows (the pivot's bad
    cases), signed zeros, NaNs and a whole-tensor median, values and indices as torch"""
    rows = [ties((1, 1000), 7)[0], np.arange(257.0), np.arange(300.0)[::-1], np.full(129, 3.0),
            RS.permutation(64).astype(np.float64), np.tile([0.0, -0.0, 1.0, -1.0], 50)]
    floating = dtype.startswith(("float", "bf"))
    if dtype == "uint8":
        rows = [np.abs(r) % 200 for r in rows]
    elif dtype == "int8":
        rows = [r % 100 - 50 for r in rows]
    for r in rows:
        c, t = pair(np.stack([r, r[::-1]]), dtype)
        for f in (lambda L, x: L.median(x, 1), lambda L, x: L.nanmedian(x, 1), lambda L, x: L.median(x),
                  lambda L, x: x.t().median(0), lambda L, x: L.nanmedian(x)):
            same(f(ct, c), f(torch, t))
    if floating:
        a = ties((50, 64), 9)
        a[::3, 5] = np.nan
        a[7, :] = np.nan           # an all-NaN row: nanmedian's pair path
        a[9, ::2] = np.nan
        c, t = pair(a, dtype)
        for f in (lambda L, x: L.median(x, 1), lambda L, x: L.nanmedian(x, 1), lambda L, x: L.nanmedian(x[8:]),
                  lambda L, x: L.median(x[:7])):
            same(f(ct, c), f(torch, t))
    if dtype == "int64":   # values spanning more bits than the key holds: the pair path
        a = np.array([[2 ** 62, -2 ** 62, 5, 7, 1] * 20], dtype=np.int64)
        c, t = ct.from_numpy(a), torch.from_numpy(a)
        same(c.median(1), t.median(1))


@pytest.mark.parametrize("dtype", DTYPES)
def test_topk_distinct(dtype):
    a = np.stack([RS.permutation(60) for _ in range(5)]).astype(np.float64)
    if dtype == "int8":
        a -= 30
    c, t = pair(a, dtype)
    for k in (1, 5, 17, 60):
        for largest in (True, False):
            same(ct.topk(c, k, largest=largest), torch.topk(t, k, largest=largest))
            same(c.t().topk(k % 5 + 1, 0, largest), t.t().topk(k % 5 + 1, 0, largest))
    same(ct.sort(c, 1), torch.sort(t, 1))
    same(ct.sort(c, 1, True), torch.sort(t, 1, True))


@pytest.mark.parametrize("dtype", DTYPES)
def test_topk_ties_match_torch(dtype):
    """Which of equal values topk reports, and in what order, is torch's CPU
    pick (a heap selection when k * 64 <= n, else a selection at k - 1 and,
    when sorted, a sort before it): 1-D and over a dim, k from 1 to n,
    largest/smallest, sorted or not, NaNs."""
    fl = dtype.startswith(("float", "bf"))
    rows = [[1, 2, 2, 1, 3, 3, 1, 2, 0, 3], [5] * 7, [0, 1] * 6, ties((1, 100), 4)[0], ties((1, 300), 3)[0],
            ties((1, 1000), 6)[0]]
    for r in rows:
        a = np.asarray(r, dtype=np.float64)
        if fl and len(a) > 50:
            a[::17] = np.nan
        c, t = pair(a, dtype)
        n = len(a)
        for k in sorted({1, 2, 3, n // 64, n // 64 + 1, n // 2, n - 1, n} - {0}):
            for largest in (True, False):
                for srt in (True, False):
                    same(ct.topk(c, k, largest=largest, sorted=srt), torch.topk(t, k, largest=largest, sorted=srt))
    for shape, dim in (((4, 9), 1), ((9, 4), 0), ((3, 5, 70), 2), ((3, 70, 2), 1)):
        c, t = pair(ties(shape, 3), dtype)
        for k in (1, 2, shape[dim]):
            for largest in (True, False):
                for srt in (True, False):
                    same(c.topk(k, dim, largest, srt), t.topk(k, dim, largest, srt))


@pytest.mark.parametrize("dtype", DTYPES)
def test_full_row_sorts_on_packed_keys(dtype):
    """Full sorts and topk with k > 16 sort (value rank, index) keys packed in
    64 bits: rows of every length across the 8-element networks and the
    merges, ties, -0.0 beside 0.0, infinities and NaNs, both directions."""
    fl = dtype.startswith(("float", "bf"))
    for n in list(range(1, 20)) + [31, 33, 63, 64, 65, 100, 257]:
        a = RS.randint(-4, 4, (3, n)).astype(np.float64)
        if fl:
            a[0] = np.where(RS.rand(n) < 0.3, -0.0, a[0])
            a[1, ::5], a[1, 1::7], a[2, ::3] = np.nan, np.inf, -np.inf
        elif dtype == "uint8":
            a += 4
        c, t = pair(a, dtype)
        for desc in (False, True):
            same(ct.sort(c, dim=1, descending=desc, stable=True), torch.sort(t, dim=1, descending=desc, stable=True))
            same(ct.argsort(c.t(), dim=0, descending=desc, stable=True),
                 torch.argsort(t.t(), dim=0, descending=desc, stable=True))
            if n > 17:
                same(ct.topk(c, 17, largest=desc), torch.topk(t, 17, largest=desc))
        same(ct.msort(c.t()), torch.msort(t.t()))


def test_packed_keys_wide_int64_and_double_rows():
    """int64/double rows whose values span more bits than the index leaves
    take the pair sort; narrower ones the packed keys: both exact"""
    big = 2 ** 62
    rows = [RS.randint(-big, big, 64, dtype=np.int64), RS.randint(-2 ** 40, 2 ** 40, 64, dtype=np.int64),
            np.array([big + 5, big + 1, big + 5, big, big + 2] * 13, dtype=np.int64),
            np.array([-2 ** 63, 2 ** 63 - 1, 0, -1, 2 ** 63 - 1] * 13, dtype=np.int64)]
    for r in rows:
        c, t = ct.tensor(r.tolist()), torch.tensor(r.tolist())
        for desc in (False, True):
            same(ct.sort(c, descending=desc, stable=True), torch.sort(t, descending=desc, stable=True))
            same(ct.topk(c, 20, largest=desc), torch.topk(t, 20, largest=desc))
    d = RS.randn(4, 70) * 1e300
    d[1, ::9] = np.nan
    d[2] = RS.randint(-3, 3, 70)
    d[3, ::2] = -0.0
    c, t = ct.tensor(d), torch.tensor(d)
    for desc in (False, True):
        same(ct.sort(c, dim=1, descending=desc, stable=True), torch.sort(t, dim=1, descending=desc, stable=True))


def test_nan_placement():
    a = np.array([[1.0, np.nan, 2, np.nan, -1, 0]])
    c, t = pair(a, "float32")
    for f in (lambda L, x: L.sort(x), lambda L, x: L.sort(x, descending=True), lambda L, x: L.topk(x, 3),
              lambda L, x: L.topk(x, 3, largest=False), lambda L, x: L.argsort(x, descending=True),
              lambda L, x: L.kthvalue(x, 5), lambda L, x: L.kthvalue(x, 6)):
        same(f(ct, c), f(torch, t))


def test_int64_beyond_2_53_exact():
    v = [2 ** 60 + 3, 2 ** 60 + 1, 2 ** 60, 2 ** 60 + 2, 2 ** 60 + 1, -(2 ** 62) - 1, -(2 ** 62)]
    c, t = ct.tensor(v), torch.tensor(v)
    for f in (lambda L, x: L.sort(x, stable=True), lambda L, x: L.sort(x, descending=True, stable=True),
              lambda L, x: L.topk(x[[0, 2, 3, 5]], 3), lambda L, x: L.kthvalue(x, 2), lambda L, x: L.median(x, 0),
              lambda L, x: L.median(x), lambda L, x: L.mode(x), lambda L, x: L.msort(x),
              lambda L, x: L.unique(x, return_inverse=True, return_counts=True),
              lambda L, x: L.unique_consecutive(x, return_counts=True),
              lambda L, x: L.isin(x, x[:3]), lambda L, x: L.isin(x, 2 ** 60 + 1)):
        same(f(ct, c), f(torch, t))


def test_unique_nan():
    """NaNs are each their own value; torch numbers them in the order of its
    unstable sort, so the inverse of NaN elements is not compared"""
    a = np.array([0, np.nan, 1, np.nan, np.nan, 2, np.nan, 1] + [np.nan] * 12)
    c, t = pair(a, "float32")
    cv, ci, cc = ct.unique(c, return_inverse=True, return_counts=True)
    tv, ti, tc = torch.unique(t, return_inverse=True, return_counts=True)
    same(cv, tv)
    same(cc, tc)
    keep = ~np.isnan(a)
    assert ci.numpy()[keep].tolist() == ti.numpy()[keep].tolist()
    assert sorted(ci.numpy()[~keep].tolist()) == sorted(ti.numpy()[~keep].tolist())
    same(ct.unique_consecutive(c, return_inverse=True, return_counts=True),
         torch.unique_consecutive(t, return_inverse=True, return_counts=True))


@pytest.mark.parametrize("dtype", DTYPES + ["bool"])
def test_unique(dtype):
    a = ties((4, 6), 5)
    if dtype == "bool":
        a = a > 2
    c, t = pair(a, dtype)
    for kw in ({}, {"return_inverse": True}, {"return_counts": True}, {"return_inverse": True, "return_counts": True},
               {"sorted": False}):
        same(ct.unique(c, **kw), torch.unique(t, **kw))
        same(c.unique(**kw), t.unique(**kw))
        kw.pop("sorted", None)
        same(ct.unique_consecutive(c, **kw), torch.unique_consecutive(t, **kw))
        same(c.unique_consecutive(**kw), t.unique_consecutive(**kw))



@pytest.mark.parametrize("threads", [2, 3])
def test_unique_parallel_sort(threads):
    """over 65536 elements with several threads the flat sort runs as chunk
    sorts plus split merges: values, inverse and counts must match torch
    (three chunks leave an odd run to carry through a merge round)"""
    rs = np.random.RandomState(3)
    old = ct.get_num_threads()
    ct.set_num_threads(threads)
    try:
        for a in (rs.randint(0, 5000, 200003), rs.randint(-3, 3, 70001).astype(np.int16),
                  rs.randn(100000).astype(np.float32).round(2)):
            c, t = ct.from_numpy(a), torch.from_numpy(a)
            same(ct.unique(c, return_inverse=True, return_counts=True),
                 torch.unique(t, return_inverse=True, return_counts=True))
    finally:
        ct.set_num_threads(old)

@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.int16, np.int8, np.uint8])
def test_unique_radix_sort(dtype):
    """integer inputs over 4096 elements sort by radix: negative values, the
    type's extremes, keys that differ only in a high byte and many ties must
    give torch's values, inverse and counts"""
    rs = np.random.RandomState(5)
    info = np.iinfo(dtype)
    a = rs.randint(info.min, int(info.max) + 1, 20000, dtype=np.int64).astype(dtype)
    a[:50] = info.min
    a[50:100] = info.max
    b = (rs.randint(0, 4, 9000).astype(np.int64) << (8 * (np.dtype(dtype).itemsize - 1))).astype(dtype)
    for x in (a, b, np.repeat(a[:300], 20)):
        c, t = ct.from_numpy(x.copy()), torch.from_numpy(x.copy())
        same(ct.unique(c, return_inverse=True, return_counts=True),
             torch.unique(t, return_inverse=True, return_counts=True))
        same(ct.unique(c, sorted=False), torch.unique(t, sorted=False))


def test_unique_dim():
    a = np.array([[1, 2, 1, 2, 0], [3, 4, 3, 4, 0], [1, 2, 1, 9, 0]])
    c, t = ct.tensor(a), torch.tensor(a)
    for kw in ({"dim": 1}, {"dim": 0, "return_inverse": True, "return_counts": True},
               {"dim": -1, "return_inverse": True, "return_counts": True}):
        same(ct.unique(c, **kw), torch.unique(t, **kw))
        same(ct.unique_consecutive(c, **kw), torch.unique_consecutive(t, **kw))


@pytest.mark.parametrize("dtype", DTYPES)
def test_isin(dtype):
    a, b = ties((3, 5), 7), ties((4,), 7)
    c, t = pair(a, dtype)
    cb, tb = pair(b, dtype)
    for kw in ({}, {"invert": True}, {"assume_unique": True}):
        same(ct.isin(c, cb, **kw), torch.isin(t, tb, **kw))
        same(ct.isin(c, 3, **kw), torch.isin(t, 3, **kw))
    same(ct.isin(3, cb), torch.isin(3, tb))
    same(ct.isin(ct.tensor([1.0, float("nan")]), ct.tensor([float("nan"), 1.0])),
         torch.isin(torch.tensor([1.0, float("nan")]), torch.tensor([float("nan"), 1.0])))
    same(ct.isin(ct.tensor([1, 2]), ct.tensor([2.5, 1.0])), torch.isin(torch.tensor([1, 2]), torch.tensor([2.5, 1.0])))


def test_shapes_0d_empty_noncontiguous():
    for f in (lambda L: L.sort(L.tensor(2.5)), lambda L: L.topk(L.tensor(2.5), 1), lambda L: L.kthvalue(L.tensor(2.5), 1),
              lambda L: L.median(L.tensor(2.5), 0, True), lambda L: L.mode(L.tensor(2.5)),
              lambda L: L.sort(L.zeros(3, 0), 0), lambda L: L.topk(L.zeros(3, 4), 0),
              lambda L: L.median(L.zeros(0, 4), 1), lambda L: L.unique(L.zeros(0)),
              lambda L: L.sort(L.arange(24.0).reshape(2, 3, 4).flip(2).transpose(0, 2), 1, True),
              lambda L: L.kthvalue(L.arange(24.0).reshape(2, 3, 4).flip(1).transpose(1, 2), 2, 2)):
        same(f(ct), f(torch))
    assert ct.median(ct.tensor([])).isnan().item()
    assert ct.nanmedian(ct.tensor([float("nan")] * 3)).isnan().item()


ERRORS = [
    lambda L: L.topk(L.tensor([1.0, 2.0]), 3),
    lambda L: L.topk(L.tensor([1.0, 2.0]), -1),
    lambda L: L.topk(L.tensor([True, False]), 1),
    lambda L: L.kthvalue(L.tensor([1.0, 2.0]), 3),
    lambda L: L.kthvalue(L.tensor([1.0]), 0),
    lambda L: L.kthvalue(L.zeros(2, 0), 1),
    lambda L: L.kthvalue(L.tensor([True]), 1),
    lambda L: L.median(L.zeros(2, 0), 1),
    lambda L: L.nanmedian(L.zeros(2, 0), -1),
    lambda L: L.median(L.tensor([True])),
    lambda L: L.median(L.tensor([True]), 0),
    lambda L: L.mode(L.zeros(2, 0), 1),
    lambda L: L.sort(L.tensor([1.0, 2.0]), 2),
    lambda L: L.isin(L.tensor([True]), L.tensor([True])),
]


@pytest.mark.parametrize("k", range(len(ERRORS)))
def test_errors(k):
    oracle.raises_like(lambda: ERRORS[k](ct), lambda: ERRORS[k](torch))


def test_out_variants():
    v, i = ct.empty(0), ct.empty(0, dtype=ct.int64)
    r = ct.median(ct.tensor([[1.0, 5, 3]]), 1, out=(v, i))
    assert r.values is v and v.tolist() == [3.0] and i.tolist() == [2]
    o = ct.empty(0)
    assert ct.msort(ct.tensor([3.0, 1.0]), out=o) is o and o.tolist() == [1.0, 3.0]


GRADS = [
    lambda L, x: L.sort(x, 1)[0], lambda L, x: L.sort(x, 0, True)[0], lambda L, x: L.topk(x, 2)[0],
    lambda L, x: L.topk(x, 3, 0, False)[0], lambda L, x: L.kthvalue(x, 2, 1)[0], lambda L, x: L.kthvalue(x, 2, 0, True)[0],
    lambda L, x: L.median(x, 1)[0], lambda L, x: L.nanmedian(x, 0, True)[0], lambda L, x: L.mode(x.round(), 1)[0],
    lambda L, x: L.median(x), lambda L, x: L.nanmedian(x), lambda L, x: L.msort(x),
]


@pytest.mark.parametrize("k", range(len(GRADS)))
def test_gradcheck(k):
    x = ct.tensor(RS.randn(4, 5), requires_grad=True)
    f = GRADS[k]
    assert ct.autograd.gradcheck(lambda a: f(ct, a), (x,))
    assert ct.autograd.gradgradcheck(lambda a: f(ct, a), (x,))
    xt = torch.tensor(x.detach().numpy(), requires_grad=True)
    xc = ct.tensor(x.detach().numpy(), requires_grad=True)
    f(ct, xc).sum().backward()
    f(torch, xt).sum().backward()
    np.testing.assert_allclose(xc.grad.numpy(), xt.grad.numpy())


def test_median_global_gradient_spreads_over_ties():
    xc = ct.tensor([1.0, 2.0, 2.0, 3.0], requires_grad=True)
    xt = torch.tensor([1.0, 2.0, 2.0, 3.0], requires_grad=True)
    ct.median(xc).backward()
    torch.median(xt).backward()
    assert xc.grad.tolist() == xt.grad.tolist()


def test_global_median_of_nan_gradient_goes_to_the_nans():
    for name in ("median", "nanmedian", "max"):
        xc = ct.tensor([1.0, float("nan"), 2.0, float("nan")], requires_grad=True)
        xt = torch.tensor([1.0, float("nan"), 2.0, float("nan")], requires_grad=True)
        getattr(ct, name)(xc).backward()
        getattr(torch, name)(xt).backward()
        assert xc.grad.tolist() == xt.grad.tolist()


# ---------------------------------------------------------------- unique(dim=) in C
@pytest.mark.parametrize("dtype", DTYPES + ["bool"])
def test_unique_dim_dtypes(dtype):
    """slices along each dim of a 3-d input with repeated slices, in every
    dtype: values (and their layout), inverse and counts as torch's unique_dim"""
    base = RS.randint(0, 3, size=(4, 3, 5))
    a = np.concatenate([base, base[:2]], 0)[[0, 4, 1, 2, 5, 3]]   # repeated rows along dim 0
    a = np.concatenate([a, a[:, :1]], 1)                            # and along dim 1
    if dtype == "bool":
        a = a > 1
    t = torch.tensor(a).to(getattr(torch, dtype))
    c = ct.tensor(t.double().numpy()).to(getattr(ct, dtype))
    for dim in (0, 1, 2, -1):
        for kw in ({}, {"return_inverse": True, "return_counts": True}, {"return_counts": True},
                   {"sorted": False, "return_inverse": True}):
            r, e = ct.unique(c, dim=dim, **kw), torch.unique(t, dim=dim, **kw)
            same(r, e)
            v = r[0] if isinstance(r, tuple) else r
            w = e[0] if isinstance(e, tuple) else e
            assert v.stride() == w.stride()
        kw = {"return_inverse": True, "return_counts": True}
        same(ct.unique_consecutive(c, dim=dim, **kw), torch.unique_consecutive(t, dim=dim, **kw))
        same(ct.unique_consecutive(c, dim=dim), torch.unique_consecutive(t, dim=dim))


def test_unique_dim_special_inputs():
    kw = {"return_inverse": True, "return_counts": True}
    big = [[2 ** 62 + 1, 0], [2 ** 62, 0], [2 ** 62 + 1, 0]]   # int64 exact beyond 2**53
    same(ct.unique(ct.tensor(big), dim=0, **kw), torch.unique(torch.tensor(big), dim=0, **kw))
    nan = [[float("nan"), 1.0], [float("nan"), 1.0], [0.0, 1.0]]   # NaN slices never repeat
    same(ct.unique(ct.tensor(nan), dim=0, **kw), torch.unique(torch.tensor(nan), dim=0, **kw))
    x = np.arange(24.0).reshape(2, 3, 4)
    for f in (lambda L: L.unique(L.tensor(x).transpose(0, 2)[:, ::2], dim=1, **kw),   # non-contiguous
              lambda L: L.unique(L.empty(0, 3), dim=0, **kw),
              lambda L: L.unique_consecutive(L.empty(2, 0), dim=1, **kw),
              lambda L: L.unique(L.tensor([[1, 2], [1, 2]]).t(), dim=1),
              lambda L: L.tensor([[3, 1], [3, 1], [0, 0]]).unique(dim=0, return_counts=True)):
        same(f(ct), f(torch))


UNIQUE_DIM_ERRORS = [
    lambda L: L.unique(L.empty(3, 0), dim=0),
    lambda L: L.unique(L.empty(0, 0), dim=0),
    lambda L: L.unique_consecutive(L.empty(3, 0), dim=0),
    lambda L: L.unique(L.tensor(3.0), dim=0, return_inverse=True),
    lambda L: L.unique(L.ones(2, 3), dim=2),
    lambda L: L.unique_consecutive(L.ones(2, 3), dim=-3),
]


@pytest.mark.parametrize("k", range(len(UNIQUE_DIM_ERRORS)))
def test_unique_dim_errors(k):
    oracle.raises_like(lambda: UNIQUE_DIM_ERRORS[k](ct), lambda: UNIQUE_DIM_ERRORS[k](torch))


# ---------------------------------------------------------------- out= of the tuple-returning bindings
OUT_OPS = [
    ("sort", lambda L, x, o: L.sort(x, 1, True, out=o), "float32", "int64"),
    ("sort.stable", lambda L, x, o: L.sort(x, stable=True, dim=0, out=o), "float32", "int64"),
    ("topk", lambda L, x, o: L.topk(x, 2, out=o), "float32", "int64"),
    ("max", lambda L, x, o: L.max(x, 1, out=o), "float32", "int64"),
    ("min", lambda L, x, o: L.min(x, 0, True, out=o), "float32", "int64"),
    ("median", lambda L, x, o: L.median(x, 1, out=o), "float32", "int64"),
    ("nanmedian", lambda L, x, o: L.nanmedian(x, 0, out=o), "float32", "int64"),
    ("mode", lambda L, x, o: L.mode(x.round(), 1, out=o), "float32", "int64"),
    ("kthvalue", lambda L, x, o: L.kthvalue(x, 2, 1, out=o), "float32", "int64"),
    ("cummax", lambda L, x, o: L.cummax(x, 1, out=o), "float32", "int64"),
    ("cummin", lambda L, x, o: L.cummin(x, 0, out=o), "float32", "int64"),
    ("frexp", lambda L, x, o: L.frexp(x, out=o), "float32", "int32"),
]


@pytest.mark.parametrize("k", range(len(OUT_OPS)))
def test_tuple_out(k):
    """out=(a, b) as torch takes it: the outputs are written and resized, the
    same objects come back in the op's named tuple, a list works too"""
    name, f, dv, di = OUT_OPS[k]
    x = RS.randn(4, 5) * 3
    c, t = ct.tensor(x, dtype=ct.float32), torch.tensor(x, dtype=torch.float32)
    for shape in ((0,), (20,)):   # empty, and a resize of an out with elements (a warning, as torch's)
        oc = (ct.empty(shape, dtype=getattr(ct, dv)), ct.empty(shape, dtype=getattr(ct, di)))
        ot = (torch.empty(shape, dtype=getattr(torch, dv)), torch.empty(shape, dtype=getattr(torch, di)))
        import warnings
        with warnings.catch_warnings(record=True) as wc:
            warnings.simplefilter("always")
            r = f(ct, c, oc)
        with warnings.catch_warnings(record=True) as wt:
            warnings.simplefilter("always")
            e = f(torch, t, ot)
        assert r[0] is oc[0] and r[1] is oc[1]
        same(r, e)
        same(oc, ot)
        assert len(wc) == len(wt)
        if name not in ("mode", "kthvalue"):   # torch's message names their out unsqueezed at dim ([20, 1])
            assert [str(w.message) for w in wc] == [str(w.message).split(" (Triggered")[0] for w in wt]
    ol = [ct.empty(0, dtype=getattr(ct, dv)), ct.empty(0, dtype=getattr(ct, di))]
    r = f(ct, c, ol)
    assert r[0] is ol[0]


OUT_ERRORS = [
    lambda L, x: L.sort(x, out=(L.empty(0, dtype=L.float64), L.empty(0, dtype=L.long))),
    lambda L, x: L.sort(x, out=(L.empty(0), L.empty(0, dtype=L.int32))),
    lambda L, x: L.sort(x, out=(L.empty(0),)),
    lambda L, x: L.topk(x, 2, out=(L.empty(0, dtype=L.float64), L.empty(0, dtype=L.long))),
    lambda L, x: L.max(x, 1, out=(L.empty(0), L.empty(0, dtype=L.int32))),
    lambda L, x: L.sort(x.clone().requires_grad_(), out=(L.empty(0), L.empty(0, dtype=L.long))),
    lambda L, x: L.cummax(x, 1, out=(L.empty(0), L.empty(0), L.empty(0))),
]


@pytest.mark.parametrize("k", range(len(OUT_ERRORS)))
def test_tuple_out_errors(k):
    x = RS.randn(4, 5)
    c, t = ct.tensor(x, dtype=ct.float32), torch.tensor(x, dtype=torch.float32)
    oracle.raises_like(lambda: OUT_ERRORS[k](ct, c), lambda: OUT_ERRORS[k](torch, t), first_line=True)


def test_tuple_out_wrong_types():
    c = ct.randn(3)
    with pytest.raises(TypeError):
        ct.cummax(c, 0, out=(ct.empty(0), 3))
    # several signatures: torch's first line, then each signature (not a raw format)
    with pytest.raises(TypeError) as e:
        ct.sort(c, out=ct.empty(0))
    lines = str(e.value).split("\n")
    assert lines[0] == ("sort() received an invalid combination of arguments - got (Tensor, out=Tensor), but "
                        "expected one of:")
    # each signature's line ends with a newline, the last one too, as torch's
    assert len(lines) == 4 and all(x.startswith(" * (Tensor input, ") for x in lines[1:3]) and lines[3] == ""


def test_single_out_written_from_result():
    """msort and isin (out: copy) write their fresh result into out"""
    c, t = ct.tensor([[3.0, 1.0], [0.0, 2.0]]), torch.tensor([[3.0, 1.0], [0.0, 2.0]])
    oc, ot = ct.empty(0), torch.empty(0)
    assert ct.msort(c, out=oc) is oc
    same(oc, torch.msort(t, out=ot))
    bc, bt = ct.empty(0, dtype=ct.bool), torch.empty(0, dtype=torch.bool)
    assert ct.isin(c, ct.tensor([1.0, 2.0]), out=bc) is bc
    same(bc, torch.isin(t, torch.tensor([1.0, 2.0]), out=bt))
    assert ct.isin(c, 2.0, out=bc) is bc
    same(bc, torch.isin(t, 2.0, out=bt))


@pytest.mark.parametrize("name", ["kthvalue", "median", "nanmedian", "mode"])
def test_reductions_along_each_dim_of_3d(name):
    # the rows of a reduction along a leading dim come in the result's order
    c, t = pair(RS.randn(4, 5, 6), "float64")
    for dim in (0, 1, 2, -3):
        for keepdim in (False, True):
            args = (2, dim, keepdim) if name == "kthvalue" else (dim, keepdim)
            same(getattr(ct, name)(c, *args), getattr(torch, name)(t, *args))


def _unstable_rows(n):
    """rows of length n where an unstable sort reorders ties: few distinct
    values, NaNs among them, and the patterns that steer introsort's pivots
    (sorted, reversed, organ pipe, sawtooth, constant)"""
    few = RS.randint(0, 3, n).astype(np.float64)
    withnan = few.copy()
    withnan[withnan == 2] = np.nan
    organ = np.minimum(np.arange(n), n - 1 - np.arange(n)).astype(np.float64) % 5
    return [few, withnan, np.sort(few), np.sort(few)[::-1].copy(), organ, np.arange(n, dtype=np.float64) % 7,
            np.zeros(n)]


@pytest.mark.parametrize("dtype", DTYPES + ["bool"])
def test_unstable_sort_tie_order_matches_torch(dtype):
    """torch's CPU sort(stable=False), the default of sort and argsort, runs
    std::sort: past 16 elements it moves ties; the indices match torch's,
    along either dim, both directions, stable=None as False"""
    for n in (5, 16, 17, 18, 40, 300, 2000):
        for r in _unstable_rows(n):
            if not dtype.startswith(("float", "bf")):
                r = np.nan_to_num(r, nan=3.0)
            if dtype == "bool":
                r = r % 2
            c, t = pair(np.stack([r, r[::-1]]), dtype)
            for desc in (False, True):
                for f in (lambda L, x: L.sort(x, descending=desc), lambda L, x: x.sort(stable=False, descending=desc),
                          lambda L, x: L.sort(x, stable=None, descending=desc),
                          lambda L, x: L.argsort(x, descending=desc), lambda L, x: x.t().argsort(0, desc),
                          lambda L, x: L.argsort(x.t(), dim=0, descending=desc, stable=False),
                          lambda L, x: L.sort(x.t().contiguous(), 0, desc)):
                    same(f(ct, c), f(torch, t))


def test_unstable_sort_cases_torch_sorts_stably():
    """torch keeps ties in order, stable=False or not, for a dim of stride 0
    and for 1-d integer ascending sorts of 32768 elements and more (its radix
    sort); the descending one and float ones of that size move them"""
    x = RS.randint(0, 3, 40000)
    for dtype in ("int64", "int32", "uint8", "float32"):
        c, t = pair(x, dtype)
        for desc in (False, True):
            same(ct.sort(c, descending=desc), torch.sort(t, descending=desc))
    c, t = pair([2.0], "float32")
    same(ct.sort(c.expand(4, 40), dim=1), torch.sort(t.expand(4, 40), dim=1))
    same(ct.argsort(c.expand(40, 3), dim=0), torch.argsort(t.expand(40, 3), dim=0))
@pytest.mark.parametrize("dtype", DTYPES)
def test_unstable_sorts_order_ties_as_torch(dtype):
    """sort/argsort(stable=False or None) and msort leave equal values where
    torch's CPU build does (libstdc++'s std::sort with its NaN-aware
    comparators): rows over 16 with ties, NaNs and -0.0 beside 0.0, both
    directions, along either dim, on the packed-key and the pair paths; index
    order where torch sorts otherwise (stride-0 rows, 1-D integer radix sort)"""
    fl = dtype.startswith(("float", "bf"))
    for shape, hi in (((3, 17), 2), ((4, 40), 3), ((2, 200), 4), ((3, 1000), 7), ((1, 33), 1)):
        a = ties(shape, hi)
        if fl:
            a[0, ::5] = np.nan
            a[-1] = np.where(a[-1] == 0, -0.0, a[-1])
        elif dtype == "uint8":
            a += 1
        c, t = pair(a, dtype)
        for desc in (False, True):
            same(ct.sort(c, descending=desc), torch.sort(t, descending=desc))
            same(ct.sort(c, stable=None, descending=desc), torch.sort(t, stable=None, descending=desc))
            same(c.argsort(descending=desc), t.argsort(descending=desc))
            same(ct.argsort(c.t(), dim=0, descending=desc, stable=False), torch.argsort(t.t(), dim=0, descending=desc, stable=False))
            same(ct.sort(c, dim=1, descending=desc, stable=True), torch.sort(t, dim=1, descending=desc, stable=True))
        same(ct.msort(c.t()), torch.msort(t.t()))
    c, t = pair(np.full((1, 40), 5.0), dtype)
    same(c.expand(3, 40).argsort(), t.expand(3, 40).argsort())   # stride 0 along the sorted dim
    same(c.t().expand(40, 2).argsort(0), t.t().expand(40, 2).argsort(0))
    same(c[0].argsort(), t[0].argsort())
    c, t = pair(ties(40000, 9)[None][0], dtype)
    same(c.argsort(), t.argsort())                     # a 1-D integer row this long: radix sort, stable
    same(c.argsort(descending=True), t.argsort(descending=True))
    same(c[::2].argsort(), t[::2].argsort())


def test_unstable_sort_ties_with_wide_int64_and_double_rows():
    """rows whose values span too many bits for packed keys take the pair sort, then torch's tie order"""
    r = np.array([2 ** 62 + 5, -2 ** 62, 2 ** 62 + 5, 0, -2 ** 62] * 9, dtype=np.int64)
    d = np.array([1e300, -1e300, np.nan, 1e300, 0.0, -0.0, np.nan] * 7)
    for c, t in ((ct.tensor(r.tolist()), torch.tensor(r.tolist())), (ct.tensor(d), torch.tensor(d))):
        for desc in (False, True):
            same(ct.sort(c, descending=desc), torch.sort(t, descending=desc))
