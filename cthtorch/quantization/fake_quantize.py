"""torch.quantization.fake_quantize: the older home of torch.ao.quantization.fake_quantize."""
from cthtorch.ao.quantization.fake_quantize import *  # noqa: F401,F403
