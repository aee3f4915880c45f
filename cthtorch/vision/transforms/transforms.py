"""Transform classes (torchvision.transforms)."""
import math
import numbers
import random

import cthtorch
from cthtorch.vision.transforms import functional as F
from cthtorch.vision.transforms.functional import InterpolationMode  # noqa: F401 (torchvision.transforms exports it)


class Compose:
    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self):
        lines = [self.__class__.__name__ + "("]
        for t in self.transforms:
            lines.append("    {0}".format(t))
        lines.append(")")
        return "\n".join(lines)


class ToTensor:
    def __call__(self, pic):
        return F.to_tensor(pic)

    def __repr__(self):
        return self.__class__.__name__ + "()"


class PILToTensor(ToTensor):
    def __call__(self, pic):
        return F.pil_to_tensor(pic)


class ToPILImage:
    def __init__(self, mode=None):
        self.mode = mode

    def __call__(self, pic):
        return F.to_pil_image(pic, self.mode)

    def __repr__(self):
        return "%s(%s)" % (self.__class__.__name__, "" if self.mode is None else "mode=%s" % self.mode)


class ConvertImageDtype(cthtorch.nn.Module):
    def __init__(self, dtype):
        super().__init__()
        self.dtype = dtype

    def forward(self, image):
        return F.convert_image_dtype(image, self.dtype)


class Normalize(cthtorch.nn.Module):
    def __init__(self, mean, std, inplace=False):
        super().__init__()
        self.mean, self.std, self.inplace = mean, std, inplace

    def forward(self, tensor):
        return F.normalize(tensor, self.mean, self.std, self.inplace)

    def __repr__(self):
        return "%s(mean=%s, std=%s)" % (self.__class__.__name__, self.mean, self.std)


class Resize(cthtorch.nn.Module):
    def __init__(self, size, interpolation=None, max_size=None, antialias=True):
        super().__init__()
        self.size, self.interpolation, self.max_size, self.antialias = size, interpolation, max_size, antialias

    def forward(self, img):
        return F.resize(img, self.size, self.interpolation, self.max_size, self.antialias)

    def __repr__(self):
        return "%s(size=%s, interpolation=%s, max_size=%s, antialias=%s)" % (
            self.__class__.__name__, self.size, F._interp_mode(self.interpolation).value, self.max_size,
            self.antialias)


class CenterCrop(cthtorch.nn.Module):
    def __init__(self, size):
        super().__init__()
        self.size = (int(size), int(size)) if isinstance(size, numbers.Number) else size

    def forward(self, img):
        return F.center_crop(img, self.size)

    def __repr__(self):
        return "%s(size=%s)" % (self.__class__.__name__, self.size)


class Pad(cthtorch.nn.Module):
    def __init__(self, padding, fill=0, padding_mode="constant"):
        super().__init__()
        self.padding, self.fill, self.padding_mode = padding, fill, padding_mode

    def forward(self, img):
        return F.pad(img, self.padding, self.fill, self.padding_mode)

    def __repr__(self):
        return "%s(padding=%s, fill=%s, padding_mode=%s)" % (self.__class__.__name__, self.padding, self.fill,
                                                            self.padding_mode)


class Lambda:
    def __init__(self, lambd):
        if not callable(lambd):
            raise TypeError("Argument lambd should be callable, got %s" % repr(type(lambd).__name__))
        self.lambd = lambd

    def __call__(self, img):
        return self.lambd(img)


class RandomCrop(cthtorch.nn.Module):
    def __init__(self, size, padding=None, pad_if_needed=False, fill=0, padding_mode="constant"):
        super().__init__()
        self.size = (int(size), int(size)) if isinstance(size, numbers.Number) else size
        self.padding, self.pad_if_needed, self.fill, self.padding_mode = padding, pad_if_needed, fill, padding_mode

    @staticmethod
    def get_params(img, output_size):
        h, w = F._size_of(img)
        th, tw = output_size
        if h < th or w < tw:
            raise ValueError("Required crop size %s is larger than input image size %s" % ((th, tw), (h, w)))
        if w == tw and h == th:
            return 0, 0, h, w
        i = cthtorch.randint(0, h - th + 1, size=(1,)).item()
        j = cthtorch.randint(0, w - tw + 1, size=(1,)).item()
        return i, j, th, tw

    def forward(self, img):
        if self.padding is not None:
            img = F.pad(img, self.padding, self.fill, self.padding_mode)
        h, w = F._size_of(img)
        if self.pad_if_needed and w < self.size[1]:
            img = F.pad(img, [self.size[1] - w, 0], self.fill, self.padding_mode)
        if self.pad_if_needed and h < self.size[0]:
            img = F.pad(img, [0, self.size[0] - h], self.fill, self.padding_mode)
        i, j, h, w = self.get_params(img, self.size)
        return F.crop(img, i, j, h, w)

    def __repr__(self):
        return "%s(size=%s, padding=%s)" % (self.__class__.__name__, self.size, self.padding)


class RandomResizedCrop(cthtorch.nn.Module):
    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0), interpolation=None, antialias=True):
        super().__init__()
        self.size = (size, size) if isinstance(size, int) else tuple(size)
        self.scale, self.ratio, self.interpolation, self.antialias = scale, ratio, interpolation, antialias

    @staticmethod
    def get_params(img, scale, ratio):
        height, width = F._size_of(img)
        area = height * width
        log_ratio = (math.log(ratio[0]), math.log(ratio[1]))
        for _ in range(10):
            target_area = area * cthtorch.empty(1).uniform_(scale[0], scale[1]).item()
            aspect = math.exp(cthtorch.empty(1).uniform_(log_ratio[0], log_ratio[1]).item())
            w = int(round(math.sqrt(target_area * aspect)))
            h = int(round(math.sqrt(target_area / aspect)))
            if 0 < w <= width and 0 < h <= height:
                i = cthtorch.randint(0, height - h + 1, size=(1,)).item()
                j = cthtorch.randint(0, width - w + 1, size=(1,)).item()
                return i, j, h, w
        in_ratio = float(width) / float(height)
        if in_ratio < min(ratio):
            w, h = width, int(round(width / min(ratio)))
        elif in_ratio > max(ratio):
            h, w = height, int(round(height * max(ratio)))
        else:
            w, h = width, height
        return (height - h) // 2, (width - w) // 2, h, w

    def forward(self, img):
        i, j, h, w = self.get_params(img, self.scale, self.ratio)
        return F.resize(F.crop(img, i, j, h, w), self.size, self.interpolation, antialias=self.antialias)

    def __repr__(self):
        return "%s(size=%s, scale=%s, ratio=%s, interpolation=%s, antialias=%s)" % (
            self.__class__.__name__, self.size, tuple(round(s, 4) for s in self.scale),
            tuple(round(r, 4) for r in self.ratio), F._interp_mode(self.interpolation).value, self.antialias)


class RandomHorizontalFlip(cthtorch.nn.Module):
    def __init__(self, p=0.5):
        super().__init__()
        self.p = p

    def forward(self, img):
        return F.hflip(img) if cthtorch.rand(1).item() < self.p else img

    def __repr__(self):
        return "%s(p=%s)" % (self.__class__.__name__, self.p)


class RandomVerticalFlip(RandomHorizontalFlip):
    def forward(self, img):
        return F.vflip(img) if cthtorch.rand(1).item() < self.p else img


class RandomRotation(cthtorch.nn.Module):
    def __init__(self, degrees, interpolation=None, expand=False, center=None, fill=0):
        super().__init__()
        self.degrees = (-degrees, degrees) if isinstance(degrees, numbers.Number) else tuple(degrees)
        self.interpolation = F.InterpolationMode.NEAREST if interpolation is None else interpolation
        self.expand, self.center, self.fill = expand, center, fill

    def forward(self, img):
        angle = cthtorch.empty(1).uniform_(self.degrees[0], self.degrees[1]).item()
        return F.rotate(img, angle, self.interpolation, expand=self.expand, center=self.center,
                        fill=_channel_fill(img, self.fill))


class ColorJitter(cthtorch.nn.Module):
    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0):
        super().__init__()
        self.brightness = self._check_input(brightness, "brightness")
        self.contrast = self._check_input(contrast, "contrast")
        self.saturation = self._check_input(saturation, "saturation")
        self.hue = self._check_input(hue, "hue", center=0, bound=(-0.5, 0.5), clip_first_on_zero=False)

    def _check_input(self, value, name, center=1, bound=(0, float("inf")), clip_first_on_zero=True):
        """torchvision's range of a factor: a number v is [center - v, center + v] (the low end clipped at 0),
        a pair is taken as floats; checked against bound, with torchvision's errors. A range that is only the
        centre is None: that factor is neither drawn nor applied."""
        if isinstance(value, numbers.Number):
            if value < 0:
                raise ValueError(f"If {name} is a single number, it must be non negative.")
            lo, hi = center - float(value), center + float(value)
            lo = max(lo, 0.0) if clip_first_on_zero else lo
        elif isinstance(value, (tuple, list)) and len(value) == 2:
            lo, hi = float(value[0]), float(value[1])
        else:
            raise TypeError(f"{name} should be a single number or a list/tuple with length 2.")
        if not bound[0] <= lo <= hi <= bound[1]:
            raise ValueError(f"{name} values should be between {bound}, but got {[lo, hi]}.")
        return None if lo == hi == center else (lo, hi)

    @staticmethod
    def get_params(brightness, contrast, saturation, hue):
        # torchvision draws the order, then every factor (brightness, contrast, saturation, hue), before applying
        fn_idx = cthtorch.randperm(4)
        b, c, s, h = (None if r is None else float(cthtorch.empty(1).uniform_(r[0], r[1]).item())
                      for r in (brightness, contrast, saturation, hue))
        return fn_idx, b, c, s, h

    def forward(self, img):
        fn_idx, b, c, s, h = self.get_params(self.brightness, self.contrast, self.saturation, self.hue)
        for k in fn_idx.tolist():
            if k == 0 and b is not None:
                img = F.adjust_brightness(img, b)
            elif k == 1 and c is not None:
                img = F.adjust_contrast(img, c)
            elif k == 2 and s is not None:
                img = F.adjust_saturation(img, s)
            elif k == 3 and h is not None:
                img = F.adjust_hue(img, h)
        return img

    def __repr__(self):
        return "%s(brightness=%s, contrast=%s, saturation=%s, hue=%s)" % (
            self.__class__.__name__, self.brightness, self.contrast, self.saturation, self.hue)


class Grayscale(cthtorch.nn.Module):
    def __init__(self, num_output_channels=1):
        super().__init__()
        self.num_output_channels = num_output_channels

    def forward(self, img):
        return F.rgb_to_grayscale(img, self.num_output_channels)

    def __repr__(self):
        return "%s(num_output_channels=%s)" % (self.__class__.__name__, self.num_output_channels)


class RandomApply(cthtorch.nn.Module):
    def __init__(self, transforms, p=0.5):
        super().__init__()
        self.transforms, self.p = transforms, p

    def forward(self, img):
        if self.p < cthtorch.rand(1).item():
            return img
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self):
        return "%s(\n    p=%s%s\n)" % (self.__class__.__name__, self.p,
                                     "".join("\n    %s" % t for t in self.transforms))


class RandomChoice:
    def __init__(self, transforms, p=None):
        self.transforms, self.p = transforms, p

    def __call__(self, *args):
        # several arguments pass through together, as the reference scripts' (batch, target) mixup choice does
        return random.choices(self.transforms, weights=self.p)[0](*args)


class RandomErasing(cthtorch.nn.Module):
    """Erase a random rectangle of a tensor image (Zhong et al. 2017), with torchvision's draws."""

    def __init__(self, p=0.5, scale=(0.02, 0.33), ratio=(0.3, 3.3), value=0, inplace=False):
        super().__init__()
        if not isinstance(value, (numbers.Number, str, tuple, list)):
            raise TypeError("Argument value should be either a number or str or a sequence")
        if isinstance(value, str) and value != "random":
            raise ValueError("If value is str, it should be 'random'")
        if not isinstance(scale, (tuple, list)):
            raise TypeError("Scale should be a sequence")
        if not isinstance(ratio, (tuple, list)):
            raise TypeError("Ratio should be a sequence")
        if scale[0] > scale[1] or ratio[0] > ratio[1]:
            import warnings
            warnings.warn("Scale and ratio should be of kind (min, max)")
        if scale[0] < 0 or scale[1] > 1:
            raise ValueError("Scale should be between 0 and 1")
        if p < 0 or p > 1:
            raise ValueError("Random erasing probability should be between 0 and 1")
        self.p, self.scale, self.ratio, self.value, self.inplace = p, scale, ratio, value, inplace

    def _fill_values(self, channels):
        """value as a list of floats (None for "random"), checked against the image's channels"""
        if isinstance(self.value, (int, float)):
            value = [float(self.value)]
        elif isinstance(self.value, str):
            value = None
        else:
            value = [float(v) for v in self.value]
        if value is not None and len(value) not in (1, channels):
            raise ValueError("If value is a sequence, it should have either a single value or %d (number of "
                             "input channels)" % channels)
        return value

    @staticmethod
    def get_params(img, scale, ratio, value=None):
        img_c, img_h, img_w = img.shape[-3], img.shape[-2], img.shape[-1]
        area = img_h * img_w
        log_ratio = cthtorch.log(cthtorch.tensor(ratio))
        for _ in range(10):
            erase_area = area * cthtorch.empty(1).uniform_(scale[0], scale[1]).item()
            aspect = cthtorch.exp(cthtorch.empty(1).uniform_(log_ratio[0], log_ratio[1])).item()
            h = int(round(math.sqrt(erase_area * aspect)))
            w = int(round(math.sqrt(erase_area / aspect)))
            if not (h < img_h and w < img_w):
                continue
            if value is None:
                v = cthtorch.empty([img_c, h, w], dtype=cthtorch.float32).normal_()
            else:
                v = cthtorch.tensor(value)[:, None, None]
            i = cthtorch.randint(0, img_h - h + 1, size=(1,)).item()
            j = cthtorch.randint(0, img_w - w + 1, size=(1,)).item()
            return i, j, h, w, v
        return 0, 0, img_h, img_w, img    # no fit in 10 tries: the image is returned unchanged

    def forward(self, img):
        if cthtorch.rand(1) < self.p:
            value = self._fill_values(img.shape[-3])
            i, j, h, w, v = self.get_params(img, scale=self.scale, ratio=self.ratio, value=value)
            return F.erase(img, i, j, h, w, v, self.inplace)
        return img

    def __repr__(self):
        return "%s(p=%s, scale=%s, ratio=%s, value=%s, inplace=%s)" % (
            self.__class__.__name__, self.p, self.scale, self.ratio, self.value, self.inplace)


class RandomOrder:
    """Apply the transforms in a random order (one randperm per call)."""

    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, img):
        for i in cthtorch.randperm(len(self.transforms)).tolist():
            img = self.transforms[i](img)
        return img


class RandomGrayscale(cthtorch.nn.Module):
    def __init__(self, p=0.1):
        super().__init__()
        self.p = p

    def forward(self, img):
        num_output_channels = F.get_dimensions(img)[0]
        if cthtorch.rand(1) < self.p:
            return F.rgb_to_grayscale(img, num_output_channels=num_output_channels)
        return img

    def __repr__(self):
        return "%s(p=%s)" % (self.__class__.__name__, self.p)


class _RandomApplyOne(cthtorch.nn.Module):
    """Base of the RandomX(p) transforms that apply one functional with probability p."""

    def __init__(self, p=0.5):
        super().__init__()
        self.p = p

    def _apply(self, img):
        raise NotImplementedError

    def forward(self, img):
        if cthtorch.rand(1).item() < self.p:
            return self._apply(img)
        return img

    def __repr__(self):
        return "%s(p=%s)" % (self.__class__.__name__, self.p)


class RandomInvert(_RandomApplyOne):
    def _apply(self, img):
        return F.invert(img)


class RandomAutocontrast(_RandomApplyOne):
    def _apply(self, img):
        return F.autocontrast(img)


class RandomEqualize(_RandomApplyOne):
    def _apply(self, img):
        return F.equalize(img)


class RandomPosterize(_RandomApplyOne):
    def __init__(self, bits, p=0.5):
        super().__init__(p)
        self.bits = bits

    def _apply(self, img):
        return F.posterize(img, self.bits)

    def __repr__(self):
        return "%s(bits=%s,p=%s)" % (self.__class__.__name__, self.bits, self.p)


class RandomSolarize(_RandomApplyOne):
    def __init__(self, threshold, p=0.5):
        super().__init__(p)
        self.threshold = threshold

    def _apply(self, img):
        return F.solarize(img, self.threshold)

    def __repr__(self):
        return "%s(threshold=%s,p=%s)" % (self.__class__.__name__, self.threshold, self.p)


class RandomAdjustSharpness(_RandomApplyOne):
    def __init__(self, sharpness_factor, p=0.5):
        super().__init__(p)
        self.sharpness_factor = sharpness_factor

    def _apply(self, img):
        return F.adjust_sharpness(img, self.sharpness_factor)

    def __repr__(self):
        return "%s(sharpness_factor=%s,p=%s)" % (self.__class__.__name__, self.sharpness_factor, self.p)


class GaussianBlur(cthtorch.nn.Module):
    """Blur with a Gaussian whose sigma is drawn uniformly from `sigma` on each call."""

    def __init__(self, kernel_size, sigma=(0.1, 2.0)):
        super().__init__()
        ks = (kernel_size, kernel_size) if isinstance(kernel_size, numbers.Number) else tuple(kernel_size)
        for k in ks:
            if k <= 0 or k % 2 == 0:
                raise ValueError("Kernel size value should be an odd and positive number.")
        if isinstance(sigma, numbers.Number):
            if sigma <= 0:
                raise ValueError("If sigma is a single number, it must be positive.")
            sigma = (sigma, sigma)
        elif isinstance(sigma, (list, tuple)) and len(sigma) == 2:
            if not 0.0 < sigma[0] <= sigma[1]:
                raise ValueError("sigma values should be positive and of the form (min, max).")
        else:
            raise ValueError("sigma should be a single number or a list/tuple with length 2.")
        self.kernel_size, self.sigma = ks, tuple(sigma)

    @staticmethod
    def get_params(sigma_min, sigma_max):
        return cthtorch.empty(1).uniform_(sigma_min, sigma_max).item()

    def forward(self, img):
        s = self.get_params(self.sigma[0], self.sigma[1])
        return F.gaussian_blur(img, self.kernel_size, [s, s])

    def __repr__(self):
        return "%s(kernel_size=%s, sigma=%s)" % (self.__class__.__name__, self.kernel_size, self.sigma)


class FiveCrop(cthtorch.nn.Module):
    def __init__(self, size):
        super().__init__()
        self.size = F._crop_size(size)

    def forward(self, img):
        return F.five_crop(img, self.size)

    def __repr__(self):
        return "%s(size=%s)" % (self.__class__.__name__, self.size)


class TenCrop(cthtorch.nn.Module):
    def __init__(self, size, vertical_flip=False):
        super().__init__()
        self.size, self.vertical_flip = F._crop_size(size), vertical_flip

    def forward(self, img):
        return F.ten_crop(img, self.size, self.vertical_flip)

    def __repr__(self):
        return "%s(size=%s, vertical_flip=%s)" % (self.__class__.__name__, self.size, self.vertical_flip)


class LinearTransformation(cthtorch.nn.Module):
    """Flatten a (C, H, W) tensor, subtract mean_vector, multiply by transformation_matrix (ZCA whitening)."""

    def __init__(self, transformation_matrix, mean_vector):
        super().__init__()
        if transformation_matrix.size(0) != transformation_matrix.size(1):
            raise ValueError("transformation_matrix should be square. Got %s rectangular matrix."
                             % (tuple(transformation_matrix.size()),))
        if mean_vector.size(0) != transformation_matrix.size(0):
            raise ValueError("mean_vector should have the same length %d as any one of the dimensions of the "
                             "transformation_matrix [%s]" % (mean_vector.size(0), tuple(transformation_matrix.size())))
        self.transformation_matrix, self.mean_vector = transformation_matrix, mean_vector

    def forward(self, tensor):
        shape = tensor.shape
        n = shape[-3] * shape[-2] * shape[-1]
        if n != self.transformation_matrix.shape[0]:
            raise ValueError("Input tensor and transformation matrix have incompatible shape."
                             "[%d x %d x %d] != %d" % (shape[-3], shape[-2], shape[-1],
                                                      self.transformation_matrix.shape[0]))
        flat = tensor.reshape(-1, n) - self.mean_vector
        return cthtorch.mm(flat, self.transformation_matrix.to(flat.dtype)).reshape(shape)


def _range_param(value, name, center=0.0):
    if isinstance(value, numbers.Number):
        if value < 0:
            raise ValueError("If %s is a single number, it must be positive." % name)
        return [center - value, center + value]
    if len(value) != 2:
        raise ValueError("%s should be a sequence of length 2." % name)
    return [float(v) for v in value]


class RandomAffine(cthtorch.nn.Module):
    """Random rotation, translation, scale and shear, drawn in torchvision's order:
    angle, then the two translations, then scale, then shear x and y."""

    def __init__(self, degrees, translate=None, scale=None, shear=None, interpolation=InterpolationMode.NEAREST,
                 fill=0, center=None):
        super().__init__()
        self.degrees = _range_param(degrees, "degrees")
        if translate is not None:
            if len(translate) != 2 or not all(0.0 <= t <= 1.0 for t in translate):
                raise ValueError("translation values should be between 0 and 1")
        if scale is not None:
            if len(scale) != 2 or any(s <= 0 for s in scale):
                raise ValueError("scale values should be positive")
        if shear is not None:
            if isinstance(shear, numbers.Number):
                shear = _range_param(shear, "shear")
            elif len(shear) not in (2, 4):
                raise ValueError("shear should be a sequence of length 2 or 4.")
            shear = [float(s) for s in shear]
        self.translate, self.scale, self.shear = translate, scale, shear
        self.interpolation, self.fill, self.center = interpolation, fill, center

    @staticmethod
    def get_params(degrees, translate, scale_ranges, shears, img_size):
        angle = float(cthtorch.empty(1).uniform_(float(degrees[0]), float(degrees[1])).item())
        if translate is not None:
            max_dx = float(translate[0] * img_size[0])
            max_dy = float(translate[1] * img_size[1])
            tx = int(round(cthtorch.empty(1).uniform_(-max_dx, max_dx).item()))
            ty = int(round(cthtorch.empty(1).uniform_(-max_dy, max_dy).item()))
            translations = (tx, ty)
        else:
            translations = (0, 0)
        scale = float(cthtorch.empty(1).uniform_(scale_ranges[0], scale_ranges[1]).item()) \
            if scale_ranges is not None else 1.0
        shear_x = shear_y = 0.0
        if shears is not None:
            shear_x = float(cthtorch.empty(1).uniform_(shears[0], shears[1]).item())
            if len(shears) == 4:
                shear_y = float(cthtorch.empty(1).uniform_(shears[2], shears[3]).item())
        return angle, translations, scale, (shear_x, shear_y)

    def forward(self, img):
        channels, height, width = F.get_dimensions(img)
        fill = self.fill
        if isinstance(img, cthtorch.Tensor) and isinstance(fill, (int, float)):
            fill = [float(fill)] * channels
        ret = self.get_params(self.degrees, self.translate, self.scale, self.shear, [width, height])
        return F.affine(img, *ret, interpolation=self.interpolation, fill=fill, center=self.center)

    def __repr__(self):
        return "%s(degrees=%s)" % (self.__class__.__name__, self.degrees)


def _channel_fill(img, fill):
    """a tensor image's fill as one float per channel (PIL images take fill as given)"""
    if not isinstance(img, cthtorch.Tensor) or fill is None:
        return fill
    if isinstance(fill, (int, float)):
        return [float(fill)] * F.get_dimensions(img)[0]
    return [float(f) for f in fill]


def _check_fill(fill):
    if fill is None:
        fill = 0
    if not isinstance(fill, (numbers.Number, tuple, list)):
        raise TypeError("Fill should be either a sequence or a number.")
    return fill


class RandomPerspective(cthtorch.nn.Module):
    """With probability p, moves each corner of the image inwards by a random amount (up to distortion_scale
    of half the width or height) and warps the image so the corners land there."""

    def __init__(self, distortion_scale=0.5, p=0.5, interpolation=InterpolationMode.BILINEAR, fill=0):
        super().__init__()
        self.p = p
        if isinstance(interpolation, int):
            interpolation = F._interp_mode(interpolation)
        self.interpolation = interpolation
        self.distortion_scale = distortion_scale
        self.fill = _check_fill(fill)

    def forward(self, img):
        fill = _channel_fill(img, self.fill)
        _, height, width = F.get_dimensions(img)
        if cthtorch.rand(1) < self.p:
            startpoints, endpoints = self.get_params(width, height, self.distortion_scale)
            return F.perspective(img, startpoints, endpoints, self.interpolation, fill)
        return img

    @staticmethod
    def get_params(width, height, distortion_scale):
        """startpoints (the corners, clockwise from top-left) and endpoints: each corner moved inwards by a
        uniform integer draw, x then y, corner by corner."""
        dx, dy = int(distortion_scale * (width // 2)), int(distortion_scale * (height // 2))

        def draw(low, high):
            return int(cthtorch.randint(low, high, size=(1,)).item())
        top_left = [draw(0, dx + 1), draw(0, dy + 1)]
        top_right = [draw(width - dx - 1, width), draw(0, dy + 1)]
        bot_right = [draw(width - dx - 1, width), draw(height - dy - 1, height)]
        bot_left = [draw(0, dx + 1), draw(height - dy - 1, height)]
        startpoints = [[0, 0], [width - 1, 0], [width - 1, height - 1], [0, height - 1]]
        return startpoints, [top_left, top_right, bot_right, bot_left]

    def __repr__(self):
        return "%s(p=%s)" % (self.__class__.__name__, self.p)


class ElasticTransform(cthtorch.nn.Module):
    """Displaces every pixel by a random field: uniform noise in [-1, 1] per pixel and axis, smoothed by a
    Gaussian of std sigma, scaled by alpha (in pixels, as a fraction of the image size)."""

    def __init__(self, alpha=50.0, sigma=5.0, interpolation=InterpolationMode.BILINEAR, fill=0):
        super().__init__()
        self.alpha = self._pair(alpha, "alpha")
        self.sigma = self._pair(sigma, "sigma")
        if isinstance(interpolation, int):
            interpolation = F._interp_mode(interpolation)
        self.interpolation = interpolation
        if isinstance(fill, (int, float)):
            fill = [float(fill)]
        elif isinstance(fill, (list, tuple)):
            fill = [float(f) for f in fill]
        else:
            raise TypeError("fill should be int or float or a list or tuple of them. Got %s" % type(fill))
        self.fill = fill

    @staticmethod
    def _pair(value, name):
        if not isinstance(value, (float, int, list, tuple)):
            raise TypeError("%s should be float or a sequence of floats. Got %s" % (name, type(value)))
        if isinstance(value, (list, tuple)):
            if len(value) not in (1, 2):
                raise ValueError("If %s is a sequence its length should be 1 or 2. Got %d" % (name, len(value)))
            value = list(value) * (2 // len(value))
        else:
            value = [value, value]
        return [float(v) for v in value]

    @staticmethod
    def get_params(alpha, sigma, size):
        """the (1, H, W, 2) displacement for an image of size [H, W]: x offsets, then y offsets"""
        fields = []
        for k in range(2):
            d = cthtorch.rand([1, 1] + list(size)) * 2 - 1
            if sigma[k] > 0.0:
                ks = int(8 * sigma[k] + 1)
                ks += 1 - ks % 2   # odd
                d = F.gaussian_blur(d, [ks, ks], list(sigma))   # torchvision blurs both fields with (sx, sy)
            fields.append(d * alpha[k] / size[k])
        return cthtorch.cat(fields, 1).permute(0, 2, 3, 1)

    def forward(self, img):
        _, height, width = F.get_dimensions(img)
        displacement = self.get_params(self.alpha, self.sigma, [height, width])
        return F.elastic_transform(img, displacement, self.interpolation, _channel_fill(img, self.fill))

    def __repr__(self):
        return "%s(alpha=%s, sigma=%s, interpolation=%s, fill=%s)" % (
            self.__class__.__name__, self.alpha, self.sigma, self.interpolation, self.fill)
