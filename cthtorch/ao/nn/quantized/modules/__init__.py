"""torch.ao.nn.quantized.modules: modules that take and return quantized tensors."""
import cthtorch
from cthtorch.ao.nn.quantized.modules.utils import JIT_UNSUPPORTED
from cthtorch import nn
from cthtorch.ao.nn.quantized.modules.linear import Linear, LinearPackedParams  # noqa: F401
from cthtorch.ao.nn.quantized.modules.conv import Conv2d  # noqa: F401
from cthtorch.ao.nn.quantized.modules.activation import ReLU6, Dropout, Hardswish, ELU, LeakyReLU  # noqa: F401,E501
from cthtorch.ao.nn.quantized.modules.normalization import (  # noqa: F401
    BatchNorm2d, BatchNorm3d, LayerNorm, GroupNorm, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d)
from cthtorch.ao.nn.quantized.modules.functional_modules import (  # noqa: F401
    FloatFunctional, FXFloatFunctional, QFunctional)

__all__ = ["Quantize", "DeQuantize", "Linear", "LinearPackedParams", "Conv2d", "ReLU6", "Dropout",
           "FloatFunctional", "FXFloatFunctional", "QFunctional", "Hardswish", "ELU", "LeakyReLU", "BatchNorm2d",
           "BatchNorm3d", "LayerNorm", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]


class Quantize(nn.Module):
    """Quantizes its float input with fixed (scale, zero_point, dtype): what convert() makes a QuantStub."""
    _jit_unsupported = JIT_UNSUPPORTED

    def __init__(self, scale, zero_point, dtype, factory_kwargs=None):
        super().__init__()
        self.register_buffer("scale", cthtorch.tensor([scale]))
        self.register_buffer("zero_point", cthtorch.tensor([zero_point], dtype=cthtorch.long))
        self.dtype = dtype

    def forward(self, X):
        return cthtorch.quantize_per_tensor(X, float(self.scale), int(self.zero_point), self.dtype)

    @staticmethod
    def from_float(mod, use_precomputed_fake_quant=False):
        if not hasattr(mod, "activation_post_process"):
            raise AssertionError("Input float module must have activation_post_process defined")
        scale, zero_point = mod.activation_post_process.calculate_qparams()
        return Quantize(scale.float().item(), zero_point.long().item(), mod.activation_post_process.dtype)

    def extra_repr(self):
        return f"scale={self.scale}, zero_point={self.zero_point}, dtype={self.dtype}"


class DeQuantize(nn.Module):
    """Dequantizes its input: what convert() makes a DeQuantStub."""
    _jit_unsupported = JIT_UNSUPPORTED

    def forward(self, Xq):
        return Xq.dequantize()

    @staticmethod
    def from_float(mod, use_precomputed_fake_quant=False):
        return DeQuantize()
