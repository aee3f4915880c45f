"""DeepLabV3 (Chen et al. 2017): atrous spatial pyramid pooling on a dilated ResNet-50/101 or MobileNetV3,
as torchvision.models.segmentation.deeplabv3."""
from typing import Optional

import cthtorch
from cthtorch import nn
from cthtorch.nn import functional as F
from cthtorch.vision.models import _weights
from cthtorch.vision.models._api import WeightsEnum, register_model
from cthtorch.vision.models._utils import IntermediateLayerGetter, handle_legacy_interface
from cthtorch.vision.models._weights import ResNet50_Weights, ResNet101_Weights
from cthtorch.vision.models.mobilenetv3 import MobileNet_V3_Large_Weights, mobilenet_v3_large
from cthtorch.vision.models.resnet import resnet50, resnet101
from cthtorch.vision.models.segmentation._utils import (_SimpleSegmentationModel, _stage_indices,
                                                        _weights_and_classes, coco_voc)
from cthtorch.vision.models.segmentation.fcn import FCNHead, _resnet_model

__all__ = ["DeepLabV3", "DeepLabV3_ResNet50_Weights", "DeepLabV3_ResNet101_Weights",
           "DeepLabV3_MobileNet_V3_Large_Weights", "deeplabv3_mobilenet_v3_large", "deeplabv3_resnet50",
           "deeplabv3_resnet101"]


class DeepLabV3_ResNet50_Weights(WeightsEnum):
    COCO_WITH_VOC_LABELS_V1 = coco_voc("deeplabv3_resnet50_coco-cd0a2569.pth", 42004074, 66.4, 92.4, 178.722,
                                       160.515)
    DEFAULT = COCO_WITH_VOC_LABELS_V1


class DeepLabV3_ResNet101_Weights(WeightsEnum):
    COCO_WITH_VOC_LABELS_V1 = coco_voc("deeplabv3_resnet101_coco-586e9e4e.pth", 60996202, 67.4, 92.4, 258.743,
                                       233.217)
    DEFAULT = COCO_WITH_VOC_LABELS_V1


class DeepLabV3_MobileNet_V3_Large_Weights(WeightsEnum):
    COCO_WITH_VOC_LABELS_V1 = coco_voc("deeplabv3_mobilenet_v3_large-fc3c493d.pth", 11029328, 60.3, 91.2, 10.452,
                                       42.301)
    DEFAULT = COCO_WITH_VOC_LABELS_V1


class DeepLabV3(_SimpleSegmentationModel):
    """backbone -> DeepLabHead, upsampled to the input; an FCNHead as the auxiliary classifier"""


class DeepLabHead(nn.Sequential):
    def __init__(self, in_channels, num_classes, atrous_rates=(12, 24, 36)):
        super().__init__(ASPP(in_channels, atrous_rates), nn.Conv2d(256, 256, 3, padding=1, bias=False),
                         nn.BatchNorm2d(256), nn.ReLU(), nn.Conv2d(256, num_classes, 1))


class ASPPConv(nn.Sequential):
    def __init__(self, in_channels, out_channels, dilation):
        super().__init__(nn.Conv2d(in_channels, out_channels, 3, padding=dilation, dilation=dilation, bias=False),
                         nn.BatchNorm2d(out_channels), nn.ReLU())


class ASPPPooling(nn.Sequential):
    def __init__(self, in_channels, out_channels):
        super().__init__(nn.AdaptiveAvgPool2d(1), nn.Conv2d(in_channels, out_channels, 1, bias=False),
                         nn.BatchNorm2d(out_channels), nn.ReLU())

    def forward(self, x):
        size = x.shape[-2:]
        for mod in self:
            x = mod(x)
        return F.interpolate(x, size=size, mode="bilinear", align_corners=False)


class ASPP(nn.Module):
    def __init__(self, in_channels, atrous_rates, out_channels=256):
        super().__init__()
        modules = [nn.Sequential(nn.Conv2d(in_channels, out_channels, 1, bias=False), nn.BatchNorm2d(out_channels),
                                 nn.ReLU())]
        for rate in tuple(atrous_rates):
            modules.append(ASPPConv(in_channels, out_channels, rate))
        modules.append(ASPPPooling(in_channels, out_channels))
        self.convs = nn.ModuleList(modules)
        self.project = nn.Sequential(nn.Conv2d(len(self.convs) * out_channels, out_channels, 1, bias=False),
                                     nn.BatchNorm2d(out_channels), nn.ReLU(), nn.Dropout(0.5))

    def forward(self, x):
        return self.project(cthtorch.cat([conv(x) for conv in self.convs], dim=1))


@register_model()
@handle_legacy_interface(weights=("pretrained", DeepLabV3_ResNet50_Weights.COCO_WITH_VOC_LABELS_V1),
                         weights_backbone=("pretrained_backbone", ResNet50_Weights.IMAGENET1K_V1))
def deeplabv3_resnet50(*, weights: Optional[DeepLabV3_ResNet50_Weights] = None, progress: bool = True,
                       num_classes: Optional[int] = None, aux_loss: Optional[bool] = None,
                       weights_backbone: Optional[ResNet50_Weights] = ResNet50_Weights.IMAGENET1K_V1,
                       **kwargs) -> DeepLabV3:
    return _resnet_model(DeepLabV3, DeepLabHead, DeepLabV3_ResNet50_Weights, resnet50, ResNet50_Weights,
                         weights, weights_backbone, num_classes, aux_loss, progress)


@register_model()
@handle_legacy_interface(weights=("pretrained", DeepLabV3_ResNet101_Weights.COCO_WITH_VOC_LABELS_V1),
                         weights_backbone=("pretrained_backbone", ResNet101_Weights.IMAGENET1K_V1))
def deeplabv3_resnet101(*, weights: Optional[DeepLabV3_ResNet101_Weights] = None, progress: bool = True,
                        num_classes: Optional[int] = None, aux_loss: Optional[bool] = None,
                        weights_backbone: Optional[ResNet101_Weights] = ResNet101_Weights.IMAGENET1K_V1,
                        **kwargs) -> DeepLabV3:
    return _resnet_model(DeepLabV3, DeepLabHead, DeepLabV3_ResNet101_Weights, resnet101, ResNet101_Weights,
                         weights, weights_backbone, num_classes, aux_loss, progress)


@register_model()
@handle_legacy_interface(weights=("pretrained", DeepLabV3_MobileNet_V3_Large_Weights.COCO_WITH_VOC_LABELS_V1),
                         weights_backbone=("pretrained_backbone", MobileNet_V3_Large_Weights.IMAGENET1K_V1))
def deeplabv3_mobilenet_v3_large(*, weights: Optional[DeepLabV3_MobileNet_V3_Large_Weights] = None,
                                 progress: bool = True, num_classes: Optional[int] = None,
                                 aux_loss: Optional[bool] = None,
                                 weights_backbone: Optional[MobileNet_V3_Large_Weights] = (
                                     MobileNet_V3_Large_Weights.IMAGENET1K_V1),
                                 **kwargs) -> DeepLabV3:
    weights = DeepLabV3_MobileNet_V3_Large_Weights.verify(weights)
    weights_backbone = MobileNet_V3_Large_Weights.verify(weights_backbone)
    num_classes, aux_loss, weights_backbone = _weights_and_classes(weights, num_classes, aux_loss,
                                                                   weights_backbone)
    features = mobilenet_v3_large(weights=weights_backbone, dilated=True).features
    stages = _stage_indices(features)
    out_pos, aux_pos = stages[-1], stages[-4]   # C5 (output stride 16) and C2 (output stride 8)
    return_layers = {str(out_pos): "out"}
    if aux_loss:
        return_layers[str(aux_pos)] = "aux"
    model = DeepLabV3(IntermediateLayerGetter(features, return_layers=return_layers),
                      DeepLabHead(features[out_pos].out_channels, num_classes),
                      FCNHead(features[aux_pos].out_channels, num_classes) if aux_loss else None)
    return _weights.load_into(model, weights, progress)
