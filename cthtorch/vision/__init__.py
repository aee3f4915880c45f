"""cthtorch.vision: torchvision's datasets, transforms, models and utils."""
from cthtorch.vision import datasets, models, transforms, utils  # noqa: F401
