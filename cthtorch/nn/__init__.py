"""cthtorch.nn: modules, parameters, functional forms and initializers."""
from cthtorch.nn.parameter import Parameter, UninitializedParameter, UninitializedBuffer, Buffer  # noqa: F401
from cthtorch.nn.modules import *  # noqa: F401,F403
from cthtorch.nn.modules.module import Module  # noqa: F401
from cthtorch.nn import functional, init, utils, attention, common_types  # noqa: F401
from cthtorch.nn.modules.rnn import RNN, LSTM, GRU, RNNCell, LSTMCell, GRUCell, RNNBase  # noqa: F401
from cthtorch.nn.modules.transformer import (  # noqa: F401
    MultiheadAttention, TransformerEncoderLayer, TransformerEncoder, TransformerDecoderLayer, TransformerDecoder,
    Transformer,
)
from cthtorch.nn import parallel  # noqa: F401,E402
from cthtorch.nn.parallel import DataParallel  # noqa: F401,E402
# layers beyond the core set (padding, pooling, 3-d conv, lazy, extra norms and losses)
from cthtorch.nn.modules.padding import *  # noqa: F401,F403,E402
from cthtorch.nn.modules.fold import *  # noqa: F401,F403,E402
from cthtorch.nn.modules.distance import *  # noqa: F401,F403,E402
from cthtorch.nn.modules.normalization import *  # noqa: F401,F403,E402
from cthtorch.nn.modules.pooling import *  # noqa: F401,F403,E402
from cthtorch.nn.modules.conv3d import *  # noqa: F401,F403,E402
from cthtorch.nn.modules.misc import *  # noqa: F401,F403,E402
from cthtorch.nn.modules.embedding_bag import *  # noqa: F401,F403,E402
from cthtorch.nn.modules.lazy import *  # noqa: F401,F403,E402
from cthtorch.nn.modules.loss_more import *  # noqa: F401,F403,E402
from cthtorch.nn.modules.adaptive import *  # noqa: F401,F403,E402
from cthtorch.nn.modules.rnn import RNNCellBase  # noqa: F401,E402
import importlib as _importlib  # noqa: E402
# the star import above also exports the submodule nn.modules.utils; nn.utils must win
utils = _importlib.import_module("cthtorch.nn.utils")
