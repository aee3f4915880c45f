"""Lazy modules: parameters stay UninitializedParameter until the first forward shows the input
size; then they are materialized, initialized, and the module becomes its eager class."""
import cthtorch
from cthtorch.nn.modules.conv3d import Conv3d, ConvTranspose3d
from cthtorch.nn.modules.layers import (BatchNorm1d, BatchNorm2d, BatchNorm3d, Conv1d, Conv2d, ConvTranspose1d,
                                        ConvTranspose2d, InstanceNorm1d, InstanceNorm2d, Linear)
from cthtorch.nn.modules.normalization import InstanceNorm3d
from cthtorch.nn.parameter import UninitializedBuffer, UninitializedParameter, is_lazy

__all__ = ["LazyModuleMixin", "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
           "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d",
           "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


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


class LazyLinear(LazyModuleMixin, Linear):
    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            with cthtorch.no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()


class _LazyConvMixin(LazyModuleMixin):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, *rest, bias=True, dtype=None, **kw):
        super().__init__(0, 0, kernel_size, stride, padding, *rest, bias=False, **kw)
        self.weight = UninitializedParameter(dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        if not self.has_uninitialized_params():
            return
        batched = input.dim() == len(self.kernel_size) + 2
        self.in_channels = input.shape[1] if batched else input.shape[0]
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if self.transposed:
            shape = (self.in_channels, self.out_channels // self.groups, *self.kernel_size)
        else:
            shape = (self.out_channels, self.in_channels // self.groups, *self.kernel_size)
        with cthtorch.no_grad():
            self.weight.materialize(shape)
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()


def _lazy_conv(name, base, transposed):
    if transposed:
        def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                     dilation=1, padding_mode="zeros", device=None, dtype=None):
            _LazyConvMixin.__init__(self, out_channels, kernel_size, stride, padding, output_padding, groups,
                                    bias=bias, dtype=dtype, dilation=dilation, padding_mode=padding_mode)
    else:
        def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                     padding_mode="zeros", device=None, dtype=None):
            _LazyConvMixin.__init__(self, out_channels, kernel_size, stride, padding, dilation, groups, bias=bias,
                                    dtype=dtype, padding_mode=padding_mode)
    return type(name, (_LazyConvMixin, base), {"cls_to_become": base, "__init__": __init__, "__module__": __name__})


LazyConv1d = _lazy_conv("LazyConv1d", Conv1d, False)
LazyConv2d = _lazy_conv("LazyConv2d", Conv2d, False)
LazyConv3d = _lazy_conv("LazyConv3d", Conv3d, False)
LazyConvTranspose1d = _lazy_conv("LazyConvTranspose1d", ConvTranspose1d, True)
LazyConvTranspose2d = _lazy_conv("LazyConvTranspose2d", ConvTranspose2d, True)
LazyConvTranspose3d = _lazy_conv("LazyConvTranspose3d", ConvTranspose3d, True)


class _LazyNormMixin(LazyModuleMixin):
    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None):
        super().__init__(0, eps, momentum, False, False)
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = UninitializedParameter(dtype=dtype)
            self.bias = UninitializedParameter(dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(dtype=dtype)
            self.running_var = UninitializedBuffer(dtype=dtype)
            self.num_batches_tracked = cthtorch.tensor(0, dtype=cthtorch.long)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if not self.has_uninitialized_params():
            return
        self.num_features = input.shape[1] if input.dim() > self._unbatched_dim else input.shape[0]
        with cthtorch.no_grad():
            for p in (self.weight, self.bias, self.running_mean, self.running_var):
                if p is not None and is_lazy(p):
                    p.materialize((self.num_features,))
            self.reset_parameters()


def _lazy_norm(name, base, unbatched_dim):
    return type(name, (_LazyNormMixin, base), {"cls_to_become": base, "_unbatched_dim": unbatched_dim,
                                               "__module__": __name__})


LazyBatchNorm1d = _lazy_norm("LazyBatchNorm1d", BatchNorm1d, 1)
LazyBatchNorm2d = _lazy_norm("LazyBatchNorm2d", BatchNorm2d, 1)
LazyBatchNorm3d = _lazy_norm("LazyBatchNorm3d", BatchNorm3d, 1)
LazyInstanceNorm1d = _lazy_norm("LazyInstanceNorm1d", InstanceNorm1d, 2)
LazyInstanceNorm2d = _lazy_norm("LazyInstanceNorm2d", InstanceNorm2d, 3)
LazyInstanceNorm3d = _lazy_norm("LazyInstanceNorm3d", InstanceNorm3d, 4)
