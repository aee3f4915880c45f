"""torch.svd_lowrank / torch.pca_lowrank against torch: with the same seed the
Gaussian block is torch's, so the singular values agree; the factors
reconstruct the matrix (up to the columns' signs, which QR/SVD leave free)."""
import numpy as np
import pytest

import cthtorch as ct
import oracle

torch = oracle.require_torch()
RS = np.random.RandomState(0)
# rank 4 plus a little noise: a rank-6 sketch captures it
LOWRANK = RS.randn(30, 4) @ RS.randn(4, 20) + 1e-3 * RS.randn(30, 20)


def _np(t):
    return np.asarray(t.tolist(), dtype=float)


@pytest.mark.parametrize("shape_t", [False, True], ids=["tall", "wide"])
@pytest.mark.parametrize("niter", [0, 2])
def test_svd_lowrank_matches_torch(shape_t, niter):
    A = LOWRANK.T.copy() if shape_t else LOWRANK
    outs = []
    for L in (ct, torch):
        L.manual_seed(0)
        outs.append(L.svd_lowrank(L.tensor(A), q=6, niter=niter))
    (U, S, V), (tU, tS, tV) = outs
    assert tuple(U.shape) == tuple(tU.shape) and tuple(S.shape) == tuple(tS.shape) and tuple(V.shape) == tuple(tV.shape)
    np.testing.assert_allclose(_np(S), _np(tS), rtol=1e-8, atol=1e-10)
    # the leading 4 triplets carry the matrix
    np.testing.assert_allclose(_np(U[:, :4]) * _np(S[:4]) @ _np(V[:, :4]).T, A, atol=1e-2)
    np.testing.assert_allclose(_np(U.mT @ U), np.eye(6), atol=1e-10)


def test_svd_lowrank_with_M_and_batches():
    A = RS.randn(3, 12, 8)
    M = RS.randn(1, 8)
    outs = []
    for L in (ct, torch):
        L.manual_seed(1)
        outs.append(L.svd_lowrank(L.tensor(A), q=3, M=L.tensor(M)))
    np.testing.assert_allclose(_np(outs[0][1]), _np(outs[1][1]), rtol=1e-8)


def test_pca_lowrank_matches_torch():
    outs = []
    for L in (ct, torch):
        L.manual_seed(2)
        outs.append(L.pca_lowrank(L.tensor(LOWRANK, dtype=L.float32)))
    assert outs[0][1].dtype == ct.float32
    np.testing.assert_allclose(_np(outs[0][1]), _np(outs[1][1]), rtol=1e-4)
    for f in (lambda L: L.pca_lowrank(L.zeros(4, 3), q=5), lambda L: L.pca_lowrank(L.zeros(4, 3), niter=-1),
              lambda L: L.pca_lowrank([[1.0]])):
        oracle.raises_like(lambda: f(ct), lambda: f(torch))
