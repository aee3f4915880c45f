"""cthtorch.amp: autocast state and GradScaler, side by side with torch."""
import pickle
import warnings

import numpy as np
import pytest

import cthtorch as ct
import oracle

torch = oracle.require_torch()


def test_autocast_state_matches_torch():
    for lib in (ct, torch):
        assert not lib.is_autocast_enabled("cpu") and lib.get_autocast_dtype("cpu") == lib.bfloat16
        with lib.autocast("cpu", dtype=lib.float16):
            assert lib.is_autocast_enabled("cpu") and lib.get_autocast_dtype("cpu") == lib.float16
            with lib.autocast("cpu", enabled=False):
                assert not lib.is_autocast_enabled("cpu")
            assert lib.is_autocast_enabled("cpu")
        assert not lib.is_autocast_enabled("cpu") and lib.get_autocast_dtype("cpu") == lib.bfloat16
        with lib.amp.autocast(device_type="cpu"):
            assert lib.is_autocast_enabled("cpu")

        @lib.autocast("cpu")
        def f():
            return lib.is_autocast_enabled("cpu")
        assert f() and not lib.is_autocast_enabled("cpu")
        with pytest.warns(UserWarning, match="In CPU autocast, but the target dtype is not supported"):
            a = lib.autocast("cpu", dtype=lib.float64)
        with a:
            assert not lib.is_autocast_enabled("cpu")
        with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
            lib.autocast(0)


def test_autocast_cpu_region_trains():
    # no casting here: outputs keep float32 (documented), and backward works as usual
    lin = ct.nn.Linear(4, 2)
    with ct.autocast("cpu", dtype=ct.bfloat16):
        out = lin(ct.ones(3, 4))
    out.sum().backward()
    assert out.dtype == ct.float32 and lin.weight.grad is not None


def test_cuda_amp_aliases_warn_and_disable():
    with pytest.warns(FutureWarning, match=r"torch.cuda.amp.autocast\(args...\)` is deprecated"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            a = ct.cuda.amp.autocast()
    with a:
        assert not ct.is_autocast_enabled("cuda")
    from cthtorch.cuda.amp import GradScaler
    with pytest.warns(UserWarning, match="CUDA is not available.  Disabling"):
        with pytest.warns(FutureWarning):
            s = GradScaler()
    assert not s.is_enabled() and s.get_scale() == 1.0 and s.state_dict() == {}
    x = ct.ones(2, requires_grad=True)
    loss = (x * 3).sum()
    assert s.scale(loss) is loss
    opt = ct.optim.SGD([x], lr=0.1)
    loss.backward()
    s.step(opt)
    s.update()
    assert x.tolist() == pytest.approx([0.7, 0.7])


def _scaler_run(lib, inf_steps):
    w = lib.tensor(np.linspace(-1, 1, 6).reshape(2, 3), dtype=lib.float32, requires_grad=True)
    opt = lib.optim.SGD([w], lr=0.1, momentum=0.9)
    scaler = lib.amp.GradScaler("cpu", init_scale=2.0 ** 10, growth_interval=2)
    x = lib.tensor(np.arange(9.0).reshape(3, 3), dtype=lib.float32)
    trace = []
    for step in range(7):
        opt.zero_grad()
        loss = (w @ x).pow(2).mean()
        if step in inf_steps:
            loss = loss * float("inf")
        scaler.scale(loss).backward()
        if step == 3:
            scaler.unscale_(opt)   # e.g. for gradient clipping
            lib.nn.utils.clip_grad_norm_([w], 1.0)
        scaler.step(opt)
        scaler.update()
        trace.append((scaler.get_scale(), scaler._get_growth_tracker()))
    return w.detach().numpy(), trace, scaler.state_dict()


def test_grad_scaler_cpu_matches_torch():
    mw, mt, msd = _scaler_run(ct, {2, 5})
    tw, tt, tsd = _scaler_run(torch, {2, 5})
    assert mt == tt and msd == tsd
    np.testing.assert_allclose(mw, tw, rtol=1e-5, atol=1e-6)


def test_grad_scaler_errors_and_state():
    w = ct.ones(2, requires_grad=True)
    opt = ct.optim.SGD([w], lr=0.1)
    s = ct.amp.GradScaler("cpu")
    with pytest.raises(AssertionError, match="Attempted step but _scale is None"):
        s.step(opt)
    s.scale(w.sum()).backward()
    s.unscale_(opt)
    with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called"):
        s.unscale_(opt)
    s.step(opt)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called since the last update"):
        s.step(opt)
    s.update()
    s2 = pickle.loads(pickle.dumps(s))
    assert s2.get_scale() == s.get_scale() == 65536.0
    s3 = ct.amp.GradScaler("cpu")
    s3.load_state_dict({"scale": 8.0, "growth_factor": 3.0, "backoff_factor": 0.25, "growth_interval": 5,
                        "_growth_tracker": 1})
    assert s3.get_scale() == 8.0 and s3.get_growth_factor() == 3.0
    with pytest.raises(RuntimeError, match="The source state dict is empty"):
        s3.load_state_dict({})
    with pytest.raises(AssertionError, match="The growth factor must be > 1.0."):
        ct.amp.GradScaler("cpu", growth_factor=1.0)
