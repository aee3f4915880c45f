"""torch.ao: architecture optimization; cthtorch has its eager-mode quantization (ao.quantization, ao.nn)."""
import importlib as _importlib


def __getattr__(name):
    # subpackages load on first use, as torch.ao's (torch.ao.quantization imports nn modules)
    if name in ("quantization", "nn"):
        mod = _importlib.import_module("." + name, __name__)
        globals()[name] = mod
        return mod
    raise AttributeError("module 'cthtorch.ao' has no attribute '%s'" % name)
