"""torch.ao.nn.intrinsic.quantized: quantized layers with a fused ReLU (the output clamped at its zero point)."""
from cthtorch.ao.nn.quantized.modules.conv import Conv2d as _Conv2d
from cthtorch.ao.nn.quantized.modules.linear import Linear as _Linear
from cthtorch.ao.nn.intrinsic.modules.fused import ConvReLU2d as _FloatConvReLU2d, LinearReLU as _FloatLinearReLU

__all__ = ["ConvReLU2d", "LinearReLU"]


class ConvReLU2d(_Conv2d):
    """QuantizedConvReLU2d."""
    _FLOAT_MODULE = _FloatConvReLU2d
    _relu = True

    def _get_name(self):
        return "QuantizedConvReLU2d"


class LinearReLU(_Linear):
    """QuantizedLinearReLU."""
    _FLOAT_MODULE = (_FloatLinearReLU,)
    _relu = True

    def _get_name(self):
        return "QuantizedLinearReLU"
