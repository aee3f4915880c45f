"""Embedding's weight gradient against torch: padding_idx, scale_grad_by_freq,
float32/float64/bfloat16, repeated indices, and sizes large enough for the
threaded row-partitioned accumulation."""
import numpy as np
import pytest

import cthtorch
from oracle import require_torch

torch = require_torch()


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("V,D,n", [(7, 3, 20), (5000, 64, 4096)])
@pytest.mark.parametrize("padding_idx", [None, 2])
@pytest.mark.parametrize("scale", [False, True])
def test_embedding_weight_grad_matches_torch(dtype, V, D, n, padding_idx, scale):
    rs = np.random.RandomState(V + n)
    w = rs.randn(V, D).astype(np.float32)
    idx = rs.randint(0, V, size=(n // 4, 4)).astype(np.int64)
    idx[0, :2] = 2            # repeats, and the padding row
    g = rs.randn(n // 4, 4, D).astype(np.float32)
    wt = torch.tensor(w, dtype=getattr(torch, dtype), requires_grad=True)
    wc = cthtorch.tensor(w, dtype=getattr(cthtorch, dtype), requires_grad=True)
    ot = torch.nn.functional.embedding(torch.tensor(idx), wt, padding_idx=padding_idx, scale_grad_by_freq=scale)
    oc = cthtorch.nn.functional.embedding(cthtorch.tensor(idx), wc, padding_idx=padding_idx,
                                          scale_grad_by_freq=scale)
    (ot * torch.tensor(g, dtype=ot.dtype)).sum().backward()
    (oc * cthtorch.tensor(g, dtype=oc.dtype)).sum().backward()
    assert wc.grad.dtype == wc.dtype
    tol = 2e-2 if dtype == "bfloat16" else 1e-5
    np.testing.assert_allclose(wc.grad.float().numpy(), wt.grad.float().numpy(), rtol=tol, atol=tol)
    if padding_idx is not None:
        assert not wc.grad[padding_idx].any().item()


def test_embedding_dense_backward_gradcheck():
    idx = cthtorch.tensor([[0, 2, 2], [1, 0, 4]])
    w = cthtorch.randn(5, 3, dtype=cthtorch.float64, requires_grad=True)
    # plain lookups only: padding_idx and scale_grad_by_freq change the
    # gradient away from the true Jacobian on purpose (as in torch)
    assert cthtorch.autograd.gradcheck(lambda w: cthtorch.embedding(w, idx), (w,))
    assert cthtorch.autograd.gradgradcheck(lambda w: cthtorch.embedding(w, idx), (w,))


def test_embedding_of_indices_at_the_dim_limit_raises():
    # the result has one dim more than the indices: at cthtorch's 25-dim limit that is a clean
    # error (its shape used to be written one past the end of a stack array), on meta as on the host
    idx = cthtorch.zeros([1] * 25, dtype=cthtorch.int64)
    for dev in ("cpu", "meta"):
        w = cthtorch.randn(3, 2).to(dev)
        with pytest.raises(RuntimeError, match="at most 25 dimensions, got 26"):
            cthtorch.nn.functional.embedding(idx.to(dev), w)
    ok = cthtorch.nn.functional.embedding(cthtorch.zeros([1] * 24, dtype=cthtorch.int64), cthtorch.randn(3, 2))
    assert ok.shape == (1,) * 24 + (2,)
