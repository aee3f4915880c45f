"""Adaptive 3-d pooling in C (src/ATen/ATPool.c, declarations/pool.yaml) vs
torch: values, indices, dtypes, sizes, gradients (gradcheck and
gradgradcheck in float64), grad_fn names and errors."""
import numpy as np
import pytest

import cthtorch as ct
import oracle

torch = oracle.require_torch()
F, TF = ct.nn.functional, torch.nn.functional
RS = np.random.RandomState(0)
TOL = {"float64": 1e-12, "float32": 1e-5, "float16": 2e-3, "bfloat16": 2e-2}


def both(x, dtype="float64"):
    return ct.tensor(x).to(getattr(ct, dtype)), torch.tensor(x).to(getattr(torch, dtype))


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16"])
@pytest.mark.parametrize("size", [2, (3, 4, 5), (None, 2, 1), (5, 7, 6), (7, 9, 8), (1, 1, 1), (3, 1, 1)])
def test_adaptive_pool3d_values(size, dtype):
    c, t = both(RS.randn(2, 3, 5, 7, 6), dtype)
    oracle.same(F.adaptive_avg_pool3d(c, size), TF.adaptive_avg_pool3d(t, size), TOL[dtype])
    (cv, ci), (tv, ti) = F.adaptive_max_pool3d(c, size, True), TF.adaptive_max_pool3d(t, size, True)
    oracle.same(cv, tv, 0)
    assert ci.dtype == ct.int64
    np.testing.assert_array_equal(ci.numpy(), ti.numpy())


def test_adaptive_pool3d_unbatched_noncontiguous_nan():
    x = RS.randn(3, 6, 5, 4)
    c, t = both(x)
    c, t = c.transpose(1, 3), t.transpose(1, 3)
    oracle.same(F.adaptive_avg_pool3d(c, (2, 3, 2)), TF.adaptive_avg_pool3d(t, (2, 3, 2)), 1e-12)
    oracle.same(F.adaptive_max_pool3d(c, 2, True), TF.adaptive_max_pool3d(t, 2, True), 0)
    x[0, 1, 2, 0] = np.nan
    c, t = both(x)
    oracle.same(F.adaptive_max_pool3d(c, 2, True), TF.adaptive_max_pool3d(t, 2, True), 0)
    oracle.same(ct.nn.AdaptiveMaxPool3d((1, 2, 3))(c), torch.nn.AdaptiveMaxPool3d((1, 2, 3))(t), 0)
    oracle.same(F.adaptive_avg_pool3d(both(RS.randn(0, 2, 3, 3, 3))[0], 2),
                TF.adaptive_avg_pool3d(both(RS.randn(0, 2, 3, 3, 3))[1], 2), 0)


def test_adaptive_pool3d_gradients():
    x = ct.tensor(RS.randn(2, 2, 5, 4, 3), requires_grad=True)
    avg = lambda v: F.adaptive_avg_pool3d(v, (2, 3, 2))       # noqa: E731
    mx = lambda v: F.adaptive_max_pool3d(v, (3, 2, 2))        # noqa: E731
    for f in (avg, mx):
        assert ct.autograd.gradcheck(f, (x,))
        assert ct.autograd.gradgradcheck(f, (x,))
    tx = torch.tensor(x.tolist(), dtype=torch.float64, requires_grad=True)
    for cf, tf in ((avg, lambda v: TF.adaptive_avg_pool3d(v, (2, 3, 2))), (mx, lambda v: TF.adaptive_max_pool3d(v, (3, 2, 2)))):
        g = RS.randn(*cf(x).shape)
        cg, = ct.autograd.grad(cf(x), x, ct.tensor(g))
        tg, = torch.autograd.grad(tf(tx), tx, torch.tensor(g))
        oracle.same(cg, tg, 1e-12)
        assert type(cf(x).grad_fn).__name__ == type(tf(tx).grad_fn).__name__


@pytest.mark.parametrize("call", [
    lambda L, x: L.nn.functional.adaptive_avg_pool3d(x(2, 3), 2),
    lambda L, x: L.nn.functional.adaptive_max_pool3d(x(2, 3), 2),
    lambda L, x: L.nn.functional.adaptive_avg_pool3d(x(1, 2, 2, 3, 4), (2, 2)),
    lambda L, x: L.nn.functional.adaptive_max_pool3d(x(1, 2, 2, 3, 4), (2, 2)),
    lambda L, x: L.nn.functional.adaptive_avg_pool3d(x(1, 0, 2, 3, 4), 2),
    lambda L, x: L.nn.functional.adaptive_max_pool3d(x(1, 0, 2, 3, 4), 2),
    lambda L, x: L.nn.functional.adaptive_avg_pool3d(x(1, 2, 2, 3, 4), (2, -1, 2)),
    lambda L, x: L.nn.functional.adaptive_max_pool3d(x(1, 2, 2, 3, 4), (2, -1, 2)),
    lambda L, x: L.nn.functional.adaptive_avg_pool3d(x(1, 2, 2, 3, 4).long(), 2),
    lambda L, x: L.nn.functional.adaptive_max_pool3d(x(1, 2, 2, 3, 4).long(), 2),
])
def test_adaptive_pool3d_errors(call):
    oracle.raises_like(lambda: call(ct, ct.zeros), lambda: call(torch, torch.zeros))
