"""torch.masked's reductions and normalizations with mask= against torch: values, dtypes, shapes (the mask
broadcast, fully masked-out slices, keepdim, dim tuples, dtype=), gradients, and errors."""
import math

import numpy as np
import pytest

import cthtorch as ct
import oracle

torch = oracle.require_torch()

RS = np.random.RandomState(0)
X = RS.randn(3, 4, 5)
M = RS.rand(3, 4, 5) > 0.5
M[1] = False            # a fully masked-out block
MASKS = {"full": lambda L: L.tensor(M), "broadcast": lambda L: L.tensor(M[0, 0]), "none": lambda L: None}


def _close(a, b):
    assert str(a.dtype) == str(b.dtype) and tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(a.detach().numpy().astype(float), b.detach().numpy().astype(float), rtol=1e-6,
                               atol=1e-6, equal_nan=True)


def _both(f):
    """f under both libraries: the same values, or the same error type (kernel names in messages differ)"""
    out = []
    for L in (ct, torch):
        try:
            out.append(f(L))
        except Exception as e:   # noqa: BLE001 - compared below
            out.append(e)
    a, b = out
    if isinstance(b, Exception):
        assert type(a).__name__ == type(b).__name__, (a, b)
    else:
        assert not isinstance(a, Exception), a
        _close(a, b)


def _x(L, dt):
    return L.tensor(X * (1 if dt.startswith("float") else 5)).to(getattr(L, dt))


@pytest.mark.parametrize("dt", ["float32", "float64", "int32", "int64"])
@pytest.mark.parametrize("mask", list(MASKS))
@pytest.mark.parametrize("dim,keepdim", [(None, False), (1, False), ((0, 2), True), (-1, True), ((), False)])
def test_reductions(dt, mask, dim, keepdim):
    mk = MASKS[mask]
    for name in ("sum", "prod", "amax", "amin", "mean", "var", "std", "logsumexp"):
        _both(lambda L: getattr(L.masked, name)(_x(L, dt), dim, keepdim=keepdim, mask=mk(L)))
    _both(lambda L: L.masked.norm(_x(L, dt), 2.0, dim, keepdim=keepdim, mask=mk(L)))
    _both(lambda L: L.masked.sum(_x(L, dt), dim, keepdim=keepdim, dtype=L.float64, mask=mk(L)))
    _both(lambda L: L.masked.std(_x(L, dt), dim, unbiased=False, keepdim=keepdim, mask=mk(L)))
    _both(lambda L: L.masked.var(_x(L, dt), dim, correction=0, keepdim=keepdim, mask=mk(L)))


@pytest.mark.parametrize("dt", ["float32", "float64", "int64"])
@pytest.mark.parametrize("mask", list(MASKS))
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_dim_ops_and_normalizations(dt, mask, dim):
    mk = MASKS[mask]
    for name in ("argmax", "argmin", "median"):
        for kd in (False, True):
            _both(lambda L: getattr(L.masked, name)(_x(L, dt), dim, keepdim=kd, mask=mk(L)))
    for name in ("cumsum", "cumprod", "softmax", "log_softmax", "softmin"):
        _both(lambda L: getattr(L.masked, name)(_x(L, dt), dim, mask=mk(L)))
    for ord in (2.0, 1.0):
        _both(lambda L: L.masked.normalize(_x(L, dt), ord, dim, mask=mk(L)))
    _both(lambda L: L.masked.norm(_x(L, dt).double(), -math.inf, dim, mask=mk(L)))
    _both(lambda L: L.masked.logaddexp(_x(L, dt).double(), _x(L, dt).double() * 2, input_mask=mk(L),
                                       other_mask=L.tensor(M[2])))


def test_gradients():
    def run(L):
        x, m, w = L.tensor(X, requires_grad=True), L.tensor(M), L.tensor(X)
        grads = []
        for loss in (lambda: (L.masked.softmax(x, 1, mask=m).nan_to_num() * w).sum(),
                     lambda: L.masked.mean(x, 2, mask=m).nan_to_num().sum(),
                     lambda: L.masked.std(x, 1, mask=m).nan_to_num().sum(),
                     lambda: L.masked.amax(x, 0, mask=m).clamp(min=-9).sum(),
                     lambda: L.masked.norm(x, 2.0, (0, 2), mask=m).sum()):
            x.grad = None
            loss().backward()
            grads.append(x.grad.clone())
        return L.stack(grads)
    _both(run)
    assert run(ct).nan_to_num().abs().sum().item() > 0   # (NaN where a slice is all masked out, as in torch)


@pytest.mark.parametrize("f", [
    lambda L: L.masked.sum(L.ones(2, 3), (1, 1)),
    lambda L: L.masked.sum(L.ones(2, 3), 3),
    lambda L: L.masked.amax(L.ones(2, 3), -3),
    lambda L: L.masked.sum(L.ones(2, 3), mask=L.ones(1, 2, 3, dtype=L.bool)),
    lambda L: L.masked.mean(L.ones(2, 3, dtype=L.int64)),
    lambda L: L.masked.median(L.ones(2, 3, dtype=L.int64), 1, mask=L.tensor([[True] * 3, [False] * 3])),
    lambda L: L.masked.var(L.ones(2, 3), 1, unbiased=True, correction=1),
])
def test_errors_match_torch(f):
    oracle.raises_like(lambda: f(ct), lambda: f(torch))


def test_masked_tensor_is_not_implemented():
    for f in (lambda: ct.masked.masked_tensor(ct.ones(2), ct.ones(2, dtype=ct.bool)),
              lambda: ct.masked.as_masked_tensor(ct.ones(2), ct.ones(2, dtype=ct.bool)),
              lambda: ct.masked.MaskedTensor(ct.ones(2), ct.ones(2, dtype=ct.bool))):
        with pytest.raises(NotImplementedError, match="MaskedTensor"):
            f()
    assert not ct.masked.is_masked_tensor(ct.ones(2))
    with pytest.raises(NotImplementedError, match="strided"):
        ct.masked.sum(ct.ones(2, 2).to_sparse(), mask=ct.ones(2, 2, dtype=ct.bool))
