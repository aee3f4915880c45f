"""torch.ao.nn: the quantized (and fused / QAT) counterparts of torch.nn modules."""
import importlib as _importlib


def __getattr__(name):
    if name in ("quantized", "intrinsic", "qat"):
        mod = _importlib.import_module("." + name, __name__)
        globals()[name] = mod
        return mod
    raise AttributeError("module 'cthtorch.ao.nn' has no attribute '%s'" % name)
