"""torch.quantization.qconfig: the older home of torch.ao.quantization.qconfig."""
from cthtorch.ao.quantization.qconfig import *  # noqa: F401,F403
