"""Inlining: prim::CallMethod / prim::CallFunction nodes replaced by the
callee's body (what `.inlined_graph` shows)."""
from .. import _ir

__all__ = ["inline_calls", "inline_graph_into", "inline_in_place"]


def inline_graph_into(callee, call_node, args):
    """Copies callee's nodes before call_node with its inputs bound to args;
    returns the values standing for callee's outputs."""
    g = call_node.owningGraph()
    env = dict(zip(callee.inputs(), args))
    with g.insert_point_guard(call_node):
        for n in callee.nodes():
            c = g.createClone(n, lambda v: env[v])
            if call_node._scope and not (c._scope + "/").startswith(call_node._scope + "/"):
                # torch's inlined scopes nest: __module.0/__module.0.1
                c._scope = call_node._scope + ("/" + c._scope if c._scope else "")
            g.insertNode(c)
            for o, co in zip(n.outputs(), c.outputs()):
                env[o] = co
    return [env[v] for v in callee.outputs()]


def _resolve_module(v, root_value, root):
    """The module object a value stands for: root, or a prim::GetAttr chain from it."""
    if v is root_value:
        return root
    n = v.node()
    if n.kind() == "prim::GetAttr" and root is not None:
        base = _resolve_module(n.inputs()[0], root_value, root)
        if base is not None:
            return getattr(base, n.s("name"), None)
    if n.kind() == "prim::Constant" and n.hasAttribute("value"):
        return n._constant_value()
    return None


def _inline_block(block, root_value, root):
    for n in list(block.nodes()):
        for b in n.blocks():
            _inline_block(b, root_value, root)
        if n.kind() == "prim::CallMethod":
            mod = _resolve_module(n.inputs()[0], root_value, root)
            methods = getattr(mod, "_methods", None) if mod is not None else None
            m = methods.get(n.s("name")) if methods else None
            if m is None:
                continue
            callee = inline_calls(m.graph, mod)
            outs = inline_graph_into(callee, n, n.inputs())
        elif n.kind() == "prim::CallFunction":
            fn = _resolve_module(n.inputs()[0], root_value, root)
            g = getattr(fn, "graph", None)
            if not isinstance(g, _ir.Graph):
                continue
            outs = inline_graph_into(inline_calls(g, None), n, n.inputs()[1:])
        else:
            continue
        for o, r in zip(n.outputs(), outs):
            o.replaceAllUsesWith(r)
        fn_in = n.inputs()[0]
        n.destroy()
        if fn_in.node().kind() == "prim::Constant" and not fn_in.hasUses():
            fn_in.node().destroy()


def inline_calls(graph, module=None):
    """A copy of graph with method and function calls inlined, recursively
    (module: the object the graph's first input stands for)."""
    g = graph.copy()
    root_value = g.inputs()[0] if (module is not None and g.inputs()) else None
    _inline_block(g.block(), root_value, module)
    return g


def inline_in_place(graph, module=None):
    """torch._C._jit_pass_inline: calls inlined into graph itself."""
    root_value = graph.inputs()[0] if (module is not None and graph.inputs()) else None
    _inline_block(graph.block(), root_value, module)
