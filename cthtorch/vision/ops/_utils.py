"""torchvision.ops._utils: parameter grouping used by the reference training scripts, and the box-list
checks and conversion of the RoI ops."""
import cthtorch
from cthtorch import nn
from cthtorch.nn.modules.utils import _pair


def split_normalization_params(model, norm_classes=None):
    """Two lists, (normalization layers' parameters, all others), so that the norm group can get its own
    weight decay. A module with children contributes only its own direct parameters to the second list."""
    if not norm_classes:
        norm_classes = [nn.modules.batchnorm._BatchNorm, nn.LayerNorm, nn.GroupNorm,
                        nn.modules.instancenorm._InstanceNorm, nn.LocalResponseNorm]
    for t in norm_classes:
        if not issubclass(t, nn.Module):
            raise ValueError("Class %s is not a subclass of nn.Module." % t)
    classes = tuple(norm_classes)
    norm_params, other_params = [], []
    for module in model.modules():
        if next(module.children(), None):
            other_params.extend(p for p in module.parameters(recurse=False) if p.requires_grad)
        elif isinstance(module, classes):
            norm_params.extend(p for p in module.parameters() if p.requires_grad)
        else:
            other_params.extend(p for p in module.parameters() if p.requires_grad)
    return norm_params, other_params


def _cat(tensors, dim=0):
    # one tensor is returned as it is, sparing a copy
    if len(tensors) == 1:
        return tensors[0]
    return cthtorch.cat(tensors, dim)


def convert_boxes_to_roi_format(boxes):
    """a list of per-image [L, 4] boxes as one [K, 5] tensor whose first column is the image's index"""
    concat_boxes = _cat([b for b in boxes], dim=0)
    ids = _cat([cthtorch.full_like(b[:, :1], i) for i, b in enumerate(boxes)], dim=0)
    return cthtorch.cat([ids, concat_boxes], dim=1)


def check_roi_boxes_shape(boxes):
    if isinstance(boxes, (list, tuple)):
        for _tensor in boxes:
            cthtorch._assert(_tensor.size(1) == 4,
                             "The shape of the tensor in the boxes list is not correct as List[Tensor[L, 4]]")
    elif isinstance(boxes, cthtorch.Tensor):
        cthtorch._assert(boxes.size(1) == 5, "The boxes tensor shape is not correct as Tensor[K, 5]")
    else:
        cthtorch._assert(False, "boxes is expected to be a Tensor[L, 5] or a List[Tensor[K, 4]]")


def roi_input(boxes, output_size):
    """the checked boxes as a [K, 5] rois tensor, and output_size as (height, width): the RoI ops' common start"""
    check_roi_boxes_shape(boxes)
    rois = boxes if isinstance(boxes, cthtorch.Tensor) else convert_boxes_to_roi_format(boxes)
    return rois, _pair(output_size)
