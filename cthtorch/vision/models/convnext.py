"""ConvNeXt (Liu et al. 2022) as torchvision builds it: depthwise 7x7 blocks with channels-last LayerNorm, an
inverted MLP, layer scale and stochastic depth; LayerNorm2d downsamplers between stages."""
from functools import partial
from typing import Optional

import cthtorch
from cthtorch import nn
from cthtorch.nn import functional as F
from cthtorch.vision.models import _weights
from cthtorch.vision.models._api import WeightsEnum, register_model
from cthtorch.vision.models._utils import handle_legacy_interface
from cthtorch.vision.models._weights import _REF, imagenet
from cthtorch.vision.ops.misc import Conv2dNormActivation, Permute
from cthtorch.vision.ops.stochastic_depth import StochasticDepth

__all__ = ["ConvNeXt", "ConvNeXt_Tiny_Weights", "ConvNeXt_Small_Weights", "ConvNeXt_Base_Weights",
           "ConvNeXt_Large_Weights", "convnext_tiny", "convnext_small", "convnext_base", "convnext_large"]


class LayerNorm2d(nn.LayerNorm):
    """LayerNorm over the channels of an NCHW tensor."""

    def forward(self, x):
        x = F.layer_norm(x.permute(0, 2, 3, 1), self.normalized_shape, self.weight, self.bias, self.eps)
        return x.permute(0, 3, 1, 2)


class CNBlock(nn.Module):
    def __init__(self, dim, layer_scale, stochastic_depth_prob, norm_layer=None):
        super().__init__()
        norm_layer = norm_layer or partial(nn.LayerNorm, eps=1e-6)
        self.block = nn.Sequential(
            nn.Conv2d(dim, dim, kernel_size=7, padding=3, groups=dim, bias=True),
            Permute([0, 2, 3, 1]),  # the norm and MLP run channels-last
            norm_layer(dim),
            nn.Linear(in_features=dim, out_features=4 * dim, bias=True),
            nn.GELU(),
            nn.Linear(in_features=4 * dim, out_features=dim, bias=True),
            Permute([0, 3, 1, 2]),
        )
        self.layer_scale = nn.Parameter(cthtorch.ones(dim, 1, 1) * layer_scale)
        self.stochastic_depth = StochasticDepth(stochastic_depth_prob, "row")

    def forward(self, input):
        result = self.stochastic_depth(self.layer_scale * self.block(input))
        result += input
        return result


class CNBlockConfig:
    """A stage: its width, the width its downsampler leads to (None for the last stage), its block count."""

    def __init__(self, input_channels, out_channels, num_layers):
        self.input_channels, self.out_channels, self.num_layers = input_channels, out_channels, num_layers

    def __repr__(self):
        return "%s(input_channels=%s, out_channels=%s, num_layers=%s)" % (
            type(self).__name__, self.input_channels, self.out_channels, self.num_layers)


class ConvNeXt(nn.Module):
    def __init__(self, block_setting, stochastic_depth_prob=0.0, layer_scale=1e-6, num_classes=1000, block=None,
                 norm_layer=None, **kwargs):
        super().__init__()
        if not block_setting:
            raise ValueError("The block_setting should not be empty")
        if not (isinstance(block_setting, (list, tuple)) and all(isinstance(s, CNBlockConfig) for s in block_setting)):
            raise TypeError("The block_setting should be List[CNBlockConfig]")
        block = block or CNBlock
        norm_layer = norm_layer or partial(LayerNorm2d, eps=1e-6)
        layers = [Conv2dNormActivation(3, block_setting[0].input_channels, kernel_size=4, stride=4, padding=0,
                                       norm_layer=norm_layer, activation_layer=None, bias=True)]  # patchify stem
        total_blocks = sum(cnf.num_layers for cnf in block_setting)
        block_id = 0
        for cnf in block_setting:
            stage = []
            for _ in range(cnf.num_layers):
                stage.append(block(cnf.input_channels, layer_scale,
                                   stochastic_depth_prob * block_id / (total_blocks - 1.0)))
                block_id += 1
            layers.append(nn.Sequential(*stage))
            if cnf.out_channels is not None:
                layers.append(nn.Sequential(norm_layer(cnf.input_channels),
                                            nn.Conv2d(cnf.input_channels, cnf.out_channels, kernel_size=2, stride=2)))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        last = block_setting[-1]
        width = last.out_channels if last.out_channels is not None else last.input_channels
        self.classifier = nn.Sequential(norm_layer(width), nn.Flatten(1), nn.Linear(width, num_classes))
        for m in self.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                nn.init.trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def _forward_impl(self, x):
        return self.classifier(self.avgpool(self.features(x)))

    def forward(self, x):
        return self._forward_impl(x)


def _convnext(widths, depths, stochastic_depth_prob, enum, weights, progress, kwargs):
    setting = [CNBlockConfig(w, nxt, d) for w, nxt, d in zip(widths, widths[1:] + [None], depths)]
    sd = kwargs.pop("stochastic_depth_prob", stochastic_depth_prob)
    return _weights.build(enum, weights, progress,
                          lambda **kw: ConvNeXt(setting, stochastic_depth_prob=sd, **kw), kwargs)


_RECIPE = _REF + "#convnext"


class ConvNeXt_Tiny_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("convnext_tiny-983f1562.pth", 28589128, (82.52, 96.146), 4.456, 109.119,
                             recipe=_RECIPE, resize=236, min_size=(32, 32))
    DEFAULT = IMAGENET1K_V1


class ConvNeXt_Small_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("convnext_small-0c510722.pth", 50223688, (83.616, 96.65), 8.684, 191.703,
                             recipe=_RECIPE, resize=230, min_size=(32, 32))
    DEFAULT = IMAGENET1K_V1


class ConvNeXt_Base_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("convnext_base-6075fbad.pth", 88591464, (84.062, 96.87), 15.355, 338.064,
                             recipe=_RECIPE, resize=232, min_size=(32, 32))
    DEFAULT = IMAGENET1K_V1


class ConvNeXt_Large_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("convnext_large-ea097f82.pth", 197767336, (84.414, 96.976), 34.361, 754.537,
                             recipe=_RECIPE, resize=232, min_size=(32, 32))
    DEFAULT = IMAGENET1K_V1



@register_model()
@handle_legacy_interface(weights=("pretrained", ConvNeXt_Tiny_Weights.IMAGENET1K_V1))
def convnext_tiny(*, weights: Optional[ConvNeXt_Tiny_Weights] = None, progress: bool = True, **kwargs) -> ConvNeXt:
    return _convnext([96, 192, 384, 768], [3, 3, 9, 3], 0.1, ConvNeXt_Tiny_Weights, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", ConvNeXt_Small_Weights.IMAGENET1K_V1))
def convnext_small(*, weights: Optional[ConvNeXt_Small_Weights] = None, progress: bool = True, **kwargs) -> ConvNeXt:
    return _convnext([96, 192, 384, 768], [3, 3, 27, 3], 0.4, ConvNeXt_Small_Weights, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", ConvNeXt_Base_Weights.IMAGENET1K_V1))
def convnext_base(*, weights: Optional[ConvNeXt_Base_Weights] = None, progress: bool = True, **kwargs) -> ConvNeXt:
    return _convnext([128, 256, 512, 1024], [3, 3, 27, 3], 0.5, ConvNeXt_Base_Weights, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", ConvNeXt_Large_Weights.IMAGENET1K_V1))
def convnext_large(*, weights: Optional[ConvNeXt_Large_Weights] = None, progress: bool = True, **kwargs) -> ConvNeXt:
    return _convnext([192, 384, 768, 1536], [3, 3, 27, 3], 0.5, ConvNeXt_Large_Weights, weights, progress, kwargs)
