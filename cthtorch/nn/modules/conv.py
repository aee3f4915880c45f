"""Convolutions (torch.nn.modules.conv): _ConvNd, Conv1d/2d/3d, _ConvTransposeNd and ConvTranspose1d/2d/3d
(output_size picks the output padding, as in torch), and their lazy forms."""
import math
from typing import List, Optional

import cthtorch
from cthtorch.nn import functional as F
from cthtorch.nn import init
from cthtorch.nn.modules.lazy import LazyModuleMixin
from cthtorch.nn.modules.module import Module
from cthtorch.nn.modules.utils import _pair, _single, _triple
from cthtorch.nn.parameter import Parameter, UninitializedParameter

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "LazyConv1d",
           "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d"]


class _ConvNd(Module):
    __constants__ = ["stride", "padding", "dilation", "groups", "padding_mode", "output_padding", "in_channels",
                     "out_channels", "kernel_size"]

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, transposed, output_padding,
                 groups, bias, padding_mode, dtype=None, ntuple=_pair):
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        valid = {"zeros", "reflect", "replicate", "circular"}
        if padding_mode not in valid:
            raise ValueError("padding_mode must be one of %s, but got padding_mode='%s'" % (valid, padding_mode))
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError("Invalid padding string '%s', should be one of {'valid', 'same'}" % padding)
            if padding == "same" and any(s != 1 for s in ntuple(stride)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = ntuple(kernel_size)
        self.stride = ntuple(stride)
        self.padding = padding if isinstance(padding, str) else ntuple(padding)
        self.dilation = ntuple(dilation)
        self.transposed = transposed
        self.output_padding = ntuple(output_padding)
        self.groups = groups
        self.padding_mode = padding_mode
        if isinstance(self.padding, str):
            self._reversed_padding_repeated_twice = [0, 0] * len(self.kernel_size)
            if padding == "same":
                for d, k, i in zip(self.dilation, self.kernel_size, range(len(self.kernel_size) - 1, -1, -1)):
                    total = d * (k - 1)
                    left = total // 2
                    self._reversed_padding_repeated_twice[2 * i] = left
                    self._reversed_padding_repeated_twice[2 * i + 1] = total - left
        else:
            self._reversed_padding_repeated_twice = [p for p in reversed(self.padding) for _ in range(2)]
        if transposed:
            shape = (in_channels, out_channels // groups, *self.kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *self.kernel_size)
        self.weight = Parameter(cthtorch.empty(shape, dtype=dtype))
        if bias:
            self.bias = Parameter(cthtorch.empty(out_channels, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.padding if not isinstance(self.padding, str) else "x"):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "padding_mode"):
            self.padding_mode = "zeros"


class Conv1d(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, False, 0, groups, bias,
                         padding_mode, dtype, _single)

    def _conv_forward(self, input: cthtorch.Tensor, weight: cthtorch.Tensor, bias: Optional[cthtorch.Tensor]):
        # torch's hook for a convolution with other weights (loralib's ConvLoRA, weight-standardised convs)
        if self.padding_mode != "zeros":
            return F.conv1d(F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode), weight, bias,
                            self.stride, 0, self.dilation, self.groups)
        return F.conv1d(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv2d(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, False, 0, groups, bias,
                         padding_mode, dtype, _pair)

    def _conv_forward(self, input: cthtorch.Tensor, weight: cthtorch.Tensor, bias: Optional[cthtorch.Tensor]):
        if self.padding_mode != "zeros":
            return F.conv2d(F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode), weight, bias,
                            self.stride, 0, self.dilation, self.groups)
        return F.conv2d(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv3d(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, False, 0, groups, bias,
                         padding_mode, dtype, _triple)

    def _conv_forward(self, input: cthtorch.Tensor, weight: cthtorch.Tensor, bias: Optional[cthtorch.Tensor]):
        if self.padding_mode != "zeros":
            return F.conv3d(F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode), weight, bias,
                            self.stride, 0, self.dilation, self.groups)
        return F.conv3d(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class _ConvTransposeNd(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, transposed, output_padding,
                 groups, bias, padding_mode, dtype=None, ntuple=_pair):
        if padding_mode != "zeros":
            raise ValueError('Only "zeros" padding mode is supported for %s' % self.__class__.__name__)
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, transposed, output_padding,
                         groups, bias, padding_mode, dtype, ntuple)

    def _output_padding(self, input: cthtorch.Tensor, output_size: Optional[List[int]], stride: List[int],
                        padding: List[int], kernel_size: List[int], num_spatial_dims: int,
                        dilation: Optional[List[int]] = None) -> List[int]:
        # typed and written as torch's, so TorchScript compiles it for the transposed convs' forwards
        ret: List[int] = []
        if output_size is None:
            for p in self.output_padding:
                ret.append(p)
            return ret
        num_non_spatial_dims = 2 if input.dim() == num_spatial_dims + 2 else 1
        if len(output_size) == num_non_spatial_dims + num_spatial_dims:
            output_size = output_size[num_non_spatial_dims:]
        if len(output_size) != num_spatial_dims:
            raise ValueError("ConvTranspose{}D: for {}D input, output_size must have {} or {} elements (got {})".format(
                num_spatial_dims, input.dim(), num_spatial_dims, num_non_spatial_dims + num_spatial_dims,
                len(output_size)))
        min_sizes: List[int] = []
        max_sizes: List[int] = []
        for d in range(num_spatial_dims):
            dil = 1
            if dilation is not None:
                dil = dilation[d]
            size = ((input.size(d + num_non_spatial_dims) - 1) * stride[d] - 2 * padding[d]
                    + dil * (kernel_size[d] - 1) + 1)
            min_sizes.append(size)
            max_sizes.append(size + stride[d] - 1)
        for i in range(len(output_size)):
            if output_size[i] < min_sizes[i] or output_size[i] > max_sizes[i]:
                raise ValueError("requested an output size of {}, but valid sizes range from {} to {} (for an input "
                                 "of {})".format(output_size, min_sizes, max_sizes, input.size()[2:]))
        for d in range(num_spatial_dims):
            ret.append(output_size[d] - min_sizes[d])
        return ret


class ConvTranspose1d(_ConvTransposeNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, True, output_padding,
                         groups, bias, padding_mode, dtype, _single)

    def forward(self, input: cthtorch.Tensor, output_size: Optional[List[int]] = None) -> cthtorch.Tensor:
        output_padding = self._output_padding(input, output_size, self.stride, self.padding, self.kernel_size, 1,
                                              self.dilation)
        return F.conv_transpose1d(input, self.weight, self.bias, self.stride, self.padding, output_padding,
                                  self.groups, self.dilation)


class ConvTranspose2d(_ConvTransposeNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, True, output_padding,
                         groups, bias, padding_mode, dtype, _pair)

    def forward(self, input: cthtorch.Tensor, output_size: Optional[List[int]] = None) -> cthtorch.Tensor:
        output_padding = self._output_padding(input, output_size, self.stride, self.padding, self.kernel_size, 2,
                                              self.dilation)
        return F.conv_transpose2d(input, self.weight, self.bias, self.stride, self.padding, output_padding,
                                  self.groups, self.dilation)


class ConvTranspose3d(_ConvTransposeNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, True, output_padding,
                         groups, bias, padding_mode, dtype, _triple)

    def forward(self, input: cthtorch.Tensor, output_size: Optional[List[int]] = None) -> cthtorch.Tensor:
        output_padding = self._output_padding(input, output_size, self.stride, self.padding, self.kernel_size, 3,
                                              self.dilation)
        return F.conv_transpose3d(input, self.weight, self.bias, self.stride, self.padding, output_padding,
                                  self.groups, self.dilation)


class _LazyConvXdMixin(LazyModuleMixin):
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
            _LazyConvXdMixin.__init__(self, out_channels, kernel_size, stride, padding, output_padding, groups,
                                    bias=bias, dtype=dtype, dilation=dilation, padding_mode=padding_mode)
    else:
        def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                     padding_mode="zeros", device=None, dtype=None):
            _LazyConvXdMixin.__init__(self, out_channels, kernel_size, stride, padding, dilation, groups, bias=bias,
                                    dtype=dtype, padding_mode=padding_mode)
    return type(name, (_LazyConvXdMixin, base), {"cls_to_become": base, "__init__": __init__, "__module__": __name__})


LazyConv1d = _lazy_conv("LazyConv1d", Conv1d, False)
LazyConv2d = _lazy_conv("LazyConv2d", Conv2d, False)
LazyConv3d = _lazy_conv("LazyConv3d", Conv3d, False)
LazyConvTranspose1d = _lazy_conv("LazyConvTranspose1d", ConvTranspose1d, True)
LazyConvTranspose2d = _lazy_conv("LazyConvTranspose2d", ConvTranspose2d, True)
LazyConvTranspose3d = _lazy_conv("LazyConvTranspose3d", ConvTranspose3d, True)
