"""torch.nn.intrinsic: the older home of torch.ao.nn.intrinsic (fused modules)."""
from cthtorch.ao.nn.intrinsic import *  # noqa: F401,F403
from cthtorch.ao.nn.intrinsic import _FusedModule  # noqa: F401
from cthtorch.nn.intrinsic import quantized, qat  # noqa: F401,E402
