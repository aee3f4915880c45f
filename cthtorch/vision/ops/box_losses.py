"""torchvision.ops' box regression and detection losses over matched pairs of (x1, y1, x2, y2) boxes
(generalized_box_iou_loss, distance_box_iou_loss, complete_box_iou_loss) and sigmoid_focal_loss
(RetinaNet). torchvision keeps them in giou_loss.py, diou_loss.py, ciou_loss.py and focal_loss.py; those
module paths are aliases of this file (cthtorch/vision/ops/__init__.py)."""
import cthtorch
from cthtorch.nn import functional as F


def _upcast_non_float(t):
    # the loss is computed in float: integer and half boxes are widened
    return t if t.dtype in (cthtorch.float32, cthtorch.float64) else t.float()


def _reduce(loss, reduction):
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean() if loss.numel() > 0 else 0.0 * loss.sum()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(f"Invalid Value for arg 'reduction': '{reduction} \n Supported reduction modes: 'none', 'mean', 'sum'")


def _loss_inter_union(boxes1, boxes2):
    x1, y1, x2, y2 = boxes1.unbind(dim=-1)
    x1g, y1g, x2g, y2g = boxes2.unbind(dim=-1)
    xkis1, ykis1 = cthtorch.max(x1, x1g), cthtorch.max(y1, y1g)
    xkis2, ykis2 = cthtorch.min(x2, x2g), cthtorch.min(y2, y2g)
    intsctk = cthtorch.zeros_like(x1)
    mask = (ykis2 > ykis1) & (xkis2 > xkis1)
    intsctk[mask] = (xkis2[mask] - xkis1[mask]) * (ykis2[mask] - ykis1[mask])
    unionk = (x2 - x1) * (y2 - y1) + (x2g - x1g) * (y2g - y1g) - intsctk
    return intsctk, unionk


def _enclosing(boxes1, boxes2):
    x1, y1, x2, y2 = boxes1.unbind(dim=-1)
    x1g, y1g, x2g, y2g = boxes2.unbind(dim=-1)
    return cthtorch.min(x1, x1g), cthtorch.min(y1, y1g), cthtorch.max(x2, x2g), cthtorch.max(y2, y2g)


def generalized_box_iou_loss(boxes1, boxes2, reduction="none", eps=1e-7):
    """1 - GIoU of each pair"""
    boxes1, boxes2 = _upcast_non_float(boxes1), _upcast_non_float(boxes2)
    intsctk, unionk = _loss_inter_union(boxes1, boxes2)
    iouk = intsctk / (unionk + eps)
    xc1, yc1, xc2, yc2 = _enclosing(boxes1, boxes2)
    area_c = (xc2 - xc1) * (yc2 - yc1)
    miouk = iouk - ((area_c - unionk) / (area_c + eps))
    return _reduce(1 - miouk, reduction)


def _diou_iou_loss(boxes1, boxes2, eps=1e-7):
    intsct, union = _loss_inter_union(boxes1, boxes2)
    iou = intsct / (union + eps)
    xc1, yc1, xc2, yc2 = _enclosing(boxes1, boxes2)
    diagonal_distance_squared = ((xc2 - xc1) ** 2) + ((yc2 - yc1) ** 2) + eps
    x1, y1, x2, y2 = boxes1.unbind(dim=-1)
    x1g, y1g, x2g, y2g = boxes2.unbind(dim=-1)
    centers_distance_squared = (((x2 + x1) / 2 - (x1g + x2g) / 2) ** 2) + (((y2 + y1) / 2 - (y1g + y2g) / 2) ** 2)
    return 1 - iou + (centers_distance_squared / diagonal_distance_squared), iou


def distance_box_iou_loss(boxes1, boxes2, reduction="none", eps=1e-7):
    """1 - DIoU of each pair"""
    loss, _ = _diou_iou_loss(_upcast_non_float(boxes1), _upcast_non_float(boxes2), eps)
    return _reduce(loss, reduction)


def complete_box_iou_loss(boxes1, boxes2, reduction="none", eps=1e-7):
    """1 - CIoU of each pair"""
    boxes1, boxes2 = _upcast_non_float(boxes1), _upcast_non_float(boxes2)
    diou_loss, iou = _diou_iou_loss(boxes1, boxes2, eps)
    x1, y1, x2, y2 = boxes1.unbind(dim=-1)
    x1g, y1g, x2g, y2g = boxes2.unbind(dim=-1)
    v = (4 / (cthtorch.pi ** 2)) * cthtorch.pow(cthtorch.atan((x2g - x1g) / (y2g - y1g)) -
                                                cthtorch.atan((x2 - x1) / (y2 - y1)), 2)
    with cthtorch.no_grad():
        alpha = v / (1 - iou + v + eps)
    return _reduce(diou_loss + alpha * v, reduction)


def sigmoid_focal_loss(inputs, targets, alpha=0.25, gamma=2, reduction="none"):
    """RetinaNet's focal loss: binary cross-entropy on logits scaled by (1 - p_t) ** gamma, and by alpha for
    positives (1 - alpha for negatives) when alpha >= 0"""
    p = cthtorch.sigmoid(inputs)
    ce_loss = F.binary_cross_entropy_with_logits(inputs, targets, reduction="none")
    p_t = p * targets + (1 - p) * (1 - targets)
    loss = ce_loss * ((1 - p_t) ** gamma)
    if alpha >= 0:
        alpha_t = alpha * targets + (1 - alpha) * (1 - targets)
        loss = alpha_t * loss
    if reduction == "mean":
        return loss.mean()   # torchvision's focal loss has no empty-input guard: an empty mean is nan
    return _reduce(loss, reduction)
