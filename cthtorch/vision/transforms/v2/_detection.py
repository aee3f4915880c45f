"""The SSD-style detection augmentations of v2 (the detection tutorials' pipeline): RandomIoUCrop,
RandomZoomOut and RandomPhotometricDistort, with torchvision's draws in its order."""
import cthtorch
from cthtorch.vision import tv_tensors
from cthtorch.vision.ops.boxes import box_iou
from cthtorch.vision.transforms import functional as F
from cthtorch.vision.transforms.v2._geometry import (_CropThenMaybeResize, _fill_for, _move_boxes, _pad,
                                                     _pad_boxes, convert_bounding_box_format)
from cthtorch.vision.transforms.v2.functional import permute_channels
from cthtorch.vision.transforms.v2._transform import Transform, _RandomApplyTransform, query_size


class RandomIoUCrop(_CropThenMaybeResize):
    """A crop whose IoU with some box reaching into it is at least a drawn threshold (SSD); boxes whose centre
    falls outside are zeroed, for SanitizeBoundingBoxes to drop"""

    def __init__(self, min_scale=0.3, max_scale=1.0, min_aspect_ratio=0.5, max_aspect_ratio=2.0,
                 sampler_options=None, trials=40):
        super().__init__()
        self.min_scale, self.max_scale = min_scale, max_scale
        self.min_aspect_ratio, self.max_aspect_ratio = min_aspect_ratio, max_aspect_ratio
        self.options = [0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 2.0] if sampler_options is None else sampler_options
        self.trials = trials
        self.interpolation, self.antialias = None, True

    def make_params(self, flat_inputs):
        boxes = [x for x in flat_inputs if isinstance(x, tv_tensors.BoundingBoxes)]
        if not boxes or not any(not isinstance(x, (tv_tensors.BoundingBoxes, tv_tensors.Mask)) for x in flat_inputs):
            raise TypeError("RandomIoUCrop() requires input sample to contain tensor or PIL images and bounding "
                            "boxes. Sample can also contain masks.")
        orig_h, orig_w = query_size(flat_inputs)
        xyxy_all = convert_bounding_box_format(boxes[0].as_subclass(cthtorch.Tensor).float(), boxes[0].format, "XYXY")
        while True:
            min_iou = self.options[int(cthtorch.randint(low=0, high=len(self.options), size=(1,)))]
            if min_iou >= 1.0:   # above 1 encodes "leave the sample as it is"
                return {}
            for _ in range(self.trials):
                r = self.min_scale + (self.max_scale - self.min_scale) * cthtorch.rand(2)
                new_w, new_h = int(orig_w * r[0]), int(orig_h * r[1])
                if new_h == 0 or not self.min_aspect_ratio <= new_w / new_h <= self.max_aspect_ratio:
                    continue
                r = cthtorch.rand(2)
                left, top = int((orig_w - new_w) * r[0]), int((orig_h - new_h) * r[1])
                right, bottom = left + new_w, top + new_h
                if left == right or top == bottom:
                    continue
                cx = 0.5 * (xyxy_all[..., 0] + xyxy_all[..., 2])
                cy = 0.5 * (xyxy_all[..., 1] + xyxy_all[..., 3])
                inside = (left < cx) & (cx < right) & (top < cy) & (cy < bottom)
                if not inside.any():
                    continue
                ious = box_iou(xyxy_all[inside], cthtorch.tensor([[left, top, right, bottom]], dtype=xyxy_all.dtype))
                if ious.max() < min_iou:
                    continue
                return dict(top=top, left=left, height=new_h, width=new_w, inside=inside)

    def transform(self, inpt, params):
        if not params:
            return inpt
        return super().transform(inpt, params)

    def _boxes(self, boxes, params):
        out = super()._boxes(boxes, params)
        plain = out.as_subclass(cthtorch.Tensor).clone()
        plain[~params["inside"]] = 0
        return tv_tensors.wrap(plain, like=out)


class RandomZoomOut(_RandomApplyTransform):
    """The image placed at a random spot of a canvas side_range times as large, filled with fill"""

    def __init__(self, fill=0, side_range=(1.0, 4.0), p=0.5):
        super().__init__(p=p)
        self.fill = fill
        self.side_range = side_range
        if side_range[0] < 1.0 or side_range[0] > side_range[1]:
            raise ValueError("Invalid side range provided %s." % (side_range,))

    def make_params(self, flat_inputs):
        orig_h, orig_w = query_size(flat_inputs)
        r = self.side_range[0] + cthtorch.rand(1) * (self.side_range[1] - self.side_range[0])
        canvas_w, canvas_h = int(orig_w * r), int(orig_h * r)
        r = cthtorch.rand(2)
        left, top = int((canvas_w - orig_w) * r[0]), int((canvas_h - orig_h) * r[1])
        return dict(padding=[left, top, canvas_w - (left + orig_w), canvas_h - (top + orig_h)])

    def _image(self, img, params):
        return _pad(img, params["padding"], _fill_for(params, self.fill))

    def _boxes(self, boxes, params):
        return _move_boxes(boxes, _pad_boxes(*params["padding"]))


class RandomPhotometricDistort(Transform):
    """Brightness, contrast (before or after the others), saturation, hue and a channel shuffle, each applied
    with probability p"""

    def __init__(self, brightness=(0.875, 1.125), contrast=(0.5, 1.5), saturation=(0.5, 1.5), hue=(-0.05, 0.05),
                 p=0.5):
        super().__init__()
        self.brightness, self.contrast = tuple(brightness), tuple(contrast)
        self.saturation, self.hue, self.p = tuple(saturation), tuple(hue), p

    def make_params(self, flat_inputs):
        channels = next(F.get_dimensions(x)[0] for x in flat_inputs
                        if not isinstance(x, (tv_tensors.BoundingBoxes, tv_tensors.Mask)))
        params = {}
        for key in ("brightness", "contrast", "saturation", "hue"):
            lo, hi = getattr(self, key)
            params[key] = float(cthtorch.empty(1).uniform_(lo, hi)) if cthtorch.rand(1) < self.p else None
        params["contrast_before"] = bool(cthtorch.rand(()) < 0.5)
        params["channel_permutation"] = cthtorch.randperm(channels) if cthtorch.rand(1) < self.p else None
        return params

    def _image(self, img, params):
        if params["brightness"] is not None:
            img = F.adjust_brightness(img, params["brightness"])
        if params["contrast"] is not None and params["contrast_before"]:
            img = F.adjust_contrast(img, params["contrast"])
        if params["saturation"] is not None:
            img = F.adjust_saturation(img, params["saturation"])
        if params["hue"] is not None:
            img = F.adjust_hue(img, params["hue"])
        if params["contrast"] is not None and not params["contrast_before"]:
            img = F.adjust_contrast(img, params["contrast"])
        if params["channel_permutation"] is not None:
            img = permute_channels(img, params["channel_permutation"])
        return img

    def _mask(self, mask, params):
        return mask
