"""The C kernels of gather / scatter / scatter_add / scatter_reduce / index_add
(src/ATen/ATScatter.c) against PyTorch: dims, dtypes, non-contiguous
operands, duplicates, empty and 0-d indices, every reduce, errors."""
import numpy as np
import pytest

import cthtorch as ct
import oracle

torch = oracle.require_torch()

DTYPES = ["float32", "float64", "int64", "int32", "bool", "float16", "bfloat16", "uint8"]


def _both(a):
    """the same array as a torch and a cthtorch tensor"""
    return torch.from_numpy(np.ascontiguousarray(a)), ct.from_numpy(np.ascontiguousarray(a))


def _data(shape, dtype, seed=0):
    rs = np.random.RandomState(seed)
    if dtype == "bool":
        return rs.rand(*shape) > 0.5
    if dtype in ("int64", "int32", "uint8"):
        return rs.randint(0, 9, size=shape).astype(dtype)
    return rs.randint(-8, 9, size=shape).astype(np.float64) / 4   # exact in every float dtype


def _pair(shape, dtype, seed=0):
    t, c = _both(_data(shape, dtype, seed))
    if dtype in ("float32", "float16", "bfloat16"):
        t, c = t.to(getattr(torch, dtype)), c.to(getattr(ct, dtype))
    return t, c


def _index(shape, bound, seed=1):
    return _both(np.random.RandomState(seed).randint(0, bound, size=shape).astype(np.int64))


def _same(r, e, exact=True):
    assert tuple(r.shape) == tuple(e.shape)
    assert str(r.dtype).split(".")[-1] == str(e.dtype).split(".")[-1]
    a, b = r.float().numpy() if r.dtype == ct.bfloat16 else r.numpy(), e.float().numpy() if e.dtype == torch.bfloat16 \
        else e.numpy()
    if exact:
        np.testing.assert_array_equal(a, b)
    else:
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_gather(dtype, dim):
    xt, xc = _pair((4, 5, 6), dtype)
    shape = [3, 4, 5]
    shape[dim] = 7
    it, ic = _index(shape, (4, 5, 6)[dim])
    _same(xc.gather(dim, ic), xt.gather(dim, it))
    _same(ct.gather(xc, dim, ic), torch.gather(xt, dim, it))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dim", [0, 1, 2])
def test_scatter_src_and_value(dtype, dim):
    xt, xc = _pair((4, 5, 6), dtype)
    st, sc = _pair((4, 5, 6), dtype, seed=3)
    shape = [3, 4, 5]
    # a permutation per line along dim: no duplicate targets, so the result is defined
    n = (4, 5, 6)[dim]
    perm = np.argsort(np.random.RandomState(2).rand(*[n if d == dim else s for d, s in enumerate(shape)]), axis=dim)
    perm = np.take(perm, range(min(3, n)), axis=dim)
    it, ic = _both(perm.astype(np.int64))
    _same(xc.scatter(dim, ic, sc), xt.scatter(dim, it, st))
    _same(xc.scatter(dim, ic, 1), xt.scatter(dim, it, 1))
    _same(ct.scatter(xc, dim, ic, value=0), torch.scatter(xt, dim, it, value=0))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "bool", "float16"])
@pytest.mark.parametrize("dim", [0, 1])
def test_scatter_add_duplicates(dtype, dim):
    xt, xc = _pair((5, 7), dtype)
    st, sc = _pair((9, 9), dtype, seed=4)
    shape = [4, 4]
    shape[dim] = 9
    it, ic = _index(shape, (5, 7)[dim])
    _same(xc.scatter_add(dim, ic, sc), xt.scatter_add(dim, it, st))
    _same(ct.scatter_add(xc, dim, ic, sc), torch.scatter_add(xt, dim, it, st))
    yc, yt = xc.clone(), xt.clone()
    yc.scatter_add_(dim, ic, sc)
    yt.scatter_add_(dim, it, st)
    _same(yc, yt)


# bool with "mean" is an error in torch too (checked in test_errors)
@pytest.mark.parametrize("dtype,reduce", [(d, r) for d in ["float32", "float64", "int64", "int32", "bool"]
                                          for r in ["sum", "prod", "mean", "amax", "amin"]
                                          if (d, r) != ("bool", "mean")])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce(dtype, reduce, include_self):
    xt, xc = _pair((5, 4), dtype)
    st, sc = _pair((8, 4), dtype, seed=5)
    it, ic = _index((8, 3), 5)
    _same(xc.scatter_reduce(0, ic, sc, reduce, include_self=include_self),
          xt.scatter_reduce(0, it, st, reduce, include_self=include_self), exact=reduce != "mean")
    it, ic = _index((5, 3), 4)
    _same(xc.scatter_reduce(1, ic, sc[:5], reduce, include_self=include_self),
          xt.scatter_reduce(1, it, st[:5], reduce, include_self=include_self), exact=reduce != "mean")


@pytest.mark.parametrize("reduce", ["add", "multiply"])
def test_scatter_legacy_reduce(reduce):
    xt, xc = _pair((5, 4), "float64")
    st, sc = _pair((8, 4), "float64", seed=5)
    it, ic = _index((8, 4), 5)
    _same(xc.scatter(0, ic, sc, reduce=reduce), xt.scatter(0, it, st, reduce=reduce))
    _same(xc.scatter(0, ic, 2.5, reduce=reduce), xt.scatter(0, it, 2.5, reduce=reduce))


def test_extremes_propagate_nan_and_int_limits():
    xt, xc = _both(np.array([1.0, 2.0, 3.0]))
    st, sc = _both(np.array([np.nan, 5.0, -1.0, 7.0]))
    it, ic = _both(np.array([0, 0, 1, 2]))
    for r in ("amax", "amin", "max", "min"):
        _same(xc.scatter_reduce(0, ic, sc, r), xt.scatter_reduce(0, it, st, r))
    xt, xc = _both(np.array([5, -3, 2], dtype=np.int32))
    st, sc = _both(np.array([-7, 9, 4, 1], dtype=np.int32))
    for r in ("amax", "amin"):
        _same(xc.scatter_reduce(0, ic, sc, r, include_self=False), xt.scatter_reduce(0, it, st, r, include_self=False))


def test_non_contiguous_operands():
    xt, xc = _pair((6, 8), "float64")
    st, sc = _pair((8, 10), "float64", seed=6)
    it, ic = _index((9, 7), 6)
    xt2, xc2 = xt.t(), xc.t()                      # (8, 6)
    it2, ic2 = it[::2, ::2].t(), ic[::2, ::2].t()   # (4, 5), strided and transposed
    st2, sc2 = st[::2, 1::2], sc[::2, 1::2]         # (4, 5)
    _same(xc2.gather(1, ic2), xt2.gather(1, it2))
    _same(xc2.gather(0, ic2), xt2.gather(0, it2))
    _same(xc2.scatter_add(1, ic2, sc2), xt2.scatter_add(1, it2, st2))
    _same(xc2.scatter_reduce(0, ic2, sc2, "amax"), xt2.scatter_reduce(0, it2, st2, "amax"))
    # the GNN pattern: an expanded (stride-0) index
    et, ec = _both(np.random.RandomState(3).randint(0, 6, size=50).astype(np.int64))
    vt, vc = _pair((50, 8), "float64", seed=8)
    _same(xc.scatter_add(0, ec.reshape(-1, 1).expand(50, 8), vc),
          xt.scatter_add(0, et.reshape(-1, 1).expand(50, 8), vt))
    _same(xc.index_add(0, ec, vc), xt.index_add(0, et, vt))
    _same(xc.t().index_add(1, ec, vc.t(), alpha=-2), xt.t().index_add(1, et, vt.t(), alpha=-2))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "bool", "bfloat16"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_index_add(dtype, dim):
    xt, xc = _pair((5, 6), dtype)
    shape = [5, 6]
    shape[dim] = 9
    st, sc = _pair(shape, dtype, seed=9)
    it, ic = _index((9,), (5, 6)[dim])
    _same(xc.index_add(dim, ic, sc), xt.index_add(dim, it, st))
    _same(ct.index_add(xc, dim, ic.int(), sc), torch.index_add(xt, dim, it.int(), st))
    if dtype != "bool":
        _same(xc.index_add(dim, ic, sc, alpha=3), xt.index_add(dim, it, st, alpha=3))
    yc, yt = xc.clone(), xt.clone()
    yc.index_add_(dim, ic, sc)
    yt.index_add_(dim, it, st)
    _same(yc, yt)


def test_index_add_alpha_truncates_for_integers():
    xt, xc = _pair((4, 3), "int64")
    st, sc = _pair((2, 3), "int64", seed=2)
    _same(xc.index_add(0, ct.tensor([1, 1]), sc, alpha=2.5), xt.index_add(0, torch.tensor([1, 1]), st, alpha=2.5))


def test_empty_and_zero_dim():
    xt, xc = _pair((4, 3), "float32")
    e = np.zeros((0, 5), dtype=np.int64)
    et, ec = _both(e)
    _same(xc.gather(0, ec), xt.gather(0, et))
    _same(xc.scatter(0, ec, 1.0), xt.scatter(0, et, 1.0))
    _same(xc.scatter_add(0, ec, ct.ones(0, 5)), xt.scatter_add(0, et, torch.ones(0, 5)))
    _same(xc.index_add(0, ct.zeros(0, dtype=ct.int64), ct.ones(0, 3)),
          xt.index_add(0, torch.zeros(0, dtype=torch.int64), torch.ones(0, 3)))
    s_t, s_c = torch.tensor(5.0), ct.tensor(5.0)
    _same(s_c.gather(0, ct.tensor(0)), s_t.gather(0, torch.tensor(0)))
    _same(s_c.gather(0, ct.tensor([0, 0])), s_t.gather(0, torch.tensor([0, 0])))
    _same(s_c.scatter(0, ct.tensor(0), ct.tensor(2.0)), s_t.scatter(0, torch.tensor(0), torch.tensor(2.0)))
    _same(s_c.scatter_add(0, ct.tensor([0, 0]), ct.tensor([2.0, 3.0])),
          s_t.scatter_add(0, torch.tensor([0, 0]), torch.tensor([2.0, 3.0])))
    _same(s_c.index_add(0, ct.tensor(0), ct.tensor(3.0)), s_t.index_add(0, torch.tensor(0), torch.tensor(3.0)))
    _same(ct.tensor([1.0, 2.0]).gather(0, ct.tensor(1)), torch.tensor([1.0, 2.0]).gather(0, torch.tensor(1)))


def test_out_argument():
    xt, xc = _pair((4, 3), "float32")
    it, ic = _index((2, 3), 4)
    ot, oc = torch.empty(0), ct.empty(0)
    torch.gather(xt, 0, it, out=ot)
    ct.gather(xc, 0, ic, out=oc)
    _same(oc, ot)


def _error_cases(L, x):
    i64 = lambda v: L.tensor(v)   # noqa: E731
    return [
        lambda: x.gather(0, i64([[10, 0, 0]])),
        lambda: x.gather(0, i64([[-10, 0, 0]])),
        lambda: x.gather(1, i64([[3]])),
        lambda: x.gather(0, i64([[1, 0, 0]]).short()),
        lambda: x.gather(0, i64([[1, 0, 0]]).float()),
        lambda: x.gather(0, L.zeros(2, 4, dtype=L.int64)),
        lambda: x.gather(0, L.zeros(2, dtype=L.int64)),
        lambda: x.gather(2, i64([[0]])),
        lambda: x.scatter(0, i64([[10, 0, 0]]), 1.0),
        lambda: x.scatter(0, i64([[10, 0, 0]]).int(), 1.0),
        lambda: x.scatter(0, i64([[1, 0, 0]]).short(), 1.0),
        lambda: x.scatter(0, L.zeros(1, 3, dtype=L.int64), L.ones(1, 3, dtype=L.float64)),
        lambda: x.scatter(0, L.zeros(2, 3, dtype=L.int64), L.ones(1, 3)),
        lambda: x.scatter(0, L.zeros(2, 4, dtype=L.int64), L.ones(2, 4)),
        lambda: x.scatter(0, L.zeros(1, 5, dtype=L.int64), 1.0),
        lambda: x.scatter(0, L.zeros(2, dtype=L.int64), L.ones(2)),
        lambda: x.scatter(0, L.zeros(1, 3, dtype=L.int64), L.ones(1, 3), reduce="mean"),
        lambda: x.scatter_add(0, i64([[10, 0, 0]]), L.ones(1, 3)),
        lambda: x.scatter_add(0, L.zeros(1, 3, dtype=L.int64), L.ones(1, 3, dtype=L.float64)),
        lambda: x.scatter_reduce(0, i64([[10, 0, 0]]), L.ones(1, 3), "amax"),
        lambda: x.scatter_reduce(0, i64([[1, 0, 0]]), L.ones(1, 3), "add"),
        lambda: x.bool().scatter_reduce(0, i64([[1]]), L.ones(1, 3).bool(), "mean"),
        lambda: x.index_add(0, i64([10]), L.ones(1, 3)),
        lambda: x.index_add(0, i64([-1]), L.ones(1, 3)),
        lambda: x.index_add(0, i64([1]).short(), L.ones(1, 3)),
        lambda: x.index_add(0, i64([1]), L.ones(1, 3, dtype=L.float64)),
        lambda: x.index_add(0, i64([1, 2]), L.ones(1, 3)),
        lambda: x.index_add(0, i64([1]), L.ones(1, 4)),
        lambda: x.index_add(0, i64([[1]]), L.ones(1, 3)),
        lambda: x.index_add(0, i64([1]), L.ones(3)),
        lambda: x.index_add(1, i64([5]), L.ones(10, 1)),
        lambda: L.tensor(5.0).index_add(0, i64([0, 0]), L.tensor([2.0, 3.0])),
    ]


def test_errors():
    cases_t = _error_cases(torch, torch.zeros(10, 3))
    cases_c = _error_cases(ct, ct.zeros(10, 3))
    for k, (ft, fc) in enumerate(zip(cases_t, cases_c)):
        try:
            oracle.raises_like(fc, ft, first_line=True)
        except AssertionError as e:
            raise AssertionError("case %d: %s" % (k, e))


def test_gather_backward_routes_through_scatter_add():
    xt = torch.tensor(np.random.RandomState(0).rand(4, 3), requires_grad=True)
    xc = ct.tensor(xt.detach().numpy(), requires_grad=True)
    it, ic = _index((6, 3), 4)
    (xt.gather(0, it) ** 2).sum().backward()
    (xc.gather(0, ic) ** 2).sum().backward()
    np.testing.assert_allclose(xc.grad.numpy(), xt.grad.numpy())
    # double backward: d/dx of sum(grad^2) where grad = scatter_add(2 * gather(x))
    xc.grad = None
    g, = ct.autograd.grad((xc.gather(0, ic) ** 2).sum(), xc, create_graph=True)
    (g ** 2).sum().backward()
    xt.grad = None
    gt, = torch.autograd.grad((xt.gather(0, it) ** 2).sum(), xt, create_graph=True)
    (gt ** 2).sum().backward()
    np.testing.assert_allclose(xc.grad.numpy(), xt.grad.numpy())


def test_large_parallel_matches():
    rs = np.random.RandomState(0)
    x = rs.rand(300, 64)
    e = rs.randint(0, 300, size=5000)
    v = rs.rand(5000, 64)
    (xt, xc), (et, ec), (vt, vc) = _both(x), _both(e), _both(v)
    _same(xc.scatter_add(0, ec.reshape(-1, 1).expand(5000, 64), vc),
          xt.scatter_add(0, et.reshape(-1, 1).expand(5000, 64), vt), exact=False)
    _same(xc.index_add(0, ec, vc), xt.index_add(0, et, vt), exact=False)
    _same(xc.scatter_reduce(0, ec.reshape(-1, 1).expand(5000, 64), vc, "amax"),
          xt.scatter_reduce(0, et.reshape(-1, 1).expand(5000, 64), vt, "amax"))
    q = rs.rand(40000, 6)
    a = rs.randint(0, 6, size=(40000, 1))
    (qt, qc), (at, ac) = _both(q), _both(a)
    _same(qc.gather(1, ac), qt.gather(1, at))
    w = rs.randint(0, 40000, size=(3, 40000))
    (wt, wc) = _both(w)
    _same(qc.t().scatter_add(1, wc, qc.t()[:3] * 0 + 1), qt.t().scatter_add(1, wt, qt.t()[:3] * 0 + 1), exact=False)


def test_large_duplicates_exact_integers():
    """many threads, few targets: integer sums must be exact (no races)"""
    rs = np.random.RandomState(1)
    (it, ic), (vt, vc) = _both(rs.randint(0, 2, size=200000)), _both(rs.randint(0, 5, size=200000))
    _same(ct.zeros(10, dtype=ct.int64).scatter_add(0, ic, vc), torch.zeros(10, dtype=torch.int64).scatter_add(0, it, vt))
    _same(ct.zeros(10, dtype=ct.int64).index_add(0, ic, vc), torch.zeros(10, dtype=torch.int64).index_add(0, it, vt))
    (jt, jc) = _both(rs.randint(0, 3, size=(4, 100000)))
    (wt, wc) = _both(rs.randint(0, 5, size=(4, 100000)))
    for d in (0, 1):
        _same(ct.zeros(4, 100000, dtype=ct.int64).scatter_add(d, jc, wc),
              torch.zeros(4, 100000, dtype=torch.int64).scatter_add(d, jt, wt))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "bool", "float16"])
def test_in_place_forms_write_into_self_like_torch(dtype):
    # without autograd scatter_, scatter_add_ and index_add_ write into self in C: same values, self
    # returned, the version counter bumped, strided selves, and operands sharing self's memory read
    # before the writes
    xt, xc = _pair((6, 7), dtype)
    st, sc = _pair((6, 7), dtype, seed=5)
    it, ic = _index((6, 4), 7)
    jt, jc = _index((5,), 6, seed=3)
    calls = [lambda x, s, i, j: x.scatter_(1, i, s), lambda x, s, i, j: x.scatter_(1, i, 1),
             lambda x, s, i, j: x.scatter_(0, i[:, :3] % 6, s, reduce="add"),
             lambda x, s, i, j: x.scatter_add_(1, i, s), lambda x, s, i, j: x.index_add_(0, j, s[:5]),
             lambda x, s, i, j: x.t().scatter_add_(0, i.t(), s.t()),   # a transposed self
             lambda x, s, i, j: x.scatter_(1, i[:0], s)]   # an empty index
    if dtype == "bool":   # index_add_ and scatter reduce="add" of bool: skip those torch refuses as well
        calls = [calls[k] for k in (0, 1, 3, 5, 6)]
    for f in calls:
        a, b = xt.clone(), xc.clone()
        v = b._version
        rt, rc = f(a, st, it, jt), f(b, sc, ic, jc)
        assert b._version > v
        _same(rc, rt)
        _same(b, a)
    # an operand inside self is read as it was before the writes (torch reads such non-dense views as
    # the writes go, an order it does not define)
    y = xc.clone()
    y[:, 1:6].scatter_add_(1, ic % 5, y[:, :4])
    z = xc.clone()
    z[:, 1:6] = z[:, 1:6].clone().scatter_add_(1, ic % 5, z[:, :4].clone())
    _same(y, z)
    if dtype != "bool":
        y = xc.clone()
        y.index_add_(1, jc, y[:, :5])
        _same(y, xc.clone().index_add_(1, jc, xc[:, :5].clone()))
    assert xc.clone().scatter_add_(1, ic, sc).data_ptr() != xc.data_ptr()
    y = xc.clone()
    assert y.scatter_(1, ic, sc) is y and y.index_add_(0, jc, sc[:5]) is y


def test_in_place_forms_keep_torch_s_errors():
    x = ct.zeros(3, 4)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        ct.zeros(1, 4).expand(3, 4).scatter_(1, ct.zeros(3, 1, dtype=ct.int64), 1.0)
    with pytest.raises(RuntimeError, match="index 4 is out of bounds for dimension 1 with size 4"):
        x.scatter_add_(1, ct.tensor([[4]]), ct.ones(1, 1))
    with pytest.raises(RuntimeError, match="index 3 is out of bounds for dimension 0 with size 3"):
        x.index_add_(0, ct.tensor([3]), ct.ones(1, 4))
    assert x.abs().sum().item() == 0   # index_add_ checks every index before writing
    with pytest.raises(RuntimeError, match="Expected self.dtype to be equal to src.dtype"):
        x.scatter_(1, ct.zeros(3, 1, dtype=ct.int64), ct.ones(3, 1, dtype=ct.float64))
    w = ct.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        w.scatter_(0, ct.tensor([0]), 1.0)
    with ct.no_grad():
        w.scatter_(0, ct.tensor([1]), 2.0)
    assert w.tolist() == [0.0, 2.0, 0.0]
    # with autograd the in-place forms still record: gradients as torch's
    for L in (ct, torch):
        s = L.ones(3, 2, requires_grad=True)
        y = L.zeros(3, 4).scatter_add_(1, L.tensor([[0, 1], [2, 3], [1, 1]]), s * 2)
        (y * L.arange(12.0).view(3, 4)).sum().backward()
        L.g = s.grad.tolist()
    assert ct.g == torch.g
