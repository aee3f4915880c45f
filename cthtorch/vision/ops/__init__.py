"""torchvision.ops: so far only the helpers the classification reference scripts import (_utils)."""
from cthtorch.vision.ops import _utils  # noqa: F401
