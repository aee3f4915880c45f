"""Node: one operation of a Graph, an item of the graph's doubly linked list.

A node knows its inputs (the Nodes in its args/kwargs) and its users; setting
`args`/`kwargs` keeps both sides in step."""
import builtins
import operator
import types

import cthtorch

from .immutable_collections import immutable_dict, immutable_list

__all__ = ["Node", "map_arg", "map_aggregate", "Argument", "Target"]

Argument = object
Target = object

_OPS = ("placeholder", "call_method", "call_module", "call_function", "get_attr", "output", "root")

# Functions whose effect is the point even when nobody reads their result.
_side_effectful_functions = set()


def _type_repr(t):
    """How a type annotation reads in generated code and graph dumps."""
    if t is None:
        return ""
    if isinstance(t, type) and not getattr(t, "__args__", None):
        if t.__module__ == "builtins":
            return t.__qualname__
        return "%s.%s" % (_torch_module_name(t.__module__), t.__qualname__)
    if t is Ellipsis:
        return "..."
    return _torch_module_name(repr(t))


def _torch_module_name(name):
    if name == "cthtorch" or name.startswith("cthtorch."):
        return "torch" + name[len("cthtorch"):]
    return name


def _public_namespaces():
    """Where a torch function is looked up by identity, with the name its
    qualified name uses (what PyTorch prints)."""
    import cthtorch.nn.functional as F
    spaces = [(cthtorch, "torch"), (F, "torch.nn.functional"), (cthtorch._C._nn, "torch._C._nn")]
    for sub in ("linalg", "special", "fft"):
        mod = getattr(cthtorch, sub, None)
        if isinstance(mod, types.ModuleType):
            spaces.append((mod, "torch." + sub))
    spaces.append((cthtorch._C._VariableFunctions, "torch"))
    return spaces


_qualname_cache = {}


def _get_qualified_name(func):
    """'operator.add', 'torch.relu', 'torch.nn.functional.relu', 'builtins.getattr'-style
    names as torch.fx prints them."""
    try:
        return _qualname_cache[func]
    except (KeyError, TypeError):
        pass
    name = _compute_qualified_name(func)
    try:
        _qualname_cache[func] = name
    except TypeError:
        pass
    return name


def _compute_qualified_name(func):
    from cthtorch._ops.overloads import OpOverload, OpOverloadPacket
    if isinstance(func, OpOverloadPacket):   # torch.ops.<namespace>.<op>[.<overload>]
        return "torch.ops.%s" % func
    if isinstance(func, OpOverload):
        return "torch.ops.%s" % func
    name = getattr(func, "__name__", None)
    if name is None:
        raise RuntimeError("Unable to represent %r in generated code" % (func,))
    if getattr(builtins, name, None) is func:
        return name
    if getattr(operator, name, None) is func:
        return "operator." + name
    if getattr(cthtorch.Tensor, name, None) is func:
        return "torch.Tensor." + name
    for mod, mod_name in _public_namespaces():
        if getattr(mod, name, None) is func:
            return "%s.%s" % (mod_name, name)
    module = getattr(func, "__module__", None)
    if module is None:
        raise RuntimeError("cannot find module for %s" % (func,))
    return "%s.%s" % (_torch_module_name(module), getattr(func, "__qualname__", name))


def _format_arg(arg, max_list_len=float("inf")):
    """An argument as graph dumps show it: nodes as %name, str unquoted."""
    if isinstance(arg, Node):
        return "%" + arg.name
    if isinstance(arg, list):
        items = ", ".join(_format_arg(a) for i, a in enumerate(arg) if i < max_list_len)
        more = "" if len(arg) < max_list_len + 1 else ", ...[total_len=%d]" % len(arg)
        return "[%s%s]" % (items, more)
    if isinstance(arg, tuple):
        items = ", ".join(_format_arg(a) for i, a in enumerate(arg) if i < max_list_len)
        more = "" if len(arg) < max_list_len + 1 else ", ...[total_len=%d]" % len(arg)
        return "(%s%s%s)" % (items, "," if len(arg) == 1 else "", more)
    if isinstance(arg, dict):
        return "{%s}" % ", ".join("%s: %s" % (k, _format_arg(v)) for k, v in arg.items())
    return str(arg)


class Node:
    """One operation: `op` is one of placeholder, get_attr, call_function,
    call_module, call_method, output; `target` what it calls or reads."""

    def __init__(self, graph, name, op, target, args, kwargs, return_type=None):
        if op not in _OPS:
            raise ValueError("Unexpected op %r" % (op,))
        if op == "call_function" and not callable(target):
            raise ValueError("Node [graph = %s, name = '%s'] target %s has type %s but a Callable is expected"
                             % (graph, name, target, cthtorch.typename(target)))
        if op in ("call_method", "call_module", "get_attr", "placeholder", "output") and not isinstance(target, str):
            raise ValueError("Node [graph = %s, name = '%s'] target %s has type %s but a str is expected"
                             % (graph, name, target, cthtorch.typename(target)))
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self._input_nodes = {}
        self.users = {}
        self.type = return_type
        self._prev = self
        self._next = self
        self._erased = False
        self._repr_fn = None
        self.meta = {}
        self._args = ()
        self._kwargs = {}
        self._update_args_kwargs(args, kwargs)

    # ---- the linked list ----
    @property
    def next(self):
        return self._next

    @property
    def prev(self):
        return self._prev

    def prepend(self, x):
        """Moves (or inserts) x right before self."""
        assert self.graph is x.graph, "Attempting to move a Node into a different Graph"
        if self is x:
            return
        x._remove_from_list()
        p = self._prev
        p._next, x._prev = x, p
        x._next, self._prev = self, x

    def append(self, x):
        """Moves (or inserts) x right after self."""
        self._next.prepend(x)

    def _remove_from_list(self):
        p, n = self._prev, self._next
        p._next, n._prev = n, p

    # ---- args / kwargs / uses ----
    @property
    def args(self):
        return self._args

    @args.setter
    def args(self, a):
        self._update_args_kwargs(a, self._kwargs)

    @property
    def kwargs(self):
        return self._kwargs

    @kwargs.setter
    def kwargs(self, k):
        self._update_args_kwargs(self._args, k)

    @property
    def all_input_nodes(self):
        return list(self._input_nodes.keys())

    def update_arg(self, idx, arg):
        args = list(self.args)
        args[idx] = arg
        self.args = tuple(args)

    def insert_arg(self, idx, arg):
        args = list(self.args)
        args.insert(idx, arg)
        self.args = tuple(args)

    def update_kwarg(self, key, arg):
        self.kwargs = {**self.kwargs, key: arg}

    def _update_args_kwargs(self, new_args, new_kwargs):
        for old in self._input_nodes:
            old.users.pop(self, None)
        self._input_nodes = {}
        self._args = map_aggregate(tuple(new_args), self._record_input)
        self._kwargs = map_aggregate(dict(new_kwargs), self._record_input)

    def _record_input(self, a):
        if isinstance(a, Node):
            self._input_nodes.setdefault(a)
            a.users.setdefault(self)
        return a

    def replace_all_uses_with(self, replace_with, delete_user_cb=lambda user: True, *, propagate_meta=False):
        """Points every user of self at replace_with; returns those users."""
        if propagate_meta:
            assert len(replace_with.meta) == 0, ("Called node.replace_all_uses_with(replace_with, propagate_meta=True), "
                                                 "but replace_with already has .meta keys")
            replace_with.meta.update(self.meta)
        to_process = [u for u in self.users if delete_user_cb(u)]
        for user in to_process:
            user.replace_input_with(self, replace_with)
        return to_process

    def replace_input_with(self, old_input, new_input):
        def swap(n):
            return new_input if n is old_input else n
        self._update_args_kwargs(map_arg(self._args, swap), map_arg(self._kwargs, swap))

    def is_impure(self, impure_random=True):
        if self.op in ("placeholder", "output"):
            return True
        if self.op == "call_function":
            return self.target in _side_effectful_functions
        if self.op == "call_module":
            mod = self.graph.owning_module
            target = mod.get_submodule(self.target) if mod is not None else None
            return bool(getattr(target, "_is_impure", False))
        if self.op == "call_method":
            return isinstance(self.target, str) and self.target.endswith("_") and not self.target.endswith("__")
        return False

    @property
    def stack_trace(self):
        return self.meta.get("stack_trace", None)

    @stack_trace.setter
    def stack_trace(self, trace):
        self.meta["stack_trace"] = trace

    # ---- printing ----
    def __repr__(self):
        if self._repr_fn:
            return self._repr_fn(self)
        return self.name

    def _pretty_print_target(self, target):
        if isinstance(target, str):
            return target
        name = _get_qualified_name(target)
        return name if "." in name else "builtins." + name

    def format_node(self, placeholder_names=None, maybe_return_typename=None):
        """The node as one line of `print(graph)`."""
        if self.op == "placeholder":
            assert isinstance(self.target, str)
            if placeholder_names is not None:
                placeholder_names.append(self.target)
                return None
            default = "(default=%s)" % (self.args[0],) if self.args else ""
            return "%%%s : %s[num_users=%d] = placeholder[target=%s]%s" % (
                self.name, self._type_prefix(), len(self.users), self.target, default)
        if self.op == "get_attr":
            return "%%%s : %s[num_users=%d] = get_attr[target=%s]" % (
                self.name, self._type_prefix(), len(self.users), self._pretty_print_target(self.target))
        if self.op == "output":
            if self.type and maybe_return_typename is not None:
                maybe_return_typename[0] = " -> " + _type_repr(self.type)
            return "return %s" % (self.args[0],)
        return "%%%s : %s[num_users=%d] = %s[target=%s](args = %s, kwargs = %s)" % (
            self.name, self._type_prefix(), len(self.users), self.op, self._pretty_print_target(self.target),
            _format_arg(self.args), _format_arg(self.kwargs))

    def _type_prefix(self):
        return _type_repr(self.type) + " " if self.type is not None else ""


def map_arg(a, fn):
    """Applies fn to each Node in a (nested) argument structure."""
    assert callable(fn), "torch.fx.map_arg(a, fn): fn must be a callable"
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


def map_aggregate(a, fn):
    """Applies fn to each leaf of a (nested) tuple/list/dict/slice argument;
    containers come back as immutable_list/immutable_dict."""
    t = type(a)
    if t is tuple or (isinstance(a, tuple) and not hasattr(a, "_fields")):
        return tuple(map_aggregate(e, fn) for e in a)
    if isinstance(a, tuple):   # a namedtuple keeps its type
        return t(*(map_aggregate(e, fn) for e in a))
    if isinstance(a, list):
        return immutable_list(map_aggregate(e, fn) for e in a)
    if isinstance(a, dict):
        return immutable_dict((k, map_aggregate(v, fn)) for k, v in a.items())
    if isinstance(a, slice):
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn), map_aggregate(a.step, fn))
    return fn(a)


def has_side_effect(fn):
    """Marks a function as impure: eliminate_dead_code keeps its calls."""
    _side_effectful_functions.add(fn)
    return fn
