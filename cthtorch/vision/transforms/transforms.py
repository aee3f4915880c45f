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


class ConvertImageDtype:
    def __init__(self, dtype):
        self.dtype = dtype

    def __call__(self, image):
        return F.convert_image_dtype(image, self.dtype)


class Normalize:
    def __init__(self, mean, std, inplace=False):
        self.mean, self.std, self.inplace = mean, std, inplace

    def __call__(self, tensor):
        return F.normalize(tensor, self.mean, self.std, self.inplace)

    def __repr__(self):
        return "%s(mean=%s, std=%s)" % (self.__class__.__name__, self.mean, self.std)


class Resize:
    def __init__(self, size, interpolation=None, max_size=None, antialias=True):
        self.size, self.interpolation, self.max_size, self.antialias = size, interpolation, max_size, antialias

    def __call__(self, img):
        return F.resize(img, self.size, self.interpolation, self.max_size, self.antialias)

    def __repr__(self):
        return "%s(size=%s, interpolation=%s, max_size=%s, antialias=%s)" % (
            self.__class__.__name__, self.size, F._interp_mode(self.interpolation).value, self.max_size,
            self.antialias)


class CenterCrop:
    def __init__(self, size):
        self.size = (int(size), int(size)) if isinstance(size, numbers.Number) else size

    def __call__(self, img):
        return F.center_crop(img, self.size)

    def __repr__(self):
        return "%s(size=%s)" % (self.__class__.__name__, self.size)


class Pad:
    def __init__(self, padding, fill=0, padding_mode="constant"):
        self.padding, self.fill, self.padding_mode = padding, fill, padding_mode

    def __call__(self, img):
        return F.pad(img, self.padding, self.fill, self.padding_mode)


class Lambda:
    def __init__(self, lambd):
        if not callable(lambd):
            raise TypeError("Argument lambd should be callable, got %s" % repr(type(lambd).__name__))
        self.lambd = lambd

    def __call__(self, img):
        return self.lambd(img)


class RandomCrop:
    def __init__(self, size, padding=None, pad_if_needed=False, fill=0, padding_mode="constant"):
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

    def __call__(self, img):
        if self.padding is not None:
            img = F.pad(img, self.padding, self.fill, self.padding_mode)
        h, w = F._size_of(img)
        if self.pad_if_needed and w < self.size[1]:
            img = F.pad(img, [self.size[1] - w, 0], self.fill, self.padding_mode)
        if self.pad_if_needed and h < self.size[0]:
            img = F.pad(img, [0, self.size[0] - h], self.fill, self.padding_mode)
        i, j, h, w = self.get_params(img, self.size)
        return F.crop(img, i, j, h, w)


class RandomResizedCrop:
    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0), interpolation=None, antialias=True):
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

    def __call__(self, img):
        i, j, h, w = self.get_params(img, self.scale, self.ratio)
        return F.resize(F.crop(img, i, j, h, w), self.size, self.interpolation, antialias=self.antialias)


class RandomHorizontalFlip:
    def __init__(self, p=0.5):
        self.p = p

    def __call__(self, img):
        return F.hflip(img) if cthtorch.rand(1).item() < self.p else img

    def __repr__(self):
        return "%s(p=%s)" % (self.__class__.__name__, self.p)


class RandomVerticalFlip(RandomHorizontalFlip):
    def __call__(self, img):
        return F.vflip(img) if cthtorch.rand(1).item() < self.p else img


class RandomRotation:
    def __init__(self, degrees, interpolation=None, expand=False, center=None, fill=0):
        self.degrees = (-degrees, degrees) if isinstance(degrees, numbers.Number) else tuple(degrees)
        self.expand, self.center, self.fill = expand, center, fill

    def __call__(self, img):
        angle = cthtorch.empty(1).uniform_(self.degrees[0], self.degrees[1]).item()
        return F.rotate(img, angle, expand=self.expand, center=self.center, fill=self.fill)


class ColorJitter:
    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0):
        def rng(v, center=1.0, bound=(0, float("inf"))):
            if isinstance(v, numbers.Number):
                return None if v == 0 else (max(center - v, bound[0]), center + v)
            return tuple(v)
        self.brightness, self.contrast, self.saturation = rng(brightness), rng(contrast), rng(saturation)
        self.hue = None if hue == 0 else ((-hue, hue) if isinstance(hue, numbers.Number) else tuple(hue))

    def __call__(self, img):
        order = cthtorch.randperm(4).tolist()
        for k in order:
            if k == 0 and self.brightness:
                img = F.adjust_brightness(img, cthtorch.empty(1).uniform_(*self.brightness).item())
            elif k == 1 and self.contrast:
                img = F.adjust_contrast(img, cthtorch.empty(1).uniform_(*self.contrast).item())
            elif k == 2 and self.saturation:
                img = F.adjust_saturation(img, cthtorch.empty(1).uniform_(*self.saturation).item())
            elif k == 3 and self.hue:
                img = F.adjust_hue(img, cthtorch.empty(1).uniform_(*self.hue).item())
        return img


class Grayscale:
    def __init__(self, num_output_channels=1):
        self.num_output_channels = num_output_channels

    def __call__(self, img):
        return F.rgb_to_grayscale(img, self.num_output_channels)


class RandomApply:
    def __init__(self, transforms, p=0.5):
        self.transforms, self.p = transforms, p

    def __call__(self, img):
        if self.p < cthtorch.rand(1).item():
            return img
        for t in self.transforms:
            img = t(img)
        return img


class RandomChoice:
    def __init__(self, transforms, p=None):
        self.transforms, self.p = transforms, p

    def __call__(self, *args):
        # several arguments pass through together, as the reference scripts' (batch, target) mixup choice does
        return random.choices(self.transforms, weights=self.p)[0](*args)


class RandomErasing:
    """Erase a random rectangle of a tensor image (Zhong et al. 2017), with torchvision's draws."""

    def __init__(self, p=0.5, scale=(0.02, 0.33), ratio=(0.3, 3.3), value=0, inplace=False):
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

    def __call__(self, img):
        if cthtorch.rand(1) < self.p:
            if isinstance(self.value, (int, float)):
                value = [float(self.value)]
            elif isinstance(self.value, str):
                value = None
            else:
                value = [float(v) for v in self.value]
            if value is not None and len(value) not in (1, img.shape[-3]):
                raise ValueError("If value is a sequence, it should have either a single value or %d (number of "
                                 "input channels)" % img.shape[-3])
            i, j, h, w, v = self.get_params(img, scale=self.scale, ratio=self.ratio, value=value)
            return F.erase(img, i, j, h, w, v, self.inplace)
        return img

    def __repr__(self):
        return "%s(p=%s, scale=%s, ratio=%s, value=%s, inplace=%s)" % (
            self.__class__.__name__, self.p, self.scale, self.ratio, self.value, self.inplace)
