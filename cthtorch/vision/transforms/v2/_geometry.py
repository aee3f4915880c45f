"""Geometric transforms of v2: images and masks through the v1 kernels (masks with nearest interpolation),
bounding boxes moved with them (their corners mapped, as torchvision's box kernels do)."""
import numbers

import cthtorch
from cthtorch.vision import tv_tensors
from cthtorch.vision.transforms import functional as F
from cthtorch.vision.transforms import transforms as v1
from cthtorch.vision.transforms.functional import InterpolationMode
from cthtorch.vision.transforms.v2._transform import Transform, _RandomApplyTransform, query_size


# ---- bounding box kernels: each maps XYXY float boxes and returns (boxes, new canvas size) ----

def convert_bounding_box_format(boxes, old_format, new_format):
    old_format, new_format = (f if isinstance(f, tv_tensors.BoundingBoxFormat) else
                              tv_tensors.BoundingBoxFormat[f.upper()] for f in (old_format, new_format))
    if old_format == new_format:
        return boxes
    a, b, c, d = boxes.unbind(-1)
    if old_format == tv_tensors.BoundingBoxFormat.XYWH:
        a, b, c, d = a, b, a + c, b + d
    elif old_format == tv_tensors.BoundingBoxFormat.CXCYWH:
        a, b, c, d = a - c / 2, b - d / 2, a + c / 2, b + d / 2
    if new_format == tv_tensors.BoundingBoxFormat.XYWH:
        a, b, c, d = a, b, c - a, d - b
    elif new_format == tv_tensors.BoundingBoxFormat.CXCYWH:
        a, b, c, d = (a + c) / 2, (b + d) / 2, c - a, d - b
    return cthtorch.stack([a, b, c, d], dim=-1)


def _clamp(xyxy, canvas_size):
    h, w = canvas_size
    x = xyxy[..., 0::2].clamp(0, w)
    y = xyxy[..., 1::2].clamp(0, h)
    return cthtorch.stack([x[..., 0], y[..., 0], x[..., 1], y[..., 1]], dim=-1)


def _move_boxes(boxes, fn):
    """fn(xyxy float boxes, canvas_size) -> (xyxy, canvas_size) applied in boxes' format and dtype"""
    plain = boxes.as_subclass(cthtorch.Tensor)
    xyxy = convert_bounding_box_format(plain.float() if not plain.is_floating_point() else plain,
                                       boxes.format, "XYXY")
    xyxy, canvas = fn(xyxy, tuple(boxes.canvas_size))
    out = convert_bounding_box_format(xyxy, "XYXY", boxes.format)
    if not plain.is_floating_point():
        out = out.trunc_()   # integer boxes truncate, as torchvision's box kernels' .to(dtype)
    return tv_tensors.wrap(out.to(plain.dtype), like=boxes, canvas_size=canvas)


def _hflip_boxes(xyxy, canvas):
    w = canvas[1]
    return cthtorch.stack([w - xyxy[..., 2], xyxy[..., 1], w - xyxy[..., 0], xyxy[..., 3]], dim=-1), canvas


def _vflip_boxes(xyxy, canvas):
    h = canvas[0]
    return cthtorch.stack([xyxy[..., 0], h - xyxy[..., 3], xyxy[..., 2], h - xyxy[..., 1]], dim=-1), canvas


def _resize_boxes(new_size):
    def fn(xyxy, canvas):
        sy, sx = new_size[0] / canvas[0], new_size[1] / canvas[1]
        return xyxy * cthtorch.tensor([sx, sy, sx, sy], dtype=xyxy.dtype), tuple(new_size)
    return fn


def _crop_boxes(top, left, height, width):
    def fn(xyxy, canvas):
        shifted = xyxy - cthtorch.tensor([left, top, left, top], dtype=xyxy.dtype)
        return _clamp(shifted, (height, width)), (height, width)
    return fn


def _pad_boxes(left, top, right, bottom):
    def fn(xyxy, canvas):
        shifted = xyxy + cthtorch.tensor([left, top, left, top], dtype=xyxy.dtype)
        return shifted, (canvas[0] + top + bottom, canvas[1] + left + right)
    return fn


def _affine_boxes(angle, translate, scale, shear, center):
    """the corners mapped by the forward affine map (the inverse of the one images sample through), the
    enclosing box kept and clamped to the canvas"""
    def fn(xyxy, canvas):
        h, w = canvas
        c = (w * 0.5, h * 0.5) if center is None else tuple(center)
        ia, ib, ic, id_, ie, if_ = F._inverse_affine(c, angle, translate, scale, shear)
        inv = cthtorch.tensor([[ia, ib, ic], [id_, ie, if_], [0.0, 0.0, 1.0]], dtype=cthtorch.float64)
        fwd = cthtorch.linalg.inv(inv)[:2].to(xyxy.dtype)
        x1, y1, x2, y2 = xyxy.unbind(-1)
        corners = cthtorch.stack([cthtorch.stack([x1, y1], -1), cthtorch.stack([x2, y1], -1),
                                  cthtorch.stack([x1, y2], -1), cthtorch.stack([x2, y2], -1)], dim=-2)
        ones = cthtorch.ones(corners.shape[:-1] + (1,), dtype=xyxy.dtype)
        moved = cthtorch.cat([corners, ones], -1) @ fwd.T
        lo, hi = moved.amin(-2), moved.amax(-2)
        return _clamp(cthtorch.cat([lo, hi], -1), canvas), canvas
    return fn


def _fill_for(params, fill):
    """fill, or a {type: fill, "others": fill} dict's entry for the input's type; as torchvision's, a mask is
    filled with the same value as the image unless the dict gives it its own"""
    if isinstance(fill, dict):
        fill = fill.get(params["input_type"], fill.get("others", 0))
    if isinstance(fill, (list, tuple)) and issubclass(params["input_type"], tv_tensors.Mask):
        raise ValueError("Non-scalar fill value is not supported")
    return fill


def _parse_padding(padding):
    """an int or a 1, 2 or 4 element sequence as [left, top, right, bottom]"""
    p = [padding] if isinstance(padding, int) else list(padding)
    return p * 4 if len(p) == 1 else (p * 2 if len(p) == 2 else p)


def _pad(img, padding, fill, padding_mode="constant"):
    """F.pad, also with one fill value per channel for a tensor (v2 takes them; F.pad's tensor path a scalar)"""
    if padding_mode != "constant" or F._is_pil(img) or not isinstance(fill, (list, tuple)):
        return F.pad(img, padding, fill, padding_mode)
    left, top, right, bottom = padding
    h, w = img.shape[-2:]
    values = cthtorch.tensor([float(f) for f in fill]).to(img.dtype)
    canvas = values.view(-1, 1, 1).expand(*img.shape[:-2], h + top + bottom, w + left + right).clone()
    canvas[..., top:top + h, left:left + w] = img
    return canvas


# ---- transforms ----

class Resize(Transform):
    def __init__(self, size, interpolation=InterpolationMode.BILINEAR, max_size=None, antialias=True):
        super().__init__()
        if isinstance(size, int):
            size = [size]
        elif size is not None:
            size = list(size)
        self.size, self.interpolation, self.max_size, self.antialias = size, interpolation, max_size, antialias

    def _image(self, img, params):
        return F.resize(img, self.size, self.interpolation, self.max_size, self.antialias)

    def _mask(self, mask, params):
        return F.resize(mask, self.size, InterpolationMode.NEAREST, self.max_size)

    def _boxes(self, boxes, params):
        new = F._resize_output_size(boxes.canvas_size[0], boxes.canvas_size[1], self.size, self.max_size)
        return _move_boxes(boxes, _resize_boxes(new))


class CenterCrop(Transform):
    def __init__(self, size):
        super().__init__()
        self.size = F._crop_size(size)

    def make_params(self, flat_inputs):
        h, w = query_size(flat_inputs)
        ch, cw = self.size
        return dict(top=int(round((h - ch) / 2.0)), left=int(round((w - cw) / 2.0)))

    def _image(self, img, params):
        return F.center_crop(img, self.size)

    def _boxes(self, boxes, params):
        return _move_boxes(boxes, _crop_boxes(params["top"], params["left"], *self.size))


class _CropThenMaybeResize(Transform):
    """crops at make_params' (top, left, height, width), then resizes to self.size when it is set"""
    size = None

    def _crop(self, img, params, interpolation):
        out = F.crop(img, params["top"], params["left"], params["height"], params["width"])
        if self.size is not None:
            out = F.resize(out, list(self.size), interpolation, antialias=self.antialias)
        return out

    def _image(self, img, params):
        return self._crop(img, params, self.interpolation)

    def _mask(self, mask, params):
        return self._crop(mask, params, InterpolationMode.NEAREST)

    def _boxes(self, boxes, params):
        boxes = _move_boxes(boxes, _crop_boxes(params["top"], params["left"], params["height"], params["width"]))
        if self.size is not None:
            boxes = _move_boxes(boxes, _resize_boxes(tuple(self.size)))
        return boxes


class RandomResizedCrop(_CropThenMaybeResize):
    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0),
                 interpolation=InterpolationMode.BILINEAR, antialias=True):
        super().__init__()
        self.size = F._crop_size(size)
        if not isinstance(scale, (list, tuple)):
            raise TypeError("Scale should be a sequence")
        if not isinstance(ratio, (list, tuple)):
            raise TypeError("Ratio should be a sequence")
        self.scale, self.ratio, self.interpolation, self.antialias = scale, ratio, interpolation, antialias

    def make_params(self, flat_inputs):
        h, w = query_size(flat_inputs)
        # v1's draws on an image of the sample's size
        i, j, ch, cw = v1.RandomResizedCrop.get_params(cthtorch.empty(0, h, w), self.scale, self.ratio)
        return dict(top=i, left=j, height=ch, width=cw)


class RandomCrop(_CropThenMaybeResize):
    def __init__(self, size, padding=None, pad_if_needed=False, fill=0, padding_mode="constant"):
        super().__init__()
        self.crop_size = F._crop_size(size)
        self.padding, self.pad_if_needed = padding, pad_if_needed
        self.fill, self.padding_mode = fill, padding_mode

    def make_params(self, flat_inputs):
        h, w = query_size(flat_inputs)
        pad = [0, 0, 0, 0]   # left, top, right, bottom
        if self.padding is not None:
            pad = _parse_padding(self.padding)
            h, w = h + pad[1] + pad[3], w + pad[0] + pad[2]
        th, tw = self.crop_size
        if self.pad_if_needed and h < th:
            extra = th - h
            pad[1] += extra
            pad[3] += extra
            h += 2 * extra
        if self.pad_if_needed and w < tw:
            extra = tw - w
            pad[0] += extra
            pad[2] += extra
            w += 2 * extra
        if h < th or w < tw:
            raise ValueError("Required crop size %s is larger than %sinput image size %s."
                             % ((th, tw), "padded " if self.padding is not None else "", (h, w)))
        # v2 draws an offset only along a side longer than the crop (v1 draws both unless both fit exactly)
        top = int(cthtorch.randint(0, h - th + 1, size=())) if h > th else 0
        left = int(cthtorch.randint(0, w - tw + 1, size=())) if w > tw else 0
        return dict(pad=pad, top=top, left=left, height=th, width=tw)

    def _padded(self, img, params, fill):
        return _pad(img, params["pad"], fill, self.padding_mode) if any(params["pad"]) else img

    def _image(self, img, params):
        return self._crop(self._padded(img, params, _fill_for(params, self.fill)), params, None)

    _mask = _image   # padded with the fill too, and never resized

    def _boxes(self, boxes, params):
        if any(params["pad"]):
            boxes = _move_boxes(boxes, _pad_boxes(*params["pad"]))
        return super()._boxes(boxes, params)


class RandomHorizontalFlip(_RandomApplyTransform):
    def _image(self, img, params):
        return F.hflip(img)

    def _boxes(self, boxes, params):
        return _move_boxes(boxes, _hflip_boxes)


class RandomVerticalFlip(_RandomApplyTransform):
    def _image(self, img, params):
        return F.vflip(img)

    def _boxes(self, boxes, params):
        return _move_boxes(boxes, _vflip_boxes)


class Pad(Transform):
    def __init__(self, padding, fill=0, padding_mode="constant"):
        super().__init__()
        if not isinstance(padding, (numbers.Number, tuple, list)):
            raise TypeError("Got inappropriate padding arg")
        if isinstance(padding, (tuple, list)) and len(padding) not in (1, 2, 4):
            raise ValueError("Padding must be an int or a 1, 2, or 4 element tuple, not a %d element tuple"
                             % len(padding))
        if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
            raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
        self.padding, self.fill, self.padding_mode = padding, fill, padding_mode

    def _ltrb(self):
        return _parse_padding(self.padding)

    def _image(self, img, params):
        return _pad(img, self._ltrb(), _fill_for(params, self.fill), self.padding_mode)

    def _boxes(self, boxes, params):
        return _move_boxes(boxes, _pad_boxes(*self._ltrb()))


class RandomAffine(Transform):
    def __init__(self, degrees, translate=None, scale=None, shear=None, interpolation=InterpolationMode.NEAREST,
                 fill=0, center=None):
        super().__init__()
        checked = v1.RandomAffine(degrees, translate, scale, shear, interpolation, fill, center)
        self.degrees, self.translate, self.scale, self.shear = (checked.degrees, checked.translate, checked.scale,
                                                                checked.shear)
        self.interpolation, self.fill, self.center = interpolation, fill, center

    def make_params(self, flat_inputs):
        h, w = query_size(flat_inputs)
        angle, translate, scale, shear = v1.RandomAffine.get_params(self.degrees, self.translate, self.scale,
                                                                    self.shear, [w, h])
        return dict(angle=angle, translate=translate, scale=scale, shear=shear)

    def _warp(self, img, params, interpolation, fill):
        return F.affine(img, params["angle"], list(params["translate"]), params["scale"], list(params["shear"]),
                        interpolation=interpolation, fill=v1._channel_fill(img, fill), center=self.center)

    def _image(self, img, params):
        return self._warp(img, params, self.interpolation, _fill_for(params, self.fill))

    def _mask(self, mask, params):
        return self._warp(mask, params, InterpolationMode.NEAREST, _fill_for(params, self.fill))

    def _boxes(self, boxes, params):
        return _move_boxes(boxes, _affine_boxes(params["angle"], params["translate"], params["scale"],
                                                params["shear"], self.center))


class RandomRotation(Transform):
    def __init__(self, degrees, interpolation=InterpolationMode.NEAREST, expand=False, center=None, fill=0):
        super().__init__()
        self.degrees = v1._range_param(degrees, "degrees")
        self.interpolation, self.expand, self.center, self.fill = interpolation, expand, center, fill

    def make_params(self, flat_inputs):
        return dict(angle=cthtorch.empty(1).uniform_(self.degrees[0], self.degrees[1]).item())

    def _image(self, img, params):
        return F.rotate(img, params["angle"], self.interpolation, self.expand, self.center,
                        _fill_for(params, self.fill))

    def _mask(self, mask, params):
        return F.rotate(mask, params["angle"], InterpolationMode.NEAREST, self.expand, self.center,
                        _fill_for(params, self.fill))

    def _boxes(self, boxes, params):
        if self.expand:
            raise NotImplementedError("RandomRotation(expand=True) on bounding boxes is not implemented in "
                                      "cthtorch.vision yet")
        # rotate turns counter-clockwise; the affine map's angle is clockwise
        return _move_boxes(boxes, _affine_boxes(-params["angle"], (0, 0), 1.0, (0.0, 0.0), self.center))

