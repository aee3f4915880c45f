"""GraphModule: an nn.Module whose forward is generated from a Graph.

It copies from the traced root only what the graph reads (get_attr and
call_module targets; missing intermediate modules become empty Modules),
and each instance gets its own subclass so recompile() can set `forward`
without touching other GraphModules."""
import builtins
import copy
import itertools
import linecache
import math
import os

import cthtorch
from cthtorch.nn import Module

from .graph import Graph

__all__ = ["GraphModule"]

_eval_counter = itertools.count()


def _forward_from_src(src, globals_):
    """Execs the generated source under a unique file name that linecache
    knows, so tracebacks and inspect.getsource show the generated lines."""
    key = "<eval_with_key>.%d" % next(_eval_counter)
    linecache.cache[key] = (len(src), None, src.splitlines(True), key)
    g = dict(globals_)
    exec(compile(src, key, "exec"), g)
    return g["forward"]


def _copy_attr(from_module, to_module, target):
    *prefix, field = target.split(".")
    for item in prefix:
        f = getattr(from_module, item)
        t = getattr(to_module, item, None)
        if f is t:
            return   # already copied along with a parent
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        from_module, to_module = f, t
    orig = getattr(from_module, field)
    if isinstance(orig, cthtorch.Tensor) and not isinstance(orig, cthtorch.nn.Parameter):
        to_module.register_buffer(field, orig)
    else:
        setattr(to_module, field, orig)


def _assign_attr(from_obj, to_module, target):
    *prefix, field = target.split(".")
    for item in prefix:
        t = getattr(to_module, item, None)
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        to_module = t
    if isinstance(from_obj, cthtorch.Tensor) and not isinstance(from_obj, cthtorch.nn.Parameter):
        to_module.register_buffer(field, from_obj)
    else:
        setattr(to_module, field, from_obj)


# The globals every generated forward has (graph.CodeGen._globals), as the
# import lines of a standalone file.
_BASE_IMPORTS = "import cthtorch as torch\nfrom math import inf, nan\nfrom cthtorch import device\nNoneType = type(None)\n"
_BASE_GLOBALS = ("torch", "inf", "nan", "device", "NoneType")


def _extra_globals(globals_):
    """The globals of generated code beyond the standard ones (user functions,
    wrapped functions): kept by reference when pickling."""
    return {k: v for k, v in globals_.items() if k not in _BASE_GLOBALS and k != "__builtins__"
            and builtins.__dict__.get(k) is not v}


class _CodeOnlyModule(Module):
    def __init__(self, body):
        super().__init__()
        self.__dict__ = body


def _deserialize_graph_module(forward, body, class_name="GraphModule"):
    """Rebuilds a pickled GraphModule: a module with the saved state and the
    generated forward is traced again with every submodule a leaf."""
    from ._symbolic_trace import Tracer

    class KeepModules(Tracer):
        def is_leaf_module(self, m, qualname):
            return True

    class CodeOnly(_CodeOnlyModule):
        pass
    CodeOnly.forward = forward
    com = CodeOnly(body)
    graph = KeepModules().trace(com)
    gm = GraphModule(com, graph, class_name=class_name)
    for k, v in body.items():
        if not hasattr(gm, k):
            setattr(gm, k, v)
    return gm


def _reduce_graph_module(body, code, extra_globals):
    g = {"torch": cthtorch, "inf": math.inf, "nan": math.nan, "device": cthtorch.device, "NoneType": type(None)}
    g.update(extra_globals)
    return _deserialize_graph_module(_forward_from_src(code, g), body)


class GraphModule(Module):
    """An nn.Module built from a Graph: `.graph`, `.code`, `recompile()`."""

    def __new__(cls, *args, **kwargs):
        # each instance gets a class of its own: forward is set per class
        for t in cls.__mro__:
            if t.__qualname__.split(".")[-1] != "GraphModuleImpl":
                cls = t
                break

        class GraphModuleImpl(cls):
            pass
        return super().__new__(GraphModuleImpl)

    def __init__(self, root, graph, class_name="GraphModule"):
        super().__init__()
        self.__class__.__name__ = class_name
        if isinstance(root, Module):
            if hasattr(root, "training"):
                self.training = root.training
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    _copy_attr(root, self, node.target)
        elif isinstance(root, dict):
            targets = [n.target for n in graph.nodes if n.op in ("get_attr", "call_module")]
            for target in sorted(targets, key=lambda t: t.count(".")):
                if target not in root:
                    raise RuntimeError("Node " + str(target) + " referenced target " + str(target) +
                                       " but that target was not provided in ``root``!")
                _assign_attr(root[target], self, target)
        else:
            raise RuntimeError("Unsupported type " + str(root) + " passed for root!")
        self.graph = graph
        self._tracer_cls = graph._tracer_cls if graph._tracer_cls and "<locals>" not in \
            graph._tracer_cls.__qualname__ else None
        self.meta = getattr(root, "meta", {}) if isinstance(root, Module) else {}

    @property
    def graph(self):
        return self._graph

    @graph.setter
    def graph(self, g):
        assert isinstance(g, Graph), "Expected a Graph instance, but got %s" % type(g)
        self._graph = g
        g.owning_module = self
        self.recompile()

    @property
    def code(self):
        if not hasattr(self, "_code"):
            raise RuntimeError("Code has not been generated! Please report a bug to PyTorch")
        return self._code

    def recompile(self):
        """Regenerates forward from self.graph (call it after editing the graph)."""
        python_code = self._graph.python_code(root_module="self")
        self._code = python_code.src
        self._globals = python_code.globals
        type(self).forward = _forward_from_src(self._code, python_code.globals)
        return python_code

    # ---- submodules ----
    def add_submodule(self, target, m):
        """Installs m at the dotted path target (making empty parent Modules);
        False when a non-Module is in the way."""
        *prefix, field = target.split(".")
        mod = self
        for item in prefix:
            submod = getattr(mod, item, None)
            if submod is None:
                submod = Module()
                setattr(mod, item, submod)
            if not isinstance(submod, Module):
                return False
            mod = submod
        mod.add_module(field, m)
        return True

    def delete_submodule(self, target):
        *path, target_submod = target.split(".")
        mod = self
        for item in path:
            if not hasattr(mod, item):
                return False
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                return False
        if not hasattr(mod, target_submod) or not isinstance(getattr(mod, target_submod), Module):
            return False
        delattr(mod, target_submod)
        return True

    def delete_all_unused_submodules(self):
        """Deletes the submodules no call_module/get_attr node refers to."""
        used = set()
        for node in self.graph.nodes:
            if node.op in ("call_module", "get_attr"):
                atoms = node.target.split(".")
                used.update(".".join(atoms[:i]) for i in range(1, len(atoms) + 1))
                if node.op == "call_module":   # everything inside a called module is used
                    sub = self.get_submodule(node.target)
                    used.update(node.target + "." + n for n, _ in sub.named_modules() if n)
        for name, _ in list(self.named_modules()):
            if name and name not in used:
                self.delete_submodule(name)

    # ---- printing ----
    def print_readable(self, print_output=True, include_stride=False, include_device=False, colored=False,
                       **kwargs):
        lines = self._code.strip("\n").rstrip().split("\n")
        body = [lines[0], "    # No stacktrace found for following nodes"] + lines[1:]
        text = "class %s(torch.nn.Module):\n%s\n" % (
            type(self).__name__, "\n".join(("    " + ln) if ln else ln for ln in body))
        if print_output:
            print(text)
        return text

    def __str__(self):
        orig = super().__str__()
        return "\n".join([orig, self._code, "# To see more debug info, please use `graph_module.print_readable()`"])

    # ---- copying ----
    def __reduce__(self):
        body = self.__dict__.copy()
        del body["_graph"]
        body.pop("_globals", None)
        return (_reduce_graph_module, (body, self._code, _extra_globals(self._globals)))

    def __deepcopy__(self, memo):
        res = type(self).__new__(type(self))
        memo[id(self)] = res
        state = {k: v for k, v in self.__dict__.items() if k != "_globals"}
        fake_mod = _CodeOnlyModule(copy.deepcopy(state, memo))
        GraphModule.__init__(res, fake_mod, fake_mod.__dict__["_graph"])
        for k, v in fake_mod.__dict__.items():
            if k not in res.__dict__ and k not in ("_graph", "_code"):
                res.__dict__[k] = v
        res.meta = copy.deepcopy(getattr(self, "meta", {}), memo)
        return res

    def __copy__(self):
        res = GraphModule(self, self.graph, type(self).__name__)
        res.meta = getattr(self, "meta", {})
        return res

    # ---- to_folder ----
    def to_folder(self, folder, module_name="FxModule"):
        """Writes `folder/module.py` (a module class with this forward),
        `folder/state_dict.pt` and `folder/__init__.py`, so `from folder import
        <module_name>` rebuilds it. Submodules that can't be written as a
        torch.nn constructor are saved as `folder/<name>.pt`."""
        folder = os.fspath(folder)
        os.makedirs(folder, exist_ok=True)
        cthtorch.save(self.state_dict(), os.path.join(folder, "state_dict.pt"))
        tab = " " * 4
        imports = _BASE_IMPORTS
        for name, obj in _extra_globals(self._globals).items():
            mod, qn = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
            if not mod or not qn or "<" in qn:
                raise RuntimeError("cthtorch.fx: to_folder can't import the global %r (%r)" % (name, obj))
            if mod.startswith("cthtorch"):
                imports += "%s = torch.%s\n" % (name, (mod[len("cthtorch."):] + "." if "." in mod else "") + qn)
            else:
                imports += "from %s import %s as %s\n" % (mod, qn, name)
        src = "%sfrom cthtorch.nn import *\n\n\nclass %s(torch.nn.Module):\n%sdef __init__(self):\n%ssuper().__init__()\n" \
            % (imports, module_name, tab, tab * 2)
        for name, mod in self.named_children():
            ctor = _module_constructor(mod)
            if ctor is None:
                path = os.path.join(folder, "%s.pt" % name)
                cthtorch.save(mod, path)
                ctor = "torch.load(r'%s', weights_only=False)  # %s" % (path, _one_line(repr(mod)))
            src += "%sself.%s = %s\n" % (tab * 2, name, ctor)
        for name, buf in self._buffers.items():
            if buf is not None:
                src += "%sself.register_buffer('%s', torch.empty(%s, dtype=%s))\n" % (
                    tab * 2, name, list(buf.shape), buf.dtype)
        for name, p in self._parameters.items():
            if p is not None:
                src += "%sself.%s = torch.nn.Parameter(torch.empty(%s, dtype=%s))\n" % (
                    tab * 2, name, list(p.shape), p.dtype)
        src += "%sself.load_state_dict(torch.load(r'%s'))\n" % (tab * 2, os.path.join(folder, "state_dict.pt"))
        src += "\n".join((tab + ln) if ln.strip() else "" for ln in self._code.split("\n")) + "\n"
        with open(os.path.join(folder, "module.py"), "w") as fh:
            fh.write(src)
        with open(os.path.join(folder, "__init__.py"), "w") as fh:
            fh.write("from .module import *\n")


def _one_line(s):
    return " ".join(s.split())


def _module_constructor(mod):
    """`torch.nn.Linear(in_features=4, ...)` when a torch.nn leaf's extra_repr
    is its constructor's arguments (checked by building it)."""
    cls = type(mod)
    if not cls.__module__.startswith("cthtorch.nn") or list(mod.children()):
        return None
    if getattr(cthtorch.nn, cls.__name__, None) is not cls:
        return None
    text = "torch.nn.%s(%s)" % (cls.__name__, mod.extra_repr())
    try:
        built = eval(text, {"torch": cthtorch})
    except Exception:
        return None
    if repr(built) != repr(mod):
        return None
    return text
