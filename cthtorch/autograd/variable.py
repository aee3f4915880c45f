"""Variable: since PyTorch 0.4 a Tensor; kept for old code and for the engine handle."""
import operator
import warnings

import cthtorch
from cthtorch import _C

_VOLATILE_GONE = "volatile was removed and now has no effect. Use `with torch.no_grad():` instead."


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, cthtorch.Tensor)


def _flag(value):
    # torch parses these two as C ints: None and non-integers are TypeErrors, any integer is truthy or not
    return bool(operator.index(value)) if not isinstance(value, bool) else value


class Variable(metaclass=_VariableMeta):
    _execution_engine = _C._ImperativeEngine

    # old programs pass volatile=True for inference; torch warns and ignores it
    def __new__(cls, data=None, requires_grad=False, volatile=False, _grad_fn=None, name=None):
        requires_grad, volatile = _flag(requires_grad), _flag(volatile)
        if name is not None and not isinstance(name, str):
            raise TypeError("argument 5 must be str or None, not %s" % type(name).__name__)
        if volatile:
            warnings.warn(_VOLATILE_GONE, stacklevel=2)
            if requires_grad:
                raise ValueError("Variable can't be volatile and require_grad at the same time!")
        if _grad_fn is not None:
            if not isinstance(_grad_fn, _C._FunctionBase if hasattr(_C, "_FunctionBase") else ()):
                raise TypeError("_grad_fn has to be a Function object or None, but got %s" % type(_grad_fn).__name__)
            raise NotImplementedError("Variable(_grad_fn=...) is not supported: build the tensor with autograd ops")
        if data is None:
            data = cthtorch.empty(0)
        elif not isinstance(data, cthtorch.Tensor):
            raise TypeError("Variable data has to be a tensor, but got %s" % type(data).__name__)
        t = data.detach()
        if requires_grad:
            t.requires_grad_(True)
        return t
