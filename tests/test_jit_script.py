"""torch.jit.script: the frontend's graphs, outputs and gradients against
PyTorch's TorchScript on the same source."""
import io
import math
import re
import warnings
from typing import Dict, List, Optional

import numpy as np
import pytest

import cthtorch
from cthtorch import nn
from tests.oracle import require_torch

torch = require_torch()


def to_t(x):
    return torch.from_numpy(x.detach().numpy().copy())


def close(a, b, tol=1e-5):
    if isinstance(b, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            close(x, y, tol)
        return
    if isinstance(b, torch.Tensor):
        assert tuple(a.shape) == tuple(b.shape)
        assert str(a.dtype) == str(b.dtype)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)
        return
    assert a == b and type(a) is type(b)


def kinds(graph):
    """Node kinds of a graph and its nested blocks, constants aside."""
    out = set()

    def walk(nodes):
        for n in nodes:
            if n.kind() != "prim::Constant":
                out.add(n.kind())
            for b in n.blocks():
                walk(b.nodes())
    walk(graph.nodes())
    return out


def both(fn):
    """The same Python function scripted by cthtorch and by torch (its
    globals see each library as `torch`)."""
    import types
    out = []
    for lib in (cthtorch, torch):
        g = dict(fn.__globals__, torch=lib, F=lib.nn.functional)
        for k, v in list(g.items()):      # functions this module defines see the same library
            if isinstance(v, types.FunctionType) and v.__module__ == fn.__module__:
                g[k] = types.FunctionType(v.__code__, g, v.__name__, v.__defaults__, v.__closure__)
        out.append(lib.jit.script(types.FunctionType(fn.__code__, g, fn.__name__, fn.__defaults__,
                                                     fn.__closure__)))
    return tuple(out)


# ---------------------------------------------------------------- the documents' loop/if example

def foo(len):
    # type: (int) -> torch.Tensor
    rv = torch.zeros(3, 4)
    for i in range(len):
        if i < 10:
            rv = rv - 1.0
        else:
            rv = rv + 1.0
    return rv


def test_docs_loop_if_graph_and_values():
    s_ct, s_t = both(foo)
    assert kinds(s_ct.graph) == kinds(s_t.graph)
    assert {"prim::Loop", "prim::If", "aten::lt", "aten::zeros", "aten::sub", "aten::add"} <= kinds(s_ct.graph)
    for n in (0, 5, 12):
        close(s_ct(n), s_t(n))
    text = str(s_ct.graph)
    assert text.startswith("graph(%len")
    assert "prim::Loop(%len" in text and "block0(%i" in text and "aten::lt(%i" in text
    assert "foo.py" not in text and "test_jit_script.py:" in text       # source ranges name this file
    assert s_ct.code == s_t.code         # for/if with SSA-renamed variables, as torch prints them
    # the constants come first, once each (torch's constant pooling): the same constants as torch's graph
    # (torch's own order among them comes from its pass sequence; ours is the order of first use)

    def constants(g):
        lines = str(g).splitlines()[1:]
        n = next(i for i, ln in enumerate(lines) if "prim::Constant" not in ln)
        assert not any("prim::Constant" in ln for ln in lines[n:])
        return sorted(ln.split(" = ")[0].split(" : ")[1] + ln.split(" = ")[1].split("#")[0].strip() for ln in lines[:n])
    assert constants(s_ct.graph) == constants(s_t.graph)
    assert "aten::zeros(%3, %4, %4, %4, %4)" in str(s_ct.graph)


# ---------------------------------------------------------------- control flow

def opt_while(x, y: int = 3, z: Optional[torch.Tensor] = None):
    a = x * 2 + y
    if z is not None:
        a = a + z
    b = [a, x]
    while y > 0:
        y -= 1
        if y == 1:
            break
        a = a.relu() - 0.5
    return torch.cat(b, 0).sum(), a, (y, 2.5)


def early_return(x):
    if x.sum() > 0:
        return x
    return -x


def loops(x, n: int):
    acc = x
    total = 0
    for i in range(2, n):
        if i % 3 == 0:
            continue
        total += i
        for j in range(i):
            acc = acc + j
    for v in [1.0, 2.0]:
        acc = acc * v
    k = 0
    while k < n:
        k += 2
    return acc, total, k


def find_first(xs: List[int], target: int) -> int:
    for i in range(len(xs)):
        for j in range(2):
            if xs[i] + j == target:
                return i * 10 + j
    k = 0
    while k < 100:
        k += 7
        if k > target:
            return -k
    return -1


def elif_chain(x, m: int):
    if m == 0:
        y = x + 1
    elif m == 1:
        y = x * 2
    else:
        y = x - 3
    return y


def lists_dicts(x):
    xs: List[torch.Tensor] = []
    for i in range(3):
        xs.append(x * i)
    d: Dict[str, int] = {"a": 1, "b": 2}
    d["c"] = len(xs)
    names = ["u", "v"]
    return torch.stack(xs), d["c"] + d["a"], len(names)


def strings_asserts(x, n: int):
    assert n >= 0, "n must be non-negative"
    s = f"n={n} and {n + 1}"
    if isinstance(n, int):
        y = x + n
    else:
        y = x
    return y, s


def test_control_flow_matches_torch():
    x = np.random.RandomState(0).randn(3).astype(np.float32)
    xc, xt = cthtorch.tensor(x), torch.tensor(x)
    s_ct, s_t = both(opt_while)
    close(s_ct(xc, 4, xc), s_t(xt, 4, xt))
    close(s_ct(xc), s_t(xt))
    close(s_ct(xc, 0, None), s_t(xt, 0, None))
    assert {"prim::Loop", "prim::If", "prim::unchecked_cast", "aten::__isnot__"} <= kinds(s_ct.graph)
    s_ct, s_t = both(early_return)
    close(s_ct(xc), s_t(xt))
    close(s_ct(-xc), s_t(-xt))
    assert kinds(s_ct.graph) == kinds(s_t.graph)
    assert s_ct.code == s_t.code
    s_ct, s_t = both(loops)
    for n in (0, 4, 7):
        close(s_ct(xc, n), s_t(xt, n))
    s_ct, s_t = both(find_first)     # return from inside (nested) loops
    for target in (5, 8, 50, 200):
        assert s_ct([3, 5, 7], target) == s_t([3, 5, 7], target)
    s_ct, s_t = both(elif_chain)
    for m in (0, 1, 2):
        close(s_ct(xc, m), s_t(xt, m))
    assert s_ct.code == s_t.code
    s_ct, s_t = both(lists_dicts)
    close(s_ct(xc), s_t(xt))
    s_ct, s_t = both(strings_asserts)
    close(s_ct(xc, 2), s_t(xt, 2))
    with pytest.raises(AssertionError, match="n must be non-negative"):
        s_ct(xc, -1)


def tensor_bit_ops(x, grad_output):
    # gen-efficientnet's scripted hard_sigmoid backward: a mask from `&` of two comparisons
    m = torch.ones_like(x) * ((x >= -3.) & (x <= 3.)) / 6.
    return grad_output * m, (x > 0) | (x < -1), (x > 0) ^ (x < 1)


def test_tensor_and_or_xor_operators_match_torch():
    x = np.array([-4., -1.5, 0., 2., 4.], np.float32)
    s_ct, s_t = both(tensor_bit_ops)
    for _ in range(3):   # the profiled first run and the optimized ones after it
        close(s_ct(cthtorch.tensor(x), cthtorch.tensor(x)), s_t(torch.tensor(x), torch.tensor(x)))
    assert {"aten::__and__", "aten::__or__", "aten::__xor__"} <= kinds(s_ct.graph)


def comprehensions(xs: List[torch.Tensor], ns: List[int]):
    ys = [x * 2 for x in xs]
    total = 0
    for i, n in enumerate(ns):
        total += i * n
    for a, b in zip(xs, ns):
        total += b
    sq = [n * n for n in ns]
    return ys, total, sq


def test_comprehensions_enumerate_zip():
    s_ct, s_t = both(comprehensions)
    xs = [np.ones(2, np.float32), -np.ones(2, np.float32), np.ones(1, np.float32)]
    close(s_ct([cthtorch.tensor(x) for x in xs], [1, 2, 3, 4]), s_t([torch.tensor(x) for x in xs], [1, 2, 3, 4]))
    again = cthtorch.jit.frontend.compile_source(s_ct.code, lambda name: (_ for _ in ()).throw(KeyError(name)))
    from cthtorch.jit._module import ScriptFunction
    assert ScriptFunction(again["comprehensions"].graph, "c")([], [3, 4])[1:] == (4, [9, 16])


def assert_refines(x, y: Optional[int]):
    assert y is not None
    return x + y


def test_assert_refines_optional():
    s_ct, s_t = both(assert_refines)
    close(s_ct(cthtorch.ones(2), 3), s_t(torch.ones(2), 3))
    with pytest.raises(AssertionError):
        s_ct(cthtorch.ones(2), None)


def test_if_types_and_outputs():
    def f(x, flag: bool):
        if flag:
            y = x
        else:
            y = None
        if y is None:
            return x
        return y + 1
    s_ct, s_t = both(f)
    x = cthtorch.ones(2)
    close(s_ct(x, True), s_t(torch.ones(2), True))
    close(s_ct(x, False), s_t(torch.ones(2), False))


# ---------------------------------------------------------------- calls

def helper(x, k: int = 2):
    return x * k


def caller(x):
    return helper(x) + helper(x, 3) + cthtorch_or_torch_relu(x)


def cthtorch_or_torch_relu(x):
    return torch.nn.functional.relu(x) + F.softmax(x, dim=0)  # noqa: F821 (both() binds F)


def test_calls_functions_and_functional():
    s_ct, s_t = both(caller)
    assert "prim::CallFunction" in kinds(s_ct.graph)
    x = np.random.RandomState(1).randn(4).astype(np.float32)
    close(s_ct(cthtorch.tensor(x)), s_t(torch.tensor(x)))


@cthtorch.jit.ignore
def python_side(x):
    return cthtorch.from_numpy(x.numpy() * 3)


def calls_python(x, n: float):
    return python_side(x) + math.sqrt(n) + math.floor(n)


def test_ignored_function_and_math():
    s = cthtorch.jit.script(calls_python)
    # as torch: an @ignore'd call is prim::PythonOp, printed ^name[]()(args) in graphs and ^name()(args) in code
    assert "prim::PythonOp" in kinds(s.graph) and "aten::sqrt" in kinds(s.graph)
    assert re.search(r"%\w+ : Tensor = \^python_side\[\]\(\)\(%x[.0-9]*\) # ", str(s.graph))
    assert "^python_side()(x)" in s.code
    n = s.graph.findNode("prim::PythonOp")
    assert n.pyname() == "python_side" and n.pyobj() is python_side
    x = cthtorch.ones(2)
    close_ct(s(x, 4.0), calls_python(x, 4.0))
    with pytest.raises(RuntimeError, match="^Could not export Python function call 'python_side'. Remove calls"):
        s.save(io.BytesIO())


class _IgnoredMethod(nn.Module):
    @cthtorch.jit.ignore
    def scale(self, x: cthtorch.Tensor) -> cthtorch.Tensor:
        return cthtorch.from_numpy(x.numpy() * 2)

    def forward(self, x):
        return self.scale(x) + 1


def test_ignored_method_is_a_python_op_taking_its_module():
    sm = cthtorch.jit.script(_IgnoredMethod())
    assert re.search(r"\^scale\[\]\(\)\(%self[.0-9]*, %x[.0-9]*\)", str(sm.graph))
    assert "^scale()(self, x)" in sm.code
    assert cthtorch.equal(sm(cthtorch.ones(2)), cthtorch.full((2,), 3.0))
    with pytest.raises(RuntimeError, match="^Could not export Python function call 'scale'"):
        cthtorch.jit.save(sm, io.BytesIO())


def test_is_scripting_and_annotate():
    def f(x):
        if torch.jit.is_scripting():
            y = x + 1
        else:
            y = x - 1
        z = torch.jit.annotate(List[int], [])
        z.append(3)
        return y, z
    s_ct, s_t = both(f)
    close(s_ct(cthtorch.zeros(2)), s_t(torch.zeros(2)))
    assert "prim::If" not in kinds(s_ct.graph)


# ---------------------------------------------------------------- modules: the tutorial's cell

def make_cell(lib):
    class MyDecisionGate(lib.nn.Module):
        def forward(self, x):
            if x.sum() > 0:
                return x
            else:
                return -x

    class MyCell(lib.nn.Module):
        def __init__(self, dg):
            super(MyCell, self).__init__()
            self.dg = dg
            self.linear = lib.nn.Linear(4, 4)

        def forward(self, x, h):
            new_h = lib.tanh(self.dg(self.linear(x)) + h)
            return new_h, new_h
    return MyDecisionGate, MyCell


def tutorial_cells():
    """MyCell around a scripted MyDecisionGate, in cthtorch and in torch,
    with the same weights."""
    G_ct, C_ct = make_cell(cthtorch)
    G_t, C_t = make_cell(torch)
    cell_ct = C_ct(cthtorch.jit.script(G_ct()))
    cell_t = C_t(torch.jit.script(G_t()))
    with torch.no_grad():
        cell_t.linear.weight.copy_(to_t(cell_ct.linear.weight))
        cell_t.linear.bias.copy_(to_t(cell_ct.linear.bias))
    return cell_ct, cell_t


def test_tutorial_cell_outputs_and_gradients():
    cell_ct, cell_t = tutorial_cells()
    sc_ct, sc_t = cthtorch.jit.script(cell_ct), torch.jit.script(cell_t)
    assert kinds(sc_ct.graph) == kinds(sc_t.graph)
    assert "prim::CallMethod" in kinds(sc_ct.graph) and "prim::GetAttr" in kinds(sc_ct.graph)
    assert str(sc_ct.graph.inputs()[0].type()).endswith("MyCell")
    assert "if" in sc_ct.dg.code and "torch.neg" in sc_ct.dg.code
    # the nested calls of forward make a long line: torch hoists the add into `_0`, and so do we
    assert sc_ct.code == sc_t.code and "  _0 = torch.add((dg).forward((linear).forward(x, ), ), h)\n" in sc_ct.code
    x = np.random.RandomState(2).rand(3, 4).astype(np.float32)
    h = np.random.RandomState(3).rand(3, 4).astype(np.float32)
    out_ct, out_t = sc_ct(cthtorch.tensor(x), cthtorch.tensor(h)), sc_t(torch.tensor(x), torch.tensor(h))
    close(out_ct, out_t)
    close_ct(out_ct[0], cell_ct(cthtorch.tensor(x), cthtorch.tensor(h))[0])
    out_ct[0].sum().backward()
    out_t[0].sum().backward()
    close(sc_ct.linear.weight.grad, sc_t.linear.weight.grad)
    assert cell_ct.linear.weight.grad is not None           # the same parameters
    assert [n for n, _ in sc_ct.named_parameters()] == [n for n, _ in sc_t.named_parameters()]
    assert list(sc_ct.state_dict()) == list(sc_t.state_dict())
    sc_ct.eval()
    assert not sc_ct.training and not sc_ct.linear.training
    sc_ct.train()
    assert sc_ct.training


def test_tutorial_scripted_gate_in_traced_cell():
    # "Mixing Scripting and Tracing": the scripted gate keeps its control flow inside the trace
    cell_ct, cell_t = tutorial_cells()
    x = np.random.RandomState(5).rand(3, 4).astype(np.float32)
    h = np.random.RandomState(6).rand(3, 4).astype(np.float32)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        tr_ct = cthtorch.jit.trace(cell_ct, (cthtorch.tensor(x), cthtorch.tensor(h)))
    # the gate's interpreter converts a tensor to bool: not a Python bool of the trace, so no TracerWarning
    assert [str(w.message) for w in seen if issubclass(w.category, cthtorch.jit.TracerWarning)] == []
    tr_t = torch.jit.trace(cell_t, (torch.tensor(x), torch.tensor(h)))
    assert "if bool(" in tr_ct.dg.code and "prim::If" in kinds(tr_ct.dg.graph)
    assert tr_ct.code == tr_t.code and tr_ct.dg.code == tr_t.dg.code
    assert "prim::CallMethod" in kinds(tr_ct.graph)
    for sign in (1, -1):      # both branches of the gate, through the trace
        xs = sign * 10 * x
        out_ct = tr_ct(cthtorch.tensor(xs), cthtorch.tensor(h))
        out_t = tr_t(torch.tensor(xs), torch.tensor(h))
        close(out_ct, out_t)
        out_ct[0].sum().backward()
        out_t[0].sum().backward()
        close(cell_ct.linear.weight.grad, cell_t.linear.weight.grad)


# ---------------------------------------------------------------- a scripted LSTM cell loop

def lstm_loop(x, h, c, w_ih, w_hh, b):
    # type: (Tensor, Tensor, Tensor, Tensor, Tensor, Tensor) -> Tuple[Tensor, Tensor]
    for t in range(x.size(0)):
        gates = torch.mm(x[t], w_ih.t()) + torch.mm(h, w_hh.t()) + b
        i, f, g, o = gates.chunk(4, 1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
    return h, c


def test_lstm_loop_outputs_and_gradients():
    rs = np.random.RandomState(4)
    T, B, H = 6, 3, 5
    arrs = [rs.randn(T, B, H), rs.randn(B, H), rs.randn(B, H), rs.randn(4 * H, H) * 0.3,
            rs.randn(4 * H, H) * 0.3, rs.randn(4 * H) * 0.1]
    a_ct = [cthtorch.tensor(a.astype(np.float32), requires_grad=True) for a in arrs]
    a_t = [torch.tensor(a.astype(np.float32), requires_grad=True) for a in arrs]
    s_ct, s_t = both(lstm_loop)
    assert "prim::Loop" in kinds(s_ct.graph)
    out_ct, out_t = s_ct(*a_ct), s_t(*a_t)
    close(out_ct, out_t)
    (out_ct[0].sum() + out_ct[1].pow(2).sum()).backward()
    (out_t[0].sum() + out_t[1].pow(2).sum()).backward()
    for p, q in zip(a_ct, a_t):
        close(p.grad, q.grad, 1e-4)


# ---------------------------------------------------------------- modules: containers, constants, decorators

class Blocks(nn.Module):
    __constants__ = ["scale"]

    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(3, 3), nn.Linear(3, 3)])
        self.seq = nn.Sequential(nn.Linear(3, 2), nn.ReLU())
        self.scale = 2.0
        self.count = 1

    @cthtorch.jit.ignore
    def debug(self, x):
        return x.numpy().sum()

    @cthtorch.jit.export
    def twice(self, x):
        return x * self.scale

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        if self.training:
            x = x + self.count
        return self.seq(self.twice(x))


def test_module_containers_constants_exports():
    m = Blocks()
    sm = cthtorch.jit.script(m)
    g = str(sm.graph)
    assert 'prim::CallMethod[name="twice"]' in g
    assert 'prim::GetAttr[name="count"]' in g and "prim::Constant[value=2.]" in str(sm.twice.graph)
    assert 'prim::GetAttr[name="0"]' in g and "prim::Loop" not in g       # the ModuleList unrolled
    x = cthtorch.randn(4, 3)
    close_ct(sm(x), m(x))
    close_ct(sm.twice(x), m.twice(x))
    sm.eval()
    m.eval()
    close_ct(sm(x), m(x))
    assert sm.debug(x) == pytest.approx(float(x.numpy().sum()))
    assert sorted(n for n, _ in sm.named_parameters()) == sorted(n for n, _ in m.named_parameters())


def close_ct(a, b):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-6)


# ---------------------------------------------------------------- errors, as torch words them

def kw_fn(x, **kwargs):
    return x


def unknown_global(x):
    return unknown_thing(x)  # noqa: F821


def bad_add(x: int):
    return x + "a"


def branch_types(x, flag: bool):
    if flag:
        y = 1
    else:
        y = x
    return y


def gen_fn(x):
    yield x


def lambda_fn(x):
    f = lambda y: y  # noqa: E731
    return f(x)


def comp_if(xs: List[int]):
    return [x for x in xs if x > 0]


def try_fn(x):
    try:
        return x
    except Exception:
        return x


@pytest.mark.parametrize("fn", [kw_fn, unknown_global, bad_add, branch_types, gen_fn, lambda_fn, try_fn, comp_if])
def test_errors_like_torch(fn):
    with pytest.raises(Exception) as et:
        torch.jit.script(fn)
    with pytest.raises(Exception) as ec:
        cthtorch.jit.script(fn)
    assert type(ec.value).__name__ == type(et.value).__name__
    first = lambda e: str(e).strip().split("\n")[0]     # noqa: E731
    assert first(ec.value) == first(et.value)
    assert "<--- HERE" in str(ec.value)
    if type(et.value).__name__ == "NotSupportedError":
        assert isinstance(ec.value, cthtorch.jit.frontend.NotSupportedError)


# ---------------------------------------------------------------- TorchScript source text

def test_compile_source_round_trip():
    s = both(foo)[0]
    src = s.code
    fns = cthtorch.jit.frontend.compile_source(src, lambda name: (_ for _ in ()).throw(KeyError(name)))
    g = fns["foo"].graph
    from cthtorch.jit._module import ScriptFunction
    f2 = ScriptFunction(g, "foo")
    for n in (0, 3, 11):
        close_ct(f2(n), s(n))
    # while loops and for loops that break print with their conditions carried, and compile back
    no_names = lambda name: (_ for _ in ()).throw(KeyError(name))    # noqa: E731
    x = cthtorch.randn(3)
    for fn, args in ((opt_while, (x, 4, x)), (loops, (x, 7))):
        s = both(fn)[0]
        again = ScriptFunction(cthtorch.jit.frontend.compile_source(s.code, no_names)[fn.__name__].graph, "f")
        assert again(*args)[1:] == s(*args)[1:] if fn is loops else again(*args)[2] == s(*args)[2]
        close_ct(again(*args)[0], s(*args)[0])
    text = """
def f(x: Tensor, n: int) -> List[int]:
  a = annotate(List[int], [])
  y = ops.aten.relu(x)
  for i in range(n):
    a.append(i)
  return a
"""
    fns = cthtorch.jit.frontend.compile_source(text, lambda name: (_ for _ in ()).throw(KeyError(name)))
    assert ScriptFunction(fns["f"].graph, "f")(cthtorch.ones(1), 3) == [0, 1, 2]



def test_compile_sources_of_a_pytorch_archive(tmp_path):
    # the code/ of torch.jit.save's archive compiles (classes, their attributes, methods calling
    # each other's, Final constants); run with the same weights it gives torch's outputs
    import zipfile
    from cthtorch.jit._module import ScriptModule
    G_t, C_t = make_cell(torch)
    sc_t = torch.jit.script(C_t(torch.jit.script(G_t())))
    sc_t.save(str(tmp_path / "cell.pt"))
    z = zipfile.ZipFile(str(tmp_path / "cell.pt"))
    srcs = [(z.read(n).decode(), n.split("/code/", 1)[1][:-3].replace("/", "."), n)
            for n in z.namelist() if "/code/" in n and n.endswith(".py")]
    out = cthtorch.jit.frontend.compile_sources(srcs, lambda name: (_ for _ in ()).throw(KeyError(name)))
    by_name = {k.rpartition(".")[2]: k for k in out}      # torch names classes by their module
    lin = out[by_name["Linear"]]
    assert lin.parameters == ["weight", "bias"] and lin.constants == {"in_features": 4, "out_features": 4}
    assert "prim::If" in kinds(out[by_name["MyDecisionGate"]].methods["forward"].graph)

    def build(cls_name, **attrs):
        m = ScriptModule()
        for k, v in attrs.items():
            setattr(m, k, v)
        m._define_method("forward", out[by_name[cls_name]].methods["forward"].graph)
        return m
    linear = build("Linear",
                   weight=cthtorch.nn.Parameter(cthtorch.tensor(sc_t.linear.weight.detach().numpy())),
                   bias=cthtorch.nn.Parameter(cthtorch.tensor(sc_t.linear.bias.detach().numpy())))
    cell = build("MyCell", dg=build("MyDecisionGate"), linear=linear)
    x = np.random.RandomState(7).rand(3, 4).astype(np.float32)
    h = np.random.RandomState(8).rand(3, 4).astype(np.float32)
    for sign in (1, -1):
        close(cell(cthtorch.tensor(sign * x), cthtorch.tensor(h)), sc_t(torch.tensor(sign * x), torch.tensor(h)))


class NormDrop(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.drop = nn.Dropout(p)
        self.bn = nn.BatchNorm1d(3)

    def forward(self, x, scale: float = 2.0, bias: Optional[cthtorch.Tensor] = None):
        y = self.drop(self.bn(self.lin(x))) * scale
        if bias is not None:
            y = y + bias
        return y


def test_library_layers_and_method_defaults():
    # cthtorch.nn's own BatchNorm/Dropout/Linear forwards compile; defaults of forward's arguments apply
    m = NormDrop(0.0)
    sm = cthtorch.jit.script(m)
    x = cthtorch.randn(5, 3)
    close_ct(sm(x), m(x))                   # training: batch statistics, running stats updated
    close_ct(sm.bn.running_mean, m.bn.running_mean)
    m.eval()
    sm.eval()
    close_ct(sm(x), m(x))
    close_ct(sm(x, 3.0, x), m(x, 3.0, x))
    assert [a.name for a in sm._get_method("forward").schema.arguments][1:] == ["x", "scale", "bias"]


LAYERS = [
    ("Conv1d", (2, 3, 3), {}, (2, 2, 9)),
    ("Conv3d", (2, 3, 3), {}, (1, 2, 5, 5, 5)),
    ("Conv2d", (2, 3, 3), {"padding": 1, "padding_mode": "reflect"}, (1, 2, 6, 6)),
    ("Conv2d", (2, 3, 3), {"padding": 2, "padding_mode": "circular", "bias": False}, (1, 2, 6, 6)),
    ("MaxPool1d", (2,), {}, (1, 2, 8)),
    ("MaxPool3d", (2,), {"stride": 1}, (1, 2, 4, 4, 4)),
    ("MaxPool2d", (2,), {"return_indices": True}, (1, 2, 4, 4)),
    ("PixelShuffle", (2,), {}, (1, 8, 3, 3)),
    ("PixelUnshuffle", (2,), {}, (1, 2, 4, 4)),
]


@pytest.mark.parametrize("name, args, kw, shape", LAYERS, ids=[l[0] + str(i) for i, l in enumerate(LAYERS)])
def test_script_builtin_layers_match_eager_and_torch(name, args, kw, shape):
    # torch.jit.script of cthtorch's own layers: the F calls their forwards make resolve to aten
    # ops (boolean-dispatched return_indices included), and private attributes they read travel
    ct_m, th_m = getattr(nn, name)(*args, **kw), getattr(torch.nn, name)(*args, **kw)
    ct_m.load_state_dict({k: cthtorch.tensor(v.detach().numpy()) for k, v in th_m.state_dict().items()})
    x = np.random.RandomState(0).randn(*shape).astype(np.float32)
    a = cthtorch.jit.script(ct_m)(cthtorch.tensor(x))
    e = ct_m(cthtorch.tensor(x))
    b = torch.jit.script(th_m)(torch.tensor(x))
    a, e, b = [t if isinstance(t, tuple) else (t,) for t in (a, e, b)]
    for p, q, r in zip(a, e, b):
        assert cthtorch.equal(p, q)
        np.testing.assert_allclose(p.detach().numpy(), r.detach().numpy(), rtol=1e-5, atol=1e-6)


def static_and_dead(x, n: int):
    a = x + 1
    unused = x * 2              # dead: nothing reads it
    if 1 > 2:                   # a static condition: the branch is never taken
        a = a + 5
    if n > 3:
        b = a * 3
    else:
        b = a
    k = 2 * 3 + 1               # folded to 7
    if torch.jit.is_scripting():
        b = b - k
    return b


def test_code_folds_static_conditions_and_drops_dead_statements():
    """As torch's compiler cleans each graph it makes (constant propagation
    over immutable types, then dead-code elimination): .code shows neither
    the dead statement nor the static branch, and the same text as torch's."""
    s_ct, s_t = both(static_and_dead)
    assert s_ct.code == s_t.code, s_ct.code
    assert "unused" not in s_ct.code and "torch.gt(1, 2)" not in s_ct.code and "torch.mul(x, 2)" not in s_ct.code
    assert kinds(s_ct.graph) == kinds(s_t.graph)
    x = np.random.RandomState(1).randn(4).astype(np.float32)
    for n in (1, 5):
        close(s_ct(cthtorch.tensor(x), n), s_t(torch.tensor(x), n))


def list_writers(n: int) -> List[int]:
    out: List[int] = [5, 6, 7]
    d: Dict[str, int] = {"a": 1}
    out.insert(0, n)          # results unused: kept for their effect on out / d
    out.extend([n, n])
    out.pop()
    out.remove(6)
    out.reverse()
    d.setdefault("b", n)
    d.update({"c": 3})
    out.append(len(d))
    return out


def test_dead_code_elimination_keeps_container_writers():
    s_ct, s_t = both(list_writers)
    for n in (0, 9):
        assert s_ct(n) == s_t(n)
    assert kinds(s_ct.graph) == kinds(s_t.graph)


def to_device_dtype(x, y):
    return x.to(torch.device("cpu"), torch.float64) + y.to(x).sum() + torch.group_norm(x, 2).sum()


def test_to_overloads_and_group_norm_match_torch():
    s_ct, s_t = both(to_device_dtype)
    x = np.random.RandomState(2).randn(2, 4, 3).astype(np.float32)
    y = np.arange(3, dtype=np.int64)
    got = s_ct(cthtorch.tensor(x), cthtorch.tensor(y))
    close(got, s_t(torch.tensor(x), torch.tensor(y)))
    assert {"aten::to", "aten::group_norm"} <= kinds(s_ct.graph)


def grad_mode_branch(x):
    if torch.is_grad_enabled():
        return x * 2
    return x - 1


def test_state_reads_are_not_folded():
    """torch.is_grad_enabled() reads state at run time: constant
    propagation leaves it (and its branch) in the graph."""
    s_ct, s_t = both(grad_mode_branch)
    x = np.arange(3, dtype=np.float32)
    close(s_ct(cthtorch.tensor(x)), s_t(torch.tensor(x)))
    with cthtorch.no_grad(), torch.no_grad():
        close(s_ct(cthtorch.tensor(x)), s_t(torch.tensor(x)))
    assert {"aten::is_grad_enabled", "prim::If"} <= kinds(s_ct.graph)


def _script_named(lib):
    def a(x, y: int, z: int):
        x = x + y
        return x

    def b(x, n: int):
        for i in range(n):
            x = x * 2
        return x

    def c(x, unused: int):
        for i in range(3):
            x = x + i
        return x
    return [lib.jit.script(f) for f in (a, b, c)]


def test_script_input_names_are_torchs():
    """Parameters and loop counters the body reads print as torch's `%x.1`
    (its frontend reads a variable through a Load that takes the name);
    unread ones keep the plain name."""
    for fc, ft in zip(_script_named(cthtorch), _script_named(torch)):
        names = lambda g: [v.debugName() for v in g.inputs()] + \
            [list(list(n.blocks())[0].inputs())[0].debugName() for n in g.nodes() if n.kind() == "prim::Loop"]
        assert names(fc.graph) == names(ft.graph)
        assert fc.code == ft.code
    fc = _script_named(cthtorch)[2]
    assert cthtorch.equal(fc(cthtorch.zeros(2), 5), cthtorch.full((2,), 3.0))


def _bool_ops(a: bool, b: bool, x: int):
    c = True
    c &= a
    d = False
    d |= b
    d ^= True
    return a & True, a | b, a ^ b, True & a, a & b, c, d, a & (x > 2), x & 3, a & x


@pytest.mark.parametrize("a,b,x", [(True, False, 6), (False, True, 1), (True, True, 3)])
def test_scripted_bool_ops_on_python_bools_give_bools(a, b, x):
    """TorchScript's &, |, ^ (and their augmented forms) on Python bools give bools, on ints ints, and
    a bool with an int an int, as torch's scripted function returns them"""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = torch.jit.script(_bool_ops)(a, b, x)
    got = cthtorch.jit.script(_bool_ops)(a, b, x)
    assert [(type(v).__name__, v) for v in got] == [(type(v).__name__, v) for v in want]


def _legacy_script_modules(lib):
    """weiaicunzai/pytorch-cifar100's stochasticdepth.py block and RWKV_in_150_lines' RNN: torch.jit.ScriptModule
    subclasses whose @torch.jit.script_method methods compile when an instance is made"""
    class BasicBlock(lib.jit.ScriptModule):
        __constants__ = ["p"]

        def __init__(self, c, p):
            super().__init__()
            self.residual = lib.nn.Sequential(lib.nn.Conv2d(c, c, 3, padding=1, bias=False), lib.nn.BatchNorm2d(c))
            self.p = p

        @lib.jit.script_method
        def survival(self):
            var = lib.bernoulli(lib.tensor(self.p).float())
            return lib.equal(var, lib.tensor(1).float().to(var.device))

        @lib.jit.script_method
        def forward(self, x):
            if self.training:
                if self.survival():
                    x = self.residual(x) + x
            else:
                x = self.residual(x) * self.p + x
            return x

    class RNN(lib.jit.ScriptModule):
        def __init__(self, w):
            super().__init__()
            self.w = {"k": w}          # a plain attribute no script method reads

        @lib.jit.script_method
        def mix(self, x, state, i: int, k):
            state[2 * i] = x
            return lib.sigmoid(k @ x) + self.scale(state[2 * i + 1])

        def scale(self, s):
            return s * 2

        def forward(self, x, state):
            return self.mix(x, state, 1, self.w["k"])

    return BasicBlock, RNN


def test_legacy_script_methods_compile_and_run_as_torchs():
    outs = []
    for lib in (cthtorch, torch):
        BasicBlock, RNN = _legacy_script_modules(lib)
        lib.manual_seed(0)
        b = BasicBlock(2, 0.5)
        x = lib.randn(1, 2, 4, 4)
        train = [b(x).sum().item() for _ in range(6)]    # survival draws as torch's bernoulli does
        b.eval()
        r = RNN(lib.arange(9.0).view(3, 3) / 10)
        state = lib.ones(4, 3)
        y = r(lib.ones(3), state)
        outs.append((train, b(x).sum().item(), type(b.residual).__name__, sorted(b.state_dict()),
                     type(b.survival).__name__, b.survival.graph is not None, y.tolist(), state.tolist(),
                     isinstance(b, lib.jit.ScriptModule), hasattr(r, "scale")))
    (ours, theirs) = outs
    assert ours[0] == pytest.approx(theirs[0], rel=1e-5) and len(set(ours[0])) > 1
    assert ours[1] == pytest.approx(theirs[1], rel=1e-5)
    assert ours[2:] == theirs[2:]


def _tensor_and_casts(x, n: int):
    a = torch.tensor(1)
    b = torch.tensor(n, dtype=torch.float64)
    return a, b, x.float().double().half().int().long().short().char().byte(), x.to(x.device), x.cfloat()


def test_script_tensor_of_a_number_and_dtype_casts():
    """torch.tensor(1) in TorchScript is a 0-d int64 (not a list of one, not a float); x.float(), x.long()...
    are aten::to casts; x.to(device) takes TorchScript's to.prim_Device"""
    fs, ft = both(_tensor_and_casts)
    x = np.array([1.5, -2.0, 300.0], dtype=np.float32)
    for o, t in zip(fs(cthtorch.from_numpy(x), 3), ft(torch.from_numpy(x), 3)):
        assert o.dtype.__repr__().replace("cthtorch", "torch") == repr(t.dtype) and tuple(o.shape) == tuple(t.shape)
        assert o.tolist() == t.tolist()
    assert [n.kind() for n in fs.graph.nodes() if n.kind() == "aten::to"] == \
        [n.kind() for n in ft.graph.nodes() if n.kind() == "aten::to"]


def _device_strings_and_bool_tensor(x, flag: bool):
    return x.to("cpu"), torch.zeros(2, device="cpu"), x.to(device="cpu", dtype=torch.float64), torch.tensor(flag), \
        torch.tensor(True, dtype=torch.float32)


def test_script_device_strings_and_a_bool_tensor():
    """a str where a Device is expected converts as torch's (aten::device): x.to('cpu'), zeros(device='cpu');
    torch.tensor(True) is a 0-d bool (tensor.bool)"""
    fs, ft = both(_device_strings_and_bool_tensor)
    x = np.array([1.5, -2.0], dtype=np.float32)
    for o, t in zip(fs(cthtorch.from_numpy(x), False), ft(torch.from_numpy(x), False)):
        assert o.dtype.__repr__().replace("cthtorch", "torch") == repr(t.dtype) and tuple(o.shape) == tuple(t.shape)
        assert o.tolist() == t.tolist()
    assert fs.code == ft.code


def _script_calling_script_functions(lib):
    """ChatRWKV's pattern: @torch.jit.script helpers (MyStatic) called by name from script methods and from
    a scripted module's forward"""
    @lib.jit.script
    def helper(x, k: int):
        return x * k + 1

    @lib.jit.script
    def matmul_double(a, b):
        return (a @ b).double()

    class Mix(lib.jit.ScriptModule):
        @lib.jit.script_method
        def forward(self, x, w):
            return lib.sigmoid(matmul_double(x, w)) + helper(x, 2).sum()

    class M(lib.nn.Module):
        def forward(self, x):
            return helper(x, 3).relu()

    s = lib.jit.script(M())
    x = lib.tensor([1.0, -2.0])
    mix = Mix()
    out = mix(x, lib.ones(2, 2))
    return (s(x).tolist(), [n.kind() for n in s.graph.nodes()], out.tolist(), str(out.dtype).split(".")[-1],
            [n.kind() for n in mix.graph.nodes()])


def test_script_functions_called_by_name_from_script_code():
    assert _script_calling_script_functions(cthtorch) == _script_calling_script_functions(torch)


def test_annotation_naming_an_unseen_variable_is_torchs_error():
    """an annotation through a name the function cannot resolve (a closure's variable) is torch's
    'Unknown type name' RuntimeError, not a KeyError out of the resolver"""
    for lib in (cthtorch, torch):
        with pytest.raises(RuntimeError, match="Unknown type name 'lib.dtype'"):
            @lib.jit.script
            def f(a, d: lib.dtype):
                return a.to(d)
