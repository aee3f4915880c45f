"""torch.utils._pytree: nested containers ("pytrees") flattened to a list of
leaves and a TreeSpec that rebuilds them.

Nodes are tuple, list, dict (keys in insertion order), OrderedDict,
defaultdict, deque, namedtuples (cthtorch.return_types included) and any
type given to register_pytree_node; everything else, None included, is a
leaf. TreeSpec prints as torch's does, so the structures in vmap's error
messages read the same. Key paths (tree_flatten_with_path, keystr, ...) name
each leaf's place as torch's SequenceKey/MappingKey/GetAttrKey. Not here:
TreeSpec serialization (treespec_dumps/loads), which raises NotImplementedError.
"""
import collections
import dataclasses


__all__ = ["TreeSpec", "LeafSpec", "register_pytree_node", "tree_is_leaf", "tree_flatten", "tree_unflatten",
           "tree_iter", "tree_leaves", "tree_structure", "tree_map", "tree_map_", "tree_map_only", "tree_map_only_",
           "tree_all", "tree_any", "tree_all_only", "tree_any_only", "is_namedtuple", "is_namedtuple_class",
           "is_namedtuple_instance", "tree_flatten_with_path", "tree_leaves_with_path", "tree_map_with_path",
           "keystr", "key_get", "SequenceKey", "MappingKey", "GetAttrKey", "treespec_dumps", "treespec_loads",
           "broadcast_to_and_flatten"]

NodeDef = collections.namedtuple("NodeDef", "type flatten_fn unflatten_fn flatten_with_keys_fn")
SUPPORTED_NODES = {}


class namedtuple:   # noqa: N801 - the node type torch's specs show for every namedtuple
    """Stands for all namedtuple classes in a TreeSpec (the context is the class)."""


def register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None, to_dumpable_context=None,
                         from_dumpable_context=None, flatten_with_keys_fn=None):
    """flatten_fn(obj) -> (children, context); unflatten_fn(children, context) -> obj."""
    if cls in SUPPORTED_NODES:
        raise ValueError("%s is already registered as pytree node." % cls)
    SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn)


_register_pytree_node = register_pytree_node   # the pre-2.2 name some libraries still import


def is_namedtuple_class(cls):
    return isinstance(cls, type) and issubclass(cls, tuple) and isinstance(getattr(cls, "_fields", None), tuple)


def is_namedtuple_instance(obj):
    return is_namedtuple_class(type(obj))


def is_namedtuple(obj):
    return is_namedtuple_class(obj if isinstance(obj, type) else type(obj))


def _dict_flatten(d):
    return list(d.values()), list(d.keys())


def _defaultdict_flatten(d):
    return list(d.values()), [d.default_factory, list(d.keys())]


# ---- key paths: where a leaf sits, as torch names it


@dataclasses.dataclass(frozen=True)
class SequenceKey:
    idx: int

    def __str__(self):
        return "[%r]" % self.idx

    def get(self, sequence):
        return sequence[self.idx]


@dataclasses.dataclass(frozen=True)
class MappingKey:
    key: object

    def __str__(self):
        return "[%r]" % (self.key,)

    def get(self, mapping):
        return mapping[self.key]


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    name: str

    def __str__(self):
        return "." + self.name

    def get(self, obj):
        return getattr(obj, self.name)


def _sequence_with_keys(flatten):
    def with_keys(x):
        children, context = flatten(x)
        return [(SequenceKey(i), c) for i, c in enumerate(children)], context
    return with_keys


def _mapping_with_keys(flatten):
    def with_keys(d):
        children, context = flatten(d)
        return [(MappingKey(k), d[k]) for k in d.keys()], context
    return with_keys


def _namedtuple_with_keys(t):
    return [(GetAttrKey(f), getattr(t, f)) for f in type(t)._fields], type(t)


def _builtin(cls, flatten, unflatten, keys):
    register_pytree_node(cls, flatten, unflatten, flatten_with_keys_fn=keys(flatten))


_builtin(tuple, lambda t: (list(t), None), lambda c, _: tuple(c), _sequence_with_keys)
_builtin(list, lambda t: (list(t), None), lambda c, _: list(c), _sequence_with_keys)
_builtin(dict, _dict_flatten, lambda c, keys: dict(zip(keys, c)), _mapping_with_keys)
_builtin(collections.OrderedDict, _dict_flatten, lambda c, keys: collections.OrderedDict(zip(keys, c)),
         _mapping_with_keys)
_builtin(collections.defaultdict, _defaultdict_flatten, lambda c, ctx: collections.defaultdict(ctx[0], zip(ctx[1], c)),
         _mapping_with_keys)
_builtin(collections.deque, lambda d: (list(d), d.maxlen), lambda c, maxlen: collections.deque(c, maxlen=maxlen),
         _sequence_with_keys)
register_pytree_node(namedtuple, lambda t: (list(t), type(t)), lambda c, cls: cls(*c),
                     flatten_with_keys_fn=_namedtuple_with_keys)


def _node_type(x):
    """The registered node type of x, or None for a leaf."""
    t = type(x)
    if t in SUPPORTED_NODES and t is not namedtuple:
        return t
    if is_namedtuple_class(t):
        return namedtuple
    return None


class TreeSpec:
    def __init__(self, type, context, children_specs):   # noqa: A002 - torch's argument name
        self.type = type
        self.context = context
        self.children_specs = list(children_specs)
        self.num_children = len(self.children_specs)
        self.num_leaves = sum(c.num_leaves for c in self.children_specs)
        self.num_nodes = 1 + sum(c.num_nodes for c in self.children_specs)

    def is_leaf(self):
        return False

    def child(self, index):
        return self.children_specs[index]

    def children(self):
        return list(self.children_specs)

    def unflatten(self, leaves):
        return tree_unflatten(leaves, self)

    def flatten_up_to(self, tree):
        """The subtrees of tree at this spec's leaves (tree must have this structure above them)."""
        if self.is_leaf():
            return [tree]
        children = _flatten_node(tree, self)
        return [x for c, s in zip(children, self.children_specs) for x in s.flatten_up_to(c)]

    def __eq__(self, other):
        return (isinstance(other, TreeSpec) and self.type is other.type and self.context == other.context
                and self.children_specs == other.children_specs)

    def __hash__(self):
        return hash((self.type, self.num_children))

    def __repr__(self, indent=0):
        name = "namedtuple" if self.type is namedtuple else self.type.__name__
        context = self.context
        body = ""
        if self.num_children > 0:
            indent += 2
            body += self.children_specs[0].__repr__(indent)
            body += "," if self.num_children > 1 else ""
            body += ",".join("\n" + " " * indent + c.__repr__(indent) for c in self.children_specs[1:])
        return "TreeSpec(%s, %s, [%s])" % (name, context, body)


class LeafSpec(TreeSpec):
    def __init__(self):
        super().__init__(None, None, [])
        self.num_leaves = 1
        self.num_nodes = 1

    def is_leaf(self):
        return True

    def __eq__(self, other):
        return isinstance(other, TreeSpec) and other.is_leaf()

    def __hash__(self):
        return 0

    def __repr__(self, indent=0):
        return "*"


def _is_leaf(tree, is_leaf):
    return (is_leaf is not None and is_leaf(tree)) or _node_type(tree) is None


def tree_is_leaf(tree, is_leaf=None):
    return _is_leaf(tree, is_leaf)


def tree_flatten(tree, is_leaf=None):
    """(list of leaves, TreeSpec)."""
    leaves = []

    def go(x):
        if _is_leaf(x, is_leaf):
            leaves.append(x)
            return LeafSpec()
        kind = _node_type(x)
        children, context = SUPPORTED_NODES[kind].flatten_fn(x)
        return TreeSpec(kind, context, [go(c) for c in children])

    spec = go(tree)
    return leaves, spec


def tree_unflatten(leaves, treespec):
    if not isinstance(treespec, TreeSpec):
        raise TypeError("tree_unflatten(leaves, treespec): Expected `treespec` to be instance of TreeSpec but got "
                        "item of type %s." % type(treespec))
    leaves = list(leaves)
    if len(leaves) != treespec.num_leaves:
        raise ValueError("treespec.unflatten(leaves): `leaves` has length %d but the spec refers to a pytree that "
                         "holds %d items (%r)." % (len(leaves), treespec.num_leaves, treespec))
    it = iter(leaves)

    def go(s):
        if s.is_leaf():
            return next(it)
        return SUPPORTED_NODES[s.type].unflatten_fn([go(c) for c in s.children_specs], s.context)

    return go(treespec)


def tree_leaves(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[0]


def tree_iter(tree, is_leaf=None):
    yield from tree_leaves(tree, is_leaf)


def tree_structure(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[1]


def _flatten_node(tree, spec):
    """tree's children, checked against spec's node (torch's mismatch errors)."""
    kind = _node_type(tree)
    if kind is not spec.type:
        raise ValueError("Node type mismatch; expected %s, but got %s." % (
            spec.type if spec.type is not namedtuple else "namedtuple", type(tree)))
    children, context = SUPPORTED_NODES[kind].flatten_fn(tree)
    if kind in (dict, collections.OrderedDict, collections.defaultdict):
        keys = context if kind is not collections.defaultdict else context[1]
        want = spec.context if kind is not collections.defaultdict else spec.context[1]
        if set(keys) != set(want):
            raise ValueError("Node keys mismatch; missing key(s): %s; extra key(s): %s."
                             % (set(want) - set(keys), set(keys) - set(want)))
        return [tree[k] for k in want]
    if len(children) != spec.num_children:
        raise ValueError("Node arity mismatch; expected %d, but got %d." % (spec.num_children, len(children)))
    if kind is namedtuple and context is not spec.context:
        raise ValueError("Node context mismatch for custom node type; expected %s, but got %s."
                         % (spec.context, context))
    return children


def tree_map(func, tree, *rests, is_leaf=None):
    """func applied leaf by leaf; rests must have tree's structure (above its leaves)."""
    leaves, spec = tree_flatten(tree, is_leaf)
    others = [spec.flatten_up_to(r) for r in rests]
    return tree_unflatten([func(*xs) for xs in zip(leaves, *others)], spec)


def tree_map_(func, tree, *rests, is_leaf=None):
    """func called on the leaves for its side effects; returns tree."""
    leaves, spec = tree_flatten(tree, is_leaf)
    others = [spec.flatten_up_to(r) for r in rests]
    for xs in zip(leaves, *others):
        func(*xs)
    return tree


def _only(types, func):
    types = tuple(types) if isinstance(types, (tuple, list)) else (types,)
    return lambda x: func(x) if isinstance(x, types) else x


def tree_map_only(type_or_types, func, tree, is_leaf=None):
    return tree_map(_only(type_or_types, func), tree, is_leaf=is_leaf)


def tree_map_only_(type_or_types, func, tree, is_leaf=None):
    return tree_map_(_only(type_or_types, func), tree, is_leaf=is_leaf)


def tree_all(pred, tree, is_leaf=None):
    return all(pred(x) for x in tree_leaves(tree, is_leaf))


def tree_any(pred, tree, is_leaf=None):
    return any(pred(x) for x in tree_leaves(tree, is_leaf))


def tree_all_only(type_or_types, pred, tree, is_leaf=None):
    types = tuple(type_or_types) if isinstance(type_or_types, (tuple, list)) else (type_or_types,)
    return all(pred(x) for x in tree_leaves(tree, is_leaf) if isinstance(x, types))


def tree_any_only(type_or_types, pred, tree, is_leaf=None):
    types = tuple(type_or_types) if isinstance(type_or_types, (tuple, list)) else (type_or_types,)
    return any(pred(x) for x in tree_leaves(tree, is_leaf) if isinstance(x, types))


def tree_flatten_with_path(tree, is_leaf=None):
    """([(key path, leaf), ...], TreeSpec); a key path is a tuple of SequenceKey/MappingKey/GetAttrKey."""
    pairs = []

    def go(x, path):
        if _is_leaf(x, is_leaf):
            pairs.append((path, x))
            return LeafSpec()
        kind = _node_type(x)
        node = SUPPORTED_NODES[kind]
        if node.flatten_with_keys_fn is None:
            raise ValueError("Did not find a flatten_with_keys_fn for type: %s. Please pass a flatten_with_keys_fn "
                             "argument to register_pytree_node." % kind)
        keyed, context = node.flatten_with_keys_fn(x)
        return TreeSpec(kind, context, [go(c, path + (k,)) for k, c in keyed])

    spec = go(tree, ())
    return pairs, spec


def tree_leaves_with_path(tree, is_leaf=None):
    return tree_flatten_with_path(tree, is_leaf)[0]


def tree_map_with_path(func, tree, *rests, is_leaf=None):
    """func(key path, leaf, *leaves of rests) for every leaf of tree."""
    pairs, spec = tree_flatten_with_path(tree, is_leaf)
    others = [spec.flatten_up_to(r) for r in rests]
    return tree_unflatten([func(path, x, *xs) for (path, x), *xs in zip(pairs, *others)], spec)


def keystr(kp):
    """A key path as source text: [1]['y'].a"""
    return "".join(str(k) for k in kp)


def key_get(obj, kp):
    for k in kp:
        obj = k.get(obj)
    return obj


def treespec_dumps(treespec, protocol=None):
    raise NotImplementedError("cthtorch.utils._pytree.treespec_dumps: TreeSpec serialization is not implemented in "
                              "cthtorch")


def treespec_loads(serialized):
    raise NotImplementedError("cthtorch.utils._pytree.treespec_loads: TreeSpec serialization is not implemented in "
                              "cthtorch")


def broadcast_to_and_flatten(prefix, spec):
    """Flattened prefix tree broadcast to spec's leaves, or None when the structures don't match (vmap's in_dims)."""
    if _node_type(prefix) is None:
        return [prefix] * spec.num_leaves
    if spec.is_leaf():
        return None
    try:
        children = _flatten_node(prefix, spec)
    except ValueError:
        return None
    out = []
    for c, s in zip(children, spec.children_specs):
        r = broadcast_to_and_flatten(c, s)
        if r is None:
            return None
        out.extend(r)
    return out
