"""The C interpreter (src/python/JitInterpreter.c, lowered by
cthtorch/jit/_c_interpreter.py): scripted and traced graphs run there by
default. Each test checks that the C program ran (its `runs` counter and
its instructions) and compares values and gradients with eager cthtorch and
with torch.jit running the same source."""
import gc
import types
import tracemalloc

import numpy as np
import pytest

import cthtorch
from cthtorch.jit import _c_interpreter
from cthtorch.jit._interpreter import GraphExecutor
from oracle import require_torch
from test_jit_script_fusion import lstm_loop   # the scripted LSTM loop the fusion tests and bench_jit run

torch = require_torch()


def both(fn):
    """fn compiled by cthtorch.jit.script and by torch.jit.script, `torch` bound to each library."""
    out = []
    for lib in (cthtorch, torch):
        f = types.FunctionType(fn.__code__, dict(fn.__globals__, torch=lib), fn.__name__, fn.__defaults__)
        out.append((lib.jit.script(f), f))
    return out


def program_of(sf):
    ex = sf._executor._ex
    assert ex.c_program is not None, "ran in the Python executor"
    return ex.c_program


def kinds(prog):
    return [c[0] for c in prog.code]


def loop_if(x, n: int):
    for i in range(n):
        if i % 2 == 0:
            x = x * 2 + i
        else:
            x = torch.relu(x - 1.5)
    return x


def while_break(x, limit: float):
    i = 0
    while True:
        x = x + 1
        i += 1
        if bool(x.sum() > limit):
            break
    return x, i


def nested(x, n: int):
    acc = torch.zeros_like(x)
    for i in range(n):
        for j in range(i):
            if j > 1:
                if i % 3 == 0:
                    acc = acc + x * j
                else:
                    acc = acc - x
            else:
                acc = acc + 1
    return acc


def test_ops_are_boxed_calls_and_the_c_program_runs():
    (cs, ce), (ts, _) = both(loop_if)
    x = np.random.RandomState(0).randn(3, 4).astype(np.float32)
    for _ in range(4):   # past the profiled runs, into the optimized graph too
        got = cs(cthtorch.from_numpy(x), 5)
    want = ts(torch.from_numpy(x), 5)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    np.testing.assert_allclose(got.numpy(), ce(cthtorch.from_numpy(x), 5).numpy(), rtol=1e-6)
    prog = program_of(cs)
    assert prog.runs >= 1 and prog.ops > prog.runs
    k = kinds(prog)
    assert "BOXED" in k and "LOOPTEST" in k and "JF" in k


def test_graph_executor_runs_c_program_for_every_kind_of_node():
    (cs, _), _ = both(while_break)
    x = cthtorch.zeros(2)
    out, n = cs(x, 7.0)
    assert n == 4 and out.tolist() == [4.0, 4.0]
    ex = GraphExecutor(cs.graph)
    assert ex.c_program is not None
    before = ex.c_program.runs
    out2, n2 = ex(x, 7.0)
    assert ex.c_program.runs == before + 1 and n2 == 4 and out2.tolist() == [4.0, 4.0]


def test_disabled_by_env(monkeypatch):
    monkeypatch.setenv("CTHTORCH_JIT_C_INTERPRETER", "0")
    (cs, _), _ = both(loop_if)
    ex = GraphExecutor(cs.graph)
    assert ex.c_program is None
    assert ex(cthtorch.ones(2), 3).tolist() == cthtorch.jit.script(loop_if)(cthtorch.ones(2), 3).tolist()


def test_debug_flag_says_which_executor(monkeypatch, capsys):
    monkeypatch.setenv("CTHTORCH_JIT_LOG_EXECUTOR", "1")
    (cs, _), _ = both(loop_if)
    GraphExecutor(cs.graph)
    assert "runs in the C interpreter" in capsys.readouterr().err


def test_lstm_values_and_gradients_equal_eager_and_torch():
    (cs, ce), (ts, _) = both(lstm_loop)
    rs = np.random.RandomState(1)
    arrs = [rs.randn(6, 3, 8), rs.randn(3, 8), rs.randn(3, 8), rs.randn(32, 8) * 0.1, rs.randn(32, 8) * 0.1,
            rs.randn(32) * 0.1]
    arrs = [a.astype(np.float32) for a in arrs]

    def run(f, lib, grad):
        args = [lib.tensor(a, requires_grad=grad) for a in arrs]
        h, c = f(*args)
        if grad:
            (h.sum() + c.pow(2).sum()).backward()
        return [h.detach().numpy(), c.detach().numpy()] + ([a.grad.numpy() for a in args] if grad else [])

    for grad in (False, True):
        for _ in range(3):
            got = run(cs, cthtorch, grad)
        want, eager = run(ts, torch, grad), run(ce, cthtorch, grad)
        for g, w, e in zip(got, want, eager):
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
            np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
    assert program_of(cs).runs >= 2


def test_traced_and_frozen_mlp_runs_in_c():
    def mlp(L):
        L.manual_seed(0)
        nn = L.nn
        return nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 4)).eval()
    mc = mlp(cthtorch)
    mt = mlp(torch)
    mt.load_state_dict({k: torch.from_numpy(v.numpy()) for k, v in mc.state_dict().items()})
    x = np.random.RandomState(2).randn(1, 16).astype(np.float32)
    with cthtorch.no_grad():
        jc = cthtorch.jit.freeze(cthtorch.jit.trace(mc, cthtorch.from_numpy(x)))
        for _ in range(4):
            got = jc(cthtorch.from_numpy(x))
    with torch.no_grad():
        want = torch.jit.freeze(torch.jit.trace(mt, torch.from_numpy(x)))(torch.from_numpy(x))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    prog = jc._methods["forward"]._executor._ex.c_program
    assert prog is not None and prog.runs >= 1
    assert "CALL" not in kinds(prog)   # frozen linear is addmm, relu boxed: no Python per op


def test_traced_module_gradients_equal_eager():
    cthtorch.manual_seed(0)
    m = cthtorch.nn.Sequential(cthtorch.nn.Linear(5, 7), cthtorch.nn.Tanh(), cthtorch.nn.Linear(7, 2))
    x = cthtorch.randn(4, 5)
    tm = cthtorch.jit.trace(m, x)
    tm(x).pow(2).sum().backward()
    g_jit = [p.grad.clone() for p in m.parameters()]
    m.zero_grad()
    m(x).pow(2).sum().backward()
    for a, b in zip(g_jit, [p.grad for p in m.parameters()]):
        assert cthtorch.allclose(a, b, rtol=1e-6, atol=1e-7)
    assert tm._methods["forward"]._executor._ex.c_program.runs >= 1


def test_error_inside_loop_keeps_torchs_message():
    def bad(x, n: int):
        for i in range(n):
            if i == 2:
                x = torch.mm(x, x[:, :1].t())
            x = x + 1
        return x
    (cs, _), (ts, _) = both(bad)
    with pytest.raises(RuntimeError) as et:
        ts(torch.ones(2, 3), 4)
    with pytest.raises(RuntimeError) as ec:
        cs(cthtorch.ones(2, 3), 4)
    assert "mat1 and mat2 shapes cannot be multiplied" in str(et.value)
    assert "mat1 and mat2 shapes cannot be multiplied" in str(ec.value)
    assert ec.value._jit_node.startswith("aten::mm")
    # the program still runs after an error released its registers
    assert cs(cthtorch.ones(2, 3), 2).tolist() == [[3.0] * 3] * 2


def test_raise_exception_and_bad_input_type():
    def check(x, n: int):
        if n < 0:
            raise ValueError("n must be non-negative")
        return x * n
    (cs, _), _ = both(check)
    with pytest.raises(ValueError, match="n must be non-negative"):
        cs(cthtorch.ones(2), -1)
    ex = GraphExecutor(cs.graph)
    with pytest.raises(RuntimeError, match="expected 2 inputs, got 1"):
        ex(cthtorch.ones(2))
    with pytest.raises(TypeError):   # a str where the op takes a tensor: the binding's TypeError
        ex("not a tensor", 2)


def test_deep_nesting_of_if_and_loop(tmp_path, monkeypatch):
    (cs, ce), (ts, _) = both(nested)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    for _ in range(3):
        got = cs(cthtorch.from_numpy(x), 9)
    np.testing.assert_allclose(got.numpy(), ts(torch.from_numpy(x), 9).numpy())
    np.testing.assert_allclose(got.numpy(), ce(cthtorch.from_numpy(x), 9).numpy())
    # a long chain of nested ifs lowers to jumps, not C recursion
    depth = 60
    src = "def deep(x, n: int):\n"
    for d in range(depth):
        src += "    " * (d + 1) + "if n > %d:\n" % d + "    " * (d + 2) + "x = x + 1\n"
    src += "    return x\n"
    (tmp_path / "jit_deep_if.py").write_text("import cthtorch as torch\n" + src)
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib
    f = cthtorch.jit.script(importlib.import_module("jit_deep_if").deep)
    assert f(cthtorch.zeros(1), depth).item() == depth
    assert f(cthtorch.zeros(1), 7).item() == 7


def scale_list(xs: list[int], k: int) -> list[int]:
    out: list[int] = []
    for v in xs:
        out.append(v * k)
    return out


def calls_scripted(n: int) -> list[int]:
    xs = [1, 2, 3]
    for i in range(n):
        xs = scale_list(xs, 2)
    return xs


def test_calls_between_script_functions_and_lists():
    co = cthtorch.jit.script(calls_scripted)
    assert co(3) == [8, 16, 24] == torch.jit.script(calls_scripted)(3)
    assert co(0) == [1, 2, 3]
    assert program_of(co).runs == 2


def test_no_leak_over_10k_runs():
    (cs, _), _ = both(loop_if)
    x = cthtorch.ones(4)
    for _ in range(20):
        cs(x, 4)
    gc.collect()
    n_obj = len(gc.get_objects())
    tracemalloc.start()
    snap0 = tracemalloc.take_snapshot()
    for _ in range(10000):
        cs(x, 4)
    gc.collect()
    snap1 = tracemalloc.take_snapshot()
    tracemalloc.stop()
    grown = sum(s.size_diff for s in snap1.compare_to(snap0, "filename"))
    assert grown < 64 * 1024, grown
    assert len(gc.get_objects()) - n_obj < 100
    # errors release their registers too
    def bad(x, n: int):
        for i in range(n):
            x = torch.mm(x, x)
        return x
    (cb, _), _ = both(bad)
    y = cthtorch.ones(2, 3)
    for _ in range(200):
        with pytest.raises(RuntimeError):
            cb(y, 2)
    gc.collect()
    tracemalloc.start()
    snap0 = tracemalloc.take_snapshot()
    for _ in range(2000):
        with pytest.raises(RuntimeError):
            cb(y, 2)
    gc.collect()
    snap1 = tracemalloc.take_snapshot()
    tracemalloc.stop()
    assert sum(s.size_diff for s in snap1.compare_to(snap0, "filename")) < 64 * 1024


def test_profiler_and_tracer_see_boxed_ops():
    (cs, _), _ = both(loop_if)
    x = cthtorch.ones(3)
    cs(x, 2)
    with cthtorch.autograd.profiler.profile() as prof:
        cs(x, 3)
    names = {e.name for e in prof.function_events}
    assert "aten::mul" in names and "aten::relu" in names
    tr = cthtorch.jit.trace(lambda y: cs(y, 3), x)
    assert "aten::relu" in str(tr.graph)


def test_bad_programs_are_rejected_not_run():
    P = cthtorch._C._JitProgram
    with pytest.raises(ValueError):
        P([(_c_interpreter.JUMP, [], [], 99, None, None, None)], (None,), [0], [0])
    with pytest.raises(ValueError):
        P([(_c_interpreter.MOVE, [0], [5], -1, None, None, None)], (None,), [0], [0])
    with pytest.raises(KeyError):
        P([(_c_interpreter.BOXED, [0], [0], -1, "aten::no_such_op", None, None)], (None,), [0], [0])
    with pytest.raises(TypeError):
        P([(_c_interpreter.CALL, [0], [0], -1, 3, None, None)], (None,), [0], [0])
    p = P([(_c_interpreter.BOXED, [0, 1], [2], -1, "aten::add.Tensor", None, None)], (None, None, None), [0, 1], [2])
    assert p(cthtorch.ones(2), cthtorch.ones(2)).tolist() == [2.0, 2.0]
    with pytest.raises(TypeError):
        p(cthtorch.ones(2), "x")
    # dtype ids box into dtypes as graphs hold them
    q = P([(_c_interpreter.BOXED, [0, 1, 2], [3], -1, "aten::cumsum", None, None)], (None,) * 4, [0, 1, 2], [3])
    _c_interpreter._set_enum_tables()
    assert q(cthtorch.ones(2), 0, 7).dtype == cthtorch.float64
    assert q(cthtorch.ones(2), 0, None).dtype == cthtorch.float32
    with pytest.raises(RuntimeError, match="no ScalarType with id 99"):
        q(cthtorch.ones(2), 0, 99)


def test_hand_written_bindings_are_not_boxed():
    # zeros_like's binding is written by hand (requires_grad, device, memory_format): its VT alone
    # would drop them, so graphs call the binding instead
    assert cthtorch._C._jit_boxed_params("aten::zeros_like") is None
    assert cthtorch._C._jit_boxed_params("aten::add.Tensor") == "self,other,alpha"
    assert cthtorch._C._jit_boxed_params("aten::add_.Tensor") == "self,other,alpha"

    def f(x):
        return torch.zeros_like(x, dtype=torch.float64) + x
    (cs, _), (ts, _) = both(f)
    for _ in range(3):
        got = cs(cthtorch.ones(2, dtype=cthtorch.float32))
    want = ts(torch.ones(2, dtype=torch.float32))
    assert got.dtype == cthtorch.float64 and got.tolist() == want.tolist()


def test_scripted_transformer_layer_runs_its_nodes_from_c():
    """A scripted TransformerEncoderLayer's optimized graph: its shape and
    prim nodes, aten::linear and its submodules' attribute reads run without
    the Python executor's per-node steps, ScriptModule.__getattr__ or a schema
    rebuilt per call; values stay eager's and torch's, and a reassigned
    parameter is read on the next run (nothing cached)."""
    from python_frames import python_calls

    def layer(L):
        L.manual_seed(0)
        return L.nn.TransformerEncoderLayer(16, 2, 32).eval()
    mc, mt = layer(cthtorch), layer(torch)
    mt.load_state_dict({k: torch.from_numpy(v.detach().numpy().copy()) for k, v in mc.state_dict().items()})
    x = np.random.RandomState(3).randn(5, 2, 16).astype(np.float32)
    sc = cthtorch.jit.script(mc)
    with cthtorch.no_grad():
        for _ in range(4):
            sc(cthtorch.from_numpy(x))
        got, seen = python_calls(sc, cthtorch.from_numpy(x), src_key_padding_mask=None)
        want = mc(cthtorch.from_numpy(x))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)
    with torch.no_grad():
        np.testing.assert_allclose(got.numpy(), mt(torch.from_numpy(x)).numpy(), rtol=1e-4, atol=1e-5)
    assert program_of(sc._methods["forward"]).runs >= 1
    assert not [s for s in seen if s[0] == "_c_interpreter.py"], seen        # no per-node Python step
    assert ("_module.py", "__getattr__") not in seen, seen                    # attributes read from C
    assert not [s for s in seen if s[0] == "_schema.py"], seen               # no schema per call
    assert ("blas.py", "linear") in seen                                      # the op itself, called from C
    with cthtorch.no_grad():
        sc.linear2.bias = cthtorch.nn.Parameter(cthtorch.arange(16.0))   # not constant: norm2 would cancel a shift
        again = sc(cthtorch.from_numpy(x))
        sc.linear2.bias = cthtorch.nn.Parameter(cthtorch.zeros(16))
        base = sc(cthtorch.from_numpy(x))
    assert not np.allclose(again.numpy(), base.numpy())
