"""Geometric transforms of v2: images and masks through the v1 kernels (masks with nearest interpolation),
bounding boxes moved with them (their corners mapped, as torchvision's box kernels do)."""
import numbers

import cthtorch
from cthtorch.vision import tv_tensors
from cthtorch.vision.transforms import functional as F
from cthtorch.vision.transforms import transforms as v1
from cthtorch.vision.transforms.functional import InterpolationMode
from cthtorch.utils import _pytree
from cthtorch.vision.transforms.v2._transform import Transform, _RandomApplyTransform, _plain, query_size


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



def _enclosing(px, py, canvas):
    """the boxes enclosing each row of moved corners (x's px, y's py), clamped to the canvas"""
    return _clamp(cthtorch.stack([px.amin(-1), py.amin(-1), px.amax(-1), py.amax(-1)], -1), canvas)


def _perspective_boxes(startpoints, endpoints):
    """box corners carried by the forward projective map (startpoints to endpoints), the enclosing box kept
    and clamped to the canvas"""
    a, b, c, d, e, f, g, k = F._perspective_coeffs(endpoints, startpoints)

    def fn(xyxy, canvas):
        x1, y1, x2, y2 = xyxy.unbind(-1)
        xs = cthtorch.stack([x1, x2, x1, x2], -1)
        ys = cthtorch.stack([y1, y1, y2, y2], -1)
        den = g * xs + k * ys + 1.0
        px, py = (a * xs + b * ys + c) / den, (d * xs + e * ys + f) / den
        return _enclosing(px, py, canvas), canvas
    return fn


def _elastic_boxes(displacement):
    """box corners moved by the approximate inverse of the elastic grid (identity minus the displacement, as
    torchvision approximates it), the enclosing box kept and clamped"""
    def fn(xyxy, canvas):
        h, w = canvas
        disp = displacement.to(xyxy.dtype)
        x1, y1, x2, y2 = xyxy.unbind(-1)
        # corners rounded up to the pixel whose displacement they take (kept on the canvas)
        xs = cthtorch.stack([x1, x2, x2, x1], -1).ceil().long().clamp(0, w - 1)
        ys = cthtorch.stack([y1, y1, y2, y2], -1).ceil().long().clamp(0, h - 1)
        # identity grid at the pixel centres, in [-1, 1]; back to pixels after moving
        gx = (xs.to(xyxy.dtype) + 0.5) / (w * 0.5) - 1.0 - disp[0, ys, xs, 0]
        gy = (ys.to(xyxy.dtype) + 0.5) / (h * 0.5) - 1.0 - disp[0, ys, xs, 1]
        px, py = (gx + 1.0) * (0.5 * w) - 0.5, (gy + 1.0) * (0.5 * h) - 0.5
        return _enclosing(px, py, canvas), canvas
    return fn


class _FilledWarp:
    """images warped (self._warp) with self.interpolation, masks with nearest, each filled with the fill for
    its type"""

    def _image(self, img, params):
        return self._warp(img, params, self.interpolation, v1._channel_fill(img, _fill_for(params, self.fill)))

    def _mask(self, mask, params):
        return self._warp(mask, params, InterpolationMode.NEAREST, v1._channel_fill(mask, _fill_for(params, self.fill)))


class RandomPerspective(_FilledWarp, _RandomApplyTransform):
    def __init__(self, distortion_scale=0.5, p=0.5, interpolation=InterpolationMode.BILINEAR, fill=0):
        super().__init__(p=p)
        if not (0 <= distortion_scale <= 1):
            raise ValueError("Argument distortion_scale value should be between 0 and 1")
        self.distortion_scale = distortion_scale
        self.interpolation = F._interp_mode(interpolation)
        self.fill = fill

    def make_params(self, flat_inputs):
        h, w = query_size(flat_inputs)
        # v2 draws the corners as v1 does
        startpoints, endpoints = v1.RandomPerspective.get_params(w, h, self.distortion_scale)
        return dict(startpoints=startpoints, endpoints=endpoints)

    def _warp(self, img, params, interpolation, fill):
        return F.perspective(img, params["startpoints"], params["endpoints"], interpolation, fill)

    def _boxes(self, boxes, params):
        return _move_boxes(boxes, _perspective_boxes(params["startpoints"], params["endpoints"]))


class ElasticTransform(_FilledWarp, Transform):
    def __init__(self, alpha=50.0, sigma=5.0, interpolation=InterpolationMode.BILINEAR, fill=0):
        super().__init__()
        self.alpha = v1.ElasticTransform._pair(alpha, "alpha")
        self.sigma = v1.ElasticTransform._pair(sigma, "sigma")
        self.interpolation = F._interp_mode(interpolation)
        self.fill = fill

    def make_params(self, flat_inputs):
        size = list(query_size(flat_inputs))
        return dict(displacement=v1.ElasticTransform.get_params(self.alpha, self.sigma, size))

    def _warp(self, img, params, interpolation, fill):
        return F.elastic_transform(img, params["displacement"], interpolation, fill)

    def _boxes(self, boxes, params):
        return _move_boxes(boxes, _elastic_boxes(params["displacement"]))


class _ResizeToDrawnSize(Transform):
    """resizes images (masks with nearest interpolation) and boxes to make_params' size"""

    def _image(self, img, params):
        return F.resize(img, list(params["size"]), self.interpolation, antialias=self.antialias)

    def _mask(self, mask, params):
        return F.resize(mask, list(params["size"]), InterpolationMode.NEAREST)

    def _boxes(self, boxes, params):
        new = F._resize_output_size(boxes.canvas_size[0], boxes.canvas_size[1], list(params["size"]))
        return _move_boxes(boxes, _resize_boxes(new))


class ScaleJitter(_ResizeToDrawnSize):
    """Large Scale Jitter: the sample scaled to fit target_size, times a factor drawn from scale_range"""

    def __init__(self, target_size, scale_range=(0.1, 2.0), interpolation=InterpolationMode.BILINEAR,
                 antialias=True):
        super().__init__()
        self.target_size, self.scale_range = target_size, scale_range
        self.interpolation, self.antialias = F._interp_mode(interpolation), antialias

    def make_params(self, flat_inputs):
        orig_h, orig_w = query_size(flat_inputs)
        scale = self.scale_range[0] + cthtorch.rand(1) * (self.scale_range[1] - self.scale_range[0])
        r = min(self.target_size[1] / orig_h, self.target_size[0] / orig_w) * scale
        return dict(size=(int(orig_h * r), int(orig_w * r)))


class RandomShortestSize(_ResizeToDrawnSize):
    """The shorter side resized to one of min_size (drawn), the longer side kept within max_size"""

    def __init__(self, min_size, max_size=None, interpolation=InterpolationMode.BILINEAR, antialias=True):
        super().__init__()
        self.min_size = [min_size] if isinstance(min_size, int) else list(min_size)
        self.max_size = max_size
        self.interpolation, self.antialias = F._interp_mode(interpolation), antialias

    def make_params(self, flat_inputs):
        orig_h, orig_w = query_size(flat_inputs)
        min_size = self.min_size[int(cthtorch.randint(len(self.min_size), ()))]
        r = min_size / min(orig_h, orig_w)
        if self.max_size is not None:
            r = min(r, self.max_size / max(orig_h, orig_w))
        return dict(size=(int(orig_h * r), int(orig_w * r)))


class RandomResize(_ResizeToDrawnSize):
    """The shorter side resized to a size drawn from [min_size, max_size)"""

    def __init__(self, min_size, max_size, interpolation=InterpolationMode.BILINEAR, antialias=True):
        super().__init__()
        self.min_size, self.max_size = min_size, max_size
        self.interpolation, self.antialias = F._interp_mode(interpolation), antialias

    def make_params(self, flat_inputs):
        return dict(size=[int(cthtorch.randint(self.min_size, self.max_size, ()))])


class _MultiCrop(Transform):
    """Each image becomes a tuple of crops; boxes and masks are refused, as torchvision refuses them"""

    def forward(self, *inputs):
        flat, _ = _pytree.tree_flatten(inputs if len(inputs) > 1 else inputs[0])
        if any(isinstance(x, (tv_tensors.BoundingBoxes, tv_tensors.Mask)) for x in flat):
            raise TypeError("BoundingBoxes'es and Mask's are not supported by %s()" % type(self).__name__)
        return super().forward(*inputs)

    def transform(self, inpt, params):
        crops = self._crops(_plain(inpt))
        if isinstance(inpt, tv_tensors.TVTensor):
            crops = tuple(tv_tensors.wrap(c, like=inpt) for c in crops)
        return crops


class FiveCrop(_MultiCrop):
    def __init__(self, size):
        super().__init__()
        self.size = F._crop_size(size)

    def _crops(self, img):
        return F.five_crop(img, self.size)


class TenCrop(_MultiCrop):
    def __init__(self, size, vertical_flip=False):
        super().__init__()
        self.size = F._crop_size(size)
        self.vertical_flip = vertical_flip

    def _crops(self, img):
        return F.ten_crop(img, self.size, self.vertical_flip)
