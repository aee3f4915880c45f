"""cthtorch.vision: torchvision's datasets, transforms, models and utils."""
from cthtorch.vision import datasets, io, models, ops, transforms, tv_tensors, utils  # noqa: F401

# torchvision 0.28 is the release paired with torch 2.13; notebooks print it and parse its minor number
__version__ = "0.28.0+cthtorch"


def _is_tracing():
    """whether torch.jit.trace is recording (DETR's nested_tensor_from_tensor_list takes an ONNX-friendly path
    then)"""
    import cthtorch.jit
    return cthtorch.jit.is_tracing()
