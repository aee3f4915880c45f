"""Pooling modules not in layers.py: LPPool*, MaxUnpool*, 3-d pools, fractional pools (not implemented)."""
from cthtorch.nn import functional as F
from cthtorch.nn.modules.layers import AdaptiveAvgPool2d, AdaptiveMaxPool2d, AvgPool2d, _MaxPoolNd
# torch.nn.modules.pooling also holds the 1d/2d pools (user code imports them from here)
from cthtorch.nn.modules.layers import (AdaptiveAvgPool1d, AdaptiveMaxPool1d, AvgPool1d, MaxPool1d,  # noqa: F401,E501
                                        MaxPool2d)
from cthtorch.nn.modules.module import Module
from cthtorch.nn.modules.utils import _pair, _single, _triple

__all__ = ["LPPool1d", "LPPool2d", "LPPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "MaxPool3d", "AvgPool3d",
           "AdaptiveAvgPool3d", "AdaptiveMaxPool3d", "FractionalMaxPool2d", "FractionalMaxPool3d"]


class _LPPoolNd(Module):
    __constants__ = ["norm_type", "kernel_size", "stride", "ceil_mode"]
    _fn = None

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type, self.kernel_size, self.stride, self.ceil_mode = norm_type, kernel_size, stride, ceil_mode

    def forward(self, input):
        return type(self)._fn(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self):
        return "norm_type={norm_type}, kernel_size={kernel_size}, stride={stride}, ceil_mode={ceil_mode}".format(
            **self.__dict__)


class LPPool1d(_LPPoolNd):
    _fn = F.lp_pool1d


class LPPool2d(_LPPoolNd):
    _fn = F.lp_pool2d


class LPPool3d(_LPPoolNd):
    _fn = F.lp_pool3d


class _MaxUnpoolNd(Module):
    _tuple = staticmethod(_pair)
    _fn = None

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size = self._tuple(kernel_size)
        self.stride = self._tuple(stride if stride is not None else kernel_size)
        self.padding = self._tuple(padding)

    def forward(self, input, indices, output_size=None):
        return type(self)._fn(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self):
        return "kernel_size={}, stride={}, padding={}".format(self.kernel_size, self.stride, self.padding)


class MaxUnpool1d(_MaxUnpoolNd):
    _tuple = staticmethod(_single)
    _fn = F.max_unpool1d


class MaxUnpool2d(_MaxUnpoolNd):
    _fn = F.max_unpool2d


class MaxUnpool3d(_MaxUnpoolNd):
    _tuple = staticmethod(_triple)
    _fn = F.max_unpool3d


class MaxPool3d(_MaxPoolNd):
    def forward(self, input):
        return F.max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode,
                            self.return_indices)


class AvgPool3d(AvgPool2d):
    def forward(self, input):
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class AdaptiveAvgPool3d(AdaptiveAvgPool2d):
    def forward(self, input):
        return F.adaptive_avg_pool3d(input, self.output_size)


class AdaptiveMaxPool3d(AdaptiveMaxPool2d):
    def forward(self, input):
        return F.adaptive_max_pool3d(input, self.output_size, self.return_indices)


class FractionalMaxPool2d(Module):
    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                 _random_samples=None):
        raise NotImplementedError("%s is not implemented in cthtorch" % type(self).__name__)


class FractionalMaxPool3d(FractionalMaxPool2d):
    pass
