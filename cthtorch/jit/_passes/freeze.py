"""torch.jit.freeze and optimize_for_inference: a module's attributes become
constants of its (inlined) graphs, so constant propagation, dropout removal
and conv/batch-norm folding can rewrite them."""
import cthtorch

from .. import _ir
from .constant_propagation import constant_propagation
from .cse import eliminate_common_subexpression
from .dce import eliminate_dead_code
from .inline import inline_calls

__all__ = ["freeze_module", "fold_attributes", "remove_dropout", "fold_conv_batch_norm", "transpose_frozen_linear",
           "optimize_frozen_graph"]

_DROPOUTS = {"aten::dropout", "aten::feature_dropout", "aten::alpha_dropout", "aten::feature_alpha_dropout",
             "aten::dropout_", "aten::feature_dropout_", "aten::alpha_dropout_", "aten::feature_alpha_dropout_"}


def _resolve(v, self_value, root):
    """(found, object) for a prim::GetAttr chain from the graph's self."""
    if v is self_value:
        return True, root
    n = v.node()
    if n.kind() != "prim::GetAttr":
        return False, None
    ok, base = _resolve(n.inputs()[0], self_value, root)
    if not ok or not hasattr(base, n.s("name")):
        return False, None
    return True, getattr(base, n.s("name"))


def _set_attrs(graph):
    return {n.s("name") for n in graph.findAllNodes("prim::SetAttr")}


def fold_attributes(graph, module, preserved=()):
    """prim::GetAttr of tensors and plain values -> prim::Constant (tensors detached)."""
    if not graph.inputs():
        return
    self_value = graph.inputs()[0]
    keep = set(preserved) | _set_attrs(graph)
    for n in graph.findAllNodes("prim::GetAttr"):
        if n.s("name") in keep:
            continue
        ok, obj = _resolve(n.output(), self_value, module)
        if not ok or isinstance(obj, cthtorch.nn.Module):
            continue
        if isinstance(obj, cthtorch.Tensor):
            obj = obj.detach()
        elif not (obj is None or isinstance(obj, (bool, int, float, str))):
            continue
        with graph.insert_point_guard(n):
            c = graph.insertConstant(obj)
        c.node()._scope = n._scope
        n.output().replaceAllUsesWith(c)
        n.destroy()
    eliminate_dead_code(graph)


def remove_dropout(graph):
    """Dropout in eval (its `train` argument a constant False) is the identity."""
    for n in list(graph.findAllNodes("aten::dropout")) + [m for k in _DROPOUTS - {"aten::dropout"}
                                                            for m in graph.findAllNodes(k)]:
        train = n.inputs()[2] if len(n.inputs()) > 2 else None
        if train is None or train.node().kind() != "prim::Constant" or train.node()._constant_value():
            continue
        n.output().replaceAllUsesWith(n.inputs()[0])
        n.destroy()


def _const(v):
    n = v.node()
    return (True, n._constant_value()) if n.kind() == "prim::Constant" else (False, None)


def fold_conv_batch_norm(graph):
    """conv -> batch_norm(eval) with constant parameters: the batch norm's
    scale and shift folded into the conv's weight and bias."""
    for bn in graph.findAllNodes("aten::batch_norm"):
        x = bn.inputs()[0]
        conv = x.node()
        if conv.kind() not in ("aten::_convolution", "aten::conv2d") or len(x.uses()) != 1:
            continue
        vals = [_const(v) for v in bn.inputs()[1:6] + bn.inputs()[7:8]]
        if not all(ok for ok, _ in vals):
            continue
        gamma, beta, mean, var, training, eps = [v for _, v in vals]
        okw, w = _const(conv.inputs()[1])
        okb, b = _const(conv.inputs()[2])
        if training or not okw or not okb or mean is None or var is None:
            continue
        with cthtorch.no_grad():
            inv = (var + eps).rsqrt()
            scale = inv if gamma is None else gamma * inv
            shape = [-1] + [1] * (w.dim() - 1)
            new_w = w * scale.reshape(shape)
            new_b = ((b if b is not None else cthtorch.zeros_like(mean)) - mean) * scale + \
                (beta if beta is not None else 0)
        with graph.insert_point_guard(conv):
            cw = graph.insertConstant(new_w.contiguous())
            cb = graph.insertConstant(new_b.contiguous())
        conv.replaceInput(1, cw)
        conv.replaceInput(2, cb)
        bn.output().replaceAllUsesWith(x)
        bn.destroy()
    eliminate_dead_code(graph)


def transpose_frozen_linear(graph):
    """aten::linear(x, W, b) with constant W (and b) and a 2-d traced x ->
    aten::addmm(b, x, W^T) with W^T made once (torch's frozen-linear
    transpose rewrite, part of optimize_for_inference; the 2-d input is what
    the trace recorded)."""
    for n in graph.findAllNodes("aten::linear"):
        x, w, b = n.inputs()
        okw, wv = _const(w)
        okb, bv = _const(b)
        xt = x.type()
        if not (okw and okb and isinstance(wv, cthtorch.Tensor) and wv.dim() == 2 and
                isinstance(xt, _ir.TensorType) and xt.dim() == 2):
            continue
        with graph.insert_point_guard(n):
            wt = graph.insertConstant(wv.t().contiguous())
            if bv is None:
                new = graph.insertNode(graph.create("aten::mm", [x, wt]))
            else:
                one = graph.insertConstant(1)
                new = graph.insertNode(graph.create("aten::addmm", [b, x, wt, one, one]))
        new._source, new._scope = n._source, n._scope
        new.output().setType(n.output().type())
        n.output().replaceAllUsesWith(new.output())
        n.destroy()
    eliminate_dead_code(graph)


def optimize_frozen_graph(graph, optimize_numerics=True):
    remove_dropout(graph)
    constant_propagation(graph)
    if optimize_numerics:
        fold_conv_batch_norm(graph)
    eliminate_common_subexpression(graph)
    constant_propagation(graph)
    eliminate_dead_code(graph)


def freeze_module(mod, preserved_attrs=None, optimize_numerics=True):
    from .._module import RecursiveScriptModule, ScriptModule
    if not isinstance(mod, ScriptModule):
        raise RuntimeError("Freezing expects a ScriptModule as input. Please use torch.jit.script or "
                           "torch.jit.trace to script your 'nn.Module'.")
    if mod.training:
        raise RuntimeError("Freezing is currently only implemented for modules in eval mode. Please call .eval() "
                           "on your module before freezing.")
    preserved = list(preserved_attrs or [])
    frozen = RecursiveScriptModule()
    frozen.training = False
    object.__setattr__(frozen, "original_name", mod.original_name)
    object.__setattr__(frozen, "_type", mod._type)
    for name in preserved:
        if hasattr(mod, name) and name not in mod._methods:
            v = getattr(mod, name)
            if isinstance(v, cthtorch.nn.Module):
                frozen.add_module(name, v)
            else:
                object.__setattr__(frozen, name, v)
    for name, m in mod._methods.items():
        if name != "forward" and name not in preserved:
            continue
        g = inline_calls(m.graph, mod)
        fold_attributes(g, mod, preserved)
        optimize_frozen_graph(g, optimize_numerics)
        frozen._define_method(name, g)
    return frozen
