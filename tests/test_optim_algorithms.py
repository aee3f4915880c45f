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


# ---- lr schedulers ----

def _sched_trace(lib, opt_name, make, steps=25):
    p = lib.zeros(2, requires_grad=True)
    kw = {"momentum": 0.9} if opt_name == "SGD" else {}
    opt = getattr(lib.optim, opt_name)([p], lr=0.1, **kw)
    sched = make(lib.optim.lr_scheduler, opt)
    out = []
    for _ in range(steps):
        opt.step()
        sched.step()
        g = opt.param_groups[0]
        out.append((sched.get_last_lr()[0], g.get("momentum"), g.get("betas")))
    return out


SCHEDS = {
    "polynomial": lambda S, o: S.PolynomialLR(o, total_iters=7, power=2.0),
    "cyclic_tri": lambda S, o: S.CyclicLR(o, 0.01, 0.1, step_size_up=4),
    "cyclic_tri2": lambda S, o: S.CyclicLR(o, 0.01, 0.1, step_size_up=3, step_size_down=5, mode="triangular2"),
    "cyclic_exp": lambda S, o: S.CyclicLR(o, [0.01], [0.1], step_size_up=3, mode="exp_range", gamma=0.9),
    "cyclic_fn": lambda S, o: S.CyclicLR(o, 0.01, 0.1, step_size_up=3, scale_fn=lambda x: 0.5 ** x,
                                          scale_mode="iterations", cycle_momentum=False),
    "chained": lambda S, o: S.ChainedScheduler([S.ConstantLR(o, factor=0.5, total_iters=4),
                                                S.ExponentialLR(o, gamma=0.9)]),
    "constant": lambda S, o: S.ConstantLR(o, factor=0.25, total_iters=3),
    "multiplicative": lambda S, o: S.MultiplicativeLR(o, lambda e: 0.95),
    "sequential": lambda S, o: S.SequentialLR(o, [S.LinearLR(o, start_factor=0.2, total_iters=4),
                                                  S.CosineAnnealingLR(o, T_max=10)], milestones=[5]),
    "warm_restarts": lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=4, T_mult=2, eta_min=0.001),
}


@pytest.mark.parametrize("opt_name", ["SGD", "Adam"])
@pytest.mark.parametrize("name", sorted(SCHEDS))
def test_scheduler_matches_torch(name, opt_name):
    mine = _sched_trace(ct, opt_name, SCHEDS[name])
    ref = _sched_trace(torch, opt_name, SCHEDS[name])
    for (a, am, ab), (b, bm, bb) in zip(mine, ref):
        assert a == pytest.approx(float(b), rel=1e-12, abs=1e-15)
        assert am == pytest.approx(bm) and (ab is None or ab == pytest.approx(bb))


def test_scheduler_state_dicts_and_errors():
    p = ct.zeros(1, requires_grad=True)
    opt = ct.optim.SGD([p], lr=0.1, momentum=0.9)
    S = ct.optim.lr_scheduler
    ch = S.ChainedScheduler([S.StepLR(opt, 2), S.ExponentialLR(opt, 0.5)])
    sd = ch.state_dict()
    assert len(sd["_schedulers"]) == 2 and "optimizer" not in sd
    ch.load_state_dict(sd)
    cy = S.CyclicLR(opt, 0.01, 0.1)
    cy.load_state_dict(cy.state_dict())
    for lib in (ct, torch):
        q = lib.zeros(1, requires_grad=True)
        with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
            lib.optim.lr_scheduler.CyclicLR(lib.optim.Adagrad([q]), 0.01, 0.1)
        with pytest.raises(ValueError, match="mode is invalid and scale_fn is None"):
            lib.optim.lr_scheduler.CyclicLR(lib.optim.SGD([q], lr=0.1), 0.01, 0.1, mode="bad")
        with pytest.raises(ValueError, match="expects at least one scheduler"):
            lib.optim.lr_scheduler.ChainedScheduler([])


STATE_SCHEDS = dict(SCHEDS, **{
    "step": lambda S, o: S.StepLR(o, 2, 0.5),
    "lambda": lambda S, o: S.LambdaLR(o, lambda e: 0.9 ** e),
    "onecycle": lambda S, o: S.OneCycleLR(o, max_lr=0.5, total_steps=30),
    "onecycle_linear": lambda S, o: S.OneCycleLR(o, max_lr=0.5, epochs=3, steps_per_epoch=10,
                                                 anneal_strategy="linear", three_phase=True),
    "plateau": lambda S, o: S.ReduceLROnPlateau(o, "max", patience=1, factor=0.5, min_lr=0.001),
})


def _plain(v):
    # what a state_dict value compares as across the libraries: nested states recursively, no callables
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items() if not callable(x)}
    if isinstance(v, list):
        return [_plain(x) for x in v]
    return v


@pytest.mark.parametrize("name", sorted(STATE_SCHEDS))
def test_scheduler_state_dict_is_torchs_and_loads_weights_only(name, tmp_path):
    """state_dict() has torch's keys in torch's order and values (lambdas saved as None, OneCycleLR's strategy as
    its name, wrapped schedulers as nested dicts), so a checkpoint holding it saves and loads with torch.load's
    default weights_only=True, into a fresh scheduler that then steps on as the original"""
    states = []
    for lib in (ct, torch):
        p = lib.zeros(2, requires_grad=True)
        opt = lib.optim.SGD([p], lr=0.1, momentum=0.9)
        sched = STATE_SCHEDS[name](lib.optim.lr_scheduler, opt)
        for i in range(5):
            opt.step()
            sched.step(*([float(i % 2)] if name == "plateau" else []))
        sd = sched.state_dict()
        states.append((list(sd), _plain(sd)))
        if lib is ct:
            path = str(tmp_path / "ckpt.pt")
            ct.save({"optimizer": opt.state_dict(), "scheduler": sd}, path)
            ck = ct.load(path)
            p2 = ct.zeros(2, requires_grad=True)
            opt2 = ct.optim.SGD([p2], lr=0.1, momentum=0.9)
            sched2 = STATE_SCHEDS[name](ct.optim.lr_scheduler, opt2)
            opt2.load_state_dict(ck["optimizer"])
            sched2.load_state_dict(ck["scheduler"])
            assert list(ck["scheduler"]) == list(sd)   # load_state_dict leaves the caller's dict whole
            for s_, o_ in ((sched, opt), (sched2, opt2)):
                o_.step()
                s_.step(*([1.0] if name == "plateau" else []))
            assert sched2.get_last_lr() == sched.get_last_lr()
    assert states[0] == states[1]


def test_scheduler_classes_and_checks_as_torch():
    """ReduceLROnPlateau is an LRScheduler; torch's errors for OneCycleLR's strategy, a negative restart epoch,
    SequentialLR's milestone count and a plateau scheduler inside SequentialLR"""
    for lib in (ct, torch):
        S = lib.optim.lr_scheduler
        opt = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=0.1, momentum=0.9)
        assert isinstance(S.ReduceLROnPlateau(opt), S.LRScheduler)
        with pytest.raises(ValueError, match="anneal_strategy must be one of 'cos' or 'linear', instead got cosine"):
            S.OneCycleLR(opt, max_lr=0.1, total_steps=10, anneal_strategy="cosine")
        with pytest.raises(ValueError, match="^Expected non-negative epoch, but got -1$"):
            S.CosineAnnealingWarmRestarts(opt, T_0=2).step(-1)
        with pytest.raises(ValueError, match="number of schedulers 2 and the number of milestones to be equal to 2"):
            S.SequentialLR(opt, [S.StepLR(opt, 2), S.StepLR(opt, 2)], milestones=[1, 2])
        with pytest.raises(ValueError, match="does not support `ReduceLROnPlateau` scheduler"):
            S.SequentialLR(opt, [S.StepLR(opt, 2), S.ReduceLROnPlateau(opt)], milestones=[1])
        with pytest.raises(ValueError, match="^threshold mode bad is unknown!$"):
            S.ReduceLROnPlateau(opt, threshold_mode="bad")


# ---- swa_utils ----

def _net(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.ReLU(), lib.nn.Linear(4, 2))


def _load_same(dst, src):
    with ct.no_grad():
        for (n, p) in dst.state_dict().items():
            p.copy_(ct.tensor(src.state_dict()[n].numpy()))


@pytest.mark.parametrize("kind", ["swa", "ema", "ema_multi", "buffers"])
def test_averaged_model_matches_torch(kind):
    nets = {"ct": _net(ct), "torch": _net(torch)}
    _load_same(nets["ct"], nets["torch"])
    avgs = {}
    for name, lib in (("ct", ct), ("torch", torch)):
        U = lib.optim.swa_utils
        kw = {"swa": {}, "ema": {"avg_fn": U.get_ema_avg_fn(0.9)},
              "ema_multi": {"multi_avg_fn": U.get_ema_multi_avg_fn(0.8)}, "buffers": {"use_buffers": True}}[kind]
        avgs[name] = U.AveragedModel(nets[name], **kw)
    x = np.random.RandomState(1).randn(5, 3)
    for step in range(4):
        for name, lib in (("ct", ct), ("torch", torch)):
            net = nets[name]
            with lib.no_grad():
                for p in net.parameters():
                    p.mul_(0.9).add_(0.05 * (step + 1))
            net(lib.tensor(x, dtype=lib.float32))   # moves the BatchNorm statistics
            avgs[name].update_parameters(net)
    sd, tsd = avgs["ct"].state_dict(), avgs["torch"].state_dict()
    assert list(sd) == list(tsd)
    for k in tsd:
        np.testing.assert_allclose(sd[k].numpy(), tsd[k].numpy(), rtol=1e-5, atol=1e-6)
    y = avgs["ct"](ct.tensor(x, dtype=ct.float32))
    np.testing.assert_allclose(y.detach().numpy(), avgs["torch"](torch.tensor(x, dtype=torch.float32)).detach().numpy(),
                               rtol=1e-5, atol=1e-5)


def test_update_bn_matches_torch():
    nets = {"ct": _net(ct), "torch": _net(torch)}
    _load_same(nets["ct"], nets["torch"])
    data = [np.random.RandomState(i).randn(6, 3) for i in range(3)]
    for name, lib in (("ct", ct), ("torch", torch)):
        nets[name].eval()
        lib.optim.swa_utils.update_bn([(lib.tensor(d, dtype=lib.float32), 0) for d in data], nets[name])
        assert not nets[name].training and nets[name][1].momentum == 0.1
    for k, v in nets["torch"].state_dict().items():
        np.testing.assert_allclose(nets["ct"].state_dict()[k].numpy(), v.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("strategy,epochs", [("cos", 3), ("linear", 4), ("cos", 0)])
def test_swalr_matches_torch(strategy, epochs):
    def make(S, o):
        from importlib import import_module
        U = import_module(S.__name__.rsplit(".", 1)[0] + ".swa_utils")
        return U.SWALR(o, swa_lr=0.02, anneal_epochs=epochs, anneal_strategy=strategy)
    mine = _sched_trace(ct, "SGD", make, steps=8)
    ref = _sched_trace(torch, "SGD", make, steps=8)
    for a, b in zip(mine, ref):
        assert a[0] == pytest.approx(b[0], rel=1e-12)
    for lib in (ct, torch):
        with pytest.raises(ValueError, match="anneal_strategy must be one of"):
            lib.optim.swa_utils.SWALR(lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=0.1), 0.01,
                                      anneal_strategy="x")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sgd_zero_gradient_blocks_match_torch_bitwise(dtype):
    """plain SGD skips blocks of g that are all +0.0 (an embedding's dense
    gradient): p must still equal torch's bit for bit, with -0.0 gradients
    (which turn a -0.0 parameter into +0.0), -0.0/inf/nan parameters, a block
    edge, and a negative lr set after construction (which must not skip)"""
    n = 70000   # past the threaded size, not a multiple of the block
    rs = np.random.RandomState(3)
    p0 = rs.randn(n)
    p0[:64] = -0.0
    p0[200:203] = [np.inf, -np.inf, np.nan]
    g = np.zeros(n)
    g[64 * 5 + 3] = 1.5
    g[64 * 9:64 * 10] = rs.randn(64)
    g[64 * 20] = -0.0                 # -0.0 alone in its block: p changes there (-0.0 + 0.0)
    p0[64 * 20] = -0.0
    g[n - 1] = 2.0
    for lr in (0.1, 0.0, -0.1, float("inf")):   # inf * 0 is nan: an inf lr must not skip
        res = []
        for lib in (ct, torch):
            w = lib.tensor(p0, dtype=getattr(lib, dtype), requires_grad=True)
            opt = lib.optim.SGD([w], lr=abs(lr))
            opt.param_groups[0]["lr"] = lr
            w.grad = lib.tensor(g, dtype=getattr(lib, dtype))
            opt.step()
            res.append(w.detach().numpy())
        assert res[0].tobytes() == res[1].tobytes(), lr
        if 0 <= lr < float("inf"):   # that block was not skipped: -0.0 + 0.0 is +0.0
            assert not np.signbit(res[0][64 * 20]) and np.signbit(p0[64 * 20])


def test_adam_decoupled_weight_decay_option():
    """torch 2.13's Adam(decoupled_weight_decay=True) is AdamW: the option is a param-group default, saved in
    state_dict, and read back from groups (AdamW's groups say True)"""
    import torch as T
    rs = np.random.RandomState(0)
    p0, g0 = rs.randn(5), rs.randn(5)
    res = []
    for m in (ct, T):
        p = m.tensor(p0, requires_grad=True)
        opt = m.optim.Adam([p], lr=0.1, weight_decay=0.5, decoupled_weight_decay=True)
        for _ in range(3):
            p.grad = m.tensor(g0)
            opt.step()
        res.append((p.detach().numpy().copy(), opt.defaults, opt.state_dict()["param_groups"][0]))
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-12)
    assert res[0][1] == res[1][1]
    assert res[0][2]["decoupled_weight_decay"] is True
    assert ct.optim.AdamW([ct.zeros(1, requires_grad=True)]).defaults["decoupled_weight_decay"] is True
    # a group saved without the option loads as plain Adam (AdamW: decoupled)
    for cls, want in ((ct.optim.Adam, False), (ct.optim.AdamW, True)):
        opt = cls([ct.zeros(1, requires_grad=True)])
        sd = opt.state_dict()
        del sd["param_groups"][0]["decoupled_weight_decay"]
        opt.load_state_dict(sd)
        assert opt.param_groups[0]["decoupled_weight_decay"] is want


def _four_steps_in_both(name, kw, dtype, shapes, seed):
    """optim.<name>(**kw) over parameters of these shapes, four steps of the same random gradients in cthtorch
    and torch: ([(parameters as numpy, state_dict)] for each, the initial values)"""
    import torch as T
    rs = np.random.RandomState(seed)
    init = [rs.randn(*s) for s in shapes]
    grads = [[rs.randn(*s) for s in shapes] for _ in range(4)]
    out = []
    for m in (ct, T):
        ps = [m.tensor(a, dtype=getattr(m, dtype), requires_grad=True) for a in init]
        opt = getattr(m.optim, name)(ps, **kw)
        for gs in grads:
            for p, gr in zip(ps, gs):
                p.grad = m.tensor(gr, dtype=getattr(m, dtype))
            opt.step()
        out.append(([p.detach().numpy().copy() for p in ps], opt.state_dict()))
    return out, init


@pytest.mark.parametrize("kw", [{}, dict(lr=0.1, weight_decay=0.1, maximize=True), dict(eps=(1e-6, 1e-2), d=2.0),
                                dict(beta2_decay=-0.5)])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_adafactor_matches_torch(kw, dtype):
    """matrices (factored second moment), a 3-d tensor (factored per leading index) and a vector (full moment)"""
    out, _ = _four_steps_in_both("Adafactor", kw, dtype, [(4, 3), (2, 3, 5), (6,)], seed=1)
    for a, b in zip(out[0][0], out[1][0]):
        np.testing.assert_allclose(a, b, rtol=1e-5 if dtype == "float32" else 1e-12, atol=1e-7)
    sc, st = out[0][1], out[1][1]
    assert sc["param_groups"] == st["param_groups"]
    for i in range(3):
        assert sorted(sc["state"][i]) == sorted(st["state"][i])
        for k, v in st["state"][i].items():
            assert tuple(sc["state"][i][k].shape) == tuple(v.shape) and str(sc["state"][i][k].dtype) == str(v.dtype)


def test_adafactor_errors():
    import torch as T
    for kw in (dict(lr=-1.0), dict(beta2_decay=0.5), dict(eps=(-1.0, 1e-3)), dict(eps=(None, -1.0)), dict(d=0.5),
               dict(weight_decay=-1.0)):
        oracle.raises_like(lambda: ct.optim.Adafactor([ct.zeros(2, requires_grad=True)], **kw),
                           lambda: T.optim.Adafactor([T.zeros(2, requires_grad=True)], **kw))


@pytest.mark.parametrize("kw", [{}, dict(nesterov=False, lr=0.02, adjust_lr_fn="match_rms_adamw"),
                                dict(weight_decay=0.0, momentum=0.5, ns_steps=3, adjust_lr_fn="original")])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_muon_matches_torch(kw, dtype):
    """square, wide and tall matrices (the tall one is orthogonalized transposed); the Newton-Schulz steps run in
    bfloat16, so a differently summed bf16 product may move an entry by an ulp of the update (lr * 2^-8)"""
    out, init = _four_steps_in_both("Muon", kw, dtype, [(4, 3), (3, 7), (16, 16)], seed=2)
    lr = kw.get("lr", 1e-3) * (0.2 * 4 if kw.get("adjust_lr_fn") == "match_rms_adamw" else 1.2)
    for a, b, a0 in zip(out[0][0], out[1][0], init):
        np.testing.assert_allclose(a, b, rtol=0, atol=lr * 2 ** -8)
        assert np.abs(a - a0).max() > 10 * lr * 2 ** -8   # the parameters did move
    sc, st = out[0][1], out[1][1]
    assert sc["param_groups"] == st["param_groups"]
    for i in range(3):
        np.testing.assert_allclose(sc["state"][i]["momentum_buffer"].numpy(), st["state"][i]["momentum_buffer"].numpy(),
                                   rtol=1e-6)


def test_muon_errors():
    import torch as T
    for kw in (dict(lr=-1.0), dict(momentum=-0.5), dict(weight_decay=-1.0), dict(adjust_lr_fn="other")):
        oracle.raises_like(lambda: ct.optim.Muon([ct.zeros(2, 2, requires_grad=True)], **kw),
                           lambda: T.optim.Muon([T.zeros(2, 2, requires_grad=True)], **kw))
    oracle.raises_like(lambda: ct.optim.Muon([ct.zeros(2, requires_grad=True)]),
                       lambda: T.optim.Muon([T.zeros(2, requires_grad=True)]))
    for m in (ct, T):
        p = m.zeros(2, 2, requires_grad=True)
        p.grad = m.ones(2, 2)
        opt = m.optim.Muon([p], ns_steps=100)
        with pytest.raises(ValueError, match="less than 100"):
            opt.step()


@pytest.mark.parametrize("name", ["LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR",
                                  "ExponentialLR", "CosineAnnealingLR", "CosineAnnealingWarmRestarts", "OneCycleLR",
                                  "CyclicLR", "PolynomialLR", "ReduceLROnPlateau"])
def test_scheduler_verbose_is_gone(name):
    """torch 2.13 removed the schedulers' deprecated verbose=: passing it is a TypeError naming it"""
    args = {"LambdaLR": (lambda e: 1.0,), "MultiplicativeLR": (lambda e: 1.0,), "StepLR": (2,), "MultiStepLR": ([2],),
            "ExponentialLR": (0.9,), "CosineAnnealingLR": (3,), "CosineAnnealingWarmRestarts": (3,),
            "OneCycleLR": (0.1, 10), "CyclicLR": (0.01, 0.1)}.get(name, ())

    def run(lib):
        opt = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=0.1, momentum=0.9)
        cls = getattr(lib.optim.lr_scheduler, name)
        cls(opt, *args)   # without it, it constructs
        with pytest.raises(TypeError) as e:
            cls(opt, *args, verbose=False)
        return str(e.value)
    assert run(ct) == run(torch) == "%s.__init__() got an unexpected keyword argument 'verbose'" % name


def _scheduler_warnings(L, script):
    import warnings
    p = [L.nn.Parameter(L.ones(2))]
    opt = L.optim.SGD(p, 0.1)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        script(L, opt, p)
    return [(str(x.message)[:60], x.filename == __file__) for x in w]


@pytest.mark.parametrize("script", [
    # pytorch-made: scheduler.step(epoch) before any optimizer.step()
    lambda L, opt, p: L.optim.lr_scheduler.StepLR(opt, 2).step(0),
    lambda L, opt, p: (opt.step(), L.optim.lr_scheduler.StepLR(opt, 2).step()),
    lambda L, opt, p: (L.optim.lr_scheduler.LambdaLR(opt, lambda e: 1.0), opt.step(), opt.step()),
    lambda L, opt, p: [s.step() for s in [L.optim.lr_scheduler.ExponentialLR(opt, 0.5)] for _ in range(2)],
    # an optimizer whose step was replaced after the scheduler wrapped it
    lambda L, opt, p: [s.step() for s in [L.optim.lr_scheduler.StepLR(opt, 2)] if setattr(opt, "step", len) is None],
    lambda L, opt, p: L.optim.lr_scheduler.ReduceLROnPlateau(opt).step(1.0, 3),
    # SequentialLR restarts the next scheduler at its milestone without the epoch warning
    lambda L, opt, p: [(opt.step(), s.step()) for s in [L.optim.lr_scheduler.SequentialLR(
        opt, [L.optim.lr_scheduler.ConstantLR(opt, 0.5, 2), L.optim.lr_scheduler.ExponentialLR(opt, 0.9)], [2])]
        for _ in range(4)],
    # a second scheduler does not wrap the step twice; both see the optimizer's step
    lambda L, opt, p: [(opt.step(), s.step()) for s in [L.optim.lr_scheduler.StepLR(opt, 2),
                                                          L.optim.lr_scheduler.StepLR(opt, 3)]],
])
def test_scheduler_step_order_and_epoch_warnings_as_torch(script):
    ours, theirs = _scheduler_warnings(ct, script), _scheduler_warnings(torch, script)
    assert ours == theirs


def test_scheduler_wrapped_step_still_steps_and_pickles():
    import pickle
    p = ct.nn.Parameter(ct.ones(2))
    opt = ct.optim.SGD([p], 0.5)
    ct.optim.lr_scheduler.StepLR(opt, 2)
    p.grad = ct.ones(2)
    opt.step()
    assert p.tolist() == [0.5, 0.5] and opt._opt_called and opt.step.__name__ == "step"
    assert pickle.loads(pickle.dumps(opt)).param_groups[0]["lr"] == 0.5


RESUMED = {
    "lambda": lambda S, o, e: S.LambdaLR(o, lambda ep: 0.9 ** ep, last_epoch=e),
    "multiplicative": lambda S, o, e: S.MultiplicativeLR(o, lambda ep: 0.9, last_epoch=e),
    "step": lambda S, o, e: S.StepLR(o, 2, 0.5, last_epoch=e),
    "constant": lambda S, o, e: S.ConstantLR(o, 0.5, 3, last_epoch=e),
    "linear": lambda S, o, e: S.LinearLR(o, 0.5, 1.0, 6, last_epoch=e),
    "exponential": lambda S, o, e: S.ExponentialLR(o, 0.9, last_epoch=e),
    "polynomial": lambda S, o, e: S.PolynomialLR(o, 8, 2.0, last_epoch=e),
    "cosine": lambda S, o, e: S.CosineAnnealingLR(o, 10, 0.01, last_epoch=e),
    "warm_restarts": lambda S, o, e: S.CosineAnnealingWarmRestarts(o, 3, 2, 0.01, last_epoch=e),
    "onecycle": lambda S, o, e: S.OneCycleLR(o, 0.1, total_steps=20, anneal_strategy="linear", last_epoch=e),
}


@pytest.mark.parametrize("name", sorted(RESUMED))
def test_a_resumed_scheduler_keeps_the_optimizers_lr_at_construction(name):
    """scheduler(opt, ..., last_epoch=k) when resuming: the constructor's step is the initial one (torch's
    _is_initial), so Multiplicative/Linear/Exponential/Polynomial/CosineAnnealing do not step the lr once
    more; state_dict keys are torch's (OneCycleLR keeps the strategy's name, which weights_only loads)"""
    def trace(lib):
        out = []
        for e in (-1, 3):
            p = lib.nn.Parameter(lib.zeros(1))
            o = lib.optim.SGD([{"params": [p], "lr": 0.1, "initial_lr": 0.1, "max_lr": 0.1, "min_lr": 0.01,
                                "max_momentum": 0.95, "base_momentum": 0.85}], lr=0.1, momentum=0.9)
            s = RESUMED[name](lib.optim.lr_scheduler, o, e)
            lrs = [o.param_groups[0]["lr"]]
            for _ in range(4):
                o.step()
                s.step()
                lrs.append(o.param_groups[0]["lr"])
            out.append((lrs, sorted(s.state_dict())))
        return out, s.state_dict()
    (ours, sd), (theirs, _) = trace(ct), trace(torch)
    for (a, ka), (b, kb) in zip(ours, theirs):
        assert a == pytest.approx(b, rel=1e-12, abs=1e-15)
        assert ka == kb
    import io
    buf = io.BytesIO()
    ct.save(sd, buf)
    buf.seek(0)
    assert sorted(ct.load(buf)) == sorted(sd)


def test_lambda_scheduler_state_saves_callable_objects_and_drops_functions():
    class Warmup:
        def __init__(self, n):
            self.n = n

        def __call__(self, e):
            return min(1.0, (e + 1) / self.n)
    for lib in (ct, torch):
        p = lib.nn.Parameter(lib.zeros(1))
        o = lib.optim.SGD([p, lib.nn.Parameter(lib.zeros(1))], lr=0.1)
        o.add_param_group({"params": [lib.nn.Parameter(lib.zeros(1))], "lr": 0.2})
        s = lib.optim.lr_scheduler.LambdaLR(o, [Warmup(4), lambda e: 0.5])
        sd = s.state_dict()
        assert sd["lr_lambdas"] == [{"n": 4}, None]
        sd["lr_lambdas"][0] = {"n": 8}
        s.load_state_dict(sd)
        assert s.lr_lambdas[0].n == 8 and sd["lr_lambdas"] == [{"n": 8}, None]


def _complex_steps(lib, opt_name, kwargs):
    """three steps on a complex parameter: torch steps its (real, imag) pairs, with state kept complex"""
    w = lib.tensor(np.array([[1 + 2j, -0.5 + 0.25j], [0.3 - 1j, 2j]], dtype=np.complex64), requires_grad=True)
    c = lib.tensor(np.array([[0.5 + 1j, 2 - 1j], [1j, 1]], dtype=np.complex64))
    opt = getattr(lib.optim, opt_name)([w], **kwargs)
    for _ in range(3):
        opt.zero_grad()
        ((w * c).abs().pow(2).sum() + w.real.sum()).backward()
        opt.step()
    st = opt.state[w]
    return w.detach().numpy(), {k: str(v.dtype) for k, v in st.items() if lib.is_tensor(v)}


@pytest.mark.parametrize("name,kwargs", [
    ("Adam", {}), ("Adam", {"amsgrad": True, "weight_decay": 0.1}), ("AdamW", {"maximize": True}),
    ("Adagrad", {}), ("Adagrad", {"initial_accumulator_value": 0.1}), ("RMSprop", {"centered": True, "momentum": 0.9}), ("Adadelta", {}), ("Adamax", {}),
    ("NAdam", {}), ("RAdam", {}), ("ASGD", {}), ("Rprop", {}), ("SGD", {"lr": 0.1, "momentum": 0.9})])
def test_complex_parameters_step_as_torchs(name, kwargs):
    ours, theirs = _complex_steps(ct, name, kwargs), _complex_steps(torch, name, kwargs)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-6, atol=1e-7)
    assert ours[1] == theirs[1]


@pytest.mark.parametrize("name", ["SGD", "AdamW", "RMSprop"])
def test_optimizer_repr_matches_torch(name):
    """print(optimizer) as torch: each group opens and ends with a newline, so groups stand a blank line apart"""
    texts = []
    for lib in (ct, torch):
        w, b = lib.zeros(2, requires_grad=True), lib.zeros(1, requires_grad=True)
        one = getattr(lib.optim, name)([w], lr=0.1)
        two = getattr(lib.optim, name)([{"params": [w]}, {"params": [b], "weight_decay": 0.0}], lr=0.1)
        texts.append((repr(one), str(two)))
    assert texts[0] == texts[1]


@pytest.mark.parametrize("make", [
    "m.optim.lr_scheduler.StepLR(o, 2, gamma=0.5)", "m.optim.lr_scheduler.MultiStepLR(o, [1, 3])",
    "m.optim.lr_scheduler.ExponentialLR(o, 0.9)", "m.optim.lr_scheduler.LambdaLR(o, lambda e: 0.9 ** e)",
    "m.optim.lr_scheduler.CosineAnnealingLR(o, 5)", "m.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, 2)",
    "m.optim.lr_scheduler.OneCycleLR(o, 1.0, total_steps=10)", "m.optim.lr_scheduler.CyclicLR(o, 0.01, 0.1)",
    "m.optim.lr_scheduler.PolynomialLR(o, 4)", "m.optim.lr_scheduler.LinearLR(o)",
    "m.optim.lr_scheduler.ConstantLR(o)", "m.optim.lr_scheduler.MultiplicativeLR(o, lambda e: 0.9)"])
def test_scheduler_get_lr_outside_step_warns_as_torch(make):
    """2019-era loops print scheduler.get_lr()[0]: torch returns it with a warning pointing at get_last_lr();
    the scheduler's own steps stay quiet"""
    import warnings
    got = []
    for m in (ct, torch):
        p = m.nn.Parameter(m.ones(2))
        o = m.optim.SGD([p], lr=0.1, momentum=0.9)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            s = eval(make)
            lrs = []
            for _ in range(3):
                o.step()
                s.step()
                lrs.append(s.get_lr()[0])
        got.append((lrs, s.get_last_lr(), [(x.category, str(x.message)) for x in w]))
    assert got[0][2] == got[1][2] and len(got[0][2]) == 3
    assert got[0][0] == pytest.approx(got[1][0]) and got[0][1] == pytest.approx(got[1][1])


def test_adam_stores_betas_as_a_tuple_as_torch():
    """Adam(betas=[0.5, 0.999]) (a list from an argparse nargs=2) keeps a tuple in defaults and param_groups"""
    got = []
    for m in (ct, torch):
        p = m.nn.Parameter(m.ones(2))
        o = m.optim.AdamW([p], betas=[0.5, 0.999])
        got.append((m.optim.Adam([p], betas=[0.5, 0.9]).defaults["betas"], o.param_groups[0]["betas"]))
    assert got[0] == got[1] and type(got[0][1]) is tuple
