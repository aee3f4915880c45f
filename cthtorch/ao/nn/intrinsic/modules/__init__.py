from cthtorch.ao.nn.intrinsic.modules.fused import *  # noqa: F401,F403
from cthtorch.ao.nn.intrinsic.modules.fused import _FusedModule, __all__  # noqa: F401
