"""torch.ao.nn.quantized.dynamic LSTM, GRU and the cells: recurrent layers whose gate matmuls are dynamic
int8 linears.

As torch's CPU path (aten/src/ATen/native/RNN.cpp FullLayer): the input-to-hidden linear runs once over
the whole sequence (one activation quantization for all time steps), the hidden-to-hidden linear once
per step on that step's hidden state; the gates then follow torch's cells. A cell module quantizes its
input and its hidden state on each call."""
import cthtorch
from cthtorch.ao.nn.quantized.modules.utils import JIT_UNSUPPORTED
from cthtorch import nn
from cthtorch.ao.nn.quantized import _integer_kernels as K
from cthtorch.ao.nn.quantized.modules.linear import _quantize_weight

__all__ = ["LSTM", "GRU", "LSTMCell", "GRUCell", "RNNCell"]


class _QuantizedLinearWeight:
    """One quantized weight with its centered integers (computed once) and its float bias."""

    def __init__(self, qweight, bias):
        self.qweight, self.bias = qweight, bias
        self.centered = K.centered_weight(qweight) if qweight.is_quantized else None

    def __call__(self, x):
        if self.centered is None:   # float16 weights: torch computes in float with half-rounded weights
            K.check_dynamic_input(x, fp16=True)
            return cthtorch.nn.functional.linear(x, self.qweight, self.bias)
        return K.linear_dynamic(x, self.qweight, self.centered, self.bias, reduce_range=True)


def _lstm_step(gates_ih, state, hh):
    h, c = state
    i, f, g, o = (gates_ih + hh(h)).chunk(4, 1)
    c = cthtorch.sigmoid(f) * c + cthtorch.sigmoid(i) * cthtorch.tanh(g)
    return cthtorch.sigmoid(o) * cthtorch.tanh(c), c


def _gru_step(gates_ih, h, hh):
    r_i, z_i, n_i = gates_ih.chunk(3, 1)
    r_h, z_h, n_h = hh(h).chunk(3, 1)
    reset, update = cthtorch.sigmoid(r_h + r_i), cthtorch.sigmoid(z_h + z_i)
    new = cthtorch.tanh(n_i + n_h * reset)
    return (h - new) * update + new


def _weight_quantizer(mod):
    """A function quantizing one float weight as the module's qconfig says, and the dtype it gives."""
    if not hasattr(mod, "qconfig"):
        raise AssertionError("Input float module must have qconfig defined")
    if mod.qconfig is not None and mod.qconfig.weight is not None:
        weight_observer_method = mod.qconfig.weight
    else:
        from cthtorch.ao.quantization.qconfig import default_dynamic_qconfig
        weight_observer_method = default_dynamic_qconfig.weight
    dtype = weight_observer_method().dtype
    if dtype not in (cthtorch.qint8, cthtorch.float16):
        raise NotImplementedError(f"Unsupported dtype for dynamic RNN quantization: {dtype}")

    def quantized(w):
        if dtype == cthtorch.float16:
            return w.detach().half().float()
        observer = weight_observer_method()
        observer(w)
        return _quantize_weight(w.float(), observer)
    return quantized, dtype


class _DynamicRNNBase(nn.Module):
    """A multi-layer (bi)directional LSTM or GRU over dynamic int8 linears."""
    _jit_unsupported = JIT_UNSUPPORTED
    _FLOAT_MODULE = None
    _step = None

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, dtype=cthtorch.qint8):
        super().__init__()
        self.mode = type(self).__name__
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.dtype = bidirectional, dtype
        self.proj_size = 0
        self.version = 2
        self.training = False
        self._cells = []   # per layer, per direction: (ih, hh) _QuantizedLinearWeight pairs

    def _get_name(self):
        return "DynamicQuantized" + self.mode

    extra_repr = nn.modules.rnn.RNNBase.extra_repr   # the float module's text (proj_size is always 0 here)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        # torch saves packed cell parameters (ScriptObjects); here each cell's weights and biases
        super()._save_to_state_dict(destination, prefix, keep_vars)
        for i, (ih, hh) in enumerate(self._cells):
            destination[prefix + "_all_weight_values.%d.param" % i] = (ih.qweight, ih.bias, hh.qweight, hh.bias)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        cells, i = [], 0
        while prefix + "_all_weight_values.%d.param" % i in state_dict:
            w_ih, b_ih, w_hh, b_hh = state_dict.pop(prefix + "_all_weight_values.%d.param" % i)
            cells.append((_QuantizedLinearWeight(w_ih, b_ih), _QuantizedLinearWeight(w_hh, b_hh)))
            i += 1
        if cells:
            self._cells = cells
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys, unexpected_keys,
                                      error_msgs)

    def _layer(self, x, state, ih, hh, reverse):
        gates_ih = ih(x)   # (T, B, gates): the whole sequence at once
        steps = range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0])
        outs = [None] * x.shape[0]
        for t in steps:
            state = type(self)._step(gates_ih[t], state, hh)
            outs[t] = state[0] if isinstance(state, tuple) else state
        return cthtorch.stack(outs), state

    def forward(self, input, hx=None):
        if isinstance(input, nn.utils.rnn.PackedSequence):
            raise NotImplementedError("cthtorch's dynamically quantized %s takes padded tensors, not "
                                      "PackedSequence" % self.mode)
        lstm = self.mode == "LSTM"
        unbatched = input.dim() == 2
        if unbatched:
            input = input.unsqueeze(1)
            if hx is not None:
                hx = tuple(h.unsqueeze(1) for h in hx) if lstm else hx.unsqueeze(1)
        elif self.batch_first:
            input = input.transpose(0, 1)
        ndir = 2 if self.bidirectional else 1
        if hx is None:
            zeros = cthtorch.zeros(self.num_layers * ndir, input.shape[1], self.hidden_size, dtype=input.dtype)
            hx = (zeros, zeros) if lstm else zeros
        finals, x = [], input
        for layer in range(self.num_layers):
            outs = []
            for d in range(ndir):
                k = layer * ndir + d
                out, state = self._layer(x, (hx[0][k], hx[1][k]) if lstm else hx[k], *self._cells[k], reverse=d == 1)
                outs.append(out)
                finals.append(state)
            x = cthtorch.cat(outs, 2) if ndir == 2 else outs[0]
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = cthtorch.nn.functional.dropout(x, self.dropout, True)
        if lstm:
            h_n = (cthtorch.stack([f[0] for f in finals]), cthtorch.stack([f[1] for f in finals]))
        else:
            h_n = cthtorch.stack(finals)
        if unbatched:
            return x.squeeze(1), (tuple(h.squeeze(1) for h in h_n) if lstm else h_n.squeeze(1))
        return (x.transpose(0, 1) if self.batch_first else x), h_n

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        if type(mod) is not cls._FLOAT_MODULE:
            raise AssertionError("nn.quantized.dynamic.RNNBase.from_float only works for nn.LSTM and nn.GRU")
        if getattr(mod, "proj_size", 0):
            raise NotImplementedError("cthtorch's DynamicQuantizedLSTM has no proj_size")
        quantized, dtype = _weight_quantizer(mod)
        qmod = cls(mod.input_size, mod.hidden_size, mod.num_layers, mod.bias, mod.batch_first, mod.dropout,
                   mod.bidirectional, dtype)
        for layer in range(mod.num_layers):
            for suffix in ("", "_reverse")[:2 if mod.bidirectional else 1]:
                names = ["weight_ih_l%d%s", "weight_hh_l%d%s", "bias_ih_l%d%s", "bias_hh_l%d%s"]
                w_ih, w_hh, b_ih, b_hh = (getattr(mod, n % (layer, suffix), None) for n in names)
                qmod._cells.append((_QuantizedLinearWeight(quantized(w_ih), b_ih),
                                    _QuantizedLinearWeight(quantized(w_hh), b_hh)))
        return qmod


class LSTM(_DynamicRNNBase):
    """DynamicQuantizedLSTM."""
    _FLOAT_MODULE = nn.LSTM
    _step = staticmethod(_lstm_step)


class GRU(_DynamicRNNBase):
    """DynamicQuantizedGRU."""
    _FLOAT_MODULE = nn.GRU
    _step = staticmethod(_gru_step)


class _DynamicCellBase(nn.Module):
    """One recurrent step per call, with dynamic int8 input and hidden linears."""
    _jit_unsupported = JIT_UNSUPPORTED
    _FLOAT_MODULE = None

    def __init__(self, input_size, hidden_size, bias=True, num_chunks=1, dtype=cthtorch.qint8):
        super().__init__()
        self.input_size, self.hidden_size, self.bias, self.weight_dtype = input_size, hidden_size, bias, dtype
        self._ih = self._hh = None

    def _get_name(self):
        return "DynamicQuantized" + type(self).__name__

    extra_repr = nn.modules.rnn.RNNCellBase.extra_repr

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "_packed_weight_ih"] = (self._ih.qweight, self._ih.bias)
        destination[prefix + "_packed_weight_hh"] = (self._hh.qweight, self._hh.bias)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        for name in ("_ih", "_hh"):
            key = prefix + "_packed_weight" + name
            if key in state_dict:
                setattr(self, name, _QuantizedLinearWeight(*state_dict.pop(key)))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys, unexpected_keys,
                                      error_msgs)

    def forward(self, input, hx=None):
        # batched input only, as torch's quantized cells (a 1-d input fails torch's size(1) check)
        if input.size(1) != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} expected {self.input_size}")
        if hx is None:
            zeros = cthtorch.zeros(input.shape[0], self.hidden_size, dtype=input.dtype)
            hx = (zeros, zeros) if isinstance(self, LSTMCell) else zeros
        return self._cell(self._ih(input), hx)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        if type(mod) is not cls._FLOAT_MODULE:
            raise AssertionError("nn.quantized.dynamic.RNNCellBase.from_float only works for nn.LSTMCell, "
                                 "nn.GRUCell and nn.RNNCell")
        quantized, dtype = _weight_quantizer(mod)
        kwargs = {"nonlinearity": mod.nonlinearity} if cls is RNNCell else {}
        qmod = cls(mod.input_size, mod.hidden_size, bias=mod.bias, dtype=dtype, **kwargs)
        qmod._ih = _QuantizedLinearWeight(quantized(mod.weight_ih), mod.bias_ih)
        qmod._hh = _QuantizedLinearWeight(quantized(mod.weight_hh), mod.bias_hh)
        return qmod


class LSTMCell(_DynamicCellBase):
    _FLOAT_MODULE = nn.LSTMCell

    def _cell(self, gates_ih, hx):
        return _lstm_step(gates_ih, hx, self._hh)


class GRUCell(_DynamicCellBase):
    _FLOAT_MODULE = nn.GRUCell

    def _cell(self, gates_ih, hx):
        return _gru_step(gates_ih, hx, self._hh)


class RNNCell(_DynamicCellBase):
    _FLOAT_MODULE = nn.RNNCell

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", dtype=cthtorch.qint8):
        super().__init__(input_size, hidden_size, bias, dtype=dtype)
        self.nonlinearity = nonlinearity

    def _cell(self, gates_ih, hx):
        pre = gates_ih + self._hh(hx)
        return cthtorch.tanh(pre) if self.nonlinearity == "tanh" else cthtorch.relu(pre)
