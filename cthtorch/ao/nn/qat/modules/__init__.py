"""torch.ao.nn.qat: Linear and Conv2d whose weights pass through a fake-quantize module (from the qconfig)
in every forward, for quantization-aware training."""
from cthtorch import nn
from cthtorch.nn import functional as F

__all__ = ["Linear", "Conv2d"]


def _check_float_source(cls, mod, name_prefix):
    """torch's checks that from_float got the float module type cls converts, with a qconfig."""
    if type(mod) is not cls._FLOAT_MODULE:
        raise AssertionError(name_prefix + cls.__name__ + ".from_float only works for " + cls._FLOAT_MODULE.__name__)
    if not hasattr(mod, "qconfig"):
        raise AssertionError("Input float module must have qconfig defined")
    if not mod.qconfig:
        raise AssertionError("Input float module must have a valid qconfig")


class Linear(nn.Linear):
    """nn.Linear with weight_fake_quant applied to its weight."""
    _FLOAT_MODULE = nn.Linear

    def __init__(self, in_features, out_features, bias=True, qconfig=None, device=None, dtype=None):
        super().__init__(in_features, out_features, bias, device=device, dtype=dtype)
        if not qconfig:
            raise AssertionError("qconfig must be provided for QAT module")
        self.qconfig = qconfig
        self.weight_fake_quant = qconfig.weight()

    def forward(self, input):
        return F.linear(input, self.weight_fake_quant(self.weight), self.bias)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        _check_float_source(cls, mod, " qat.")
        if type(mod).__name__ == "LinearReLU":
            mod = mod[0]
        qat = cls(mod.in_features, mod.out_features, bias=mod.bias is not None, qconfig=mod.qconfig)
        qat.weight, qat.bias = mod.weight, mod.bias
        return qat

    def to_float(self):
        linear = nn.Linear(self.in_features, self.out_features, self.bias is not None)
        linear.weight = nn.Parameter(self.weight.detach())
        if self.bias is not None:
            linear.bias = nn.Parameter(self.bias.detach())
        linear.train(self.training)
        return linear


class Conv2d(nn.Conv2d):
    """nn.Conv2d with weight_fake_quant applied to its weight."""
    _FLOAT_MODULE = nn.Conv2d

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", qconfig=None, device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride=stride, padding=padding, dilation=dilation,
                         groups=groups, bias=bias, padding_mode=padding_mode, device=device, dtype=dtype)
        if not qconfig:
            raise AssertionError("qconfig must be provided for QAT module")
        self.qconfig = qconfig
        self.weight_fake_quant = qconfig.weight()

    def forward(self, input):
        return self._conv_forward(input, self.weight_fake_quant(self.weight), self.bias)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        _check_float_source(cls, mod, "qat.")
        if type(mod).__name__ == "ConvReLU2d":
            mod = mod[0]
        qat = cls(mod.in_channels, mod.out_channels, mod.kernel_size, stride=mod.stride, padding=mod.padding,
                  dilation=mod.dilation, groups=mod.groups, bias=mod.bias is not None,
                  padding_mode=mod.padding_mode, qconfig=mod.qconfig)
        qat.weight, qat.bias = mod.weight, mod.bias
        return qat
