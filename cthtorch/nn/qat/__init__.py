"""torch.nn.qat: the older home of torch.ao.nn.qat."""
from cthtorch.ao.nn.qat import *  # noqa: F401,F403
