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
    x = x if isinstance(x, tuple) else (x,)
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


# ---------------------------------------------------------------- a trailing reduction

FT = "Float(64, 32, strides=[32, 1], requires_grad=0, device=cpu)"
REDUCING = '''graph(%x : FT,
      %y : FT):
  %none : NoneType = prim::Constant()
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %last : int = prim::Constant[value=-1]()
  %no : bool = prim::Constant[value=0]()
  %s : FT = aten::sigmoid(%x)
  %m : FT = aten::mul(%x, %s)
  %r : Float(requires_grad=0, device=cpu) = aten::sum(%m, %none)
  %d : FT = aten::sub(%x, %y, %one)
  %p : FT = aten::pow(%d, %two)
  %dims : int[] = prim::ListConstruct(%last)
  %q : Float(64, strides=[1], requires_grad=0, device=cpu) = aten::mean(%p, %dims, %no, %none)
  return (%r, %q)
'''.replace("FT", FT)


def test_trailing_reduction_joins_the_group_graph_text():
    """(x*sigmoid(x)).sum() and ((x-y)**2).mean(-1): each chain and its
    reduction become one group; the reduction's dims list is folded into a
    constant the group copies in, and what only the group read is gone."""
    g = cthtorch._C.parse_ir(REDUCING)
    assert _fuser.fuse_elementwise(g) == 2
    assert str(g).split("with prim::FusionGroup")[0] == (
        "graph(%%x : %s,\n      %%y : %s):\n"
        "  %%15 : Float(requires_grad=0, device=cpu) = prim::FusionGroup[Subgraph=<Graph>](%%x)\n"
        "  %%16 : Float(64, strides=[1], requires_grad=0, device=cpu) = prim::FusionGroup[Subgraph=<Graph>](%%x, %%y)\n"
        "  return (%%15, %%16)\n" % (FT, FT))
    first, second = (n.g("Subgraph") for n in g.findAllNodes("prim::FusionGroup"))
    assert str(first) == (
        "graph(%%0 : %s):\n"
        "  %%s : %s = aten::sigmoid(%%0)\n"
        "  %%m : %s = aten::mul(%%0, %%s)\n"
        "  %%none : NoneType = prim::Constant()\n"
        "  %%r : Float(requires_grad=0, device=cpu) = aten::sum(%%m, %%none)\n"
        "  return (%%r)\n" % (FT, FT, FT))
    assert [n.kind() for n in second.nodes() if n.kind() != "prim::Constant"] == \
        ["aten::sub", "aten::pow", "aten::mean"]
    assert [n.output().type().str() for n in second.nodes() if n.kind() == "prim::Constant"] == \
        ["int", "int", "List[int]", "bool", "NoneType"]


def test_reduction_the_group_cannot_end_with_stays_out():
    # a sum over a graph input (not the chain's), a mean over dim 0 of a 2-d value (neither all dims nor the last)
    text = REDUCING.replace("aten::sum(%m, %none)", "aten::sum(%x, %none)").replace(
        "%last : int = prim::Constant[value=-1]()", "%last : int = prim::Constant[value=0]()").replace(
        "Float(64, strides=[1]", "Float(32, strides=[1]")
    g = cthtorch._C.parse_ir(text)
    assert _fuser.fuse_elementwise(g) == 2
    assert [n.kind() for n in g.nodes() if n.kind() != "prim::Constant"] == \
        ["prim::FusionGroup", "aten::sum", "prim::FusionGroup", "aten::mean"]


class Reducing(cthtorch.nn.Module):
    def __init__(self, L=cthtorch):
        super().__init__()
        self.L = L

    def forward(self, x, y):
        L = self.L
        return ((x * L.sigmoid(x)).sum(), ((x - y) ** 2).mean(), (x * y + 1).sum(-1),
                (L.tanh(x) * 2).mean(-1, keepdim=True), (L.relu(x) - y).sum(0))


def reduction_kernels():
    import gc
    return [o for o in gc.get_objects() if type(o) is _fuser.DynamicFusedKernel and o._red is not None]


@pytest.mark.skipif(_fuser.compiler() is None, reason="no C compiler on this machine")
@pytest.mark.parametrize("shape", [(300, 400), (4, 5, 70), (1 << 17,)])
def test_trailing_reductions_match_eager_and_torch(cache, shape):
    from oracle import require_torch
    import numpy as np
    torch = require_torch()
    rs = np.random.RandomState(0)
    xa, ya = (rs.randn(*shape).astype(np.float32) for _ in range(2))
    x, y = cthtorch.from_numpy(xa), cthtorch.from_numpy(ya)
    m = optimized(Reducing(), (x, y))
    groups = m.graph.findAllNodes("prim::FusionGroup")
    reducing = [g for g in groups if g.g("Subgraph").findNode("aten::sum") or g.g("Subgraph").findNode("aten::mean")]
    # .sum(0) of a 2-d or 3-d input is neither over all dims nor the last: a group for relu(x)-y only
    assert len(reducing) == (4 if len(shape) > 1 else 5)
    got, want = m(x, y), Reducing()(x, y)
    ref = Reducing(torch)(torch.from_numpy(xa), torch.from_numpy(ya))
    for g, w, t in zip(got, want, ref):
        assert g.dtype == cthtorch.float32 and tuple(g.shape) == tuple(w.shape) == tuple(t.shape)
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=2e-5, atol=1e-4)
        np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=2e-5, atol=1e-4)
    ran = [k for k in reduction_kernels() if any(k.subgraph is r.g("Subgraph") for r in reducing)]
    assert ran and all(k.run.kernel_runs >= 1 for k in ran)   # the compiled loops ran, not the subgraphs


def test_trailing_reduction_gradients_equal_eager(cache):
    x = cthtorch.randn(50, 60)
    y = cthtorch.randn(50, 60)
    m = optimized(Reducing(), (x, y))
    xs, ys = x.clone().requires_grad_(), y.clone().requires_grad_()
    xe, ye = x.clone().requires_grad_(), y.clone().requires_grad_()
    outs = m(xs, ys)
    sum(o.sum() * (i + 1) for i, o in enumerate(outs)).backward()
    sum(o.sum() * (i + 1) for i, o in enumerate(Reducing()(xe, ye))).backward()
    assert cthtorch.allclose(xs.grad, xe.grad, rtol=1e-5, atol=1e-6)
    assert cthtorch.allclose(ys.grad, ye.grad, rtol=1e-5, atol=1e-6)


def test_empty_and_other_layouts_run_the_subgraph(cache):
    x, y = cthtorch.randn(8, 6), cthtorch.randn(8, 6)
    m = optimized(Reducing(), (x, y))
    for a, b in ((cthtorch.randn(0, 6), cthtorch.randn(0, 6)), (cthtorch.randn(6, 8).t(), y),
                 (x.double(), y.double())):
        for g, w in zip(m(a, b), Reducing()(a, b)):
            assert g.dtype == w.dtype and g.shape == w.shape
            assert cthtorch.allclose(g, w, rtol=1e-5, atol=1e-5, equal_nan=True)
