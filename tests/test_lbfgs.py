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
