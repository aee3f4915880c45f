"""Quantized normalization layers (torch.ao.nn.quantized): float arithmetic between dequantize and
quantize with the observed output parameters (see utils._FloatComputed)."""
from cthtorch import nn
from cthtorch.ao.nn.quantized.modules.utils import _FloatComputed

__all__ = ["BatchNorm2d", "BatchNorm3d", "LayerNorm", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d",
           "InstanceNorm3d"]


class BatchNorm2d(_FloatComputed, nn.BatchNorm2d):
    _ARGS = ("num_features", "eps", "momentum", "affine", "track_running_stats")


class BatchNorm3d(_FloatComputed, nn.BatchNorm3d):
    _ARGS = ("num_features", "eps", "momentum", "affine", "track_running_stats")


class LayerNorm(_FloatComputed, nn.LayerNorm):
    _ARGS = ("normalized_shape", "eps", "elementwise_affine")


class GroupNorm(_FloatComputed, nn.GroupNorm):
    _ARGS = ("num_groups", "num_channels", "eps", "affine")


class InstanceNorm1d(_FloatComputed, nn.InstanceNorm1d):
    _ARGS = ("num_features", "eps", "momentum", "affine", "track_running_stats")


class InstanceNorm2d(_FloatComputed, nn.InstanceNorm2d):
    _ARGS = ("num_features", "eps", "momentum", "affine", "track_running_stats")


class InstanceNorm3d(_FloatComputed, nn.InstanceNorm3d):
    _ARGS = ("num_features", "eps", "momentum", "affine", "track_running_stats")
