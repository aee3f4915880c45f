from cthtorch.vision.transforms.transforms import *  # noqa: F401,F403
from cthtorch.vision.transforms import functional  # noqa: F401
from cthtorch.vision.transforms.autoaugment import (AutoAugmentPolicy, AutoAugment, RandAugment,  # noqa: F401
                                                    TrivialAugmentWide, AugMix)
from cthtorch.vision.transforms import autoaugment  # noqa: F401


def __getattr__(name):
    # v2 (and the tv_tensors it dispatches on, Tensor subclasses that arm the __torch_function__ hand-over)
    # loads on first use, as `from torchvision.transforms import v2` does
    if name == "v2":
        import importlib
        return importlib.import_module("cthtorch.vision.transforms.v2")
    raise AttributeError("module 'cthtorch.vision.transforms' has no attribute '%s'" % name)
