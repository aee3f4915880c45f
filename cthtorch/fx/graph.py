"""Graph: an ordered, mutable list of Nodes, and the Python code it reads as.

`Graph.python_code()` writes a `forward` in the style torch.fx prints: one
statement per node, magic-method operators as operators, and each value
dropped (`x = None`) after its last use so a run frees memory early."""
import builtins
import copy
import inspect
import keyword
import math
import operator
import re
from collections import defaultdict

import cthtorch

from .node import Node, _get_qualified_name, _type_repr, map_arg

__all__ = ["Graph", "PythonCode", "CodeGen"]

# operator function -> how the generated code writes it
_BINARY = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%", "pow": "**",
           "lshift": "<<", "rshift": ">>", "and_": "&", "or_": "|", "xor": "^", "matmul": "@",
           "eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_UNARY = {"neg": "-", "pos": "+", "invert": "~"}
_BINARY_FNS = {getattr(operator, k): v for k, v in _BINARY.items()}
_UNARY_FNS = {getattr(operator, k): v for k, v in _UNARY.items()}
_CALL_FNS = {operator.abs: "abs"}


def _snake_case(s):
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", s).lower()


def _target_to_str(target):
    if callable(target):
        op = target.__name__
    else:
        op = target
        if op.startswith("__") and op.endswith("__") and len(op) > 4:
            op = op[2:-2]
    return _snake_case(op)


_ILLEGAL_NAMES = set(dir(builtins)) | set(keyword.kwlist) | {"torch", "inf", "nan", "device", "self"}


class _Namespace:
    """Hands out unique, legal Python names: a taken name gets the next _N
    suffix of its base (`add`, `add_1`, ...)."""

    def __init__(self):
        self._obj_to_name = {}
        self._used_names = set()
        self._base_count = defaultdict(int)

    def create_name(self, candidate, obj):
        if obj is not None and obj in self._obj_to_name:
            return self._obj_to_name[obj]
        candidate = re.sub(r"[^0-9a-zA-Z_]+", "_", candidate) or "_unnamed"
        if candidate[0].isdigit():
            candidate = "_" + candidate
        m = re.match(r"(.*)_(\d+)$", candidate)
        if m:
            base, num = m.group(1), int(m.group(2))
        else:
            base, num = candidate, None
        if num is None:
            num = self._base_count[base]
        else:
            candidate = "%s_%d" % (base, num)
        while candidate in self._used_names or candidate in _ILLEGAL_NAMES:
            num += 1
            candidate = "%s_%d" % (base, num)
        self._used_names.add(candidate)
        self._base_count[base] = num
        if obj is not None:
            self._obj_to_name[obj] = candidate
        return candidate

    def associate_name_with_obj(self, name, obj):
        self._obj_to_name[obj] = name

    def _rename_object(self, obj, name):
        self._obj_to_name[obj] = name


class _node_list:
    """graph.nodes: a live view of the linked list (forward or reversed)."""

    def __init__(self, graph, direction="_next"):
        self.graph = graph
        self.direction = direction

    def __len__(self):
        return self.graph._len

    def __iter__(self):
        root = self.graph._root
        cur = getattr(root, self.direction)
        while cur is not root:
            nxt = getattr(cur, self.direction)   # the body may erase cur
            if not cur._erased:
                yield cur
            cur = nxt

    def __reversed__(self):
        return _node_list(self.graph, "_prev" if self.direction == "_next" else "_next")

    def __repr__(self):
        return repr(list(self))


class PythonCode:
    """What python_code() returns: the source of `forward` and the globals it
    runs in."""

    def __init__(self, src, globals, _lineno_map=None):
        self.src = src
        self.globals = globals
        self._lineno_map = _lineno_map


def _is_identifier(s):
    return s.isidentifier() and not keyword.iskeyword(s)


def _attr_path(root, target):
    """`self.a.b`, with getattr(...) for atoms that aren't identifiers ("0")."""
    expr = root
    for atom in target.split("."):
        expr = "%s.%s" % (expr, atom) if _is_identifier(atom) else 'getattr(%s, "%s")' % (expr, atom)
    return expr


class CodeGen:
    """Writes a Graph as the source of a Python function."""

    def _globals(self):
        g = {"torch": cthtorch, "inf": math.inf, "nan": math.nan, "device": cthtorch.device,
             "NoneType": type(None)}
        return g

    def gen_fn_def(self, free_vars, maybe_return_annotation):
        args = ["self"] + free_vars
        return "def forward(%s)%s:" % (", ".join(args), maybe_return_annotation)

    def generate(self, graph, root_module="self", verbose=False):
        globals_ = self._globals()
        namespace = _Namespace()
        for k in globals_:
            namespace.create_name(k, globals_[k])

        def add_global(name_hint, obj):
            if obj in namespace._obj_to_name:
                return namespace._obj_to_name[obj]
            name = namespace.create_name(name_hint, obj)
            globals_[name] = obj
            return name

        def fn_name(fn):
            qn = _get_qualified_name(fn)
            if qn.startswith("torch.") or "." not in qn:   # torch.* via the torch global; builtins by name
                if "." not in qn:
                    globals_.setdefault(qn, fn)
                return qn
            return add_global(qn.replace(".", "_"), fn)

        def type_repr(t):
            r = _type_repr(t)
            return r

        def repr_arg(a):
            if isinstance(a, Node):
                return a.name
            if isinstance(a, tuple) and hasattr(a, "_fields"):
                return "%s(%s)" % (add_global(type(a).__name__, type(a)), ", ".join(repr_arg(x) for x in a))
            if isinstance(a, tuple):
                return "(%s%s)" % (", ".join(repr_arg(x) for x in a), "," if len(a) == 1 else "")
            if isinstance(a, list):
                return "[%s]" % ", ".join(repr_arg(x) for x in a)
            if isinstance(a, dict):
                return "{%s}" % ", ".join("%r: %s" % (k, repr_arg(v)) for k, v in a.items())
            if isinstance(a, slice):
                return "slice(%s, %s, %s)" % (repr_arg(a.start), repr_arg(a.stop), repr_arg(a.step))
            if isinstance(a, float) and not math.isfinite(a):
                return "nan" if math.isnan(a) else ("inf" if a > 0 else "-inf")
            if isinstance(a, (cthtorch.dtype, cthtorch.device, cthtorch.memory_format, cthtorch.layout)):
                return repr(a)
            if isinstance(a, (bool, int, float, complex, str, bytes, type(None), type(Ellipsis))):
                return repr(a)
            if isinstance(a, type):
                return add_global(a.__name__, a)
            if callable(a):
                return fn_name(a)
            return add_global(type(a).__name__.lower(), a)

        def call_args(args, kwargs):
            parts = [repr_arg(a) for a in args] + ["%s = %s" % (k, repr_arg(v)) for k, v in kwargs.items()]
            return ", ".join(parts)

        # the node after which each value is dead
        user_to_last_uses = {}
        seen = set()
        for node in reversed(list(graph.nodes)):
            def note(n, user=node):
                if n not in seen:
                    seen.add(n)
                    user_to_last_uses.setdefault(user, []).append(n)
            map_arg(node.args, note)
            map_arg(node.kwargs, note)

        free_vars, body, wrapped = [], [], []
        maybe_return = ""
        for node in graph.nodes:
            if node.op == "placeholder":
                fv = node.target
                if node.type is not None:
                    fv += " : " + type_repr(node.type)
                if node.args:
                    fv += " = " + repr_arg(node.args[0])
                free_vars.append(fv)
                raw = node.target.replace("*", "")
                if raw != node.name:
                    body.append("%s = %s" % (node.name, raw))
                continue
            if node.op == "output":
                if node.type is not None:
                    maybe_return = " -> " + type_repr(node.type)
                body.append("return " + repr_arg(node.args[0]))
                continue
            body.append(self._emit(node, root_module, repr_arg, call_args, fn_name))
            if node.op == "call_function" and node.meta.get("is_wrapped", False):
                wrapped.append(fn_name(node.target))
            dead = list(user_to_last_uses.get(node, []))
            if not node.users:
                dead.append(node)
            if dead:
                body[-1] += ";  %s = None" % " = ".join(n.name for n in dead)
        if not body or not body[-1].startswith("return"):
            body.append("pass")
        # fx.wrap'ed functions stay wrapped when this code is traced again (pickling does)
        wrap_stmts = "\n".join('torch.fx._symbolic_trace.wrap("%s")' % w for w in dict.fromkeys(wrapped))
        src = "\n" + wrap_stmts + "\n\n" + self.gen_fn_def(free_vars, maybe_return) + "\n" + \
            "\n".join("    " + line for line in body) + "\n    "
        return PythonCode(src, globals_)

    @staticmethod
    def _emit(node, root_module, repr_arg, call_args, fn_name):
        name, args, kwargs = node.name, node.args, node.kwargs
        if node.op == "get_attr":
            return "%s = %s" % (name, _attr_path(root_module, node.target))
        if node.op == "call_module":
            return "%s = %s(%s)" % (name, _attr_path(root_module, node.target), call_args(args, kwargs))
        if node.op == "call_method":
            return "%s = %s.%s(%s)" % (name, repr_arg(args[0]), node.target, call_args(args[1:], kwargs))
        fn = node.target
        if not kwargs:
            if fn in _BINARY_FNS and len(args) == 2:
                return "%s = %s %s %s" % (name, repr_arg(args[0]), _BINARY_FNS[fn], repr_arg(args[1]))
            if fn in _UNARY_FNS and len(args) == 1:
                return "%s = %s%s" % (name, _UNARY_FNS[fn], repr_arg(args[0]))
            if fn in _CALL_FNS and len(args) == 1:
                return "%s = %s(%s)" % (name, _CALL_FNS[fn], repr_arg(args[0]))
            if fn is operator.getitem and len(args) == 2:
                return "%s = %s[%s]" % (name, repr_arg(args[0]), repr_arg(args[1]))
            if fn is builtins.getattr and len(args) == 2 and isinstance(args[1], str) and _is_identifier(args[1]):
                return "%s = %s.%s" % (name, repr_arg(args[0]), args[1])
        return "%s = %s(%s)" % (name, fn_name(fn), call_args(args, kwargs))


class _InsertPoint:
    def __init__(self, graph, new_insert):
        self.graph = graph
        self.orig_insert, graph._insert = graph._insert, new_insert

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        self.graph._insert = self.orig_insert


class Graph:
    """The IR of torch.fx: placeholders, then operations, then one output."""

    def __init__(self, owning_module=None, tracer_cls=None, tracer_extras=None):
        self._root = Node(self, "", "root", "", (), {})
        self._used_names = {}
        self._insert = self._root.prepend
        self._len = 0
        self._graph_namespace = _Namespace()
        self._owning_module = owning_module
        self._tracer_cls = tracer_cls
        self._tracer_extras = tracer_extras
        self._codegen = CodeGen()

    @property
    def owning_module(self):
        return self._owning_module

    @owning_module.setter
    def owning_module(self, mod):
        self._owning_module = mod

    @property
    def nodes(self):
        return _node_list(self)

    def find_nodes(self, *, op, target=None, sort=True):
        return [n for n in self.nodes if n.op == op and (target is None or n.target == target)]

    # ---- building ----
    def create_node(self, op, target, args=None, kwargs=None, name=None, type_expr=None):
        args = () if args is None else args
        kwargs = {} if kwargs is None else kwargs
        assert isinstance(args, tuple), "args must be a tuple"
        assert isinstance(kwargs, dict), "kwargs must be a dict"
        candidate = name if name is not None else _target_to_str(target)
        name = self._graph_namespace.create_name(candidate, None)
        n = Node(self, name, op, target, args, kwargs, type_expr)
        self._graph_namespace.associate_name_with_obj(name, n)
        self._insert(n)
        self._len += 1
        return n

    def placeholder(self, name, type_expr=None, default_value=inspect.Signature.empty):
        args = () if default_value is inspect.Signature.empty else (default_value,)
        return self.create_node("placeholder", name, args,
                                type_expr=type_expr)

    def get_attr(self, qualified_name, type_expr=None):
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_module(self, module_name, args=None, kwargs=None, type_expr=None):
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def call_method(self, method_name, args=None, kwargs=None, type_expr=None):
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_function(self, the_function, args=None, kwargs=None, type_expr=None, name=None):
        return self.create_node("call_function", the_function, args, kwargs, name=name, type_expr=type_expr)

    def output(self, result, type_expr=None):
        return self.create_node("output", "output", (result,), type_expr=type_expr)

    def node_copy(self, node, arg_transform=lambda x: x):
        """A copy of a node of another graph, its inputs mapped by arg_transform."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        assert isinstance(args, tuple) and isinstance(kwargs, dict)
        result = self.create_node(node.op, node.target, args, kwargs, node.name, node.type)
        result.meta = copy.copy(node.meta)
        return result

    def graph_copy(self, g, val_map, return_output_node=False):
        """Copies g's nodes (not its output) into self; val_map maps g's nodes to
        self's and is filled in. Returns the value g's output would return."""
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == "output":
                rv = map_arg(node.args[0], lambda n: val_map[n])
                return rv if not return_output_node else (rv, node)
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def __deepcopy__(self, memo=None):
        memo = memo if memo else {}
        g = Graph(tracer_cls=self._tracer_cls)
        output_vals = g.graph_copy(self, val_map=memo, return_output_node=True)
        g._codegen = copy.deepcopy(self._codegen)
        if output_vals is not None:
            assert isinstance(output_vals, tuple)
            output_val, old_output_node = output_vals
            new_output_node = g.output(output_val, type_expr=getattr(old_output_node, "type", None))
            new_output_node.meta = copy.copy(old_output_node.meta)
        return g

    def erase_node(self, to_erase):
        if len(to_erase.users) > 0:
            raise RuntimeError("Tried to erase Node %s but it still had %d users in the graph: %s!"
                               % (to_erase, len(to_erase.users), to_erase.users))
        if to_erase.graph is not self:
            raise RuntimeError("Attempting to remove %s from wrong graph!" % (to_erase,))
        if to_erase._erased:
            return
        to_erase._remove_from_list()
        to_erase._erased = True
        self._len -= 1
        to_erase._update_args_kwargs((), {})

    def inserting_before(self, n=None):
        """`with graph.inserting_before(n):` new nodes go right before n
        (None: the start of the graph)."""
        if n is None:
            return self.inserting_after(self._root)
        assert n.graph is self, "Node to insert before is not in graph."
        return _InsertPoint(self, n.prepend)

    def inserting_after(self, n=None):
        if n is None:
            return self.inserting_before(self._root)
        assert n.graph is self, "Node to insert after is not in graph."
        return _InsertPoint(self, n.append)

    def eliminate_dead_code(self, is_impure_node=None):
        """Erases nodes nobody uses and that have no side effect; returns
        whether anything changed."""
        self.lint()
        changed = False
        for node in reversed(self.nodes):
            impure = is_impure_node(node) if is_impure_node is not None else node.is_impure()
            if not impure and len(node.users) == 0:
                self.erase_node(node)
                changed = True
        return changed

    # ---- checking / printing ----
    def lint(self):
        """Checks the graph's invariants: nodes belong to it, inputs are defined
        before use, names are unique, targets of get_attr/call_module exist."""
        seen_names, seen_values = set(), set()

        def check_arg(arg, n):
            if arg.graph is not self:
                raise RuntimeError("Argument '%s' of Node '%s' does not belong to this Graph, but was used as an "
                                   "argument! If you are copying nodes from another graph, make sure to use "
                                   "``arg_transform`` on node_copy() to remap values\n%s" % (arg, n, self))
            if arg not in seen_values:
                raise RuntimeError("Argument '%s' of Node '%s' was used before it has been defined! Please check "
                                   "that Nodes in the graph are topologically ordered\n%s" % (arg, n, self))

        for node in self.nodes:
            if node.graph is not self:
                raise RuntimeError("Node '%s' does not belong to this Graph!" % (node,))
            map_arg(node.args, lambda a: check_arg(a, node))
            map_arg(node.kwargs, lambda a: check_arg(a, node))
            seen_values.add(node)
            if node.name in seen_names:
                raise RuntimeError("Node redefined name %s!" % (node.name,))
            seen_names.add(node.name)
        if self.owning_module is not None:
            for node in self.nodes:
                if node.op in ("get_attr", "call_module"):
                    m_itr = self.owning_module
                    atoms = node.target.split(".")
                    for i, atom in enumerate(atoms):
                        new_m_itr = getattr(m_itr, atom, None)
                        if new_m_itr is None:
                            seen_qualname = ".".join(atoms[:i])
                            raise RuntimeError("Node %s target %s references nonexistent attribute %s of %s"
                                               % (node, node.target, atom, seen_qualname))
                        m_itr = new_m_itr
                    if node.op == "call_module" and not isinstance(m_itr, cthtorch.nn.Module):
                        raise RuntimeError("Node %s target %s %s does not reference an nn.Module"
                                           % (node, node.target, atom))

    def print_tabular(self):
        """Prints the graph as a table (needs the `tabulate` package, as in torch)."""
        try:
            from tabulate import tabulate
        except ImportError:
            print("`print_tabular` relies on the library `tabulate`, which could not be found on this machine. "
                  "Run `pip install tabulate` to install the library.")
            raise
        rows = [[n.op, n.name, n.target, n.args, n.kwargs] for n in self.nodes]
        print(tabulate(rows, headers=["opcode", "name", "target", "args", "kwargs"]))

    def python_code(self, root_module, *, verbose=False, include_stride=False, include_device=False,
                    colored=False):
        return self._codegen.generate(self, root_module, verbose)

    def __str__(self):
        lines = ["graph():"]
        for node in self.nodes:
            s = node.format_node()
            if s:
                lines.append("    " + s)
        return "\n".join(lines)

    def on_generate_code(self, make_transformer):
        raise NotImplementedError("cthtorch.fx: Graph.on_generate_code is not implemented")


