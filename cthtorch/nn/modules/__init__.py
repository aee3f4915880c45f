"""torch.nn.modules: every class lives in the file torch keeps it in (linear, conv, pooling, ...)."""
from cthtorch.nn.modules.module import Module  # noqa: F401
from cthtorch.nn.modules.activation import *  # noqa: F401,F403
from cthtorch.nn.modules.adaptive import *  # noqa: F401,F403
from cthtorch.nn.modules.batchnorm import *  # noqa: F401,F403
from cthtorch.nn.modules.channelshuffle import *  # noqa: F401,F403
from cthtorch.nn.modules.container import *  # noqa: F401,F403
from cthtorch.nn.modules.conv import *  # noqa: F401,F403
from cthtorch.nn.modules.distance import *  # noqa: F401,F403
from cthtorch.nn.modules.dropout import *  # noqa: F401,F403
from cthtorch.nn.modules.flatten import *  # noqa: F401,F403
from cthtorch.nn.modules.fold import *  # noqa: F401,F403
from cthtorch.nn.modules.instancenorm import *  # noqa: F401,F403
from cthtorch.nn.modules.linear import *  # noqa: F401,F403
from cthtorch.nn.modules.linear_cross_entropy_options import *  # noqa: F401,F403
from cthtorch.nn.modules.loss import *  # noqa: F401,F403
from cthtorch.nn.modules.normalization import *  # noqa: F401,F403
from cthtorch.nn.modules.padding import *  # noqa: F401,F403
from cthtorch.nn.modules.pixelshuffle import *  # noqa: F401,F403
from cthtorch.nn.modules.pooling import *  # noqa: F401,F403
from cthtorch.nn.modules.rnn import *  # noqa: F401,F403
from cthtorch.nn.modules.sparse import *  # noqa: F401,F403
from cthtorch.nn.modules.transformer import *  # noqa: F401,F403
from cthtorch.nn.modules.upsampling import *  # noqa: F401,F403

__all__ = sorted(name for name, value in globals().items()
                 if isinstance(value, type) and not name.startswith("_") and value.__module__.startswith(__name__))
