"""Gradients through the scatter family (scatter_reduce, index_add/copy/fill,
masked_scatter, put) and their in-place forms, against PyTorch: values,
gradients of every input, and the grad_fn history an in-place op leaves."""
import numpy as np
import pytest

import cthtorch as ct
import oracle

torch = oracle.require_torch()

RS = np.random.RandomState(7)
X = RS.uniform(0.5, 1.5, size=(3, 4))
S = RS.uniform(0.5, 1.5, size=(3, 4))
S[1, 2] = S[0, 2] = X[0, 2]     # ties for amax/amin
IDX = [[0, 1, 0, 1], [2, 0, 0, 2], [1, 1, 2, 0]]


def _cases():
    c = {}
    for red in ("sum", "mean", "amax", "amin", "prod"):
        for inc in (True, False):
            c["scatter_reduce_%s_%s" % (red, inc)] = (
                lambda L, x, s, red=red, inc=inc: x.scatter_reduce(0, L.tensor(IDX), s, red, include_self=inc))
    c.update({
        "scatter_reduce_inplace": lambda L, x, s: (x * 1).scatter_reduce_(1, L.tensor(IDX), s, "amax"),
        "scatter_add_inplace_on_zeros": lambda L, x, s: L.zeros(3, 4, dtype=x.dtype).scatter_add_(0, L.tensor(IDX), s) * x,
        "scatter_inplace": lambda L, x, s: (x * 2).scatter_(1, L.tensor([[0], [3], [1]]), s[:, :1]),
        "index_add": lambda L, x, s: x.index_add(1, L.tensor([0, 3, 3]), s[:, :3], alpha=2.0),
        "index_add_inplace": lambda L, x, s: L.zeros(5, 4, dtype=x.dtype).index_add_(0, L.tensor([4, 0, 4]), s) * 3 + x.sum(),
        "index_copy": lambda L, x, s: x.index_copy(0, L.tensor([2, 0]), s[:2]),
        "index_copy_inplace": lambda L, x, s: (x + 0).index_copy_(1, L.tensor([1]), s[:, :1]),
        "index_fill": lambda L, x, s: x.index_fill(1, L.tensor([0, 2]), -1.0),
        "index_fill_tensor_inplace": lambda L, x, s: (x + 0).index_fill_(0, L.tensor([1]), s[0, 0]),
        "masked_fill_inplace": lambda L, x, s: (x * s).masked_fill_(x > 1.0, 0.0),
        "masked_scatter": lambda L, x, s: x.masked_scatter(x > 1.0, s * 3),
        "masked_scatter_inplace": lambda L, x, s: (x + 0).masked_scatter_(s > 1.0, x.flip(0)),
        "put": lambda L, x, s: x.put(L.tensor([0, 5, -1]), s[0, :3]),
        "put_accumulate_inplace": lambda L, x, s: (x + 0).put_(L.tensor([0, 5, 5]), s[0, :3], accumulate=True),
    })
    return c


CASES = _cases()


def _run(L, fn):
    x = L.tensor(X, requires_grad=True)
    s = L.tensor(S, requires_grad=True)
    y = fn(L, x, s)
    w = L.tensor(np.arange(1, y.numel() + 1, dtype=np.float64).reshape(tuple(y.shape)))
    (y * w).sum().backward()
    grads = [None if t.grad is None else t.grad.numpy() for t in (x, s)]
    return y.detach().numpy(), grads


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name):
    yc, gc = _run(ct, CASES[name])
    yt, gt = _run(torch, CASES[name])
    np.testing.assert_allclose(yc, yt, rtol=1e-12, atol=1e-12)
    for a, b in zip(gc, gt):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["scatter_reduce_amax_True", "scatter_reduce_prod_False", "scatter_reduce_mean_True",
                                  "index_add", "masked_scatter"])
def test_double_backward(name):
    x = ct.tensor(X, requires_grad=True)
    s = ct.tensor(S + np.arange(12).reshape(3, 4) * 0.01, requires_grad=True)   # no ties: amax is smooth there
    assert ct.autograd.gradgradcheck(lambda a, b: CASES[name](ct, a, b), [x, s])


def test_inplace_on_leaf_raises():
    x = ct.tensor(X, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        x.index_add_(0, ct.tensor([0]), ct.ones(1, 4, dtype=ct.float64))


def test_inplace_takes_the_result_history():
    x = ct.tensor(X, requires_grad=True)
    y = x * 1
    y.masked_fill_(y > 1.0, 0.0)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), (X <= 1.0).astype(np.float64))


# ---------------------------------------------------------------- prod with zeros
# slot 0 of column 0: a single src zero; column 1: two src zeros in one slot;
# column 2: a zero in self; column 3: no zero
XZ = X.copy()
XZ[0, 2] = 0.0
SZ = S.copy()
SZ[0, 0] = 0.0                      # IDX[0][0] = 0: alone in its slot
SZ[1, 1] = SZ[2, 1] = 0.0           # IDX[1][1] = IDX[2][1] = 0... slot 0 and 1 of column 1
SZ[0, 1] = 0.0                      # with IDX[0][1] = 1 shares slot 1 with SZ[2][1]


def _prod_cases():
    c = {}
    for inc in (True, False):
        c["scatter_reduce_prod_%s" % inc] = (
            lambda L, x, s, inc=inc: x.scatter_reduce(0, L.tensor(IDX), s, "prod", include_self=inc))
        c["index_reduce_prod_%s" % inc] = (
            lambda L, x, s, inc=inc: x.index_reduce(0, L.tensor([2, 0, 2]), s, "prod", include_self=inc))
        c["index_reduce_prod_dim1_%s" % inc] = (
            lambda L, x, s, inc=inc: x.index_reduce(1, L.tensor([1, 1, 3, 0]), s, "prod", include_self=inc))
    return c


PROD_CASES = _prod_cases()


def _run_zeros(L, fn, x, s):
    x = L.tensor(x, requires_grad=True)
    s = L.tensor(s, requires_grad=True)
    y = fn(L, x, s)
    w = L.tensor(np.arange(1, y.numel() + 1, dtype=np.float64).reshape(tuple(y.shape)))
    (y * w).sum().backward()
    return y.detach().numpy(), [x.grad.numpy(), s.grad.numpy()]


@pytest.mark.parametrize("name", sorted(PROD_CASES))
def test_prod_gradient_with_zeros(name):
    """the gradient of a product with zeros is the product of the other
    factors (torch's formula), for scatter_reduce and index_reduce"""
    for x, s in ((XZ, SZ), (XZ, S), (X, SZ)):
        yc, gc = _run_zeros(ct, PROD_CASES[name], x, s)
        yt, gt = _run_zeros(torch, PROD_CASES[name], x, s)
        np.testing.assert_allclose(yc, yt, rtol=1e-12, atol=1e-12)
        for a, b in zip(gc, gt):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", sorted(PROD_CASES))
def test_prod_gradcheck_with_zeros(name):
    """gradcheck at points with a zero in self and a lone zero in a src slot
    (where the product is differentiable as a function of every factor)"""
    s = S.copy()
    s[0, 0] = 0.0
    x = ct.tensor(XZ, requires_grad=True)
    sc = ct.tensor(s, requires_grad=True)
    assert ct.autograd.gradcheck(lambda a, b: PROD_CASES[name](ct, a, b), [x, sc])
