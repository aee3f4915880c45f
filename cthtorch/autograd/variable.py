"""Variable: since PyTorch 0.4 a Tensor; kept for old code and for the engine handle."""
import cthtorch
from cthtorch import _C


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, cthtorch.Tensor)


class Variable(metaclass=_VariableMeta):
    _execution_engine = _C._ImperativeEngine

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        if data is None:
            data = cthtorch.empty(0)
        t = data.detach()
        if requires_grad:
            t.requires_grad_(True)
        return t
