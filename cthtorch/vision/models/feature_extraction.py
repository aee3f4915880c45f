"""torchvision.models.feature_extraction: name every node of a model's fx graph by the module path it runs
in (get_graph_node_names) and rebuild the model to return the chosen nodes' values (create_feature_extractor),
with separate graphs for train and eval mode as torchvision keeps them."""
import inspect
import math
import re
import warnings
from collections import OrderedDict
from copy import deepcopy

from cthtorch import fx, nn

__all__ = ["create_feature_extractor", "get_graph_node_names"]


class LeafModuleAwareTracer(fx.Tracer):
    """A tracer that also keeps the given module classes whole (torchvision.ops' layers by default)"""

    def __init__(self, *args, **kwargs):
        self.leaf_modules = {}
        if "leaf_modules" in kwargs:
            self.leaf_modules = kwargs.pop("leaf_modules")
        super().__init__(*args, **kwargs)

    def is_leaf_module(self, m, module_qualname):
        if isinstance(m, tuple(self.leaf_modules)):
            return True
        return super().is_leaf_module(m, module_qualname)


class NodePathTracer(LeafModuleAwareTracer):
    """Records each node's qualified name: the path of the module it runs in, plus the op's own name for
    non-module nodes, numbered _1, _2, ... where a name repeats under the same parent"""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.current_module_qualname = ""
        self.node_to_qualname = OrderedDict()

    def call_module(self, m, forward, args, kwargs):
        old_qualname = self.current_module_qualname
        try:
            module_qualname = self.path_of_module(m)
            self.current_module_qualname = module_qualname
            if not self.is_leaf_module(m, module_qualname):
                return forward(*args, **kwargs)
            return self.create_proxy("call_module", module_qualname, args, kwargs)
        finally:
            self.current_module_qualname = old_qualname

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None, *_, **__):
        proxy = super().create_proxy(kind, target, args, kwargs, name, type_expr)
        self.node_to_qualname[proxy.node] = self._get_node_qualname(self.current_module_qualname, proxy.node)
        return proxy

    def _get_node_qualname(self, module_qualname, node):
        node_qualname = module_qualname
        if node.op != "call_module":
            if node_qualname:
                node_qualname += "."
            node_qualname += str(node)
        # fx numbers repeats globally (add_1 ...); the names here are numbered under their parent instead
        if re.match(r".+_[0-9]+$", node_qualname) is not None:
            node_qualname = node_qualname.rsplit("_", 1)[0]
        for existing in reversed(list(self.node_to_qualname.values())):
            if re.match(r"%s(_[0-9]+)?$" % re.escape(node_qualname), existing) is not None:
                postfix = existing[len(node_qualname):]
                node_qualname += "_%d" % (int(postfix[1:]) + 1 if postfix else 1)
                break
        return node_qualname


def _default_tracer_kwargs(tracer_kwargs):
    from cthtorch.vision import ops
    leaf = [v for v in vars(ops).values() if inspect.isclass(v) and issubclass(v, nn.Module)]
    defaults = {"autowrap_modules": (math, ops), "leaf_modules": leaf}
    tracer_kwargs = dict(tracer_kwargs or {})
    leaf_modules = tracer_kwargs.pop("leaf_modules", [])
    autowrap = tracer_kwargs.pop("autowrap_modules", ())
    out = dict(defaults, **tracer_kwargs)
    out["leaf_modules"] = list(set(leaf + list(leaf_modules)))
    out["autowrap_modules"] = tuple(set(defaults["autowrap_modules"] + tuple(autowrap)))
    return out


def _warn_graph_differences(train_tracer, eval_tracer):
    train_nodes = list(train_tracer.node_to_qualname.values())
    eval_nodes = list(eval_tracer.node_to_qualname.values())
    if len(train_nodes) == len(eval_nodes) and all(t == e for t, e in zip(train_nodes, eval_nodes)):
        return
    suggestion_msg = ("When choosing nodes for feature extraction, you may need to specify output nodes for train "
                      "and eval mode separately.")
    msg = ("NOTE: The nodes obtained by tracing the model in eval mode are a subsequence of those obtained in "
           "train mode. " if all(n in train_nodes for n in eval_nodes) else
           "The nodes obtained by tracing the model in train mode are different to those obtained in eval mode. ")
    warnings.warn(msg + suggestion_msg)


def get_graph_node_names(model, tracer_kwargs=None, suppress_diff_warning=False, concrete_args=None):
    """(train_nodes, eval_nodes): the qualified names of the model's graph nodes, traced in each mode"""
    tracer_kwargs = _default_tracer_kwargs(tracer_kwargs)
    is_training = model.training
    train_tracer = NodePathTracer(**tracer_kwargs)
    train_tracer.trace(model.train(), concrete_args=concrete_args)
    eval_tracer = NodePathTracer(**tracer_kwargs)
    eval_tracer.trace(model.eval(), concrete_args=concrete_args)
    train_nodes = list(train_tracer.node_to_qualname.values())
    eval_nodes = list(eval_tracer.node_to_qualname.values())
    if not suppress_diff_warning:
        _warn_graph_differences(train_tracer, eval_tracer)
    model.train(is_training)
    return train_nodes, eval_nodes


class DualGraphModule(fx.GraphModule):
    """A GraphModule holding a train-mode and an eval-mode graph; train()/eval() switch which one runs"""

    def __init__(self, root, train_graph, eval_graph, class_name="GraphModule"):
        super().__init__(root, train_graph, class_name)
        # the submodules and parameters that only the eval graph uses
        for node in eval_graph.nodes:
            if node.op in ("get_attr", "call_module") and not _has_path(self, node.target):
                _copy_path(root, self, node.target)
        self.train_graph = train_graph
        self.eval_graph = eval_graph
        # train mode with the train graph, as torchvision's: GraphModule took the root's mode, which would
        # pair eval mode with the train graph and make the caller's train(False) a no-op
        nn.Module.train(self, True)
        self.graph = train_graph

    def train(self, mode=True):
        if mode and not self.training:
            self.graph = self.train_graph
        elif not mode and self.training:
            self.graph = self.eval_graph
        return super().train(mode=mode)


def _has_path(module, target):
    for part in target.split("."):
        if not hasattr(module, part):
            return False
        module = getattr(module, part)
    return True


def _copy_path(src, dst, target):
    *prefix, field = target.split(".")
    for part in prefix:
        src = getattr(src, part)
        if not hasattr(dst, part):
            setattr(dst, part, nn.Module())
        dst = getattr(dst, part)
    setattr(dst, field, getattr(src, field))


def _to_strdict(n):
    if isinstance(n, list):
        return {str(i): str(i) for i in n}
    return {str(k): str(v) for k, v in n.items()}


def create_feature_extractor(model, return_nodes=None, train_return_nodes=None, eval_return_nodes=None,
                             tracer_kwargs=None, suppress_diff_warning=False, concrete_args=None):
    """A GraphModule returning {output name: value} for the nodes named in return_nodes (a list of node names
    or a dict node name -> output name); a name may be a prefix up to a '.', standing for the last node under
    it"""
    tracer_kwargs = _default_tracer_kwargs(tracer_kwargs)
    is_training = model.training
    if all(arg is None for arg in (return_nodes, train_return_nodes, eval_return_nodes)):
        raise ValueError("Either `return_nodes` or `train_return_nodes` and `eval_return_nodes` together, should "
                         "be specified")
    if (train_return_nodes is None) ^ (eval_return_nodes is None):
        raise ValueError("If any of `train_return_nodes` and `eval_return_nodes` are specified, then both should "
                         "be specified")
    if not ((return_nodes is None) ^ (train_return_nodes is None)):
        raise ValueError("If `train_return_nodes` and `eval_return_nodes` are specified, then both should be "
                         "specified")
    if train_return_nodes is None:
        return_nodes = _to_strdict(return_nodes)
        train_return_nodes, eval_return_nodes = deepcopy(return_nodes), deepcopy(return_nodes)
    else:
        train_return_nodes, eval_return_nodes = _to_strdict(train_return_nodes), _to_strdict(eval_return_nodes)

    tracers, graphs = {}, {}
    mode_return_nodes = {"train": train_return_nodes, "eval": eval_return_nodes}
    name = model.__class__.__name__ if isinstance(model, nn.Module) else model.__name__
    for mode in ("train", "eval"):
        model.train(mode == "train")
        tracer = NodePathTracer(**tracer_kwargs)
        graph = tracer.trace(model, concrete_args=concrete_args)
        graph_module = fx.GraphModule(tracer.root, graph, name)
        available = list(tracer.node_to_qualname.values())
        if len(set(available)) != len(available):
            raise ValueError("There are duplicate nodes! Please raise an issue "
                             "https://github.com/pytorch/vision/issues")
        for query in mode_return_nodes[mode]:
            if not any(re.match(r"^%s(\.|$)" % re.escape(query), n) is not None for n in available):
                raise ValueError("node: '%s' is not present in model. Hint: use `get_graph_node_names` to make "
                                 "sure the `return_nodes` you specified are present. It may even be that you need "
                                 "to specify `train_return_nodes` and `eval_return_nodes` separately." % query)
        for n in [n for n in graph.nodes if n.op == "output"]:
            graph.erase_node(n)
        nodes = list(graph.nodes)
        wanted = dict(mode_return_nodes[mode])
        output_nodes = OrderedDict()
        for n in reversed(nodes):   # the last node under a queried prefix is its output
            qualname = tracer.node_to_qualname.get(n)
            if qualname is None:
                continue
            for query in wanted:
                depth = query.count(".")
                if ".".join(qualname.split(".")[:depth + 1]) == query:
                    output_nodes[wanted.pop(query)] = n
                    break
        output_nodes = OrderedDict(reversed(list(output_nodes.items())))
        with graph.inserting_after(nodes[-1]):
            graph.output(output_nodes)
        graph.eliminate_dead_code()
        graph_module.recompile()
        tracers[mode], graphs[mode] = tracer, graph
    if not suppress_diff_warning:
        _warn_graph_differences(tracers["train"], tracers["eval"])
    graph_module = DualGraphModule(model, graphs["train"], graphs["eval"], class_name=name)
    model.train(is_training)
    graph_module.train(is_training)
    return graph_module


