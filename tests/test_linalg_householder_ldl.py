"""torch.geqrf, linalg.householder_product (torch.orgqr), torch.ormqr and the LDL^T family
(linalg.ldl_factor / ldl_factor_ex / ldl_solve) against torch: values, dtypes, gradients, errors."""
import numpy as np
import pytest

import cthtorch as ct
import oracle
from oracle import raises_like, same

torch = oracle.require_torch()


def pair(*shape, dt="float64", seed=0, sym=False):
    a = np.random.RandomState(seed).randn(*shape).astype(dt)
    if sym:
        a = a + np.swapaxes(a, -1, -2)
    return ct.tensor(a), torch.tensor(a)


@pytest.mark.parametrize("shape", [(5, 3), (4, 4), (3, 5), (2, 6, 4), (0, 3), (3, 0)])
@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_geqrf(shape, dt):
    c, t = pair(*shape, dt=dt)
    same(ct.geqrf(c), torch.geqrf(t), 1e-4 if dt == "float32" else 1e-10)
    same(c.geqrf(), t.geqrf(), 1e-4 if dt == "float32" else 1e-10)


def test_geqrf_not_differentiable():
    c, t = pair(4, 3)
    c.requires_grad_(), t.requires_grad_()
    a, tau = ct.geqrf(c)
    assert a.requires_grad and a.grad_fn.name() == torch.geqrf(t)[0].grad_fn.name() == "GeqrfBackward0"
    raises_like(lambda: ct.geqrf(c)[0].sum().backward(), lambda: torch.geqrf(t)[0].sum().backward())


@pytest.mark.parametrize("shape,k", [((5, 3), 3), ((5, 3), 2), ((4, 4), 4), ((2, 6, 4), 3), ((3, 0), 0)])
def test_householder_product_and_grad(shape, k):
    c, t = pair(*shape)
    tc, tt = pair(*shape[:-2], k, seed=1)
    same(ct.linalg.householder_product(c, tc), torch.linalg.householder_product(t, tt), 1e-10)
    same(ct.orgqr(c, tc), torch.orgqr(t, tt), 1e-10)
    same(c.orgqr(tc), t.orgqr(tt), 1e-10)
    # the reflectors from geqrf give back linalg.qr's Q
    a, tau = ct.geqrf(c)
    same(ct.linalg.householder_product(a, tau), torch.linalg.qr(t)[0] if k == shape[-1] and shape[-1] else
         torch.linalg.householder_product(*torch.geqrf(t)), 1e-10)
    for x in (c, tc, t, tt):
        x.requires_grad_()
    assert ct.linalg.householder_product(c, tc).requires_grad
    if c.numel() == 0:   # torch leaves empty inputs' .grad None
        return
    w = np.random.RandomState(2).randn(*shape)
    (ct.linalg.householder_product(c, tc) * ct.tensor(w)).sum().backward()
    (torch.linalg.householder_product(t, tt) * torch.tensor(w)).sum().backward()
    same(c.grad, t.grad, 1e-9)
    same(tc.grad, tt.grad, 1e-9)


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_householder_product_lapack_path(dt):
    """without gradients the product is LAPACK's orgqr: float32, strided A and tau, a batch, k < n and k = 0
    equal torch's, and the recorded graph (inputs requiring grad) gives the same values"""
    c, t = pair(3, 7, 5, dt=dt)
    tc, tt = pair(3, 8, dt=dt, seed=1)
    tol = 1e-5 if dt == "float32" else 1e-12
    A, At = c.transpose(-1, -2)[..., :4], t.transpose(-1, -2)[..., :4]     # (3, 5, 4), not contiguous
    for k in (4, 2, 0):
        tau, taut = tc[:, ::2][:, :k], tt[:, ::2][:, :k]
        r = ct.linalg.householder_product(A, tau)
        same(r, torch.linalg.householder_product(At, taut), tol)
        g = ct.linalg.householder_product(A.detach().requires_grad_(), tau.detach().requires_grad_())
        same(g.detach(), torch.linalg.householder_product(At, taut), tol)
        with ct.no_grad():
            same(ct.linalg.householder_product(A.detach().requires_grad_(), tau), r, 0)


def test_householder_product_gradcheck():
    A = ct.tensor(np.random.RandomState(0).randn(2, 4, 3), requires_grad=True)
    tau = ct.tensor(np.random.RandomState(1).randn(2, 3), requires_grad=True)
    assert ct.autograd.gradcheck(ct.linalg.householder_product, (A, tau))


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("transpose", [True, False])
def test_ormqr(left, transpose):
    c, t = pair(5, 3)
    a, tau = ct.geqrf(c)
    ta, ttau = torch.geqrf(t)
    oc, ot = pair(*((5, 2) if left else (2, 5)), seed=3)
    same(ct.ormqr(a, tau, oc, left, transpose), torch.ormqr(ta, ttau, ot, left, transpose), 1e-10)
    same(a.ormqr(tau, oc, left=left, transpose=transpose), ta.ormqr(ttau, ot, left=left, transpose=transpose), 1e-10)
    oc.requires_grad_(), ot.requires_grad_()
    ct.ormqr(a, tau, oc, left, transpose).pow(2).sum().backward()
    torch.ormqr(ta, ttau, ot, left, transpose).pow(2).sum().backward()
    same(oc.grad, ot.grad, 1e-9)


def test_householder_errors():
    cases = [((3, 4), (2,)), ((4, 3), (4,)), ((4,), (4,)), ((4, 3), (2, 2)), ((2, 4, 3), (3, 2))]
    for sa, st in cases:
        c, t = pair(*sa)
        tc, tt = pair(*st, seed=1)
        raises_like(lambda: ct.linalg.householder_product(c, tc), lambda: torch.linalg.householder_product(t, tt))
    c, t = pair(4, 3)
    raises_like(lambda: ct.linalg.householder_product(c, ct.zeros(2)),
                lambda: torch.linalg.householder_product(t, torch.zeros(2)))
    raises_like(lambda: ct.linalg.householder_product(c.int(), ct.zeros(2).int()),
                lambda: torch.linalg.householder_product(t.int(), torch.zeros(2).int()))
    c, t = pair(5, 3)
    for so, tau in (((4, 2), 3), ((5, 2), 4), ((5, 2), 2)):
        oc, ot = pair(*so, seed=3)
        raises_like(lambda: ct.ormqr(c, ct.zeros(tau, dtype=ct.float64), oc),
                    lambda: torch.ormqr(t, torch.zeros(tau, dtype=torch.float64), ot))
    raises_like(lambda: ct.geqrf(ct.zeros(5)), lambda: torch.geqrf(torch.zeros(5)))
    raises_like(lambda: ct.geqrf(ct.zeros(5, 3).int()), lambda: torch.geqrf(torch.zeros(5, 3).int()))
    raises_like(lambda: ct.geqrf(ct.zeros(5, 3).half()), lambda: torch.geqrf(torch.zeros(5, 3).half()))


@pytest.mark.parametrize("shape", [(4, 4), (2, 5, 5), (1, 1), (0, 0), (3, 0, 0)])
@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_ldl_factor_and_solve(shape, dt):
    c, t = pair(*shape, dt=dt, sym=True)
    tol = 1e-4 if dt == "float32" else 1e-10
    same(ct.linalg.ldl_factor(c), torch.linalg.ldl_factor(t), tol)
    same(ct.linalg.ldl_factor_ex(c), torch.linalg.ldl_factor_ex(t), tol)
    same(ct.linalg.ldl_factor(c, hermitian=True), torch.linalg.ldl_factor(t, hermitian=True), tol)
    LD, piv = ct.linalg.ldl_factor(c)
    tLD, tpiv = torch.linalg.ldl_factor(t)
    bc, bt = pair(*shape[:-1], 2, dt=dt, seed=4)
    same(ct.linalg.ldl_solve(LD, piv, bc), torch.linalg.ldl_solve(tLD, tpiv, bt), tol * 10)
    same(ct.linalg.ldl_solve(LD, piv.long(), bc, hermitian=True), torch.linalg.ldl_solve(tLD, tpiv.long(), bt), tol * 10)


def test_ldl_two_by_two_pivots_and_broadcast():
    a = [[0.0, 1.0, 2.0], [1.0, 0.0, 3.0], [2.0, 3.0, 0.0]]   # zero diagonal: sytrf takes 2x2 blocks
    c, t = ct.tensor(a, dtype=ct.float64), torch.tensor(a, dtype=torch.float64)
    same(ct.linalg.ldl_factor_ex(c), torch.linalg.ldl_factor_ex(t), 1e-12)
    LD, piv = ct.linalg.ldl_factor(c)
    tLD, tpiv = torch.linalg.ldl_factor(t)
    bc, bt = pair(2, 3, 2, seed=5)   # B's batch broadcasts over LD's
    same(ct.linalg.ldl_solve(LD, piv, bc), torch.linalg.ldl_solve(tLD, tpiv, bt), 1e-12)
    same(ct.linalg.ldl_solve(LD, piv, bc), torch.linalg.solve(t, bt), 1e-12)


def test_ldl_factor_complex_not_implemented():
    """complex inputs pass torch's dtype check (it factors them); here they name the missing kernel"""
    for dt in (ct.complex64, ct.complex128):
        with pytest.raises(NotImplementedError, match="ldl_factor_kernel_cpu.*Complex"):
            ct.linalg.ldl_factor(ct.eye(3, dtype=dt))
    raises_like(lambda: ct.linalg.ldl_factor(ct.eye(3, dtype=ct.int64)),
                lambda: torch.linalg.ldl_factor(torch.eye(3, dtype=torch.int64)))


def test_ldl_singular_and_errors():
    same(ct.linalg.ldl_factor_ex(ct.zeros(3, 3)), torch.linalg.ldl_factor_ex(torch.zeros(3, 3)))
    with pytest.raises(RuntimeError, match="ldl_factor"):
        ct.linalg.ldl_factor(ct.zeros(2, 3, 3))
    with pytest.raises(RuntimeError, match="ldl_factor_ex"):
        ct.linalg.ldl_factor_ex(ct.zeros(3, 3), check_errors=True)
    for bad in (lambda m: m.linalg.ldl_factor(m.zeros(3, 3, dtype=m.int64)),
                lambda m: m.linalg.ldl_factor(m.zeros(2, 3)),
                lambda m: m.linalg.ldl_factor(m.zeros(3, 3).half()),
                lambda m: m.linalg.ldl_solve(m.eye(3), m.ones(3, dtype=m.int32), m.zeros(3)),
                lambda m: m.linalg.ldl_solve(m.eye(3), m.ones(3), m.zeros(3, 1)),
                lambda m: m.linalg.ldl_solve(m.eye(3), m.ones(2, dtype=m.int32), m.zeros(3, 1)),
                lambda m: m.linalg.ldl_solve(m.eye(3), m.ones(3, dtype=m.int32), m.zeros(3, 1, dtype=m.float64)),
                lambda m: m.linalg.ldl_solve(m.eye(3), m.ones(3, dtype=m.int32), m.zeros(4, 2)),
                # a zero pivot: torch's own text for |pivot| < 1
                lambda m: m.linalg.ldl_solve(m.eye(3), m.tensor([1, 0, 3], dtype=m.int32), m.zeros(3, 1))):
        raises_like(lambda: bad(ct), lambda: bad(torch))
    with pytest.raises(RuntimeError, match="pivots must be between"):   # would index B out of bounds
        ct.linalg.ldl_solve(ct.eye(3), ct.full((3,), 7, dtype=ct.int32), ct.zeros(3, 1))


def test_ldl_not_differentiable():
    c, t = pair(3, 3, sym=True)
    c.requires_grad_(), t.requires_grad_()
    LD = ct.linalg.ldl_factor(c).LD
    assert LD.requires_grad and LD.grad_fn.name() == torch.linalg.ldl_factor(t).LD.grad_fn.name()
    raises_like(lambda: ct.linalg.ldl_factor(c).LD.sum().backward(),
                lambda: torch.linalg.ldl_factor(t).LD.sum().backward())
