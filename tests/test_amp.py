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


def _autocast_cases(L, low_inputs):
    """name -> a call; with low_inputs the float tensors start in bfloat16 (the float32 list casts them up)."""
    F = L.nn.functional
    r = np.random.RandomState(0)

    def T(*shape):
        t = L.tensor(r.rand(*shape).astype("float32"))
        return t.bfloat16() if low_inputs else t
    a, b, v, w3 = T(3, 4), T(4, 5), T(4), T(3)
    x3, x4, x5 = T(1, 2, 5), T(1, 2, 5, 5), T(1, 2, 4, 4, 4)
    B1, B2 = T(2, 3, 4), T(2, 4, 5)
    tgt = L.tensor([0, 1, 2])
    return {
        # torch's lower-precision list, and what it is made of here
        "mm": lambda: a.mm(b), "matmul": lambda: a @ b, "matmul_mv": lambda: a @ v, "matmul_1d": lambda: v @ v,
        "bmm": lambda: B1.bmm(B2), "addmm": lambda: L.addmm(T(3, 5), a, b),
        "baddbmm": lambda: L.baddbmm(T(2, 3, 5), B1, B2), "addbmm": lambda: L.addbmm(T(3, 5), B1, B2),
        "linear": lambda: F.linear(a, T(5, 4), T(5)), "linear_3d": lambda: F.linear(B1, T(5, 4), T(5)),
        "conv1d": lambda: F.conv1d(x3, T(3, 2, 3)), "conv2d": lambda: F.conv2d(x4, T(3, 2, 3, 3), T(3)),
        "conv3d": lambda: F.conv3d(x5, T(2, 2, 2, 2, 2)), "conv_transpose1d": lambda: F.conv_transpose1d(x3, T(2, 2, 2)),
        "conv_transpose2d": lambda: F.conv_transpose2d(x4, T(2, 3, 3, 3)),
        "einsum": lambda: L.einsum("ij,jk->ik", a, b), "tensordot": lambda: L.tensordot(a, b, 1),
        "prelu": lambda: F.prelu(a, T(1)), "vecdot": lambda: L.linalg.vecdot(a, a),
        "sdpa": lambda: F.scaled_dot_product_attention(B1, B1, B1),
        "Linear": lambda: L.nn.Linear(4, 5)(a.float()), "Conv2d": lambda: L.nn.Conv2d(2, 3, 3)(x4.float()),
        # on neither list: the inputs' dtype
        "mv": lambda: a.mv(v), "dot": lambda: v.dot(v), "inner": lambda: L.inner(v, v),
        "addmv": lambda: L.addmv(w3, a, v), "outer": lambda: L.outer(v, v), "add": lambda: a + a,
        "exp": lambda: a.exp(), "softmax": lambda: a.softmax(-1), "sum": lambda: a.sum(),
        "layer_norm": lambda: F.layer_norm(a, (4,)), "mm_f64": lambda: a.double() @ b.double(),
        # torch's float32 list
        "mse": lambda: F.mse_loss(a, a), "l1": lambda: F.l1_loss(a, a), "smooth_l1": lambda: F.smooth_l1_loss(a, a),
        "huber": lambda: F.huber_loss(a, a), "cross_entropy": lambda: F.cross_entropy(a, tgt),
        "nll": lambda: F.nll_loss(a, tgt), "bce_logits": lambda: F.binary_cross_entropy_with_logits(a, a),
        "kl_div": lambda: F.kl_div(a, a, reduction="batchmean"), "margin_ranking": lambda: F.margin_ranking_loss(a, a, a),
        "soft_margin": lambda: F.soft_margin_loss(a, a), "hinge": lambda: F.hinge_embedding_loss(a, a),
        "cosine_embedding": lambda: F.cosine_embedding_loss(a, a, L.ones(3)),
        "triplet": lambda: F.triplet_margin_loss(a, a, a), "poisson": lambda: F.poisson_nll_loss(a, a),
        "multi_margin": lambda: F.multi_margin_loss(a, tgt), "prod": lambda: a.prod(), "prod_dim": lambda: a.prod(1),
        "cdist": lambda: L.cdist(a, a),
    }


@pytest.mark.parametrize("low_inputs", [False, True])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_autocast_cpu_output_dtypes_match_torch(dtype, low_inputs):
    got = {}
    for L in (ct, torch):
        cases = _autocast_cases(L, low_inputs)
        with L.autocast("cpu", dtype=getattr(L, dtype)):
            assert L.is_autocast_enabled("cpu") and L.get_autocast_dtype("cpu") == getattr(L, dtype)
            got[L] = {k: str(f().dtype) for k, f in cases.items()}
        assert not L.is_autocast_enabled("cpu")
        got[L]["after"] = str(cases["mm"]().dtype)   # outside the region: no casts
    assert got[ct] == got[torch]


def test_autocast_cpu_values_and_training():
    """Values are those of the op run in the autocast dtype (torch's to bfloat16 rounding); backward reaches the
    float32 parameters in float32; out= and in-place calls are not cast (as torch's)."""
    r = np.random.RandomState(1)
    x, wt, bs = r.rand(8, 16).astype("float32"), r.rand(4, 16).astype("float32"), r.rand(4).astype("float32")
    res = {}
    for L in (ct, torch):
        lin = L.nn.Linear(16, 4)
        with L.no_grad():
            lin.weight.copy_(L.tensor(wt))
            lin.bias.copy_(L.tensor(bs))
        with L.autocast("cpu", dtype=L.bfloat16):
            out = lin(L.tensor(x))
            loss = L.nn.functional.mse_loss(out, L.zeros(8, 4))
            o = L.empty(8, 4)
            L.mm(L.tensor(x), L.tensor(wt).t(), out=o)
        loss.backward()
        res[L] = (out.float().detach().numpy(), str(loss.dtype), str(lin.weight.grad.dtype),
                  lin.weight.grad.numpy(), str(o.dtype))
    c, t = res[ct], res[torch]
    np.testing.assert_allclose(c[0], t[0], rtol=2e-2, atol=2e-2)
    assert c[1:3] == t[1:3] == ("torch.float32", "torch.float32") and c[4] == t[4] == "torch.float32"
    np.testing.assert_allclose(c[3], t[3], rtol=5e-2, atol=5e-2)


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
