"""Transforms on the boxes themselves (v2): format conversion, clamping to the canvas, and dropping degenerate
boxes with their labels and masks (SanitizeBoundingBoxes, after crops and zooms)."""
import cthtorch
from cthtorch.utils import _pytree
from cthtorch.vision import tv_tensors
from cthtorch.vision.transforms.v2._geometry import _clamp, _move_boxes, convert_bounding_box_format
from cthtorch.vision.transforms.v2._transform import Transform, _find_labels_default_heuristic


class ConvertBoundingBoxFormat(Transform):
    def __init__(self, format):
        super().__init__()
        self.format = tv_tensors.BoundingBoxFormat[format.upper()] if isinstance(format, str) else format

    def _boxes(self, boxes, params):
        plain = boxes.as_subclass(cthtorch.Tensor)
        out = convert_bounding_box_format(plain, boxes.format, self.format)
        return tv_tensors.wrap(out, like=boxes, format=self.format)

    def _image(self, img, params):
        return img

    _mask = _image


class ClampBoundingBoxes(Transform):
    def _boxes(self, boxes, params):
        return _move_boxes(boxes, lambda xyxy, canvas: (_clamp(xyxy, canvas), canvas))

    def _image(self, img, params):
        return img

    _mask = _image


class SanitizeBoundingBoxes(Transform):
    """Drops the boxes narrower or shorter than min_size, smaller than min_area or outside the canvas, with the
    labels (found by labels_getter) and instance masks at the same indices"""

    def __init__(self, min_size=1.0, min_area=1.0, labels_getter="default"):
        super().__init__()
        if min_size < 1:
            raise ValueError("min_size must be >= 1, got %s." % min_size)
        if min_area < 1:
            raise ValueError("min_area must be >= 1, got %s." % min_area)
        self.min_size, self.min_area = min_size, min_area
        if labels_getter == "default":
            labels_getter = _find_labels_default_heuristic
        elif labels_getter is not None and not callable(labels_getter):
            raise ValueError("labels_getter should either be 'default', a callable, or None, but got %s."
                             % labels_getter)
        self.labels_getter = labels_getter

    def forward(self, *inputs):
        inputs = inputs if len(inputs) > 1 else inputs[0]
        labels = self.labels_getter(inputs) if self.labels_getter is not None else None
        # the getter may give one tensor or a tuple/list of them (labels, scores, ...), each filtered alike
        msg = "The labels in the input to forward() must be a tensor or None, got %s instead."
        if isinstance(labels, cthtorch.Tensor):
            labels = (labels,)
        elif isinstance(labels, (tuple, list)):
            for entry in labels:
                if not isinstance(entry, cthtorch.Tensor):
                    raise ValueError(msg % type(entry))
        elif labels is not None:
            raise ValueError(msg % type(labels))
        flat, spec = _pytree.tree_flatten(inputs)
        boxes = [x for x in flat if isinstance(x, tv_tensors.BoundingBoxes)]
        if len(boxes) != 1:
            raise ValueError("Found multiple bounding boxes instances in the sample" if boxes else
                             "No bounding boxes were found in the sample")
        boxes = boxes[0]
        for label in labels or ():
            if boxes.shape[0] != label.shape[0]:
                raise ValueError("Number of boxes (shape=%s) and must match the number of labels.Found labels with "
                                 "shape=%s)." % (boxes.shape, label.shape))
        plain = boxes.as_subclass(cthtorch.Tensor)
        xyxy = convert_bounding_box_format(plain, boxes.format, "XYXY")
        ws, hs = xyxy[:, 2] - xyxy[:, 0], xyxy[:, 3] - xyxy[:, 1]
        valid = (ws >= self.min_size) & (hs >= self.min_size) & (xyxy >= 0).all(dim=-1) & (ws * hs >= self.min_area)
        h, w = boxes.canvas_size
        valid &= (xyxy[:, 0] <= w) & (xyxy[:, 2] <= w) & (xyxy[:, 1] <= h) & (xyxy[:, 3] <= h)
        out = []
        for x in flat:
            if any(x is label for label in labels or ()) or isinstance(x, (tv_tensors.BoundingBoxes, tv_tensors.Mask)):
                kept = (x.as_subclass(cthtorch.Tensor) if isinstance(x, tv_tensors.TVTensor) else x)[valid]
                x = tv_tensors.wrap(kept, like=x) if isinstance(x, tv_tensors.TVTensor) else kept
            out.append(x)
        return _pytree.tree_unflatten(out, spec)
