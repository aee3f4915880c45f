"""The fuser: elementwise chains in an optimized traced graph become one
prim::FusionGroup whose generated C loop gives eager's values; kernels are
cached on disk; without a compiler, or for inputs the kernel does not take,
the group runs in the interpreter (warning once, results unchanged)."""
import os
import warnings

import pytest

import cthtorch
from cthtorch.jit import _fuser


class Chain(cthtorch.nn.Module):
    def forward(self, x):
        return x * cthtorch.sigmoid(x) + cthtorch.tanh(x) * 0.5 - cthtorch.relu(x - 1) * 2


def optimized(mod, x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cthtorch.jit.TracerWarning)
        return cthtorch.jit.optimize_for_inference(cthtorch.jit.trace(mod, x))


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CTHTORCH_CACHE", str(tmp_path))
    monkeypatch.setattr(_fuser, "_loaded", {})
    return tmp_path


@pytest.mark.skipif(_fuser.compiler() is None, reason="no C compiler on this machine")
def test_chain_fuses_and_matches_eager(cache):
    x = cthtorch.randn(1 << 16) * 4
    x[:3] = cthtorch.tensor([float("nan"), float("inf"), -float("inf")])
    m = optimized(Chain(), x)
    kinds = [n.kind() for n in m.graph.nodes() if n.kind() != "prim::Constant"]
    assert kinds == ["prim::FusionGroup"]
    got, expect = m(x), Chain()(x)
    assert cthtorch.allclose(got, expect, rtol=1e-5, atol=1e-6, equal_nan=True)
    so = [f for f in os.listdir(cache / "fused") if f.endswith(".so")]
    assert len(so) == 1
    # a second module with the same chain reuses the cached kernel
    _fuser._loaded.clear()
    m2 = optimized(Chain(), x)
    assert cthtorch.allclose(m2(x), expect, rtol=1e-5, atol=1e-6, equal_nan=True)
    assert [f for f in os.listdir(cache / "fused") if f.endswith(".so")] == so


def test_more_unary_ops_against_eager(cache):
    class M(cthtorch.nn.Module):
        def forward(self, x):
            y = cthtorch.exp(x * 0.1).neg().abs() / 3.0
            return cthtorch.sqrt(y + 1) - cthtorch.nn.functional.silu(x) + cthtorch.rsqrt(y + 2)
    x = cthtorch.randn(4096)
    m = optimized(M(), x)
    assert "prim::FusionGroup" in [n.kind() for n in m.graph.nodes()]
    assert cthtorch.allclose(m(x), M()(x), rtol=1e-5, atol=1e-6)


def test_fallbacks_keep_eager_results(cache):
    x = cthtorch.randn(1000)
    m = optimized(Chain(), x)
    # another size, a non-contiguous input, an input that needs gradients
    for inp in (cthtorch.randn(2000)[::2], cthtorch.randn(10, 100).t().reshape(-1)):
        assert cthtorch.allclose(m(inp), Chain()(inp), rtol=1e-5, atol=1e-6)
    xg = x.clone().requires_grad_()
    out = m(xg)
    out.sum().backward()
    xe = x.clone().requires_grad_()
    Chain()(xe).sum().backward()
    assert cthtorch.allclose(xg.grad, xe.grad, atol=1e-6)


def test_no_compiler_warns_once_and_runs(cache, monkeypatch):
    monkeypatch.setenv("CC", "/nonexistent/cc")
    monkeypatch.setattr(_fuser, "_warned", [False])
    x = cthtorch.randn(512)
    m = optimized(Chain(), x)
    with pytest.warns(UserWarning, match="no C compiler found"):
        r = m(x)
    assert cthtorch.allclose(r, Chain()(x), atol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m2 = optimized(Chain(), x)
        assert cthtorch.allclose(m2(x), Chain()(x), atol=1e-6)
