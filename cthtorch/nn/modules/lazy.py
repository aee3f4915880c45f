"""LazyModuleMixin: parameters stay UninitializedParameter until the first forward shows the input
size; then they are materialized, initialized, and the module becomes its eager class (cls_to_become).
The lazy classes themselves live beside their eager ones (linear, conv, batchnorm, instancenorm), as in torch."""
from cthtorch.nn.parameter import is_lazy

__all__ = ["LazyModuleMixin"]


class LazyModuleMixin:
    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(LazyModuleMixin._infer_parameters)

    def has_uninitialized_params(self):
        params = list(self._parameters.values()) + list(self._buffers.values())
        return any(is_lazy(p) for p in params if p is not None)

    def initialize_parameters(self, *args, **kwargs):
        raise NotImplementedError("initialize_parameters is not implemented for %s" % self.__class__.__name__)

    @staticmethod
    def _infer_parameters(module, args):
        module.initialize_parameters(*args)
        if module.has_uninitialized_params():
            raise RuntimeError("module %s has not been fully initialized" % module._get_name())
        module._initialize_hook.remove()
        del module._initialize_hook
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self):
        raise RuntimeError("Modules with uninitialized parameters can't be used with `DataParallel`. Run a dummy "
                           "forward pass to correctly initialize the modules")
