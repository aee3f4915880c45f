"""Sparse CSC tensors against torch: to_sparse_csc from dense/COO/CSR, sparse_csc_tensor, ccol_indices/row_indices/
values, printing, to_dense/to_sparse/to_sparse_csr, t() between CSR and CSC, products with dense matrices,
scalar arithmetic, gradients through the values, and the layout errors."""
import pickle

import numpy as np
import pytest

import cthtorch as ct
import oracle

torch = oracle.require_torch()
pytestmark = pytest.mark.filterwarnings("ignore:Sparse CSR tensor support is in beta state")

D = [[0.0, 2.0, 0.0], [3.0, 0.0, 4.0], [0.0, 5.0, 0.0], [6.0, 0.0, 0.0]]


def _parts(s):
    return s.ccol_indices(), s.row_indices(), s.values()


MAKERS = [lambda L: L.tensor(D).to_sparse_csc(), lambda L: L.tensor(D).to_sparse().to_sparse_csc(),
          lambda L: L.tensor(D).to_sparse_csr().to_sparse_csc(), lambda L: L.tensor(D).t().to_sparse_csr().t(),
          lambda L: L.sparse_csc_tensor(L.tensor([0, 2, 4, 5]), L.tensor([1, 3, 0, 2, 1]),
                                        L.tensor([3.0, 6.0, 2.0, 5.0, 4.0]), (4, 3)),
          lambda L: L.sparse_csc_tensor(L.tensor([0, 2, 3], dtype=L.int32), L.tensor([0, 1, 1], dtype=L.int32),
                                        L.tensor([1.0, 2.0, 3.0], dtype=L.float64)),
          lambda L: L.sparse_csc_tensor(L.tensor([0, 1, 1]), L.tensor([0]), L.tensor([2.0]), (2, 2)),
          lambda L: L.sparse_csc_tensor(L.tensor([0, 0, 0]), L.tensor([], dtype=L.int64), L.tensor([]), (2, 2))]


@pytest.mark.parametrize("k", range(len(MAKERS)))
def test_construct_and_read(k):
    c, t = MAKERS[k](ct), MAKERS[k](torch)
    assert c.layout == ct.sparse_csc and (c.is_sparse, c.is_sparse_csr) == (t.is_sparse, t.is_sparse_csr)
    oracle.same(_parts(c), _parts(t))
    assert repr(c) == repr(t)
    oracle.same(c.to_dense(), t.to_dense())
    oracle.same(c.to_sparse().to_dense(), t.to_sparse().to_dense())
    r_c, r_t = c.to_sparse_csr(), t.to_sparse_csr()
    oracle.same((r_c.crow_indices(), r_c.col_indices(), r_c.values()),
                (r_t.crow_indices(), r_t.col_indices(), r_t.values()))
    tt_c, tt_t = c.t(), t.t()
    assert repr(tt_c) == repr(tt_t)
    oracle.same(pickle.loads(pickle.dumps(c)).to_dense(), t.to_dense())


def test_products_and_arithmetic():
    c, t = MAKERS[0](ct), MAKERS[0](torch)
    w = np.arange(6.0, dtype=np.float32).reshape(3, 2)
    oracle.same(ct.mm(c, ct.tensor(w)), torch.mm(t, torch.tensor(w)))
    oracle.same(c @ ct.tensor(w), t @ torch.tensor(w))
    for f in (lambda x: x * 2, lambda x: x + x, lambda x: x.abs(), lambda x: -x):
        y_c, y_t = f(c), f(t)
        assert repr(y_c) == repr(y_t)
    oracle.same(c.sum(), t.sum())


def test_gradient_through_values():
    grads = []
    for L in (ct, torch):
        v = L.tensor([3.0, 6.0, 2.0, 5.0, 4.0], requires_grad=True)
        s = L.sparse_csc_tensor(L.tensor([0, 2, 4, 5]), L.tensor([1, 3, 0, 2, 1]), v, (4, 3))
        L.mm(s, L.arange(6.0).reshape(3, 2)).pow(2).sum().backward()
        grads.append(v.grad)
    oracle.same(*grads)


def test_layout_errors():
    c, t = MAKERS[0](ct), MAKERS[0](torch)
    for f in (lambda x: x.crow_indices(), lambda x: x.col_indices(), lambda x: x.indices()):
        oracle.raises_like(lambda: f(c), lambda: f(t))
    for f in (lambda L: L.ones(2, 2).ccol_indices(), lambda L: L.ones(2, 2).row_indices()):
        oracle.raises_like(lambda: f(ct), lambda: f(torch))
    for f in (lambda L: L.sparse_csc_tensor([1, 1, 1], [0], [1.0], (1, 2), check_invariants=True),
              lambda L: L.sparse_csc_tensor([0, 1, 1], [3], [1.0], (1, 2), check_invariants=True),
              lambda L: L.sparse_csc_tensor([0, 2, 1], [0, 0], [1.0, 2.0], (1, 2), check_invariants=True)):
        oracle.raises_like(lambda: f(ct), lambda: f(torch))


def test_save_load_in_torchs_format(tmp_path):
    c = ct.sparse_csc_tensor(ct.tensor([0, 1, 3]), ct.tensor([1, 0, 2]), [2.0, 1.0, 3.0], (3, 2))
    ct.save(c, tmp_path / "a.pt")
    for back in (ct.load(tmp_path / "a.pt"), torch.load(tmp_path / "a.pt")):
        assert repr(back) == repr(c)
    torch.save(torch.load(tmp_path / "a.pt"), tmp_path / "b.pt")
    assert repr(ct.load(tmp_path / "b.pt")) == repr(c)
