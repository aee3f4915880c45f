"""LBFGS against torch: several step() calls (the history, max_eval per call
and the first-step scaling carry across calls), on a small least-squares fit."""
import numpy as np

import cthtorch
from oracle import require_torch


def fit(T, steps, **kw):
    rs = np.random.RandomState(0)
    X, y = rs.randn(40, 5), rs.randn(40)
    w = T.zeros(5, dtype=T.float64, requires_grad=True)
    b = T.zeros(1, dtype=T.float64, requires_grad=True)
    Xt, yt = T.tensor(X), T.tensor(y)
    opt = T.optim.LBFGS([w, b], **kw)
    losses = []

    def closure():
        opt.zero_grad()
        loss = ((Xt @ w + b - yt) ** 2).mean() + 0.1 * (w ** 4).sum()
        loss.backward()
        return loss
    for _ in range(steps):
        losses.append(opt.step(closure).item())
    return losses, w.detach().numpy().copy(), opt.state[w]["func_evals"], opt.state[w]["n_iter"]


def test_lbfgs_matches_torch_over_several_steps():
    torch = require_torch()
    for kw in ({"lr": 0.5}, {"lr": 1, "max_iter": 4}, {"lr": 0.8, "history_size": 3, "max_eval": 6},
               {"lr": 1, "line_search_fn": "strong_wolfe"},
               {"lr": 1, "max_iter": 5, "history_size": 2, "line_search_fn": "strong_wolfe"}):
        ours = fit(cthtorch, 4, **kw)
        theirs = fit(torch, 4, **kw)
        np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-9)
        np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-8, atol=1e-12)
        assert ours[2:] == theirs[2:]


def _complex_fit(T, line_search_fn):
    """a complex parameter beside a real one: L-BFGS searches the (real, imag) pairs, as torch"""
    w = T.tensor(np.array([1 + 2j, -0.5 + 0.25j, 0.3 - 1j], dtype=np.complex128), requires_grad=True)
    b = T.tensor([0.5, -1.0], dtype=T.float64, requires_grad=True)
    target = T.tensor(np.array([2j, 1, -1j]))
    opt = T.optim.LBFGS([w, b], lr=0.5, max_iter=6, history_size=3, line_search_fn=line_search_fn)

    def closure():
        opt.zero_grad()
        loss = (w - target).abs().pow(2).sum() + 0.1 * (w.abs() ** 4).sum() + (b ** 2 - 1).pow(2).sum()
        loss.backward()
        return loss
    loss = opt.step(closure).item()
    return loss, w.detach().numpy(), b.detach().numpy(), sorted(opt.state[w]), len(opt.state[w]["al"])


def test_lbfgs_steps_complex_parameters_as_torch():
    torch = require_torch()
    for ls in (None, "strong_wolfe"):
        ours, theirs = _complex_fit(cthtorch, ls), _complex_fit(torch, ls)
        assert ours[0] == theirs[0]
        np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-9)
        np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-9)
        assert ours[3:] == theirs[3:]


def test_lbfgs_step_does_not_warn_about_the_closures_loss():
    """torch converts the closure's loss (which needs grad) to a float under no_grad: no UserWarning"""
    import warnings
    w = cthtorch.tensor([1.0, 2.0], requires_grad=True)
    opt = cthtorch.optim.LBFGS([w], max_iter=3, line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = (w ** 2).sum()
        loss.backward()
        return loss
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt.step(closure)
