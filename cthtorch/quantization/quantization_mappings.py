"""torch.quantization.quantization_mappings: the older home of torch.ao.quantization.quantization_mappings."""
from cthtorch.ao.quantization.quantization_mappings import *  # noqa: F401,F403
