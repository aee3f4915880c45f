"""torchvision.transforms.autoaugment: RandAugment and TrivialAugmentWide draw an image op and a magnitude bin
from the global generator (in torchvision's order, so a seeded run picks the same ops) and apply it with the
functional ops. AutoAugment's learned policies and AugMix are not written yet: they raise NotImplementedError
when built, so a training script that asks for one stops at once with the reason."""
import math
from enum import Enum

import cthtorch
from cthtorch.vision.transforms import functional as F
from cthtorch.vision.transforms.functional import InterpolationMode


class AutoAugmentPolicy(Enum):
    IMAGENET = "imagenet"
    CIFAR10 = "cifar10"
    SVHN = "svhn"


def _shear(img, degrees_x, degrees_y, interpolation, fill):
    # sheared about the top-left corner, as the augmentation papers' PIL transform does
    return F.affine(img, angle=0.0, translate=[0, 0], scale=1.0, shear=[degrees_x, degrees_y],
                    interpolation=interpolation, fill=fill, center=[0, 0])


def _translate(img, dx, dy, interpolation, fill):
    return F.affine(img, angle=0.0, translate=[dx, dy], scale=1.0, shear=[0.0, 0.0],
                    interpolation=interpolation, fill=fill)


# op name -> f(img, magnitude, interpolation, fill); shear magnitudes are slopes (tan of the angle)
_OPS = {
    "Identity": lambda img, m, interp, fill: img,
    "ShearX": lambda img, m, interp, fill: _shear(img, math.degrees(math.atan(m)), 0.0, interp, fill),
    "ShearY": lambda img, m, interp, fill: _shear(img, 0.0, math.degrees(math.atan(m)), interp, fill),
    "TranslateX": lambda img, m, interp, fill: _translate(img, int(m), 0, interp, fill),
    "TranslateY": lambda img, m, interp, fill: _translate(img, 0, int(m), interp, fill),
    "Rotate": lambda img, m, interp, fill: F.rotate(img, m, interpolation=interp, fill=fill),
    "Brightness": lambda img, m, interp, fill: F.adjust_brightness(img, 1.0 + m),
    "Color": lambda img, m, interp, fill: F.adjust_saturation(img, 1.0 + m),
    "Contrast": lambda img, m, interp, fill: F.adjust_contrast(img, 1.0 + m),
    "Sharpness": lambda img, m, interp, fill: F.adjust_sharpness(img, 1.0 + m),
    "Posterize": lambda img, m, interp, fill: F.posterize(img, int(m)),
    "Solarize": lambda img, m, interp, fill: F.solarize(img, m),
    "AutoContrast": lambda img, m, interp, fill: F.autocontrast(img),
    "Equalize": lambda img, m, interp, fill: F.equalize(img),
    "Invert": lambda img, m, interp, fill: F.invert(img),
}


def _apply_op(img, op_name, magnitude, interpolation, fill):
    op = _OPS.get(op_name)
    if op is None:
        raise ValueError(f"The provided operator {op_name} is not recognized.")
    return op(img, magnitude, interpolation, fill)


def _fill_list(img, fill):
    """A number fill becomes one float per channel for tensor images; PIL images take it as given."""
    if not isinstance(img, cthtorch.Tensor) or fill is None:
        return fill
    if isinstance(fill, (int, float)):
        return [float(fill)] * F.get_image_num_channels(img)
    return [float(f) for f in fill]


def _posterize_bits(num_bins, lowest_bits):
    """Bits kept per bin: 8 at bin 0 falling evenly to 8 - lowest_bits at the last bin, rounded half to even."""
    return 8 - (cthtorch.arange(num_bins) / ((num_bins - 1) / lowest_bits)).round().int()


def _draw_and_apply(img, space, pick_bin, interpolation, fill):
    """Draw an op uniformly from `space` (name -> (magnitudes, signed)), its bin with pick_bin(n_bins), then a
    sign for signed ops; the draws are the generator calls torchvision makes, in its order."""
    names = list(space)
    op_name = names[int(cthtorch.randint(len(names), (1,)).item())]
    magnitudes, signed = space[op_name]
    magnitude = float(magnitudes[pick_bin(len(magnitudes))].item()) if magnitudes.ndim > 0 else 0.0
    if signed and cthtorch.randint(2, (1,)):
        magnitude = -magnitude
    return _apply_op(img, op_name, magnitude, interpolation, fill)


class RandAugment(cthtorch.nn.Module):
    """num_ops ops drawn uniformly from 14, each at bin `magnitude` of num_magnitude_bins, random sign."""

    def __init__(self, num_ops=2, magnitude=9, num_magnitude_bins=31, interpolation=InterpolationMode.NEAREST,
                 fill=None):
        super().__init__()
        self.num_ops = num_ops
        self.magnitude = magnitude
        self.num_magnitude_bins = num_magnitude_bins
        self.interpolation = interpolation
        self.fill = fill

    def _augmentation_space(self, num_bins, image_size):
        height, width = image_size   # (height, width), as torchvision passes it to an overriding subclass
        lin = lambda hi: cthtorch.linspace(0.0, hi, num_bins)  # noqa: E731
        return {
            "Identity": (cthtorch.tensor(0.0), False),
            "ShearX": (lin(0.3), True),
            "ShearY": (lin(0.3), True),
            "TranslateX": (lin(150.0 / 331.0 * width), True),
            "TranslateY": (lin(150.0 / 331.0 * height), True),
            "Rotate": (lin(30.0), True),
            "Brightness": (lin(0.9), True),
            "Color": (lin(0.9), True),
            "Contrast": (lin(0.9), True),
            "Sharpness": (lin(0.9), True),
            "Posterize": (_posterize_bits(num_bins, 4), False),
            "Solarize": (cthtorch.linspace(255.0, 0.0, num_bins), False),
            "AutoContrast": (cthtorch.tensor(0.0), False),
            "Equalize": (cthtorch.tensor(0.0), False),
        }

    def forward(self, img):
        fill = _fill_list(img, self.fill)
        for _ in range(self.num_ops):
            _, height, width = F.get_dimensions(img)
            space = self._augmentation_space(self.num_magnitude_bins, (height, width))
            img = _draw_and_apply(img, space, lambda n: self.magnitude, self.interpolation, fill)
        return img

    def __repr__(self):
        return (f"{type(self).__name__}(num_ops={self.num_ops}, magnitude={self.magnitude}, "
                f"num_magnitude_bins={self.num_magnitude_bins}, interpolation={self.interpolation}, "
                f"fill={self.fill})")


class TrivialAugmentWide(cthtorch.nn.Module):
    """One op drawn uniformly from 14 at a uniformly drawn bin of num_magnitude_bins (the "wide" ranges of
    TrivialAugment), with a random sign for signed ops."""

    def __init__(self, num_magnitude_bins=31, interpolation=InterpolationMode.NEAREST, fill=None):
        super().__init__()
        self.num_magnitude_bins = num_magnitude_bins
        self.interpolation = interpolation
        self.fill = fill

    def _augmentation_space(self, num_bins):
        lin = lambda hi: cthtorch.linspace(0.0, hi, num_bins)  # noqa: E731
        return {
            "Identity": (cthtorch.tensor(0.0), False),
            "ShearX": (lin(0.99), True),
            "ShearY": (lin(0.99), True),
            "TranslateX": (lin(32.0), True),
            "TranslateY": (lin(32.0), True),
            "Rotate": (lin(135.0), True),
            "Brightness": (lin(0.99), True),
            "Color": (lin(0.99), True),
            "Contrast": (lin(0.99), True),
            "Sharpness": (lin(0.99), True),
            "Posterize": (_posterize_bits(num_bins, 6), False),
            "Solarize": (cthtorch.linspace(255.0, 0.0, num_bins), False),
            "AutoContrast": (cthtorch.tensor(0.0), False),
            "Equalize": (cthtorch.tensor(0.0), False),
        }

    def forward(self, img):
        fill = _fill_list(img, self.fill)
        space = self._augmentation_space(self.num_magnitude_bins)
        pick = lambda n: cthtorch.randint(n, (1,), dtype=cthtorch.long)  # noqa: E731
        return _draw_and_apply(img, space, pick, self.interpolation, fill)

    def __repr__(self):
        return (f"{type(self).__name__}(num_magnitude_bins={self.num_magnitude_bins}, "
                f"interpolation={self.interpolation}, fill={self.fill})")


class _NotWritten:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("torchvision.transforms.%s is not implemented in cthtorch.vision yet (RandAugment "
                                  "and TrivialAugmentWide are); leave the auto-augment policy unset" %
                                  type(self).__name__)


class AutoAugment(_NotWritten):
    pass


class AugMix(_NotWritten):
    pass
