"""Fusion in scripted graphs: after its profiled runs a ScriptFunction runs
an optimized copy of its graph (loop-invariant views hoisted, elementwise
runs as prim::TensorExprGroup kernels specialized per input layout). Each
case runs the scripted function past its profiled runs and compares with
eager cthtorch and with torch (torch.jit.script of the same source)."""
import types
import warnings

import numpy as np
import pytest

import cthtorch
from cthtorch.jit import _fuser
from cthtorch.jit._interpreter import ProfilingGraphExecutor
from oracle import require_torch
from python_frames import python_calls

torch = require_torch()

pytestmark = pytest.mark.skipif(_fuser.compiler() is None, reason="no C compiler on this machine")


def lstm_loop(x, h, c, w_ih, w_hh, b):
    # type: (Tensor, Tensor, Tensor, Tensor, Tensor, Tensor) -> Tuple[Tensor, Tensor]
    for t in range(x.size(0)):
        gates = torch.mm(x[t], w_ih.t()) + torch.mm(h, w_hh.t()) + b
        i, f, g, o = gates.chunk(4, 1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
    return h, c


def gate(a, b, c):
    return a * torch.sigmoid(b) + torch.tanh(c) * 0.5 - torch.relu(a - 1.0) * 2


def chunked(x, y):
    p, q = x.chunk(2, -1)
    return torch.sigmoid(p) * q + y


def bound(fn, lib):
    return types.FunctionType(fn.__code__, dict(fn.__globals__, torch=lib), fn.__name__)


def scripted(fn, lib=cthtorch):
    return lib.jit.script(bound(fn, lib))


def optimized_run(f, *args):
    """f's result once its executor runs the optimized graph."""
    for _ in range(ProfilingGraphExecutor.PROFILED_RUNS + 1):
        r = f(*args)
    assert f._executor.optimized
    return r


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CTHTORCH_CACHE", str(tmp_path))
    monkeypatch.setattr(_fuser, "_loaded", {})
    return tmp_path


def groups(graph):
    return graph.findAllNodes("prim::TensorExprGroup")


def used_kernel(f):
    """Whether some group of f's optimized graph ran a compiled loop."""
    import gc
    subs = [n.g("Subgraph") for n in groups(f._executor.graph)]
    kernels = [o for o in gc.get_objects() if type(o) is _fuser.DynamicFusedKernel and
               any(o.subgraph is s for s in subs)]
    return any(p for k in kernels for p in k._plans.values())


def arrays(*shapes, seed=0):
    rs = np.random.RandomState(seed)
    return [np.asarray(rs.randn(*s), dtype=np.float32) for s in shapes]


def test_lstm_step_is_two_mm_and_one_kernel(cache):
    a = arrays((7, 4, 16), (4, 16), (4, 16), (64, 16), (64, 16), (64,))
    a[3] *= 0.3
    a[4] *= 0.3
    f = scripted(lstm_loop)
    with cthtorch.no_grad():
        h, c = optimized_run(f, *[cthtorch.from_numpy(x) for x in a])
        he, ce = bound(lstm_loop, cthtorch)(*[cthtorch.from_numpy(x) for x in a])
    ht, ct = scripted(lstm_loop, torch)(*[torch.from_numpy(x) for x in a])
    for got, e, t in ((h, he, ht), (c, ce, ct)):
        assert got.dtype == cthtorch.float32 and tuple(got.shape) == tuple(t.shape)
        np.testing.assert_allclose(got.numpy(), e.numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got.numpy(), t.numpy(), rtol=1e-5, atol=1e-5)
    g = f._executor.graph
    loop = g.findNode("prim::Loop")
    body = [n.kind() for n in loop.blocks()[0].nodes() if n.kind() != "prim::Constant"]
    assert body == ["aten::select", "aten::mm", "aten::mm", "prim::TensorExprGroup"]
    # the weights' transposes moved out of the loop; .graph itself is unchanged
    assert len([n for n in g.nodes() if n.kind() == "aten::t"]) == 2
    assert [n.kind() for n in f.graph.findNode("prim::Loop").blocks()[0].nodes()].count("aten::t") == 2
    assert used_kernel(f)
    assert f.graph_for(*[cthtorch.from_numpy(x) for x in a]) is g


def test_lstm_gradients_match_eager():
    """With inputs that require grad the groups run their unfused subgraphs
    (torch's profiling executor also keeps autograd ops unfused)."""
    a = arrays((5, 3, 8), (3, 8), (3, 8), (32, 8), (32, 8), (32,), seed=1)
    f = scripted(lstm_loop)
    ours = [cthtorch.from_numpy(x).requires_grad_() for x in a]
    ref = [cthtorch.from_numpy(x).requires_grad_() for x in a]
    h, c = optimized_run(f, *ours)
    (h.sum() + (c * c).sum()).backward()
    he, ce = bound(lstm_loop, cthtorch)(*ref)
    (he.sum() + (ce * ce).sum()).backward()
    np.testing.assert_allclose(h.detach().numpy(), he.detach().numpy(), rtol=1e-6, atol=1e-7)
    for x, y in zip(ours, ref):
        np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shapes,layout,kernel", [
    (((6, 5), (6, 5), (6, 5)), None, True),
    (((6, 5), (5,), (1, 5)), None, True),             # broadcast rows
    (((3, 4, 5), (3, 4, 5), ()), None, True),         # a 0-dim operand, rows over two dims
    (((3, 4, 5), (4, 5), ()), None, False),           # (4, 5) repeated: no single row stride
    (((6, 1), (6, 5), (5,)), None, True),             # broadcast along the columns
    (((2, 1, 3), (1, 4, 3), (3,)), None, False),      # rows that collapse to no single stride
    (((5, 6), (6, 5), (5, 6)), "t", False),           # a transposed operand
    (((6, 10), (6, 5), (6, 5)), "slice", False),      # a strided slice
    (((0, 5), (0, 5), (5,)), None, True),             # empty
    (((4, 3), (4, 3), (4, 3)), "float64", False),     # another dtype: unfused
])
def test_layouts_and_broadcasting_match_torch(cache, shapes, layout, kernel):
    a = arrays(*shapes, seed=2)
    if layout == "t":
        a[1] = np.ascontiguousarray(a[1])
    if layout == "float64":
        a = [x.astype(np.float64) for x in a]

    def prep(lib, x, i):
        t = lib.from_numpy(x.copy())
        if layout == "t" and i == 1:
            t = t.t()
        if layout == "slice" and i == 0:
            t = t[:, ::2]
        return t
    f = scripted(gate)
    with cthtorch.no_grad():
        got = optimized_run(f, *[prep(cthtorch, x, i) for i, x in enumerate(a)])
    exp = bound(gate, torch)(*[prep(torch, x, i) for i, x in enumerate(a)])
    assert len(groups(f._executor.graph)) == 1
    assert used_kernel(f) == kernel   # where it is False, the subgraph ran
    assert str(got.dtype) == str(exp.dtype) and tuple(got.shape) == tuple(exp.shape)
    np.testing.assert_allclose(got.numpy(), exp.numpy(), rtol=1e-5, atol=1e-6)


def test_chunk_pieces_and_unequal_chunks(cache):
    f = scripted(chunked)
    x, y = arrays((3, 8), (3, 4), seed=3)
    got = optimized_run(f, cthtorch.from_numpy(x), cthtorch.from_numpy(y))
    exp = bound(chunked, torch)(torch.from_numpy(x), torch.from_numpy(y))
    np.testing.assert_allclose(got.numpy(), exp.numpy(), rtol=1e-5, atol=1e-6)
    assert used_kernel(f)
    # 7 columns make pieces of 4 and 3: the subgraph runs and fails as eager does (broadcast of 4 and 3)
    x7, y4 = arrays((3, 7), (3, 4), seed=4)
    with pytest.raises(RuntimeError):
        f(cthtorch.from_numpy(x7), cthtorch.from_numpy(y4))
    with pytest.raises(RuntimeError):
        bound(chunked, torch)(torch.from_numpy(x7), torch.from_numpy(y4))


def test_outputs_are_float32_under_another_default_dtype(cache):
    f = scripted(gate)
    a = [cthtorch.from_numpy(x) for x in arrays((4, 4), (4, 4), (4, 4), seed=5)]
    old = cthtorch.get_default_dtype()
    cthtorch.set_default_dtype(cthtorch.float64)
    try:
        got = optimized_run(f, *a)
    finally:
        cthtorch.set_default_dtype(old)
    assert got.dtype == cthtorch.float32
    np.testing.assert_allclose(got.numpy(), bound(gate, cthtorch)(*a).numpy(), rtol=1e-5, atol=1e-6)


def test_profiler_and_tracer_still_see_each_op(cache):
    f = scripted(gate)
    a = [cthtorch.randn(4, 4) for _ in range(3)]
    optimized_run(f, *a)
    with cthtorch.autograd.profiler.profile() as prof:
        f(*a)
    names = {e.name for e in prof.function_events}
    assert {"aten::sigmoid", "aten::tanh", "aten::relu"} <= names

    def outer(x, y, z):
        return f(x, y, z) * 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tr = cthtorch.jit.trace(outer, tuple(a))
    kinds = [n.kind() for n in tr.inlined_graph.nodes()] if hasattr(tr, "inlined_graph") else \
        [n.kind() for n in tr.graph.nodes()]
    assert "prim::TensorExprGroup" not in kinds


def test_first_runs_compile_nothing(cache):
    f = scripted(gate)
    a = [cthtorch.randn(4, 4) for _ in range(3)]
    for _ in range(ProfilingGraphExecutor.PROFILED_RUNS):
        f(*a)
    assert not f._executor.optimized and not (cache / "fused").exists()


LOOP_T = '''graph(%x : Tensor, %w : Tensor, %n : int):
  %t : bool = prim::Constant[value=1]()
  %y : Tensor = prim::Loop(%n, %t, %x)
    block0(%i : int, %h : Tensor):
      %wt : Tensor = aten::t(%w)
      %m : Tensor = aten::mm(%h, %wt)
      %r : Tensor = aten::tanh(%m)
      -> (%t, %r)
  return (%y)
'''


def test_licm_hoists_views_only_out_of_pure_loops():
    from cthtorch.jit._passes.licm import hoist_loop_invariant_views
    g = cthtorch._C.parse_ir(LOOP_T)
    assert hoist_loop_invariant_views(g.block()) == 1
    assert [n.kind() for n in g.nodes()][-3:] == ["aten::t", "aten::contiguous", "prim::Loop"]
    x, w = cthtorch.randn(2, 3), cthtorch.randn(3, 3)
    from cthtorch.jit._interpreter import run_graph
    np.testing.assert_allclose(run_graph(g, x, w, 3).numpy(),
                               run_graph(cthtorch._C.parse_ir(LOOP_T), x, w, 3).numpy(), rtol=1e-6)
    # a loop that mutates something keeps its views
    g2 = cthtorch._C.parse_ir(LOOP_T.replace("%r : Tensor = aten::tanh(%m)",
                                              "%r : Tensor = aten::tanh_(%m)"))
    assert hoist_loop_invariant_views(g2.block()) == 0


# ---------------------------------------------------------------- a trailing reduction

def swish_sum(x):
    return (x * torch.sigmoid(x)).sum()


def mse(a, b):
    return ((a - b) ** 2).mean()


def row_reductions(x, y):
    # type: (Tensor, Tensor) -> Tuple[Tensor, Tensor, Tensor]
    return (x * y + 1.0).sum(-1), (torch.tanh(x) * 2).mean(-1, keepdim=True), (torch.relu(x) - y).sum(0)


SWISH_SUM = '''graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %s : Tensor = aten::sigmoid(%x)
  %m : Tensor = aten::mul(%x, %s)
  %r : Tensor = aten::sum(%m, %none)
  return (%r)
'''


def test_scripted_reduction_graph_text():
    g = cthtorch._C.parse_ir(SWISH_SUM)
    assert _fuser.fuse_scripted(g.block()) == 1
    assert str(g).split("with ")[0] == (
        "graph(%x : Tensor):\n"
        "  %5 : Tensor = prim::TensorExprGroup[Subgraph=<Graph>](%x)\n"
        "  return (%5)\n")
    assert str(g.findNode("prim::TensorExprGroup").g("Subgraph")) == (
        "graph(%0 : Tensor):\n"
        "  %s : Tensor = aten::sigmoid(%0)\n"
        "  %m : Tensor = aten::mul(%0, %s)\n"
        "  %none : NoneType = prim::Constant()\n"
        "  %r : Tensor = aten::sum(%m, %none)\n"
        "  return (%r)\n")


@pytest.mark.parametrize("fn,shapes", [(swish_sum, [(1 << 18,)]), (swish_sum, [(37, 5, 3)]),
                                       (mse, [(300, 400), (300, 400)]), (mse, [(300, 400), (400,)]),
                                       (row_reductions, [(64, 33), (64, 33)]),
                                       (row_reductions, [(3, 4, 700), (3, 4, 700)])])
def test_scripted_reductions_match_eager_and_torch(cache, fn, shapes):
    a = arrays(*shapes, seed=6)
    f = scripted(fn)
    with cthtorch.no_grad():
        got = optimized_run(f, *[cthtorch.from_numpy(x) for x in a])
        eager = bound(fn, cthtorch)(*[cthtorch.from_numpy(x) for x in a])
    ref = scripted(fn, torch)(*[torch.from_numpy(x) for x in a])
    got, eager, ref = ((r,) if not isinstance(r, tuple) else r for r in (got, eager, ref))
    for g, e, t in zip(got, eager, ref):
        assert g.dtype == cthtorch.float32 and tuple(g.shape) == tuple(e.shape) == tuple(t.shape)
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=2e-5, atol=1e-4)
        np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=2e-5, atol=1e-4)
    reducing = [n for n in groups(f._executor.graph)
                if any(m.kind() in ("aten::sum", "aten::mean") for m in n.g("Subgraph").nodes())]
    assert len(reducing) == (2 if fn is row_reductions else 1) + (fn is row_reductions)
    assert used_kernel(f)


def test_scripted_reduction_gradients_equal_eager_and_torch():
    a = arrays((20, 30), (20, 30), seed=7)
    f = scripted(mse)
    for _ in range(ProfilingGraphExecutor.PROFILED_RUNS + 1):
        ours = [cthtorch.from_numpy(x.copy()).requires_grad_() for x in a]
        f(*ours).backward()
    assert f._executor.optimized and groups(f._executor.graph)
    ref = [torch.from_numpy(x.copy()).requires_grad_() for x in a]
    scripted(mse, torch)(*ref).backward()
    for x, y in zip(ours, ref):
        np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy(), rtol=1e-5, atol=1e-7)


# ---------------------------------------------------------------- fused groups run from C

def test_fused_groups_run_without_python_per_node(cache):
    """A scripted LSTM loop's steady-state run: its fused group (one per
    step) and the mm's run from the C interpreter; the Python calls are the
    same for 7 steps as for 14 (none per step), none in the fuser."""
    a = arrays((14, 4, 16), (4, 16), (4, 16), (64, 16), (64, 16), (64,), seed=8)
    f = scripted(lstm_loop)
    args = [cthtorch.from_numpy(x) for x in a]
    with cthtorch.no_grad():
        optimized_run(f, *args)
        short = [args[0][:7]] + args[1:]
        f(*short)
        calls7, calls14 = python_calls(f, *short)[1], python_calls(f, *args)[1]
    assert used_kernel(f)
    # the entry (ScriptFunction, its executor) and x.size(0)'s Python function, once per run
    assert calls7 == calls14 and len(calls14) <= 4, calls14
    assert not [c for c in calls14 if c[0] in ("_fuser.py", "_c_interpreter.py")], calls14
    # a traced and optimized chain with a trailing sum: one FusionGroup, no Python step
    m = cthtorch.jit.optimize_for_inference(cthtorch.jit.trace(_SwishSum(), args[0]))
    assert [n.kind() for n in m.graph.nodes() if n.kind() != "prim::Constant"] == ["prim::FusionGroup"]
    with cthtorch.no_grad():
        m(args[0])
        calls = python_calls(m, args[0])[1]
    assert not [c for c in calls if c[0] in ("_fuser.py", "_c_interpreter.py")], calls
    np.testing.assert_allclose(m(args[0]).numpy(), swish_sum_eager(args[0]).numpy(), rtol=1e-5)


def swish_sum_eager(x):
    return (x * cthtorch.sigmoid(x)).sum()


class _SwishSum(cthtorch.nn.Module):
    def forward(self, x):
        return swish_sum_eager(x)
