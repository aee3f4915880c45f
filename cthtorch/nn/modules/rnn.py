"""RNN, LSTM, GRU (multi-layer, bidirectional, batch_first, dropout) and the
cells, written over matmul and pointwise ops; weights named as PyTorch's."""
import math
import warnings

import cthtorch
from cthtorch.nn import functional as F
from cthtorch.nn import init
from cthtorch.nn.modules.module import Module
from cthtorch.nn.parameter import Parameter
from cthtorch.autograd import Function

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


def _apply_permutation(tensor, permutation, dim=1):
    return tensor.index_select(dim, permutation)


def apply_permutation(tensor, permutation, dim=1):
    warnings.warn("`apply_permutation` is deprecated, please use `tensor.index_select(dim, permutation)` instead",
                  FutureWarning, stacklevel=2)
    return _apply_permutation(tensor, permutation, dim)


class _Steps(Function):
    """x (T, ...) -> T step tensors whose backward is one stack (as torch's
    UnbindBackward); unbind/select would give each step a zero gradient of
    the whole sequence, O(T^2) over a sequence. Steps are copies: only the
    recurrence reads them."""
    @staticmethod
    def forward(ctx, x):
        return tuple(s.clone() for s in x.unbind(0))

    @staticmethod
    def backward(ctx, *grads):
        return cthtorch.stack(grads, 0)


def _cell_step(mode, x, h, c, w_ih, w_hh, b_ih, b_hh, nonlinearity="tanh"):
    return _gates_step(mode, F.linear(x, w_ih, b_ih), h, c, w_hh, b_hh, nonlinearity)


def _gates_step(mode, gi, h, c, w_hh, b_hh, nonlinearity="tanh"):
    """one step from the input projection gi = x @ w_ih^T + b_ih, in the
    order torch's CPU cells round in"""
    gh = F.linear(h, w_hh, b_hh)
    if mode == "LSTM":
        g = gh + gi
        i, f, gg, o = g.chunk(4, -1)
        i, f, gg, o = i.sigmoid(), f.sigmoid(), gg.tanh(), o.sigmoid()
        c = f * c + i * gg
        return o * c.tanh(), c
    if mode == "GRU":
        ir, iz, inn = gi.chunk(3, -1)
        hr, hz, hn = gh.chunk(3, -1)
        r = (ir + hr).sigmoid()
        z = (iz + hz).sigmoid()
        n = (inn + hn * r).tanh()
        return (h - n) * z + n, None
    pre = gh + gi
    return (pre.tanh() if nonlinearity == "tanh" else pre.relu()), None


class RNNBase(Module):
    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None, nonlinearity="tanh"):
        super().__init__()
        if proj_size:
            raise NotImplementedError("LSTM proj_size is not implemented in cthtorch")
        if not isinstance(dropout, (int, float)) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an element "
                             "being zeroed")
        self.mode, self.input_size, self.hidden_size = mode, input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional, self.proj_size = float(dropout), bidirectional, proj_size
        self.nonlinearity = nonlinearity
        gate = {"LSTM": 4, "GRU": 3}.get(mode, 1)
        num_dir = 2 if bidirectional else 1
        self._flat_weights_names = []
        for layer in range(num_layers):
            for direction in range(num_dir):
                in_size = input_size if layer == 0 else hidden_size * num_dir
                suffix = "_reverse" if direction == 1 else ""
                names = ["weight_ih_l%d%s" % (layer, suffix), "weight_hh_l%d%s" % (layer, suffix)]
                shapes = [(gate * hidden_size, in_size), (gate * hidden_size, hidden_size)]
                if bias:
                    names += ["bias_ih_l%d%s" % (layer, suffix), "bias_hh_l%d%s" % (layer, suffix)]
                    shapes += [(gate * hidden_size,), (gate * hidden_size,)]
                for n, s in zip(names, shapes):
                    setattr(self, n, Parameter(cthtorch.empty(s, dtype=dtype)))
                self._flat_weights_names.extend(names)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for w in self.parameters():
            init.uniform_(w, -stdv, stdv)

    @property
    def _flat_weights(self):
        return [getattr(self, n) for n in self._flat_weights_names]

    def flatten_parameters(self):
        pass

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    def _weights(self, layer, direction):
        suffix = "_reverse" if direction == 1 else ""
        g = lambda n: getattr(self, n % (layer, suffix))
        return (g("weight_ih_l%d%s"), g("weight_hh_l%d%s"),
                g("bias_ih_l%d%s") if self.bias else None, g("bias_hh_l%d%s") if self.bias else None)

    def forward(self, input, hx=None):
        from cthtorch.nn.utils.rnn import PackedSequence
        packed = isinstance(input, PackedSequence)
        if packed:
            padded, lengths = _unpack(input)
            x, batch_first = padded, False
        else:
            x, batch_first, lengths = input, self.batch_first, None
        if x.dim() not in (2, 3):
            raise ValueError("%s: Expected input to be 2D or 3D, got %dD instead" % (self.mode, x.dim()))
        if x.size(-1) != self.input_size:
            raise RuntimeError("input.size(-1) must be equal to input_size. Expected %d, got %d"
                               % (self.input_size, x.size(-1)))
        unbatched = x.dim() == 2
        if unbatched:
            x = x.unsqueeze(1)
        elif batch_first:
            x = x.transpose(0, 1)
        T, B = x.shape[0], x.shape[1]
        num_dir = 2 if self.bidirectional else 1
        is_lstm = self.mode == "LSTM"
        if hx is None:
            z = cthtorch.zeros(self.num_layers * num_dir, B, self.hidden_size, dtype=x.dtype)
            h0, c0 = z, (z if is_lstm else None)
        elif is_lstm:
            h0, c0 = hx
            if unbatched:
                h0, c0 = h0.unsqueeze(1), c0.unsqueeze(1)
        else:
            h0, c0 = (hx.unsqueeze(1) if unbatched else hx), None
        if packed and input.sorted_indices is not None:
            h0 = h0.index_select(1, input.sorted_indices)
            if c0 is not None:
                c0 = c0.index_select(1, input.sorted_indices)
        hn, cn = [], []
        layer_in = x
        for layer in range(self.num_layers):
            outs = []
            for d in range(num_dir):
                w_ih, w_hh, b_ih, b_hh = self._weights(layer, d)
                idx = layer * num_dir + d
                h, c = h0[idx], (c0[idx] if is_lstm else None)
                steps = range(T - 1, -1, -1) if d == 1 else range(T)
                seq = [None] * T
                # the input projections of all steps in one GEMM, as torch
                # does on CPU
                gis = _Steps.apply(F.linear(layer_in, w_ih, b_ih))
                for t in steps:
                    nh, nc = _gates_step(self.mode, gis[t], h, c, w_hh, b_hh, self.nonlinearity)
                    if lengths is not None:   # finished sequences keep their last state
                        alive = (lengths > t).to(x.dtype).unsqueeze(1)
                        nh = alive * nh + (1 - alive) * h
                        if is_lstm:
                            nc = alive * nc + (1 - alive) * c
                        seq[t] = nh * alive
                    else:
                        seq[t] = nh
                    h, c = nh, nc
                outs.append(cthtorch.stack(seq, 0))
                hn.append(h)
                if is_lstm:
                    cn.append(c)
            layer_in = outs[0] if num_dir == 1 else cthtorch.cat(outs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_in = F.dropout(layer_in, self.dropout, True)
        output = layer_in
        h_n = cthtorch.stack(hn, 0)
        c_n = cthtorch.stack(cn, 0) if is_lstm else None
        if packed:
            if input.unsorted_indices is not None:
                h_n = h_n.index_select(1, input.unsorted_indices)
                if c_n is not None:
                    c_n = c_n.index_select(1, input.unsorted_indices)
            output = _repack(output, input)
        elif unbatched:
            output, h_n = output.squeeze(1), h_n.squeeze(1)
            if c_n is not None:
                c_n = c_n.squeeze(1)
        elif batch_first:
            output = output.transpose(0, 1)
        return output, ((h_n, c_n) if is_lstm else h_n)


def _unpack(packed):
    from cthtorch.nn.utils.rnn import pad_packed_sequence
    padded, lengths = pad_packed_sequence(packed, batch_first=False)
    if packed.sorted_indices is not None:
        padded = padded.index_select(1, packed.sorted_indices)
        lengths = lengths.index_select(0, packed.sorted_indices)
    return padded, lengths


def _repack(output, like):
    from cthtorch.nn.utils.rnn import PackedSequence
    bs = like.batch_sizes.tolist()
    rows = [output[t, :b] for t, b in enumerate(bs)]
    return PackedSequence(cthtorch.cat(rows, 0), like.batch_sizes, like.sorted_indices, like.unsorted_indices)


class RNN(RNNBase):
    def __init__(self, *args, **kwargs):
        nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError("Unknown nonlinearity '%s'. Select from 'tanh' or 'relu'." % nonlinearity)
        super().__init__("RNN_" + nonlinearity.upper(), *args, nonlinearity=nonlinearity, **kwargs)
    # repr as torch's: RNNBase's fields only (nonlinearity is not shown)


class LSTM(RNNBase):
    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)


class GRU(RNNBase):
    def __init__(self, *args, **kwargs):
        super().__init__("GRU", *args, **kwargs)


class RNNCellBase(Module):
    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        self.weight_ih = Parameter(cthtorch.empty((num_chunks * hidden_size, input_size), dtype=dtype))
        self.weight_hh = Parameter(cthtorch.empty((num_chunks * hidden_size, hidden_size), dtype=dtype))
        if bias:
            self.bias_ih = Parameter(cthtorch.empty(num_chunks * hidden_size, dtype=dtype))
            self.bias_hh = Parameter(cthtorch.empty(num_chunks * hidden_size, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for w in self.parameters():
            init.uniform_(w, -stdv, stdv)

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if self.bias is not True:
            s += ", bias={bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)


class RNNCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        unb = input.dim() == 1
        x = input.unsqueeze(0) if unb else input
        h = cthtorch.zeros(x.shape[0], self.hidden_size, dtype=x.dtype) if hx is None else (hx.unsqueeze(0) if unb else hx)
        out, _ = _cell_step("RNN", x, h, None, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh, self.nonlinearity)
        return out.squeeze(0) if unb else out


class LSTMCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        unb = input.dim() == 1
        x = input.unsqueeze(0) if unb else input
        if hx is None:
            z = cthtorch.zeros(x.shape[0], self.hidden_size, dtype=x.dtype)
            hx = (z, z)
        h, c = (hx[0].unsqueeze(0), hx[1].unsqueeze(0)) if unb else hx
        h, c = _cell_step("LSTM", x, h, c, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return (h.squeeze(0), c.squeeze(0)) if unb else (h, c)


class GRUCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        unb = input.dim() == 1
        x = input.unsqueeze(0) if unb else input
        h = cthtorch.zeros(x.shape[0], self.hidden_size, dtype=x.dtype) if hx is None else (hx.unsqueeze(0) if unb else hx)
        out, _ = _cell_step("GRU", x, h, None, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return out.squeeze(0) if unb else out
