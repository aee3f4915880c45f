"""NAdam, RAdam, ASGD, Rprop, Adamax, SparseAdam, swa_utils and the extra lr
schedulers, run side by side with torch from the same start."""
import numpy as np
import pytest

import cthtorch as ct
import oracle

torch = oracle.require_torch()

RS = np.random.RandomState(0)
W0, B0 = RS.randn(4, 3), RS.randn(3)
X, Y = RS.randn(8, 4), RS.randn(8, 3)


def _run(lib, opt_name, kwargs, steps, dtype, groups=False):
    dt = getattr(lib, dtype)
    w = lib.tensor(W0, dtype=dt, requires_grad=True)
    b = lib.tensor(B0, dtype=dt, requires_grad=True)
    x, y = lib.tensor(X, dtype=dt), lib.tensor(Y, dtype=dt)
    params = [{"params": [w]}, {"params": [b], "lr": 0.03}] if groups else [w, b]
    opt = getattr(lib.optim, opt_name)(params, **kwargs)
    for _ in range(steps):
        opt.zero_grad()
        loss = (((x @ w + b).tanh() - y) ** 2).mean()
        loss.backward()
        opt.step()
    return [w.detach().numpy(), b.detach().numpy()], opt


CASES = [
    ("NAdam", {}), ("NAdam", {"weight_decay": 0.1}), ("NAdam", {"weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("NAdam", {"lr": 0.05, "momentum_decay": 0.01, "maximize": True}),
    ("RAdam", {}), ("RAdam", {"lr": 0.05, "weight_decay": 0.1}),
    ("RAdam", {"weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("ASGD", {}), ("ASGD", {"lr": 0.1, "t0": 3, "lambd": 0.01, "weight_decay": 0.05}),
    ("Rprop", {}), ("Rprop", {"lr": 0.05, "etas": (0.3, 1.5), "step_sizes": (1e-3, 0.2), "maximize": True}),
    ("Adamax", {}), ("Adamax", {"lr": 0.05, "weight_decay": 0.1}),
]


@pytest.mark.parametrize("name,kwargs", CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_optimizer_matches_torch(name, kwargs, dtype):
    mine, _ = _run(ct, name, kwargs, 12, dtype)
    ref, _ = _run(torch, name, kwargs, 12, dtype)
    tol = 1e-5 if dtype == "float32" else 1e-10
    for a, b in zip(mine, ref):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", ["NAdam", "RAdam", "ASGD", "Rprop"])
def test_state_dict_round_trip_and_groups(name):
    kw = {"t0": 1} if name == "ASGD" else {}   # t0=1: averaging starts at once
    mine, opt = _run(ct, name, kw, 3, "float32", groups=True)
    ref, topt = _run(torch, name, kw, 3, "float32", groups=True)
    for a, b in zip(mine, ref):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    sd, tsd = opt.state_dict(), topt.state_dict()
    assert sorted(sd["param_groups"][0]) == sorted(tsd["param_groups"][0])
    assert sorted(sd["state"][0]) == sorted(tsd["state"][0])
    for i in (0, 1):
        for k, v in tsd["state"][i].items():   # every state tensor (ASGD's ax, Rprop's step_size ...) matches
            assert str(sd["state"][i][k].dtype) == str(v.dtype)
            np.testing.assert_allclose(sd["state"][i][k].numpy(), v.numpy(), rtol=1e-5, atol=1e-6)
    # resuming from the state dict continues exactly
    w = ct.tensor(mine[0], requires_grad=True)
    b = ct.tensor(mine[1], requires_grad=True)
    opt2 = getattr(ct.optim, name)([{"params": [w]}, {"params": [b], "lr": 0.03}], **kw)
    opt2.load_state_dict(sd)
    assert opt2.state_dict()["param_groups"] == sd["param_groups"]


def test_constructor_errors_match_torch():
    for lib in (ct, torch):
        p = [lib.zeros(2, requires_grad=True)]
        for name, kw, msg in [("NAdam", {"momentum_decay": -1}, "Invalid momentum_decay value: -1"),
                              ("RAdam", {"betas": (1.0, 0.9)}, "Invalid beta parameter at index 0: 1.0"),
                              ("ASGD", {"lr": -1}, "Invalid learning rate: -1"),
                              ("Rprop", {"etas": (1.5, 1.2)}, "Invalid eta values: 1.5, 1.2"),
                              ("SparseAdam", {"eps": -1}, "Invalid epsilon value: -1")]:
            with pytest.raises(ValueError, match=msg.replace("(", r"\(").replace(".", r"\.")):
                getattr(lib.optim, name)(p, **kw)


def test_sparse_adam_dense_grad_error_matches_torch():
    errs = []
    for lib in (ct, torch):
        p = lib.zeros(2, requires_grad=True)
        opt = lib.optim.SparseAdam([p])
        p.sum().backward()
        with pytest.raises(RuntimeError) as e:
            opt.step()
        errs.append(str(e.value))
    assert errs[0] == errs[1]
