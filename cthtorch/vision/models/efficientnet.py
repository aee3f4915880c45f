"""EfficientNet B0-B7 (Tan & Le 2019) and EfficientNetV2 S/M/L (Tan & Le 2021) as torchvision builds them:
stages of MBConv (depthwise + squeeze-excitation) or FusedMBConv blocks with stochastic depth growing linearly
with the block index."""
import copy
import math
from functools import partial
from typing import Optional

import cthtorch
from cthtorch import nn
from cthtorch.vision.models import _weights
from cthtorch.vision.models._api import WeightsEnum, register_model
from cthtorch.vision.models._utils import _make_divisible, handle_legacy_interface
from cthtorch.vision.models._weights import BICUBIC, _NEW, _REF, imagenet
from cthtorch.vision.ops.misc import Conv2dNormActivation, SqueezeExcitation
from cthtorch.vision.ops.stochastic_depth import StochasticDepth

__all__ = ["EfficientNet", "EfficientNet_B0_Weights", "EfficientNet_B1_Weights", "EfficientNet_B2_Weights",
           "EfficientNet_B3_Weights", "EfficientNet_B4_Weights", "EfficientNet_B5_Weights",
           "EfficientNet_B6_Weights", "EfficientNet_B7_Weights", "EfficientNet_V2_S_Weights",
           "EfficientNet_V2_M_Weights", "EfficientNet_V2_L_Weights", "efficientnet_b0", "efficientnet_b1",
           "efficientnet_b2", "efficientnet_b3", "efficientnet_b4", "efficientnet_b5", "efficientnet_b6",
           "efficientnet_b7", "efficientnet_v2_s", "efficientnet_v2_m", "efficientnet_v2_l"]


class _MBConvConfig:
    """One stage: expansion ratio, kernel, stride of its first block, widths, number of blocks, block type."""

    def __init__(self, expand_ratio, kernel, stride, input_channels, out_channels, num_layers, block):
        self.expand_ratio, self.kernel, self.stride = expand_ratio, kernel, stride
        self.input_channels, self.out_channels = input_channels, out_channels
        self.num_layers, self.block = num_layers, block

    @staticmethod
    def adjust_channels(channels, width_mult, min_value=None):
        return _make_divisible(channels * width_mult, 8, min_value)

    def __repr__(self):
        return ("%s(expand_ratio=%s, kernel=%s, stride=%s, input_channels=%s, out_channels=%s, num_layers=%s)"
                % (type(self).__name__, self.expand_ratio, self.kernel, self.stride, self.input_channels,
                   self.out_channels, self.num_layers))


class MBConvConfig(_MBConvConfig):
    """A stage of MBConv blocks, its widths scaled by width_mult and depth by depth_mult (EfficientNet B1-B7)."""

    def __init__(self, expand_ratio, kernel, stride, input_channels, out_channels, num_layers, width_mult=1.0,
                 depth_mult=1.0, block=None):
        super().__init__(expand_ratio, kernel, stride, self.adjust_channels(input_channels, width_mult),
                         self.adjust_channels(out_channels, width_mult), self.adjust_depth(num_layers, depth_mult),
                         block or MBConv)

    @staticmethod
    def adjust_depth(num_layers, depth_mult):
        return int(math.ceil(num_layers * depth_mult))


class FusedMBConvConfig(_MBConvConfig):
    def __init__(self, expand_ratio, kernel, stride, input_channels, out_channels, num_layers, block=None):
        super().__init__(expand_ratio, kernel, stride, input_channels, out_channels, num_layers,
                         block or FusedMBConv)


class _MBBlock(nn.Module):
    """What MBConv and FusedMBConv share: a stride of 1 or 2, and the residual (through stochastic depth)
    when the block keeps the shape."""

    def __init__(self, cnf):
        super().__init__()
        if not 1 <= cnf.stride <= 2:
            raise ValueError("illegal stride value")
        self.use_res_connect = cnf.stride == 1 and cnf.input_channels == cnf.out_channels
        self.out_channels = cnf.out_channels

    def forward(self, input):
        result = self.block(input)
        if self.use_res_connect:
            result = self.stochastic_depth(result)
            result += input
        return result


class MBConv(_MBBlock):
    """1x1 expansion, depthwise kxk, squeeze-excitation, 1x1 projection."""

    def __init__(self, cnf, stochastic_depth_prob, norm_layer, se_layer=SqueezeExcitation):
        super().__init__(cnf)
        expanded = cnf.adjust_channels(cnf.input_channels, cnf.expand_ratio)
        layers = []
        if expanded != cnf.input_channels:
            layers.append(Conv2dNormActivation(cnf.input_channels, expanded, kernel_size=1, norm_layer=norm_layer,
                                               activation_layer=nn.SiLU))
        layers.append(Conv2dNormActivation(expanded, expanded, kernel_size=cnf.kernel, stride=cnf.stride,
                                           groups=expanded, norm_layer=norm_layer, activation_layer=nn.SiLU))
        layers.append(se_layer(expanded, max(1, cnf.input_channels // 4), activation=partial(nn.SiLU, inplace=True)))
        layers.append(Conv2dNormActivation(expanded, cnf.out_channels, kernel_size=1, norm_layer=norm_layer,
                                           activation_layer=None))
        self.block = nn.Sequential(*layers)
        self.stochastic_depth = StochasticDepth(stochastic_depth_prob, "row")


class FusedMBConv(_MBBlock):
    """EfficientNetV2's early blocks: one full kxk convolution expands (then a 1x1 projects), or when the ratio
    is 1, the kxk convolution alone."""

    def __init__(self, cnf, stochastic_depth_prob, norm_layer):
        super().__init__(cnf)
        expanded = cnf.adjust_channels(cnf.input_channels, cnf.expand_ratio)
        if expanded != cnf.input_channels:
            layers = [Conv2dNormActivation(cnf.input_channels, expanded, kernel_size=cnf.kernel, stride=cnf.stride,
                                           norm_layer=norm_layer, activation_layer=nn.SiLU),
                      Conv2dNormActivation(expanded, cnf.out_channels, kernel_size=1, norm_layer=norm_layer,
                                           activation_layer=None)]
        else:
            layers = [Conv2dNormActivation(cnf.input_channels, cnf.out_channels, kernel_size=cnf.kernel,
                                           stride=cnf.stride, norm_layer=norm_layer, activation_layer=nn.SiLU)]
        self.block = nn.Sequential(*layers)
        self.stochastic_depth = StochasticDepth(stochastic_depth_prob, "row")


class EfficientNet(nn.Module):
    def __init__(self, inverted_residual_setting, dropout, stochastic_depth_prob=0.2, num_classes=1000,
                 norm_layer=None, last_channel=None):
        super().__init__()
        if not inverted_residual_setting:
            raise ValueError("The inverted_residual_setting should not be empty")
        if not (isinstance(inverted_residual_setting, (list, tuple))
                and all(isinstance(s, _MBConvConfig) for s in inverted_residual_setting)):
            raise TypeError("The inverted_residual_setting should be List[MBConvConfig]")
        norm_layer = norm_layer or nn.BatchNorm2d
        layers = [Conv2dNormActivation(3, inverted_residual_setting[0].input_channels, kernel_size=3, stride=2,
                                       norm_layer=norm_layer, activation_layer=nn.SiLU)]
        total_blocks = sum(cnf.num_layers for cnf in inverted_residual_setting)
        block_id = 0
        for cnf in inverted_residual_setting:
            stage = []
            for _ in range(cnf.num_layers):
                block_cnf = copy.copy(cnf)
                if stage:  # later blocks of a stage keep the width and resolution
                    block_cnf.input_channels, block_cnf.stride = block_cnf.out_channels, 1
                stage.append(block_cnf.block(block_cnf, stochastic_depth_prob * float(block_id) / total_blocks,
                                             norm_layer))
                block_id += 1
            layers.append(nn.Sequential(*stage))
        last_in = inverted_residual_setting[-1].out_channels
        last_out = last_channel if last_channel is not None else 4 * last_in
        layers.append(Conv2dNormActivation(last_in, last_out, kernel_size=1, norm_layer=norm_layer,
                                           activation_layer=nn.SiLU))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Dropout(p=dropout, inplace=True), nn.Linear(last_out, num_classes))
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out")
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                bound = 1.0 / math.sqrt(m.out_features)
                nn.init.uniform_(m.weight, -bound, bound)
                nn.init.zeros_(m.bias)

    def _forward_impl(self, x):
        x = self.avgpool(self.features(x))
        return self.classifier(cthtorch.flatten(x, 1))

    def forward(self, x):
        return self._forward_impl(x)


# (expand ratio, kernel, stride, in, out, blocks) per stage
_B_STAGES = [(1, 3, 1, 32, 16, 1), (6, 3, 2, 16, 24, 2), (6, 5, 2, 24, 40, 2), (6, 3, 2, 40, 80, 3),
             (6, 5, 1, 80, 112, 3), (6, 5, 2, 112, 192, 4), (6, 3, 1, 192, 320, 1)]
# V2: the first three stages (S) or three stages (M, L) are fused
_V2_STAGES = {
    "s": [(1, 3, 1, 24, 24, 2), (4, 3, 2, 24, 48, 4), (4, 3, 2, 48, 64, 4), (4, 3, 2, 64, 128, 6),
          (6, 3, 1, 128, 160, 9), (6, 3, 2, 160, 256, 15)],
    "m": [(1, 3, 1, 24, 24, 3), (4, 3, 2, 24, 48, 5), (4, 3, 2, 48, 80, 5), (4, 3, 2, 80, 160, 7),
          (6, 3, 1, 160, 176, 14), (6, 3, 2, 176, 304, 18), (6, 3, 1, 304, 512, 5)],
    "l": [(1, 3, 1, 32, 32, 4), (4, 3, 2, 32, 64, 7), (4, 3, 2, 64, 96, 7), (4, 3, 2, 96, 192, 10),
          (6, 3, 1, 192, 224, 19), (6, 3, 2, 224, 384, 25), (6, 3, 1, 384, 640, 7)],
}


def _efficientnet_conf(arch, width_mult=None, depth_mult=None):
    """(stage configs, last channel or None for 4x the last stage's) of an architecture name; the multipliers
    scale the B family's stages."""
    if arch.startswith("efficientnet_b"):
        return [MBConvConfig(*s, width_mult=width_mult, depth_mult=depth_mult) for s in _B_STAGES], None
    for size, stages in _V2_STAGES.items():
        if arch.startswith("efficientnet_v2_" + size):
            return [(FusedMBConvConfig if i < 3 else MBConvConfig)(*s) for i, s in enumerate(stages)], 1280
    raise ValueError("Unsupported model type %s" % arch)


def _efficientnet(arch, width_mult, depth_mult, dropout, enum, weights, progress, kwargs, norm_layer=None):
    setting, last_channel = _efficientnet_conf(arch, width_mult, depth_mult)
    dropout = kwargs.pop("dropout", dropout)
    if norm_layer is not None:
        kwargs.setdefault("norm_layer", norm_layer)
    return _weights.build(enum, weights, progress,
                          lambda **kw: EfficientNet(setting, dropout, last_channel=last_channel, **kw), kwargs)


_V1 = _REF + "#efficientnet-v1"
_V2 = _REF + "#efficientnet-v2"


class EfficientNet_B0_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("efficientnet_b0_rwightman-7f5810bc.pth", 5288548, (77.692, 93.532), 0.386, 20.451,
                             recipe=_V1, interpolation=BICUBIC)
    DEFAULT = IMAGENET1K_V1


class EfficientNet_B1_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("efficientnet_b1_rwightman-bac287d4.pth", 7794184, (78.642, 94.186), 0.687, 30.134,
                             recipe=_V1, crop=240, interpolation=BICUBIC)
    IMAGENET1K_V2 = imagenet("efficientnet_b1-c27df63c.pth", 7794184, (79.838, 94.934), 0.687, 30.136,
                             recipe=_NEW + "#new-recipe-with-lr-wd-crop-tuning", crop=240, resize=255)
    DEFAULT = IMAGENET1K_V2


class EfficientNet_B2_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("efficientnet_b2_rwightman-c35c1473.pth", 9109994, (80.608, 95.31), 1.088, 35.174,
                             recipe=_V1, crop=288, resize=288, interpolation=BICUBIC)
    DEFAULT = IMAGENET1K_V1


class EfficientNet_B3_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("efficientnet_b3_rwightman-b3899882.pth", 12233232, (82.008, 96.054), 1.827, 47.184,
                             recipe=_V1, crop=300, resize=320, interpolation=BICUBIC)
    DEFAULT = IMAGENET1K_V1


class EfficientNet_B4_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("efficientnet_b4_rwightman-23ab8bcd.pth", 19341616, (83.384, 96.594), 4.394, 74.489,
                             recipe=_V1, crop=380, resize=384, interpolation=BICUBIC)
    DEFAULT = IMAGENET1K_V1


class EfficientNet_B5_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("efficientnet_b5_lukemelas-1a07897c.pth", 30389784, (83.444, 96.628), 10.266, 116.864,
                             recipe=_V1, crop=456, resize=456, interpolation=BICUBIC)
    DEFAULT = IMAGENET1K_V1


class EfficientNet_B6_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("efficientnet_b6_lukemelas-24a108a5.pth", 43040704, (84.008, 96.916), 19.068, 165.362,
                             recipe=_V1, crop=528, resize=528, interpolation=BICUBIC)
    DEFAULT = IMAGENET1K_V1


class EfficientNet_B7_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("efficientnet_b7_lukemelas-c5b4e57e.pth", 66347960, (84.122, 96.908), 37.746, 254.675,
                             recipe=_V1, crop=600, resize=600, interpolation=BICUBIC)
    DEFAULT = IMAGENET1K_V1


class EfficientNet_V2_S_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("efficientnet_v2_s-dd5fe13b.pth", 21458488, (84.228, 96.878), 8.366, 82.704,
                             recipe=_V2, crop=384, resize=384, min_size=(33, 33))
    DEFAULT = IMAGENET1K_V1


class EfficientNet_V2_M_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("efficientnet_v2_m-dc08266a.pth", 54139356, (85.112, 97.156), 24.582, 208.01,
                             recipe=_V2, crop=480, resize=480, min_size=(33, 33))
    DEFAULT = IMAGENET1K_V1


class EfficientNet_V2_L_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("efficientnet_v2_l-59c71312.pth", 118515272, (85.808, 97.788), 56.08, 454.573,
                             recipe=_V2, crop=480, resize=480, interpolation=BICUBIC,
                             mean=(0.5, 0.5, 0.5), std=(0.5, 0.5, 0.5), min_size=(33, 33))
    DEFAULT = IMAGENET1K_V1

# B5-B7 were ported from TensorFlow with its batch-norm settings; V2 uses a larger eps
_BN_B5_B7 = partial(nn.BatchNorm2d, eps=0.001, momentum=0.01)
_BN_V2 = partial(nn.BatchNorm2d, eps=1e-03)


@register_model()
@handle_legacy_interface(weights=("pretrained", EfficientNet_B0_Weights.IMAGENET1K_V1))
def efficientnet_b0(*, weights: Optional[EfficientNet_B0_Weights] = None, progress: bool = True,
                    **kwargs) -> EfficientNet:
    return _efficientnet("efficientnet_b0", 1.0, 1.0, 0.2, EfficientNet_B0_Weights, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", EfficientNet_B1_Weights.IMAGENET1K_V1))
def efficientnet_b1(*, weights: Optional[EfficientNet_B1_Weights] = None, progress: bool = True,
                    **kwargs) -> EfficientNet:
    return _efficientnet("efficientnet_b1", 1.0, 1.1, 0.2, EfficientNet_B1_Weights, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", EfficientNet_B2_Weights.IMAGENET1K_V1))
def efficientnet_b2(*, weights: Optional[EfficientNet_B2_Weights] = None, progress: bool = True,
                    **kwargs) -> EfficientNet:
    return _efficientnet("efficientnet_b2", 1.1, 1.2, 0.3, EfficientNet_B2_Weights, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", EfficientNet_B3_Weights.IMAGENET1K_V1))
def efficientnet_b3(*, weights: Optional[EfficientNet_B3_Weights] = None, progress: bool = True,
                    **kwargs) -> EfficientNet:
    return _efficientnet("efficientnet_b3", 1.2, 1.4, 0.3, EfficientNet_B3_Weights, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", EfficientNet_B4_Weights.IMAGENET1K_V1))
def efficientnet_b4(*, weights: Optional[EfficientNet_B4_Weights] = None, progress: bool = True,
                    **kwargs) -> EfficientNet:
    return _efficientnet("efficientnet_b4", 1.4, 1.8, 0.4, EfficientNet_B4_Weights, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", EfficientNet_B5_Weights.IMAGENET1K_V1))
def efficientnet_b5(*, weights: Optional[EfficientNet_B5_Weights] = None, progress: bool = True,
                    **kwargs) -> EfficientNet:
    return _efficientnet("efficientnet_b5", 1.6, 2.2, 0.4, EfficientNet_B5_Weights, weights, progress,
                         kwargs, norm_layer=_BN_B5_B7)


@register_model()
@handle_legacy_interface(weights=("pretrained", EfficientNet_B6_Weights.IMAGENET1K_V1))
def efficientnet_b6(*, weights: Optional[EfficientNet_B6_Weights] = None, progress: bool = True,
                    **kwargs) -> EfficientNet:
    return _efficientnet("efficientnet_b6", 1.8, 2.6, 0.5, EfficientNet_B6_Weights, weights, progress,
                         kwargs, norm_layer=_BN_B5_B7)


@register_model()
@handle_legacy_interface(weights=("pretrained", EfficientNet_B7_Weights.IMAGENET1K_V1))
def efficientnet_b7(*, weights: Optional[EfficientNet_B7_Weights] = None, progress: bool = True,
                    **kwargs) -> EfficientNet:
    return _efficientnet("efficientnet_b7", 2.0, 3.1, 0.5, EfficientNet_B7_Weights, weights, progress,
                         kwargs, norm_layer=_BN_B5_B7)


@register_model()
@handle_legacy_interface(weights=("pretrained", EfficientNet_V2_S_Weights.IMAGENET1K_V1))
def efficientnet_v2_s(*, weights: Optional[EfficientNet_V2_S_Weights] = None, progress: bool = True,
                      **kwargs) -> EfficientNet:
    return _efficientnet("efficientnet_v2_s", None, None, 0.2, EfficientNet_V2_S_Weights, weights, progress,
                         kwargs, norm_layer=_BN_V2)


@register_model()
@handle_legacy_interface(weights=("pretrained", EfficientNet_V2_M_Weights.IMAGENET1K_V1))
def efficientnet_v2_m(*, weights: Optional[EfficientNet_V2_M_Weights] = None, progress: bool = True,
                      **kwargs) -> EfficientNet:
    return _efficientnet("efficientnet_v2_m", None, None, 0.3, EfficientNet_V2_M_Weights, weights, progress,
                         kwargs, norm_layer=_BN_V2)


@register_model()
@handle_legacy_interface(weights=("pretrained", EfficientNet_V2_L_Weights.IMAGENET1K_V1))
def efficientnet_v2_l(*, weights: Optional[EfficientNet_V2_L_Weights] = None, progress: bool = True,
                      **kwargs) -> EfficientNet:
    return _efficientnet("efficientnet_v2_l", None, None, 0.4, EfficientNet_V2_L_Weights, weights, progress,
                         kwargs, norm_layer=_BN_V2)
