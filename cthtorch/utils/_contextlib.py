"""torch.utils._contextlib: context managers that also decorate. A decorated generator function runs each of
its steps (first send, later sends, throws, close) inside the context, as torch's _wrap_generator does, so
@torch.no_grad() on a streaming generate() yields tokens computed without grad."""
import functools
import sys
import warnings

__all__ = ["context_decorator"]


def _wrap_generator(ctx_factory, func):
    @functools.wraps(func)
    def generator_context(*args, **kwargs):
        gen = func(*args, **kwargs)
        try:
            with ctx_factory():
                response = gen.send(None)
            while True:
                try:
                    request = yield response
                except GeneratorExit:
                    with ctx_factory():
                        gen.close()
                    raise
                except BaseException:
                    with ctx_factory():
                        response = gen.throw(*sys.exc_info())
                else:
                    with ctx_factory():
                        response = gen.send(request)
        except StopIteration as e:
            return e.value
    return generator_context


def context_decorator(ctx, func):
    """func run inside a fresh ctx() per call (ctx: a factory, or a context manager used as it is)."""
    import inspect     # here: `import cthtorch` loads no inspect (tests/test_lazy_imports.py)
    if inspect.isclass(func):
        raise RuntimeError("Cannot decorate classes; it is ambiguous whether or not only the constructor or all "
                           "methods should have the context manager applied; additionally, decorating a class at "
                           "definition-site will prevent use of the identifier as a conventional type. To specify "
                           "which methods to decorate, decorate each of them individually.")
    if not callable(ctx):
        def ctx_factory():
            return ctx
    else:
        ctx_factory = ctx
    if inspect.isgeneratorfunction(func):
        return _wrap_generator(ctx_factory, func)

    @functools.wraps(func)
    def decorate_context(*args, **kwargs):
        with ctx_factory():
            return func(*args, **kwargs)
    return decorate_context


class _DecoratorContextManager:
    """A context manager usable as a decorator: each call runs in self.clone()."""

    def __call__(self, orig_func):
        if isinstance(orig_func, type):
            warnings.warn("Decorating classes is deprecated and will be disabled in future versions. You should "
                          "only decorate functions or methods. To preserve the current behavior of class "
                          "decoration, you can directly decorate the `__init__` method and nothing else.",
                          FutureWarning, stacklevel=2)
            func = lambda *args, **kwargs: orig_func(*args, **kwargs)  # noqa: E731
        else:
            func = orig_func
        return context_decorator(self.clone, func)

    def __enter__(self):
        raise NotImplementedError

    def __exit__(self, exc_type, exc_value, traceback):
        raise NotImplementedError

    def clone(self):
        return self.__class__()


class _NoParamDecoratorContextManager(_DecoratorContextManager):
    """Also a bare decorator: @torch.no_grad without parentheses."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)
