"""The weight= argument of F.mse_loss, F.l1_loss and F.huber_loss against torch: values, gradients, reductions,
errors (torch 2.13 weights these three elementwise); the weights of the binary cross entropies, which torch
cannot differentiate."""
import numpy as np
import pytest

import cthtorch as ct
import oracle
from oracle import raises_like, same

torch = oracle.require_torch()


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "huber_loss"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_weighted_losses(name, reduction):
    rs = np.random.RandomState(0)
    x, y, w = rs.randn(4, 5), rs.randn(4, 5) * 2, rs.rand(4, 5)
    xc, xt = ct.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    rc = getattr(ct.nn.functional, name)(xc, ct.tensor(y), reduction=reduction, weight=ct.tensor(w))
    rt = getattr(torch.nn.functional, name)(xt, torch.tensor(y), reduction=reduction, weight=torch.tensor(w))
    same(rc, rt, 1e-12)
    rc.sum().backward()
    rt.sum().backward()
    same(xc.grad, xt.grad, 1e-12)


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "huber_loss"])
def test_weighted_loss_errors(name):
    def call(m, reduction="mean", wshape=(3,)):
        x = m.ones(2, 3, dtype=m.float64)
        return getattr(m.nn.functional, name)(x, x, reduction=reduction, weight=m.ones(*wshape, dtype=m.float64))
    raises_like(lambda: call(ct), lambda: call(torch))
    raises_like(lambda: call(ct, "avg", (2, 3)), lambda: call(torch, "avg", (2, 3)))


def test_broadcast_target_warning_points_at_the_caller():
    """mse, l1, smooth_l1 and huber warn of a target that broadcasts, at the line that called them, as torch"""
    import warnings
    for name in ("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"):
        seen = []
        for lib in (ct, torch):
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                getattr(lib.nn.functional, name)(lib.ones(2, 1), lib.ones(2))
            seen.append([(str(x.message), x.filename) for x in w])
        assert seen[0] == seen[1] and len(seen[0]) == 1 and seen[0][0][1] == __file__, (name, seen)


BCE_CALLS = [
    lambda L, x, y, w: L.nn.functional.binary_cross_entropy(x.sigmoid(), y, weight=w),
    lambda L, x, y, w: L.nn.functional.binary_cross_entropy(x.sigmoid(), y, weight=w, reduction="none"),
    lambda L, x, y, w: L.nn.BCELoss(weight=w, reduction="sum")(x.sigmoid(), y),
    lambda L, x, y, w: L.nn.functional.binary_cross_entropy(x.sigmoid(), y, weight=w[:1]),
    lambda L, x, y, w: L.nn.functional.binary_cross_entropy_with_logits(x, y, weight=w),
    lambda L, x, y, w: L.nn.functional.binary_cross_entropy_with_logits(x, y, pos_weight=w),
    lambda L, x, y, w: L.nn.BCEWithLogitsLoss(weight=w.detach(), pos_weight=w)(x, y),
    lambda L, x, y, w: L.binary_cross_entropy_with_logits(x, y, w, None, 1),
    lambda L, x, y, w: L.binary_cross_entropy_with_logits(x, y, None, w, 0),
]


@pytest.mark.parametrize("k", range(len(BCE_CALLS)))
@pytest.mark.parametrize("x_grad", [True, False])
def test_bce_weight_requiring_grad_is_torchs_error(k, x_grad):
    """torch has no derivative for BCE's weight nor pos_weight: with grad mode on, one that requires grad
    is its RuntimeError (whether or not the input does); under no_grad the loss is computed, as torch's,
    and detached weights give torch's values and input gradients"""
    rs = np.random.RandomState(k)
    x, y, w = rs.randn(3, 4), (rs.rand(3, 4) > 0.5).astype(np.float64), rs.rand(4) + 0.5

    def make(L):
        return (L.tensor(x, requires_grad=x_grad), L.tensor(y), L.tensor(w, requires_grad=True))

    raises_like(lambda: BCE_CALLS[k](ct, *make(ct)), lambda: BCE_CALLS[k](torch, *make(torch)))
    with ct.no_grad(), torch.no_grad():
        same(BCE_CALLS[k](ct, *make(ct)), BCE_CALLS[k](torch, *make(torch)), 1e-12)
    (xc, yc, wc), (xt, yt, wt) = make(ct), make(torch)
    rc, rt = BCE_CALLS[k](ct, xc, yc, wc.detach()), BCE_CALLS[k](torch, xt, yt, wt.detach())
    same(rc, rt, 1e-12)
    if x_grad:
        rc.sum().backward()
        rt.sum().backward()
        same(xc.grad, xt.grad, 1e-12)


@pytest.mark.parametrize("wshape", [(1, 4), (2,), (3, 1), (1, 3, 4)])
def test_bce_weight_broadcast_like_torch(wshape):
    """BCE's weight broadcasts to the target's shape, and a weight that would grow the loss's shape is
    torch's error"""
    def call(L):
        x = L.full((3, 4), 0.3, dtype=L.float64)
        return L.nn.functional.binary_cross_entropy(x, x * 2, weight=L.ones(wshape, dtype=L.float64))
    if wshape in ((1, 4), (3, 1)):
        same(call(ct), call(torch), 1e-12)
    else:
        raises_like(lambda: call(ct), lambda: call(torch))
