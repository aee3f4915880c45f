"""The fused one-pass updates (_C._sgd_step, _C._adam_step) against torch
from the same start and against the op-by-op path they fall back to
(non-contiguous parameters, float16, differentiable=True): every option,
both float types."""
import numpy as np
import pytest

import cthtorch as ct
import oracle

torch = oracle.require_torch()

RS = np.random.RandomState(3)
W0, B0 = RS.randn(5, 3), RS.randn(3)
X, Y = RS.randn(8, 5), RS.randn(8, 3)

OPTIONS = [
    {}, {"momentum": 0.9}, {"momentum": 0.9, "weight_decay": 1e-2}, {"momentum": 0.9, "nesterov": True},
    {"momentum": 0.5, "dampening": 0.3, "weight_decay": 0.1}, {"weight_decay": 0.1, "maximize": True},
    {"momentum": 0.9, "nesterov": True, "weight_decay": 1e-4, "maximize": True},
]


GRADS = [RS.randn(5, 3) for _ in range(6)]


def _run(lib, kwargs, dtype, transposed=False):
    """the same gradients each step, so the update rule alone is compared"""
    dt = getattr(lib, dtype)
    w = lib.tensor(W0.T.copy(), dtype=dt).t() if transposed else lib.tensor(W0, dtype=dt)
    w.requires_grad_(True)
    b = lib.tensor(B0, dtype=dt, requires_grad=True)
    opt = lib.optim.SGD([w, b], lr=0.05, **kwargs)
    for g in GRADS:
        opt.zero_grad()
        w.grad = lib.tensor(g, dtype=dt)
        b.grad = lib.tensor(g[0], dtype=dt)
        opt.step()
    bufs = [opt.state[p].get("momentum_buffer") for p in (w, b)]
    return [t.detach().float().numpy() for t in [w, b] + [q for q in bufs if q is not None]]


@pytest.mark.parametrize("kwargs", OPTIONS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("transposed", [False, True])
def test_sgd_is_torch_bit_for_bit(kwargs, dtype, transposed):
    mine, ref = _run(ct, kwargs, dtype, transposed), _run(torch, kwargs, dtype, transposed)
    assert len(mine) == len(ref)
    for a, b in zip(mine, ref):
        np.testing.assert_array_equal(a, b)


def test_sgd_float16_and_differentiable_take_the_unfused_path():
    mine, ref = _run(ct, {"momentum": 0.9}, "float16"), _run(torch, {"momentum": 0.9}, "float16")
    for a, b in zip(mine, ref):
        np.testing.assert_allclose(a, b, rtol=2e-3, atol=2e-3)
    mine, ref = _run(ct, {"momentum": 0.9, "differentiable": True}, "float32"), _run(torch, {"momentum": 0.9}, "float32")
    for a, b in zip(mine, ref):
        np.testing.assert_array_equal(a, b)


def test_sgd_fused_step_bumps_versions_and_keeps_state():
    w = ct.ones(4, requires_grad=True)
    opt = ct.optim.SGD([w], lr=0.1, momentum=0.9)
    w.grad = ct.full((4,), 2.0)
    v0 = w._version
    opt.step()
    buf = opt.state[w]["momentum_buffer"]
    assert w._version > v0 and buf.is_contiguous()
    np.testing.assert_array_equal(w.detach().numpy(), np.full(4, 0.8, np.float32))
    opt.step()   # buf = 0.9*2 + 2 = 3.8; w = 0.8 - 0.38
    np.testing.assert_allclose(buf.numpy(), np.full(4, 3.8), rtol=1e-6)
    np.testing.assert_allclose(w.detach().numpy(), np.full(4, 0.42), rtol=1e-6)
    sd = opt.state_dict()
    opt2 = ct.optim.SGD([w], lr=0.1, momentum=0.9)
    opt2.load_state_dict(sd)
    np.testing.assert_array_equal(opt2.state[w]["momentum_buffer"].numpy(), buf.numpy())


ADAM = [("Adam", {}), ("Adam", {"weight_decay": 0.1}), ("AdamW", {}), ("AdamW", {"weight_decay": 0.3, "amsgrad": True}),
        ("Adam", {"amsgrad": True, "maximize": True}), ("Adam", {"betas": (0.6, 0.9), "eps": 1e-3}),
        ("Adam", {"betas": (0.3, 0.99)})]   # 1 - beta1 > 0.5: lerp's other formula


def _run_adam(lib, name, kwargs, dtype, **extra):
    dt = getattr(lib, dtype)
    w = lib.tensor(W0, dtype=dt, requires_grad=True)
    opt = getattr(lib.optim, name)([w], lr=0.05, **kwargs, **extra)
    for g in GRADS:
        w.grad = lib.tensor(g, dtype=dt)
        opt.step()
    st = opt.state[w]
    return [w.detach().numpy()] + [st[k].numpy() for k in ("exp_avg", "exp_avg_sq", "max_exp_avg_sq") if k in st]


@pytest.mark.parametrize("name,kwargs", ADAM)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_adam_fused_matches_unfused_bit_for_bit_and_torch(name, kwargs, dtype):
    fused = _run_adam(ct, name, kwargs, dtype)
    unfused = _run_adam(ct, name, kwargs, dtype, differentiable=True)
    ref = _run_adam(torch, name, kwargs, dtype)
    assert len(fused) == len(unfused) == len(ref)
    for a, b in zip(fused, unfused):
        np.testing.assert_array_equal(a, b)
    # torch's CPU sqrt is not correctly rounded here (1 ulp off in about a
    # fifth of float32 values), so parameters agree to an ulp or two
    tol = 1e-6 if dtype == "float32" else 1e-14
    for a, b in zip(fused, ref):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
    if "weight_decay" not in kwargs:   # the moments see only the gradients: exact
        for a, b in zip(fused[1:3], ref[1:3]):
            np.testing.assert_array_equal(a, b)


def test_addcdiv_rounds_as_torch():
    rs = np.random.RandomState(1)
    for dt in ("float32", "float64"):
        a, b, c = rs.randn(999).astype(dt), rs.randn(999).astype(dt), (rs.rand(999) + 0.5).astype(dt)
        mine = ct.tensor(a).addcdiv_(ct.tensor(b), ct.tensor(c), value=-0.0123456789).numpy()
        ref = torch.tensor(a).addcdiv_(torch.tensor(b), torch.tensor(c), value=-0.0123456789).numpy()
        np.testing.assert_array_equal(mine, ref)


def _run_large(name, kwargs, dtype, threads, **extra):
    """a parameter past the fused kernels' threading threshold (65536), of a
    size that leaves a partial vector at each thread's end"""
    rs = np.random.RandomState(5)
    w0 = rs.randn(301, 257).astype(dtype)
    grads = [rs.randn(301, 257).astype(dtype) for _ in range(3)]
    old = ct.get_num_threads()
    ct.set_num_threads(threads)
    try:
        w = ct.tensor(w0, requires_grad=True)
        opt = getattr(ct.optim, name)([w], lr=0.05, **kwargs, **extra)
        for g in grads:
            w.grad = ct.tensor(g)
            opt.step()
    finally:
        ct.set_num_threads(old)
    st = opt.state[w]
    return [w.detach().numpy()] + [v.numpy() for k, v in sorted(st.items()) if k != "step"]


@pytest.mark.parametrize("name,kwargs", [("SGD", k) for k in OPTIONS] + ADAM)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fused_step_on_large_parameters_matches_unfused_at_any_thread_count(name, kwargs, dtype):
    one, two = _run_large(name, kwargs, dtype, 1), _run_large(name, kwargs, dtype, 2)
    unfused = _run_large(name, kwargs, dtype, 1, differentiable=True)
    assert len(one) == len(two) == len(unfused) > 0
    for a, b, c in zip(one, two, unfused):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)
