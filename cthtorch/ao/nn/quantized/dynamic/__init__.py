"""torch.ao.nn.quantized.dynamic: modules with int8 weights that quantize their float inputs per call."""
from cthtorch.ao.nn.quantized.dynamic.modules import *  # noqa: F401,F403
from cthtorch.ao.nn.quantized.dynamic.modules import __all__  # noqa: F401
