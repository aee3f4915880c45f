"""Functional transforms on PIL images, numpy arrays and tensors (C, H, W)."""
import math
import numbers
from enum import Enum

import numpy as np

import cthtorch


class InterpolationMode(Enum):
    """torchvision's interpolation names; the value is what F.interpolate / PIL are asked for."""
    NEAREST = "nearest"
    NEAREST_EXACT = "nearest-exact"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"
    BOX = "box"
    HAMMING = "hamming"
    LANCZOS = "lanczos"


def _interp_mode(interpolation):
    """An InterpolationMode from what a caller passed: the enum, its value string, a PIL constant or None."""
    if interpolation is None:
        return InterpolationMode.BILINEAR
    if isinstance(interpolation, InterpolationMode):
        return interpolation
    if isinstance(interpolation, int):
        # PIL's constants: NEAREST 0, LANCZOS 1, BILINEAR 2, BICUBIC 3, BOX 4, HAMMING 5
        pil = {0: "nearest", 1: "lanczos", 2: "bilinear", 3: "bicubic", 4: "box", 5: "hamming"}
        if interpolation not in pil:
            raise ValueError("Interpolation mode %d is not supported" % interpolation)
        return InterpolationMode(pil[interpolation])
    name = str(interpolation).split(".")[-1].lower().replace("_", "-")
    return InterpolationMode(name)


def get_dimensions(img):
    """[channels, height, width] of a PIL image or a (..., C, H, W) tensor."""
    if _is_pil(img):
        return [len(img.getbands()), img.size[1], img.size[0]]
    if img.dim() < 2:
        raise TypeError("Tensor is not a torch image.")
    channels = 1 if img.dim() == 2 else img.shape[-3]
    return [channels, img.shape[-2], img.shape[-1]]


def get_image_size(img):
    """[width, height], as torchvision's (deprecated) helper returns it."""
    _, h, w = get_dimensions(img)
    return [w, h]


def get_image_num_channels(img):
    return get_dimensions(img)[0]


def erase(img, i, j, h, w, v, inplace=False):
    """Write v into img[..., i:i+h, j:j+w] (a tensor image, as torchvision requires)."""
    if not isinstance(img, cthtorch.Tensor):
        raise TypeError("img should be Tensor Image. Got %s" % type(img))
    if not inplace:
        img = img.clone()
    img[..., i:i + h, j:j + w] = v
    return img


def _is_pil(img):
    try:
        from PIL import Image
    except ImportError:
        return False
    return isinstance(img, Image.Image)


def to_tensor(pic):
    if _is_pil(pic):
        a = np.array(pic, copy=True)
        if pic.mode == "1":
            a = a.astype(np.uint8) * 255
    elif isinstance(pic, np.ndarray):
        a = pic
    else:
        raise TypeError("pic should be PIL Image or ndarray. Got %s" % type(pic))
    if a.ndim == 2:
        a = a[:, :, None]
    t = cthtorch.from_numpy(np.ascontiguousarray(a.transpose(2, 0, 1)))
    if t.dtype == cthtorch.uint8:
        return t.float().div(255)
    return t


def pil_to_tensor(pic):
    a = np.array(pic, copy=True)
    if a.ndim == 2:
        a = a[:, :, None]
    return cthtorch.from_numpy(np.ascontiguousarray(a.transpose(2, 0, 1)))


def to_pil_image(pic, mode=None):
    from PIL import Image
    if isinstance(pic, cthtorch.Tensor):
        a = pic.detach()
        if a.is_floating_point():
            a = (a * 255).clamp(0, 255).to(cthtorch.uint8)
        a = a.numpy()
        a = a.transpose(1, 2, 0) if a.ndim == 3 else a
    else:
        a = pic
    if a.ndim == 3 and a.shape[2] == 1:
        a = a[:, :, 0]
    return Image.fromarray(np.ascontiguousarray(a), mode=mode)


_INT_MAX = {"uint8": 255, "int8": 127, "int16": 32767, "int32": 2 ** 31 - 1, "int64": 2 ** 63 - 1}


def _max_value(dtype):
    return _INT_MAX[str(dtype).split(".")[-1]]


def convert_image_dtype(image, dtype=cthtorch.float32):
    """torchvision's rules: floats are in [0, 1], integers in [0, MAX]; int->int scales by a power of two."""
    if image.dtype == dtype:
        return image
    if image.is_floating_point():
        if dtype.is_floating_point:
            return image.to(dtype)
        eps = 1e-3
        return image.mul(_max_value(dtype) + 1.0 - eps).to(dtype)
    m_in = _max_value(image.dtype)
    if dtype.is_floating_point:
        return image.to(dtype) / m_in
    m_out = _max_value(dtype)
    if m_in > m_out:
        factor = (m_in + 1) // (m_out + 1)
        return cthtorch.div(image, factor, rounding_mode="floor").to(dtype)
    factor = (m_out + 1) // (m_in + 1)
    return image.to(dtype) * factor


def normalize(tensor, mean, std, inplace=False):
    if not isinstance(tensor, cthtorch.Tensor):
        raise TypeError("img should be Tensor Image. Got %s" % type(tensor))
    if not tensor.is_floating_point():
        raise TypeError("Input tensor should be a float tensor. Got %s." % tensor.dtype)
    if tensor.dim() < 3:
        raise ValueError("Expected tensor to be a tensor image of size (..., C, H, W). Got tensor.size() = %s" % (tensor.size(),))
    mean = cthtorch.as_tensor(mean, dtype=tensor.dtype)
    std = cthtorch.as_tensor(std, dtype=tensor.dtype)
    if (std == 0).any():
        raise ValueError("std evaluated to zero after conversion to %s, leading to division by zero." % tensor.dtype)
    if mean.dim() == 1:
        mean = mean.view(-1, 1, 1)
    if std.dim() == 1:
        std = std.view(-1, 1, 1)
    if inplace:
        return tensor.sub_(mean).div_(std)
    return (tensor - mean) / std


def _size_of(img):
    if _is_pil(img):
        return img.size[1], img.size[0]
    return img.shape[-2], img.shape[-1]


def resize(img, size, interpolation=None, max_size=None, antialias=True):
    h, w = _size_of(img)
    if isinstance(size, int) or (isinstance(size, (list, tuple)) and len(size) == 1):
        s = size if isinstance(size, int) else size[0]
        if h <= w:
            oh, ow = s, int(s * w / h)
        else:
            oh, ow = int(s * h / w), s
        if max_size is not None and max(oh, ow) > max_size:
            r = max_size / max(oh, ow)
            oh, ow = int(oh * r), int(ow * r)
    else:
        oh, ow = size
    if _is_pil(img):
        return img.resize((ow, oh), _pil_interp(interpolation))
    x = img.unsqueeze(0) if img.dim() == 3 else img
    mode = _interp_mode(interpolation).value
    if mode not in ("nearest", "nearest-exact", "bilinear", "bicubic"):
        raise ValueError("Input image tensor does not support %s interpolation; use nearest, nearest-exact, "
                         "bilinear or bicubic" % mode)
    smooth = mode in ("bilinear", "bicubic")
    out = cthtorch.nn.functional.interpolate(x.float() if not x.is_floating_point() else x, size=(oh, ow), mode=mode,
                                             align_corners=False if smooth else None,
                                             antialias=bool(antialias) and smooth)
    out = out.to(img.dtype) if not img.is_floating_point() else out
    return out.squeeze(0) if img.dim() == 3 else out


def _pil_interp(interp):
    from PIL import Image
    mode = _interp_mode(interp)
    # torchvision resizes a PIL image with NEAREST for nearest-exact too
    table = {InterpolationMode.NEAREST: Image.NEAREST, InterpolationMode.NEAREST_EXACT: Image.NEAREST,
             InterpolationMode.BILINEAR: Image.BILINEAR,
             InterpolationMode.BICUBIC: Image.BICUBIC, InterpolationMode.LANCZOS: Image.LANCZOS,
             InterpolationMode.BOX: Image.BOX, InterpolationMode.HAMMING: Image.HAMMING}
    if mode not in table:
        raise ValueError("PIL images do not support %s interpolation" % mode.value)
    return table[mode]


def crop(img, top, left, height, width):
    if _is_pil(img):
        return img.crop((left, top, left + width, top + height))
    h, w = img.shape[-2:]
    if top < 0 or left < 0 or top + height > h or left + width > w:
        pad_ = [max(-left, 0), max(-top, 0), max(left + width - w, 0), max(top + height - h, 0)]
        img = pad(img, pad_)
        top, left = top + pad_[1], left + pad_[0]
    return img[..., top:top + height, left:left + width]


def center_crop(img, output_size):
    if isinstance(output_size, numbers.Number):
        output_size = (int(output_size), int(output_size))
    elif len(output_size) == 1:
        output_size = (output_size[0], output_size[0])
    h, w = _size_of(img)
    ch, cw = output_size
    if ch > h or cw > w:   # torchvision pads first, the odd pixel going bottom/right
        img = pad(img, [(cw - w) // 2 if cw > w else 0, (ch - h) // 2 if ch > h else 0,
                        (cw - w + 1) // 2 if cw > w else 0, (ch - h + 1) // 2 if ch > h else 0])
        h, w = _size_of(img)
        if ch == h and cw == w:
            return img
    top = int(round((h - ch) / 2.0))
    left = int(round((w - cw) / 2.0))
    return crop(img, top, left, ch, cw)


def pad(img, padding, fill=0, padding_mode="constant"):
    if isinstance(padding, int):
        padding = [padding] * 4
    elif len(padding) == 2:
        padding = [padding[0], padding[1], padding[0], padding[1]]
    left, top, right, bottom = padding
    if _is_pil(img):
        a = np.array(img)
        widths = [(top, bottom), (left, right)] + ([(0, 0)] if a.ndim == 3 else [])
        if padding_mode == "constant":
            a = np.pad(a, widths, mode="constant", constant_values=fill)
        else:
            a = np.pad(a, widths, mode={"edge": "edge", "reflect": "reflect", "symmetric": "symmetric"}[padding_mode])
        from PIL import Image
        return Image.fromarray(a, mode=img.mode)
    if padding_mode == "symmetric":   # edge pixel repeated; nn.functional.pad has no such mode
        out = img
        for dim, (lo, hi) in ((-2, (top, bottom)), (-1, (left, right))):
            n = out.shape[dim]   # position p of the padded axis reads p mirrored with period 2n (edge kept)
            idx = [p % (2 * n) if p % (2 * n) < n else 2 * n - 1 - p % (2 * n) for p in range(-lo, n + hi)]
            out = out.index_select(dim, cthtorch.tensor(idx, dtype=cthtorch.int64))
        return out
    mode = {"constant": "constant", "edge": "replicate", "reflect": "reflect"}[padding_mode]
    x = img.unsqueeze(0) if img.dim() == 3 else img
    out = cthtorch.nn.functional.pad(x.float() if mode != "constant" and not x.is_floating_point() else x,
                                     [left, right, top, bottom], mode=mode, value=fill if mode == "constant" else None)
    out = out.to(img.dtype)
    return out.squeeze(0) if img.dim() == 3 else out


def hflip(img):
    if _is_pil(img):
        from PIL import Image
        return img.transpose(Image.FLIP_LEFT_RIGHT)
    return img.flip(-1)


def vflip(img):
    if _is_pil(img):
        from PIL import Image
        return img.transpose(Image.FLIP_TOP_BOTTOM)
    return img.flip(-2)


def rotate(img, angle, interpolation=None, expand=False, center=None, fill=None):
    if _is_pil(img):
        return img.rotate(angle, expand=expand, center=center, fillcolor=fill)
    pil = to_pil_image(img)
    out = pil_to_tensor(pil.rotate(angle, expand=expand, center=center, fillcolor=fill))
    return convert_image_dtype(out, img.dtype) if img.is_floating_point() else out


def rgb_to_grayscale(img, num_output_channels=1):
    if _is_pil(img):
        g = img.convert("L")
        if num_output_channels == 3:
            from PIL import Image
            g = Image.merge("RGB", [g, g, g])
        return g
    r, g, b = img[..., 0, :, :], img[..., 1, :, :], img[..., 2, :, :]
    l_img = (0.2989 * r + 0.587 * g + 0.114 * b).to(img.dtype).unsqueeze(-3)
    return l_img.expand(*img.shape[:-3], num_output_channels, *img.shape[-2:]) if num_output_channels == 3 else l_img


to_grayscale = rgb_to_grayscale


def _blend(img1, img2, ratio):
    bound = 1.0 if img1.is_floating_point() else 255.0
    return (ratio * img1 + (1.0 - ratio) * img2).clamp(0, bound).to(img1.dtype)


def adjust_brightness(img, brightness_factor):
    if _is_pil(img):
        from PIL import ImageEnhance
        return ImageEnhance.Brightness(img).enhance(brightness_factor)
    return _blend(img, cthtorch.zeros_like(img), brightness_factor)


def adjust_contrast(img, contrast_factor):
    if _is_pil(img):
        from PIL import ImageEnhance
        return ImageEnhance.Contrast(img).enhance(contrast_factor)
    mean = rgb_to_grayscale(img).float().mean((-3, -2, -1), keepdim=True) if img.shape[-3] == 3 else \
        img.float().mean((-3, -2, -1), keepdim=True)
    return _blend(img, mean, contrast_factor)


def adjust_saturation(img, saturation_factor):
    if _is_pil(img):
        from PIL import ImageEnhance
        return ImageEnhance.Color(img).enhance(saturation_factor)
    return _blend(img, rgb_to_grayscale(img), saturation_factor)


def adjust_hue(img, hue_factor):
    if not -0.5 <= hue_factor <= 0.5:
        raise ValueError("hue_factor (%s) is not in [-0.5, 0.5]." % hue_factor)
    pil = img if _is_pil(img) else to_pil_image(img)
    from PIL import Image
    h, s, v = pil.convert("HSV").split()
    np_h = np.array(h, dtype=np.uint8)
    np_h = (np_h.astype(np.int16) + int(hue_factor * 255)) % 256
    out = Image.merge("HSV", (Image.fromarray(np_h.astype(np.uint8), "L"), s, v)).convert(pil.mode)
    return out if _is_pil(img) else convert_image_dtype(pil_to_tensor(out), img.dtype)
