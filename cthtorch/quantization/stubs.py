"""torch.quantization.stubs: the older home of torch.ao.quantization.stubs."""
from cthtorch.ao.quantization.stubs import *  # noqa: F401,F403
