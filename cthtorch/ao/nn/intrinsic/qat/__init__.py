from cthtorch.ao.nn.intrinsic.qat.modules import *  # noqa: F401,F403
from cthtorch.ao.nn.intrinsic.qat.modules import __all__  # noqa: F401
