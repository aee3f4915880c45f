from cthtorch.vision.transforms.transforms import *  # noqa: F401,F403
from cthtorch.vision.transforms import functional  # noqa: F401
from cthtorch.vision.transforms.autoaugment import (AutoAugmentPolicy, AutoAugment, RandAugment,  # noqa: F401
                                                    TrivialAugmentWide, AugMix)
from cthtorch.vision.transforms import autoaugment  # noqa: F401
from cthtorch.vision.transforms import v2  # noqa: F401
