"""nn.Parameter: a Tensor subclass that Modules register automatically."""
import cthtorch


class Parameter(cthtorch.Tensor):
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
        return (_rebuild_parameter, (self.data.clone(), self.requires_grad))


def _rebuild_parameter(data, requires_grad):
    return Parameter(data, requires_grad)


class UninitializedParameter(Parameter):
    def __new__(cls, requires_grad=True, device=None, dtype=None):
        raise NotImplementedError("lazy modules (UninitializedParameter) are not implemented in cthtorch")


class Buffer:
    """nn.Buffer(tensor, persistent=True): marks a tensor to be registered as a buffer."""

    def __new__(cls, data=None, *, persistent=True):
        t = data if data is not None else cthtorch.empty(0)
        t._is_buffer = True
        t._buffer_persistent = persistent
        return t
