"""torch.nn.intrinsic.qat: the older home of torch.ao.nn.intrinsic.qat."""
from cthtorch.ao.nn.intrinsic.qat import *  # noqa: F401,F403
