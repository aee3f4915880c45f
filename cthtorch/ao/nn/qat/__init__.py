from cthtorch.ao.nn.qat.modules import *  # noqa: F401,F403
from cthtorch.ao.nn.qat.modules import __all__  # noqa: F401
