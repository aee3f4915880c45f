from cthtorch.vision.transforms.transforms import *  # noqa: F401,F403
from cthtorch.vision.transforms import functional  # noqa: F401
