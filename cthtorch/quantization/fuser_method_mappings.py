"""torch.quantization.fuser_method_mappings: the older home of torch.ao.quantization.fuser_method_mappings."""
from cthtorch.ao.quantization.fuser_method_mappings import *  # noqa: F401,F403
