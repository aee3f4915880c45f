"""cthtorch.nn: modules, parameters, functional forms and initializers."""
from cthtorch.nn.parameter import Parameter, UninitializedParameter, Buffer  # noqa: F401
from cthtorch.nn.modules import *  # noqa: F401,F403
from cthtorch.nn.modules.module import Module  # noqa: F401
from cthtorch.nn import functional, init, utils  # noqa: F401
from cthtorch.nn.modules.rnn import RNN, LSTM, GRU, RNNCell, LSTMCell, GRUCell, RNNBase  # noqa: F401
from cthtorch.nn.modules.transformer import (  # noqa: F401
    MultiheadAttention, TransformerEncoderLayer, TransformerEncoder, TransformerDecoderLayer, TransformerDecoder,
    Transformer,
)
from cthtorch.nn import parallel  # noqa: F401,E402
from cthtorch.nn.parallel import DataParallel  # noqa: F401,E402
