from cthtorch.ao.nn.intrinsic.quantized.modules import *  # noqa: F401,F403
from cthtorch.ao.nn.intrinsic.quantized.modules import __all__  # noqa: F401
