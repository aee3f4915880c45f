"""Lite R-ASPP (Howard et al. 2019, the MobileNetV3 paper) on a dilated MobileNetV3-Large, as
torchvision.models.segmentation.lraspp."""
from collections import OrderedDict
from typing import Optional

from cthtorch import nn
from cthtorch.nn import functional as F
from cthtorch.vision.models import _weights
from cthtorch.vision.models._api import WeightsEnum, register_model
from cthtorch.vision.models._utils import IntermediateLayerGetter, handle_legacy_interface
from cthtorch.vision.models.mobilenetv3 import MobileNet_V3_Large_Weights, mobilenet_v3_large
from cthtorch.vision.models.segmentation._utils import _stage_indices, _weights_and_classes, coco_voc

__all__ = ["LRASPP", "LRASPP_MobileNet_V3_Large_Weights", "lraspp_mobilenet_v3_large"]


class LRASPP_MobileNet_V3_Large_Weights(WeightsEnum):
    COCO_WITH_VOC_LABELS_V1 = coco_voc("lraspp_mobilenet_v3_large-d234d4ea.pth", 3221538, 57.9, 91.2, 2.086,
                                       12.49, recipe="https://github.com/pytorch/vision/tree/main/references/"
                                                     "segmentation#lraspp_mobilenet_v3_large")
    DEFAULT = COCO_WITH_VOC_LABELS_V1


class LRASPP(nn.Module):
    """backbone {"low", "high"} -> LRASPPHead, upsampled to the input; returns {"out"} only"""

    def __init__(self, backbone, low_channels, high_channels, num_classes, inter_channels=128):
        super().__init__()
        self.backbone = backbone
        self.classifier = LRASPPHead(low_channels, high_channels, num_classes, inter_channels)

    def forward(self, input):
        features = self.backbone(input)
        out = self.classifier(features)
        out = F.interpolate(out, size=input.shape[-2:], mode="bilinear", align_corners=False)
        result = OrderedDict()
        result["out"] = out
        return result


class LRASPPHead(nn.Module):
    def __init__(self, low_channels, high_channels, num_classes, inter_channels):
        super().__init__()
        self.cbr = nn.Sequential(nn.Conv2d(high_channels, inter_channels, 1, bias=False),
                                 nn.BatchNorm2d(inter_channels), nn.ReLU(inplace=True))
        self.scale = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(high_channels, inter_channels, 1, bias=False),
                                   nn.Sigmoid())
        self.low_classifier = nn.Conv2d(low_channels, num_classes, 1)
        self.high_classifier = nn.Conv2d(inter_channels, num_classes, 1)

    def forward(self, input):
        low, high = input["low"], input["high"]
        x = self.cbr(high)
        x = x * self.scale(high)
        x = F.interpolate(x, size=low.shape[-2:], mode="bilinear", align_corners=False)
        return self.low_classifier(low) + self.high_classifier(x)


@register_model()
@handle_legacy_interface(weights=("pretrained", LRASPP_MobileNet_V3_Large_Weights.COCO_WITH_VOC_LABELS_V1),
                         weights_backbone=("pretrained_backbone", MobileNet_V3_Large_Weights.IMAGENET1K_V1))
def lraspp_mobilenet_v3_large(*, weights: Optional[LRASPP_MobileNet_V3_Large_Weights] = None,
                              progress: bool = True, num_classes: Optional[int] = None,
                              weights_backbone: Optional[MobileNet_V3_Large_Weights] = (
                                  MobileNet_V3_Large_Weights.IMAGENET1K_V1),
                              **kwargs) -> LRASPP:
    if kwargs.pop("aux_loss", False):
        raise NotImplementedError("This model does not use auxiliary loss")
    weights = LRASPP_MobileNet_V3_Large_Weights.verify(weights)
    weights_backbone = MobileNet_V3_Large_Weights.verify(weights_backbone)
    num_classes, _, weights_backbone = _weights_and_classes(weights, num_classes, None, weights_backbone)
    features = mobilenet_v3_large(weights=weights_backbone, dilated=True).features
    stages = _stage_indices(features)
    low_pos, high_pos = stages[-4], stages[-1]   # C2 (output stride 8) and C5 (output stride 16)
    backbone = IntermediateLayerGetter(features, return_layers={str(low_pos): "low", str(high_pos): "high"})
    model = LRASPP(backbone, features[low_pos].out_channels, features[high_pos].out_channels, num_classes)
    return _weights.load_into(model, weights, progress)
