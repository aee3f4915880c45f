"""torchvision.transforms.autoaugment: the policy names exist; the augmentations themselves are not written yet.

Each transform raises NotImplementedError when built, so a training script that asks for one stops at
once with the reason instead of training without its augmentation."""
from enum import Enum

from cthtorch.vision.transforms.functional import InterpolationMode  # noqa: F401 (torchvision's module has it)


class AutoAugmentPolicy(Enum):
    IMAGENET = "imagenet"
    CIFAR10 = "cifar10"
    SVHN = "svhn"


class _NotWritten:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("torchvision.transforms.%s is not implemented in cthtorch.vision yet (its image "
                                  "ops: affine, posterize, solarize, equalize, autocontrast, sharpness); leave the "
                                  "auto-augment policy unset" % type(self).__name__)


class AutoAugment(_NotWritten):
    pass


class RandAugment(_NotWritten):
    pass


class TrivialAugmentWide(_NotWritten):
    pass


class AugMix(_NotWritten):
    pass
