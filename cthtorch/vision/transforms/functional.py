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


def _resize_output_size(h, w, size, max_size=None):
    """(height, width) after resize: an int (or 1-list) sets the shorter side, keeping the aspect ratio"""
    if isinstance(size, int) or (isinstance(size, (list, tuple)) and len(size) == 1):
        s = size if isinstance(size, int) else size[0]
        if h <= w:
            oh, ow = s, int(s * w / h)
        else:
            oh, ow = int(s * h / w), s
        if max_size is not None and max(oh, ow) > max_size:
            r = max_size / max(oh, ow)
            oh, ow = int(oh * r), int(ow * r)
        return oh, ow
    return tuple(size)


def resize(img, size, interpolation=None, max_size=None, antialias=True):
    h, w = _size_of(img)
    oh, ow = _resize_output_size(h, w, size, max_size)
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
    if not img.is_floating_point():   # torchvision rounds back to integers (bicubic's overshoot clamped for uint8)
        if mode == "bicubic" and img.dtype == cthtorch.uint8:
            out = out.clamp(0, 255)
        out = out.round().to(img.dtype)
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
    # every leading dim as a batch of one-channel images: nn.functional.pad's non-constant modes take 3-d or 4-d
    # input for two padded dims
    x = img.reshape(-1, 1, img.shape[-2], img.shape[-1])
    out = cthtorch.nn.functional.pad(x.float() if mode != "constant" and not x.is_floating_point() else x,
                                     [left, right, top, bottom], mode=mode, value=fill if mode == "constant" else None)
    return out.to(img.dtype).reshape(tuple(img.shape[:-2]) + tuple(out.shape[-2:]))


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
    """Rotate counter-clockwise by angle degrees about center (the image centre by default). Tensors are
    resampled through grid_sample on torchvision's affine grid, so they keep their dtype and values."""
    mode = _interp_mode(interpolation if interpolation is not None else InterpolationMode.NEAREST)
    if _is_pil(img):
        fill = _pil_fill(img, fill)
        return img.rotate(angle, _pil_resample(mode, "rotate"), expand=expand, center=center, fillcolor=fill)
    h, w = img.shape[-2], img.shape[-1]
    center_f = [0.0, 0.0] if center is None else [1.0 * (c - s * 0.5) for c, s in zip(center, [w, h])]
    matrix = _inverse_affine(center_f, -angle, [0.0, 0.0], 1.0, [0.0, 0.0])
    ow, oh = _affine_output_size(matrix, w, h) if expand else (w, h)
    return _grid_sample_image(img, _affine_grid(matrix, w, h, ow, oh, img.dtype), mode, fill)


def rgb_to_grayscale(img, num_output_channels=1):
    if _is_pil(img):
        g = img.convert("L")
        if num_output_channels == 3:
            from PIL import Image
            g = Image.merge("RGB", [g, g, g])
        return g
    if img.dim() < 3:
        raise TypeError("Input image tensor should have at least 3 dimensions, but found %d" % img.dim())
    if img.shape[-3] not in (1, 3):
        raise TypeError("Input image tensor permitted channel values are [1, 3], but found %d" % img.shape[-3])
    if num_output_channels not in (1, 3):
        raise ValueError("num_output_channels should be either 1 or 3")
    if img.shape[-3] == 3:
        r, g, b = img[..., 0, :, :], img[..., 1, :, :], img[..., 2, :, :]
        l_img = (0.2989 * r + 0.587 * g + 0.114 * b).to(img.dtype).unsqueeze(-3)
    else:   # already one channel
        l_img = img.clone()
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
    if get_dimensions(img)[0] == 1:   # no colour to saturate, as PIL leaves an "L" image
        return img
    return _blend(img, rgb_to_grayscale(img), saturation_factor)


def adjust_hue(img, hue_factor):
    if not -0.5 <= hue_factor <= 0.5:
        raise ValueError("hue_factor (%s) is not in [-0.5, 0.5]." % hue_factor)
    if not _is_pil(img):
        return _adjust_hue_tensor(img, hue_factor)
    from PIL import Image
    h, s, v = img.convert("HSV").split()
    np_h = np.array(h, dtype=np.uint8)
    np_h = (np_h.astype(np.int16) + int(hue_factor * 255)) % 256
    return Image.merge("HSV", (Image.fromarray(np_h.astype(np.uint8), "L"), s, v)).convert(img.mode)


def _adjust_hue_tensor(img, hue_factor):
    """torchvision's tensor path: in float HSV, any leading batch dims (BYOL jitters whole batches), the hue
    shifted cyclically; a one-channel image is returned as it is, as PIL's L images are"""
    if img.shape[-3] == 1:
        return img
    if img.shape[-3] != 3:
        raise TypeError("Input image tensor permitted channel values are [1, 3], but found %d" % img.shape[-3])
    orig_dtype = img.dtype
    h, s, v = _rgb_to_hsv(convert_image_dtype(img, cthtorch.float32)).unbind(dim=-3)
    rgb = _hsv_to_rgb(cthtorch.stack(((h + hue_factor) % 1.0, s, v), dim=-3))
    return convert_image_dtype(rgb, orig_dtype)


def _rgb_to_hsv(img):
    r, g, b = img.unbind(dim=-3)
    maxc = cthtorch.max(img, dim=-3).values
    minc = cthtorch.min(img, dim=-3).values
    eqc = maxc == minc
    cr = maxc - minc
    ones = cthtorch.ones_like(maxc)
    s = cr / cthtorch.where(eqc, ones, maxc)   # grey pixels: saturation and hue 0, no division by zero
    cr_divisor = cthtorch.where(eqc, ones, cr)
    rc, gc, bc = (maxc - r) / cr_divisor, (maxc - g) / cr_divisor, (maxc - b) / cr_divisor
    hr = (maxc == r) * (bc - gc)
    hg = ((maxc == g) & (maxc != r)) * (2.0 + rc - bc)
    hb = ((maxc != g) & (maxc != r)) * (4.0 + gc - rc)
    h = cthtorch.fmod((hr + hg + hb) / 6.0 + 1.0, 1.0)
    return cthtorch.stack((h, s, maxc), dim=-3)


def _hsv_to_rgb(img):
    h, s, v = img.unbind(dim=-3)
    i = cthtorch.floor(h * 6.0)
    f = h * 6.0 - i
    i = i.to(dtype=cthtorch.int32) % 6
    p = cthtorch.clamp(v * (1.0 - s), 0.0, 1.0)
    q = cthtorch.clamp(v * (1.0 - s * f), 0.0, 1.0)
    t = cthtorch.clamp(v * (1.0 - s * (1.0 - f)), 0.0, 1.0)
    # the sextant picks each output channel from (v, q, p, t): a one-hot mask over the six cases
    mask = (i.unsqueeze(dim=-3) == cthtorch.arange(6).view(-1, 1, 1)).to(img.dtype)
    a = cthtorch.stack((cthtorch.stack((v, q, p, p, t, v), dim=-3), cthtorch.stack((t, v, v, q, p, p), dim=-3),
                        cthtorch.stack((p, p, t, v, v, q), dim=-3)), dim=-4)
    return cthtorch.einsum("...ijk, ...xijk -> ...xjk", mask, a)


def _bound(img):
    return 1.0 if img.is_floating_point() else float(_max_value(img.dtype))


def _pil_or_tensor(img, pil_fn, tensor_fn):
    return pil_fn(img) if _is_pil(img) else tensor_fn(img)


def _check_tensor_image(img):
    if not isinstance(img, cthtorch.Tensor):
        raise TypeError("img should be PIL Image or Tensor. Got %s" % type(img))
    if img.dim() < 3:
        raise TypeError("Tensor is not a torch image.")


def invert(img):
    """Each value v becomes MAX - v (1 - v for float images)."""
    if _is_pil(img):
        from PIL import ImageOps
        return ImageOps.invert(img)
    _check_tensor_image(img)
    if img.dtype == cthtorch.uint8:
        return img.bitwise_not()
    return (_bound(img) - img).to(img.dtype)


def posterize(img, bits):
    """Keep the `bits` high bits of each uint8 value."""
    if not 0 <= bits <= 8:
        raise ValueError("The number if bits should be between 0 and 8. Got %s" % bits)
    if _is_pil(img):
        from PIL import ImageOps
        return ImageOps.posterize(img, bits)
    _check_tensor_image(img)
    if img.dtype != cthtorch.uint8:
        raise TypeError("Only torch.uint8 image tensors are supported, but found %s" % img.dtype)
    return img.bitwise_and((0xFF << (8 - bits)) & 0xFF)


def solarize(img, threshold):
    """Invert the values at or above threshold."""
    if _is_pil(img):
        from PIL import ImageOps
        return ImageOps.solarize(img, threshold)
    _check_tensor_image(img)
    if threshold > _bound(img):
        raise TypeError("Threshold should be less than bound of img.")
    return cthtorch.where(img >= threshold, invert(img), img)


def adjust_sharpness(img, sharpness_factor):
    """Blend with a 3x3 smoothed copy (PIL's SMOOTH kernel, borders kept): 0 smooths, 1 keeps, 2 sharpens."""
    if sharpness_factor < 0:
        raise ValueError("sharpness_factor (%s) is not non-negative." % sharpness_factor)
    if _is_pil(img):
        from PIL import ImageEnhance
        return ImageEnhance.Sharpness(img).enhance(sharpness_factor)
    _check_tensor_image(img)
    if img.shape[-1] <= 2 or img.shape[-2] <= 2:
        return img
    x = img.reshape(-1, 1, img.shape[-2], img.shape[-1]).float()
    kernel = cthtorch.ones(1, 1, 3, 3)
    kernel[0, 0, 1, 1] = 5.0
    smooth = cthtorch.nn.functional.conv2d(x, kernel / 13.0)
    if not img.is_floating_point():
        smooth = smooth.round()
    degenerate = x.clone()
    degenerate[..., 1:-1, 1:-1] = smooth
    degenerate = degenerate.reshape(img.shape).to(img.dtype)
    return _blend(img, degenerate, sharpness_factor)


def autocontrast(img):
    """Stretch each channel so its darkest value becomes 0 and its brightest the maximum."""
    if _is_pil(img):
        from PIL import ImageOps
        return ImageOps.autocontrast(img)
    _check_tensor_image(img)
    bound = _bound(img)
    x = img.float() if not img.is_floating_point() else img
    lo = x.amin(dim=(-2, -1), keepdim=True)
    hi = x.amax(dim=(-2, -1), keepdim=True)
    flat = hi == lo    # a constant channel stays as it is
    lo = cthtorch.where(flat, cthtorch.zeros_like(lo), lo)
    scale = cthtorch.where(flat, cthtorch.ones_like(hi), bound / (hi - lo).masked_fill(flat, 1.0))
    return ((x - lo) * scale).clamp(0, bound).to(img.dtype)


def equalize(img):
    """Histogram equalisation of each channel of a uint8 image (PIL's table), all channels at once."""
    if _is_pil(img):
        from PIL import ImageOps
        return ImageOps.equalize(img)
    _check_tensor_image(img)
    if img.dtype != cthtorch.uint8:
        raise TypeError("Only torch.uint8 image tensors are supported, but found %s" % img.dtype)
    flat = img.reshape(math.prod(img.shape[:-2]), img.shape[-2] * img.shape[-1]).long()
    hist = cthtorch.zeros(flat.shape[0], 256, dtype=cthtorch.int64).scatter_add_(1, flat, cthtorch.ones_like(flat))
    # PIL's step: the pixels outside the last occupied bin, over 255; a channel with step 0 stays as it is
    last_bin = 255 - (hist > 0).flip(1).int().argmax(1, keepdim=True)
    step = (flat.shape[1] - hist.gather(1, last_bin)) // 255
    lut = ((hist.cumsum(1) - hist + step // 2) // step.clamp(min=1)).clamp(0, 255)
    out = cthtorch.where(step == 0, flat, lut.gather(1, flat))
    return out.to(cthtorch.uint8).reshape(img.shape)


def adjust_gamma(img, gamma, gain=1):
    """out = MAX * gain * (in / MAX) ** gamma."""
    if gamma < 0:
        raise ValueError("Gamma should be a non-negative real number")
    if _is_pil(img):
        lut = [min(255, int((255 + 1 - 1e-3) * gain * pow(v / 255.0, gamma))) for v in range(256)]
        mode = img.mode
        out = img.convert("RGB") if mode not in ("L", "RGB") else img
        out = out.point(lut * len(out.getbands()))
        return out.convert(mode) if out.mode != mode else out
    _check_tensor_image(img)
    x = convert_image_dtype(img, cthtorch.float32) if not img.is_floating_point() else img
    out = (gain * x.pow(gamma)).clamp(0, 1)
    return convert_image_dtype(out, img.dtype) if not img.is_floating_point() else out


def _gaussian_kernel1d(size, sigma):
    half = (size - 1) * 0.5
    x = cthtorch.linspace(-half, half, steps=size)
    pdf = cthtorch.exp(-0.5 * (x / sigma).pow(2))
    return pdf / pdf.sum()


def gaussian_blur(img, kernel_size, sigma=None):
    """Separable Gaussian blur with reflect padding; sigma defaults to 0.3 * ((k - 1) * 0.5 - 1) + 0.8."""
    if isinstance(kernel_size, int):
        kernel_size = [kernel_size, kernel_size]
    kernel_size = list(kernel_size)
    if len(kernel_size) == 1:
        kernel_size = kernel_size * 2
    if len(kernel_size) != 2:
        raise ValueError("If kernel_size is a sequence its length should be 2. Got %d" % len(kernel_size))
    for k in kernel_size:
        if k <= 0 or k % 2 == 0:
            raise ValueError("kernel_size should have odd and positive integers. Got %s" % kernel_size)
    if sigma is None:
        sigma = [k * 0.15 + 0.35 for k in kernel_size]
    elif isinstance(sigma, (int, float)):
        sigma = [float(sigma), float(sigma)]
    else:
        sigma = [float(s) for s in sigma]
        if len(sigma) == 1:
            sigma = sigma * 2
    if len(sigma) != 2:
        raise ValueError("If sigma is a sequence, its length should be 2. Got %d" % len(sigma))
    for s in sigma:
        if s <= 0.0:
            raise ValueError("sigma should have positive values. Got %s" % sigma)
    pil = _is_pil(img)
    t = pil_to_tensor(img) if pil else img
    if not pil:
        _check_tensor_image(t)
    kx = _gaussian_kernel1d(kernel_size[0], sigma[0])
    ky = _gaussian_kernel1d(kernel_size[1], sigma[1])
    kernel = (ky[:, None] * kx[None, :])[None, None]
    x = t.reshape(-1, 1, t.shape[-2], t.shape[-1])
    x = x.float() if not x.is_floating_point() else x
    x = cthtorch.nn.functional.pad(x, [kernel_size[0] // 2] * 2 + [kernel_size[1] // 2] * 2, mode="reflect")
    out = cthtorch.nn.functional.conv2d(x, kernel.to(x.dtype)).reshape(t.shape)
    if not t.is_floating_point():
        out = out.round().clamp(0, _bound(t)).to(t.dtype)
    return to_pil_image(out, mode=img.mode) if pil else out


def resized_crop(img, top, left, height, width, size, interpolation=None, antialias=True):
    return resize(crop(img, top, left, height, width), size, interpolation, antialias=antialias)


def _crop_size(size):
    if isinstance(size, numbers.Number):
        return int(size), int(size)
    if len(size) == 1:
        return size[0], size[0]
    if len(size) != 2:
        raise ValueError("Please provide only two dimensions (h, w) for size.")
    return tuple(size)


def five_crop(img, size):
    """The four corner crops and the centre crop, in that order (tl, tr, bl, br, center)."""
    ch, cw = _crop_size(size)
    h, w = _size_of(img)
    if ch > h or cw > w:
        raise ValueError("Requested crop size %s is bigger than input size %s" % ((ch, cw), (h, w)))
    return (crop(img, 0, 0, ch, cw), crop(img, 0, w - cw, ch, cw), crop(img, h - ch, 0, ch, cw),
            crop(img, h - ch, w - cw, ch, cw), center_crop(img, [ch, cw]))


def ten_crop(img, size, vertical_flip=False):
    """five_crop of the image, then five_crop of its (horizontally, else vertically) flipped copy."""
    size = _crop_size(size)
    flipped = vflip(img) if vertical_flip else hflip(img)
    return five_crop(img, size) + five_crop(flipped, size)


def _inverse_affine(center, angle, translate, scale, shear):
    """The matrix taking output pixel coordinates back to input ones for the forward map
    p -> C + T + R(angle) Sh(shear) * scale (p - C), angle and shear in degrees (clockwise on screen).
    The rotation-shear part has determinant 1, so its inverse is its adjugate; the arithmetic is in
    torchvision's order so the float32 grids built from it agree bit for bit."""
    rot, sx, sy = math.radians(angle), math.radians(shear[0]), math.radians(shear[1])
    cx, cy = center
    tx, ty = translate
    # forward linear part [[a, b], [c, d]] = rotation by rot composed with the x/y shears
    a = math.cos(rot - sy) / math.cos(sy)
    b = -math.cos(rot - sy) * math.tan(sx) / math.cos(sy) - math.sin(rot)
    c = math.sin(rot - sy) / math.cos(sy)
    d = -math.sin(rot - sy) * math.tan(sx) / math.cos(sy) + math.cos(rot)
    m = [x / scale for x in (d, -b, 0.0, -c, a, 0.0)]
    # p = C + M^-1 (p' - C - T)
    m[2] += m[0] * (-cx - tx) + m[1] * (-cy - ty) + cx
    m[5] += m[3] * (-cx - tx) + m[4] * (-cy - ty) + cy
    return m


def _affine_grid(matrix, w, h, ow, oh, img_dtype):
    """(1, oh, ow, 2) grid_sample grid for an inverse affine matrix in pixels about the image centre: output
    pixel centres (centred on 0) times the matrix, scaled to [-1, 1] by the input size (torchvision's
    _gen_affine_grid, in the image's float dtype, float32 for integer images)."""
    dtype = img_dtype if img_dtype.is_floating_point else cthtorch.float32
    theta = cthtorch.tensor(matrix, dtype=dtype).reshape(1, 2, 3)
    base = cthtorch.empty(1, oh, ow, 3, dtype=dtype)
    base[..., 0].copy_(cthtorch.linspace(-ow * 0.5 + 0.5, ow * 0.5 - 0.5, steps=ow))
    base[..., 1].copy_(cthtorch.linspace(-oh * 0.5 + 0.5, oh * 0.5 - 0.5, steps=oh).unsqueeze_(-1))
    base[..., 2].fill_(1)
    rescaled = theta.transpose(1, 2) / cthtorch.tensor([0.5 * w, 0.5 * h], dtype=dtype)
    return base.view(1, oh * ow, 3).bmm(rescaled).view(1, oh, ow, 2)


def _affine_output_size(matrix, w, h):
    """(width, height) enclosing the input's corners moved by the forward map (rotate's expand=True);
    bounds are cut to 1e-4 first so float noise does not add a pixel"""
    pts = cthtorch.tensor([[-0.5 * w, -0.5 * h, 1.0], [-0.5 * w, 0.5 * h, 1.0],
                           [0.5 * w, 0.5 * h, 1.0], [0.5 * w, -0.5 * h, 1.0]])
    theta = cthtorch.tensor(matrix, dtype=cthtorch.float32).view(2, 3)
    moved = cthtorch.matmul(pts, theta.T)
    lo, hi = moved.min(dim=0)[0], moved.max(dim=0)[0]
    tol = 1e-4
    size = cthtorch.ceil((hi / tol).trunc_() * tol) - cthtorch.floor((lo / tol).trunc_() * tol)
    return int(size[0]), int(size[1])


def _pil_fill(img, fill):
    """fill as PIL's fillcolor: one int per band (a number or a 1-list for every band), 0 when None"""
    if fill is None:
        return None
    bands = len(img.getbands())
    fills = list(fill) if isinstance(fill, (list, tuple)) else [fill]
    if len(fills) == 1:
        fills = fills * bands
    if len(fills) != bands:
        raise ValueError("The number of elements in 'fill' does not match the number of channels of the image "
                         "(%d != %d)" % (len(fills), bands))
    fills = [f if img.mode == "F" else int(f) for f in fills]
    return fills[0] if bands == 1 else tuple(fills)


def _pil_resample(mode, what):
    from PIL import Image
    resample = {InterpolationMode.NEAREST: Image.NEAREST, InterpolationMode.BILINEAR: Image.BILINEAR,
                InterpolationMode.BICUBIC: Image.BICUBIC}.get(mode)
    if resample is None:
        raise ValueError("%s supports nearest, bilinear and bicubic interpolation, not %s" % (what, mode.value))
    return resample


def affine(img, angle, translate, scale, shear, interpolation=None, fill=None, center=None):
    """Rotate (clockwise, degrees), translate (pixels), scale and shear (degrees) about the centre.
    Tensor images are resampled through grid_sample as rotate's are."""
    if not isinstance(angle, (int, float)):
        raise TypeError("Argument angle should be int or float")
    if not isinstance(translate, (list, tuple)) or len(translate) != 2:
        raise ValueError("Argument translate should be a sequence of length 2")
    if scale <= 0.0:
        raise ValueError("Argument scale should be positive")
    if isinstance(shear, numbers.Number):
        shear = [shear, 0.0]
    shear = list(shear)
    if len(shear) == 1:
        shear = [shear[0], shear[0]]
    if len(shear) != 2:
        raise ValueError("Shear should be a sequence containing two values. Got %s" % shear)
    mode = _interp_mode(interpolation if interpolation is not None else InterpolationMode.NEAREST)
    if _is_pil(img):
        from PIL import Image
        w, h = img.size
        c = (w * 0.5, h * 0.5) if center is None else tuple(center)
        matrix = _inverse_affine(c, angle, translate, scale, shear)
        fill = _pil_fill(img, fill)
        return img.transform((w, h), Image.AFFINE, matrix, _pil_resample(mode, "affine"), fillcolor=fill)
    h, w = img.shape[-2], img.shape[-1]
    # the tensor path works about the image centre, as its grid does
    center_f = [0.0, 0.0] if center is None else [1.0 * (c - s * 0.5) for c, s in zip(center, [w, h])]
    matrix = _inverse_affine(center_f, angle, [1.0 * t for t in translate], scale, shear)
    return _grid_sample_image(img, _affine_grid(matrix, w, h, w, h, img.dtype), mode, fill)


def _perspective_coeffs(startpoints, endpoints):
    """The 8 coefficients (a, b, c, d, e, f, g, h) of the projective map that takes each of the four endpoints
    to its startpoint: x_in = (a x + b y + c) / (g x + h y + 1), y_in = (d x + e y + f) / (g x + h y + 1).
    Output pixels are pulled from the input through it (PIL's PERSPECTIVE data). Two equations per point pair,
    solved by least squares in float64."""
    if len(startpoints) != 4 or len(endpoints) != 4:
        raise ValueError("Please provide only four corners for startpoints and endpoints. Got %d startpoints and "
                         "%d endpoints." % (len(startpoints), len(endpoints)))
    rows, rhs = [], []
    for (xo, yo), (xi, yi) in zip(endpoints, startpoints):
        rows.append([xo, yo, 1.0, 0.0, 0.0, 0.0, -xi * xo, -xi * yo])
        rows.append([0.0, 0.0, 0.0, xo, yo, 1.0, -yi * xo, -yi * yo])
        rhs += [xi, yi]
    a = cthtorch.tensor(rows, dtype=cthtorch.float64)
    b = cthtorch.tensor(rhs, dtype=cthtorch.float64).unsqueeze(1)
    return cthtorch.linalg.lstsq(a, b).solution.squeeze(1).tolist()


def _grid_sample_image(img, grid, mode, fill):
    """img (..., C, H, W) sampled at grid (1, H', W', 2; normalized, pixel-centre convention), outside pixels
    set to fill (0 when None). Integer images are sampled in float and rounded back."""
    if mode not in (InterpolationMode.NEAREST, InterpolationMode.BILINEAR):
        raise ValueError("Interpolation mode '%s' is unsupported with Tensor input" % mode.value)
    shape = img.shape
    x = img.reshape(-1, shape[-3] if img.dim() > 2 else 1, shape[-2], shape[-1])
    dt = x.dtype
    xf = x if x.is_floating_point() else x.to(cthtorch.float32)
    grid = grid.to(xf.dtype).expand(xf.shape[0], *grid.shape[1:])
    if fill is not None:   # sample a channel of ones too: where it comes back below 1, the pixel left the image
        xf = cthtorch.cat([xf, cthtorch.ones_like(xf[:, :1])], dim=1)
    out = cthtorch.nn.functional.grid_sample(xf, grid, mode=mode.value, padding_mode="zeros", align_corners=False)
    if fill is not None:
        out, mask = out[:, :-1], out[:, -1:]
        fills = fill if isinstance(fill, (list, tuple)) else [fill]
        if len(fills) not in (1, out.shape[1]):
            raise ValueError("The number of elements in 'fill' cannot broadcast to match the number of channels "
                             "of the image (%d != %d)" % (len(fills), out.shape[1]))
        f = cthtorch.tensor(fills, dtype=out.dtype).view(1, -1, 1, 1)
        if mode == InterpolationMode.NEAREST:
            mask = (mask >= 0.5).to(out.dtype)
        out = out * mask + (1.0 - mask) * f
    if not dt.is_floating_point:
        out = out.round().clamp(0, _max_value(dt)).to(dt)
    return out.reshape(shape[:-2] + out.shape[-2:])


def _pixel_grid(h, w):
    """(1, h, w, 2) of output pixel centres (x + 0.5, y + 0.5) in pixels"""
    ys = cthtorch.arange(h, dtype=cthtorch.float64) + 0.5
    xs = cthtorch.arange(w, dtype=cthtorch.float64) + 0.5
    return cthtorch.stack([xs.expand(h, w), ys[:, None].expand(h, w)], dim=-1).unsqueeze(0)


def perspective(img, startpoints, endpoints, interpolation=InterpolationMode.BILINEAR, fill=None):
    """Warp img so that the four startpoints (corners, [x, y] in pixels: top-left, top-right, bottom-right,
    bottom-left) land on the endpoints."""
    coeffs = _perspective_coeffs(startpoints, endpoints)
    mode = _interp_mode(interpolation)
    if _is_pil(img):
        from PIL import Image
        resample = _pil_resample(mode, "perspective")
        fill = _pil_fill(img, fill)
        return img.transform(img.size, Image.PERSPECTIVE, coeffs, resample, fillcolor=fill)
    _check_tensor_image(img)
    h, w = img.shape[-2], img.shape[-1]
    a, b, c, d, e, f, g, k = coeffs
    p = _pixel_grid(h, w)
    x, y = p[..., 0], p[..., 1]
    den = g * x + k * y + 1.0
    xin, yin = (a * x + b * y + c) / den, (d * x + e * y + f) / den
    grid = cthtorch.stack([xin / (w * 0.5) - 1.0, yin / (h * 0.5) - 1.0], dim=-1)
    return _grid_sample_image(img, grid, mode, fill)


def elastic_transform(img, displacement, interpolation=InterpolationMode.BILINEAR, fill=None):
    """Move each output pixel's sample point by displacement (1, H, W, 2: x and y offsets in grid_sample's
    normalized [-1, 1] units) from where it would be; PIL images go through a tensor and back."""
    if not isinstance(displacement, cthtorch.Tensor):
        raise TypeError("Argument displacement should be a Tensor")
    pil = _is_pil(img)
    t = pil_to_tensor(img) if pil else img
    if not pil:
        _check_tensor_image(t)
    h, w = t.shape[-2], t.shape[-1]
    if tuple(displacement.shape) != (1, h, w, 2):
        raise ValueError("Argument displacement shape should be (1, %d, %d, 2), but given %s"
                         % (h, w, list(displacement.shape)))
    base = _pixel_grid(h, w) / cthtorch.tensor([w * 0.5, h * 0.5], dtype=cthtorch.float64) - 1.0
    grid = base + displacement.to(cthtorch.float64)
    out = _grid_sample_image(t, grid, _interp_mode(interpolation), fill)
    return to_pil_image(out, mode=img.mode) if pil else out
