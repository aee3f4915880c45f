"""torch.autograd.grad_mode: no_grad, enable_grad, set_grad_enabled, inference_mode over the C engine's
grad and inference flags; each is also a decorator (torch.utils._contextlib)."""
from cthtorch import _C
from cthtorch.utils._contextlib import _DecoratorContextManager, _NoParamDecoratorContextManager

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode"]


def _switch_on_enter(self):
    self.prev = _C.is_grad_enabled()
    _C._set_grad_enabled(self.mode)


def _switch_back(self, exc_type, exc_value, traceback):
    _C._set_grad_enabled(self.prev)


class no_grad(_NoParamDecoratorContextManager):
    mode = False
    __enter__, __exit__ = _switch_on_enter, _switch_back

    def __init__(self):
        self.prev = False


class enable_grad(_NoParamDecoratorContextManager):
    mode = True
    __enter__, __exit__ = _switch_on_enter, _switch_back


class set_grad_enabled(_DecoratorContextManager):
    """Takes effect when made (torch.set_grad_enabled(False) alone is a switch); as a context or decorator
    the previous mode comes back after."""

    def __init__(self, mode):
        self.prev = _C.is_grad_enabled()
        self.mode = bool(mode)
        _C._set_grad_enabled(self.mode)

    def __call__(self, orig_func):
        _C._set_grad_enabled(self.prev)
        return super().__call__(orig_func)

    def __enter__(self):
        _C._set_grad_enabled(self.mode)

    def __exit__(self, exc_type, exc_value, traceback):
        _C._set_grad_enabled(self.prev)

    def clone(self):
        return self.__class__(self.mode)


def is_inference_mode_enabled():
    return _C._is_inference_mode_enabled()


class inference_mode(_DecoratorContextManager):
    """no_grad, and the tensors made meanwhile are inference tensors (no in-place update outside the mode,
    never saved for backward); also a bare decorator"""

    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)

    def __init__(self, mode=True):
        self.mode = mode

    def __enter__(self):
        self.prev_inf = is_inference_mode_enabled()
        self.prev = _C.is_grad_enabled()
        _C._set_inference_mode(self.mode)
        _C._set_grad_enabled(not self.mode)   # inference_mode(False) turns grad back on, as torch's

    def __exit__(self, exc_type, exc_value, traceback):
        _C._set_inference_mode(self.prev_inf)
        _C._set_grad_enabled(self.prev)

    def clone(self):
        return self.__class__(self.mode)
