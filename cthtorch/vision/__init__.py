"""cthtorch.vision: torchvision's datasets, transforms, models and utils."""
from cthtorch.vision import datasets, io, models, ops, transforms, utils  # noqa: F401
