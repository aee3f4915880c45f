"""torch.ao.nn.intrinsic.qat: fused modules for quantization-aware training. ConvBn2d keeps the batch
norm separate while training and fake-quantizes the weight scaled by the norm's running statistics
(torch's _forward_approximate); convert() folds the norm into the quantized conv."""
import math

import cthtorch
from cthtorch import nn
from cthtorch.nn import functional as F, init
from cthtorch.ao.nn import qat as nnqat
from cthtorch.ao.nn.qat.modules import _check_float_source
from cthtorch.ao.nn.intrinsic.modules import fused as nni

__all__ = ["LinearReLU", "ConvReLU2d", "ConvBn2d", "ConvBnReLU2d", "freeze_bn_stats", "update_bn_stats"]


class LinearReLU(nnqat.Linear, nni._FusedModule):
    _FLOAT_MODULE = nni.LinearReLU

    def forward(self, input):
        return F.relu(super().forward(input))


class ConvReLU2d(nnqat.Conv2d, nni._FusedModule):
    _FLOAT_MODULE = nni.ConvReLU2d

    def forward(self, input):
        return F.relu(super().forward(input))


class ConvBn2d(nn.Conv2d, nni._FusedModule):
    _FLOAT_MODULE = nni.ConvBn2d
    _relu = False

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=None, padding_mode="zeros", eps=1e-05, momentum=0.1, freeze_bn=False, qconfig=None):
        nn.Conv2d.__init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, groups, False,
                           padding_mode)
        if not qconfig:
            raise AssertionError("qconfig must be provided for QAT module")
        self.qconfig = qconfig
        self.freeze_bn = freeze_bn if self.training else True
        self.bn = nn.BatchNorm2d(out_channels, eps, momentum, True, True)
        self.weight_fake_quant = self.qconfig.weight()
        if bias:
            self.bias = nn.Parameter(cthtorch.empty(out_channels))
        else:
            self.register_parameter("bias", None)
        self.reset_bn_parameters()
        if self.training and not freeze_bn:
            self.update_bn_stats()
        else:
            self.freeze_bn_stats()

    def reset_running_stats(self):
        self.bn.reset_running_stats()

    def reset_bn_parameters(self):
        self.bn.reset_running_stats()
        init.uniform_(self.bn.weight)
        init.zeros_(self.bn.bias)
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in)
            init.uniform_(self.bias, -bound, bound)

    def update_bn_stats(self):
        self.freeze_bn = False
        self.bn.training = True
        return self

    def freeze_bn_stats(self):
        self.freeze_bn = True
        self.bn.training = False
        return self

    def _forward(self, input):
        running_std = cthtorch.sqrt(self.bn.running_var + self.bn.eps)
        scale_factor = self.bn.weight / running_std
        weight_shape = [1] * len(self.weight.shape)
        weight_shape[0] = -1
        bias_shape = [1] * len(self.weight.shape)
        bias_shape[1] = -1
        scaled_weight = self.weight_fake_quant(self.weight * scale_factor.reshape(weight_shape))
        zero_bias = cthtorch.zeros(self.out_channels, dtype=input.dtype)
        conv = self._conv_forward(input, scaled_weight, zero_bias)
        conv_orig = conv / scale_factor.reshape(bias_shape)
        if self.bias is not None:
            conv_orig = conv_orig + self.bias.reshape(bias_shape)
        return self.bn(conv_orig)

    def forward(self, input):
        out = self._forward(input)
        return F.relu(out) if self._relu else out

    def extra_repr(self):
        return super().extra_repr()

    def train(self, mode=True):
        # a frozen batch norm stays in evaluation when the model trains
        self.training = mode
        if not self.freeze_bn:
            for module in self.children():
                module.train(mode)
        return self

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        _check_float_source(cls, mod, "qat.")
        conv, bn = mod[0], mod[1]
        qat = cls(conv.in_channels, conv.out_channels, conv.kernel_size, conv.stride, conv.padding, conv.dilation,
                  conv.groups, conv.bias is not None, conv.padding_mode, bn.eps, bn.momentum, False, mod.qconfig)
        qat.weight, qat.bias = conv.weight, conv.bias
        qat.bn.weight, qat.bn.bias = bn.weight, bn.bias
        qat.bn.running_mean, qat.bn.running_var = bn.running_mean, bn.running_var
        qat.bn.num_batches_tracked = bn.num_batches_tracked
        return qat


class ConvBnReLU2d(ConvBn2d):
    _FLOAT_MODULE = nni.ConvBnReLU2d
    _relu = True


def update_bn_stats(mod):
    if type(mod) in (ConvBn2d, ConvBnReLU2d):
        mod.update_bn_stats()


def freeze_bn_stats(mod):
    if type(mod) in (ConvBn2d, ConvBnReLU2d):
        mod.freeze_bn_stats()
