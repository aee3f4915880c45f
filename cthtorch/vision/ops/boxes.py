"""torchvision.ops.boxes: box areas, pairwise IoU / generalized IoU, format conversion, clipping and
non-maximum suppression over (x1, y1, x2, y2) boxes (DETR's box_ops and matcher, detection post-processing)."""
import cthtorch


def _upcast(t):
    # products of coordinates overflow half floats and small ints: widen those first
    if t.is_floating_point():
        return t if t.dtype in (cthtorch.float32, cthtorch.float64) else t.float()
    return t if t.dtype in (cthtorch.int32, cthtorch.int64) else t.int()


def box_area(boxes):
    boxes = _upcast(boxes)
    return (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])


def _inter_union(boxes1, boxes2):
    area1, area2 = box_area(boxes1), box_area(boxes2)
    lt = cthtorch.max(boxes1[:, None, :2], boxes2[:, :2])
    rb = cthtorch.min(boxes1[:, None, 2:], boxes2[:, 2:])
    wh = _upcast(rb - lt).clamp(min=0)
    inter = wh[:, :, 0] * wh[:, :, 1]
    return inter, area1[:, None] + area2 - inter


def box_iou(boxes1, boxes2):
    """[N, M] intersection over union of every pair"""
    inter, union = _inter_union(boxes1, boxes2)
    return inter / union


def generalized_box_iou(boxes1, boxes2):
    """[N, M] IoU less the share of the pair's enclosing box that their union leaves empty"""
    inter, union = _inter_union(boxes1, boxes2)
    iou = inter / union
    lt = cthtorch.min(boxes1[:, None, :2], boxes2[:, :2])
    rb = cthtorch.max(boxes1[:, None, 2:], boxes2[:, 2:])
    wh = _upcast(rb - lt).clamp(min=0)
    enclosing = wh[:, :, 0] * wh[:, :, 1]
    return iou - (enclosing - union) / enclosing


def _to_xyxy(boxes, fmt):
    a, b, c, d = boxes.unbind(-1)
    if fmt == "xywh":
        return cthtorch.stack([a, b, a + c, b + d], dim=-1)
    return cthtorch.stack([a - 0.5 * c, b - 0.5 * d, a + 0.5 * c, b + 0.5 * d], dim=-1)   # cxcywh


def _from_xyxy(boxes, fmt):
    x1, y1, x2, y2 = boxes.unbind(-1)
    if fmt == "xywh":
        return cthtorch.stack([x1, y1, x2 - x1, y2 - y1], dim=-1)
    return cthtorch.stack([(x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1], dim=-1)


def box_convert(boxes, in_fmt, out_fmt):
    """between 'xyxy', 'xywh' (corner + size) and 'cxcywh' (centre + size)"""
    allowed = ("xyxy", "xywh", "cxcywh")
    if in_fmt not in allowed or out_fmt not in allowed:
        raise ValueError("Unsupported Bounding Box Conversions for given in_fmt and out_fmt")
    if in_fmt == out_fmt:
        return boxes.clone()
    if in_fmt != "xyxy":
        boxes = _to_xyxy(boxes, in_fmt)
    return boxes if out_fmt == "xyxy" else _from_xyxy(boxes, out_fmt)


def clip_boxes_to_image(boxes, size):
    """clamp x into [0, width] and y into [0, height]; size is (height, width)"""
    height, width = size
    x = boxes[..., 0::2].clamp(min=0, max=width)
    y = boxes[..., 1::2].clamp(min=0, max=height)
    return cthtorch.stack((x, y), dim=boxes.dim()).reshape(boxes.shape)


def remove_small_boxes(boxes, min_size):
    """indices of the boxes at least min_size wide and high"""
    ws, hs = boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]
    return cthtorch.where((ws >= min_size) & (hs >= min_size))[0]


def nms(boxes, scores, iou_threshold):
    """greedy non-maximum suppression: from the highest score down, keep a box unless it overlaps an already
    kept one by IoU > iou_threshold; the kept indices, by decreasing score"""
    order = scores.argsort(descending=True, stable=True)   # torchvision's CPU kernel sorts stably: ties by index
    if order.numel() == 0:
        return order
    iou = box_iou(boxes[order], boxes[order]).tolist()
    suppressed = [False] * len(iou)
    kept = []
    for i in range(len(iou)):
        if suppressed[i]:
            continue
        kept.append(i)
        row = iou[i]
        for j in range(i + 1, len(iou)):
            if row[j] > iou_threshold:
                suppressed[j] = True
    return order[cthtorch.tensor(kept, dtype=cthtorch.int64)]


def batched_nms(boxes, scores, idxs, iou_threshold):
    """nms within each category of idxs: boxes of different categories never suppress each other (each
    category's boxes are shifted apart before one nms)"""
    if boxes.numel() == 0:
        return cthtorch.empty((0,), dtype=cthtorch.int64, device=boxes.device)
    offsets = idxs.to(boxes) * (boxes.max() + 1)
    return nms(boxes + offsets[:, None], scores, iou_threshold)


def masks_to_boxes(masks):
    """[N, H, W] masks to the [N, 4] xyxy boxes around their nonzero pixels"""
    if masks.numel() == 0:
        return cthtorch.zeros((0, 4), device=masks.device, dtype=cthtorch.float)
    boxes = cthtorch.zeros((masks.shape[0], 4), device=masks.device, dtype=cthtorch.float)
    for i, mask in enumerate(masks):
        y, x = cthtorch.where(mask != 0)
        boxes[i, 0], boxes[i, 1] = cthtorch.min(x), cthtorch.min(y)
        boxes[i, 2], boxes[i, 3] = cthtorch.max(x), cthtorch.max(y)
    return boxes


def _box_diou_iou(boxes1, boxes2, eps=1e-7):
    # pairwise IoU less the squared centre distance over the enclosing box's squared diagonal
    iou = box_iou(boxes1, boxes2)
    lti = cthtorch.min(boxes1[:, None, :2], boxes2[:, :2])
    rbi = cthtorch.max(boxes1[:, None, 2:], boxes2[:, 2:])
    whi = _upcast(rbi - lti).clamp(min=0)
    diagonal_distance_squared = (whi[:, :, 0] ** 2) + (whi[:, :, 1] ** 2) + eps
    x_p, y_p = (boxes1[:, 0] + boxes1[:, 2]) / 2, (boxes1[:, 1] + boxes1[:, 3]) / 2
    x_g, y_g = (boxes2[:, 0] + boxes2[:, 2]) / 2, (boxes2[:, 1] + boxes2[:, 3]) / 2
    centers_distance_squared = (_upcast(x_p[:, None] - x_g[None, :]) ** 2) + (_upcast(y_p[:, None] - y_g[None, :]) ** 2)
    return iou - (centers_distance_squared / diagonal_distance_squared), iou


def distance_box_iou(boxes1, boxes2, eps=1e-7):
    """[N, M] distance IoU (DIoU) of every pair"""
    diou, _ = _box_diou_iou(_upcast(boxes1), _upcast(boxes2), eps=eps)
    return diou


def complete_box_iou(boxes1, boxes2, eps=1e-7):
    """[N, M] complete IoU (CIoU): DIoU less an aspect-ratio consistency term"""
    boxes1, boxes2 = _upcast(boxes1), _upcast(boxes2)
    diou, iou = _box_diou_iou(boxes1, boxes2, eps)
    w_pred = boxes1[:, None, 2] - boxes1[:, None, 0]
    h_pred = boxes1[:, None, 3] - boxes1[:, None, 1]
    w_gt = boxes2[:, 2] - boxes2[:, 0]
    h_gt = boxes2[:, 3] - boxes2[:, 1]
    v = (4 / (cthtorch.pi ** 2)) * cthtorch.pow(cthtorch.atan(w_pred / h_pred) - cthtorch.atan(w_gt / h_gt), 2)
    with cthtorch.no_grad():
        alpha = v / (1 - iou + v + eps)
    return diou - alpha * v
