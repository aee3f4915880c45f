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


def _function_class():
    from ._module import ScriptFunction

    class CompiledFunction(ScriptFunction):
        """A scripted function: its schema keeps the defaults of the
        Python signature, and calls fill them in."""

        def __init__(self, cf, fn):
            super().__init__(cf.graph, cf.name, cf.qualified_name, original_fn=fn)
            self._defaults = cf.defaults

        @property
        def schema(self):
            return with_defaults(super().schema, self._defaults)

        def __call__(self, *args, **kwargs):
            names = [a.name for a in super().schema.arguments]
            if len(args) < len(names):
                missing = [n for n in names[len(args):] if n not in kwargs]
                kwargs = dict(kwargs, **{n: self._defaults[n] for n in missing if n in self._defaults})
            return super().__call__(*args, **kwargs)
    CompiledFunction.__name__ = CompiledFunction.__qualname__ = "ScriptFunction"
    return CompiledFunction


def function_object(cf):
    """The ScriptFunction of a compiled function (one per function)."""
    sf = getattr(cf, "script_function", None)
    if sf is None:
        sf = _function_class()(cf, cf.py_fn)
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
        from . import _recursive
        return _recursive.create_script_module(obj)
    if inspect.isclass(obj):
        if issubclass(obj, nn.Module):
            raise RuntimeError("Type '%s' cannot be compiled since it inherits from nn.Module, pass an instance "
                               "instead" % obj)
        raise NotImplementedError("torch.jit.script on a class (%s) is not supported by cthtorch yet; script "
                                  "its methods as functions or make it an nn.Module" % obj.__qualname__)
    if inspect.isfunction(obj) or inspect.ismethod(obj):
        return script_function(obj)
    raise RuntimeError("Cannot script an object of type %s: only functions and nn.Module instances can be "
                       "scripted" % type(obj).__name__)
