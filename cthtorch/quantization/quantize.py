"""torch.quantization.quantize: the older home of torch.ao.quantization.quantize."""
from cthtorch.ao.quantization.quantize import *  # noqa: F401,F403
