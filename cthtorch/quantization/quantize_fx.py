"""torch.quantization.quantize_fx: the older home of torch.ao.quantization.quantize_fx."""
from cthtorch.ao.quantization.quantize_fx import *  # noqa: F401,F403
