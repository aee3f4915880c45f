"""The JIT IR (torch._C.Graph/Node/Value/Block and the JIT types), its
printing, the schema registry, the Python interpreter and ScriptFunction
objects, against the installed torch: the same graph built through both
APIs prints the same text."""
import pytest

import cthtorch
from oracle import require_torch

torch = require_torch()


def build_mixed(lib):
    """A graph exercising constants, name clashes, multi-output nodes,
    no-output nodes, complete tensor types and a nested block."""
    C = lib._C
    g = C.Graph()
    for v in [1.0, 0.5, 0.1, 1e-5, 1e20, -2.0, float("inf"), True, False, "cpu", None, [1, 2], [1.0, 2.5],
              lib.tensor(2), lib.device("cpu"), 7]:
        g.insertConstant(v)
    x = g.addInput("x")
    x.setDebugName("x")
    y = g.addInput()
    y.setDebugName("x")             # the older holder becomes x.1
    g.appendNode(g.create("prim::TupleUnpack", [x], 2))
    g.appendNode(g.create("prim::RaiseException", [x], 0))
    m = g.appendNode(g.create("aten::mul", [x, y]))
    m.output().setType(C.TensorType.create_from_tensor(lib.ones(2, 3)))
    g.registerOutput(m.output())
    k = g.appendNode(g.create("prim::If", [x], 1))
    b0, b1 = k.addBlock(), k.addBlock()
    with g.insert_point_guard(b0):
        c = g.insertConstant(3)
    b0.registerOutput(c)
    b1.registerOutput(x)
    k.output().setType(C.OptionalType(C.IntType.get()))
    g.registerOutput(k.output())
    return g


def test_graph_prints_as_torch():
    gc, gt = build_mixed(cthtorch), build_mixed(torch)
    assert str(gc) == str(gt)
    assert str(gc.copy()) == str(gt.copy())
    assert [n.kind() for n in gc.nodes()] == [n.kind() for n in gt.nodes()]


def test_empty_graph_and_node_str():
    assert str(cthtorch._C.Graph()) == str(torch._C.Graph()) == "graph():\n  return ()\n"
    for lib in (cthtorch, torch):
        g = lib._C.Graph()
        x = g.addInput("x")
        n = g.appendNode(g.create("aten::mul", [x, x]))
        assert str(n) == "%1 : Tensor = aten::mul(%x, %x)\n"


def test_names_uniquify_like_torch():
    res = []
    for lib in (cthtorch, torch):
        g = lib._C.Graph()
        a, b, c = g.addInput("rv"), g.addInput("rv"), g.addInput("rv")
        res.append([v.debugName() for v in (a, b, c)])
    assert res[0] == res[1]


def test_types_print_as_torch():
    for name in ("IntType", "FloatType", "BoolType", "StringType", "NoneType", "NumberType", "AnyType",
                 "DeviceObjType"):
        assert str(getattr(cthtorch._C, name).get()) == str(getattr(torch._C, name).get())
    C, T = cthtorch._C, torch._C
    for mk in (lambda M: M.ListType(M.IntType.get()), lambda M: M.OptionalType(M.TensorType.get()),
               lambda M: M.TupleType([M.IntType.get(), M.TensorType.get()]),
               lambda M: M.DictType(M.StringType.get(), M.TensorType.get()), lambda M: M.TensorType.get()):
        assert str(mk(C)) == str(mk(T))
    tc = C.TensorType.create_from_tensor(cthtorch.ones(2, 3))
    tt = T.TensorType.create_from_tensor(torch.ones(2, 3))
    assert (tc.scalarType(), tc.sizes(), tc.dim(), tc.requires_grad(), str(tc.device())) == \
        (tt.scalarType(), tt.sizes(), tt.dim(), tt.requires_grad(), str(tt.device()))
    assert C.IntType.get() is C.IntType.get()
    assert C.ListType(C.IntType.get()) == C.ListType(C.IntType.get())


def test_node_editing():
    C = cthtorch._C
    g = C.Graph()
    x, y = g.addInput("x"), g.addInput("y")
    a = g.appendNode(g.create("aten::add", [x, y]))
    b = g.appendNode(g.create("aten::mul", [a.output(), a.output()]))
    g.registerOutput(b.output())
    assert [u.user.kind() for u in a.output().uses()] == ["aten::mul", "aten::mul"]
    assert a.output().hasUses() and not b.output().uses()[0].user.kind() != "prim::Return"
    c = g.create("aten::sub", [x, y])
    c.insertBefore(b)
    b.replaceInput(1, c.output()) if hasattr(b, "replaceInput") else None
    a.output().replaceAllUsesWith(c.output())
    assert not a.hasUses()
    a.destroy()
    assert [n.kind() for n in g.nodes()] == ["aten::sub", "aten::mul"]
    c.moveAfter(b)   # now used before defined: lint catches it
    with pytest.raises(RuntimeError):
        g.lint()
    c.moveBefore(b)
    g.lint()
    b.removeInput(1)
    assert len(b.inputs()) == 1 and len(c.output().uses()) == 1
    b.addInput(y)
    b.i_("alpha", 2)
    b.s_("name", "m")
    b.is_("dims", [1, 2])
    assert b.attributeNames() == ["alpha", "name", "dims"]
    assert b.i("alpha") == 2 and b.kindOf("dims") == "is" and getattr(b, "is")("dims") == [1, 2]
    assert b.hasAttribute("name") and not b.hasAttribute("nope")
    with pytest.raises(RuntimeError):
        b.destroy()   # its output is the graph's output


def test_schema_registry():
    sc = cthtorch._C._jit_get_schemas_for_operator("aten::add")
    st = torch._C._jit_get_schemas_for_operator("aten::add")
    by_c = {s.overload_name: s for s in sc}
    by_t = {s.overload_name: s for s in st}
    for ovl in ("Tensor", "Scalar", "out"):
        assert str(by_c[ovl]) == str(by_t[ovl])
        for a, b in zip(by_c[ovl].arguments, by_t[ovl].arguments):
            assert (a.name, str(a.type), a.default_value, a.kwarg_only) == \
                (b.name, str(b.type), b.default_value, b.kwarg_only)
    relu = cthtorch._C._jit_get_schemas_for_operator("aten::relu_")
    assert relu and relu[0].arguments[0].alias_info == "a!"
    assert cthtorch._C._jit_get_schemas_for_operator("aten::no_such_op") == []
    s = cthtorch._C.parse_schema("aten::foo.bar(Tensor self, int[2] k=1, *, float? eps=None) -> (Tensor a, Tensor b)")
    assert (s.name, s.overload_name, [a.name for a in s.arguments], len(s.returns)) == \
        ("aten::foo", "bar", ["self", "k", "eps"], 2)
    assert s.arguments[1].N == 2 and s.arguments[2].kwarg_only
    assert str(s) == "aten::foo.bar(Tensor self, int[2] k=1, *, float? eps=None) -> (Tensor a, Tensor b)"


def _graph_relu_add_size(lib):
    C = lib._C
    g = C.Graph()
    x, y = g.addInput("x"), g.addInput("y")
    one = g.insertConstant(1)
    n = g.insertNode(g.create("aten::add", [x, y, one]))
    r = g.insertNode(g.create("aten::relu", [n.output()]))
    s = g.insertNode(g.create("aten::size", [x, g.insertConstant(0)]))
    s.output().setType(C.IntType.get())
    t = g.insertNode(g.create("prim::NumToTensor", [s.output()]))
    m = g.insertNode(g.create("aten::mul", [r.output(), t.output()]))
    g.registerOutput(m.output())
    return g


def test_interpreter_runs_graph_with_autograd():
    from cthtorch.jit._module import ScriptFunction
    f = ScriptFunction(_graph_relu_add_size(cthtorch), "f")
    a = cthtorch.randn(3, 4, requires_grad=True)
    b = cthtorch.randn(3, 4)
    out = f(a, b)
    a2 = a.detach().clone().requires_grad_()
    ref = cthtorch.relu(a2 + b) * 3
    assert cthtorch.allclose(out, ref)
    out.sum().backward()
    ref.sum().backward()
    assert cthtorch.allclose(a.grad, a2.grad)
    # torch's text: the return's inlined arguments make a long line, so they are hoisted, in order
    assert f.code == ("def f(x: Tensor,\n    y: Tensor) -> Tensor:\n  _0 = torch.relu(torch.add(x, y))\n"
                      "  _1 = ops.prim.NumToTensor(torch.size(x, 0))\n  return torch.mul(_0, _1)\n")
    assert str(f.schema) == "f(Tensor x, Tensor y) -> Tensor"


def test_interpreter_control_flow():
    """prim::Loop/prim::If over scalars and tensors: the docs' loop example."""
    from cthtorch.jit._module import ScriptFunction
    C = cthtorch._C
    g = C.Graph()
    n_in = g.addInput("len")
    n_in.setType(C.IntType.get())
    rv0 = g.insertNode(g.create("aten::zeros", [g.insertConstant([3, 4]), g.insertConstant(None),
                                                g.insertConstant(None), g.insertConstant(None),
                                                g.insertConstant(None)])).output()
    loop = g.insertNode(g.create("prim::Loop", [n_in, g.insertConstant(True), rv0], 1))
    body = loop.addBlock()
    i = body.addInputToBlock("i")
    i.setType(C.IntType.get())
    rv = body.addInputToBlock("rv")
    with g.insert_point_guard(body):
        lt = g.insertNode(g.create("aten::lt", [i, g.insertConstant(10)]))
        lt.output().setType(C.BoolType.get())
        one = g.insertConstant(1.0)
        alpha = g.insertConstant(1)
        br = g.insertNode(g.create("prim::If", [lt.output()], 1))
        t, e = br.addBlock(), br.addBlock()
        with g.insert_point_guard(t):
            t.registerOutput(g.insertNode(g.create("aten::sub", [rv, one, alpha])).output())
        with g.insert_point_guard(e):
            e.registerOutput(g.insertNode(g.create("aten::add", [rv, one, alpha])).output())
        cond = g.insertConstant(True)
    body.registerOutput(cond)
    body.registerOutput(br.output())
    g.registerOutput(loop.output())
    g.lint()
    f = ScriptFunction(g, "foo")
    for n in (0, 3, 12):
        expect = float(-min(n, 10) + max(n - 10, 0))
        assert cthtorch.equal(f(n), cthtorch.full((3, 4), expect))
