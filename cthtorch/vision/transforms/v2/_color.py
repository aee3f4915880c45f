"""Colour transforms of v2 (masks and boxes pass through), drawing as the v1 classes do."""
import cthtorch
from cthtorch.vision import tv_tensors
from cthtorch.vision.transforms import functional as F
from cthtorch.vision.transforms import transforms as v1
from cthtorch.vision.transforms.v2.functional import gaussian_noise, grayscale_to_rgb, permute_channels
from cthtorch.vision.transforms.v2._transform import _ColorTransform, _RandomApplyTransform


class ColorJitter(_ColorTransform):
    def __init__(self, brightness=None, contrast=None, saturation=None, hue=None):
        super().__init__()
        v1_jitter = v1.ColorJitter(brightness or 0, contrast or 0, saturation or 0, hue or 0)
        self.brightness, self.contrast = v1_jitter.brightness, v1_jitter.contrast
        self.saturation, self.hue = v1_jitter.saturation, v1_jitter.hue

    def make_params(self, flat_inputs):
        fn_idx, b, c, s, h = v1.ColorJitter.get_params(self.brightness, self.contrast, self.saturation, self.hue)
        return dict(fn_idx=fn_idx, factors=(b, c, s, h))

    def _image(self, img, params):
        adjust = (F.adjust_brightness, F.adjust_contrast, F.adjust_saturation, F.adjust_hue)
        for k in params["fn_idx"].tolist():
            if params["factors"][k] is not None:
                img = adjust[k](img, params["factors"][k])
        return img


class Grayscale(_ColorTransform):
    def __init__(self, num_output_channels=1):
        super().__init__()
        self.num_output_channels = num_output_channels

    def _image(self, img, params):
        return F.rgb_to_grayscale(img, self.num_output_channels)


class RandomGrayscale(_RandomApplyTransform, _ColorTransform):
    def __init__(self, p=0.1):
        super().__init__(p=p)

    def _image(self, img, params):
        return F.rgb_to_grayscale(img, F.get_dimensions(img)[0])


class GaussianBlur(_ColorTransform):
    def __init__(self, kernel_size, sigma=(0.1, 2.0)):
        super().__init__()
        checked = v1.GaussianBlur(kernel_size, sigma)
        self.kernel_size, self.sigma = checked.kernel_size, checked.sigma

    def make_params(self, flat_inputs):
        s = v1.GaussianBlur.get_params(self.sigma[0], self.sigma[1])
        return dict(sigma=[s, s])

    def _image(self, img, params):
        return F.gaussian_blur(img, list(self.kernel_size), params["sigma"])

    def _mask(self, mask, params):
        return mask


def _one_op(name, fn, arg_names):
    """a RandomX(arg..., p) colour transform applying fn(img, *args) with probability p"""
    def __init__(self, *args, p=0.5, **kwargs):
        _RandomApplyTransform.__init__(self, p=p)
        values = dict(zip(arg_names, args), **kwargs)
        for a in arg_names:
            setattr(self, a, values[a])

    def _image(self, img, params):
        return fn(img, *(getattr(self, a) for a in arg_names))
    return type(name, (_RandomApplyTransform, _ColorTransform), {"__init__": __init__, "_image": _image})


RandomInvert = _one_op("RandomInvert", F.invert, ())
RandomAutocontrast = _one_op("RandomAutocontrast", F.autocontrast, ())
RandomEqualize = _one_op("RandomEqualize", F.equalize, ())
RandomPosterize = _one_op("RandomPosterize", F.posterize, ("bits",))
RandomSolarize = _one_op("RandomSolarize", F.solarize, ("threshold",))
RandomAdjustSharpness = _one_op("RandomAdjustSharpness", F.adjust_sharpness, ("sharpness_factor",))
for _cls in (RandomInvert, RandomAutocontrast, RandomEqualize, RandomPosterize, RandomSolarize,
             RandomAdjustSharpness):
    _cls.__module__ = __name__
del _cls



class RandomChannelPermutation(_ColorTransform):
    """The image's channels in a random order (one permutation per call)"""

    def make_params(self, flat_inputs):
        channels = next(F.get_dimensions(x)[0] for x in flat_inputs
                        if not isinstance(x, (tv_tensors.BoundingBoxes, tv_tensors.Mask)))
        return dict(permutation=cthtorch.randperm(channels))

    def _image(self, img, params):
        return permute_channels(img, params["permutation"])


class RGB(_ColorTransform):
    """One-channel images repeated to three channels"""

    def _image(self, img, params):
        return grayscale_to_rgb(img)


class GaussianNoise(_ColorTransform):
    """Adds N(mean, sigma) noise to float images (clamped to [0, 1] when clip)"""

    def __init__(self, mean=0.0, sigma=0.1, clip=True):
        super().__init__()
        self.mean, self.sigma, self.clip = mean, sigma, clip

    def _image(self, img, params):
        if F._is_pil(img):   # torchvision has no PIL kernel for it and passes PIL images through
            return img
        return gaussian_noise(img, self.mean, self.sigma, self.clip)
