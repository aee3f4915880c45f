"""torch.ao.nn.intrinsic: fused modules, and their .quantized and .qat versions."""
import importlib as _importlib

from cthtorch.ao.nn.intrinsic.modules import *  # noqa: F401,F403
from cthtorch.ao.nn.intrinsic.modules import _FusedModule, __all__  # noqa: F401


def __getattr__(name):
    if name in ("quantized", "qat", "modules"):
        mod = _importlib.import_module("." + name, __name__)
        globals()[name] = mod
        return mod
    raise AttributeError("module 'cthtorch.ao.nn.intrinsic' has no attribute '%s'" % name)
