"""The model every torchvision segmentation net is: a backbone giving {"out", "aux"} features, a classifier
(and an optional auxiliary one) upsampled bilinearly to the input's size; and the COCO-with-VOC-labels
weights' metadata."""
from collections import OrderedDict
from functools import partial

from cthtorch import nn
from cthtorch.nn import functional as F
from cthtorch.vision.models._api import Weights
from cthtorch.vision.models._weights import _URL, SemanticSegmentation

_VOC_CATEGORIES = ["__background__", "aeroplane", "bicycle", "bird", "boat", "bottle", "bus", "car", "cat",
                   "chair", "cow", "diningtable", "dog", "horse", "motorbike", "person", "pottedplant", "sheep",
                   "sofa", "train", "tvmonitor"]
_RECIPE = "https://github.com/pytorch/vision/tree/main/references/segmentation"


def coco_voc(file_name, num_params, miou, pixel_acc, ops, file_size, recipe=_RECIPE):
    """a COCO_WITH_VOC_LABELS_V1 member, with torchvision's meta (metrics on COCO-val2017-VOC-labels)"""
    meta = {"num_params": num_params, "categories": _VOC_CATEGORIES, "min_size": (1, 1), "recipe": recipe,
            "_metrics": {"COCO-val2017-VOC-labels": {"miou": miou, "pixel_acc": pixel_acc}},
            "_ops": ops, "_file_size": file_size,
            "_docs": "These weights were trained on a subset of COCO, using only the 20 categories that are "
                     "present in the Pascal VOC dataset."}
    return Weights(_URL + file_name, partial(SemanticSegmentation, resize_size=520), meta)


class _SimpleSegmentationModel(nn.Module):
    __constants__ = ["aux_classifier"]

    def __init__(self, backbone, classifier, aux_classifier=None):
        super().__init__()
        self.backbone = backbone
        self.classifier = classifier
        self.aux_classifier = aux_classifier

    def forward(self, x):
        input_shape = x.shape[-2:]
        features = self.backbone(x)
        result = OrderedDict()
        x = self.classifier(features["out"])
        result["out"] = F.interpolate(x, size=input_shape, mode="bilinear", align_corners=False)
        if self.aux_classifier is not None:
            x = self.aux_classifier(features["aux"])
            result["aux"] = F.interpolate(x, size=input_shape, mode="bilinear", align_corners=False)
        return result


def _weights_and_classes(weights, num_classes, aux_loss, weights_backbone):
    """(num_classes, aux_loss, weights_backbone) as torchvision settles them: trained weights fix the 21 VOC
    classes and the auxiliary head and drop the backbone's own weights; 21 classes by default"""
    from cthtorch.vision.models._utils import _ovewrite_value_param
    if weights is not None:
        num_classes = _ovewrite_value_param("num_classes", num_classes, len(weights.meta["categories"]))
        aux_loss = _ovewrite_value_param("aux_loss", aux_loss, True)
        weights_backbone = None
    elif num_classes is None:
        num_classes = 21
    return num_classes, aux_loss, weights_backbone


def _stage_indices(features):
    """the indices of a MobileNetV3 feature stack's strided blocks (C1..Cn-1), with the first and last"""
    return [0] + [i for i, b in enumerate(features) if getattr(b, "_is_cn", False)] + [len(features) - 1]
