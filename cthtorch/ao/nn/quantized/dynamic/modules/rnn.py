"""torch.ao.nn.quantized.dynamic.LSTM: an LSTM whose gate matmuls are dynamic int8 linears.

As torch's CPU path (aten/src/ATen/native/quantized/cpu/qrnn / RNN.cpp FullLayer): the input-to-hidden
linear runs once over the whole sequence (one activation quantization for all time steps), the
hidden-to-hidden linear once per step on that step's hidden state; the gates then follow nn.LSTM."""
import cthtorch
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
            return cthtorch.nn.functional.linear(x, self.qweight, self.bias)
        return K.linear_dynamic(x, self.qweight, self.centered, self.bias, reduce_range=True)


class LSTM(nn.Module):
    """DynamicQuantizedLSTM."""
    _FLOAT_MODULE = nn.LSTM

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, dtype=cthtorch.qint8):
        super().__init__()
        self.mode = "LSTM"
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.dtype = bidirectional, dtype
        self.proj_size = 0
        self.version = 2
        self.training = False
        self._cells = []   # per layer, per direction: (ih, hh) _QuantizedLinearWeight pairs

    def _get_name(self):
        return "DynamicQuantizedLSTM"

    extra_repr = nn.modules.rnn.RNNBase.extra_repr   # the float LSTM's text (proj_size is always 0 here)

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

    def _layer(self, x, h, c, ih, hh, reverse):
        gates_ih = ih(x)   # (T, B, 4H): the whole sequence at once
        steps = range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0])
        outs = [None] * x.shape[0]
        for t in steps:
            gates = gates_ih[t] + hh(h)
            i, f, g, o = gates.chunk(4, 1)
            c = cthtorch.sigmoid(f) * c + cthtorch.sigmoid(i) * cthtorch.tanh(g)
            h = cthtorch.sigmoid(o) * cthtorch.tanh(c)
            outs[t] = h
        return cthtorch.stack(outs), h, c

    def forward(self, input, hx=None):
        if isinstance(input, nn.utils.rnn.PackedSequence):
            raise NotImplementedError("cthtorch's DynamicQuantizedLSTM takes padded tensors, not PackedSequence")
        unbatched = input.dim() == 2
        if unbatched:
            input = input.unsqueeze(1)
        elif self.batch_first:
            input = input.transpose(0, 1)
        ndir = 2 if self.bidirectional else 1
        batch = input.shape[1]
        if hx is None:
            zeros = cthtorch.zeros(self.num_layers * ndir, batch, self.hidden_size, dtype=input.dtype)
            hx = (zeros, zeros)
        elif unbatched:
            hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
        h_n, c_n = [], []
        x = input
        for layer in range(self.num_layers):
            outs = []
            for d in range(ndir):
                k = layer * ndir + d
                ih, hh = self._cells[k]
                out, h, c = self._layer(x, hx[0][k], hx[1][k], ih, hh, reverse=d == 1)
                outs.append(out)
                h_n.append(h)
                c_n.append(c)
            x = cthtorch.cat(outs, 2) if ndir == 2 else outs[0]
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = cthtorch.nn.functional.dropout(x, self.dropout, True)
        h_n, c_n = cthtorch.stack(h_n), cthtorch.stack(c_n)
        if unbatched:
            return x.squeeze(1), (h_n.squeeze(1), c_n.squeeze(1))
        if self.batch_first:
            x = x.transpose(0, 1)
        return x, (h_n, c_n)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        if type(mod) is not nn.LSTM:
            raise AssertionError("nn.quantized.dynamic.RNNBase.from_float only works for nn.LSTM and nn.GRU")
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
        if getattr(mod, "proj_size", 0):
            raise NotImplementedError("cthtorch's DynamicQuantizedLSTM has no proj_size")
        qmod = cls(mod.input_size, mod.hidden_size, mod.num_layers, mod.bias, mod.batch_first, mod.dropout,
                   mod.bidirectional, dtype)

        def quantized(w):
            if dtype == cthtorch.float16:
                return w.detach().half().float()
            observer = weight_observer_method()
            observer(w)
            return _quantize_weight(w.float(), observer)
        for layer in range(mod.num_layers):
            for suffix in ("", "_reverse")[:2 if mod.bidirectional else 1]:
                names = ["weight_ih_l%d%s", "weight_hh_l%d%s", "bias_ih_l%d%s", "bias_hh_l%d%s"]
                w_ih, w_hh, b_ih, b_hh = (getattr(mod, n % (layer, suffix), None) for n in names)
                qmod._cells.append((_QuantizedLinearWeight(quantized(w_ih), b_ih),
                                    _QuantizedLinearWeight(quantized(w_hh), b_hh)))
        return qmod


def _not_here(name):
    class Unsupported(nn.Module):
        def __init__(self, *args, **kwargs):
            raise NotImplementedError("cthtorch has no dynamically quantized %s yet; quantize_dynamic leaves "
                                      "it out unless you name it" % name)

        @classmethod
        def from_float(cls, mod, use_precomputed_fake_quant=False):
            cls()
    Unsupported.__name__ = Unsupported.__qualname__ = name
    return Unsupported


GRU = _not_here("GRU")
LSTMCell = _not_here("LSTMCell")
GRUCell = _not_here("GRUCell")
RNNCell = _not_here("RNNCell")
