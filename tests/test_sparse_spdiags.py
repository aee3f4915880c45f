"""torch.sparse.spdiags against torch: entries and their order, layouts (COO, CSR, CSC), rectangular shapes, offsets past the
edges, a single diagonal, gradients through the values, and the errors."""
import pytest

import cthtorch as ct
import oracle

torch = oracle.require_torch()
pytestmark = pytest.mark.filterwarnings("ignore:Sparse CSR tensor support is in beta state")

# offsets inside the shape: torch makes entries outside it (or fails) for offsets past an edge
CASES = [([0, -1, 2], (3, 3)), ([0, -1, 1], (4, 5)), ([1, -2], (5, 3)), ([-1, 1], (4, 4))]


def _diags(L, n, dtype=None):
    return L.arange(1.0, 1.0 + n * 4, dtype=dtype).reshape(n, 4)


@pytest.mark.parametrize("offs,shape", CASES)
def test_spdiags_coo_and_csr(offs, shape):
    c = ct.sparse.spdiags(_diags(ct, len(offs)), ct.tensor(offs), shape)
    t = torch.sparse.spdiags(_diags(torch, len(offs)), torch.tensor(offs), shape)
    oracle.same(c._indices(), t._indices())
    oracle.same(c._values(), t._values())
    assert c.is_coalesced() == t.is_coalesced() and tuple(c.shape) == tuple(t.shape)
    oracle.same(c.to_dense(), t.to_dense())
    c = ct.sparse.spdiags(_diags(ct, len(offs), ct.float64), ct.tensor(offs), shape, layout=ct.sparse_csr)
    t = torch.sparse.spdiags(_diags(torch, len(offs), torch.float64), torch.tensor(offs), shape,
                             layout=torch.sparse_csr)
    for name in ("crow_indices", "col_indices", "values"):
        oracle.same(getattr(c, name)(), getattr(t, name)())
    c = ct.sparse.spdiags(_diags(ct, len(offs)), ct.tensor(offs), shape, layout=ct.sparse_csc)
    t = torch.sparse.spdiags(_diags(torch, len(offs)), torch.tensor(offs), shape, layout=torch.sparse_csc)
    for name in ("ccol_indices", "row_indices", "values"):
        oracle.same(getattr(c, name)(), getattr(t, name)())


def test_spdiags_single_diagonal_and_gradient():
    oracle.same(ct.sparse.spdiags(ct.arange(1.0, 4.0), ct.tensor(1), (3, 3)).to_dense(),
                torch.sparse.spdiags(torch.arange(1.0, 4.0), torch.tensor(1), (3, 3)).to_dense())
    # torch has no derivative for spdiags; ours flows to the diagonals: d[r, j] lands at (j - offset_r, j)
    d = ct.arange(1.0, 10.0).reshape(3, 3).requires_grad_()
    w = ct.arange(9.0).reshape(3, 3)
    (ct.sparse.spdiags(d, ct.tensor([0, 1, -1]), (3, 3)).to_dense() * w).sum().backward()
    assert d.grad.tolist() == [[0.0, 4.0, 8.0], [0.0, 1.0, 5.0], [3.0, 7.0, 0.0]]


def test_spdiags_errors():
    for f in (lambda L: L.sparse.spdiags(_diags(L, 3), L.tensor([0, 0, 1]), (3, 3)),
              lambda L: L.sparse.spdiags(_diags(L, 3), L.tensor([0, 1]), (3, 3)),
              lambda L: L.sparse.spdiags(_diags(L, 3), L.tensor([0.0, 1, 2]), (3, 3)),
              lambda L: L.sparse.spdiags(_diags(L, 3), L.tensor([0, 1, 2]), (3, 3, 3)),
              lambda L: L.sparse.spdiags(_diags(L, 3), L.tensor([0, 1, 2]), (3, 3), layout=L.strided)):
        oracle.raises_like(lambda: f(ct), lambda: f(torch))
