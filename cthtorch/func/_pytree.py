"""A small pytree (nested containers of leaves) for cthtorch.func.

Containers are tuple, list, dict (keys in insertion order), OrderedDict and
namedtuple, as in torch.utils._pytree; everything else (tensors, numbers,
None) is a leaf. The TreeSpec repr follows torch's, so the structure shown in
vmap's error messages reads the same.
"""
import collections

__all__ = ["TreeSpec", "LeafSpec", "tree_flatten", "tree_unflatten", "tree_leaves", "tree_map",
           "broadcast_to_and_flatten"]


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _node_type(x):
    """The container kind of x, or None for a leaf."""
    if _is_namedtuple(x):
        return type(x)
    if isinstance(x, collections.OrderedDict):
        return collections.OrderedDict
    for t in (tuple, list, dict):
        if type(x) is t:
            return t
    return None


def _children(x, kind):
    if kind in (dict, collections.OrderedDict):
        keys = list(x.keys())
        return [x[k] for k in keys], keys
    if kind not in (tuple, list):   # namedtuple
        return list(x), kind
    return list(x), None


def _rebuild(kind, context, children):
    if kind is tuple:
        return tuple(children)
    if kind is list:
        return list(children)
    if kind in (dict, collections.OrderedDict):
        return kind(zip(context, children))
    return kind(*children)   # namedtuple


class LeafSpec:
    type = None
    num_leaves = 1
    num_children = 0
    children_specs = []

    def is_leaf(self):
        return True

    def __eq__(self, other):
        return isinstance(other, LeafSpec)

    def __hash__(self):
        return 0

    def __repr__(self, indent=0):
        return "*"


class TreeSpec:
    def __init__(self, kind, context, children_specs):
        self.type = kind
        self._context = context
        self.children_specs = children_specs
        self.num_children = len(children_specs)
        self.num_leaves = sum(c.num_leaves for c in children_specs)

    def is_leaf(self):
        return False

    def __eq__(self, other):
        return (isinstance(other, TreeSpec) and self.type is other.type and self._context == other._context
                and self.children_specs == other.children_specs)

    def __hash__(self):
        return hash((self.type, self.num_children))

    def __repr__(self, indent=0):
        context = self._context
        if isinstance(context, type):
            context = context.__name__
        prefix = "TreeSpec(%s, %s, [" % (self.type.__name__, context)
        body = ""
        if self.num_children > 0:
            indent += 2
            body += self.children_specs[0].__repr__(indent)
            body += "," if self.num_children > 1 else ""
            body += ",".join("\n" + " " * indent + c.__repr__(indent) for c in self.children_specs[1:])
        return prefix + body + "])"


def tree_flatten(tree):
    """(list of leaves, TreeSpec)."""
    leaves = []

    def go(x):
        kind = _node_type(x)
        if kind is None:
            leaves.append(x)
            return LeafSpec()
        children, context = _children(x, kind)
        return TreeSpec(kind, context, [go(c) for c in children])

    spec = go(tree)
    return leaves, spec


def tree_unflatten(leaves, spec):
    it = iter(leaves)

    def go(s):
        if s.is_leaf():
            return next(it)
        return _rebuild(s.type, s._context, [go(c) for c in s.children_specs])

    return go(spec)


def tree_leaves(tree):
    return tree_flatten(tree)[0]


def tree_map(fn, tree):
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(x) for x in leaves], spec)


def broadcast_to_and_flatten(prefix, spec):
    """Flattened prefix tree broadcast to spec's leaves, or None when the structures don't match."""
    kind = _node_type(prefix)
    if kind is None:
        return [prefix] * spec.num_leaves
    if spec.is_leaf() or kind is not spec.type:
        return None
    children, context = _children(prefix, kind)
    if len(children) != spec.num_children or (kind in (dict, collections.OrderedDict)
                                               and set(context) != set(spec._context)):
        return None
    if kind in (dict, collections.OrderedDict):
        children = [prefix[k] for k in spec._context]
    out = []
    for c, s in zip(children, spec.children_specs):
        r = broadcast_to_and_flatten(c, s)
        if r is None:
            return None
        out.extend(r)
    return out
