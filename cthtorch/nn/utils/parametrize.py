"""nn.utils.parametrize: a tensor of a module computed by modules from stored originals.
register_parametrization swaps the module's class for a subclass with a property per
parametrized name; the originals live in module.parametrizations[name]."""
from contextlib import contextmanager

import cthtorch
from cthtorch.nn.modules.container import ModuleDict, ModuleList
from cthtorch.nn.parameter import Parameter

__all__ = ["cached", "ParametrizationList", "register_parametrization", "is_parametrized", "remove_parametrizations",
           "type_before_parametrizations"]

_cache_enabled = 0
_cache = {}


@contextmanager
def cached():
    """Within this context each parametrized tensor is computed once and reused."""
    global _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache.clear()


def _register_parameter_or_buffer(module, name, x):
    if isinstance(x, Parameter):
        module.register_parameter(name, x)
    else:
        module.register_buffer(name, x)


def _set(dest, src):
    """Give `dest` the value (and shape) of `src` while keeping the object, as torch's set_ does."""
    with cthtorch.no_grad():
        if dest.shape == src.shape:
            dest.copy_(src)
        else:
            dest.data = src.detach().clone()


class ParametrizationList(ModuleList):
    def __init__(self, modules, original, unsafe=False):
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        shape, dtype = original.shape, original.dtype
        with cthtorch.no_grad():
            new = original
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass
        if not isinstance(new, (cthtorch.Tensor, list, tuple)):
            raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). Got %s"
                             % type(new).__name__)
        self.is_tensor = isinstance(new, cthtorch.Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if original.dtype != new.dtype:
                raise ValueError("When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                                 "original.dtype: %s\nright_inverse(original).dtype: %s" % (original.dtype, new.dtype))
            if new is not original:
                _set(original, new)
            _register_parameter_or_buffer(self, "original", original)
        else:
            for i, orig_i in enumerate(new):
                if not isinstance(orig_i, cthtorch.Tensor):
                    raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...)."
                                     " Got element %d of the sequence with type %s." % (i, type(orig_i).__name__))
                orig_i = orig_i.detach().clone()
                if isinstance(original, Parameter):
                    orig_i = Parameter(orig_i, original.requires_grad)
                _register_parameter_or_buffer(self, "original%d" % i, orig_i)
        if not self.unsafe:
            z = self()
            if not isinstance(z, cthtorch.Tensor):
                raise ValueError("A parametrization must return a tensor. Got %s." % type(z).__name__)
            if z.dtype != dtype or z.shape != shape:
                raise ValueError("Registering a parametrization may not change the shape of the tensor, unless "
                                 "`unsafe` flag is enabled.\nunparametrized shape: %s\nparametrized shape: %s"
                                 % (shape, z.shape))

    def right_inverse(self, value):
        with cthtorch.no_grad():
            for module in reversed(self):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError("parametrization %s does not implement right_inverse." % type(module).__name__)
                value = module.right_inverse(value)
            if self.is_tensor:
                _set(self.original, value)
            else:
                for i, t in enumerate(value):
                    _set(getattr(self, "original%d" % i), t)

    def forward(self):
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, "original%d" % i) for i in range(self.ntensors)))
        for module in list(self)[1:]:
            x = module(x)
        return x


def _inject_new_class(module):
    cls = module.__class__
    module.__class__ = type("Parametrized" + cls.__name__, (cls,), {})


def _inject_property(module, name):
    def get_parametrized(self):
        plist = self.parametrizations[name]
        if _cache_enabled:
            key = (id(self), name)
            if key not in _cache:
                _cache[key] = plist()
            return _cache[key]
        return plist()

    def set_original(self, value):
        self.parametrizations[name].right_inverse(value)

    setattr(module.__class__, name, property(get_parametrized, set_original))


def is_parametrized(module, tensor_name=None):
    plists = module.__dict__.get("_modules", {}).get("parametrizations")
    if plists is None or not isinstance(plists, ModuleDict):
        return False
    return len(plists) > 0 if tensor_name is None else tensor_name in plists


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        plist = module.parametrizations[tensor_name]
        if not unsafe:
            y = getattr(module, tensor_name)
            x = parametrization(y)
            if not isinstance(x, cthtorch.Tensor) or x.dtype != y.dtype or x.shape != y.shape:
                raise ValueError("Registering a parametrization may not change the shape of the tensor, unless "
                                 "`unsafe` flag is enabled.")
        plist.append(parametrization)
        plist.unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        plist = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = plist
    else:
        raise ValueError("Module '%s' does not have a parameter, a buffer, or a parametrized element with name '%s'"
                         % (module, tensor_name))
    return module


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    if not is_parametrized(module, tensor_name):
        raise ValueError("Module %s does not have a parametrization on %s" % (module, tensor_name))
    plist = module.parametrizations[tensor_name]
    if plist.is_tensor:
        original = plist.original
        if leave_parametrized:
            with cthtorch.no_grad():
                _set(original, getattr(module, tensor_name))
    else:
        if not leave_parametrized:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is parametrized "
                             "in terms of a sequence of tensors.")
        t = getattr(module, tensor_name)
        original = Parameter(t.detach(), t.requires_grad) if t.requires_grad else t.detach()
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module):
    return module.__class__.__bases__[0] if is_parametrized(module) else type(module)
