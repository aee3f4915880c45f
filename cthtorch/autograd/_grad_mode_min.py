"""Grad-mode switches used until the full grad_mode module lands."""
import functools

from cthtorch import _C


class set_grad_enabled:
    def __init__(self, mode):
        self.prev = _C.is_grad_enabled()
        self.mode = bool(mode)
        _C._set_grad_enabled(self.mode)

    def __enter__(self):
        return self

    def __exit__(self, *a):
        _C._set_grad_enabled(self.prev)

    def __call__(self, fn):
        _C._set_grad_enabled(self.prev)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with set_grad_enabled(self.mode):
                return fn(*args, **kwargs)
        return wrapper


class _Mode:
    mode = False

    def __enter__(self):
        self.prev = _C.is_grad_enabled()
        _C._set_grad_enabled(self.mode)
        return self

    def __exit__(self, *a):
        _C._set_grad_enabled(self.prev)

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with type(self)():
                return fn(*args, **kwargs)
        return wrapper


class no_grad(_Mode):
    mode = False


class enable_grad(_Mode):
    mode = True


class inference_mode(_Mode):
    def __init__(self, mode=True):
        self.mode = not mode
