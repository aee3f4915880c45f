"""torch.quantization.fuse_modules: the older home of torch.ao.quantization.fuse_modules."""
from cthtorch.ao.quantization.fuse_modules import *  # noqa: F401,F403
