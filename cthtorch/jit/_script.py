"""torch.jit.script: functions become ScriptFunctions and nn.Modules
RecursiveScriptModules (jit/_recursive.py), compiled by jit/frontend.py.
The decorators that steer it (ignore, unused, export) live in
jit/__init__.py and leave a mark that get_modifier reads."""
import inspect

from . import frontend

__all__ = ["script", "script_function", "get_modifier", "IGNORE", "UNUSED", "EXPORT"]

# the marks @torch.jit.ignore / unused / export leave on a function
IGNORE, UNUSED, EXPORT, DEFAULT = "ignore", "unused", "export", "default"


def get_modifier(fn):
    return getattr(fn, "_torchscript_modifier", DEFAULT)


def with_defaults(schema, defaults):
    """schema with the Python defaults of its arguments filled in."""
    for a in schema.arguments:
        if a.name in defaults:
            a.default_value = defaults[a.name]
            a.has_default = True
    return schema


def _with_defaults(cls):
    """cls (ScriptFunction or ScriptMethod) whose calls fill in the Python
    defaults of the compiled function's arguments, and whose schema (and a
    function's code) show them."""
    class WithDefaults(cls):
        _defaults = {}

        @property
        def schema(self):
            return with_defaults(super().schema, self._defaults)

        @property
        def code(self):
            # defaults show, as torch prints `hx: Optional[Tensor]=None`: an archive's code keeps them
            from ._python_printer import PythonPrinter
            return PythonPrinter().function(self.graph, self.name, self_first=getattr(self, "_is_method", False),
                                            defaults=self._defaults)

        @property
        def code_with_constants(self):
            from ._python_printer import PythonPrinter
            from ._module import _ConstMap
            consts = []
            text = PythonPrinter(consts).function(self.graph, self.name,
                                                  self_first=getattr(self, "_is_method", False),
                                                  defaults=self._defaults)
            return text, _ConstMap(consts)

        def __call__(self, *args, **kwargs):
            if not self._defaults:
                return super().__call__(*args, **kwargs)
            names = self._arg_names()
            if len(args) < len(names):
                # bound here, positionally, from the kept names: the base call's keyword
                # binding would rebuild the graph's schema on every call
                args, kwargs = list(args), dict(kwargs)
                for n in names[len(args):]:
                    if n in kwargs:
                        args.append(kwargs.pop(n))
                    elif n in self._defaults:
                        args.append(self._defaults[n])
                    else:
                        break   # a missing argument: the base call reports it
            return super().__call__(*args, **kwargs)
        def _arg_names(self):
            """The graph's argument names (without self), kept per graph: a call must not rebuild the schema."""
            cached = self.__dict__.get("_names_of")
            if cached is None or cached[0] is not self.graph:
                names = [a.name for a in super().schema.arguments[1 if getattr(self, "_is_method", False) else 0:]]
                cached = self.__dict__["_names_of"] = (self.graph, names)
            return cached[1]
    WithDefaults.__name__ = WithDefaults.__qualname__ = cls.__name__
    return WithDefaults


def define_method(sm, cf):
    """cf (a CompiledFunction) as method cf.name of the script module sm."""
    from ._module import ScriptMethod
    m = _with_defaults(ScriptMethod)(sm, cf.name, cf.graph)
    m._defaults = cf.defaults
    sm._methods[cf.name] = m
    return m


def function_object(cf):
    """The ScriptFunction of a compiled function (one per function)."""
    from ._module import ScriptFunction
    sf = getattr(cf, "script_function", None)
    if sf is None:
        sf = _with_defaults(ScriptFunction)(cf.graph, cf.name, cf.qualified_name, original_fn=cf.py_fn)
        sf._defaults = cf.defaults
        cf.script_function = sf
    return sf


def script_function(fn):
    """Compiles a Python function to a ScriptFunction."""
    return function_object(frontend.compile_function(fn))


def script(obj=None, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """torch.jit.script: a function becomes a ScriptFunction, an nn.Module a
    RecursiveScriptModule (forward and @export'ed methods compiled, and the
    same for each submodule)."""
    from ._module import ScriptFunction, ScriptModule
    import cthtorch.nn as nn
    if obj is None:
        return None
    if isinstance(obj, (ScriptModule, ScriptFunction)):
        return obj
    if isinstance(obj, nn.Module):
        for name, mod in obj.named_modules():
            reason = getattr(type(mod), "_jit_unsupported", None)   # a module type that says it cannot compile
            if reason:
                where = "submodule '%s'" % name if name else "the module"
                raise NotImplementedError("torch.jit.script: %s (%s) %s" % (type(mod).__name__, where, reason))
        from . import _recursive
        return _recursive.create_script_module(obj)
    if inspect.isclass(obj):
        if issubclass(obj, nn.Module):
            raise RuntimeError("Type '%s' cannot be compiled since it inherits from nn.Module, pass an instance "
                               "instead" % obj)
        frontend.compile_class(obj)   # as torch: the class itself comes back, now a TorchScript type too
        return obj
    if inspect.isfunction(obj) or inspect.ismethod(obj):
        return script_function(obj)
    raise RuntimeError("Cannot script an object of type %s: only functions and nn.Module instances can be "
                       "scripted" % type(obj).__name__)
