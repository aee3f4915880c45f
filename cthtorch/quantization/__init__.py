"""torch.quantization: the older home of torch.ao.quantization, which programs still import."""
from cthtorch.quantization import (  # noqa: F401
    observer, fake_quantize, qconfig, quantize, stubs, quantization_mappings, fuser_method_mappings,
    qconfig_mapping)
import cthtorch.quantization.fuse_modules  # noqa: F401,E402  (the name is rebound to the function below)
from cthtorch.ao.quantization import *  # noqa: F401,F403,E402


def __getattr__(name):
    if name == "quantize_fx":
        import importlib
        return importlib.import_module(".quantize_fx", __name__)
    raise AttributeError("module 'cthtorch.quantization' has no attribute '%s'" % name)
