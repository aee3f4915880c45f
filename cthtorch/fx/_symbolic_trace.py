"""symbolic_trace and Tracer: run a module's forward once on Proxies.

While tracing, nn.Module.__call__ and __getattr__ are patched so submodule
calls become call_module nodes (leaf modules) or are traced through, and
parameters read in forward become get_attr nodes. Functions marked with
fx.wrap (and `from math import f` style names) are patched in the globals
they live in so a call on a Proxy is recorded instead of run."""
import builtins
import functools
import inspect
import math
import types

import cthtorch
from cthtorch.nn import Module, Parameter, Sequential

from .graph import Graph
from .graph_module import GraphModule
from .proxy import Proxy, TracerBase

__all__ = ["Tracer", "symbolic_trace", "wrap", "PH"]

_wrapped_fns_to_patch = []   # (globals dict, name) registered by wrap()


class _PH:
    """concrete_args value meaning "keep this argument a placeholder"."""

    def __repr__(self):
        return "PH"


PH = _PH()


class _Patcher:
    """Sets attributes for the length of a trace and puts them back."""

    def __init__(self):
        self._undo = []

    def patch(self, d, name, new):
        self._undo.append((d, name, d.get(name, _MISSING)))
        d[name] = new

    def patch_method(self, cls, name, new):
        self._undo.append((cls, name, cls.__dict__.get(name, _MISSING)))
        setattr(cls, name, new)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for owner, name, old in reversed(self._undo):
            if isinstance(owner, dict):
                if old is _MISSING:
                    owner.pop(name, None)
                else:
                    owner[name] = old
            elif old is _MISSING:
                delattr(owner, name)
            else:
                setattr(owner, name, old)
        self._undo.clear()


_MISSING = object()


def _find_proxy(args, kwargs):
    for a in list(args) + list(kwargs.values()):
        if isinstance(a, Proxy):
            return a
        if isinstance(a, (list, tuple)):
            for b in a:
                if isinstance(b, Proxy):
                    return b
    return None


def _wrapped(orig_fn):
    """A function that records a call_function node when given a Proxy."""
    @functools.wraps(orig_fn)
    def wrapper(*args, **kwargs):
        proxy = _find_proxy(args, kwargs)
        if proxy is not None:
            out = proxy.tracer.create_proxy("call_function", orig_fn, args, kwargs)
            out.node.meta["is_wrapped"] = True   # the generated code re-registers it (fx.wrap line)
            return out
        return orig_fn(*args, **kwargs)
    wrapper.__fx_already_patched = True
    return wrapper


class Tracer(TracerBase):
    """Turns a module or function into a Graph. Subclass it to change what is
    a leaf (`is_leaf_module`), how calls are recorded (`call_module`,
    `create_proxy`) or how values become arguments (`create_arg`)."""

    def __init__(self, autowrap_modules=(math,), autowrap_functions=(), param_shapes_constant=False):
        super().__init__()
        self._autowrap_function_ids = {id(v) for m in autowrap_modules for k, v in m.__dict__.items()
                                       if not k.startswith("_") and callable(v)}
        self._autowrap_function_ids.update(id(f) for f in autowrap_functions)
        self._autowrap_search = list(autowrap_modules)
        self.param_shapes_constant = param_shapes_constant
        self.submodule_paths = None
        self.root_module_name = ""
        self.scope = None
        self.module_stack = {}
        self.node_name_to_scope = {}

    # ---- what becomes an argument ----
    def create_arg(self, a):
        if isinstance(a, Parameter):
            name = self._param_names().get(id(a))
            if name is None:
                raise NameError("parameter is not a member of this module")
            return self.create_node("get_attr", name, (), {})
        if isinstance(a, cthtorch.Tensor):
            qualname = self.tensor_attrs.get(id(a))
            if qualname is None:
                i = 0
                while hasattr(self.root, "_tensor_constant%d" % i):
                    i += 1
                qualname = "_tensor_constant%d" % i
                self.tensor_attrs[id(a)] = qualname
                self._keep_alive.append(a)
                setattr(self.root, qualname, a)
            return self.create_node("get_attr", qualname, (), {})
        if isinstance(a, Module):
            for n, m in self.root.named_modules():
                if a is m:
                    return self.create_node("get_attr", n, (), {})
            raise NameError("module is not installed as a submodule")
        return super().create_arg(a)

    def _param_names(self):
        if self._param_ids is None:
            self._param_ids = {id(p): n for n, p in self.root.named_parameters()}
        return self._param_ids

    # ---- modules ----
    def is_leaf_module(self, m, module_qualified_name):
        """torch.nn's own modules (but not Sequential) are leaves: recorded as one call_module."""
        mod = type(m).__module__
        return (mod.startswith("cthtorch.nn") or mod.startswith("torch.nn")) and not isinstance(m, Sequential)

    def path_of_module(self, mod):
        if self.submodule_paths is not None:
            path = self.submodule_paths.get(mod)
            if path is None:
                raise NameError("module is not installed as a submodule")
            return path
        for n, p in self.root.named_modules():
            if mod is p:
                return n
        raise NameError("module is not installed as a submodule")

    def call_module(self, m, forward, args, kwargs):
        module_qualified_name = self.path_of_module(m)
        if not self.is_leaf_module(m, module_qualified_name):
            return forward(*args, **kwargs)
        return self.create_proxy("call_module", module_qualified_name, args, kwargs)

    def getattr(self, attr, attr_val, parameter_proxy_cache):
        """A parameter read in forward is a get_attr node (one per name)."""
        if isinstance(attr_val, Parameter):
            n = self._param_names().get(id(attr_val))
            if n is not None:
                if n not in parameter_proxy_cache:
                    parameter_proxy_cache[n] = self.create_proxy("get_attr", n, (), {})
                return parameter_proxy_cache[n]
        return attr_val

    # ---- the trace ----
    def create_args_for_root(self, root_fn, is_module, concrete_args=None):
        sig = inspect.signature(root_fn)
        params = list(sig.parameters.values())
        if is_module:
            params = params[1:]
        concrete_args = concrete_args or {}
        annotations = getattr(root_fn, "__annotations__", {})
        args = []
        for p in params:
            ann = annotations.get(p.name)
            ann = None if isinstance(ann, str) else ann
            if p.name in concrete_args:
                args.append(self._concrete_arg(p, concrete_args[p.name]))
                continue
            if p.kind == inspect.Parameter.VAR_KEYWORD:
                raise NotImplementedError("cthtorch.fx: tracing a function with **%s is not supported" % p.name)
            name = ("*" + p.name) if p.kind == inspect.Parameter.VAR_POSITIONAL else p.name
            default = () if p.default is inspect.Parameter.empty else (p.default,)
            args.append(self.create_proxy("placeholder", name, default, {}, type_expr=ann))
        return root_fn, args

    def _concrete_arg(self, p, value):
        """A concrete_args entry: still a placeholder (named <arg>_1, as torch
        does) so the signature is unchanged; PH traces it as a value, anything
        else is baked in, with an assertion that a call passes the same value."""
        default = () if p.default is inspect.Parameter.empty else (p.default,)
        out = self.create_proxy("placeholder", p.name + "_1", default, {})
        if value is PH:
            return out
        msg = "%s has been specialized to have value %s but got another value" % (p.name, value)
        if value is None:
            self.create_proxy("call_function", _assert_is_none, (out, msg), {})
        elif type(value) in (bool, int, float, str, complex):
            cthtorch._assert(out == value, msg)
        return value

    def trace(self, root, concrete_args=None):
        if isinstance(root, Module):
            self.root = root
            fn = getattr(type(root), self.traced_func_name)
            self.root_module_name = root._get_name() if hasattr(root, "_get_name") else type(root).__name__
        else:
            self.root = Module()
            fn = root
        self.graph = Graph(tracer_cls=type(self))
        self._param_ids = None
        self._keep_alive = []
        self.tensor_attrs = {}
        self.submodule_paths = {}
        for name, mod in self.root.named_modules():
            self.submodule_paths.setdefault(mod, name)
            for k, v in list(mod.__dict__.items()) + list(mod._buffers.items()):
                if isinstance(v, cthtorch.Tensor) and not isinstance(v, Parameter):
                    self.tensor_attrs.setdefault(id(v), (name + "." if name else "") + k)
        fn_globals = fn.__globals__
        fn, args = self.create_args_for_root(fn, isinstance(root, Module), concrete_args)
        fn = _varargs_as_positional(fn)
        if isinstance(root, Module):
            args = [root] + args
        parameter_proxy_cache = {}
        orig_getattr = Module.__getattr__
        orig_call = Module.__call__
        tracer = self

        def module_getattr_wrapper(mod, attr):
            return tracer.getattr(attr, orig_getattr(mod, attr), parameter_proxy_cache)

        def module_call_wrapper(mod, *args, **kwargs):
            def forward(*args, **kwargs):
                return orig_call(mod, *args, **kwargs)
            return tracer.call_module(mod, forward, args, kwargs)

        with _Patcher() as patcher:
            patcher.patch_method(Module, "__getattr__", module_getattr_wrapper)
            patcher.patch_method(Module, "__call__", module_call_wrapper)
            for g, name in _wrapped_fns_to_patch:
                if name in g:
                    patcher.patch(g, name, _wrapped(g[name]))
                elif name in builtins.__dict__:
                    patcher.patch(g, name, _wrapped(builtins.__dict__[name]))
            self._autowrap_globals(patcher, fn_globals)
            for mod in self.submodule_paths:
                fwd = getattr(type(mod), "forward", None)
                if fwd is not None and getattr(fwd, "__globals__", None) is not fn_globals:
                    self._autowrap_globals(patcher, fwd.__globals__)
            result = fn(*args)
            self.create_node("output", "output", (self.create_arg(result),), {},
                             type_expr=fn.__annotations__.get("return", None)
                             if not isinstance(fn.__annotations__.get("return", None), str) else None)
        self.submodule_paths = None
        return self.graph

    def _autowrap_globals(self, patcher, g):
        for name, value in list(g.items()):
            if not name.startswith("_") and callable(value) and id(value) in self._autowrap_function_ids \
                    and not getattr(value, "__fx_already_patched", False):
                patcher.patch(g, name, _wrapped(value))


def _varargs_as_positional(fn):
    """fn(x, *args) run as fn(x, args): its `*args` placeholder is one Proxy, so
    args[0] inside is a getitem node, as torch records it. Only where the code
    object allows it simply (no defaults, keyword-only arguments or **kwargs)."""
    code = getattr(fn, "__code__", None)
    if code is None or not code.co_flags & inspect.CO_VARARGS or fn.__defaults__ or code.co_kwonlyargcount \
            or code.co_flags & inspect.CO_VARKEYWORDS:
        return fn
    code = code.replace(co_argcount=code.co_argcount + 1, co_flags=code.co_flags & ~inspect.CO_VARARGS)
    return types.FunctionType(code, fn.__globals__, fn.__name__, None, fn.__closure__)


def wrap(fn_or_name):
    """Marks a module-level function (or its name) as a leaf of tracing: a call
    with a Proxy argument is recorded as one call_function node. Call it at
    module scope."""
    if not callable(fn_or_name) and not isinstance(fn_or_name, str):
        raise RuntimeError("Unsupported type for global function! Must be either a callable or string name")
    name = fn_or_name if isinstance(fn_or_name, str) else fn_or_name.__name__
    frame = inspect.currentframe().f_back
    try:
        if frame.f_code.co_name != "<module>":
            raise NotImplementedError("wrap must be called at the top level of a module")
        _wrapped_fns_to_patch.append((frame.f_globals, name))
    finally:
        del frame
    return fn_or_name


def symbolic_trace(root, concrete_args=None):
    """Traces a module or function into a GraphModule."""
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = root.__class__.__name__ if isinstance(root, Module) else root.__name__
    return GraphModule(tracer.root, graph, name)




def _assert_is_none(value, msg):
    assert value is None, msg
