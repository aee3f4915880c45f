"""Scripting an nn.Module recursively (torch/jit/_recursive.py's job):
each module gets a class type `__torch__.<qualname>` whose attributes are
its parameters, buffers, submodules and plain attributes; `forward`, the
@export'ed methods and the methods they call are compiled with `self` as the
first graph input; submodules are scripted the same way. The result is a
RecursiveScriptModule (jit/_module.py) holding the same tensors."""
import inspect
import types

from . import frontend
from .frontend import T_bool, T_none, T_tensor

__all__ = ["ModuleInfo", "create_script_module"]

_CONTAINERS = ("ModuleList", "Sequential", "ModuleDict", "ParameterList", "ParameterDict")


def _modifier(fn):
    from ._script import get_modifier
    return get_modifier(fn)


class ModuleInfo:
    """What the compiler knows of one module instance."""

    def __init__(self, mod, infos, script_methods=None):
        from ._module import class_type_name
        from . import _ir
        from ._module import ScriptModule
        self.mod = mod
        self.infos = infos
        infos[id(mod)] = self
        # scripted or traced already: use its graphs; a legacy ScriptModule's @script_method methods compile
        self.prebuilt = isinstance(mod, ScriptModule) and script_methods is None
        self.py_name = getattr(mod, "original_name", type(mod).__name__)
        self.qualified_name = class_type_name(type(mod))
        self.class_type = mod._type if self.prebuilt and mod._type is not None else _ir.ClassType(self.qualified_name)
        if self.prebuilt:
            self.qualified_name = str(self.class_type.qualified_name()) if callable(
                getattr(self.class_type, "qualified_name", None)) else self.qualified_name
        builtin = type(mod).__module__.startswith("cthtorch.nn")
        self.is_container = type(mod).__name__ in _CONTAINERS and builtin            # iterable in a for loop
        self.has_forward = not (self.is_container and type(mod).__name__ != "Sequential")
        self.child_order = [k for k, m in mod._modules.items() if m is not None]
        self.methods = {}           # name -> CompiledFunction
        # methods whose source is not the class's: a recurrent layer's PackedSequence forward (forward__1)
        self.extra_methods = {}
        if not self.prebuilt and builtin:
            from ._rnn_packed import packed_methods
            self.extra_methods.update(packed_methods(mod))
        self.extra_methods.update(script_methods or {})
        self.ignored = {}           # name -> Python function left to Python
        self.compiling = set()
        self.constants = self._constants()
        for name, p in mod._parameters.items():
            self.class_type.addAttribute(name, T_tensor() if p is not None else T_none())
        for name, b in mod._buffers.items():
            self.class_type.addAttribute(name, T_tensor() if b is not None else T_none())
        for name, m in mod._modules.items():
            if m is not None:
                self.class_type.addAttribute(name, self.child(m).class_type)
        self.class_type.addAttribute("training", T_bool())

    def child(self, m):
        info = self.infos.get(id(m))
        return info if info is not None else ModuleInfo(m, self.infos)

    def _constants(self):
        """`__constants__`, Final-annotated attributes and, for cthtorch.nn's
        own layers, their plain settings (torch lists those in each layer's
        __constants__)."""
        import typing
        mod = self.mod
        names = set(getattr(type(mod), "__constants__", ()) or ())
        for cls in type(mod).__mro__:
            for k, ann in getattr(cls, "__annotations__", {}).items():
                if ann is typing.Final or typing.get_origin(ann) is typing.Final or \
                        getattr(ann, "__name__", None) == "Final" or \
                        (isinstance(ann, str) and ann.startswith(("Final", "typing.Final", "torch.jit.Final"))):
                    names.add(k)
        builtin = type(mod).__module__.startswith("cthtorch.nn")
        out = {}
        for k, v in vars(mod).items():
            if k.startswith("_") or k == "training":
                continue
            if (k in names or builtin) and _is_constant(v):
                out[k] = v
        for k in names:
            if k not in out and hasattr(mod, k) and _is_constant(getattr(mod, k)):
                out[k] = getattr(mod, k)
        return out

    # -- attribute lookup for the emitter
    def lookup(self, name):
        mod = self.mod
        if name in mod._modules and mod._modules[name] is not None:
            return "module", self.child(mod._modules[name])
        if name in mod._parameters or name in mod._buffers:
            return "attribute", T_tensor() if getattr(mod, name) is not None else T_none()
        if name == "training":
            return "attribute", T_bool()
        if name in self.constants:
            return "constant", self.constants[name]
        if name in vars(mod) and callable(vars(mod)[name]) and not isinstance(vars(mod)[name], type):
            # a function held as an attribute (TransformerEncoderLayer's activation, F.relu): called as the
            # same function named in source would be, as torch adds it as a function attribute
            return "python_function", vars(mod)[name]
        if name in vars(mod):
            t = frontend.type_of_python_value(vars(mod)[name])
            if t is not None:
                self.class_type.addAttribute(name, t)
                return "attribute", t
            return "missing", "(its type, %s, is not supported in TorchScript)" % type(vars(mod)[name]).__name__
        fn = self.extra_methods.get(name) or getattr(type(mod), name, None)
        if inspect.isfunction(fn):
            return "method", None
        if isinstance(fn, staticmethod):
            return "function", fn.__func__
        return "missing", ""

    def attr_type(self, name):
        kind, payload = self.lookup(name)
        return payload if kind == "attribute" else None

    # -- methods
    def compile_method(self, compiler, name, loc=None):
        if name in self.methods:
            return self.methods[name]
        if self.prebuilt:
            if not self.mod._has_method(name):
                raise frontend.script_error(loc, "Module '%s' has no method '%s'" % (self.py_name, name))
            g = self.mod._get_method(name).graph
            ins = g.inputs()[1:]
            cf = frontend.CompiledFunction(name, name, g, [v.debugNameBase() for v in ins],
                                           [v.type() for v in ins], {}, g.outputs()[0].type())
            self.methods[name] = cf
            return cf
        fn = self.extra_methods.get(name) or getattr(type(self.mod), name, None)
        if not self.has_forward and name == "forward":
            raise frontend.script_error(loc, "%s has no forward; iterate over it instead" % self.py_name)
        if not inspect.isfunction(fn):
            raise frontend.script_error(loc, "Module '%s' has no method '%s'" % (self.py_name, name))
        if name in self.compiling:
            raise frontend.script_error(loc, "Recursive method calls are not supported in TorchScript: %s.%s"
                                % (self.py_name, name))
        modifier = _modifier(fn)
        fdef, ctx = frontend.get_jit_def(fn)
        resolver = frontend.python_resolver(fn)
        defaults = frontend._py_defaults(fn)
        defaults.pop("self", None)
        names, arg_types, ret = frontend.signature_types(fdef, ctx, resolver, defaults, skip_self=True)
        from ._script import IGNORE, UNUSED
        if modifier in (IGNORE, UNUSED):
            # left to Python: called by name on the module (CallMethod); unused ones raise
            cf = frontend.CompiledFunction(name, name, None, names, arg_types, defaults, ret or T_tensor(), fn)
            self.ignored[name] = (fn, modifier)
            self.methods[name] = cf
            return cf
        self.compiling.add(name)
        try:
            em = frontend.Emitter(ctx, resolver, compiler)
            from .frontend import ModuleSugar
            graph = em.emit_def(fdef, arg_types, ret, self_type=self.class_type,
                                self_sugar=lambda v: ModuleSugar(v, self))
        finally:
            self.compiling.discard(name)
        cf = frontend.CompiledFunction(name, "%s.%s" % (self.qualified_name, name), graph, names, arg_types,
                                       defaults, ret or graph.outputs()[0].type(), fn)
        self.methods[name] = cf
        return cf

    def methods_to_compile(self):
        """forward (when the class defines one) and @export'ed methods."""
        from ._script import EXPORT
        out = []
        cls = type(self.mod)
        if self.prebuilt:
            return []
        if self.has_forward and inspect.isfunction(getattr(cls, "forward", None)) and \
                getattr(cls, "forward") is not _module_forward():
            out.append("forward")
        if "forward__1" in self.extra_methods:            # what it calls compiles with it
            out.append("forward__1")
        for k in dir(cls):
            f = getattr(cls, k, None)
            if inspect.isfunction(f) and _modifier(f) == EXPORT and k not in out:
                out.append(k)
        return out


def _module_forward():
    import cthtorch.nn as nn
    return getattr(nn.Module, "forward", None)


def _is_constant(v):
    import cthtorch
    if isinstance(v, (bool, int, float, str, cthtorch.dtype, cthtorch.device)) or v is None:
        return True
    return isinstance(v, tuple) and all(_is_constant(x) for x in v)


def create_script_module(mod):
    """torch.jit.script(nn_module)."""
    from ._module import RecursiveScriptModule
    infos = {}
    root = ModuleInfo(mod, infos)
    compiler = frontend.Compiler()
    pending = [root]
    seen = set()
    while pending:                      # every module in the tree compiles its forward/exports
        info = pending.pop()
        if id(info) in seen:
            continue
        seen.add(id(info))
        for name in info.methods_to_compile():
            info.compile_method(compiler, name)
        for m in ([] if info.prebuilt else info.mod._modules.values()):
            if m is not None:
                pending.append(info.child(m))
    sm = RecursiveScriptModule()._construct_from(mod, root.qualified_name)
    _attach(sm, root, infos)
    return sm


def compile_script_methods(mod):
    """A legacy torch.jit.ScriptModule subclass instance, its __init__ done: its plain submodules are scripted
    (as torch's are), then its @script_method methods and the methods they call compile onto it."""
    from ._module import ScriptModule
    for k, m in list(mod._modules.items()):
        if m is not None and not isinstance(m, ScriptModule):
            mod._modules[k] = create_script_module(m)
    infos = {}
    stubs = type(mod)._script_method_stubs
    info = ModuleInfo(mod, infos, script_methods=stubs)
    compiler = frontend.Compiler()
    for name in sorted(stubs):
        info.compile_method(compiler, name)
    _attach(mod, info, infos)
    for name in stubs:   # m.forward is the ScriptMethod (with .graph, .code), not ScriptModule's forward
        object.__setattr__(mod, name, mod._methods[name])


def _attach(sm, info, infos):
    """Defines each compiled method on the script module, and on each
    scripted submodule its own."""
    from ._module import ScriptModule
    from ._script import UNUSED
    if info.prebuilt:
        return
    object.__setattr__(sm, "_type", info.class_type)
    for name, cf in info.methods.items():
        if cf.graph is not None:
            from ._script import define_method
            define_method(sm, cf)
        else:
            fn, modifier = info.ignored[name]
            if modifier == UNUSED:
                object.__setattr__(sm, name, types.MethodType(_unused_stub(name), sm))
            else:
                object.__setattr__(sm, name, types.MethodType(fn, sm))
    from ._script import IGNORE, get_modifier
    for k in dir(type(info.mod)):                     # ignored methods stay callable from Python
        f = getattr(type(info.mod), k, None)
        if inspect.isfunction(f) and k not in info.methods and get_modifier(f) in (IGNORE, UNUSED):
            object.__setattr__(sm, k, types.MethodType(f if get_modifier(f) == IGNORE else _unused_stub(k), sm))
    if "forward__1" in info.extra_methods:          # calls from Python pick forward or forward__1 by input type
        object.__setattr__(sm, "_forward_overloads", ("forward", "forward__1"))
        # torch names the Tensor overload forward__0: the same method under that name too (not saved twice)
        object.__setattr__(sm, "forward__0", sm._methods["forward"])
    for k, v in info.constants.items():
        if k not in sm.__dict__:
            object.__setattr__(sm, k, v)
    for k, child in sm._modules.items():
        if isinstance(child, ScriptModule) and id(info.mod._modules[k]) in infos:
            _attach(child, infos[id(info.mod._modules[k])], infos)


def _unused_stub(name):
    def stub(self, *args, **kwargs):
        raise RuntimeError("This method '%s' was marked @torch.jit.unused and cannot be called" % name)
    return stub
