"""torch.fx.experimental.optimization: inference rewrites on a traced module. fuse folds eval-mode batch norms
into the convolution or linear layer before them (the FX conv-bn fuser tutorial's pass); optimize_for_inference
needs MKLDNN modules, which cthtorch does not have."""
import copy

import cthtorch
import cthtorch.fx as fx
import cthtorch.nn as nn
from cthtorch.nn.utils.fusion import fuse_conv_bn_eval, fuse_linear_bn_eval

__all__ = ["matches_module_pattern", "replace_node_module", "fuse", "remove_dropout", "extract_subgraph",
           "optimize_for_inference"]


def _parent_name(target):
    """Splits a qualname into parent path and last atom: 'foo.bar.baz' -> ('foo.bar', 'baz')."""
    *parent, name = target.rsplit(".", 1)
    return parent[0] if parent else "", name


def matches_module_pattern(pattern, node, modules):
    """Whether node and its first argument are call_module nodes of the two module types of pattern."""
    if len(node.args) == 0:
        return False
    for expected_type, current in zip(pattern, (node.args[0], node)):
        if not isinstance(current, fx.Node) or current.op != "call_module" or not isinstance(current.target, str):
            return False
        if current.target not in modules or type(modules[current.target]) is not expected_type:
            return False
    return True


def replace_node_module(node, modules, new_module):
    if not isinstance(node.target, str):
        raise AssertionError(f"Expected str target, got {type(node.target)}")
    parent_name, name = _parent_name(node.target)
    modules[node.target] = new_module
    setattr(modules[parent_name], name, new_module)


def fuse(model, inplace=False, no_trace=False):
    """Fuses convolution/BN and linear/BN layers for inference purposes.
    Will deepcopy your model by default, but can modify the model inplace as well."""
    patterns = [(nn.Conv1d, nn.BatchNorm1d), (nn.Conv2d, nn.BatchNorm2d), (nn.Conv3d, nn.BatchNorm3d),
                (nn.Linear, nn.BatchNorm1d)]
    if not inplace:
        model = copy.deepcopy(model)
    fx_model = model if no_trace and isinstance(model, fx.GraphModule) else fx.symbolic_trace(model)
    modules = dict(fx_model.named_modules())
    new_graph = copy.deepcopy(fx_model.graph)
    for pattern in patterns:
        for node in new_graph.nodes:
            if not matches_module_pattern(pattern, node, modules):
                continue
            if len(node.args[0].users) > 1:   # the conv/linear output is used elsewhere too
                continue
            first, bn = modules[node.args[0].target], modules[node.target]
            if not bn.track_running_stats:
                continue
            fused = fuse_linear_bn_eval(first, bn) if pattern[0] is nn.Linear else fuse_conv_bn_eval(first, bn)
            replace_node_module(node.args[0], modules, fused)
            node.replace_all_uses_with(node.args[0])
            new_graph.erase_node(node)
    return fx.GraphModule(fx_model, new_graph)


def remove_dropout(model):
    """Removes all dropout layers from the module."""
    fx_model = fx.symbolic_trace(model)

    class DropoutRemover(fx.Transformer):
        def call_module(self, target, args, kwargs):
            if isinstance(self.submodules[target], nn.Dropout):
                if len(args) != 1:
                    raise AssertionError(f"Expected 1 arg for Dropout, got {len(args)}")
                return args[0]
            return super().call_module(target, args, kwargs)

    return DropoutRemover(fx_model).transform()


def extract_subgraph(orig_module, nodes, inputs, outputs):
    """Given lists of nodes from an existing graph that represent a subgraph, returns a submodule that executes
    that subgraph."""
    new_graph = fx.Graph()
    env = {}
    for inp in inputs:
        env[inp] = new_graph.placeholder(inp.name)
    for node in nodes:
        env[node] = new_graph.node_copy(node, lambda x: env[x])
    new_graph.output([env[out] for out in outputs])
    new_graph.lint()
    return fx.GraphModule(orig_module, new_graph)


def optimize_for_inference(model, pass_config=None, tracer=fx.Tracer):
    raise NotImplementedError("cthtorch: torch.fx.experimental.optimization.optimize_for_inference converts to "
                              "MKLDNN modules (torch.utils.mkldnn), which cthtorch does not have; use fuse() and "
                              "remove_dropout()")
