"""torch.nn.quantized: the older home of torch.ao.nn.quantized."""
from cthtorch.ao.nn.quantized import *  # noqa: F401,F403
from cthtorch.ao.nn.quantized import dynamic  # noqa: F401
