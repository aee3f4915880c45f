"""torch.jit without a compiler: script/trace return what they are given, so
programs that decorate or trace code run eagerly. Saving TorchScript is not
possible and says so."""


def script(obj=None, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    return obj


def trace(func, example_inputs=None, *args, **kwargs):
    return func


def trace_module(mod, inputs, *args, **kwargs):
    return mod


def ignore(drop=False, **kwargs):
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn):
    return fn


def export(fn):
    return fn


def interface(obj):
    return obj


def is_scripting():
    return False


def is_tracing():
    return False


def annotate(the_type, the_value):
    return the_value


def save(m, f, _extra_files=None):
    raise NotImplementedError("cthtorch.jit.save: TorchScript serialization is not implemented in cthtorch; "
                              "use cthtorch.save(model.state_dict(), f)")


def load(f, map_location=None, _extra_files=None):
    raise NotImplementedError("cthtorch.jit.load: TorchScript is not implemented in cthtorch")


class ScriptModule:
    pass


ScriptFunction = type(lambda: None)
Final = None


# ---- TorchScript archives (jitarch: jit/_serialization.py) ----
from cthtorch.jit._serialization import load, save, RecursiveScriptModule  # noqa: E402,F401
