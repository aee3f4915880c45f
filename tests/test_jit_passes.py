"""Graph passes on graph text: parse_ir -> pass -> printed graph, compared
with the expected text and with torch's own pass on the same text; freeze
and optimize_for_inference on traced modules (outputs equal eager)."""
import re
import warnings

import pytest

import cthtorch
from oracle import require_torch

torch = require_torch()


def canon(text):
    """Graph text with source comments dropped and numbered values renamed
    in order of appearance (numbering differs between graphs, not meaning)."""
    names = {}

    def sub(m):
        return names.setdefault(m.group(0), "%%v%d" % len(names))
    text = re.sub(r" # .*", "", text)
    return re.sub(r"%\d+\b", sub, text).strip()


def run_pass(text, ours, theirs):
    g = cthtorch._C.parse_ir(text)
    ours(g)
    gt = torch._C.parse_ir(text)
    theirs(gt)
    return canon(str(g)), canon(str(gt))


LOOP_IF = '''graph(%len.1 : int):
  %20 : int = prim::Constant[value=1]()
  %12 : bool = prim::Constant[value=1]()
  %4 : NoneType = prim::Constant()
  %1 : int = prim::Constant[value=3]()
  %2 : int = prim::Constant[value=4]()
  %15 : int = prim::Constant[value=10]()
  %19 : float = prim::Constant[value=1.]()
  %3 : int[] = prim::ListConstruct(%1, %2)
  %rv.1 : Tensor = aten::zeros(%3, %4, %4, %4, %4)
  %rv : Tensor = prim::Loop(%len.1, %12, %rv.1)
    block0(%i.1 : int, %rv.29 : Tensor):
      %16 : bool = aten::lt(%i.1, %15)
      %rv.27 : Tensor = prim::If(%16)
        block0():
          %rv.5 : Tensor = aten::sub(%rv.29, %19, %20)
          -> (%rv.5)
        block1():
          %rv.11 : Tensor = aten::add(%rv.29, %19, %20)
          -> (%rv.11)
      -> (%12, %rv.27)
  return (%rv)
'''


def test_parse_ir_round_trip_and_run():
    g = cthtorch._C.parse_ir(LOOP_IF)
    assert canon(str(g)) == canon(LOOP_IF)
    assert [n.kind() for n in g.nodes()] == [n.kind() for n in torch._C.parse_ir(LOOP_IF).nodes()]
    from cthtorch.jit._module import ScriptFunction
    f = ScriptFunction(g, "foo")
    assert cthtorch.equal(f(12), cthtorch.full((3, 4), -8.0))
    t = cthtorch._C.parse_ir('''graph(%x : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)):
  %c : Long(requires_grad=0, device=cpu) = prim::Constant[value={2}]()
  %y : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu) = aten::mul(%x, %c)
  return (%y)
''')
    assert str(t.inputs()[0].type()) == "Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)"
    assert cthtorch.equal(ScriptFunction(t, "f")(cthtorch.ones(2, 3)), cthtorch.full((2, 3), 2.0))


DEAD = '''graph(%x : Tensor, %y : Tensor):
  %1 : int = prim::Constant[value=1]()
  %2 : Tensor = aten::add(%x, %y, %1)
  %3 : Tensor = aten::mul(%2, %y)
  %4 : Tensor = aten::add_(%x, %y, %1)
  %5 : Tensor = aten::relu(%x)
  return (%5)
'''


def test_dce():
    ours, theirs = run_pass(DEAD, cthtorch._C._jit_pass_dce, torch._C._jit_pass_dce)
    assert ours == theirs
    assert "aten::mul" not in ours and "aten::add_" in ours


CONSTS = '''graph(%x : Tensor):
  %a : int = prim::Constant[value=2]()
  %b : int = prim::Constant[value=3]()
  %t : bool = prim::Constant[value=1]()
  %c : int = aten::mul(%a, %b)
  %d : bool = aten::lt(%c, %b)
  %r : Tensor = prim::If(%d)
    block0():
      %1 : Tensor = aten::neg(%x)
      -> (%1)
    block1():
      %2 : Tensor = aten::relu(%x)
      -> (%2)
  %l : int[] = prim::ListConstruct(%c, %a)
  %v : Tensor = aten::view(%r, %l)
  return (%v)
'''


def test_constant_propagation():
    g = cthtorch._C.parse_ir(CONSTS)
    cthtorch._C._jit_pass_constant_propagation(g)
    kinds = [n.kind() for n in g.nodes()]
    assert "prim::If" not in kinds and "aten::mul" not in kinds and "aten::lt" not in kinds
    assert "aten::relu" in kinds and "aten::neg" not in kinds
    lst = [n for n in g.nodes() if n.kind() == "prim::Constant" and n.output().type().annotation_str == "List[int]"]
    assert lst and getattr(lst[0], "is")("value") == [6, 2]
    # the same kinds as torch's pass leaves (constants aside)
    gt = torch._C.parse_ir(CONSTS)
    torch._C._jit_pass_constant_propagation(gt)
    strip = lambda gr: [n.kind() for n in gr.nodes() if n.kind() != "prim::Constant"]   # noqa: E731
    assert strip(g) == strip(gt)
    from cthtorch.jit._module import ScriptFunction
    x = cthtorch.randn(12)
    assert cthtorch.equal(ScriptFunction(g, "f")(x), x.relu().view(6, 2))


def test_constant_propagation_folds_tensors_not_random():
    g = cthtorch._C.parse_ir('''graph(%x : Tensor):
  %s : int[] = prim::Constant[value=[2, 2]]()
  %n : NoneType = prim::Constant()
  %o : Tensor = aten::ones(%s, %n, %n, %n, %n)
  %r : Tensor = aten::rand(%s, %n, %n, %n, %n)
  %one : int = prim::Constant[value=1]()
  %two : Tensor = aten::add(%o, %o, %one)
  %y : Tensor = aten::mul(%x, %two)
  %z : Tensor = aten::add(%y, %r, %one)
  return (%z)
''')
    cthtorch._C._jit_pass_constant_propagation(g)
    kinds = [n.kind() for n in g.nodes()]
    assert "aten::ones" not in kinds and "aten::rand" in kinds
    consts = [n for n in g.nodes() if n.kind() == "prim::Constant" and n.hasAttribute("value")
              and n.kindOf("value") == "t"]
    assert len(consts) == 1 and cthtorch.equal(consts[0].t("value"), cthtorch.full((2, 2), 2.0))


CSE = '''graph(%x : Tensor, %y : Tensor, %z : Tensor):
  %1 : int = prim::Constant[value=1]()
  %2 : Tensor = aten::add(%x, %y, %1)
  %3 : Tensor = aten::add(%x, %y, %1)
  %4 : Tensor = aten::mul(%2, %3)
  %5 : Tensor = aten::relu(%z)
  %6 : Tensor = aten::add_(%z, %1, %1)
  %7 : Tensor = aten::relu(%z)
  %8 : Tensor = aten::mul(%5, %7)
  %9 : Tensor = aten::mul(%4, %8)
  return (%9)
'''


def test_cse():
    ours, theirs = run_pass(CSE, cthtorch._C._jit_pass_cse, torch._C._jit_pass_cse)
    assert ours == theirs
    # the inputs may alias z, which is written: nothing reading them is merged
    assert ours.count("aten::add(") == 2 and ours.count("aten::relu(") == 2
    ours, theirs = run_pass(CSE.replace("aten::add_(%z, %1, %1)", "aten::add(%z, %1, %1)"),
                            cthtorch._C._jit_pass_cse, torch._C._jit_pass_cse)
    assert ours == theirs
    assert ours.count("aten::add(%x") == 1 and ours.count("aten::relu(") == 1


def _conv_bn_net(lib):
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.Dropout(0.5),
                         nn.Flatten(), nn.Linear(8 * 6 * 6, 4))


def _randomize_bn(net):
    with cthtorch.no_grad():
        bn = net[1]
        bn.running_mean.uniform_(-1, 1)
        bn.running_var.uniform_(0.5, 2)
        bn.weight.uniform_(0.5, 2)
        bn.bias.uniform_(-1, 1)


def test_freeze_folds_params_dropout_and_batch_norm():
    cthtorch.manual_seed(0)
    net = _conv_bn_net(cthtorch)
    _randomize_bn(net)
    net.eval()
    x = cthtorch.randn(2, 3, 6, 6)
    traced = cthtorch.jit.trace(net, x)
    frozen = cthtorch.jit.freeze(traced)
    kinds = [n.kind() for n in frozen.graph.nodes()]
    assert "prim::GetAttr" not in kinds and "prim::CallMethod" not in kinds
    assert "aten::batch_norm" not in kinds and "aten::dropout" not in kinds
    assert "aten::_convolution" in kinds and "aten::linear" in kinds
    assert cthtorch.allclose(frozen(x), net(x), atol=1e-5)
    # torch freezes the same traced net to the same ops
    tnet = _conv_bn_net(torch).eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tf = torch.jit.freeze(torch.jit.trace(tnet, torch.randn(2, 3, 6, 6)))
    tkinds = [n.kind() for n in tf.graph.nodes() if n.kind() != "prim::Constant"]
    assert [k for k in kinds if k != "prim::Constant"] == tkinds
    with pytest.raises(RuntimeError, match="only implemented for modules in eval mode"):
        cthtorch.jit.freeze(cthtorch.jit.trace(_conv_bn_net(cthtorch).train(), x, check_trace=False))
    with pytest.raises(RuntimeError, match="Freezing expects a ScriptModule"):
        cthtorch.jit.freeze(net)


def test_optimize_for_inference():
    cthtorch.manual_seed(1)
    net = _conv_bn_net(cthtorch)
    _randomize_bn(net)
    net.eval()
    x = cthtorch.randn(1, 3, 6, 6)
    opt = cthtorch.jit.optimize_for_inference(cthtorch.jit.trace(net, x))
    assert "aten::batch_norm" not in [n.kind() for n in opt.graph.nodes()]
    assert cthtorch.allclose(opt(x), net(x), atol=1e-5)
