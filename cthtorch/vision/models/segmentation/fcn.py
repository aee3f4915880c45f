"""FCN (Long et al. 2015) on a dilated ResNet-50/101, as torchvision.models.segmentation.fcn."""
from typing import Optional

from cthtorch import nn
from cthtorch.vision.models import _weights
from cthtorch.vision.models._api import WeightsEnum, register_model
from cthtorch.vision.models._utils import IntermediateLayerGetter, handle_legacy_interface
from cthtorch.vision.models._weights import ResNet50_Weights, ResNet101_Weights
from cthtorch.vision.models.resnet import resnet50, resnet101
from cthtorch.vision.models.segmentation._utils import _SimpleSegmentationModel, _weights_and_classes, coco_voc

__all__ = ["FCN", "FCN_ResNet50_Weights", "FCN_ResNet101_Weights", "fcn_resnet50", "fcn_resnet101"]


class FCN_ResNet50_Weights(WeightsEnum):
    COCO_WITH_VOC_LABELS_V1 = coco_voc("fcn_resnet50_coco-1167a1af.pth", 35322218, 60.5, 91.4, 152.717, 135.009)
    DEFAULT = COCO_WITH_VOC_LABELS_V1


class FCN_ResNet101_Weights(WeightsEnum):
    COCO_WITH_VOC_LABELS_V1 = coco_voc("fcn_resnet101_coco-7ecb50ca.pth", 54314346, 63.7, 91.9, 232.738, 207.711)
    DEFAULT = COCO_WITH_VOC_LABELS_V1


class FCN(_SimpleSegmentationModel):
    """backbone -> FCNHead, upsampled to the input; an FCNHead on layer3 as the auxiliary classifier"""


class FCNHead(nn.Sequential):
    def __init__(self, in_channels, channels):
        inter_channels = in_channels // 4
        layers = [nn.Conv2d(in_channels, inter_channels, 3, padding=1, bias=False), nn.BatchNorm2d(inter_channels),
                  nn.ReLU(), nn.Dropout(0.1), nn.Conv2d(inter_channels, channels, 1)]
        super().__init__(*layers)


def _resnet_backbone(backbone, aux):
    return_layers = {"layer4": "out"}
    if aux:
        return_layers["layer3"] = "aux"
    return IntermediateLayerGetter(backbone, return_layers=return_layers)


def _resnet_model(model_cls, head, enum, resnet, backbone_enum, weights, weights_backbone, num_classes,
                  aux_loss, progress):
    """an FCN or DeepLabV3 on a ResNet dilated in its last two stages (output stride 8): head(2048 channels)
    on layer4, an FCNHead on layer3 with aux_loss"""
    weights = enum.verify(weights)
    weights_backbone = backbone_enum.verify(weights_backbone)
    num_classes, aux_loss, weights_backbone = _weights_and_classes(weights, num_classes, aux_loss,
                                                                   weights_backbone)
    backbone = resnet(weights=weights_backbone, replace_stride_with_dilation=[False, True, True])
    model = model_cls(_resnet_backbone(backbone, aux_loss), head(2048, num_classes),
                      FCNHead(1024, num_classes) if aux_loss else None)
    return _weights.load_into(model, weights, progress)


@register_model()
@handle_legacy_interface(weights=("pretrained", FCN_ResNet50_Weights.COCO_WITH_VOC_LABELS_V1),
                         weights_backbone=("pretrained_backbone", ResNet50_Weights.IMAGENET1K_V1))
def fcn_resnet50(*, weights: Optional[FCN_ResNet50_Weights] = None, progress: bool = True,
                 num_classes: Optional[int] = None, aux_loss: Optional[bool] = None,
                 weights_backbone: Optional[ResNet50_Weights] = ResNet50_Weights.IMAGENET1K_V1, **kwargs) -> FCN:
    return _resnet_model(FCN, FCNHead, FCN_ResNet50_Weights, resnet50, ResNet50_Weights,
                         weights, weights_backbone, num_classes, aux_loss, progress)


@register_model()
@handle_legacy_interface(weights=("pretrained", FCN_ResNet101_Weights.COCO_WITH_VOC_LABELS_V1),
                         weights_backbone=("pretrained_backbone", ResNet101_Weights.IMAGENET1K_V1))
def fcn_resnet101(*, weights: Optional[FCN_ResNet101_Weights] = None, progress: bool = True,
                  num_classes: Optional[int] = None, aux_loss: Optional[bool] = None,
                  weights_backbone: Optional[ResNet101_Weights] = ResNet101_Weights.IMAGENET1K_V1,
                  **kwargs) -> FCN:
    return _resnet_model(FCN, FCNHead, FCN_ResNet101_Weights, resnet101, ResNet101_Weights,
                         weights, weights_backbone, num_classes, aux_loss, progress)
