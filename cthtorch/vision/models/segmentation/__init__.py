"""torchvision.models.segmentation: FCN, DeepLabV3 and LR-ASPP."""
from cthtorch.vision.models.segmentation.deeplabv3 import *  # noqa: F401,F403
from cthtorch.vision.models.segmentation.fcn import *  # noqa: F401,F403
from cthtorch.vision.models.segmentation.lraspp import *  # noqa: F401,F403
