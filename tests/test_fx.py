"""torch.fx: tracing, the Graph/Node API, generated code, GraphModule
copying, Interpreter/Transformer/ShapeProp and rewrites, against the
installed torch (the same module built in both libraries)."""
import contextlib
import copy
import importlib
import io
import os
import operator
import pickle
import sys

import numpy as np
import pytest

import cthtorch
import cthtorch.fx as cfx
import oracle
from oracle import require_torch

torch = require_torch()
import torch.fx as tfx  # noqa: E402


def to_np(t):
    return t.detach().numpy()


def copy_params(tm, cm):
    cm.load_state_dict({k: cthtorch.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})


def close(a, b, tol=1e-5):
    np.testing.assert_allclose(to_np(a), to_np(b), rtol=tol, atol=tol)


def both(factory):
    """factory(T) builds a module with library T; returns (cthtorch one, torch one) with equal weights."""
    torch.manual_seed(0)
    tm = factory(torch)
    cm = factory(cthtorch)
    copy_params(tm, cm)
    return cm.eval(), tm.eval()


# ---------------------------------------------------------------- modules built in both libraries
def mixed_module(T):
    class M(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = T.nn.Linear(4, 5)
            self.param = T.nn.Parameter(T.rand(5))
            self.register_buffer("buf", T.ones(5))

        def forward(self, x, y=None):
            z = self.linear(x + 1) * self.param + self.buf
            a, b = (z, z)
            s = z.size(0)
            q = T.cat([z, a], dim=1).view(s, -1)
            w = T.nn.functional.relu(q, inplace=False)
            return {"out": T.relu(w).sum(dim=1), "x": x[:, 0], "t": (w.shape[1], -w)}
    return M()


def nested_module(T):
    class Sub(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = T.nn.Conv2d(3, 4, 3)
            self.bn = T.nn.BatchNorm2d(4)

        def forward(self, x):
            return self.bn(self.conv(x))

    class M(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.layer1 = T.nn.Sequential(Sub(), T.nn.ReLU())
            self.fc = T.nn.Linear(4, 2)

        def forward(self, x):
            y = self.layer1(x)
            t = T.flatten(T.nn.functional.adaptive_avg_pool2d(y, 1), 1)
            return self.fc(t) @ self.fc.weight, 2.0 * t.shape[0], 1 - t, t / 2, ~(t > 0)
    return M()


def functional_module(T):
    F = T.nn.functional

    class M(T.nn.Module):
        def forward(self, x):
            a = F.max_pool2d(F.relu(x), 2)
            b = F.softmax(x, dim=1) + F.log_softmax(x, dim=1)
            c = F.dropout(x, 0.1, self.training)
            d = F.batch_norm(x, T.zeros(3), T.ones(3), training=False)
            e = F.layer_norm(x, (4,))
            f = F.adaptive_avg_pool2d(x, 1)
            g = F.leaky_relu(x, 0.2) * F.hardtanh(x) - F.elu(x)
            return T.flatten(a, 1), b, c, d, e, f, g, x.sigmoid(), T.tanh(x).mean(dim=[2, 3], keepdim=True)
    return M()


MODULES = [mixed_module, nested_module, functional_module]


def call(m, T, shape):
    torch.manual_seed(1)
    x = torch.randn(*shape)
    return m(x if T is torch else cthtorch.tensor(x.numpy()))


def flat(out):
    if isinstance(out, dict):
        return [v for o in out.values() for v in flat(o)]
    if isinstance(out, (tuple, list)):
        return [v for o in out for v in flat(o)]
    return [out]


def assert_same_outputs(a, b, tol=1e-5):
    fa, fb = flat(a), flat(b)
    assert len(fa) == len(fb)
    for x, y in zip(fa, fb):
        if hasattr(y, "detach"):
            close(x, y, tol)
        else:
            assert x == y


SHAPES = {mixed_module: (2, 4), nested_module: (2, 3, 6, 6), functional_module: (2, 3, 4, 4)}


@pytest.mark.parametrize("factory", MODULES, ids=lambda f: f.__name__)
def test_code_and_graph_text_match_torch(factory):
    cm, tm = both(factory)
    cg, tg = cfx.symbolic_trace(cm), tfx.symbolic_trace(tm)
    assert cg.code == tg.code
    assert str(cg.graph) == str(tg.graph)
    assert str(cg) == str(tg)
    assert cg.print_readable(print_output=False) == tg.print_readable(print_output=False)
    assert type(cg).__name__ == type(tg).__name__ == "M"
    assert isinstance(cg, cfx.GraphModule)
    assert_same_outputs(call(cg, cthtorch, SHAPES[factory]), call(tm, torch, SHAPES[factory]))
    assert_same_outputs(call(cg, cthtorch, SHAPES[factory]), call(cm, cthtorch, SHAPES[factory]))


def test_print_tabular_matches_torch():
    """Without tabulate (these machines) torch prints a hint and re-raises the ImportError."""
    try:
        import tabulate  # noqa: F401
    except ImportError:
        tabulate = None
    if tabulate is not None:   # a table: one row per node, in order
        buf = io.StringIO()
        gm = cfx.symbolic_trace(mixed_module(cthtorch))
        with contextlib.redirect_stdout(buf):
            gm.graph.print_tabular()
        rows = buf.getvalue().splitlines()
        assert rows[0].split() == ["opcode", "name", "target", "args", "kwargs"]
        assert [r.split()[1] for r in rows[2:]] == [n.name for n in gm.graph.nodes]
        return
    outs = []
    for fx_, m in ((cfx, mixed_module(cthtorch)), (tfx, mixed_module(torch))):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf), pytest.raises(Exception) as e:
            fx_.symbolic_trace(m).graph.print_tabular()
        outs.append((buf.getvalue(), type(e.value).__name__, str(e.value)))
    assert outs[0] == outs[1]
    assert outs[0][1] == "ModuleNotFoundError"


# ---------------------------------------------------------------- nn layer families
LAYERS = [
    ("Linear", (4, 3), (2, 4)), ("Bilinear", (3, 3, 2), None), ("Conv1d", (3, 4, 3), (2, 3, 8)),
    ("Conv2d", (3, 4, 3), (2, 3, 6, 6)), ("Conv3d", (2, 3, 2), (1, 2, 4, 4, 4)),
    ("ConvTranspose2d", (3, 2, 3), (1, 3, 4, 4)), ("BatchNorm1d", (4,), (3, 4)), ("BatchNorm2d", (3,), (2, 3, 4, 4)),
    ("LayerNorm", ((4,),), (2, 3, 4)), ("GroupNorm", (2, 4), (2, 4, 3, 3)), ("InstanceNorm2d", (3,), (2, 3, 4, 4)),
    ("MaxPool2d", (2,), (1, 2, 4, 4)), ("AvgPool2d", (2,), (1, 2, 4, 4)), ("AdaptiveAvgPool2d", ((1, 1),), (1, 2, 4, 4)),
    ("MaxPool1d", (2,), (1, 2, 6)), ("ReLU", (), (3, 4)), ("GELU", (), (3, 4)), ("Tanh", (), (3, 4)),
    ("Sigmoid", (), (3, 4)), ("Softmax", (1,), (3, 4)), ("LogSoftmax", (1,), (3, 4)), ("Dropout", (0.5,), (3, 4)),
    ("Flatten", (), (2, 3, 4)), ("Identity", (), (3, 4)), ("LeakyReLU", (0.1,), (3, 4)), ("ELU", (), (3, 4)),
    ("Embedding", (10, 3), "idx"), ("LSTM", (4, 3), (5, 2, 4)), ("GRU", (4, 3), (5, 2, 4)),
    ("Upsample", (None, 2.0), (1, 2, 3, 3)), ("PixelShuffle", (2,), (1, 4, 2, 2)),
]


def layer_wrapper(T, name, args):
    class Wrap(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.layer = getattr(T.nn, name)(*args)

        def forward(self, x):
            return self.layer(x)
    return Wrap()


@pytest.mark.parametrize("name,args,shape", [l for l in LAYERS if l[2] is not None], ids=lambda v: str(v))
def test_trace_layer_family(name, args, shape):
    cm, tm = both(lambda T: layer_wrapper(T, name, args))
    cg, tg = cfx.symbolic_trace(cm), tfx.symbolic_trace(tm)
    assert cg.code == tg.code
    assert [n.op for n in cg.graph.nodes] == ["placeholder", "call_module", "output"]
    if shape == "idx":
        x = torch.tensor([[1, 2, 9], [0, 3, 3]])
    else:
        torch.manual_seed(2)
        x = torch.randn(*shape)
    assert_same_outputs(cg(cthtorch.tensor(x.numpy())), tm(x))
    # the same layer traced through (no leaves) where torch can: the recorded ops still compute the layer
    class NoLeaves(cfx.Tracer):
        def is_leaf_module(self, m, qualname):
            return False

    class TNoLeaves(tfx.Tracer):
        def is_leaf_module(self, m, qualname):
            return False
    try:
        TNoLeaves().trace(tm)
    except Exception:
        return
    g = cfx.GraphModule(cm, NoLeaves().trace(cm))
    assert "call_module" not in [n.op for n in g.graph.nodes]
    assert_same_outputs(g(cthtorch.tensor(x.numpy())), tm(x))


def test_bilinear_traced():
    cm, tm = both(lambda T: T.nn.Bilinear(3, 3, 2))

    class W(cthtorch.nn.Module):
        def __init__(self):
            super().__init__()
            self.b = cm

        def forward(self, a, b):
            return self.b(a, b)
    g = cfx.symbolic_trace(W())
    x, y = torch.randn(2, 3), torch.randn(2, 3)
    close(g(cthtorch.tensor(x.numpy()), cthtorch.tensor(y.numpy())), tm(x, y))


# ---------------------------------------------------------------- vision models
@pytest.mark.parametrize("arch", ["resnet18", "vgg11"])
def test_vision_models_traced(arch):
    from cthtorch.vision import models
    cthtorch.manual_seed(0)
    m = getattr(models, arch)(num_classes=10).eval()
    gm = cfx.symbolic_trace(m)
    gm.graph.lint()
    x = cthtorch.randn(1, 3, 64, 64) if arch == "resnet18" else cthtorch.randn(1, 3, 32, 32)
    with cthtorch.no_grad():
        close(gm(x), m(x), 1e-5)
    ops = [n.op for n in gm.graph.nodes]
    assert ops.count("placeholder") == 1 and ops[-1] == "output"
    # torchvision's structure built with torch (bench/bench_fx.py) traces to the same code
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "bench"))
    try:
        import bench_fx
    finally:
        sys.path.pop(0)
    reference = bench_fx.vgg11(torch, 10) if arch == "vgg11" else bench_fx.resnet18(torch)
    assert gm.code == tfx.symbolic_trace(reference).code
    if arch == "resnet18":
        # torchvision's ResNet-18 traces to 71 nodes: 8 blocks' residual adds and flatten among them
        assert len(ops) == 71
        assert sum(n.target is operator.add for n in gm.graph.nodes) == 8
        assert any(n.target is cthtorch.flatten for n in gm.graph.nodes)
        assert "layer1_0_conv1 = getattr(self.layer1, \"0\").conv1(maxpool)" in gm.code


# ---------------------------------------------------------------- rewrites
def add_module(T):
    class M(T.nn.Module):
        def forward(self, x, y):
            return T.add(x, y) + T.add(y, y)
    return M()


def test_replace_add_with_mul_like_torch():
    outs = []
    for T, fx_ in ((cthtorch, cfx), (torch, tfx)):
        gm = fx_.symbolic_trace(add_module(T))
        for node in gm.graph.nodes:
            if node.op == "call_function" and node.target == T.add:
                node.target = T.mul
        gm.recompile()
        outs.append((gm, T))
    (cg, _), (tg, _) = outs
    assert cg.code == tg.code
    x, y = torch.randn(3), torch.randn(3)
    close(cg(cthtorch.tensor(x.numpy()), cthtorch.tensor(y.numpy())), tg(x, y))
    close(tg(x, y), x * y + y * y)


def test_insert_node_like_torch():
    codes, outs = [], []
    x = torch.randn(4)
    for T, fx_ in ((cthtorch, cfx), (torch, tfx)):
        gm = fx_.symbolic_trace(add_module(T))
        graph = gm.graph
        node = [n for n in graph.nodes if n.target == T.add][0]
        with graph.inserting_after(node):
            new = graph.call_function(T.relu, args=(node,))
            node.replace_all_uses_with(new)
            new.update_arg(0, node)
        with graph.inserting_before(node):
            graph.call_function(T.neg, (node.args[0],))   # dead: removed below
        assert graph.eliminate_dead_code()
        graph.lint()
        gm.recompile()
        codes.append(gm.code)
        xi = x if T is torch else cthtorch.tensor(x.numpy())
        outs.append(gm(xi, xi))
    assert codes[0] == codes[1]
    close(outs[0], outs[1])


def _fuse_conv_bn(T, fx_, model):
    """pytorch's FX conv+bn fuser tutorial, with only the import changed."""
    from importlib import import_module
    fuse_conv_bn_eval = import_module(T.__name__ + ".nn.utils.fusion").fuse_conv_bn_eval

    def parent_name(target):
        *parent, name = target.rsplit(".", 1)
        return parent[0] if parent else "", name

    model = copy.deepcopy(model)
    fx_model = fx_.symbolic_trace(model)
    modules = dict(fx_model.named_modules())
    for node in fx_model.graph.nodes:
        if node.op != "call_module" or node.args[0].op != "call_module":
            continue
        if type(modules[node.target]) is T.nn.BatchNorm2d and type(modules[node.args[0].target]) is T.nn.Conv2d:
            if len(node.args[0].users) > 1:
                continue
            fused = fuse_conv_bn_eval(modules[node.args[0].target], modules[node.target])
            parent, name = parent_name(node.args[0].target)
            setattr(modules[parent], name, fused)
            node.replace_all_uses_with(node.args[0])
            fx_model.graph.erase_node(node)
    fx_model.graph.lint()
    fx_model.recompile()
    return fx_model


@pytest.mark.parametrize("arch", ["nested", "resnet18"])
def test_fuse_conv_bn_like_torch_tutorial(arch):
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "bench"))
    try:
        import bench_fx
    finally:
        sys.path.pop(0)
    cm, tm = both(nested_module if arch == "nested" else bench_fx.resnet18)
    x = torch.randn(2, 3, 32, 32)
    with torch.no_grad():
        for m in tm.modules():   # non-trivial running stats
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 2.0)
        copy_params(tm, cm)
        ref = tm(x)
        fc = _fuse_conv_bn(cthtorch, cfx, cm)
        ft = _fuse_conv_bn(torch, tfx, tm)
    assert fc.code == ft.code
    assert "bn" not in fc.code
    with cthtorch.no_grad():
        assert_same_outputs(fc(cthtorch.tensor(x.numpy())), ref, 1e-4)
        assert_same_outputs(fc(cthtorch.tensor(x.numpy())), ft(x), 1e-4)



@pytest.mark.parametrize("num_features", [5, 1])
def test_fuse_linear_bn_eval_like_torch(num_features):
    # fuse_linear_bn_weights folds through fuse_conv_bn_weights (a Linear weight is a conv weight without spatial dims)
    def factory(T):
        return T.nn.Sequential(T.nn.Linear(3, 5), T.nn.BatchNorm1d(num_features))
    cm, tm = both(factory)
    with torch.no_grad():
        tm[1].running_mean.uniform_(-0.5, 0.5)
        tm[1].running_var.uniform_(0.5, 2.0)
        tm[1].weight.uniform_(0.5, 1.5)
        copy_params(tm, cm)
    from cthtorch.nn.utils.fusion import fuse_linear_bn_eval
    from torch.nn.utils.fusion import fuse_linear_bn_eval as t_fuse_linear_bn_eval
    fc, ft = fuse_linear_bn_eval(cm[0], cm[1]), t_fuse_linear_bn_eval(tm[0], tm[1])
    close(fc.weight.detach(), ft.weight.detach())
    close(fc.bias.detach(), ft.bias.detach())
    assert fc.weight.requires_grad and fc.bias.requires_grad



def test_functional_hands_over_for_any_tensor_argument():
    # F's functions ask has_torch_function over the arguments torch's ask over: a Proxy weight with a
    # real input is still recorded as F.embedding / F.layer_norm, not as the op under it
    def fn_for(L):
        F = L.nn.functional

        def fn(w, b):
            return F.layer_norm(F.embedding(L.tensor([0, 2]), w), (4,), b, None)
        return fn
    assert cfx.symbolic_trace(fn_for(cthtorch)).code == tfx.symbolic_trace(fn_for(torch)).code



def test_scaled_dot_product_attention_traces():
    # SDPA's operand checks would read a Proxy's shape: the call is handed over and recorded whole
    def fn(q, k, v):
        return cthtorch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    gm = cfx.symbolic_trace(fn)
    assert "torch.nn.functional.scaled_dot_product_attention(q, k, v" in gm.code
    q, k, v = cthtorch.randn(2, 3, 5, 4), cthtorch.randn(2, 3, 5, 4), cthtorch.randn(2, 3, 5, 4)
    close(gm(q, k, v), fn(q, k, v))



_F_CASES = {
    "huber_loss": lambda F, x, y: F.huber_loss(x, y), "softmin": lambda F, x, y: F.softmin(x, 1),
    "tanhshrink": lambda F, x, y: F.tanhshrink(x), "kl_div": lambda F, x, y: F.kl_div(x, y, reduction="batchmean"),
    "unfold": lambda F, x, y: F.unfold(x.reshape(1, 1, 4, 6), 2),
    "margin_ranking_loss": lambda F, x, y: F.margin_ranking_loss(x, y, y),
    "lp_pool1d": lambda F, x, y: F.lp_pool1d(x.reshape(1, 4, 6), 2, 2),
    "local_response_norm": lambda F, x, y: F.local_response_norm(x.reshape(1, 4, 6), 2),
    "rms_norm": lambda F, x, y: F.rms_norm(x, (6,)), "dropout1d": lambda F, x, y: F.dropout1d(x, training=False),
    "triplet_margin_loss": lambda F, x, y: F.triplet_margin_loss(x, y, y),
    "poisson_nll_loss": lambda F, x, y: F.poisson_nll_loss(x, y),
}


@pytest.mark.parametrize("name", sorted(_F_CASES))
def test_functional_recorded_whole_like_torch(name):
    # every F function torch hands to __torch_function__ is recorded as one call, not as the ops under it
    def trace(L, fx):
        F = L.nn.functional
        return fx.symbolic_trace(lambda x, y: _F_CASES[name](F, x, y))
    gm, tgm = trace(cthtorch, cfx), trace(torch, tfx)
    assert gm.code == tgm.code
    x, y = cthtorch.rand(4, 6), cthtorch.rand(4, 6)
    close(gm(x, y), _F_CASES[name](cthtorch.nn.functional, x, y))


def test_replace_pattern():
    def pattern(a, b):
        return cthtorch.relu(cthtorch.add(a, b))

    def replacement(a, b):
        return cthtorch.sigmoid(a * b)

    class M(cthtorch.nn.Module):
        def forward(self, x, y):
            u = cthtorch.relu(cthtorch.add(x, y))
            v = cthtorch.relu(cthtorch.add(u, 1.0))   # 1.0 is not a placeholder value of the graph: no match
            w = cthtorch.relu(cthtorch.add(v, x))
            return u + w

    gm = cfx.symbolic_trace(M())
    matches = cfx.replace_pattern(gm, pattern, replacement)
    assert len(matches) == 2
    assert all(isinstance(m.anchor, cfx.Node) and m.nodes_map for m in matches)
    gm.graph.lint()
    x, y = cthtorch.randn(5), cthtorch.randn(5)
    u = cthtorch.sigmoid(x * y)
    v = cthtorch.relu(u + 1.0)
    close(gm(x, y), u + cthtorch.sigmoid(v * x))
    assert sum(n.target is cthtorch.sigmoid for n in gm.graph.nodes) == 2


def test_replace_pattern_places_replacements_as_torch():
    """pytorch/examples' fx/subgraph_rewriter_basic_use.py: each replacement
    lands before the first user of what its match returned"""
    def run(L, fx):
        class M(L.nn.Module):
            def forward(self, x, w1, w2):
                m1 = L.cat([L.neg(w1), w2]).sum()
                m2 = L.cat([L.neg(w1), w2]).sum()
                return x + L.max(m1) + L.max(m2)

        def pattern(a1, a2):
            return L.cat([L.neg(a1), a2]).sum()

        def replacement(w1, w2):
            return L.stack([w1, w2])
        gm = fx.symbolic_trace(M())
        fx.replace_pattern(gm, pattern, replacement)
        gm.recompile()
        return gm
    assert run(cthtorch, cfx).code == run(torch, tfx).code


# ---------------------------------------------------------------- Interpreter / Transformer / ShapeProp
def test_interpreter_round_trip_and_override():
    cm, tm = both(nested_module)
    cg = cfx.symbolic_trace(cm)
    x = torch.randn(2, 3, 6, 6)
    xc = cthtorch.tensor(x.numpy())
    assert_same_outputs(cfx.Interpreter(cg).run(xc), tm(x))

    class NegSigmoid(cfx.Interpreter):   # the docs' example
        def call_function(self, target, args, kwargs):
            if target is cthtorch.sigmoid:
                return cthtorch.neg(*args, **kwargs)
            return super().call_function(target, args, kwargs)

    def fn(x):
        return cthtorch.sigmoid(x).neg()
    gm = cfx.symbolic_trace(fn)
    inp = cthtorch.randn(3, 4)
    close(NegSigmoid(gm).run(inp), inp)
    with pytest.raises(RuntimeError, match="Expected positional argument for parameter x"):
        cfx.Interpreter(gm).run()


def test_transformer_round_trip_and_rewrite():
    cm, tm = both(nested_module)
    cg = cfx.symbolic_trace(cm)
    same = cfx.Transformer(cg).transform()
    x = cthtorch.randn(2, 3, 6, 6)
    assert_same_outputs(same(x), cg(x))

    def neg_to_sigmoid(L, fx):
        class NegToSigmoid(fx.Transformer):
            def call_function(self, target, args, kwargs):
                return super().call_function(L.sigmoid if target is L.neg else target, args, kwargs)

        def fn(x):
            return L.neg(x) + 1
        return NegToSigmoid(fx.symbolic_trace(fn)).transform()

    out, tout = neg_to_sigmoid(cthtorch, cfx), neg_to_sigmoid(torch, tfx)
    inp = cthtorch.randn(3)
    close(out(inp), cthtorch.sigmoid(inp) + 1)
    assert out.code == tout.code


def test_shape_prop_matches_torch():
    from cthtorch.fx.passes.shape_prop import ShapeProp
    from torch.fx.passes.shape_prop import ShapeProp as TShapeProp
    cm, tm = both(nested_module)
    cg, tg = cfx.symbolic_trace(cm), tfx.symbolic_trace(tm)
    x = torch.randn(2, 3, 6, 6)
    ShapeProp(cg).propagate(cthtorch.tensor(x.numpy()))
    TShapeProp(tg).propagate(x)
    for cn, tn in zip(cg.graph.nodes, tg.graph.nodes):
        assert cn.name == tn.name
        cmeta, tmeta = cn.meta.get("tensor_meta"), tn.meta.get("tensor_meta")
        assert (cmeta is None) == (tmeta is None), cn.name
        if cmeta is not None and hasattr(tmeta, "shape"):
            assert tuple(cmeta.shape) == tuple(tmeta.shape)
            assert str(cmeta.dtype) == str(tmeta.dtype)
            assert cmeta.stride == tmeta.stride
            assert cmeta.requires_grad == tmeta.requires_grad
        assert cn.meta["type"].__name__ == tn.meta["type"].__name__


# ---------------------------------------------------------------- tracing rules and errors
def test_control_flow_errors_match_torch():
    def branch(T):
        def f(x):
            if x.sum() > 0:
                return x
            return -x
        return f

    def loop(T):
        def f(x):
            return [i for i in x]
        return f

    def length(T):
        def f(x):
            return len(x)
        return f
    for make in (branch, loop, length):
        with pytest.raises(Exception) as et:
            tfx.symbolic_trace(make(torch))
        with pytest.raises(Exception) as ec:
            cfx.symbolic_trace(make(cthtorch))
        assert type(ec.value).__name__ == type(et.value).__name__
        assert str(ec.value) == str(et.value)
    assert issubclass(cfx.proxy.TraceError, ValueError)


def test_concrete_args_and_unpacking():
    def f(x, flag):
        a, b = x.chunk(2)
        if flag:
            return a * 2
        return b

    gm = cfx.symbolic_trace(f, concrete_args={"flag": True})
    x = cthtorch.arange(4.0)
    close(gm(x, True), x[:2] * 2)
    gm2 = cfx.symbolic_trace(f, concrete_args={"flag": False})
    close(gm2(x, False), x[2:])
    with pytest.raises(AssertionError, match="flag has been specialized to have value False but got another value"):
        gm2(x, True)

    def g(T):
        def fn(a, b, c=2, d=None, e=True, h="s"):
            r = a + b * c
            if d is not None:
                r = r + d
            if e:
                r = -r
            return r * 2, h
        return fn
    concrete = {"c": 3, "d": None, "e": False, "h": "q"}
    tconcrete = dict(concrete)
    cg = cfx.symbolic_trace(g(cthtorch), concrete_args=dict(concrete, b=cfx.PH))
    tg = tfx.symbolic_trace(g(torch), concrete_args=dict(tconcrete, b=tfx.PH))
    assert cg.code == tg.code
    one = cthtorch.ones(2)
    out = cg(one, one, 3, None, False, "q")
    close(out[0], cthtorch.full((2,), 8.0))
    assert out[1] == "q"


def helper_to_wrap(x, n):
    return x * n if n > 0 else x   # data dependent on a Python int: must not be traced through


cfx.wrap("helper_to_wrap")
tfx.wrap("helper_to_wrap")


def test_wrap_and_custom_tracer():
    def f(x):
        return helper_to_wrap(x + 1, 3)
    gm = cfx.symbolic_trace(f)
    calls = [n for n in gm.graph.nodes if n.op == "call_function"]
    assert calls[-1].target is helper_to_wrap
    x = cthtorch.randn(3)
    close(gm(x), (x + 1) * 3)
    assert helper_to_wrap(x, 0) is x      # unpatched after tracing
    assert gm.code == tfx.symbolic_trace(f).code    # with torch's fx.wrap line at the top
    again = pickle.loads(pickle.dumps(gm))           # re-traced from the code: still one wrapped call
    assert again.code == gm.code
    close(again(x), (x + 1) * 3)

    class Recording(cfx.Tracer):
        def __init__(self):
            super().__init__()
            self.kinds = []

        def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None, proxy_factory_fn=None):
            self.kinds.append(kind)
            return super().create_proxy(kind, target, args, kwargs, name, type_expr, proxy_factory_fn)

        def call_module(self, m, forward, args, kwargs):
            self.kinds.append("module:" + self.path_of_module(m))
            return super().call_module(m, forward, args, kwargs)

    m = nested_module(cthtorch)
    tr = Recording()
    tr.trace(m)
    assert "module:layer1.0.conv" in tr.kinds and "module:fc" in tr.kinds
    assert tr.kinds[0] == "placeholder"


def test_graph_api():
    g = cfx.Graph()
    x = g.placeholder("x")
    y = g.placeholder("y", default_value=3)
    a = g.call_function(cthtorch.add, (x, y))
    b = g.call_method("relu", (a,))
    g.output(b)
    assert [n.name for n in g.nodes] == ["x", "y", "add", "relu", "output"]
    assert list(a.users) == [b] and a.all_input_nodes == [x, y]
    assert b.prev is a and a.next is b
    with pytest.raises(NotImplementedError, match="does not support mutation"):
        cfx.immutable_collections.immutable_list([1]).append(2)
    with pytest.raises(RuntimeError, match="still had 1 users"):
        g.erase_node(a)
    g2 = cfx.Graph()
    val_map = {}
    out = g2.graph_copy(g, val_map)
    g2.output(out)
    assert [n.name for n in g2.nodes] == ["x", "y", "add", "relu", "output"]
    gm = cfx.GraphModule(cthtorch.nn.Module(), g2)
    close(gm(cthtorch.tensor([-1.0, 1.0])), cthtorch.tensor([2.0, 4.0]))
    assert "def forward(self, x, y = 3):" in gm.code
    tg = tfx.Graph()
    tx = tg.placeholder("x")
    ty = tg.placeholder("y", default_value=3)
    tg.output(tg.call_method("relu", (tg.call_function(torch.add, (tx, ty)),)))
    assert str(g) == str(tg)
    assert g.python_code("self").src == tg.python_code("self").src
    bad = cfx.Graph()
    p = bad.placeholder("p")
    bad.output(g.call_function(cthtorch.neg, (p,)))
    with pytest.raises(RuntimeError, match="does not belong to this Graph"):
        bad.lint()


def test_pickle_and_deepcopy():
    cm, tm = both(mixed_module)
    gm = cfx.symbolic_trace(cm)
    x = cthtorch.randn(2, 4)
    ref = gm(x)
    for other in (pickle.loads(pickle.dumps(gm)), copy.deepcopy(gm)):
        assert isinstance(other, cfx.GraphModule)
        assert other.code == gm.code
        assert_same_outputs(other(x), ref)
        assert other.linear is not gm.linear
    tg = tfx.symbolic_trace(tm)
    assert type(pickle.loads(pickle.dumps(gm))).__name__ == type(pickle.loads(pickle.dumps(tg))).__name__
    assert type(copy.deepcopy(gm)).__name__ == type(copy.deepcopy(tg)).__name__


def test_to_folder_round_trip(tmp_path):
    cm, _ = both(nested_module)
    gm = cfx.symbolic_trace(cm)
    folder = tmp_path / "fx_saved"
    gm.to_folder(folder, "Saved")
    sys.path.insert(0, str(tmp_path))
    try:
        mod = importlib.import_module("fx_saved")
        loaded = mod.Saved()
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("fx_saved", None)
        sys.modules.pop("fx_saved.module", None)
    x = cthtorch.randn(2, 3, 6, 6)
    assert_same_outputs(loaded.eval()(x), gm(x))


def test_jit_script_compiles_graph_module():
    # torch.jit.script compiles a GraphModule's generated forward (fx writes `slice(...)` indices)
    class M(cthtorch.nn.Module):
        def forward(self, x):
            return cthtorch.relu(x)[:, 0] * 2 + x.sum(dim=1)
    gm = cfx.symbolic_trace(M())
    sm = cthtorch.jit.script(gm)
    assert sm is not gm and "aten::slice" in str(sm.graph)
    x = cthtorch.randn(3, 4)
    assert_same_outputs(sm(x), gm(x))


# ---------------------------------------------------------------- __torch_function__
class Recorder:
    def __init__(self):
        self.calls = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return ("handled", func, types, args, dict(kwargs or {}))


def test_torch_function_protocol():
    r = Recorder()
    t = cthtorch.ones(2)
    out = cthtorch.relu(r)
    assert out[1] is cthtorch.relu and out[2] == (Recorder,) and out[3] == (r,)
    out = cthtorch.cat([t, r], dim=0)                       # inside a list argument
    assert out[1] is cthtorch.cat and out[4] == {"dim": 0}
    out = cthtorch.matmul(t, r)                              # a Python composite (_C._Op)
    assert out[1] is cthtorch.matmul
    out = cthtorch.nn.functional.relu(r, inplace=True)       # an nn.functional form
    assert out[1] is cthtorch.nn.functional.relu and out[4] == {"inplace": True}
    out = t.add(r)                                           # a method, with the override as other
    assert out[1] is cthtorch.Tensor.add and out[3] == (t, r)
    assert cthtorch.overrides.has_torch_function([t, r]) and not cthtorch.overrides.has_torch_function([t, 1])
    assert cthtorch.relu(t).tolist() == [1.0, 1.0]           # tensors never reach it
    with pytest.raises(TypeError, match="expected Tensor as element 1"):
        cthtorch.cat([t, object()])                          # the parse error still stands

    class Declines:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return NotImplemented

    with pytest.raises(TypeError) as ec:
        cthtorch.relu(Declines())
    with pytest.raises(TypeError) as et:
        torch.relu(Declines())
    assert str(ec.value) == str(et.value)


def constants_module(T):
    class M(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("buf", T.ones(3))
            self.c = T.ones(3)

        def forward(self, x):
            a = self.buf + x
            b = self.c * x
            d = T.ones(3) - x
            e = x.new_zeros(3) + T.zeros_like(x) + T.arange(3)
            return a, b, d, e, x.T, x.dtype, x.float().to(T.float64), x.view(-1, 3).permute(1, 0)
    return M()


def test_tensor_attributes_and_constants_match_torch():
    cm, tm = constants_module(cthtorch), constants_module(torch)
    cg, tg = cfx.symbolic_trace(cm), tfx.symbolic_trace(tm)
    assert cg.code == tg.code
    x = torch.randn(3)
    out_c, out_t = cg(cthtorch.tensor(x.numpy())), tg(x)
    assert str(out_c[5]) == str(out_t[5])
    assert_same_outputs(out_c[:5] + out_c[6:], out_t[:5] + out_t[6:])


def test_varargs_and_dict_root_like_torch():
    def f(x, *args):
        return x + args[0]
    cg, tg = cfx.symbolic_trace(f), tfx.symbolic_trace(f)
    assert cg.code == tg.code
    close(cg(cthtorch.ones(1), cthtorch.full((1,), 2.0)), cthtorch.full((1,), 3.0))

    codes = []
    for T, fx_ in ((cthtorch, cfx), (torch, tfx)):
        g = fx_.Graph()
        x = g.placeholder("x")
        out = g.call_function(T.add, (g.call_module("sub.lin", (x,)), g.get_attr("w")))
        g.output(out)
        gm = fx_.GraphModule({"sub.lin": T.nn.Linear(2, 2), "w": T.ones(2)}, g)
        codes.append((gm.code, [n for n, _ in gm.named_modules()], [n for n, _ in gm.named_buffers()]))
    assert codes[0] == codes[1]


# F.<name>(x, ...) as traced: torch's code text where cthtorch records the same call; where its
# functional form is written differently (the conv / avg_pool / linear family calls its C op with
# all arguments spelled out) the traced module still computes the same values.
F_SAME_CODE = {
    "relu": lambda F, x: F.relu(x), "relu6": lambda F, x: F.relu6(x), "elu": lambda F, x: F.elu(x),
    "leaky_relu": lambda F, x: F.leaky_relu(x, 0.2), "hardtanh": lambda F, x: F.hardtanh(x),
    "silu": lambda F, x: F.silu(x), "sigmoid": lambda F, x: F.sigmoid(x), "tanh": lambda F, x: F.tanh(x),
    "softmax": lambda F, x: F.softmax(x, 1), "log_softmax": lambda F, x: F.log_softmax(x, dim=1),
    "dropout": lambda F, x: F.dropout(x, 0.2, training=False), "layer_norm": lambda F, x: F.layer_norm(x, (4,)),
    "group_norm": lambda F, x: F.group_norm(x, 1), "instance_norm": lambda F, x: F.instance_norm(x),
    "max_pool2d": lambda F, x: F.max_pool2d(x, 2), "adaptive_avg_pool2d": lambda F, x: F.adaptive_avg_pool2d(x, 1),
    "adaptive_max_pool2d": lambda F, x: F.adaptive_max_pool2d(x, 1), "pad": lambda F, x: F.pad(x, (1, 1)),
    "interpolate": lambda F, x: F.interpolate(x, scale_factor=2), "normalize": lambda F, x: F.normalize(x),
    "hardswish": lambda F, x: F.hardswish(x), "mish": lambda F, x: F.mish(x), "glu": lambda F, x: F.glu(x),
    "softsign": lambda F, x: F.softsign(x), "hardsigmoid": lambda F, x: F.hardsigmoid(x),
    "selu": lambda F, x: F.selu(x), "celu": lambda F, x: F.celu(x), "mse_loss": lambda F, x: F.mse_loss(x, x * 2),
    "l1_loss": lambda F, x: F.l1_loss(x, x * 2), "smooth_l1_loss": lambda F, x: F.smooth_l1_loss(x, x * 2),
}
F_SAME_VALUES = {
    "gelu": lambda F, x: F.gelu(x), "avg_pool2d": lambda F, x: F.avg_pool2d(x, 2),
    "conv2d": lambda F, x: F.conv2d(x, x[:2, :, :2, :2], stride=2), "linear": lambda F, x: F.linear(x, x[0, 0]),
    "softplus": lambda F, x: F.softplus(x), "cosine_similarity": lambda F, x: F.cosine_similarity(x, x * 2),
    "threshold": lambda F, x: F.threshold(x, 0.1, 0.0), "pixel_shuffle": lambda F, x: F.pixel_shuffle(x, 2),
}


@pytest.mark.parametrize("name", sorted(F_SAME_CODE) + sorted(F_SAME_VALUES))
def test_functional_forms_traced(name):
    make = F_SAME_CODE.get(name) or F_SAME_VALUES[name]
    cg = cfx.symbolic_trace(lambda x: make(cthtorch.nn.functional, x))
    tg = tfx.symbolic_trace(lambda x: make(torch.nn.functional, x))
    if name in F_SAME_CODE:
        assert cg.code == tg.code
    torch.manual_seed(3)
    x = torch.randn(2, 4, 4, 4)
    assert_same_outputs(cg(cthtorch.tensor(x.numpy())), tg(x))


def _fx_optimization_run(L):
    """torch.fx.experimental.optimization on one seeded module: fuse folds each eval batch norm into the
    conv/linear before it (not a conv whose output is used twice, nor a BN without running stats), remove_dropout
    drops dropouts, extract_subgraph runs a slice of the graph; the code, node lists and outputs are returned"""
    import importlib
    opt = importlib.import_module(L.__name__ + ".fx.experimental.optimization")
    nn = L.nn

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1, self.bn1 = nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3)
            self.conv2, self.bn2 = nn.Conv2d(3, 3, 1), nn.BatchNorm2d(3, track_running_stats=False)
            self.conv3, self.bn3 = nn.Conv1d(3, 4, 1), nn.BatchNorm1d(4)
            self.fc, self.bn4, self.drop = nn.Linear(4, 5), nn.BatchNorm1d(5), nn.Dropout(0.5)

        def forward(self, x):
            x = self.bn1(self.conv1(x))
            y = self.conv2(x)
            x = self.bn2(y) + y
            x = self.bn3(self.conv3(x.flatten(2))).mean(-1)
            return self.drop(self.bn4(self.fc(x)))

    L.manual_seed(0)
    m = M()
    with L.no_grad():
        for bn in (m.bn1, m.bn3, m.bn4):
            bn.running_mean.uniform_(-1, 1)
            bn.running_var.uniform_(0.5, 2)
    m.eval()
    x = L.randn(2, 2, 6, 6)
    fused = opt.fuse(m)
    out = [fused.code, [(n.op, str(n.target)) for n in fused.graph.nodes], fused(x).detach().numpy(),
           m(x).detach().numpy(),
           type(fused.conv1).__name__, isinstance(m.bn1, nn.BatchNorm2d)]
    nodrop = opt.remove_dropout(m.train())
    out += [nodrop.code, [(n.op, str(n.target)) for n in nodrop.graph.nodes]]
    nodes = list(fused.graph.nodes)
    sub = opt.extract_subgraph(fused, nodes[1:3], [nodes[0]], [nodes[2]])
    out += [sub.code, sub(x)[0].detach().numpy()]
    out.append(opt.matches_module_pattern((nn.Conv2d, nn.BatchNorm2d), list(L.fx.symbolic_trace(m).graph.nodes)[2],
                                          dict(m.named_modules())))
    return out


def test_fx_experimental_optimization_matches_torch():
    oracle.runs_match(_fx_optimization_run(cthtorch), _fx_optimization_run(torch), rtol=1e-4, atol=1e-5)
