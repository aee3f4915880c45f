"""torch.jit.trace / trace_module: the graphs recorded at the dispatch point
have torch's node kinds for the same program, the traced objects run
through the interpreter with eager's outputs and gradients, and the
check_trace warnings/errors are torch's."""
import os
import sys
import warnings

import pytest

import cthtorch
from oracle import require_torch

torch = require_torch()


def kinds(graph, skip_constants=True):
    return [n.kind() for n in graph.nodes() if not (skip_constants and n.kind() == "prim::Constant")]


def both(make):
    """make(lib) for cthtorch and torch."""
    return make(cthtorch), make(torch)


def trace_both(fn_of_lib, shapes, **kw):
    out = []
    for lib in (cthtorch, torch):
        lib.manual_seed(0)
        ins = tuple(lib.rand(*s) for s in shapes)
        out.append(lib.jit.trace(fn_of_lib(lib), ins, **kw))
    return out


def test_fill_row_zero_docs_example():
    def make(lib):
        def fill_row_zero(x):
            x[0] = lib.rand(*x.shape[1:2])
            return x
        return fill_row_zero
    tc, tt = trace_both(make, [(3, 4)], check_trace=False)
    assert kinds(tc.graph) == kinds(tt.graph) == ["aten::size", "prim::NumToTensor", "aten::Int",
                                                   "prim::ListConstruct", "aten::rand", "aten::select",
                                                   "aten::copy_"]
    # torch's text: the factory's options as recorded (device cpu, pin_memory False), and expressions that make
    # a line of 40 characters hoisted into temporaries
    assert tc.code == tt.code, tc.code
    # it generalizes: the row length comes from the input's size
    x = cthtorch.zeros(2, 7)
    cthtorch.manual_seed(3)
    y = tc(x)
    assert y is x or cthtorch.equal(y, x)
    cthtorch.manual_seed(3)
    expect = cthtorch.rand(7)
    assert cthtorch.equal(x[0], expect) and cthtorch.equal(x[1], cthtorch.zeros(7))


def test_size_arithmetic_stays_in_graph():
    def make(lib):
        return lambda x: x.view(x.size(0) * 2, -1)
    tc, tt = trace_both(make, [(4, 4)])
    assert kinds(tc.graph) == kinds(tt.graph)
    assert tc(cthtorch.rand(6, 4)).shape == (12, 2)


def test_traced_function_outputs_and_grads():
    def f(lib):
        def g(x, y):
            z = lib.tanh(x @ y.t()) * 0.5 + x.sum(1, keepdim=True)
            return z.relu(), lib.sigmoid(z).mean()
        return g
    tc, tt = trace_both(f, [(3, 5), (4, 5)])
    assert kinds(tc.graph) == kinds(tt.graph)
    x = cthtorch.randn(3, 5, requires_grad=True)
    y = cthtorch.randn(4, 5, requires_grad=True)
    a, b = tc(x, y)
    x2, y2 = x.detach().clone().requires_grad_(), y.detach().clone().requires_grad_()
    a2, b2 = f(cthtorch)(x2, y2)
    assert cthtorch.allclose(a, a2) and cthtorch.allclose(b, b2)
    (a.sum() + b).backward()
    (a2.sum() + b2).backward()
    assert cthtorch.allclose(x.grad, x2.grad) and cthtorch.allclose(y.grad, y2.grad)


def test_inplace_ops_and_views():
    def make(lib):
        def f(x):
            y = x.clone()
            y.add_(1)
            y[:, 1] = 0
            v = y.transpose(0, 1)
            v.mul_(2)
            return y
        return f
    tc, tt = trace_both(make, [(3, 4)])
    assert kinds(tc.graph) == kinds(tt.graph)
    x = cthtorch.rand(3, 4)
    assert cthtorch.equal(tc(x), make(cthtorch)(x))


def _resnet18(lib):
    """torchvision's ResNet-18 structure built with lib's nn (bench/bench_fx.py)."""
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "bench"))
    try:
        import bench_fx
    finally:
        sys.path.pop(0)
    return bench_fx.resnet18(lib)


def test_module_trace_kinds_match_torch():
    """A traced ResNet-18: the same node kinds as torch's trace of the same
    program, at the top, in a submodule's graph and inlined."""
    mc, mt = _resnet18(cthtorch).eval(), _resnet18(torch).eval()
    tc = cthtorch.jit.trace(mc, cthtorch.rand(1, 3, 32, 32), check_trace=False)
    tt = torch.jit.trace(mt, torch.rand(1, 3, 32, 32), check_trace=False)
    assert kinds(tc.graph) == kinds(tt.graph)
    assert kinds(tc.layer2.graph) == kinds(tt.layer2.graph)
    assert kinds(getattr(tc.layer2, "0").graph) == kinds(getattr(tt.layer2, "0").graph)
    assert tc.layer2[0] is getattr(tc.layer2, "0") and len(tc.layer2) == 2
    assert kinds(tc.inlined_graph) == kinds(tt.inlined_graph)
    assert str(tc.graph.inputs()[0].type()).endswith(".ResNet")
    assert str(tc.layer2[1].graph.inputs()[0].type()).endswith(".BasicBlock")
    assert [n for n, _ in tc.named_parameters()] == [n for n, _ in mc.named_parameters()]
    assert set(tc.state_dict()) == set(mc.state_dict())


def test_module_trace_outputs_and_grads_equal_eager():
    cthtorch.manual_seed(0)
    m = _resnet18(cthtorch).eval()
    t = cthtorch.jit.trace(m, cthtorch.rand(2, 3, 32, 32))
    x = cthtorch.rand(2, 3, 32, 32)
    out_t = t(x)
    out_e = m(x)
    assert cthtorch.allclose(out_t, out_e, atol=1e-6)
    out_t.square().sum().backward()
    grads_t = [p.grad.clone() for p in m.parameters()]
    m.zero_grad()
    m(x).square().sum().backward()
    for g, p in zip(grads_t, m.parameters()):
        assert cthtorch.allclose(g, p.grad, atol=1e-5)


def test_resnet18_trace():
    from cthtorch.vision.models import resnet18
    cthtorch.manual_seed(0)
    m = resnet18(num_classes=10).eval()
    x = cthtorch.rand(1, 3, 32, 32)
    t = cthtorch.jit.trace(m, x, check_trace=False)
    assert cthtorch.allclose(t(x), m(x), atol=1e-5)
    assert "aten::_convolution" in kinds(t.inlined_graph)
    x2 = cthtorch.rand(1, 3, 32, 32, requires_grad=True)
    t(x2).sum().backward()
    x3 = x2.detach().clone().requires_grad_()
    m(x3).sum().backward()
    assert cthtorch.allclose(x2.grad, x3.grad, atol=1e-5)


def test_tracer_warning_for_python_bool():
    def f(x):
        if x.sum() > 0:
            return x * 2
        return x
    with pytest.warns(cthtorch.jit.TracerWarning, match="Converting a tensor to a Python boolean"):
        cthtorch.jit.trace(f, cthtorch.rand(3))


def test_check_trace_nondeterministic_and_mismatch():
    def f(x):
        return cthtorch.nn.functional.dropout(x, 0.5, True)
    with pytest.warns(cthtorch.jit.TracerWarning, match="Trace had nondeterministic nodes"):
        cthtorch.jit.trace(f, cthtorch.rand(10))
    count = [0]

    def g(x):
        count[0] += 1
        return x + count[0]
    with pytest.warns(cthtorch.jit.TracerWarning, match="Output nr 1. of the traced function does not match"):
        cthtorch.jit.trace(g, cthtorch.rand(3))


def test_check_inputs_graph_diff_raises():
    def f(x):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if x.shape[0] > 2:
                return x * 2
        return x + 1
    with pytest.raises(cthtorch.jit._trace.TracingCheckError, match="Graphs differed across invocations"):
        cthtorch.jit.trace(f, cthtorch.rand(3), check_inputs=[(cthtorch.rand(1),)])


def test_trace_errors():
    with pytest.raises(RuntimeError, match="Cannot insert a Tensor that requires grad as a constant"):
        w = cthtorch.rand(3, requires_grad=True)
        cthtorch.jit.trace(lambda x: x * w, cthtorch.rand(3))
    with pytest.raises(RuntimeError, match="cannot be traced"):
        cthtorch.jit.trace(lambda x: x, 3)
    assert not cthtorch.jit.is_tracing()


def test_tracing_state_is_seen_inside_a_trace_only():
    """torch._C._get_tracing_state() is the tracer's state while a trace runs (torchvision's _is_tracing(),
    which DETR's nested_tensor_from_tensor_list asks) and None outside; _C._is_tracing() agrees"""
    def run(lib):
        seen = []

        def f(x):
            seen.append((lib._C._get_tracing_state() is not None, lib._C._is_tracing()))
            return x * 2
        lib.jit.trace(f, lib.ones(2))
        return seen, lib._C._get_tracing_state(), lib._C._is_tracing()
    ours, theirs = both(run)
    assert ours == theirs and ours[0][0] == (True, True) and ours[1:] == (None, False)


def test_split_and_chunk_pieces_are_traced():
    """A Tensor[]-returning op's pieces come out of prim::ListUnpack (as in
    torch's trace), not as constants baked from the example input."""
    def fn(lib):
        def f(x):
            a, b = x.chunk(2, -1)
            c, d, e = lib.split(x, 2, 1)
            return a * b, c - d * e.sum()
        return f

    x = cthtorch.randn(4, 6)
    tc = cthtorch.jit.trace(fn(cthtorch), (x,))
    tt = torch.jit.trace(fn(torch), (torch.from_numpy(x.numpy()),))
    assert kinds(tc.graph) == kinds(tt.graph)
    x2 = cthtorch.randn(4, 6)
    for got, want in zip(tc(x2), fn(cthtorch)(x2)):
        assert cthtorch.equal(got, want)


@pytest.mark.parametrize("body", [
    "x.new_zeros(4)", "x.new_ones(4)", "x.new_empty(4).fill_(1)", "x.new_zeros(2, 3)", "x.new_zeros([2, 3])",
    "x.new_zeros(x.size(0))", "x.new_zeros(x.size())", "x.new_zeros(3, dtype=lib.int64)",
    "x.new_full((2,), 3.0)", "x.tile(2)", "x.view(-1)", "x.reshape(x.size(0) * 2)", "x.flip(0)",
])
def test_int_where_an_int_list_is_declared(body):
    """One int (or varargs ints) for an int[] argument binds as a one-element
    list, as torch's schema matching does: the same graph as torch's, and
    sizes taken from the input stay in the graph."""
    def make(lib):
        ns = {"lib": lib, "__name__": __name__}
        exec("def f(x):\n    return " + body, ns)
        return ns["f"]
    tc, tt = trace_both(make, [(2, 2)])
    assert kinds(tc.graph) == kinds(tt.graph)
    assert tc.code == tt.code, tc.code
    x = cthtorch.ones(2, 2)
    got, want = tc(x), make(cthtorch)(x)
    assert got.dtype == want.dtype and cthtorch.equal(got, want)
    if "size" in body:   # generalizes to another input size
        x = cthtorch.ones(5, 2)
        assert cthtorch.equal(tc(x), make(cthtorch)(x))


def test_traced_values_take_local_names():
    """As torch's tracer: a value an op reads is named after the caller's
    local variable that holds it (%y, %z); unread outputs stay numbered."""
    def make(lib):
        def f(x):
            y = x * 2
            z = y.relu()
            return z + y
        return f
    tc, tt = trace_both(make, [(3,)])
    names = lambda g: [o.debugName() for n in g.nodes() for o in n.outputs() if n.kind() != "prim::Constant"]
    assert names(tc.graph) == names(tt.graph) == ["y", "z", "5"]
    assert tc.code == tt.code


def test_tensor_literal_is_a_constant_moved_and_detached():
    """torch.tensor(...) in traced code is recorded as torch's tracer does:
    the data as a constant, aten::to its device and dtype, aten::detach;
    .code shows torch.to(CONSTANTS.c0, ...), and a saved trace loads back."""
    import io

    def make(lib):
        def f(x):
            a = lib.tensor([1., 2.])
            b = lib.tensor(3, dtype=lib.float64)
            c = lib.tensor([[1, 2], [3, 4]])
            return x * a + b, c.sum() + x
        return f
    tc, tt = trace_both(make, [(2,)])
    assert kinds(tc.graph) == kinds(tt.graph)
    assert "torch.to(CONSTANTS.c0, torch.device(\"cpu\"), 6)" in tc.code
    assert tc.code == tt.code
    x = cthtorch.full((2,), 2.0)
    want = make(cthtorch)(x)
    buf = io.BytesIO()
    cthtorch.jit.save(tc, buf)
    buf.seek(0)
    loaded = cthtorch.jit.load(buf)
    for m in (tc, loaded):
        got = m(x)
        assert all(g.dtype == w.dtype and cthtorch.equal(g, w) for g, w in zip(got, want))


def test_one_tensor_passed_as_two_inputs_keeps_two_graph_inputs():
    """trace(f, (x, x)): torch passes the second as a view, so each argument keeps its own graph
    input; the traced function then computes f for two different tensors."""
    def f(a, b):
        return a * 2 + b

    def g(p):
        return p[0] - p[1]

    for fn, make in ((f, lambda x: (x, x)), (g, lambda x: ((x, x),))):
        c = cthtorch.jit.trace(fn, make(cthtorch.randn(3)))
        t = torch.jit.trace(fn, make(torch.randn(3)))
        assert c.code == t.code
        args = (cthtorch.ones(3), cthtorch.zeros(3)) if fn is f else ((cthtorch.ones(3), cthtorch.zeros(3)),)
        assert c(*args).tolist() == fn(*args).tolist()


def _trace_both(fn, make_input, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cthtorch.jit.trace(fn(cthtorch), make_input(cthtorch), **kw), \
            torch.jit.trace(fn(torch), make_input(torch), **kw)


def test_conversions_and_python_slices_are_recorded_as_torch_records_them():
    """x.long(), x.to(dtype): torch's aten::to.dtype (not the _to_copy they run as); x[:3], x[2:],
    x[::2], x[:, 1:]: slice bounds 0 and INT64_MAX where Python omits them. Graphs and code equal."""
    def convs(lib):
        return lambda a: a.long() + a.double().int() + a.to(lib.float16).float().long()

    def slices(lib):
        return lambda a: a[:3] + a[1:4] + a[::2][:3] + a[2:][:3] + a[-3:] + a[:, 1:][:3, 0:1].sum()

    for fn, shape in ((convs, (3,)), (slices, (6, 4))):
        c, t = _trace_both(fn, lambda lib: lib.ones(*shape))
        assert c.code == t.code
        assert [n.kind() for n in c.graph.nodes()] == [n.kind() for n in t.graph.nodes()]
        assert str(c.graph).replace(__file__, "") == str(t.graph).replace(__file__, "")
        x = torch.randn(*shape)
        assert c(cthtorch.tensor(x.numpy())).tolist() == t(x).tolist()


def test_tensor_constants_print_their_data_as_torch_graphs_do():
    """prim::Constant tensors print as torch's: {v} for one element, the data in torch's C++ layout
    up to ten elements (fixed, scaled or scientific as the magnitudes need; 2-d slices of higher
    dimensions under their headers), <Tensor> beyond."""
    datas = [[1.5, 2.0, 3.0], [1, 2, 3], [[1., 2.], [3., 4.]], [1e-5, 2.0], [123456.7, 1.0], [True, False],
             [-1.5, 2.25], [1e10, 1.0], [[1, 2, 3], [4, 5, 6]], [1.0, float("nan"), float("inf")], [-3, 100],
             [0.001, 0.002], [1e-5, 0.0], [-1e-7, 1e-7], [123456.5, 234567.5], [1234567.5, 2e6], [12345.5, 12.5],
             [0.0, 0.05], [1234567.0, 2e6], [7.0], 2.5, 123456789.0, list(range(10)), list(range(11)),
             [[0.001, 0.002], [0.003, 0.004]], [[0.001], [0.002], [0.003]], [[123456.5, 2e5]], [[1.5] * 10],
             [[[1.5, 2.5]], [[100.0, 3.0]]], [[[0.001, 0.002]], [[1.5, 2.5]]], [[[[1.0, 1.0]]], [[[1.0, 1.0]]]]]

    def consts(g):
        return [str(n).split(" = ", 1)[1].split(" # ")[0] for n in g.nodes()
                if n.kind() == "prim::Constant" and n.output().type().kind() == "TensorType"]

    seen = set()
    for d in datas:
        for dt in ("float32", "float64", "int64") if not isinstance(d, float) else ("float32",):
            if dt == "int64" and "nan" in repr(d):
                continue
            c, t = _trace_both(lambda lib: (lambda a: a * lib.tensor(d, dtype=getattr(lib, dt))),
                               lambda lib: lib.ones(lib.tensor(d).shape), check_trace=False)
            assert consts(c.graph) == consts(t.graph), (d, dt)
            seen.add(consts(c.graph)[0])
    assert any("e-05" in s for s in seen) and any(" * " in s for s in seen) and any("<Tensor>" in s for s in seen)
    assert any("(2,1,.,.) =" in s for s in seen)


def test_traced_torch_tensor_literal_warns_at_the_users_line():
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        cthtorch.jit.trace(lambda a: a * cthtorch.tensor([1.5, 2.0]), cthtorch.ones(2))
    msgs = [w for w in seen if issubclass(w.category, cthtorch.jit.TracerWarning)]
    assert len(msgs) == 1 and "torch.tensor results are registered as constants" in str(msgs[0].message)
    assert msgs[0].filename == __file__


def test_a_function_without_a_name_is_refused_as_torch_refuses_it():
    import functools
    for lib in (cthtorch, torch):
        with pytest.raises(RuntimeError, match="Could not get name of python class object"):
            lib.jit.trace(functools.partial(lib.add, other=1), lib.ones(2))


def test_scripted_submodule_returning_a_tuple_inside_a_trace():
    """The scripted call is traced as one prim::CallMethod typed as its forward returns, of the
    submodule's own class type; the unpacked results carry the traced tensors' types; no
    TracerWarning from the interpreter's bool."""
    def make(lib):
        class G(lib.nn.Module):
            def forward(self, x):
                if bool(x.sum() > 0):
                    return x, x * 2
                return x, -x

        class C(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.g = lib.jit.script(G())

            def forward(self, x):
                a, b = self.g(x)
                return a + b
        return C()

    out = []
    for lib in (cthtorch, torch):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            tr = lib.jit.trace(make(lib), lib.ones(3))
        assert not [w for w in seen if w.category.__name__ == "TracerWarning"]
        nodes = {n.kind(): n for n in tr.graph.nodes()}
        out.append((tr.code, str(nodes["prim::CallMethod"].output().type()),
                    str(nodes["prim::GetAttr"].output().type()).rpartition(".")[2],
                    str(nodes["prim::TupleUnpack"]).split(" = ")[0],
                    tr(-lib.ones(3)).tolist()))
    assert out[0] == out[1]
