"""torchvision.transforms.v2.functional: the v1 kernels under their v1 and v2 names, with v2's to_image,
to_dtype and the bounding box format conversion. The geometric ops (flips, resize, crops, pad, affine,
rotate, perspective, elastic) dispatch on the input's type as v2's do: boxes move (their canvas with them),
masks are resampled with nearest interpolation, other tv_tensors keep their type."""
import cthtorch
from cthtorch.vision.transforms import functional as _v1
from cthtorch.vision.transforms.functional import *  # noqa: F401,F403
from cthtorch.vision.transforms.functional import (InterpolationMode, to_pil_image,  # noqa: F401
                                                   pil_to_tensor, get_dimensions, get_image_size, _size_of,
                                                   _bound, _interp_mode)
from cthtorch.vision.transforms.v2._geometry import (_affine_boxes, _crop_boxes, _elastic_boxes,  # noqa: F401
                                                     _hflip_boxes, _move_boxes, _pad_boxes, _parse_padding,
                                                     _perspective_boxes, _resize_boxes, _vflip_boxes,
                                                     convert_bounding_box_format)
from cthtorch.vision.transforms.v2._type_conversion import to_image, to_dtype  # noqa: F401


def _by_type(inpt, image_fn, boxes_fn):
    from cthtorch.vision import tv_tensors
    if isinstance(inpt, tv_tensors.BoundingBoxes):
        return _move_boxes(inpt, boxes_fn)
    if isinstance(inpt, tv_tensors.TVTensor):
        return tv_tensors.wrap(image_fn(inpt.as_subclass(cthtorch.Tensor)), like=inpt)
    return image_fn(inpt)


def hflip(inpt):
    return _by_type(inpt, _v1.hflip, _hflip_boxes)


def vflip(inpt):
    return _by_type(inpt, _v1.vflip, _vflip_boxes)


horizontal_flip = hflip
vertical_flip = vflip


def resize(inpt, size, interpolation=InterpolationMode.BILINEAR, max_size=None, antialias=True):
    from cthtorch.vision import tv_tensors
    if isinstance(inpt, tv_tensors.Mask):
        interpolation = InterpolationMode.NEAREST
    new = None
    if isinstance(inpt, tv_tensors.BoundingBoxes):
        new = _v1._resize_output_size(inpt.canvas_size[0], inpt.canvas_size[1], size, max_size)

    def image_fn(x):
        squeeze = isinstance(inpt, tv_tensors.Mask) and x.ndim == 2
        out = _v1.resize(x.unsqueeze(0) if squeeze else x, size, interpolation, max_size, antialias)
        return out.squeeze(0) if squeeze else out
    return _by_type(inpt, image_fn, _resize_boxes(new) if new is not None else None)


def crop(inpt, top, left, height, width):
    return _by_type(inpt, lambda x: _v1.crop(x, top, left, height, width), _crop_boxes(top, left, height, width))


def pad(inpt, padding, fill=0, padding_mode="constant"):
    return _by_type(inpt, lambda x: _v1.pad(x, padding, fill, padding_mode), _pad_boxes(*_parse_padding(padding)))


def get_size(inpt):
    """[height, width] of an image, mask or boxes (their canvas)"""
    from cthtorch.vision import tv_tensors
    if isinstance(inpt, tv_tensors.BoundingBoxes):
        return list(inpt.canvas_size)
    return list(_size_of(inpt))


def posterize(inpt, bits):
    """v1's on uint8 and PIL images; a float image is cut to 2**bits levels of [0, 1] as v2's is"""
    if isinstance(inpt, cthtorch.Tensor) and inpt.is_floating_point():
        if not 0 <= bits <= 8:
            raise ValueError("The number if bits should be between 0 and 8. Got %s" % bits)
        levels = 1 << bits
        return inpt.mul(levels).floor_().clamp_(0, levels - 1).mul_(1.0 / levels)
    return _v1.posterize(inpt, bits)


def equalize(inpt):
    """v1's on uint8 and PIL images; a float image is equalized as uint8 and scaled back, as v2's is"""
    if isinstance(inpt, cthtorch.Tensor) and inpt.is_floating_point():
        return _v1.convert_image_dtype(_v1.equalize(_v1.convert_image_dtype(inpt, cthtorch.uint8)), inpt.dtype)
    return _v1.equalize(inpt)


def permute_channels(inpt, permutation):
    """the channels of an image in the order permutation gives (a PIL image through a tensor and back)"""
    if _v1._is_pil(inpt):
        return to_pil_image(pil_to_tensor(inpt)[permutation])
    return inpt[..., permutation, :, :]


def jpeg(inpt, quality):
    """An encode/decode round trip through JPEG at quality (1 to 100), with Pillow's libjpeg codec; a uint8
    tensor (..., 1 or 3, H, W) is coded one image at a time. torchvision codes tensors with its own libjpeg
    build, so a tensor's pixels may differ from its by the codecs' rounding."""
    if not 1 <= quality <= 100:
        raise ValueError("quality must be an integer from 1 to 100, got quality =%s" % quality)
    try:
        from PIL import Image
    except ImportError:
        raise NotImplementedError("JPEG needs a JPEG codec: cthtorch.vision codes through Pillow, which is not "
                                  "installed") from None
    import io

    def round_trip(img):
        buffer = io.BytesIO()
        img.save(buffer, format="JPEG", quality=quality)
        buffer.seek(0)
        out = Image.open(buffer)
        out.load()
        return out
    if _v1._is_pil(inpt):
        return round_trip(inpt)
    if inpt.dtype != cthtorch.uint8:
        raise TypeError("Input tensor dtype should be uint8, but got %s." % inpt.dtype)
    if inpt.dim() < 3 or inpt.shape[-3] not in (1, 3):
        raise ValueError("The number of channels should be 1 or 3, got: %s" % (tuple(inpt.shape),))
    flat = inpt.reshape(-1, *inpt.shape[-3:])
    coded = [pil_to_tensor(round_trip(to_pil_image(x))) for x in flat]
    if not coded:
        return inpt.clone()
    return cthtorch.stack(coded).reshape(inpt.shape)


def _warp_by_type(inpt, kernel, interpolation, boxes_fn):
    """kernel(image, interpolation) for images; masks through it with nearest interpolation (a (H, W) mask as
    (1, H, W)); boxes through boxes_fn"""
    from cthtorch.vision import tv_tensors
    if isinstance(inpt, tv_tensors.Mask):
        x = inpt.as_subclass(cthtorch.Tensor)
        squeeze = x.ndim == 2
        out = kernel(x.unsqueeze(0) if squeeze else x, InterpolationMode.NEAREST)
        return tv_tensors.wrap(out.squeeze(0) if squeeze else out, like=inpt)
    return _by_type(inpt, lambda x: kernel(x, interpolation), boxes_fn)


def affine(inpt, angle, translate, scale, shear, interpolation=InterpolationMode.NEAREST, fill=None, center=None):
    return _warp_by_type(inpt, lambda x, i: _v1.affine(x, angle, translate, scale, shear, i, fill, center),
                         interpolation, _affine_boxes(angle, translate, scale, shear, center))


def rotate(inpt, angle, interpolation=InterpolationMode.NEAREST, expand=False, center=None, fill=None):
    from cthtorch.vision import tv_tensors
    if expand and isinstance(inpt, tv_tensors.BoundingBoxes):
        raise NotImplementedError("rotate(expand=True) on bounding boxes is not implemented in cthtorch.vision yet")
    # rotate turns counter-clockwise; the affine map's angle is clockwise
    return _warp_by_type(inpt, lambda x, i: _v1.rotate(x, angle, i, expand, center, fill), interpolation,
                         _affine_boxes(-angle, (0, 0), 1.0, (0.0, 0.0), center))


def perspective(inpt, startpoints, endpoints, interpolation=InterpolationMode.BILINEAR, fill=None,
                coefficients=None):
    if coefficients is not None or startpoints is None or endpoints is None:
        raise NotImplementedError("perspective from coefficients is not implemented in cthtorch.vision; pass "
                                  "startpoints and endpoints")
    return _warp_by_type(inpt, lambda x, i: _v1.perspective(x, startpoints, endpoints, i, fill), interpolation,
                         _perspective_boxes(startpoints, endpoints))


def elastic(inpt, displacement, interpolation=InterpolationMode.BILINEAR, fill=None):
    return _warp_by_type(inpt, lambda x, i: _v1.elastic_transform(x, displacement, i, fill), interpolation,
                         _elastic_boxes(displacement))


elastic_transform = elastic


def center_crop(inpt, output_size):
    ch, cw = _v1._crop_size(output_size)

    def boxes_fn(xyxy, canvas):
        top, left = int(round((canvas[0] - ch) / 2.0)), int(round((canvas[1] - cw) / 2.0))
        return _crop_boxes(top, left, ch, cw)(xyxy, canvas)
    return _by_type(inpt, lambda x: _v1.center_crop(x, [ch, cw]), boxes_fn)


def resized_crop(inpt, top, left, height, width, size, interpolation=InterpolationMode.BILINEAR, antialias=True):
    def boxes_fn(xyxy, canvas):
        xyxy, canvas = _crop_boxes(top, left, height, width)(xyxy, canvas)
        return _resize_boxes(_v1._resize_output_size(height, width, size))(xyxy, canvas)
    return _warp_by_type(inpt, lambda x, i: _v1.resized_crop(x, top, left, height, width, size, i, antialias),
                         interpolation, boxes_fn)


def grayscale_to_rgb(inpt):
    """a one-channel image repeated to three channels (an image with three or more is returned as it is)"""
    if _v1._is_pil(inpt):
        return inpt.convert(mode="RGB")
    if inpt.shape[-3] >= 3:
        return inpt
    return _v1.rgb_to_grayscale(inpt, num_output_channels=3)


def gaussian_noise(inpt, mean=0.0, sigma=0.1, clip=True):
    """inpt plus N(mean, sigma) noise (one randn_like draw), clamped to [0, 1] when clip; float images only"""
    if not isinstance(inpt, cthtorch.Tensor):
        raise TypeError("GaussianNoise only supports tensor images, got %s" % type(inpt).__name__)
    if not inpt.is_floating_point():
        raise ValueError("Input tensor is expected to be in float dtype, got dtype=%s" % inpt.dtype)
    if sigma < 0:
        raise ValueError("sigma shouldn't be negative. Got %s" % sigma)
    out = inpt + (mean + cthtorch.randn_like(inpt) * sigma)
    return out.clamp(0, 1) if clip else out


def uniform_temporal_subsample(inpt, num_samples):
    """num_samples frames of a (..., T, C, H, W) video at evenly spaced indices"""
    t_max = inpt.shape[-4] - 1
    indices = cthtorch.linspace(0, t_max, num_samples).long()
    return cthtorch.index_select(inpt, -4, indices)
