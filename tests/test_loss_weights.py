"""The weight= argument of F.mse_loss, F.l1_loss and F.huber_loss against torch: values, gradients, reductions,
errors (torch 2.13 weights these three elementwise)."""
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
