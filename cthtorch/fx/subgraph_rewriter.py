"""replace_pattern: finds every match of a pattern (a function or module,
traced) in a GraphModule's graph and replaces it with the traced replacement.

A pattern matches when its nodes and a set of the graph's nodes agree on
op, target and non-Node arguments, pattern placeholders match any value
(the same value each time they're used), and no value inside the match
except its outputs is used outside it."""
from typing import Dict, List, NamedTuple

from .graph_module import GraphModule
from .node import Node, map_arg
from ._symbolic_trace import symbolic_trace

__all__ = ["Match", "replace_pattern"]


class Match(NamedTuple):
    anchor: Node                 # the graph node the pattern's output matched
    nodes_map: Dict[Node, Node]  # pattern node -> graph node


def _flatten(a):
    out = []
    map_arg(a, out.append)
    return out


def _same_structure(pa, ga, match_node):
    """pa: a pattern argument, ga: the graph's; Nodes are matched by match_node."""
    if isinstance(pa, Node):
        return isinstance(ga, Node) and match_node(pa, ga)
    if isinstance(pa, (list, tuple)):
        return isinstance(ga, (list, tuple)) and len(pa) == len(ga) and \
            all(_same_structure(p, g, match_node) for p, g in zip(pa, ga))
    if isinstance(pa, dict):
        return isinstance(ga, dict) and pa.keys() == ga.keys() and \
            all(_same_structure(pa[k], ga[k], match_node) for k in pa)
    if isinstance(ga, Node):
        return False
    return type(pa) is type(ga) and pa == ga


class _Matcher:
    def __init__(self, pattern):
        self.pattern = pattern
        out = [n for n in pattern.nodes if n.op == "output"][0]
        self.outputs = _flatten(out.args[0])
        self.placeholders = [n for n in pattern.nodes if n.op == "placeholder"]

    def match(self, anchor):
        self.nodes_map = {}
        if not self._match_node(self.outputs[-1], anchor):
            return None
        # the other outputs must have been reached too
        if any(o not in self.nodes_map for o in self.outputs):
            return None
        # inner values of the match may not leak out of it
        inner = {gn for pn, gn in self.nodes_map.items() if pn.op != "placeholder" and pn not in self.outputs}
        matched = set(gn for pn, gn in self.nodes_map.items() if pn.op != "placeholder")
        for gn in inner:
            if any(u not in matched for u in gn.users):
                return None
        return dict(self.nodes_map)

    def _match_node(self, pn, gn):
        if pn in self.nodes_map:
            return self.nodes_map[pn] is gn
        if pn.op == "placeholder":
            if gn in self.nodes_map.values():
                return False
            self.nodes_map[pn] = gn
            return True
        if pn.op != gn.op or pn.target != gn.target or gn.op in ("placeholder", "output"):
            return False
        if pn.op == "get_attr":
            self.nodes_map[pn] = gn
            return True
        saved = dict(self.nodes_map)
        self.nodes_map[pn] = gn
        if _same_structure(pn.args, gn.args, self._match_node) and \
                _same_structure(pn.kwargs, gn.kwargs, self._match_node):
            return True
        self.nodes_map = saved
        return False


def replace_pattern(gm: GraphModule, pattern, replacement) -> List[Match]:
    """Replaces each non-overlapping match of `pattern` in gm with
    `replacement` (functions or modules of the same signature); recompiles gm
    and returns the matches."""
    p_graph = pattern.graph if isinstance(pattern, GraphModule) else symbolic_trace(pattern).graph
    r_graph = replacement.graph if isinstance(replacement, GraphModule) else symbolic_trace(replacement).graph
    graph = gm.graph
    matcher = _Matcher(p_graph)
    matches, claimed = [], set()
    for node in list(graph.nodes):
        m = matcher.match(node)
        if m is None:
            continue
        body = {gn for pn, gn in m.items() if pn.op != "placeholder"}
        if body & claimed:
            continue
        claimed |= body
        matches.append(Match(anchor=node, nodes_map=m))

    r_placeholders = [n for n in r_graph.nodes if n.op == "placeholder"]
    for match in matches:
        val_map = {}
        for pp, rp in zip(matcher.placeholders, r_placeholders):
            val_map[rp] = match.nodes_map[pp]
        # the replacement goes just before the first user of what the match
        # returns (as torch places it), so the rewritten code reads in use order
        users = {u for po in matcher.outputs for u in match.nodes_map[po].users}
        first_user = next((n for n in graph.nodes if n in users), match.anchor)
        with graph.inserting_before(first_user):
            copied = graph.graph_copy(r_graph, val_map)
        new_outputs = _flatten(copied) if not isinstance(copied, Node) else [copied]
        if len(new_outputs) != len(matcher.outputs):
            raise RuntimeError("cthtorch.fx.replace_pattern: the pattern returns %d values and the replacement %d"
                               % (len(matcher.outputs), len(new_outputs)))
        for po, ro in zip(matcher.outputs, new_outputs):
            match.nodes_map[po].replace_all_uses_with(ro)
        for pn in reversed(list(p_graph.nodes)):
            if pn.op in ("placeholder", "output") or pn not in match.nodes_map:
                continue
            gn = match.nodes_map[pn]
            if not gn.users and not gn._erased:
                graph.erase_node(gn)
    gm.recompile()
    return matches
