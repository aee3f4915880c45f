"""Conv3d and ConvTranspose3d over the composite F.conv3d / F.conv_transpose3d."""
from cthtorch.nn import functional as F
from cthtorch.nn.modules.layers import _ConvNd
from cthtorch.nn.modules.utils import _triple

__all__ = ["Conv3d", "ConvTranspose3d"]


class Conv3d(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, False, 0, groups, bias,
                         padding_mode, dtype, _triple)

    def _conv_forward(self, input, weight, bias):
        if self.padding_mode != "zeros":
            return F.conv3d(F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode), weight, bias,
                            self.stride, 0, self.dilation, self.groups)
        return F.conv3d(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class ConvTranspose3d(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError('Only "zeros" padding mode is supported for ConvTranspose3d')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, True, output_padding,
                         groups, bias, padding_mode, dtype, _triple)

    def forward(self, input, output_size=None):
        if output_size is not None:
            raise NotImplementedError("ConvTranspose3d(output_size=...) is not implemented in cthtorch")
        return F.conv_transpose3d(input, self.weight, self.bias, self.stride, self.padding, self.output_padding,
                                  self.groups, self.dilation)
