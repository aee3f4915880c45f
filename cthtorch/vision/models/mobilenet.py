"""torchvision.models.mobilenet: both MobileNet generations under one module."""
from cthtorch.vision.models import mobilenetv2, mobilenetv3
from cthtorch.vision.models.mobilenetv2 import *  # noqa: F401,F403
from cthtorch.vision.models.mobilenetv3 import *  # noqa: F401,F403

__all__ = mobilenetv2.__all__ + mobilenetv3.__all__
