"""MobileNetV3 (Howard et al. 2019) as torchvision builds it: inverted residuals with optional squeeze-and-
excitation (hard-sigmoid gate) and hard-swish activations."""
from functools import partial
from typing import Optional

import cthtorch
from cthtorch import nn
from cthtorch.vision.models import _weights
from cthtorch.vision.models._api import WeightsEnum, register_model
from cthtorch.vision.models._utils import _make_divisible, handle_legacy_interface
from cthtorch.vision.models._weights import _NEW, _REF, imagenet
from cthtorch.vision.ops.misc import Conv2dNormActivation, SqueezeExcitation as SElayer

__all__ = ["MobileNetV3", "MobileNet_V3_Large_Weights", "MobileNet_V3_Small_Weights", "mobilenet_v3_large",
           "mobilenet_v3_small"]


class InvertedResidualConfig:
    """One block: kernel size, expansion and output widths (scaled by width_mult), SE on/off, activation
    "RE" (ReLU) or "HS" (hard-swish), stride and dilation."""

    def __init__(self, input_channels, kernel, expanded_channels, out_channels, use_se, activation, stride,
                 dilation, width_mult):
        self.input_channels = self.adjust_channels(input_channels, width_mult)
        self.kernel = kernel
        self.expanded_channels = self.adjust_channels(expanded_channels, width_mult)
        self.out_channels = self.adjust_channels(out_channels, width_mult)
        self.use_se = use_se
        self.use_hs = activation == "HS"
        self.stride = stride
        self.dilation = dilation

    @staticmethod
    def adjust_channels(channels, width_mult):
        return _make_divisible(channels * width_mult, 8)


class InvertedResidual(nn.Module):
    def __init__(self, cnf, norm_layer, se_layer=partial(SElayer, scale_activation=nn.Hardsigmoid)):
        super().__init__()
        if not 1 <= cnf.stride <= 2:
            raise ValueError("illegal stride value")
        self.use_res_connect = cnf.stride == 1 and cnf.input_channels == cnf.out_channels
        act = nn.Hardswish if cnf.use_hs else nn.ReLU
        layers = []
        if cnf.expanded_channels != cnf.input_channels:
            layers.append(Conv2dNormActivation(cnf.input_channels, cnf.expanded_channels, kernel_size=1,
                                               norm_layer=norm_layer, activation_layer=act))
        # a dilated block keeps the resolution (the segmentation backbones)
        layers.append(Conv2dNormActivation(cnf.expanded_channels, cnf.expanded_channels, kernel_size=cnf.kernel,
                                           stride=1 if cnf.dilation > 1 else cnf.stride, dilation=cnf.dilation,
                                           groups=cnf.expanded_channels, norm_layer=norm_layer,
                                           activation_layer=act))
        if cnf.use_se:
            layers.append(se_layer(cnf.expanded_channels, _make_divisible(cnf.expanded_channels // 4, 8)))
        layers.append(Conv2dNormActivation(cnf.expanded_channels, cnf.out_channels, kernel_size=1,
                                           norm_layer=norm_layer, activation_layer=None))
        self.block = nn.Sequential(*layers)
        self.out_channels = cnf.out_channels
        self._is_cn = cnf.stride > 1

    def forward(self, input):
        result = self.block(input)
        if self.use_res_connect:
            result += input
        return result


class MobileNetV3(nn.Module):
    def __init__(self, inverted_residual_setting, last_channel, num_classes=1000, block=None, norm_layer=None,
                 dropout=0.2, **kwargs):
        super().__init__()
        if not inverted_residual_setting:
            raise ValueError("The inverted_residual_setting should not be empty")
        if not (isinstance(inverted_residual_setting, (list, tuple))
                and all(isinstance(s, InvertedResidualConfig) for s in inverted_residual_setting)):
            raise TypeError("The inverted_residual_setting should be List[InvertedResidualConfig]")
        block = block or InvertedResidual
        norm_layer = norm_layer or partial(nn.BatchNorm2d, eps=0.001, momentum=0.01)
        first = inverted_residual_setting[0].input_channels
        layers = [Conv2dNormActivation(3, first, kernel_size=3, stride=2, norm_layer=norm_layer,
                                       activation_layer=nn.Hardswish)]
        layers += [block(cnf, norm_layer) for cnf in inverted_residual_setting]
        last_in = inverted_residual_setting[-1].out_channels
        last_out = 6 * last_in
        layers.append(Conv2dNormActivation(last_in, last_out, kernel_size=1, norm_layer=norm_layer,
                                           activation_layer=nn.Hardswish))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Linear(last_out, last_channel), nn.Hardswish(inplace=True),
                                        nn.Dropout(p=dropout, inplace=True), nn.Linear(last_channel, num_classes))
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out")
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, 0, 0.01)
                nn.init.zeros_(m.bias)

    def _forward_impl(self, x):
        x = self.avgpool(self.features(x))
        return self.classifier(cthtorch.flatten(x, 1))

    def forward(self, x):
        return self._forward_impl(x)


# (input, kernel, expanded, out, SE, activation, stride, tail) per block; "tail" blocks are the last stage,
# halved by reduced_tail and dilated by dilated
_LARGE = [(16, 3, 16, 16, False, "RE", 1, False), (16, 3, 64, 24, False, "RE", 2, False),
          (24, 3, 72, 24, False, "RE", 1, False), (24, 5, 72, 40, True, "RE", 2, False),
          (40, 5, 120, 40, True, "RE", 1, False), (40, 5, 120, 40, True, "RE", 1, False),
          (40, 3, 240, 80, False, "HS", 2, False), (80, 3, 200, 80, False, "HS", 1, False),
          (80, 3, 184, 80, False, "HS", 1, False), (80, 3, 184, 80, False, "HS", 1, False),
          (80, 3, 480, 112, True, "HS", 1, False), (112, 3, 672, 112, True, "HS", 1, False),
          (112, 5, 672, 160, True, "HS", 2, True), (160, 5, 960, 160, True, "HS", 1, True),
          (160, 5, 960, 160, True, "HS", 1, True)]
_SMALL = [(16, 3, 16, 16, True, "RE", 2, False), (16, 3, 72, 24, False, "RE", 2, False),
          (24, 3, 88, 24, False, "RE", 1, False), (24, 5, 96, 40, True, "HS", 2, False),
          (40, 5, 240, 40, True, "HS", 1, False), (40, 5, 240, 40, True, "HS", 1, False),
          (40, 5, 120, 48, True, "HS", 1, False), (48, 5, 144, 48, True, "HS", 1, False),
          (48, 5, 288, 96, True, "HS", 2, True), (96, 5, 576, 96, True, "HS", 1, True),
          (96, 5, 576, 96, True, "HS", 1, True)]


def _mobilenet_v3_conf(arch, width_mult=1.0, reduced_tail=False, dilated=False, **kwargs):
    """(block configs, last channel) of "mobilenet_v3_large" or "mobilenet_v3_small"."""
    if arch == "mobilenet_v3_large":
        table, last = _LARGE, 1280
    elif arch == "mobilenet_v3_small":
        table, last = _SMALL, 1024
    else:
        raise ValueError("Unsupported model type %s" % arch)
    div = 2 if reduced_tail else 1
    dilation = 2 if dilated else 1
    setting = []
    for i, (inp, k, exp, out, se, act, stride, tail) in enumerate(table):
        # the first tail block takes its input at full width: only its output and the blocks after shrink
        after_tail = i > 0 and table[i - 1][7]
        setting.append(InvertedResidualConfig(inp // div if after_tail else inp, k, exp // div if after_tail else exp,
                                              out // div if tail else out, se, act, stride,
                                              dilation if tail else 1, width_mult))
    return setting, InvertedResidualConfig.adjust_channels(last // div, width_mult)


def _mobilenet_v3(inverted_residual_setting, last_channel, enum, weights, progress, kwargs):
    return _weights.build(enum, weights, progress,
                          lambda **kw: MobileNetV3(inverted_residual_setting, last_channel, **kw), kwargs)


_REF_MNV3 = _REF + "#mobilenetv3-large--small"


class MobileNet_V3_Large_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("mobilenet_v3_large-8738ca79.pth", 5483032, (74.042, 91.34), 0.217, 21.114,
                             recipe=_REF_MNV3)
    IMAGENET1K_V2 = imagenet("mobilenet_v3_large-5c1a4163.pth", 5483032, (75.274, 92.566), 0.217, 21.107,
                             recipe=_NEW + "#new-recipe-with-reg-tuning", resize=232)
    DEFAULT = IMAGENET1K_V2


class MobileNet_V3_Small_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("mobilenet_v3_small-047dcff4.pth", 2542856, (67.668, 87.402), 0.057, 9.829,
                             recipe=_REF_MNV3)
    DEFAULT = IMAGENET1K_V1


@register_model()
@handle_legacy_interface(weights=("pretrained", MobileNet_V3_Large_Weights.IMAGENET1K_V1))
def mobilenet_v3_large(*, weights: Optional[MobileNet_V3_Large_Weights] = None, progress: bool = True,
                       **kwargs) -> MobileNetV3:
    setting, last_channel = _mobilenet_v3_conf("mobilenet_v3_large", **kwargs)
    return _mobilenet_v3(setting, last_channel, MobileNet_V3_Large_Weights, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", MobileNet_V3_Small_Weights.IMAGENET1K_V1))
def mobilenet_v3_small(*, weights: Optional[MobileNet_V3_Small_Weights] = None, progress: bool = True,
                       **kwargs) -> MobileNetV3:
    setting, last_channel = _mobilenet_v3_conf("mobilenet_v3_small", **kwargs)
    return _mobilenet_v3(setting, last_channel, MobileNet_V3_Small_Weights, weights, progress, kwargs)
