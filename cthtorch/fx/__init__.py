"""cthtorch.fx: capture a module as a Python-level graph, rewrite it, and
run it again (PyTorch's torch.fx API).

    gm = torch.fx.symbolic_trace(module)
    for node in gm.graph.nodes: ...
    gm.recompile()
"""
from . import immutable_collections  # noqa: F401
from .graph import Graph, CodeGen  # noqa: F401
from .graph_module import GraphModule
from .interpreter import Interpreter, Transformer
from .node import Node, map_arg, map_aggregate, has_side_effect  # noqa: F401
from .proxy import Proxy, TraceError  # noqa: F401
from ._symbolic_trace import Tracer, symbolic_trace, wrap, PH  # noqa: F401
from .subgraph_rewriter import replace_pattern
from . import passes  # noqa: F401

__all__ = ["symbolic_trace", "Tracer", "wrap", "Graph", "GraphModule", "Interpreter", "Transformer", "Node",
           "Proxy", "replace_pattern", "has_side_effect", "map_arg", "map_aggregate"]
