"""torch.quantization.observer: the older home of torch.ao.quantization.observer."""
from cthtorch.ao.quantization.observer import *  # noqa: F401,F403
