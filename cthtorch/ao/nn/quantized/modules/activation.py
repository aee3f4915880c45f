"""Quantized activation and dropout modules (torch.ao.nn.quantized): they take and return quantized
tensors on the input's grid."""
import cthtorch
from cthtorch import nn
from cthtorch.ao.nn.quantized.modules.utils import _FloatComputed

__all__ = ["ReLU6", "Dropout", "Hardswish", "ELU", "LeakyReLU"]


class ReLU6(nn.ReLU):
    """min(max(x, 0), 6) on the input's grid."""

    def __init__(self, inplace=False):
        super().__init__(inplace)

    def forward(self, input):
        return cthtorch.nn.functional.hardtanh(input, 0.0, 6.0, self.inplace)

    def _get_name(self):
        return "QuantizedReLU6"

    @staticmethod
    def from_float(mod, use_precomputed_fake_quant=False):
        return ReLU6(mod.inplace)


class Dropout(nn.Dropout):
    """Dropout of a quantized model: the identity in evaluation, as torch's."""

    def forward(self, input):
        return input

    def _get_name(self):
        return "QuantizedDropout"

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        return cls(mod.p, mod.inplace)


class Hardswish(_FloatComputed, nn.Hardswish):
    """The output on its own observed grid (see utils._FloatComputed)."""


class ELU(_FloatComputed, nn.ELU):
    _ARGS = ("alpha",)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        # torch's quantized ELU keeps scale and zero_point as plain attributes, out of its state_dict
        nn.ELU._save_to_state_dict(self, destination, prefix, keep_vars)


class LeakyReLU(_FloatComputed, nn.LeakyReLU):
    _ARGS = ("negative_slope",)
