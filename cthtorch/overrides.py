"""The Python side of the __torch_function__ protocol (torch.overrides).

The protocol itself runs in C (src/python/TorchFunction.c): a call of a
generated op or a `_C._Op` whose arguments include an object overriding
__torch_function__ is handed to it. Functions written in Python
(nn.functional) ask `has_torch_function*` first and hand the call over with
`handle_torch_function`, so torch.fx records them under their own name."""
import contextlib
import functools
import inspect

from cthtorch import _C

__all__ = ["has_torch_function", "has_torch_function_unary", "has_torch_function_variadic",
           "handle_torch_function", "is_tensor_like"]

has_torch_function = _C._has_torch_function
has_torch_function_unary = _C._has_torch_function_unary
has_torch_function_variadic = _C._has_torch_function_variadic


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Calls the __torch_function__ of the overriding types among
    relevant_args with (public_api, types, args, kwargs); their result."""
    return _C._handle_torch_function(public_api, tuple(relevant_args), args, kwargs)


@functools.lru_cache(maxsize=None)
def get_default_nowrap_functions():
    """The functions whose results Tensor.__torch_function__ does not turn into the subclass: the getters
    of .grad and ._base."""
    import cthtorch
    T = cthtorch.Tensor
    return {T._base.__get__, T.grad.__get__}


class TorchFunctionMode:
    """A __torch_function__ that sees every op called inside its `with` block (factories included), before
    any Tensor subclass's. While it runs it is off the stack, so the ops it calls go to the next mode or run."""
    inner = None

    def __init__(self):
        pass

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError()

    def __enter__(self):
        _C._push_on_torch_function_stack(self)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        _C._pop_torch_function_stack()

    @classmethod
    def push(cls, *args, **kwargs):
        import warnings
        warnings.warn("`Mode.push()` is no longer necessary and can be replaced with just `with Mode()`")
        return cls(*args, **kwargs)


class BaseTorchFunctionMode(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        if kwargs is None:
            kwargs = {}
        return func(*args, **kwargs)


def _get_current_function_mode():
    n = _C._len_torch_function_stack()
    return _C._get_function_stack_at(n - 1) if n > 0 else None


def _get_current_function_mode_stack():
    return [_C._get_function_stack_at(i) for i in range(_C._len_torch_function_stack())]


@contextlib.contextmanager
def _pop_mode_temporarily():
    old = _C._pop_torch_function_stack()
    try:
        yield old
    finally:
        _C._push_on_torch_function_stack(old)


def is_tensor_like(inp):
    import cthtorch
    return type(inp) is cthtorch.Tensor or hasattr(inp, "__torch_function__")


@functools.lru_cache(maxsize=None)
def _split_params(fn):
    params = inspect.signature(fn).parameters.values()
    required = tuple(p.name for p in params if p.default is inspect.Parameter.empty
                     and p.kind is not inspect.Parameter.KEYWORD_ONLY)
    optional = tuple(p.name for p in params if p.name not in required)
    return required, optional


def _handle_with_locals(fn, params, public=None):
    """Hands fn's call to the overriding argument the way torch's functional
    forms do: required parameters positional, the others by keyword.
    params: fn's locals() at its first line; public: the op the override
    is told was called, when torch's functional form is that op itself
    (F.conv1d is torch.conv1d), else fn."""
    required, optional = _split_params(fn)
    args = tuple(params[n] for n in required)
    kwargs = {n: params[n] for n in optional}
    return _C._handle_torch_function(public if public is not None else fn, tuple(params.values()), args, kwargs)
