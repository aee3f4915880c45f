"""ShuffleNetV2 (Ma et al. 2018) as torchvision builds it: units that split the channels, transform one half,
concatenate and shuffle the two groups."""
from typing import Optional

import cthtorch
from cthtorch import nn
from cthtorch.vision.models import _weights
from cthtorch.vision.models._api import WeightsEnum, register_model
from cthtorch.vision.models._utils import handle_legacy_interface
from cthtorch.vision.models._weights import _PR, imagenet

__all__ = ["ShuffleNetV2", "ShuffleNet_V2_X0_5_Weights", "ShuffleNet_V2_X1_0_Weights", "ShuffleNet_V2_X1_5_Weights",
           "ShuffleNet_V2_X2_0_Weights", "shufflenet_v2_x0_5", "shufflenet_v2_x1_0", "shufflenet_v2_x1_5",
           "shufflenet_v2_x2_0"]


def channel_shuffle(x, groups):
    """Interleave the channels of `groups` equal groups: (g, c/g) -> (c/g, g)."""
    n, c, h, w = x.size()
    x = cthtorch.transpose(x.view(n, groups, c // groups, h, w), 1, 2).contiguous()
    return x.view(n, c, h, w)


class InvertedResidual(nn.Module):
    def __init__(self, inp, oup, stride):
        super().__init__()
        if not 1 <= stride <= 3:
            raise ValueError("illegal stride value")
        self.stride = stride
        branch_features = oup // 2
        if stride == 1 and inp != branch_features << 1:
            raise ValueError("Invalid combination of stride %s, inp %s and oup %s values. If stride == 1 then inp "
                             "should be equal to oup // 2 << 1." % (stride, inp, oup))
        if stride > 1:  # a downsampling unit transforms both halves
            self.branch1 = nn.Sequential(
                self.depthwise_conv(inp, inp, kernel_size=3, stride=stride, padding=1),
                nn.BatchNorm2d(inp),
                nn.Conv2d(inp, branch_features, kernel_size=1, stride=1, padding=0, bias=False),
                nn.BatchNorm2d(branch_features),
                nn.ReLU(inplace=True),
            )
        else:
            self.branch1 = nn.Sequential()
        self.branch2 = nn.Sequential(
            nn.Conv2d(inp if stride > 1 else branch_features, branch_features, kernel_size=1, stride=1, padding=0,
                      bias=False),
            nn.BatchNorm2d(branch_features),
            nn.ReLU(inplace=True),
            self.depthwise_conv(branch_features, branch_features, kernel_size=3, stride=stride, padding=1),
            nn.BatchNorm2d(branch_features),
            nn.Conv2d(branch_features, branch_features, kernel_size=1, stride=1, padding=0, bias=False),
            nn.BatchNorm2d(branch_features),
            nn.ReLU(inplace=True),
        )

    @staticmethod
    def depthwise_conv(i, o, kernel_size, stride=1, padding=0, bias=False):
        return nn.Conv2d(i, o, kernel_size, stride, padding, bias=bias, groups=i)

    def forward(self, x):
        if self.stride == 1:
            x1, x2 = x.chunk(2, dim=1)
            out = cthtorch.cat((x1, self.branch2(x2)), dim=1)
        else:
            out = cthtorch.cat((self.branch1(x), self.branch2(x)), dim=1)
        return channel_shuffle(out, 2)


class ShuffleNetV2(nn.Module):
    def __init__(self, stages_repeats, stages_out_channels, num_classes=1000, inverted_residual=InvertedResidual):
        super().__init__()
        if len(stages_repeats) != 3:
            raise ValueError("expected stages_repeats as list of 3 positive ints")
        if len(stages_out_channels) != 5:
            raise ValueError("expected stages_out_channels as list of 5 positive ints")
        self._stage_out_channels = stages_out_channels
        width = stages_out_channels[0]
        self.conv1 = nn.Sequential(nn.Conv2d(3, width, 3, 2, 1, bias=False), nn.BatchNorm2d(width),
                                   nn.ReLU(inplace=True))
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        for name, repeats, out in zip(("stage2", "stage3", "stage4"), stages_repeats, stages_out_channels[1:]):
            units = [inverted_residual(width, out, 2)] + [inverted_residual(out, out, 1) for _ in range(repeats - 1)]
            setattr(self, name, nn.Sequential(*units))
            width = out
        out = stages_out_channels[-1]
        self.conv5 = nn.Sequential(nn.Conv2d(width, out, 1, 1, 0, bias=False), nn.BatchNorm2d(out),
                                   nn.ReLU(inplace=True))
        self.fc = nn.Linear(out, num_classes)

    def _forward_impl(self, x):
        x = self.maxpool(self.conv1(x))
        x = self.conv5(self.stage4(self.stage3(self.stage2(x))))
        return self.fc(x.mean([2, 3]))  # global average pool

    def forward(self, x):
        return self._forward_impl(x)


def _shufflenetv2(enum, weights, progress, repeats, channels, kwargs):
    return _weights.build(enum, weights, progress, lambda **kw: ShuffleNetV2(repeats, channels, **kw), kwargs)


_ORIGINAL = "https://github.com/ericsun99/Shufflenet-v2-Pytorch"


class ShuffleNet_V2_X0_5_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("shufflenetv2_x0.5-f707e7126e.pth", 1366792, (60.552, 81.746), 0.04, 5.282,
                             recipe=_ORIGINAL)
    DEFAULT = IMAGENET1K_V1


class ShuffleNet_V2_X1_0_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("shufflenetv2_x1-5666bf0f80.pth", 2278604, (69.362, 88.316), 0.145, 8.791,
                             recipe=_ORIGINAL)
    DEFAULT = IMAGENET1K_V1


class ShuffleNet_V2_X1_5_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("shufflenetv2_x1_5-3c479a10.pth", 3503624, (72.996, 91.086), 0.296, 13.557,
                             recipe=_PR + "5906", resize=232)
    DEFAULT = IMAGENET1K_V1


class ShuffleNet_V2_X2_0_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("shufflenetv2_x2_0-8be3c8ee.pth", 7393996, (76.23, 93.006), 0.583, 28.433,
                             recipe=_PR + "5906", resize=232)
    DEFAULT = IMAGENET1K_V1



@register_model()
@handle_legacy_interface(weights=("pretrained", ShuffleNet_V2_X0_5_Weights.IMAGENET1K_V1))
def shufflenet_v2_x0_5(*, weights: Optional[ShuffleNet_V2_X0_5_Weights] = None, progress: bool = True,
                       **kwargs) -> ShuffleNetV2:
    return _shufflenetv2(ShuffleNet_V2_X0_5_Weights, weights, progress, [4, 8, 4], [24, 48, 96, 192, 1024], kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", ShuffleNet_V2_X1_0_Weights.IMAGENET1K_V1))
def shufflenet_v2_x1_0(*, weights: Optional[ShuffleNet_V2_X1_0_Weights] = None, progress: bool = True,
                       **kwargs) -> ShuffleNetV2:
    return _shufflenetv2(ShuffleNet_V2_X1_0_Weights, weights, progress, [4, 8, 4], [24, 116, 232, 464, 1024], kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", ShuffleNet_V2_X1_5_Weights.IMAGENET1K_V1))
def shufflenet_v2_x1_5(*, weights: Optional[ShuffleNet_V2_X1_5_Weights] = None, progress: bool = True,
                       **kwargs) -> ShuffleNetV2:
    return _shufflenetv2(ShuffleNet_V2_X1_5_Weights, weights, progress, [4, 8, 4], [24, 176, 352, 704, 1024], kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", ShuffleNet_V2_X2_0_Weights.IMAGENET1K_V1))
def shufflenet_v2_x2_0(*, weights: Optional[ShuffleNet_V2_X2_0_Weights] = None, progress: bool = True,
                       **kwargs) -> ShuffleNetV2:
    return _shufflenetv2(ShuffleNet_V2_X2_0_Weights, weights, progress, [4, 8, 4], [24, 244, 488, 976, 2048], kwargs)
