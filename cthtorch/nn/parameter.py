"""nn.Parameter: a Tensor subclass that Modules register automatically."""
import cthtorch


class Parameter(cthtorch.Tensor):
    # ops on a Parameter give plain tensors, and the bindings skip the __torch_function__ hand-over for it
    __torch_function__ = cthtorch._C._disabled_torch_function_impl

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = cthtorch.empty(0)
        return cthtorch.Tensor._make_subclass(cls, data.detach() if data.requires_grad else data, requires_grad)

    def __init__(self, data=None, requires_grad=True):
        pass

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        r = type(self)(self.data.clone(), self.requires_grad)
        memo[id(self)] = r
        return r

    def __reduce_ex__(self, proto):
        # attributes set on a parameter travel with it, as torch's _rebuild_parameter_with_state keeps them
        state = {k: v for k, v in getattr(self, "__dict__", {}).items() if k != "_retain_handle"}
        return (_rebuild_parameter, (self.data.clone(), self.requires_grad, state))


def _rebuild_parameter(data, requires_grad, state=None):
    from cthtorch._tensor import _set_obj_state
    return _set_obj_state(Parameter(data, requires_grad), state)


class UninitializedTensorMixin:
    """A placeholder of unknown shape (lazy modules); materialize() gives it a shape and its final class."""
    cls_to_become = None

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass

    def materialize(self, shape, device=None, dtype=None):
        self.data = cthtorch.empty(shape, dtype=dtype if dtype is not None else self.data.dtype)
        self.__class__ = self.cls_to_become

    def __repr__(self):
        return "<%s>" % self.__class__.__name__

    def __reduce_ex__(self, proto):
        return (self.__class__, (self.requires_grad,))


def is_lazy(param):
    return isinstance(param, UninitializedTensorMixin)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return cthtorch.Tensor._make_subclass(cls, cthtorch.empty(0, dtype=dtype), requires_grad)


class UninitializedBuffer(UninitializedTensorMixin, cthtorch.Tensor):
    __torch_function__ = cthtorch._C._disabled_torch_function_impl   # as Parameter: plain results, no hand-over

    cls_to_become = cthtorch.Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None):
        return cthtorch.Tensor._make_subclass(cls, cthtorch.empty(0, dtype=dtype), requires_grad)


class Buffer:
    """nn.Buffer(tensor, persistent=True): marks a tensor to be registered as a buffer."""

    def __new__(cls, data=None, *, persistent=True):
        t = data if data is not None else cthtorch.empty(0)
        t._is_buffer = True
        t._buffer_persistent = persistent
        return t
