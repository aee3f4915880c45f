"""cthtorch.nn: modules, parameters, functional forms and initializers."""
from cthtorch.nn.parameter import Parameter, UninitializedParameter, UninitializedBuffer, Buffer  # noqa: F401
from cthtorch.nn.modules import *  # noqa: F401,F403
from cthtorch.nn.modules.module import Module, register_module_forward_hook, register_module_forward_pre_hook  # noqa: F401,E501
from cthtorch.nn import functional, init, utils, attention, common_types, grad  # noqa: F401
from cthtorch.nn import parallel  # noqa: F401,E402
from cthtorch.nn.parallel import DataParallel  # noqa: F401,E402


def __getattr__(name):
    # torch.nn.quantized (and .dynamic), .intrinsic, .qat: loaded on first use, as they pull in
    # torch.ao.quantization
    if name in ("quantized", "intrinsic", "qat"):
        import importlib
        mod = importlib.import_module("." + name, __name__)
        globals()[name] = mod
        return mod
    raise AttributeError("module 'cthtorch.nn' has no attribute '%s'" % name)
