"""RegNet X/Y (Radosavovic et al. 2020) as torchvision builds it: stage widths and depths generated from the
quantized linear rule (depth, w_0, w_a, w_m), residual bottleneck blocks with group convolutions and, for Y,
squeeze-excitation."""
import math
from collections import OrderedDict
from functools import partial
from typing import Optional

import cthtorch
from cthtorch import nn
from cthtorch.vision.models import _weights
from cthtorch.vision.models._api import WeightsEnum, register_model
from cthtorch.vision.models._utils import _make_divisible, handle_legacy_interface
from cthtorch.vision.models._weights import BICUBIC, _NEW, _PR, _REF, _SWAG, _SWAG_LICENSE, imagenet
from cthtorch.vision.ops.misc import Conv2dNormActivation, SqueezeExcitation

__all__ = ["RegNet", "RegNet_Y_400MF_Weights", "RegNet_Y_800MF_Weights", "RegNet_Y_1_6GF_Weights",
           "RegNet_Y_3_2GF_Weights", "RegNet_Y_8GF_Weights", "RegNet_Y_16GF_Weights", "RegNet_Y_32GF_Weights",
           "RegNet_Y_128GF_Weights", "RegNet_X_400MF_Weights", "RegNet_X_800MF_Weights", "RegNet_X_1_6GF_Weights",
           "RegNet_X_3_2GF_Weights", "RegNet_X_8GF_Weights", "RegNet_X_16GF_Weights", "RegNet_X_32GF_Weights",
           "regnet_y_400mf", "regnet_y_800mf", "regnet_y_1_6gf", "regnet_y_3_2gf", "regnet_y_8gf", "regnet_y_16gf",
           "regnet_y_32gf", "regnet_y_128gf", "regnet_x_400mf", "regnet_x_800mf", "regnet_x_1_6gf",
           "regnet_x_3_2gf", "regnet_x_8gf", "regnet_x_16gf", "regnet_x_32gf"]


class SimpleStemIN(Conv2dNormActivation):
    """The stem: a stride-2 3x3 convolution, norm, activation."""

    def __init__(self, width_in, width_out, norm_layer, activation_layer):
        super().__init__(width_in, width_out, kernel_size=3, stride=2, norm_layer=norm_layer,
                         activation_layer=activation_layer)


class BottleneckTransform(nn.Sequential):
    """1x1 (a), grouped 3x3 (b), optional squeeze-excitation (se), 1x1 without activation (c)."""

    def __init__(self, width_in, width_out, stride, norm_layer, activation_layer, group_width,
                 bottleneck_multiplier, se_ratio):
        w_b = int(round(width_out * bottleneck_multiplier))
        layers = OrderedDict()
        layers["a"] = Conv2dNormActivation(width_in, w_b, kernel_size=1, stride=1, norm_layer=norm_layer,
                                           activation_layer=activation_layer)
        layers["b"] = Conv2dNormActivation(w_b, w_b, kernel_size=3, stride=stride, groups=w_b // group_width,
                                           norm_layer=norm_layer, activation_layer=activation_layer)
        if se_ratio:
            # the squeeze width follows the block's input width, not the bottleneck's
            layers["se"] = SqueezeExcitation(input_channels=w_b, squeeze_channels=int(round(se_ratio * width_in)),
                                             activation=activation_layer)
        layers["c"] = Conv2dNormActivation(w_b, width_out, kernel_size=1, stride=1, norm_layer=norm_layer,
                                           activation_layer=None)
        super().__init__(layers)


class ResBottleneckBlock(nn.Module):
    """x + f(x), through a projection when the width or resolution changes, then the activation."""

    def __init__(self, width_in, width_out, stride, norm_layer, activation_layer, group_width=1,
                 bottleneck_multiplier=1.0, se_ratio=None):
        super().__init__()
        self.proj = None
        if width_in != width_out or stride != 1:
            self.proj = Conv2dNormActivation(width_in, width_out, kernel_size=1, stride=stride,
                                             norm_layer=norm_layer, activation_layer=None)
        self.f = BottleneckTransform(width_in, width_out, stride, norm_layer, activation_layer, group_width,
                                     bottleneck_multiplier, se_ratio)
        self.activation = activation_layer(inplace=True)

    def forward(self, x):
        x = self.proj(x) + self.f(x) if self.proj is not None else x + self.f(x)
        return self.activation(x)


class AnyStage(nn.Sequential):
    """depth blocks, the first one changing width and stride; children named block<stage>-<i>."""

    def __init__(self, width_in, width_out, stride, depth, block_constructor, norm_layer, activation_layer,
                 group_width, bottleneck_multiplier, se_ratio=None, stage_index=0):
        super().__init__()
        for i in range(depth):
            self.add_module("block%d-%d" % (stage_index, i), block_constructor(
                width_in if i == 0 else width_out, width_out, stride if i == 0 else 1, norm_layer,
                activation_layer, group_width, bottleneck_multiplier, se_ratio))


class BlockParams:
    """Per-stage depths, widths, group widths, bottleneck multipliers and strides, and the SE ratio."""

    def __init__(self, depths, widths, group_widths, bottleneck_multipliers, strides, se_ratio=None):
        self.depths, self.widths, self.group_widths = depths, widths, group_widths
        self.bottleneck_multipliers, self.strides, self.se_ratio = bottleneck_multipliers, strides, se_ratio

    @classmethod
    def from_init_params(cls, depth, w_0, w_a, w_m, group_width, bottleneck_multiplier=1.0, se_ratio=None,
                         **kwargs):
        """The design space's rule: block j's width w_0 + w_a * j, snapped to w_0 * w_m^k (k integer) and to a
        multiple of 8; consecutive blocks of equal width form a stage."""
        quant, stride = 8, 2
        if w_a < 0 or w_0 <= 0 or w_m <= 1 or w_0 % 8 != 0:
            raise ValueError("Invalid RegNet settings")
        # in float32 tensors as torchvision computes it, so the rounding (and so the widths) agree
        widths_cont = cthtorch.arange(depth) * w_a + w_0
        capacity = cthtorch.round(cthtorch.log(widths_cont / w_0) / math.log(w_m))
        block_widths = (cthtorch.round(cthtorch.divide(w_0 * w_m ** capacity, quant))
                        * quant).int().tolist()
        stage_widths, stage_depths = [], []
        for w in block_widths:
            if stage_widths and stage_widths[-1] == w:
                stage_depths[-1] += 1
            else:
                stage_widths.append(w)
                stage_depths.append(1)
        n = len(stage_widths)
        multipliers = [bottleneck_multiplier] * n
        stage_widths, group_widths = cls._adjust_widths_groups_compatibilty(stage_widths, multipliers,
                                                                            [group_width] * n)
        return cls(depths=stage_depths, widths=stage_widths, group_widths=group_widths,
                   bottleneck_multipliers=multipliers, strides=[stride] * n, se_ratio=se_ratio)

    def _get_expanded_params(self):
        return zip(self.widths, self.strides, self.depths, self.group_widths, self.bottleneck_multipliers)

    @staticmethod
    def _adjust_widths_groups_compatibilty(stage_widths, bottleneck_ratios, group_widths):
        """Widths whose bottleneck is a multiple of the (capped) group width. (torchvision's spelling.)"""
        bottlenecks = [int(w * b) for w, b in zip(stage_widths, bottleneck_ratios)]
        groups = [min(g, w) for g, w in zip(group_widths, bottlenecks)]
        bottlenecks = [_make_divisible(w, g) for w, g in zip(bottlenecks, groups)]
        return [int(w / b) for w, b in zip(bottlenecks, bottleneck_ratios)], groups


class RegNet(nn.Module):
    def __init__(self, block_params, num_classes=1000, stem_width=32, stem_type=None, block_type=None,
                 norm_layer=None, activation=None):
        super().__init__()
        stem_type = stem_type or SimpleStemIN
        norm_layer = norm_layer or nn.BatchNorm2d
        block_type = block_type or ResBottleneckBlock
        activation = activation or nn.ReLU
        self.stem = stem_type(3, stem_width, norm_layer, activation)
        width = stem_width
        stages = []
        for i, (width_out, stride, depth, group_width, multiplier) in enumerate(block_params._get_expanded_params()):
            stages.append(("block%d" % (i + 1), AnyStage(width, width_out, stride, depth, block_type, norm_layer,
                                                         activation, group_width, multiplier, block_params.se_ratio,
                                                         stage_index=i + 1)))
            width = width_out
        self.trunk_output = nn.Sequential(OrderedDict(stages))
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(in_features=width, out_features=num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                fan_out = m.kernel_size[0] * m.kernel_size[1] * m.out_channels
                nn.init.normal_(m.weight, mean=0.0, std=math.sqrt(2.0 / fan_out))
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, mean=0.0, std=0.01)
                nn.init.zeros_(m.bias)

    def forward(self, x):
        x = self.avgpool(self.trunk_output(self.stem(x)))
        return self.fc(x.flatten(start_dim=1))


def _regnet(block_params, enum, weights, progress, kwargs):
    kwargs.setdefault("norm_layer", partial(nn.BatchNorm2d, eps=1e-05, momentum=0.1))
    return _weights.build(enum, weights, progress, lambda **kw: RegNet(block_params, **kw), kwargs)


_SMALL = _REF + "#small-models"
_MEDIUM = _REF + "#medium-models"
_LARGE = _REF + "#large-models"
_NEW_RECIPE = _NEW + "#new-recipe"


class RegNet_Y_400MF_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("regnet_y_400mf-c65dace8.pth", 4344144, (74.046, 91.716), 0.402, 16.806,
                             recipe=_SMALL)
    IMAGENET1K_V2 = imagenet("regnet_y_400mf-e6988f5f.pth", 4344144, (75.804, 92.742), 0.402, 16.806,
                             recipe=_NEW_RECIPE, resize=232)
    DEFAULT = IMAGENET1K_V2


class RegNet_Y_800MF_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("regnet_y_800mf-1b27b58c.pth", 6432512, (76.42, 93.136), 0.834, 24.774,
                             recipe=_SMALL)
    IMAGENET1K_V2 = imagenet("regnet_y_800mf-58fc7688.pth", 6432512, (78.828, 94.502), 0.834, 24.774,
                             recipe=_NEW_RECIPE, resize=232)
    DEFAULT = IMAGENET1K_V2


class RegNet_Y_1_6GF_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("regnet_y_1_6gf-b11a554e.pth", 11202430, (77.95, 93.966), 1.612, 43.152,
                             recipe=_SMALL)
    IMAGENET1K_V2 = imagenet("regnet_y_1_6gf-0d7bc02a.pth", 11202430, (80.876, 95.444), 1.612, 43.152,
                             recipe=_NEW_RECIPE, resize=232)
    DEFAULT = IMAGENET1K_V2


class RegNet_Y_3_2GF_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("regnet_y_3_2gf-b5a9779c.pth", 19436338, (78.948, 94.576), 3.176, 74.567,
                             recipe=_MEDIUM)
    IMAGENET1K_V2 = imagenet("regnet_y_3_2gf-9180c971.pth", 19436338, (81.982, 95.972), 3.176, 74.567,
                             recipe=_NEW_RECIPE, resize=232)
    DEFAULT = IMAGENET1K_V2


class RegNet_Y_8GF_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("regnet_y_8gf-d0d0e4a8.pth", 39381472, (80.032, 95.048), 8.473, 150.701,
                             recipe=_MEDIUM)
    IMAGENET1K_V2 = imagenet("regnet_y_8gf-dc2b1b54.pth", 39381472, (82.828, 96.33), 8.473, 150.701,
                             recipe=_NEW_RECIPE, resize=232)
    DEFAULT = IMAGENET1K_V2


class RegNet_Y_16GF_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("regnet_y_16gf-9e6ed7dd.pth", 83590140, (80.424, 95.24), 15.912, 319.49,
                             recipe=_LARGE)
    IMAGENET1K_V2 = imagenet("regnet_y_16gf-3e4a00f9.pth", 83590140, (82.886, 96.328), 15.912, 319.49,
                             recipe=_NEW_RECIPE, resize=232)
    IMAGENET1K_SWAG_E2E_V1 = imagenet("regnet_y_16gf_swag-43afe44d.pth", 83590140, (86.012, 98.054), 46.735, 319.49,
                                      recipe=_SWAG, crop=384, resize=384, interpolation=BICUBIC,
                                      license=_SWAG_LICENSE)
    IMAGENET1K_SWAG_LINEAR_V1 = imagenet("regnet_y_16gf_lc_swag-f3ec0043.pth", 83590140, (83.976, 97.244), 15.912,
                                         319.49, recipe=_PR + "5793", resize=224, interpolation=BICUBIC,
                                         license=_SWAG_LICENSE)
    DEFAULT = IMAGENET1K_V2


class RegNet_Y_32GF_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("regnet_y_32gf-4dee3f7a.pth", 145046770, (80.878, 95.34), 32.28, 554.076,
                             recipe=_LARGE)
    IMAGENET1K_V2 = imagenet("regnet_y_32gf-8db6d4b5.pth", 145046770, (83.368, 96.498), 32.28, 554.076,
                             recipe=_NEW_RECIPE, resize=232)
    IMAGENET1K_SWAG_E2E_V1 = imagenet("regnet_y_32gf_swag-04fdfa75.pth", 145046770, (86.838, 98.362), 94.826, 554.076,
                                      recipe=_SWAG, crop=384, resize=384, interpolation=BICUBIC,
                                      license=_SWAG_LICENSE)
    IMAGENET1K_SWAG_LINEAR_V1 = imagenet("regnet_y_32gf_lc_swag-e1583746.pth", 145046770, (84.622, 97.48), 32.28,
                                         554.076, recipe=_PR + "5793", resize=224, interpolation=BICUBIC,
                                         license=_SWAG_LICENSE)
    DEFAULT = IMAGENET1K_V2


class RegNet_Y_128GF_Weights(WeightsEnum):
    IMAGENET1K_SWAG_E2E_V1 = imagenet("regnet_y_128gf_swag-c8ce3e52.pth", 644812894, (88.228, 98.682), 374.57,
                                      2461.564, recipe=_SWAG, crop=384, resize=384, interpolation=BICUBIC,
                                      license=_SWAG_LICENSE)
    IMAGENET1K_SWAG_LINEAR_V1 = imagenet("regnet_y_128gf_lc_swag-cbe8ce12.pth", 644812894, (86.068, 97.844), 127.518,
                                         2461.564, recipe=_PR + "5793", resize=224, interpolation=BICUBIC,
                                         license=_SWAG_LICENSE)
    DEFAULT = IMAGENET1K_SWAG_E2E_V1


class RegNet_X_400MF_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("regnet_x_400mf-adf1edd5.pth", 5495976, (72.834, 90.95), 0.414, 21.258,
                             recipe=_SMALL)
    IMAGENET1K_V2 = imagenet("regnet_x_400mf-62229a5f.pth", 5495976, (74.864, 92.322), 0.414, 21.257,
                             recipe=_NEW + "#new-recipe-with-fixres", resize=232)
    DEFAULT = IMAGENET1K_V2


class RegNet_X_800MF_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("regnet_x_800mf-ad17e45c.pth", 7259656, (75.212, 92.348), 0.8, 27.945,
                             recipe=_SMALL)
    IMAGENET1K_V2 = imagenet("regnet_x_800mf-94a99ebd.pth", 7259656, (77.522, 93.826), 0.8, 27.945,
                             recipe=_NEW + "#new-recipe-with-fixres", resize=232)
    DEFAULT = IMAGENET1K_V2


class RegNet_X_1_6GF_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("regnet_x_1_6gf-e3633e7f.pth", 9190136, (77.04, 93.44), 1.603, 35.339,
                             recipe=_SMALL)
    IMAGENET1K_V2 = imagenet("regnet_x_1_6gf-a12f2b72.pth", 9190136, (79.668, 94.922), 1.603, 35.339,
                             recipe=_NEW + "#new-recipe-with-fixres", resize=232)
    DEFAULT = IMAGENET1K_V2


class RegNet_X_3_2GF_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("regnet_x_3_2gf-f342aeae.pth", 15296552, (78.364, 93.992), 3.177, 58.756,
                             recipe=_MEDIUM)
    IMAGENET1K_V2 = imagenet("regnet_x_3_2gf-7071aa85.pth", 15296552, (81.196, 95.43), 3.177, 58.756,
                             recipe=_NEW_RECIPE, resize=232)
    DEFAULT = IMAGENET1K_V2


class RegNet_X_8GF_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("regnet_x_8gf-03ceed89.pth", 39572648, (79.344, 94.686), 7.995, 151.456,
                             recipe=_MEDIUM)
    IMAGENET1K_V2 = imagenet("regnet_x_8gf-2b70d774.pth", 39572648, (81.682, 95.678), 7.995, 151.456,
                             recipe=_NEW_RECIPE, resize=232)
    DEFAULT = IMAGENET1K_V2


class RegNet_X_16GF_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("regnet_x_16gf-2007eb11.pth", 54278536, (80.058, 94.944), 15.941, 207.627,
                             recipe=_MEDIUM)
    IMAGENET1K_V2 = imagenet("regnet_x_16gf-ba3796d7.pth", 54278536, (82.716, 96.196), 15.941, 207.627,
                             recipe=_NEW_RECIPE, resize=232)
    DEFAULT = IMAGENET1K_V2


class RegNet_X_32GF_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("regnet_x_32gf-9d47f8d0.pth", 107811560, (80.622, 95.248), 31.736, 412.039,
                             recipe=_LARGE)
    IMAGENET1K_V2 = imagenet("regnet_x_32gf-6eb8fdc6.pth", 107811560, (83.014, 96.288), 31.736, 412.039,
                             recipe=_NEW_RECIPE, resize=232)
    DEFAULT = IMAGENET1K_V2



@register_model()
@handle_legacy_interface(weights=("pretrained", RegNet_Y_400MF_Weights.IMAGENET1K_V1))
def regnet_y_400mf(*, weights: Optional[RegNet_Y_400MF_Weights] = None, progress: bool = True, **kwargs) -> RegNet:
    params = BlockParams.from_init_params(depth=16, w_0=48, w_a=27.89, w_m=2.09, group_width=8, se_ratio=0.25, **kwargs)
    return _regnet(params, RegNet_Y_400MF_Weights, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", RegNet_Y_800MF_Weights.IMAGENET1K_V1))
def regnet_y_800mf(*, weights: Optional[RegNet_Y_800MF_Weights] = None, progress: bool = True, **kwargs) -> RegNet:
    params = BlockParams.from_init_params(depth=14, w_0=56, w_a=38.84, w_m=2.4, group_width=16, se_ratio=0.25, **kwargs)
    return _regnet(params, RegNet_Y_800MF_Weights, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", RegNet_Y_1_6GF_Weights.IMAGENET1K_V1))
def regnet_y_1_6gf(*, weights: Optional[RegNet_Y_1_6GF_Weights] = None, progress: bool = True, **kwargs) -> RegNet:
    params = BlockParams.from_init_params(depth=27, w_0=48, w_a=20.71, w_m=2.65, group_width=24, se_ratio=0.25,
                                          **kwargs)
    return _regnet(params, RegNet_Y_1_6GF_Weights, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", RegNet_Y_3_2GF_Weights.IMAGENET1K_V1))
def regnet_y_3_2gf(*, weights: Optional[RegNet_Y_3_2GF_Weights] = None, progress: bool = True, **kwargs) -> RegNet:
    params = BlockParams.from_init_params(depth=21, w_0=80, w_a=42.63, w_m=2.66, group_width=24, se_ratio=0.25,
                                          **kwargs)
    return _regnet(params, RegNet_Y_3_2GF_Weights, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", RegNet_Y_8GF_Weights.IMAGENET1K_V1))
def regnet_y_8gf(*, weights: Optional[RegNet_Y_8GF_Weights] = None, progress: bool = True, **kwargs) -> RegNet:
    params = BlockParams.from_init_params(depth=17, w_0=192, w_a=76.82, w_m=2.19, group_width=56, se_ratio=0.25,
                                          **kwargs)
    return _regnet(params, RegNet_Y_8GF_Weights, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", RegNet_Y_16GF_Weights.IMAGENET1K_V1))
def regnet_y_16gf(*, weights: Optional[RegNet_Y_16GF_Weights] = None, progress: bool = True, **kwargs) -> RegNet:
    params = BlockParams.from_init_params(depth=18, w_0=200, w_a=106.23, w_m=2.48, group_width=112, se_ratio=0.25,
                                          **kwargs)
    return _regnet(params, RegNet_Y_16GF_Weights, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", RegNet_Y_32GF_Weights.IMAGENET1K_V1))
def regnet_y_32gf(*, weights: Optional[RegNet_Y_32GF_Weights] = None, progress: bool = True, **kwargs) -> RegNet:
    params = BlockParams.from_init_params(depth=20, w_0=232, w_a=115.89, w_m=2.53, group_width=232, se_ratio=0.25,
                                          **kwargs)
    return _regnet(params, RegNet_Y_32GF_Weights, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", None))
def regnet_y_128gf(*, weights: Optional[RegNet_Y_128GF_Weights] = None, progress: bool = True, **kwargs) -> RegNet:
    params = BlockParams.from_init_params(depth=27, w_0=456, w_a=160.83, w_m=2.52, group_width=264, se_ratio=0.25,
                                          **kwargs)
    return _regnet(params, RegNet_Y_128GF_Weights, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", RegNet_X_400MF_Weights.IMAGENET1K_V1))
def regnet_x_400mf(*, weights: Optional[RegNet_X_400MF_Weights] = None, progress: bool = True, **kwargs) -> RegNet:
    params = BlockParams.from_init_params(depth=22, w_0=24, w_a=24.48, w_m=2.54, group_width=16, **kwargs)
    return _regnet(params, RegNet_X_400MF_Weights, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", RegNet_X_800MF_Weights.IMAGENET1K_V1))
def regnet_x_800mf(*, weights: Optional[RegNet_X_800MF_Weights] = None, progress: bool = True, **kwargs) -> RegNet:
    params = BlockParams.from_init_params(depth=16, w_0=56, w_a=35.73, w_m=2.28, group_width=16, **kwargs)
    return _regnet(params, RegNet_X_800MF_Weights, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", RegNet_X_1_6GF_Weights.IMAGENET1K_V1))
def regnet_x_1_6gf(*, weights: Optional[RegNet_X_1_6GF_Weights] = None, progress: bool = True, **kwargs) -> RegNet:
    params = BlockParams.from_init_params(depth=18, w_0=80, w_a=34.01, w_m=2.25, group_width=24, **kwargs)
    return _regnet(params, RegNet_X_1_6GF_Weights, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", RegNet_X_3_2GF_Weights.IMAGENET1K_V1))
def regnet_x_3_2gf(*, weights: Optional[RegNet_X_3_2GF_Weights] = None, progress: bool = True, **kwargs) -> RegNet:
    params = BlockParams.from_init_params(depth=25, w_0=88, w_a=26.31, w_m=2.25, group_width=48, **kwargs)
    return _regnet(params, RegNet_X_3_2GF_Weights, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", RegNet_X_8GF_Weights.IMAGENET1K_V1))
def regnet_x_8gf(*, weights: Optional[RegNet_X_8GF_Weights] = None, progress: bool = True, **kwargs) -> RegNet:
    params = BlockParams.from_init_params(depth=23, w_0=80, w_a=49.56, w_m=2.88, group_width=120, **kwargs)
    return _regnet(params, RegNet_X_8GF_Weights, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", RegNet_X_16GF_Weights.IMAGENET1K_V1))
def regnet_x_16gf(*, weights: Optional[RegNet_X_16GF_Weights] = None, progress: bool = True, **kwargs) -> RegNet:
    params = BlockParams.from_init_params(depth=22, w_0=216, w_a=55.59, w_m=2.1, group_width=128, **kwargs)
    return _regnet(params, RegNet_X_16GF_Weights, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", RegNet_X_32GF_Weights.IMAGENET1K_V1))
def regnet_x_32gf(*, weights: Optional[RegNet_X_32GF_Weights] = None, progress: bool = True, **kwargs) -> RegNet:
    params = BlockParams.from_init_params(depth=23, w_0=320, w_a=69.86, w_m=2.0, group_width=168, **kwargs)
    return _regnet(params, RegNet_X_32GF_Weights, weights, progress, kwargs)
