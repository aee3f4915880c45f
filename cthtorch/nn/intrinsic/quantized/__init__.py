"""torch.nn.intrinsic.quantized: the older home of torch.ao.nn.intrinsic.quantized."""
from cthtorch.ao.nn.intrinsic.quantized import *  # noqa: F401,F403
