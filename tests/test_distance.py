"""pdist in C (src/ATen/ATDistance.c, declarations/distance.yaml) vs torch:
values and gradients for p = 0, 1, 2, inf and general p, dtypes, sizes,
gradcheck, the missing double backward (as torch) and errors."""
import numpy as np
import pytest

import cthtorch as ct
import oracle

torch = oracle.require_torch()
RS = np.random.RandomState(0)
PS = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, float("inf")]


@pytest.mark.parametrize("p", PS)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_pdist_values_and_grads(p, dtype):
    x = RS.randn(9, 5)
    x[3] = x[1]            # a zero distance: torch's zero subgradient
    x[4, 2] = x[0, 2]      # a zero coordinate difference
    cx = ct.tensor(x).to(getattr(ct, dtype)).requires_grad_()
    tx = torch.tensor(x).to(getattr(torch, dtype)).requires_grad_()
    cy, ty = ct.pdist(cx, p), torch.pdist(tx, p)
    tol = 1e-12 if dtype == "float64" else 2e-5
    oracle.same(cy, ty, tol)
    assert type(cy.grad_fn).__name__ == type(ty.grad_fn).__name__ == "PdistBackward0"
    g = RS.randn(*ty.shape)
    cy.backward(ct.tensor(g).to(cy.dtype))
    ty.backward(torch.tensor(g).to(ty.dtype))
    oracle.same(cx.grad, tx.grad, tol)
    oracle.same(ct.nn.functional.pdist(cx.detach(), p), torch.nn.functional.pdist(tx.detach(), p), tol)


def test_pdist_sizes_noncontiguous_gradcheck():
    for shape in ((1, 3), (0, 3), (3, 0), (2, 1)):
        oracle.same(ct.pdist(ct.zeros(*shape)), torch.pdist(torch.zeros(*shape)), 0)
    x = RS.randn(4, 6)
    oracle.same(ct.pdist(ct.tensor(x).t(), 1.5), torch.pdist(torch.tensor(x).t(), 1.5), 1e-12)
    a = ct.tensor(RS.randn(5, 3), requires_grad=True)
    for p in (1.0, 2.0, 2.5, 0.7, float("inf")):
        assert ct.autograd.gradcheck(lambda v: ct.pdist(v, p), (a,))
    big = RS.randn(300, 20)     # the threaded paths
    cb, tb = ct.tensor(big, requires_grad=True), torch.tensor(big, requires_grad=True)
    oracle.same(ct.pdist(cb), torch.pdist(tb), 1e-12)
    ct.pdist(cb, 3).sum().backward(), torch.pdist(tb, 3).sum().backward()
    oracle.same(cb.grad, tb.grad, 1e-10)


def test_pdist_double_backward_and_errors():
    for L in (ct, torch):
        a = L.tensor(RS.randn(3, 2), requires_grad=True)
        g, = L.autograd.grad(L.pdist(a).sum(), a, create_graph=True)
        with pytest.raises(NotImplementedError) as e:
            g.sum().backward()
        assert str(e.value) == "the derivative for '_pdist_backward' is not implemented."
    for call in (lambda L: L.pdist(L.zeros(2, 2, 2)), lambda L: L.pdist(L.zeros(3, 2), -1),
                 lambda L: L.pdist(L.zeros(3, 2, dtype=L.int64)), lambda L: L.pdist(L.zeros(3, 2, dtype=L.float16)),
                 lambda L: L.pdist(L.zeros(3, 2, dtype=L.bfloat16))):
        oracle.raises_like(lambda: call(ct), lambda: call(torch))
