"""cthtorch.vision: torchvision's datasets, transforms, models and utils."""
import importlib as _importlib

from cthtorch.vision import datasets, io, models, ops, transforms, utils  # noqa: F401

# torchvision 0.28 is the release paired with torch 2.13; notebooks print it and parse its minor number
__version__ = "0.28.0+cthtorch"


def _is_tracing():
    """whether torch.jit.trace is recording (DETR's nested_tensor_from_tensor_list takes an ONNX-friendly path
    then)"""
    import cthtorch.jit
    return cthtorch.jit.is_tracing()


def __getattr__(name):
    # tv_tensors are Tensor subclasses with a __torch_function__: defining them makes every op ask for
    # the subclass hand-over, so they load when a program first uses them, not on `import torchvision`
    if name == "tv_tensors":
        return _importlib.import_module("cthtorch.vision.tv_tensors")
    raise AttributeError("module 'cthtorch.vision' has no attribute '%s'" % name)
