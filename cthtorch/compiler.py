"""torch.compiler without a compiler: cthtorch always runs eagerly, so code
is never being compiled, the decorators return their function unchanged and
compile() is cthtorch.compile (a function as given, a module in torch's
OptimizedModule, both run eagerly)."""
import contextlib

__all__ = ["compile", "reset", "allow_in_graph", "assume_constant_result", "disable", "set_stance", "is_compiling",
           "is_dynamo_compiling", "is_exporting", "cudagraph_mark_step_begin", "list_backends"]


def compile(*args, **kwargs):
    import cthtorch
    return cthtorch.compile(*args, **kwargs)


def reset():
    pass


def is_compiling():
    return False


def is_dynamo_compiling():
    return False


def is_exporting():
    return False


def allow_in_graph(fn):
    return fn


def assume_constant_result(fn):
    return fn


def disable(fn=None, recursive=True, *, reason=None):
    """Leaves fn to run eagerly (it always does here); usable bare or as @disable()."""
    if fn is None:
        return lambda f: f
    return fn


def cudagraph_mark_step_begin():
    pass


def list_backends(exclude_tags=("debug", "experimental")):
    """No compiler backends are available in cthtorch."""
    return []


@contextlib.contextmanager
def _eager_stance():
    yield


def set_stance(stance="default", *, skip_guard_eval_unsafe=False, force_backend=None):
    """Every stance runs eagerly here; returns a context manager that does nothing."""
    return _eager_stance()
