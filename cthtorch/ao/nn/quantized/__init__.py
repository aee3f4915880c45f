"""torch.ao.nn.quantized: quantized modules (static), and .dynamic."""
from cthtorch.ao.nn.quantized.modules import *  # noqa: F401,F403
from cthtorch.ao.nn.quantized.modules import __all__  # noqa: F401
from cthtorch.ao.nn.quantized import dynamic  # noqa: F401
