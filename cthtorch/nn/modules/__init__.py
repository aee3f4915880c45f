from cthtorch.nn.modules.module import Module, register_module_forward_hook, register_module_forward_pre_hook  # noqa: F401
from cthtorch.nn.modules.container import Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict  # noqa: F401
from cthtorch.nn.modules.layers import *  # noqa: F401,F403
from cthtorch.nn.modules.activation import *  # noqa: F401,F403
from cthtorch.nn.modules.loss import *  # noqa: F401,F403
