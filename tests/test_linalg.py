"""Linear algebra vs torch: tril/triu, diag family, einsum, kron/cross/cdist,
norms and the LAPACK-backed torch.linalg ops (values, dtypes, gradients, errors)."""
import math
import warnings

import numpy as np
import pytest

import cthtorch as ct
import oracle
from oracle import raises_like

torch = oracle.require_torch()


def rand(*shape, dt="float64", seed=0):
    return np.random.RandomState(seed).randn(*shape).astype(dt)


def spd(n, batch=(), dt="float64", seed=0):
    a = rand(*batch, n, n, dt=dt, seed=seed)
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(dt)


def flat(out):
    return list(out) if isinstance(out, tuple) else [out]


def check(fn_ct, fn_t, *arrays, grad=True, tol=None, loss=None, kw=None):
    """Runs both libraries on the same inputs; compares outputs and, with grad,
    the gradients of sum(w_i * loss(out_i)) for fixed random weights w_i."""
    kw = kw or {}
    xs = [ct.tensor(a, requires_grad=grad and a.dtype.kind == "f") for a in arrays]
    ys = [torch.tensor(a, requires_grad=grad and a.dtype.kind == "f") for a in arrays]
    oc, ot = flat(fn_ct(*xs, **kw)), flat(fn_t(*ys, **kw))
    assert len(oc) == len(ot)
    dt = arrays[0].dtype
    tol = tol or (1e-4 if dt == np.float32 else 1e-9)
    for a, b in zip(oc, ot):
        assert tuple(a.shape) == tuple(b.shape)
        assert str(a.dtype) == str(b.dtype)
        assert a.requires_grad == b.requires_grad
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)
    if not grad:
        return
    loss = loss or (lambda t: t)
    rs = np.random.RandomState(1)
    tc, tt = 0, 0
    for a, b in zip(oc, ot):
        if a.requires_grad:
            w = np.asarray(rs.randn(*a.shape)).astype(dt)
            tc = tc + (loss(a) * ct.tensor(w)).sum()
            tt = tt + (loss(b) * torch.tensor(w)).sum()
    if isinstance(tc, int):
        return
    tc.backward()
    tt.backward()
    for x, y in zip(xs, ys):
        if y.grad is not None:
            np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy(), rtol=tol * 10, atol=tol * 10)


# ---------------------------------------------------------------- tril / triu
@pytest.mark.parametrize("name", ["tril", "triu"])
@pytest.mark.parametrize("k", [-2, -1, 0, 1, 3])
@pytest.mark.parametrize("shape", [(4, 5), (5, 3), (2, 3, 4), (0, 3), (3, 3)])
def test_tril_triu(name, k, shape):
    check(lambda x: getattr(ct, name)(x, k), lambda x: getattr(torch, name)(x, k), rand(*shape))


@pytest.mark.parametrize("dt", ["float32", "int64", "bool", "int8"])
def test_tril_triu_dtypes_and_forms(dt):
    a = (rand(3, 4) * 3).astype(dt)
    for name in ("tril", "triu"):
        x, y = ct.tensor(a), torch.tensor(a)
        r = getattr(x, name)(1)
        assert str(r.dtype) == str(getattr(y, name)(1).dtype)
        np.testing.assert_array_equal(r.numpy(), getattr(y, name)(1).numpy())
        getattr(x, name + "_")(-1)
        getattr(y, name + "_")(-1)
        np.testing.assert_array_equal(x.numpy(), y.numpy())
        out = ct.empty(0, dtype=x.dtype)
        getattr(ct, name)(ct.tensor(a), diagonal=1, out=out)
        np.testing.assert_array_equal(out.numpy(), getattr(torch, name)(torch.tensor(a), diagonal=1).numpy())


def test_tril_noncontiguous_and_causal_mask():
    a = rand(5, 4)
    x, y = ct.tensor(a).t(), torch.tensor(a).t()
    np.testing.assert_array_equal(ct.tril(x).numpy(), torch.tril(y).numpy())
    x.triu_(1)
    y.triu_(1)
    np.testing.assert_array_equal(x.numpy(), y.numpy())
    m = ct.triu(ct.ones(4, 4) * float("-inf"), diagonal=1)
    np.testing.assert_array_equal(m.numpy(), torch.triu(torch.ones(4, 4) * float("-inf"), diagonal=1).numpy())


def test_tril_errors():
    raises_like(lambda: ct.tril(ct.ones(3)), lambda: torch.tril(torch.ones(3)))
    raises_like(lambda: ct.triu(ct.ones(3)), lambda: torch.triu(torch.ones(3)))


# ---------------------------------------------------------------- diag family
@pytest.mark.parametrize("shape,k", [((4,), 0), ((4,), 2), ((4,), -1), ((3, 5), 0), ((3, 5), 2), ((5, 3), -2)])
def test_diag(shape, k):
    check(lambda x: ct.diag(x, k), lambda x: torch.diag(x, k), rand(*shape))


@pytest.mark.parametrize("k,d1,d2", [(0, -2, -1), (1, 0, 2), (-1, 2, 0), (2, 1, -1)])
def test_diag_embed(k, d1, d2):
    check(lambda x: ct.diag_embed(x, k, d1, d2), lambda x: torch.diag_embed(x, k, d1, d2), rand(2, 3))


def test_diag_embed_node_double_backward_and_errors():
    """one DiagEmbedBackward0 node (torch's), differentiable again; torch's errors for bad dims and sizes"""
    got = []
    for L in (ct, torch):
        x = L.tensor(rand(2, 3), requires_grad=True)
        y = L.diag_embed(x * x, 1, 0, 2)
        (g,) = L.autograd.grad((y * y).sum(), x, create_graph=True)
        (gg,) = L.autograd.grad(g.sum(), x)
        got.append((y.grad_fn.name(), y.shape, np.round(g.detach().numpy(), 10).tolist(), np.round(gg.numpy(), 10).tolist()))
    assert got[0] == got[1]
    for args in [(0, 1, 1), (0, 3, 1), (2**63 - 1,), (-2**63,)]:
        raises_like(lambda: ct.ones(2).diag_embed(*args), lambda: torch.ones(2).diag_embed(*args))
    raises_like(lambda: ct.tensor(1.0).diag_embed(), lambda: torch.tensor(1.0).diag_embed())


def test_diagflat_trace_indices():
    check(lambda x: ct.diagflat(x, 1), lambda x: torch.diagflat(x, 1), rand(2, 2))
    check(ct.trace, torch.trace, rand(3, 4))
    a = (rand(3, 3) * 4).astype("int32")
    assert str(ct.tensor(a).trace().dtype) == str(torch.tensor(a).trace().dtype)
    raises_like(lambda: ct.trace(ct.ones(3)), lambda: torch.trace(torch.ones(3)))
    raises_like(lambda: ct.diag(ct.ones(2, 2, 2)), lambda: torch.diag(torch.ones(2, 2, 2)))
    for args in [(3, 3), (4, 3, 1), (3, 5, -1), (0, 3), (3, 4, 10)]:
        for name in ("tril_indices", "triu_indices"):
            r, e = getattr(ct, name)(*args), getattr(torch, name)(*args)
            assert str(r.dtype) == str(e.dtype)
            np.testing.assert_array_equal(r.numpy(), e.numpy())


# ---------------------------------------------------------------- einsum
EINSUM = [
    ("ij,jk->ik", [(3, 4), (4, 5)]), ("ij,jk", [(3, 4), (4, 5)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ii->i", [(4, 4)]), ("ii", [(4, 4)]), ("ij->ji", [(3, 4)]), ("ij->", [(3, 4)]), ("i,i->", [(5,), (5,)]),
    ("i,j->ij", [(3,), (4,)]), ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]), ("bhqd,bhkd->bhqk", [(2, 3, 4, 5)] * 2),
    ("b i d, b j d -> b i j", [(2, 3, 4), (2, 5, 4)]), ("ijk,ikl,j->il", [(2, 3, 4), (2, 4, 5), (3,)]),
    ("...i,...i", [(2, 3), (3,)]), ("i...->...", [(3, 2, 4)]), ("iij->j", [(3, 3, 2)]), ("ab,ab->a", [(1, 3), (4, 3)]),
    # outer products (nothing summed: a broadcast mul), batched, with a size-1 label and permuted outputs
    ("bi,bj->bij", [(3, 4), (3, 5)]), ("bi,bj->bji", [(3, 4), (1, 5)]), ("i,j,k->kij", [(2,), (3,), (4,)]),
    ("ij,k->ikj", [(2, 3), (4,)]),
]


def test_einsum_outer_promotes_like_torch():
    for lib in (ct, torch):
        a, b = lib.ones(3, dtype=lib.float32), lib.ones(2, dtype=lib.float64)
        assert str(lib.einsum("i,j->ij", a, b).dtype).endswith("float64")
        assert str(lib.einsum("i,j->ij", a.bool(), a.bool()).dtype).endswith("bool")


@pytest.mark.parametrize("eq,shapes", [
    ("i,j->ij", [(3,), (4,)]), ("i,j->ji", [(3,), (4,)]), ("bi,bj->bij", [(3, 4), (3, 5)]),
    ("bi,bj->bji", [(3, 4), (1, 5)]), ("i,j,k->kij", [(2,), (3,), (4,)]), ("ij,k->ikj", [(2, 3), (4,)]),
    ("i,j", [(3,), (4,)]), ("...i,j->...ij", [(2, 5, 3), (4,)]), ("i,i->i", [(3,), (3,)]), ("ij,j->ij", [(2, 3), (3,)])])
def test_einsum_outer_is_one_mul_like_torch(eq, shapes):
    """a product with nothing summed is one broadcast mul of the operands laid out in the result's order, as
    torch's: MulBackward0, the same (contiguous) strides, the values and gradients"""
    arrays = [rand(*s, seed=i) for i, s in enumerate(shapes)]
    got = []
    for lib in (ct, torch):
        xs = [lib.tensor(a, requires_grad=True) for a in arrays]
        r = lib.einsum(eq, *xs)
        r.backward(lib.ones_like(r))
        got.append((type(r.grad_fn).__name__, tuple(r.stride()), r.detach().numpy(), [x.grad.numpy() for x in xs]))
    assert got[0][:2] == got[1][:2]
    np.testing.assert_allclose(got[0][2], got[1][2], rtol=1e-6)
    for u, v in zip(got[0][3], got[1][3]):
        np.testing.assert_allclose(u, v, rtol=1e-5)


@pytest.mark.parametrize("eq,shapes", EINSUM)
def test_einsum(eq, shapes):
    arrays = [rand(*s, seed=i) for i, s in enumerate(shapes)]
    check(lambda *xs: ct.einsum(eq, *xs), lambda *xs: torch.einsum(eq, *xs), *arrays)


def test_einsum_list_int_and_errors():
    a, b = rand(2, 3), rand(3, 4)
    np.testing.assert_allclose(ct.einsum("ij,jk", [ct.tensor(a), ct.tensor(b)]).numpy(), a @ b)
    ai = (a * 3).astype("int32")
    r = ct.einsum("ij->j", ct.tensor(ai))
    assert str(r.dtype) == str(torch.einsum("ij->j", torch.tensor(ai)).dtype)
    raises_like(lambda: ct.einsum("ij,jk", ct.ones(2, 3), ct.ones(4, 3)),
                lambda: torch.einsum("ij,jk", torch.ones(2, 3), torch.ones(4, 3)))
    raises_like(lambda: ct.einsum("ij,jk->ik", ct.ones(2, 3)), lambda: torch.einsum("ij,jk->ik", torch.ones(2, 3)))
    raises_like(lambda: ct.einsum("ijk->ik", ct.ones(2, 3)), lambda: torch.einsum("ijk->ik", torch.ones(2, 3)))
    # a label twice in the output: the outer-product path computed a wrong result instead of torch's error
    for eq, shapes in (("i,j->iij", [(2,), (3,)]), ("ij->ii", [(2, 2)]), ("bi,bj->bijb", [(2, 3), (2, 4)])):
        raises_like(lambda: ct.einsum(eq, *[ct.ones(*s) for s in shapes]),
                    lambda: torch.einsum(eq, *[torch.ones(*s) for s in shapes]))


def test_einsum_sublist_format_and_argument_errors():
    """einsum(op, [0, 1], op2, [1, 2], [0, 2]): operands with integer subscripts (Ellipsis for ...), the output
    list optional; too few arguments and out-of-range subscripts raise torch's ValueError"""
    a, b = rand(2, 3, 4), rand(2, 5, 4, seed=1)
    check(lambda x, y: ct.einsum(x, [0, 1, 3], y, [0, 2, 3], [0, 1, 2]),
          lambda x, y: torch.einsum(x, [0, 1, 3], y, [0, 2, 3], [0, 1, 2]), a, b)
    check(lambda x, y: ct.einsum(x, [Ellipsis, 30], y, [Ellipsis, 30]),
          lambda x, y: torch.einsum(x, [Ellipsis, 30], y, [Ellipsis, 30]), a, a)
    check(lambda x: ct.einsum(x, [0, 1, 2], [Ellipsis]), lambda x: torch.einsum(x, [0, 1, 2], [Ellipsis]), a)
    # numpy integers as subscripts (a sublist from np.arange), as torch takes them
    check(lambda x: ct.einsum(x, list(np.arange(3)), [np.int64(2), np.int32(0)]),
          lambda x: torch.einsum(x, list(np.arange(3)), [np.int64(2), np.int32(0)]), a)
    for args in ((), ("ij",), (5, "m"), ("m", [0, 60]), ("m", [0, -1])):
        raises_like(lambda: ct.einsum(*[ct.ones(2, 2) if x == "m" else x for x in args]),
                    lambda: torch.einsum(*[torch.ones(2, 2) if x == "m" else x for x in args]))


# ---------------------------------------------------------------- kron, cross, cdist, dist
@pytest.mark.parametrize("sa,sb", [((2,), (3,)), ((2, 3), (3, 2)), ((2, 1, 2), (3, 2)), ((2,), (2, 3))])
def test_kron(sa, sb):
    check(ct.kron, torch.kron, rand(*sa), rand(*sb, seed=1))


def test_cross():
    check(lambda a, b: ct.linalg.cross(a, b), lambda a, b: torch.linalg.cross(a, b), rand(4, 3), rand(1, 3, seed=1))
    check(lambda a, b: ct.cross(a, b, dim=0), lambda a, b: torch.cross(a, b, dim=0), rand(3, 2), rand(3, 2, seed=1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(ct.cross, torch.cross, rand(2, 3), rand(2, 3, seed=1))
    raises_like(lambda: ct.linalg.cross(ct.ones(3, 2), ct.ones(3, 2)),
                lambda: torch.linalg.cross(torch.ones(3, 2), torch.ones(3, 2)))


@pytest.mark.parametrize("p", [2.0, 1.0, 0.5, 3.0, math.inf, 0.0])
@pytest.mark.parametrize("sa,sb", [((4, 3), (5, 3)), ((2, 30, 3), (2, 28, 3))])
def test_cdist(p, sa, sb):
    tol = 1e-6 if (p == 2 and sa[-2] > 25) else None
    check(lambda a, b: ct.cdist(a, b, p), lambda a, b: torch.cdist(a, b, p), rand(*sa), rand(*sb, seed=1), tol=tol,
          grad=p not in (0.0,))


def test_cdist_dist_errors_and_values():
    raises_like(lambda: ct.cdist(ct.ones(3), ct.ones(3, 3)), lambda: torch.cdist(torch.ones(3), torch.ones(3, 3)))
    raises_like(lambda: ct.cdist(ct.ones(2, 3), ct.ones(3, 4)), lambda: torch.cdist(torch.ones(2, 3),
                                                                                     torch.ones(3, 4)))
    for p in (2, 1, 3.5, math.inf):
        check(lambda a, b: ct.dist(a, b, p), lambda a, b: torch.dist(a, b, p), rand(3, 4), rand(4, seed=1))


# ---------------------------------------------------------------- norms
@pytest.mark.parametrize("ord", [2, 1, 3, 0.5, math.inf, -math.inf, 0])
@pytest.mark.parametrize("dim,keepdim", [(None, False), (1, False), ((0, 2), True), (-1, True)])
def test_vector_norm(ord, dim, keepdim):
    check(lambda x: ct.linalg.vector_norm(x, ord, dim, keepdim), lambda x: torch.linalg.vector_norm(x, ord, dim, keepdim),
          rand(2, 3, 4), grad=ord != 0)


def test_vector_norm_zero_grad_dtype_and_errors():
    x, y = ct.zeros(3, dtype=ct.float64, requires_grad=True), torch.zeros(3, dtype=torch.float64, requires_grad=True)
    ct.linalg.vector_norm(x).backward()
    torch.linalg.vector_norm(y).backward()
    np.testing.assert_array_equal(x.grad.numpy(), y.grad.numpy())
    r = ct.linalg.vector_norm(ct.ones(3), dtype=ct.float64)
    assert r.dtype == ct.float64
    raises_like(lambda: ct.linalg.vector_norm(ct.ones(3, dtype=ct.long)),
                lambda: torch.linalg.vector_norm(torch.ones(3, dtype=torch.long)))
    raises_like(lambda: ct.norm(ct.ones(3, dtype=ct.long)), lambda: torch.norm(torch.ones(3, dtype=torch.long)))


@pytest.mark.parametrize("ord", ["fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf])
@pytest.mark.parametrize("dim,keepdim", [((-2, -1), False), ((0, 2), True), ((2, 0), False)])
def test_matrix_norm(ord, dim, keepdim):
    check(lambda x: ct.linalg.matrix_norm(x, ord, dim, keepdim),
          lambda x: torch.linalg.matrix_norm(x, ord, dim, keepdim), rand(3, 4, 5), tol=1e-8)


def test_linalg_norm_and_torch_norm():
    a = rand(3, 4)
    for args in [(), (None, 1), (2,), ("fro",), ("nuc",), (math.inf,), (1, (0, 1)), (None, (0, 1), True)]:
        check(lambda x: ct.linalg.norm(x, *args), lambda x: torch.linalg.norm(x, *args), a, tol=1e-8)
    for args, kw in [((), {}), ((1,), {}), ((3, 1), {}), (("fro", (0, 1)), {}), (("nuc",), {}), ((2, 0, True), {}),
                     ((), {"dim": 1, "dtype": torch.float64})]:
        kc = {k: (ct.float64 if v is torch.float64 else v) for k, v in kw.items()}
        check(lambda x: ct.norm(x, *args, **kc), lambda x: torch.norm(x, *args, **kw), a, tol=1e-5)
        check(lambda x: x.norm(*args, **kc), lambda x: x.norm(*args, **kw), a, tol=1e-5)
    raises_like(lambda: ct.linalg.norm(ct.ones(2, 2, 2), 2), lambda: torch.linalg.norm(torch.ones(2, 2, 2), 2))
    raises_like(lambda: ct.linalg.matrix_norm(ct.ones(3, 3), 3), lambda: torch.linalg.matrix_norm(torch.ones(3, 3), 3))
    raises_like(lambda: ct.linalg.matrix_norm(ct.ones(3)), lambda: torch.linalg.matrix_norm(torch.ones(3)))


def test_renorm():
    a = rand(4, 3) * 3
    check(lambda x: ct.renorm(x, 2, 0, 1.5), lambda x: torch.renorm(x, 2, 0, 1.5), a)
    check(lambda x: x.renorm(1, 1, 2.0), lambda x: x.renorm(1, 1, 2.0), a)
    x, y = ct.tensor(a), torch.tensor(a)
    x.renorm_(2, 0, 1.0)
    y.renorm_(2, 0, 1.0)
    np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=1e-12)


# ---------------------------------------------------------------- LAPACK-backed ops
@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("batch", [(), (3,), (2, 2)])
def test_inv_det_slogdet(dt, batch):
    a = rand(*batch, 4, 4, dt=dt)
    check(ct.linalg.inv, torch.linalg.inv, a)
    check(ct.linalg.det, torch.linalg.det, a)
    check(ct.linalg.slogdet, torch.linalg.slogdet, a)
    check(ct.inverse, torch.inverse, a)
    check(ct.logdet, torch.logdet, a, grad=False)
    check(ct.det, torch.det, a)


def test_det_singular_grad_and_inv_ex():
    # rank n-1: the gradient is the (nonzero) cofactor matrix; torch returns 0 here
    a = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.5, 1.0, 2.0]])
    x = ct.tensor(a, requires_grad=True)
    ct.linalg.det(x).backward()
    cof = np.array([[np.linalg.det(np.delete(np.delete(a, i, 0), j, 1)) * (-1) ** (i + j) for j in range(3)]
                    for i in range(3)])
    np.testing.assert_allclose(x.grad.numpy(), cof, atol=1e-10)
    r, e = ct.linalg.inv_ex(ct.tensor(a)), torch.linalg.inv_ex(torch.tensor(a))
    assert int(r.info) == int(e.info) and str(r.info.dtype) == str(e.info.dtype)


def test_linalg_errors():
    pairs = [
        (lambda m: m.linalg.inv(m.ones(3, 4)),), (lambda m: m.linalg.inv(m.ones(3)),),
        (lambda m: m.linalg.inv(m.ones(3, 3, dtype=m.long)),), (lambda m: m.linalg.inv(m.ones(3, 3)),),
        (lambda m: m.linalg.inv(m.ones(2, 3, 3)),), (lambda m: m.linalg.det(m.ones(3, 4)),),
        (lambda m: m.linalg.solve(m.ones(3, 3), m.ones(3)),), (lambda m: m.linalg.solve(m.eye(3), m.ones(4)),),
        (lambda m: m.linalg.cholesky(-m.eye(3)),), (lambda m: m.linalg.cholesky(-m.eye(3).expand(2, 3, 3)),),
        (lambda m: m.linalg.eigh(m.ones(3, 4)),), (lambda m: m.linalg.svd(m.ones(3)),),
        (lambda m: m.linalg.svd(m.ones(3, 3, dtype=m.long)),), (lambda m: m.linalg.qr(m.ones(3, 3), mode="x"),),
        (lambda m: m.linalg.multi_dot([m.ones(3, 3)]),), (lambda m: m.linalg.matrix_power(m.ones(2, 3), 2),),
    ]
    for (f,) in pairs:
        raises_like(lambda: f(ct), lambda: f(torch))
    with pytest.raises(ct._C._LinAlgError):
        ct.linalg.inv(ct.zeros(2, 2))
    assert issubclass(ct._C._LinAlgError, RuntimeError)
    with pytest.raises(NotImplementedError):
        ct.linalg.eig(ct.eye(2))


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("sa,sb", [((4, 4), (4, 2)), ((4, 4), (4,)), ((2, 4, 4), (4, 3)), ((3, 3), (2, 3, 1)),
                                   ((2, 3, 3), (2, 3))])
def test_solve(dt, sa, sb):
    check(ct.linalg.solve, torch.linalg.solve, rand(*sa, dt=dt), rand(*sb, dt=dt, seed=1))


def test_solve_left_false_and_triangular():
    a, b = rand(3, 3), rand(2, 3, seed=1)
    check(lambda x, y: ct.linalg.solve(x, y, left=False), lambda x, y: torch.linalg.solve(x, y, left=False), a, b)
    t = np.triu(rand(4, 4)) + 4 * np.eye(4)
    for upper, left, unit in [(True, True, False), (True, False, False), (False, True, True), (False, False, True)]:
        A = t if upper else t.T.copy()
        B = rand(4, 2, seed=2) if left else rand(2, 4, seed=2)
        kw = dict(upper=upper, left=left, unitriangular=unit)
        check(lambda x, y: ct.linalg.solve_triangular(x, y, **kw),
              lambda x, y: torch.linalg.solve_triangular(x, y, **kw), A, B)


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("batch", [(), (2,)])
def test_cholesky(upper, batch):
    a = spd(4, batch)
    # the loss symmetrizes: both libraries define the gradient on the symmetric part
    check(lambda x: ct.linalg.cholesky((x + x.mT) / 2, upper=upper),
          lambda x: torch.linalg.cholesky((x + x.mT) / 2, upper=upper), a)
    L = np.linalg.cholesky(a)
    b = rand(*batch, 4, 2, seed=3)
    check(ct.cholesky_solve, torch.cholesky_solve, b, L)
    check(ct.cholesky_inverse, torch.cholesky_inverse, L[0] if batch else L)


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh(uplo):
    a = spd(4, (2,))
    sym = lambda m: lambda x: (x + x.mT) / 2   # noqa: E731
    check(lambda x: ct.linalg.eigvalsh(sym(ct)(x), uplo), lambda x: torch.linalg.eigvalsh(sym(torch)(x), uplo), a)
    # eigenvectors are defined up to sign: compare |V|, and gradients of a sign-invariant loss
    wc, Vc = ct.linalg.eigh(ct.tensor(a), uplo)
    wt, Vt = torch.linalg.eigh(torch.tensor(a), uplo)
    np.testing.assert_allclose(wc.numpy(), wt.numpy(), rtol=1e-10)
    np.testing.assert_allclose(np.abs(Vc.numpy()), np.abs(Vt.numpy()), atol=1e-8)
    xs, ys = ct.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    w = rand(2, 4, 4, seed=5)
    for m, x in ((ct, xs), (torch, ys)):
        e, V = m.linalg.eigh(sym(m)(x), uplo)
        ((V.abs() * m.tensor(w)).sum() + (e * e).sum()).backward()
    np.testing.assert_allclose(xs.grad.numpy(), ys.grad.numpy(), atol=1e-7)


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 4, 3)])
@pytest.mark.parametrize("full", [False, True])
def test_svd(shape, full):
    a = rand(*shape)
    check(ct.linalg.svdvals, torch.linalg.svdvals, a)
    Uc, Sc, Vc = ct.linalg.svd(ct.tensor(a), full_matrices=full)
    Ut, St, Vt = torch.linalg.svd(torch.tensor(a), full_matrices=full)
    assert tuple(Uc.shape) == tuple(Ut.shape) and tuple(Vc.shape) == tuple(Vt.shape)
    np.testing.assert_allclose(Sc.numpy(), St.numpy(), rtol=1e-10)
    k = min(shape[-2:])
    recon = (Uc[..., :k] * Sc.unsqueeze(-2)) @ Vc[..., :k, :]
    np.testing.assert_allclose(recon.numpy(), a, atol=1e-10)
    # singular vectors are defined up to sign: a sign-invariant loss
    xs, ys = ct.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    w1, w2 = rand(*Ut.shape, seed=6), rand(*Vt.shape, seed=7)
    for m, x in ((ct, xs), (torch, ys)):
        U, S, Vh = m.linalg.svd(x, full_matrices=full)
        U, Vh = U[..., :k], Vh[..., :k, :]
        ((U.abs() * m.tensor(w1[..., :k])).sum()
         + (Vh.abs() * m.tensor(w2[..., :k, :])).sum() + (S ** 3).sum()).backward()
    np.testing.assert_allclose(xs.grad.numpy(), ys.grad.numpy(), atol=1e-7)
    check(lambda x: ct.svd(x)[1], lambda x: torch.svd(x)[1], a)


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 4, 3)])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr(shape, mode):
    a = rand(*shape)
    Qc, Rc = ct.linalg.qr(ct.tensor(a), mode)
    Qt, Rt = torch.linalg.qr(torch.tensor(a), mode)
    assert tuple(Qc.shape) == tuple(Qt.shape) and tuple(Rc.shape) == tuple(Rt.shape)
    np.testing.assert_allclose(np.abs(Rc.numpy()), np.abs(Rt.numpy()), atol=1e-10)
    if mode != "r":
        np.testing.assert_allclose((Qc @ Rc).numpy(), a, atol=1e-10)
    if mode == "reduced" and shape[-2] >= shape[-1]:
        check(lambda x: ct.linalg.qr(x), lambda x: torch.linalg.qr(x), a)   # same LAPACK signs


def test_lstsq_pinv_rank():
    a, b = rand(6, 3), rand(6, 2, seed=1)
    check(lambda x, y: ct.linalg.lstsq(x, y).solution, lambda x, y: torch.linalg.lstsq(x, y).solution, a, b)
    check(lambda x, y: ct.linalg.lstsq(x, y).solution, lambda x, y: torch.linalg.lstsq(x, y).solution,
          rand(2, 5), rand(2, 2, seed=1), grad=False)
    rc, rt = ct.linalg.lstsq(ct.tensor(a), ct.tensor(b)), torch.linalg.lstsq(torch.tensor(a), torch.tensor(b))
    for f in ("residuals", "rank", "singular_values"):
        x, y = getattr(rc, f), getattr(rt, f)
        assert tuple(x.shape) == tuple(y.shape) and str(x.dtype) == str(y.dtype), f
    check(ct.linalg.pinv, torch.linalg.pinv, rand(4, 3))
    check(ct.pinverse, torch.pinverse, rand(3, 5), grad=False)
    low = rand(5, 2) @ rand(2, 4, seed=1)
    for m in (low, rand(3, 3), np.zeros((2, 2))):
        assert int(ct.linalg.matrix_rank(ct.tensor(m))) == int(torch.linalg.matrix_rank(torch.tensor(m)))
    check(ct.linalg.pinv, torch.linalg.pinv, low, grad=False, tol=1e-8)


def test_lu_family():
    a = rand(2, 4, 4)
    LUc, pc = ct.linalg.lu_factor(ct.tensor(a))
    LUt, pt = torch.linalg.lu_factor(torch.tensor(a))
    np.testing.assert_allclose(LUc.numpy(), LUt.numpy(), atol=1e-12)
    np.testing.assert_array_equal(pc.numpy(), pt.numpy())
    assert str(pc.dtype) == str(pt.dtype)
    for x, y in zip(ct.linalg.lu(ct.tensor(a)), torch.linalg.lu(torch.tensor(a))):
        np.testing.assert_allclose(x.numpy(), y.numpy(), atol=1e-12)
    b = rand(2, 4, 3, seed=1)
    for kw in ({}, {"adjoint": True}, {"left": False}):
        bb = b if kw.get("left", True) else np.swapaxes(b, -1, -2).copy()
        x = ct.linalg.lu_solve(LUc, pc, ct.tensor(bb), **kw)
        y = torch.linalg.lu_solve(LUt, pt, torch.tensor(bb), **kw)
        np.testing.assert_allclose(x.numpy(), y.numpy(), atol=1e-10)


def test_matrix_power_exp_multi_dot_vecdot():
    a = rand(2, 3, 3) / 2
    for n in (0, 1, 2, 5, -1, -3):
        check(lambda x: ct.linalg.matrix_power(x, n), lambda x: torch.linalg.matrix_power(x, n), a)
    ai = (rand(3, 3) * 3).astype("int64")
    np.testing.assert_array_equal(ct.matrix_power(ct.tensor(ai), 3).numpy(),
                                  torch.matrix_power(torch.tensor(ai), 3).numpy())
    for scale in (0.1, 1.0, 20.0):
        check(ct.linalg.matrix_exp, torch.linalg.matrix_exp, rand(2, 4, 4) * scale, tol=1e-9 * max(1, scale ** 2))
    check(lambda *xs: ct.linalg.multi_dot(xs), lambda *xs: torch.linalg.multi_dot(xs), rand(3), rand(3, 4),
          rand(4, 2), rand(2))
    check(ct.linalg.vecdot, torch.linalg.vecdot, rand(2, 3), rand(3, seed=1))


def test_double_backward_inv():
    a = rand(3, 3) + 3 * np.eye(3)
    grads = []
    for m in (ct, torch):
        x = m.tensor(a, requires_grad=True)
        g, = m.autograd.grad((m.linalg.inv(x) ** 2).sum(), x, create_graph=True)
        g2, = m.autograd.grad((g ** 2).sum(), x)
        grads.append(g2.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-8)


def test_empty_and_edge_cases():
    cases = [
        lambda m: m.linalg.inv(m.zeros(0, 0)), lambda m: m.linalg.det(m.zeros(2, 0, 0)),
        lambda m: m.linalg.slogdet(m.zeros(0, 0)), lambda m: m.linalg.svd(m.zeros(0, 3)),
        lambda m: m.linalg.svd(m.zeros(3, 0), full_matrices=False), lambda m: m.linalg.eigh(m.zeros(0, 0)),
        lambda m: m.linalg.cholesky(m.zeros(0, 0)), lambda m: m.linalg.qr(m.zeros(3, 0), mode="complete"),
        lambda m: m.linalg.solve(m.eye(3), m.zeros(3, 0)), lambda m: m.linalg.vector_norm(m.zeros(0)),
        lambda m: m.linalg.matrix_norm(m.zeros(0, 0)), lambda m: m.einsum("i,i", m.zeros(0), m.zeros(0)),
        lambda m: m.einsum("ij,jk->ik", m.ones(2, 0), m.ones(0, 3)), lambda m: m.cdist(m.zeros(0, 3), m.ones(2, 3)),
        lambda m: m.linalg.inv_ex(m.eye(2, requires_grad=True)),
    ]
    for f in cases:
        for a, b in zip(flat(f(ct)), flat(f(torch))):
            assert tuple(a.shape) == tuple(b.shape) and str(a.dtype) == str(b.dtype)
            assert a.requires_grad == b.requires_grad
            np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    raises_like(lambda: ct.linalg.vector_norm(ct.zeros(0), math.inf),
                lambda: torch.linalg.vector_norm(torch.zeros(0), math.inf))
    raises_like(lambda: ct.trace(ct.ones(2, 2, dtype=ct.bool)), lambda: torch.trace(torch.ones(2, 2, dtype=torch.bool)))
    with pytest.raises(NotImplementedError):
        ct.linalg.inv(ct.eye(2, dtype=ct.float16))


def test_lu_and_wide_qr_gradients_match_torch():
    rs = np.random.RandomState(11)
    a, b, w = rs.randn(2, 4, 4), rs.randn(2, 4, 3), rs.randn(3, 5)

    def run(m):
        A = m.tensor(a, requires_grad=True)
        B = m.tensor(b, requires_grad=True)
        W = m.tensor(w, requires_grad=True)
        P, L, U = m.linalg.lu(A)
        X = m.linalg.lu_solve(*m.linalg.lu_factor(A), B, adjoint=True)
        Q, R = m.linalg.qr(W)
        ((L * 2 + U * 3).sum() + (X * X).sum() + Q.sum() + (R * R).sum()).backward()
        return [t.grad.numpy() for t in (A, B, W)]
    for x, y in zip(run(ct), run(torch)):
        np.testing.assert_allclose(x, y, rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------- lu_unpack (a C op: src/ATen/ATLapack.c)

def _lu_pair(m, shape, dtype="float64", seed=0):
    """the same packed factors for both libraries (their LAPACKs may differ in the last bit), column-major
    as lu_factor gives them"""
    LU, piv = torch.linalg.lu_factor(torch.tensor(np.random.RandomState(seed).randn(*shape)))
    LU = m.tensor(LU.numpy()).mT.contiguous().mT
    return LU.to(getattr(m, dtype)), m.tensor(piv.numpy())


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 3, 4, 4), (3, 6, 2), (0, 3, 3), (1, 1), (40, 70),
                                   (70, 40)])


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16", "int32", "bool"])
def test_lu_unpack_values(shape, dtype):
    LUc, pc = _lu_pair(ct, shape, dtype)
    LUt, pt = _lu_pair(torch, shape, dtype)
    for flags in ((True, True), (True, False), (False, True), (False, False)):
        rc, rt = ct.lu_unpack(LUc, pc, *flags), torch.lu_unpack(LUt, pt, *flags)
        assert type(rc).__name__ == "lu_unpack" and rc._fields == ("P", "L", "U")
        for x, y in zip(rc, rt):
            assert tuple(x.shape) == tuple(y.shape) and str(x.dtype) == str(y.dtype), (flags, x.shape, y.shape)
            np.testing.assert_array_equal(x.float().numpy(), y.float().numpy())


def test_lu_unpack_layouts_and_broadcast_pivots():
    LUc, pc = _lu_pair(ct, (3, 5, 4))
    LUt, pt = _lu_pair(torch, (3, 5, 4))
    cases = [lambda L, LU, p: (LU, p),                               # column-major, as lu_factor gives it
             lambda L, LU, p: (LU.contiguous(), p),                  # row-major
             lambda L, LU, p: (LU.transpose(0, 1).contiguous().transpose(0, 1), p),   # batch strides permuted
                 lambda L, LU, p: (LU[:, :, ::2], p[:, :2]),             # strided columns (5 x 2: k = 2)
             lambda L, LU, p: (LU, p[0]),                            # one pivot vector for the batch
             lambda L, LU, p: (LU, p[:1]),
             lambda L, LU, p: (LU.expand(2, 3, 5, 4), p)]            # broadcast batch dims
    for f in cases:
        # torch reads broadcast (or strided) pivots as if contiguous, and gets P wrong or corrupts its heap:
        # it gets them expanded and contiguous
        LU, p = f(torch, LUt, pt)
        p = p.expand(LU.shape[:-2] + p.shape[-1:]).contiguous()
        for x, y in zip(ct.lu_unpack(*f(ct, LUc, pc)), torch.lu_unpack(LU, p)):
            assert tuple(x.shape) == tuple(y.shape)
            np.testing.assert_array_equal(x.numpy(), y.numpy())


def test_lu_unpack_reconstructs_and_out():
    a = np.random.RandomState(3).randn(4, 6, 6)
    LU, piv = ct.linalg.lu_factor(ct.tensor(a))
    P, L, U = ct.lu_unpack(LU, piv)
    np.testing.assert_allclose((P @ L @ U).numpy(), a, atol=1e-12)
    outs = (ct.empty(0, dtype=ct.float64), ct.empty(0, dtype=ct.float64), ct.empty(0, dtype=ct.float64))
    r = ct.lu_unpack(LU, piv, out=outs)
    assert all(x is y for x, y in zip(r, outs))
    for x, y in zip(outs, (P, L, U)):
        np.testing.assert_array_equal(x.numpy(), y.numpy())


def test_lu_unpack_errors():
    LUc, pc = _lu_pair(ct, (2, 3, 4))
    LUt, pt = _lu_pair(torch, (2, 3, 4))
    cases = [lambda L, LU, p: L.lu_unpack(LU[0, 0], p),               # 1-d LU
             lambda L, LU, p: L.lu_unpack(LU, p.long()),              # int64 pivots
             lambda L, LU, p: L.lu_unpack(LU, p.float()),
             lambda L, LU, p: L.lu_unpack(LU, L.full((2, 3), 4, dtype=L.int32)),   # past m
             lambda L, LU, p: L.lu_unpack(LU, L.zeros((2, 3), dtype=L.int32))]     # below 1
    for f in cases:
        raises_like(lambda: f(ct, LUc, pc), lambda: f(torch, LUt, pt))
    # pivots of the wrong length: torch reads past them (sometimes raising this, sometimes not)
    with pytest.raises(RuntimeError, match="pivots passed to lu_unpack must be between 1 and LU.size"):
        ct.lu_unpack(LUc, ct.ones((2, 4), dtype=ct.int32))
    # int64 pivots are fine when they are not unpacked (torch checks the dtype only then)
    for x, y in zip(ct.lu_unpack(LUc, pc.long(), True, False), torch.lu_unpack(LUt, pt.long(), True, False)):
        assert tuple(x.shape) == tuple(y.shape)


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 3, 3)])
def test_lu_unpack_gradients(shape):
    LU, piv = _lu_pair(ct, shape)
    x = LU.detach().requires_grad_()
    P, L, U = ct.lu_unpack(x, piv)
    assert not P.requires_grad and P.grad_fn is None
    assert L.grad_fn is U.grad_fn and type(L.grad_fn).__name__ == "LuUnpackBackward0"
    assert ct.autograd.gradcheck(lambda t: ct.lu_unpack(t, piv)[1:], (x,))
    assert ct.autograd.gradgradcheck(lambda t: ct.lu_unpack(t, piv)[1:], (x,))
    # one factor alone (the other gradient is undefined), against torch
    for k in (1, 2):
        grads = []
        for m in (ct, torch):
            LUm, pm = _lu_pair(m, shape)
            t = LUm.detach().requires_grad_()
            (m.lu_unpack(t, pm)[k] ** 2).sum().backward()
            grads.append(t.grad.numpy())
        np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)


@pytest.mark.parametrize("p", [2, 1, 3.5, math.inf])
def test_dist_and_norm_grad_fn_names_and_gradients(p):
    """a printed norm or dist reads as torch's (the parametrizations tutorial prints torch.dist results)"""
    a, b = rand(3, 4), rand(3, 4, seed=1)
    ca, ta = ct.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    cd, td = ct.dist(ca, ct.tensor(b), p), torch.dist(ta, torch.tensor(b), p)
    assert repr(cd).split("(", 1)[1].split(",")[1] == repr(td).split("(", 1)[1].split(",")[1]   # grad_fn=<DistBackward0>
    np.testing.assert_allclose(cd.item(), td.item(), rtol=1e-12)
    cd.backward()
    td.backward()
    np.testing.assert_allclose(ca.grad.numpy(), ta.grad.numpy(), rtol=1e-10, atol=1e-12)
    for fc, ft in ((lambda x: ct.linalg.vector_norm(x, p), lambda x: torch.linalg.vector_norm(x, p)),
                   (lambda x: x.norm(), lambda x: x.norm())):
        assert type(fc(ca).grad_fn).__name__ == type(ft(ta).grad_fn).__name__ == "LinalgVectorNormBackward0"
    assert ct.dist(ct.tensor(a), ct.tensor(b), p).grad_fn is None


def test_vander_tensorinv_tensorsolve_match_torch():
    rs = np.random.RandomState(7)

    def both(fn, *arrays, tol=1e-10, grad=True):
        cts = [ct.tensor(a, requires_grad=grad and a.dtype.kind == "f") for a in arrays]
        ts = [torch.tensor(a, requires_grad=grad and a.dtype.kind == "f") for a in arrays]
        a, b = fn(ct, *cts), fn(torch, *ts)
        assert str(a.dtype) == str(b.dtype) and tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)
        if grad and a.requires_grad:
            w = np.cos(np.arange(a.numel())).reshape(tuple(a.shape))
            ga = ct.autograd.grad((a * ct.tensor(w)).sum(), cts)
            gb = torch.autograd.grad((b * torch.tensor(w)).sum(), ts)
            for x, y in zip(ga, gb):
                np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=1e-8, atol=1e-8)

    both(lambda L, x: L.linalg.vander(x), np.array([1, 2, 3, -4]))
    both(lambda L, x: L.linalg.vander(x), rs.randn(2, 3))
    both(lambda L, x: L.linalg.vander(x, N=5), rs.randn(3))
    both(lambda L, a: L.linalg.tensorinv(a, ind=2), rs.randn(4, 6, 8, 3))
    both(lambda L, a: L.linalg.tensorinv(a, ind=1), rs.randn(6, 2, 3))
    both(lambda L, a, b: L.linalg.tensorsolve(a, b), rs.randn(6, 2, 3), rs.randn(6))
    both(lambda L, a, b: L.linalg.tensorsolve(a, b), rs.randn(2, 3, 3, 2), rs.randn(2, 3))
    both(lambda L, a, b: L.linalg.tensorsolve(a, b, dims=(0, 1)), rs.randn(2, 3, 6), rs.randn(6))
    for fn in (lambda L: L.linalg.vander(L.tensor(3.0)), lambda L: L.linalg.vander(L.tensor([1, 2]), N=1),
               lambda L: L.linalg.tensorinv(L.ones(4, 3, 2), ind=0), lambda L: L.linalg.tensorinv(L.ones(4, 3, 2), ind=1),
               lambda L: L.linalg.tensorsolve(L.ones(6, 2, 3), L.ones(5))):
        raises_like(lambda: fn(ct), lambda: fn(torch))


@pytest.mark.parametrize("dt", ["bfloat16", "float16"])
def test_half_precision_vector_norm_sums_in_float(dt):
    """squares summed in float and rounded once, as torch: bf16 squares summed then rooted land an ulp off"""
    import torch as T
    rs = np.random.RandomState(0)
    for _ in range(40):
        a = rs.randn(rs.randint(1, 30), rs.randint(1, 30)) * rs.choice([1e-2, 1.0, 50.0])
        for p in (2, 1, 3, float("inf"), 0):
            c, t = ct.tensor(a, dtype=getattr(ct, dt)), T.tensor(a, dtype=getattr(T, dt))
            assert ct.linalg.vector_norm(c, p).dtype == getattr(ct, dt)
            assert ct.linalg.vector_norm(c, p).float().item() == T.linalg.vector_norm(t, p).float().item()
            assert c.norm(p, dim=1).float().numpy().tolist() == t.norm(p, dim=1).float().numpy().tolist()


@pytest.mark.parametrize("calls,prefix", [("A.lu(); t.lu(A); t.lu(A, get_infos=True)",
                                           "torch.lu is deprecated in favor of torch.linalg.lu_factor"),
                                          ("A.cholesky(); t.cholesky(A); t.cholesky(A, upper=True)",
                                           "torch.cholesky is deprecated in favor of torch.linalg.cholesky"),
                                          ("A.qr(); t.qr(A); t.qr(A, some=False)",
                                           "torch.qr is deprecated in favor of torch.linalg.qr"),
                                          ("t.triangular_solve(A, A); A.triangular_solve(A, upper=False)",
                                           "torch.triangular_solve is deprecated in favor of")])
def test_legacy_decompositions_warn_once_per_process_like_torch(calls, prefix):
    """torch.lu / cholesky / qr / triangular_solve and their methods warn their deprecation once per process
    (Glow's 1x1 conv calls lu every step), at the user's line (the file that called, the first call's line)"""
    import os
    import subprocess
    import sys
    code = ("import warnings, {0} as t\nwarnings.simplefilter('always')\nA = t.eye(3) * 2\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n    %s\n"
            "print(len(w)); print(str(w[0].message).split(' (Triggered')[0]); print(w[0].filename, w[0].lineno)"
            % calls)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    outs = [subprocess.run([sys.executable, "-c", code.format(m)], capture_output=True, text=True, check=True,
                           env=env).stdout for m in ("cthtorch", "torch")]
    assert outs[0].startswith("1\n" + prefix) and outs[0].startswith(outs[1].rsplit("\n", 2)[0])
    # torch.lu is Python in torch (its warning names torch/functional.py); the C++ ones name the caller's line
    assert outs[0].endswith("<string> 6\n") and (outs[1] == outs[0] or "lu" in prefix)


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, 0.0, float("inf")])
def test_cdist_direct_path_node_and_grads_match_torch(p):
    """the direct (non-GEMM) path: one CdistBackward0 node over both inputs, its gradients torch's"""
    res = []
    for L in (torch, ct):
        a = L.tensor(np.random.RandomState(1).randn(2, 4, 3), requires_grad=True)
        b = L.tensor(np.random.RandomState(2).randn(2, 5, 3), requires_grad=True)
        y = L.cdist(a, b, p=p)
        y.backward(L.tensor(np.random.RandomState(3).randn(*y.shape)))
        one = L.cdist(L.ones(3, 2, requires_grad=True), L.zeros(2, 2))
        res.append((type(y.grad_fn).__name__, [type(f).__name__ if f else None for f, _ in one.grad_fn.next_functions],
                    y.detach().numpy(), a.grad.numpy(), b.grad.numpy()))
    assert res[1][:2] == res[0][:2]
    for x, y in zip(res[0][2:], res[1][2:]):
        np.testing.assert_allclose(y, x, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("p", [0.5, 1.5, 3.0])
def test_vector_norm_grad_at_a_zero_element_matches_torch(p):
    """|x|^(p-2) is infinite at 0 for p < 2: the gradient there is torch's 0, not NaN (cdist with p=1.5 of points
    sharing a coordinate met it)"""
    got = []
    for L in (ct, torch):
        v = L.tensor([[0.0, 1.0, -2.0], [0.0, 0.0, 0.0]], dtype=L.float64, requires_grad=True)
        a = L.tensor([[1.0, 2.0, 3.0]], dtype=L.float64, requires_grad=True)
        b = L.tensor([[1.0, 0.0, 5.0]], dtype=L.float64)
        g1, = L.autograd.grad(L.linalg.vector_norm(v, p, dim=1).sum(), v)
        g2, = L.autograd.grad(L.cdist(a, b, p=p).sum(), a)
        got.append((g1.numpy(), g2.numpy()))
    for c, t in zip(*got):
        assert not np.isnan(c).any()
        np.testing.assert_allclose(c, t, rtol=1e-12, atol=1e-12)


def test_legacy_qr_warns_once_per_process_as_torch():
    """torch.qr / Tensor.qr (some=) warn the first time in a process (TORCH_WARN_ONCE), then stay quiet"""
    code = ("import importlib, sys, warnings\nm = importlib.import_module(sys.argv[1])\n"
            "with warnings.catch_warnings(record=True) as w:\n    warnings.simplefilter('always')\n"
            "    a = m.tensor([[1.0, 2.0], [3.0, 4.0], [0.5, 1.0]])\n"
            "    q, r = m.qr(a); m.qr(a, some=False); a.qr()\n"
            "print(len(w), [str(x.message).split(' (Triggered')[0] for x in w], q.shape, r.shape)\n")
    outs = oracle.fresh_process_outputs(code)
    assert outs[0] == outs[1] and outs[0].startswith("1 ")


def test_tril_triu_results_are_contiguous_whatever_the_input_layout():
    """torch allocates tril/triu contiguous: a column-major Cholesky factor's L.tril() is row-major, so
    distributions' lower-Cholesky check (L.tril() == L).view(..., -1) works on linalg.cholesky's output"""
    a = spd(4, dt="float32")
    strides = []
    for L in (torch, ct):
        chol = L.linalg.cholesky(L.tensor(a))
        t = L.tensor(rand(2, 3, 4)).transpose(-1, -2)
        strides.append([chol.stride(), chol.tril().stride(), chol.triu(1).stride(), (chol.tril() == chol).stride(),
                        t.tril().stride(), t.triu().stride(), t.tril(-1).stride()])
        mvn = L.distributions.MultivariateNormal(L.zeros(4), scale_tril=chol, validate_args=True)
        strides[-1].append(round(mvn.log_prob(L.ones(4)).item(), 4))
    assert strides[1] == strides[0]


@pytest.mark.parametrize("case", ["nonsquare", "long", "half", "not_pd_batch", "vector"])
def test_legacy_cholesky_errors_name_cholesky_like_torch(case):
    """torch.cholesky's errors say "cholesky:", not linalg.cholesky's name; integer and half inputs are its
    kernel's dispatch error"""
    a = {"nonsquare": rand(2, 3), "long": np.ones((2, 2), dtype="int64"), "half": np.eye(2, dtype="float16"),
         "not_pd_batch": -np.stack([np.eye(2)] * 3), "vector": rand(3)}[case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        raises_like(lambda: ct.cholesky(ct.tensor(a)), lambda: torch.cholesky(torch.tensor(a)))
        raises_like(lambda: ct.tensor(a).cholesky(upper=True), lambda: torch.tensor(a).cholesky(upper=True))


def test_cdist_refuses_an_unknown_compute_mode_like_torch():
    a, b = rand(5, 2), rand(4, 2, seed=1)
    raises_like(lambda: ct.cdist(ct.tensor(a), ct.tensor(b), compute_mode="bad"),
                lambda: torch.cdist(torch.tensor(a), torch.tensor(b), compute_mode="bad"))
    raises_like(lambda: ct.cdist(ct.tensor(a[0]), ct.tensor(b), compute_mode="fast"),
                lambda: torch.cdist(torch.tensor(a[0]), torch.tensor(b), compute_mode="fast"))
    for mode in ("use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist"):
        np.testing.assert_allclose(ct.cdist(ct.tensor(a), ct.tensor(b), compute_mode=mode).numpy(),
                                   torch.cdist(torch.tensor(a), torch.tensor(b), compute_mode=mode).numpy(), 1e-9)
