"""torch.nn.quantized.dynamic: the older home of torch.ao.nn.quantized.dynamic."""
from cthtorch.ao.nn.quantized.dynamic import *  # noqa: F401,F403
