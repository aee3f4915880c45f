"""torch.quantization.qconfig_mapping: the older home of torch.ao.quantization.qconfig_mapping."""
from cthtorch.ao.quantization.qconfig_mapping import *  # noqa: F401,F403
