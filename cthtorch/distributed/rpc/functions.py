"""torch.distributed.rpc.functions.async_execution: the function returns a
Future and the callee replies with that Future's value once it is set."""
import functools

__all__ = ["async_execution"]


def async_execution(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    wrapper._wrapped_async_rpc_function = fn
    return wrapper
