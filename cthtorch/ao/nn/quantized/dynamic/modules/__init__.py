from cthtorch.ao.nn.quantized.dynamic.modules.linear import Linear  # noqa: F401
from cthtorch.ao.nn.quantized.dynamic.modules.rnn import LSTM, LSTMCell, GRU, GRUCell, RNNCell  # noqa: F401

__all__ = ["Linear", "LSTM", "GRU", "LSTMCell", "RNNCell", "GRUCell"]
