"""The PackedSequence overloads of nn.LSTM/GRU/RNN's forward, as TorchScript compiles them.

torch declares two forwards per recurrent module (Tensor and PackedSequence input) and scripts
both, as methods forward__0 and forward__1; a scripted caller picks one by its argument's type.
cthtorch's modules run both inputs in one eager forward, so the packed overload's TorchScript
source lives here and _recursive.py compiles it as each module's forward__1: the packed data
and batch_sizes go to torch.lstm/gru/rnn_*'s `.data` overload, the states are put in the
sequence's sorted order and back by permute_hidden, compiled as a method as torch's is."""
from typing import Optional, Tuple

import cthtorch as torch
from cthtorch import Tensor
from cthtorch.nn.utils.rnn import PackedSequence

__all__ = ["packed_methods", "lstm_forward_packed", "single_state_forward_packed", "lstm_permute_hidden",
           "single_state_permute_hidden"]


# torch's permute_hidden methods, compiled as the module's own where the packed forward calls them
def lstm_permute_hidden(self, hx: Tuple[Tensor, Tensor], permutation: Optional[Tensor]) -> Tuple[Tensor, Tensor]:
    if permutation is None:
        return hx
    return hx[0].index_select(1, permutation), hx[1].index_select(1, permutation)


def single_state_permute_hidden(self, hx: Tensor, permutation: Optional[Tensor]) -> Tensor:
    if permutation is None:
        return hx
    return hx.index_select(1, permutation)


def lstm_forward_packed(self, input: PackedSequence, hx: Optional[Tuple[Tensor, Tensor]] = None
                        ) -> Tuple[PackedSequence, Tuple[Tensor, Tensor]]:
    data, batch_sizes, sorted_indices, unsorted_indices = input
    max_batch_size = int(batch_sizes[0])
    num_directions = 2 if self.bidirectional else 1
    if hx is None:
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        h0 = torch.zeros(self.num_layers * num_directions, max_batch_size, real_hidden, dtype=data.dtype,
                         device=data.device)
        c0 = torch.zeros(self.num_layers * num_directions, max_batch_size, self.hidden_size, dtype=data.dtype,
                         device=data.device)
    else:
        h0, c0 = self.permute_hidden(hx, sorted_indices)
    out, h_n, c_n = torch.lstm(data, batch_sizes, [h0, c0], self._flat_weights, self.bias, self.num_layers,
                               float(self.dropout), self.training, self.bidirectional)
    output = PackedSequence(out, batch_sizes, sorted_indices, unsorted_indices)
    return output, self.permute_hidden((h_n, c_n), unsorted_indices)


def single_state_forward_packed(self, input: PackedSequence, hx: Optional[Tensor] = None
                                ) -> Tuple[PackedSequence, Tensor]:
    """GRU's and RNN's."""
    data, batch_sizes, sorted_indices, unsorted_indices = input
    max_batch_size = int(batch_sizes[0])
    num_directions = 2 if self.bidirectional else 1
    if hx is None:
        h0 = torch.zeros(self.num_layers * num_directions, max_batch_size, self.hidden_size, dtype=data.dtype,
                         device=data.device)
    else:
        h0 = self.permute_hidden(hx, sorted_indices)
    if self.mode == "GRU":
        out, h_n = torch.gru(data, batch_sizes, h0, self._flat_weights, self.bias, self.num_layers,
                             float(self.dropout), self.training, self.bidirectional)
    elif self.mode == "RNN_TANH":
        out, h_n = torch.rnn_tanh(data, batch_sizes, h0, self._flat_weights, self.bias, self.num_layers,
                                  float(self.dropout), self.training, self.bidirectional)
    else:
        out, h_n = torch.rnn_relu(data, batch_sizes, h0, self._flat_weights, self.bias, self.num_layers,
                                  float(self.dropout), self.training, self.bidirectional)
    output = PackedSequence(out, batch_sizes, sorted_indices, unsorted_indices)
    return output, self.permute_hidden(h_n, unsorted_indices)


def packed_methods(mod):
    """{name: function} of the methods a cthtorch.nn recurrent module (whose forward is its class's own)
    adds when scripted: forward__1 and the permute_hidden it calls; empty for other modules."""
    from cthtorch.nn.modules import rnn
    for cls, fwd, perm in ((rnn.LSTM, lstm_forward_packed, lstm_permute_hidden),
                           (rnn.GRU, single_state_forward_packed, single_state_permute_hidden),
                           (rnn.RNN, single_state_forward_packed, single_state_permute_hidden)):
        if isinstance(mod, cls) and type(mod).forward is cls.forward:
            return {"forward__1": fwd, "permute_hidden": perm}
    return {}
