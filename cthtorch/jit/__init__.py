"""torch.jit: tracing and scripting Python into graphs (jit/_ir.py), run by
an interpreter (jit/_interpreter.py), saved as TorchScript archives.

Layout as torch's: _trace.py (trace, trace_module), _module.py
(ScriptFunction, ScriptModule, TracedModule), _script.py/frontend.py
(script), _serialization.py (save, load), _passes/ (graph passes, freeze).
"""
import warnings

from . import _bindings  # noqa: F401  (torch._C.Graph & co.; cthtorch/__init__ imports this package)

# module objects load on first use (they need cthtorch.nn; `import cthtorch` stays fast)
_MODULE_NAMES = ("ScriptFunction", "ScriptModule", "RecursiveScriptModule", "TracedModule", "TopLevelTracedModule",
                 "ScriptMethod")


def __getattr__(name):
    if name in _MODULE_NAMES:
        from . import _module
        return getattr(_module, name)
    if name == "frontend":   # torch.jit.frontend.NotSupportedError & co.
        import importlib     # not `from . import`: that asks this __getattr__ again
        return importlib.import_module("cthtorch.jit.frontend")
    raise AttributeError("module 'cthtorch.jit' has no attribute '%s'" % name)

__all__ = ["script", "trace", "trace_module", "ignore", "unused", "export", "interface", "is_scripting",
           "is_tracing", "annotate", "save", "load", "ScriptModule", "ScriptFunction", "RecursiveScriptModule",
           "TracedModule", "TracerWarning", "Error", "Final", "Attribute", "freeze", "optimize_for_inference",
           "CompilationUnit", "fork", "wait", "isinstance", "Future"]


class Error(RuntimeError):
    """torch.jit.Error: an exception raised inside TorchScript code."""


class TracerWarning(Warning):
    @staticmethod
    def ignore_lib_warnings():
        warnings.filterwarnings("ignore", category=TracerWarning, module="torch.(?!jit)")
        warnings.filterwarnings("ignore", category=TracerWarning, module="cthtorch.(?!jit)")


# TracerWarnings from library code are not shown, as torch does
TracerWarning.ignore_lib_warnings()


def trace(func, example_inputs=None, *args, **kwargs):
    from ._trace import trace as _t
    return _t(func, example_inputs, *args, **kwargs)


def trace_module(mod, inputs, *args, **kwargs):
    from ._trace import trace_module as _t
    return _t(mod, inputs, *args, **kwargs)


def _mark(fn, modifier):
    # the frontend reads the mark (torch: _jit_internal.FunctionModifiers)
    try:
        fn._torchscript_modifier = modifier
    except (AttributeError, TypeError):
        pass
    return fn


def ignore(drop=False, **kwargs):
    if callable(drop):
        return _mark(drop, "ignore")
    return lambda fn: _mark(fn, "unused" if drop else "ignore")


def unused(fn):
    return _mark(fn, "unused")


def export(fn):
    return _mark(fn, "export")


def interface(obj):
    return obj


def _script_if_tracing(fn):
    return fn


_tracing = [False]


def is_scripting():
    return False


def is_tracing():
    return _tracing[0]


def annotate(the_type, the_value):
    return the_value


def isinstance(obj, target_type):   # noqa: A001  (torch.jit.isinstance)
    import builtins
    return builtins.isinstance(obj, target_type)


class _FinalMeta(type):
    def __getitem__(cls, item):
        return cls


class Final(metaclass=_FinalMeta):
    """`Final[int]`: a module constant."""


class Attribute:
    def __new__(cls, value, type=None):
        return value


class CompilationUnit:
    def __init__(self, lang=None, _frames_up=0):
        raise NotImplementedError("torch.jit.CompilationUnit needs the TorchScript frontend, which is not built yet")


class Future:
    def __init__(self, value):
        self._value = value

    def wait(self):
        return self._value


def fork(func, *args, **kwargs):
    return Future(func(*args, **kwargs))


def wait(future):
    return future.wait()


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    """Parameters and attributes become constants of the inlined forward;
    dropout goes, batch norm folds into the conv before it (eval only)."""
    from ._passes import freeze_module
    frozen = freeze_module(mod, preserved_attrs, optimize_numerics)
    frozen._frozen = True
    return frozen


def optimize_for_inference(mod, other_methods=None):
    """freeze (if not frozen yet) plus the inference rewrites: conv/batch-norm
    folding, constant propagation, CSE, and fused elementwise kernels where
    the fuser can build them."""
    from ._module import ScriptModule
    from ._passes import optimize_frozen_graph
    if not isinstance(mod, ScriptModule):
        raise RuntimeError("optimize_for_inference expects a ScriptModule as input. Please use torch.jit.script "
                           "or torch.jit.trace to script your 'nn.Module'.")
    if not getattr(mod, "_frozen", False):
        mod = freeze(mod.eval() if mod.training else mod, preserved_attrs=other_methods)
    from ._fuser import fuse_elementwise
    from ._passes.freeze import transpose_frozen_linear
    for m in mod._methods.values():
        optimize_frozen_graph(m.graph)
        transpose_frozen_linear(m.graph)
        fuse_elementwise(m.graph)
        m._reset_executor()
    return mod


# ---- exports added by the other JIT branches (jitscript, jitarch) go below, one marked block each

# ---- jitscript: the TorchScript frontend (jit/frontend.py, _script.py, _recursive.py), imported
# on first use: the frontend alone would double `import cthtorch`'s time
def script(obj=None, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    from ._script import script as _script
    return _script(obj, optimize, _frames_up, _rcb, example_inputs)



def script_method(fn):
    """The legacy API: marks a method of a torch.jit.ScriptModule subclass, compiled (with the methods it
    calls) when an instance's __init__ is done (ScriptModule.__init_subclass__)."""
    fn._cthtorch_script_method = True
    return fn

# ---- jitarch: TorchScript archives (jit/_serialization.py, imported on first use: it needs cthtorch.nn) ----
def save(m, f, _extra_files=None):
    from ._serialization import save as _save
    return _save(m, f, _extra_files)


def load(f, map_location=None, _extra_files=None, _restore_shapes=False):
    from ._serialization import load as _load
    return _load(f, map_location, _extra_files)
