"""Common subexpression elimination: two pure nodes of the same kind,
attributes and inputs compute the same value; the later one goes
(torch._C._jit_pass_cse). Values that an in-place op may write (through any
view of them) are left alone."""
from .. import _ir
from .dce import has_side_effects

__all__ = ["eliminate_common_subexpression"]

# ops whose output aliases their first input
_VIEW_OPS = {"aten::select", "aten::slice", "aten::view", "aten::reshape", "aten::transpose", "aten::t",
             "aten::expand", "aten::expand_as", "aten::permute", "aten::squeeze", "aten::unsqueeze",
             "aten::narrow", "aten::as_strided", "aten::flatten", "aten::diagonal", "aten::detach",
             "aten::unfold", "aten::view_as", "aten::reshape_as", "aten::contiguous", "aten::__getitem__",
             "aten::unbind", "aten::split", "aten::chunk", "aten::alias", "prim::ListUnpack", "prim::TupleUnpack",
             "prim::ListConstruct", "prim::TupleConstruct"}


def _all_nodes(block):
    for n in block.nodes():
        yield n
        for b in n.blocks():
            yield from _all_nodes(b)


def _mutated_values(graph):
    """Values an in-place op may write: the written value and everything
    aliasing it through view ops (union-find over view edges)."""
    parent = {}

    def find(v):
        while parent.get(v, v) is not v:
            v = parent[v]
        return v

    def union(a, b):
        ra, rb = find(a), find(b)
        if ra is not rb:
            parent[ra] = rb
    nodes = list(_all_nodes(graph.block()))
    # a graph's tensor inputs may alias one another (torch's alias analysis assumes so)
    tensor_inputs = [v for v in graph.inputs() if not isinstance(v.type(), (_ir.IntType, _ir.FloatType,
                                                                             _ir.BoolType, _ir.StringType,
                                                                             _ir.NoneType, _ir.ClassType))]
    for a, b in zip(tensor_inputs, tensor_inputs[1:]):
        union(a, b)
    for n in nodes:
        if n.kind() in _VIEW_OPS:
            for i in n.inputs():
                for o in n.outputs():
                    union(i, o)
        elif has_side_effects(n) and n.inputs():
            for o in n.outputs():
                union(n.inputs()[0], o)
    written = {find(n.inputs()[0]) for n in nodes
               if has_side_effects(n) and n.inputs() and n.kind().startswith("aten::")}
    written |= {find(v) for n in nodes if n.kind() in ("prim::CallMethod", "prim::CallFunction")
                for v in n.inputs()}
    return {v for n in nodes for v in list(n.inputs()) + list(n.outputs()) if find(v) in written}


def _key(n):
    attrs = []
    for name in n.attributeNames():
        kind = n.kindOf(name)
        v = n._get(name)
        if kind == "t":
            v = ("tensor", id(v))
        elif isinstance(v, list):
            v = tuple(v)
        attrs.append((name, kind, v if not hasattr(v, "__dict__") else id(v)))
    types = tuple(str(o.type()) for o in n.outputs()) if n.kind() == "prim::Constant" else ()
    return (n.kind(), tuple(attrs), tuple(id(v) for v in n.inputs()), types)


def _cse_block(block, seen, mutated):
    changed = False
    for n in list(block.nodes()):
        if n.blocks():
            for b in n.blocks():
                changed |= _cse_block(b, dict(seen), mutated)
            continue
        if has_side_effects(n) or n.isNondeterministic() or n.kind() in ("prim::GetAttr", "prim::Param") \
                or any(v in mutated for v in n.inputs()) or not n.outputs():
            continue
        try:
            k = _key(n)
            hash(k)
        except TypeError:
            continue
        prev = seen.get(k)
        if prev is None:
            seen[k] = n
            continue
        for a, b in zip(n.outputs(), prev.outputs()):
            a.replaceAllUsesWith(b)
        n.destroy()
        changed = True
    return changed


def eliminate_common_subexpression(graph):
    """In place; returns whether the graph changed."""
    return _cse_block(graph.block(), {}, _mutated_values(graph))
