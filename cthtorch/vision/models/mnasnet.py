"""MNASNet (Tan et al. 2018) as torchvision builds it: depth multiplier alpha scales every stage width."""
import warnings
from typing import Optional

from cthtorch import nn
from cthtorch.vision.models import _weights
from cthtorch.vision.models._api import WeightsEnum, register_model
from cthtorch.vision.models._utils import handle_legacy_interface
from cthtorch.vision.models._weights import _PR, imagenet

__all__ = ["MNASNet", "MNASNet0_5_Weights", "MNASNet0_75_Weights", "MNASNet1_0_Weights", "MNASNet1_3_Weights",
           "mnasnet0_5", "mnasnet0_75", "mnasnet1_0", "mnasnet1_3"]

# TensorFlow's batch-norm momentum 0.9997, in PyTorch's convention
_BN_MOMENTUM = 1 - 0.9997


class _InvertedResidual(nn.Module):
    def __init__(self, in_ch, out_ch, kernel_size, stride, expansion_factor, bn_momentum=0.1):
        super().__init__()
        if stride not in (1, 2):
            raise ValueError("stride should be 1 or 2 instead of %s" % stride)
        if kernel_size not in (3, 5):
            raise ValueError("kernel_size should be 3 or 5 instead of %s" % kernel_size)
        mid_ch = in_ch * expansion_factor
        self.apply_residual = in_ch == out_ch and stride == 1
        self.layers = nn.Sequential(
            nn.Conv2d(in_ch, mid_ch, 1, bias=False),
            nn.BatchNorm2d(mid_ch, momentum=bn_momentum),
            nn.ReLU(inplace=True),
            nn.Conv2d(mid_ch, mid_ch, kernel_size, padding=kernel_size // 2, stride=stride, groups=mid_ch,
                      bias=False),
            nn.BatchNorm2d(mid_ch, momentum=bn_momentum),
            nn.ReLU(inplace=True),
            nn.Conv2d(mid_ch, out_ch, 1, bias=False),
            nn.BatchNorm2d(out_ch, momentum=bn_momentum),
        )

    def forward(self, input):
        return self.layers(input) + input if self.apply_residual else self.layers(input)


def _stack(in_ch, out_ch, kernel_size, stride, exp_factor, repeats, bn_momentum):
    """repeats inverted residuals, the first changing width and stride."""
    if repeats < 1:
        raise ValueError("repeats should be >= 1, instead got %s" % repeats)
    return nn.Sequential(_InvertedResidual(in_ch, out_ch, kernel_size, stride, exp_factor, bn_momentum=bn_momentum),
                         *[_InvertedResidual(out_ch, out_ch, kernel_size, 1, exp_factor, bn_momentum=bn_momentum)
                           for _ in range(1, repeats)])


def _round_to_multiple_of(val, divisor, round_up_bias=0.9):
    """The nearest multiple of divisor, rounded up when that loses more than (1 - round_up_bias)."""
    if not 0.0 < round_up_bias < 1.0:
        raise ValueError("round_up_bias should be greater than 0.0 and smaller than 1.0 instead of %s"
                         % round_up_bias)
    new_val = max(divisor, int(val + divisor / 2) // divisor * divisor)
    return new_val if new_val >= round_up_bias * val else new_val + divisor


def _get_depths(alpha):
    return [_round_to_multiple_of(depth * alpha, 8) for depth in (32, 16, 24, 40, 80, 96, 192, 320)]


def _stem(depths):
    return [
        nn.Conv2d(3, depths[0], 3, padding=1, stride=2, bias=False),
        nn.BatchNorm2d(depths[0], momentum=_BN_MOMENTUM),
        nn.ReLU(inplace=True),
        nn.Conv2d(depths[0], depths[0], 3, padding=1, stride=1, groups=depths[0], bias=False),
        nn.BatchNorm2d(depths[0], momentum=_BN_MOMENTUM),
        nn.ReLU(inplace=True),
        nn.Conv2d(depths[0], depths[1], 1, padding=0, stride=1, bias=False),
        nn.BatchNorm2d(depths[1], momentum=_BN_MOMENTUM),
        _stack(depths[1], depths[2], 3, 2, 3, 3, _BN_MOMENTUM),
    ]


class MNASNet(nn.Module):
    # version 2 scales the stem with alpha too; version 1 files (alpha != 1) get the fixed 32/16 stem back
    _version = 2

    def __init__(self, alpha, num_classes=1000, dropout=0.2):
        super().__init__()
        if alpha <= 0.0:
            raise ValueError("alpha should be greater than 0.0 instead of %s" % alpha)
        self.alpha = alpha
        self.num_classes = num_classes
        depths = _get_depths(alpha)
        layers = _stem(depths) + [
            _stack(depths[2], depths[3], 5, 2, 3, 3, _BN_MOMENTUM),
            _stack(depths[3], depths[4], 5, 2, 6, 3, _BN_MOMENTUM),
            _stack(depths[4], depths[5], 3, 1, 6, 2, _BN_MOMENTUM),
            _stack(depths[5], depths[6], 5, 2, 6, 4, _BN_MOMENTUM),
            _stack(depths[6], depths[7], 3, 1, 6, 1, _BN_MOMENTUM),
            nn.Conv2d(depths[7], 1280, 1, padding=0, stride=1, bias=False),
            nn.BatchNorm2d(1280, momentum=_BN_MOMENTUM),
            nn.ReLU(inplace=True),
        ]
        self.layers = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Dropout(p=dropout, inplace=True), nn.Linear(1280, num_classes))
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                nn.init.kaiming_uniform_(m.weight, mode="fan_out", nonlinearity="sigmoid")
                nn.init.zeros_(m.bias)

    def forward(self, x):
        return self.classifier(self.layers(x).mean([2, 3]))

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        version = local_metadata.get("version", None)
        if version not in (1, 2):
            raise ValueError("version should be set to 1 or 2 instead of %s" % version)
        if version == 1 and not self.alpha == 1.0:
            for idx, layer in enumerate(_stem([32, 16] + _get_depths(self.alpha)[2:])):
                self.layers[idx] = layer
            self._version = 1
            warnings.warn("A new version of MNASNet model has been implemented. Your checkpoint was saved using the "
                          "previous version. This checkpoint will load and work as before, but you may want to "
                          "upgrade by training a newer model or transfer learning from an updated ImageNet "
                          "checkpoint.", UserWarning)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)


def _mnasnet(alpha, enum, weights, progress, kwargs):
    return _weights.build(enum, weights, progress, lambda **kw: MNASNet(alpha, **kw), kwargs)


_TRAINER = "https://github.com/1e100/mnasnet_trainer"


class MNASNet0_5_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("mnasnet0.5_top1_67.823-3ffadce67e.pth", 2218512, (67.734, 87.49), 0.104, 8.591,
                             recipe=_TRAINER)
    DEFAULT = IMAGENET1K_V1


class MNASNet0_75_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("mnasnet0_75-7090bc5f.pth", 3170208, (71.18, 90.496), 0.215, 12.303, recipe=_PR + "6019",
                             resize=232)
    DEFAULT = IMAGENET1K_V1


class MNASNet1_0_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("mnasnet1.0_top1_73.512-f206786ef8.pth", 4383312, (73.456, 91.51), 0.314, 16.915,
                             recipe=_TRAINER)
    DEFAULT = IMAGENET1K_V1


class MNASNet1_3_Weights(WeightsEnum):
    IMAGENET1K_V1 = imagenet("mnasnet1_3-a4c69d6f.pth", 6282256, (76.506, 93.522), 0.526, 24.246, recipe=_PR + "6019",
                             resize=232)
    DEFAULT = IMAGENET1K_V1



@register_model()
@handle_legacy_interface(weights=("pretrained", MNASNet0_5_Weights.IMAGENET1K_V1))
def mnasnet0_5(*, weights: Optional[MNASNet0_5_Weights] = None, progress: bool = True, **kwargs) -> MNASNet:
    return _mnasnet(0.5, MNASNet0_5_Weights, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", MNASNet0_75_Weights.IMAGENET1K_V1))
def mnasnet0_75(*, weights: Optional[MNASNet0_75_Weights] = None, progress: bool = True, **kwargs) -> MNASNet:
    return _mnasnet(0.75, MNASNet0_75_Weights, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", MNASNet1_0_Weights.IMAGENET1K_V1))
def mnasnet1_0(*, weights: Optional[MNASNet1_0_Weights] = None, progress: bool = True, **kwargs) -> MNASNet:
    return _mnasnet(1.0, MNASNet1_0_Weights, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", MNASNet1_3_Weights.IMAGENET1K_V1))
def mnasnet1_3(*, weights: Optional[MNASNet1_3_Weights] = None, progress: bool = True, **kwargs) -> MNASNet:
    return _mnasnet(1.3, MNASNet1_3_Weights, weights, progress, kwargs)
