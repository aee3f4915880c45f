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


def is_inference_mode_enabled():
    return _C._is_inference_mode_enabled()


class inference_mode(_Mode):
    """no_grad, and the tensors made meanwhile are inference tensors (no in-place update outside the mode,
    never saved for backward)"""
    def __init__(self, mode=True):
        self.inference = bool(mode)
        self.mode = not mode

    def __enter__(self):
        self.prev_inf = is_inference_mode_enabled()
        _C._set_inference_mode(self.inference)
        return super().__enter__()

    def __exit__(self, *a):
        _C._set_inference_mode(self.prev_inf)
        super().__exit__(*a)

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with inference_mode(self.inference):
                return fn(*args, **kwargs)
        return wrapper
