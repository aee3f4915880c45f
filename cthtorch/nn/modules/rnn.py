"""RNN, LSTM, GRU (multi-layer, bidirectional, batch_first, dropout,
PackedSequence, LSTM proj_size) and the cells: GEMMs plus the fused gate
kernels (torch._fused_lstm_cell / _fused_gru_cell); weights named as PyTorch's."""
import math
import warnings
from typing import Optional, Tuple

import cthtorch
from cthtorch import Tensor
from cthtorch.nn import functional as F
from cthtorch.nn import init
from cthtorch.nn.modules.module import Module
from cthtorch.nn.parameter import Parameter
from cthtorch.autograd import Function
from cthtorch.autograd.function import _modified_inplace_error
from cthtorch._sparse_tensor import name_node
from cthtorch._C import _internal   # the fused cells' backward kernels
from cthtorch._ops import dispatch as _dispatch

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
    """one step of a cell (LSTMCell, torch.lstm_cell...): the two projections,
    then the fused gate kernel (src/TH/generic/THTensorRNN.c)"""
    gi = F.linear(x, w_ih, b_ih)
    gh = F.linear(h, w_hh, b_hh)
    if mode == "LSTM":
        hy, cy, _ = cthtorch._fused_lstm_cell(gi + gh, c)
        return hy, cy
    if mode == "GRU":
        return cthtorch._fused_gru_cell(gi, gh, h)[0], None
    pre = gh + gi
    return (pre.tanh() if nonlinearity == "tanh" else pre.relu()), None


def _layer(mode, x, h, c, w_ih, w_hh, b_ih, b_hh, w_hr, reverse, lengths, nonlinearity):
    """One layer and direction over the sequence x (T, B, in). The input
    projection of all steps is one GEMM (as torch's CPU path); each step is
    one GEMM with the hidden state and one fused gate kernel. For LSTM and
    the plain RNN both biases are added once, in the input projection, and
    the step's GEMM accumulates onto its slice (addmm), so the step has no
    separate add. Returns the (T, B, out) outputs and the last h (and c)."""
    T = x.shape[0]
    is_lstm, is_gru = mode == "LSTM", mode == "GRU"
    if is_gru or b_ih is None:
        gis = F.linear(x, w_ih, b_ih)
    else:
        gis = F.linear(x, w_ih, b_ih + b_hh)
    gis = _Steps.apply(gis)
    w_hh_t = w_hh.t()
    w_hr_t = w_hr.t() if w_hr is not None else None
    seq = [None] * T
    for t in (range(T - 1, -1, -1) if reverse else range(T)):
        if is_gru:
            hg = cthtorch.addmm(b_hh, h, w_hh_t) if b_hh is not None else h.mm(w_hh_t)
            nh, nc = cthtorch._fused_gru_cell(gis[t], hg, h)[0], None
        else:
            pre = cthtorch.addmm(gis[t], h, w_hh_t)
            if is_lstm:
                nh, nc, _ = cthtorch._fused_lstm_cell(pre, c)
                if w_hr_t is not None:
                    nh = nh.mm(w_hr_t)
            else:
                nh, nc = (pre.tanh() if nonlinearity == "tanh" else pre.relu()), None
        if lengths is not None:   # finished sequences keep their last state
            alive = (lengths > t).to(x.dtype).unsqueeze(1)
            nh = alive * nh + (1 - alive) * h
            if is_lstm:
                nc = alive * nc + (1 - alive) * c
            seq[t] = nh * alive
        else:
            seq[t] = nh
        h, c = nh, nc
    return cthtorch.stack(seq, 0), h, c


def _packed(w):
    """w (K x N) packed once for the steps' products (src/TH/THGemmPacked.c),
    or None where they stay on addmm/mm: float64 and the half types, CUDA,
    and while an op observer (jit.trace, onnx.export, the profiler) records
    the calls, which must see the ops PyTorch's graph has"""
    if w.dtype != cthtorch.float32 or w.device.type != "cpu" or _dispatch._observers:
        return None
    return _internal._gemm_pack(w)


class _FusedLayer(Function):
    """One LSTM or GRU layer and direction as one autograd node: the forward
    runs _layer's GEMMs and fused cells without recording, and the backward
    walks the steps back with the fused backward kernel and one GEMM each,
    then forms the weight, bias and input gradients of all steps at once
    (G^T H, G^T X, sum G, G W_ih: four GEMM-sized calls per layer instead of
    four per step), as torch's CPU path does. A float32 LSTM runs its whole
    recurrence, forward and backward, in one C call each (_lstm_layer_forward
    / _lstm_layer_backward), with no Python round trip per step. Under create_graph the
    backward re-runs the layer in recorded ops from the saved inputs and
    differentiates that, so double backward keeps working."""

    @staticmethod
    def forward(ctx, mode, reverse, x, h0, c0, w_ih, w_hh, b_ih, b_hh):
        T = x.shape[0]
        is_lstm = mode == "LSTM"
        bias = b_ih + b_hh if is_lstm and b_ih is not None else b_ih
        w_hh_t = w_hh.t()
        # each step's h @ W_hh^T reads W_hh^T packed once here (OpenBLAS would pack it again every step)
        wp, n = _packed(w_hh_t), w_hh.shape[0]
        order = range(T - 1, -1, -1) if reverse else range(T)
        ctx.mode, ctx.reverse, ctx.layer = mode, reverse, False
        ctx.save_for_backward(x, h0, c0, w_ih, w_hh, b_ih, b_hh)
        x2d = x.reshape(T * x.shape[1], x.shape[2])
        if is_lstm and wp is not None:
            # the whole recurrence in one C call (src/ATen/ATRNN.c), which adds the bias step by step
            # (the projection is a plain mm); gis becomes the workspace
            gis = x2d.mm(w_ih.t()).view(T, x.shape[1], -1)
            out, cs, tcs = _internal._lstm_layer_forward(gis, h0.contiguous(), c0.contiguous(), wp, bias, reverse)
            # the backward reads the outputs as the hidden states the steps read (dW_hh = G^T H): ctx keeps
            # the C call's tensor and the output is a detached alias of it (one version counter, checked as torch
            # checks its saved output), so ctx holds no tensor whose grad_fn is this node (see below on cycles)
            ctx.layer, ctx.ws, ctx.cs, ctx.tcs, ctx.out, ctx.out_version = True, gis, cs, tcs, out, out._version
            ctx.h0_zero = not h0.any().item()   # hx=None: the first step read zeros, nothing to add to dW_hh
            return out.detach(), out[order[-1]].clone(), cs[order[-1]].clone()
        if bias is not None and not _dispatch._observers:
            # one addmm over the (T*B, in) rows: the bias rides in the GEMM's C, where F.linear of a 3-D
            # input adds it in a second pass over the (T, B, k*H) projection
            gis = cthtorch.addmm(bias, x2d, w_ih.t()).view(T, x.shape[1], -1)
        else:
            gis = F.linear(x, w_ih, bias)
        h, c = h0, c0
        hs, cs, wss = [None] * T, [None] * T, [None] * T
        for t in order:
            if is_lstm:
                pre = _internal._gemm_packed(h, wp, n, gis[t]) if wp is not None else cthtorch.addmm(gis[t], h, w_hh_t)
                h, c, wss[t] = cthtorch._fused_lstm_cell(pre, c)
                cs[t] = c
            else:
                if wp is not None:
                    hg = _internal._gemm_packed(h, wp, n, b_hh)
                else:
                    hg = cthtorch.addmm(b_hh, h, w_hh_t) if b_hh is not None else h.mm(w_hh_t)
                h, wss[t] = cthtorch._fused_gru_cell(gis[t], hg, h)
            hs[t] = h
        out = cthtorch.stack(hs, 0)
        # the last h and c are outputs, whose grad_fn is this node: ctx must not hold them, else
        # output -> node -> ctx -> output is a cycle that keeps every step's states until gc runs
        # (a detached alias still refers to its source). The backward never reads the last h, and
        # reads the last c from a copy.
        last = order[-1]
        hs[last] = None
        if is_lstm:
            cs[last] = c.clone()
        ctx.hs, ctx.cs, ctx.wss = hs, cs, wss
        return (out, h, c) if is_lstm else (out, h)

    @staticmethod
    def backward(ctx, dout, dh, dc=None):
        x, h0, c0, w_ih, w_hh, b_ih, b_hh = ctx.saved_tensors
        mode, reverse = ctx.mode, ctx.reverse
        is_lstm = mode == "LSTM"
        if cthtorch.is_grad_enabled():
            return _FusedLayer._recorded_backward(mode, reverse, (x, h0, c0, w_ih, w_hh, b_ih, b_hh),
                                                  (dout, dh, dc))
        if ctx.layer:
            return _FusedLayer._layer_backward(ctx, dout, dh, dc)
        T = x.shape[0]
        hs, cs, wss = ctx.hs, ctx.cs, ctx.wss
        order = range(T) if reverse else range(T - 1, -1, -1)   # backward: the forward's order reversed
        prev = (lambda t: t + 1) if reverse else (lambda t: t - 1)
        first = T - 1 if reverse else 0
        dgi, dgh = [None] * T, [None] * T
        need = ctx.needs_input_grad
        need_h0 = need[3]
        wp, n = _packed(w_hh), w_hh.shape[1]   # each step's dgates @ W_hh, W_hh packed once
        dht = dout[order[0]] if dh is None else dout[order[0]] + dh
        for t in order:
            p = prev(t)
            if is_lstm:
                dg, dc = _internal._fused_lstm_cell_backward(dht, dc, None, c0 if t == first else cs[p], cs[t], wss[t])
                dgi[t] = dg
                if wp is None:
                    dh = dg.mm(w_hh)
                    dht = dout[p] + dh if t != first else None
                elif t != first:   # the next step's whole dh: its output's gradient plus dg @ W_hh, in one call
                    dht = _internal._gemm_packed(dg, wp, n, dout[p])
                elif need_h0:      # h0's gradient; none asked for when h0 is the zeros of hx=None
                    dh = _internal._gemm_packed(dg, wp, n)
                else:
                    dh = None
            else:
                dig, dhg, dhx = _internal._fused_gru_cell_backward(dht, None, h0 if t == first else hs[p], wss[t])
                dgi[t], dgh[t] = dig, dhg
                if t == first and not need_h0:
                    dh = None
                else:
                    dh = _internal._gemm_packed(dhg, wp, n, dhx) if wp is not None else cthtorch.addmm(dhx, dhg, w_hh)
                dht = dout[p] + dh if t != first else None
        G = cthtorch.stack(dgi, 0).flatten(0, 1)                # (T*B, k*H)
        Gh = G if is_lstm else cthtorch.stack(dgh, 0).flatten(0, 1)
        # the hidden state each step read: h0, then the outputs shifted by one
        hprev = [h0 if t == first else hs[prev(t)] for t in range(T)]
        Hp = cthtorch.stack(hprev, 0).flatten(0, 1)
        dx = G.mm(w_ih).view(x.shape) if need[2] else None
        dw_ih = G.t().mm(x.flatten(0, 1)) if need[5] else None
        dw_hh = Gh.t().mm(Hp) if need[6] else None
        db_ih = G.sum(0) if b_ih is not None and need[7] else None
        if b_hh is None or not need[8]:
            db_hh = None
        elif is_lstm and db_ih is not None:   # both biases add to the same gates: one column sum, a copy
            db_hh = db_ih.clone()
        else:
            db_hh = Gh.sum(0)
        return None, None, dx, dh, dc, dw_ih, dw_hh, db_ih, db_hh

    @staticmethod
    def _layer_backward(ctx, dout, dh, dc):
        """the backward of a float32 LSTM layer whose forward ran in one C call: the recurrence in
        one C call too, which also gives dx (each step's dgates W_ih), G^T and the bias gradient, then
        dW_ih = G^T X and dW_hh = G^T H, read in place from the input and the output (no copies)"""
        x, h0, c0, w_ih, w_hh, b_ih, b_hh = ctx.saved_tensors
        need = ctx.needs_input_grad
        # the incoming state gradients may be expanded (a sum's backward) or other views
        dh = dh.contiguous() if dh is not None else None
        dc = dc.contiguous() if dc is not None else None
        out = ctx.out
        if out._version != ctx.out_version:
            raise _modified_inplace_error(out, ctx.out_version, 0, "MkldnnRnnLayer")
        # with W_ih packed, the recurrence forms dx step by step from each step's dgates while in cache
        # (no all-steps G for a separate G W_ih)
        T, B, n_in = x.shape
        dx, dh0, dc0, GT, db = _internal._lstm_layer_backward(
            dout.contiguous(), dh, dc, ctx.ws, ctx.cs, ctx.tcs, c0.contiguous(), _packed(w_hh),
            _packed(w_ih) if need[2] else None, n_in, ctx.reverse, need[3])
        dx = dx if need[2] else None
        dw_ih = GT.mm(x.reshape(T * B, n_in)) if need[5] else None
        dw_hh = None
        if need[6]:
            # the steps after the first read the outputs shifted by one step, contiguous rows of out; the
            # first step read h0 (GT's columns are in time order, so the forward's first step is at an end)
            H, first = out.shape[2], (T - 1) * B if ctx.reverse else 0
            rest = slice(0, (T - 1) * B) if ctx.reverse else slice(B, T * B)
            hs = out[1:] if ctx.reverse else out[:-1]
            dw_hh = GT[:, rest].mm(hs.reshape((T - 1) * B, H)) if T > 1 else GT.new_zeros(GT.shape[0], H)
            if not ctx.h0_zero:
                dw_hh.addmm_(GT[:, first:first + B], h0)
        db_ih = db if b_ih is not None and need[7] else None
        if b_hh is None or not need[8]:
            db_hh = None
        else:   # both biases add to the same gates
            db_hh = db.clone() if db_ih is not None else db
        return (None, None, dx, dh0 if need[3] else None, dc0 if need[4] else None, dw_ih, dw_hh, db_ih, db_hh)

    @staticmethod
    def _recorded_backward(mode, reverse, inputs, grads):
        x, h0, c0, w_ih, w_hh, b_ih, b_hh = inputs
        out, h, c = _layer(mode, x, h0, c0, w_ih, w_hh, b_ih, b_hh, None, reverse, None, "tanh")
        outs = [out, h] + ([c] if c is not None else [])
        pairs = [(o, g) for o, g in zip(outs, grads) if g is not None]
        wrt = [t for t in inputs if t is not None and t.requires_grad]
        got = iter(cthtorch.autograd.grad([o for o, _ in pairs], wrt, [g for _, g in pairs], create_graph=True,
                                          allow_unused=True))
        res = [next(got) if t is not None and t.requires_grad else None for t in inputs]
        return (None, None) + tuple(res)


# the node prints as torch's CPU graph names the layer's output: an LSTM layer is one
# MkldnnRnnLayerBackward0, a GRU layer's output is the StackBackward0 of its steps' hidden states
class _FusedLSTMLayer(_FusedLayer):
    pass


class _FusedGRULayer(_FusedLayer):
    pass


name_node(_FusedLSTMLayer, "MkldnnRnnLayerBackward0")
name_node(_FusedGRULayer, "StackBackward0")


class RNNBase(Module):
    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if not isinstance(dropout, (int, float)) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an element "
                             "being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout expects "
                          "num_layers greater than 1, but got dropout={} and num_layers={}".format(dropout, num_layers), stacklevel=2)
        self.mode, self.input_size, self.hidden_size = mode, input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional, self.proj_size = float(dropout), bidirectional, proj_size
        gate = {"LSTM": 4, "GRU": 3}.get(mode, 1)
        num_dir = 2 if bidirectional else 1
        # torch's attributes: _all_weights holds each layer's names, the same strings as _flat_weights_names
        # (a pickled module repeats them by reference, as torch's)
        self._flat_weights_names = []
        self._all_weights = []
        real_hidden = proj_size if proj_size > 0 else hidden_size
        for layer in range(num_layers):
            for direction in range(num_dir):
                in_size = input_size if layer == 0 else real_hidden * num_dir
                suffix = "_reverse" if direction == 1 else ""
                names = ["weight_ih_l%d%s" % (layer, suffix), "weight_hh_l%d%s" % (layer, suffix)]
                shapes = [(gate * hidden_size, in_size), (gate * hidden_size, real_hidden)]
                if bias:
                    names += ["bias_ih_l%d%s" % (layer, suffix), "bias_hh_l%d%s" % (layer, suffix)]
                    shapes += [(gate * hidden_size,), (gate * hidden_size,)]
                if proj_size > 0:
                    names.append("weight_hr_l%d%s" % (layer, suffix))
                    shapes.append((proj_size, hidden_size))
                for n, s in zip(names, shapes):
                    setattr(self, n, Parameter(cthtorch.empty(s, dtype=dtype)))
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self._init_flat_weights()
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for w in self.parameters():
            init.uniform_(w, -stdv, stdv)

    def flatten_parameters(self):
        pass

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
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

    def _init_flat_weights(self):
        # a list attribute as torch's: scripted forwards pass it to torch.lstm/gru/rnn_* as Tensor[]
        self._flat_weights = [getattr(self, n) for n in self._flat_weights_names]

    def __setattr__(self, attr, value):
        names = self.__dict__.get("_flat_weights_names")
        if names is not None and attr in names and "_flat_weights" in self.__dict__:
            self._flat_weights[names.index(attr)] = value
        super().__setattr__(attr, value)

    def _apply(self, fn, recurse=True):
        ret = super()._apply(fn, recurse)
        self._init_flat_weights()     # a dtype change replaces the Parameters
        return ret

    def __setstate__(self, state):
        super().__setstate__(state)
        if "_flat_weights_names" in self.__dict__:
            self._init_flat_weights()

    def _eager_forward(self, input, hx):
        """The whole forward for eager calls, PackedSequence included (TorchScript compiles each
        class's annotated Tensor forward instead, as torch's overload for Tensor input)."""
        from cthtorch.nn.utils.rnn import PackedSequence
        # read here, not from _flat_weights: a parametrization's weight is computed on each access
        flat = [getattr(self, n) for n in self._flat_weights_names]
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
        B = x.shape[1]
        num_dir = 2 if self.bidirectional else 1
        is_lstm = self.mode == "LSTM"
        if hx is None:
            out_size = self.proj_size if self.proj_size > 0 else self.hidden_size
            h0 = cthtorch.zeros(self.num_layers * num_dir, B, out_size, dtype=x.dtype)
            c0 = cthtorch.zeros(self.num_layers * num_dir, B, self.hidden_size, dtype=x.dtype) if is_lstm else None
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
        output, h_n, c_n = _run_layers(self.mode, x, h0, c0, flat, self.bias, self.num_layers,
                                       self.dropout, self.training, self.bidirectional, lengths)
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

    def _check_input(self, input: Tensor):
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError("{}: Expected input to be 2D or 3D, got {}D instead".format(self.mode, input.dim()))
        if input.size(-1) != self.input_size:
            raise RuntimeError("input.size(-1) must be equal to input_size. Expected {}, got {}".format(
                self.input_size, input.size(-1)))

    def _zero_state(self, input: Tensor, size: int) -> Tensor:
        num_dir = 2 if self.bidirectional else 1
        return cthtorch.zeros(self.num_layers * num_dir, input.size(1), size, dtype=input.dtype,
                              device=input.device)

    def _seq_batch_input(self, input: Tensor) -> Tuple[Tensor, bool]:
        """The scripted forwards' input as (seq, batch, feature), and whether it was batched."""
        self._check_input(input)
        is_batched = input.dim() == 3
        if not is_batched:
            input = input.unsqueeze(1)
        elif self.batch_first:
            input = input.transpose(0, 1)
        return input, is_batched

    def _single_state_input(self, input: Tensor, hx: Optional[Tensor]) -> Tuple[Tensor, Tensor, bool]:
        """GRU's and RNN's scripted forward before their op: (seq, batch, feature) input, h0, batched."""
        input, is_batched = self._seq_batch_input(input)
        if hx is None:
            h0 = self._zero_state(input, self.hidden_size)
        else:
            h0 = hx if is_batched else hx.unsqueeze(1)
        return input, h0, is_batched

    def _single_state_output(self, out: Tensor, h_n: Tensor, is_batched: bool) -> Tuple[Tensor, Tensor]:
        if not is_batched:
            return out.squeeze(1), h_n.squeeze(1)
        if self.batch_first:
            out = out.transpose(0, 1)
        return out, h_n


def _run_layers(mode, x, h0, c0, params, has_biases, num_layers, dropout, train, bidirectional, lengths):
    """The layers over x (T, B, in) from the states h0 (and c0): params are the flat weights in
    torch's order (w_ih, w_hh, b_ih, b_hh, w_hr per layer and direction, as present)."""
    num_dir = 2 if bidirectional else 1
    per = 2 + (2 if has_biases else 0)
    if len(params) == per * num_layers * num_dir + num_layers * num_dir:
        per += 1                                           # LSTM with projections: w_hr last
    elif len(params) != per * num_layers * num_dir:
        raise RuntimeError("%s: expected %d flat weights, got %d" % (mode.lower(), per * num_layers * num_dir,
                                                                       len(params)))
    is_lstm = mode == "LSTM"
    hn, cn = [], []
    layer_in = x
    for layer in range(num_layers):
        outs = []
        for d in range(num_dir):
            idx = layer * num_dir + d
            ws = params[idx * per:(idx + 1) * per]
            w_ih, w_hh = ws[0], ws[1]
            b_ih, b_hh = (ws[2], ws[3]) if has_biases else (None, None)
            w_hr = ws[-1] if per in (3, 5) else None
            hx0, cx0 = h0[idx], (c0[idx] if is_lstm else None)
            if mode in ("LSTM", "GRU") and lengths is None and w_hr is None:
                fused = _FusedLSTMLayer if is_lstm else _FusedGRULayer
                res = fused.apply(mode, d == 1, layer_in, hx0, cx0, w_ih, w_hh, b_ih, b_hh)
                out, h, c = res if is_lstm else (res[0], res[1], None)
            else:
                nonlinearity = "relu" if mode == "RNN_RELU" else "tanh"
                out, h, c = _layer(mode, layer_in, hx0, cx0, w_ih, w_hh, b_ih, b_hh, w_hr, d == 1, lengths,
                                   nonlinearity)
            outs.append(out)
            hn.append(h)
            if is_lstm:
                cn.append(c)
        layer_in = outs[0] if num_dir == 1 else cthtorch.cat(outs, -1)
        if dropout and train and layer < num_layers - 1:
            layer_in = (F.dropout(layer_in, dropout, True) if lengths is None
                        else _packed_dropout(layer_in, lengths, dropout))
    return layer_in, cthtorch.stack(hn, 0), (cthtorch.stack(cn, 0) if is_lstm else None)


def run_sequence(mode, input, h0, c0, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    """torch.lstm / torch.gru / torch.rnn_tanh / torch.rnn_relu (their `.input` overloads)."""
    if input.dim() != 3:
        raise RuntimeError("input must have 3 dimensions, got %d" % input.dim())
    x = input.transpose(0, 1) if batch_first else input
    out, h_n, c_n = _run_layers(mode, x, h0, c0, list(params), has_biases, num_layers, dropout, train,
                                bidirectional, None)
    if batch_first:
        out = out.transpose(0, 1)
    return out, h_n, c_n


def _packed_dropout(x, lengths, p):
    """Dropout between the layers of a packed input, drawn over its packed rows (the real steps, time-major, in
    the sorted batch's order) as torch's packed RNNs draw it, so the masks, and the random stream after them,
    are torch's; x is the (T, B, H) padded layout, its batch sorted by decreasing length, so the (T, B) mask of
    real steps selects the rows in packed order."""
    steps = cthtorch.arange(x.shape[0]).unsqueeze(1) < lengths.unsqueeze(0)
    return x.new_zeros(x.shape).index_put((steps,), F.dropout(x[steps], p, True))


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
        self.nonlinearity = nonlinearity   # set before Module.__init__, first in __dict__ as torch's
        super().__init__("RNN_" + nonlinearity.upper(), *args, **kwargs)
    # repr as torch's: RNNBase's fields only (nonlinearity is not shown)

    def forward(self, input: Tensor, hx: Optional[Tensor] = None) -> Tuple[Tensor, Tensor]:
        if not cthtorch.jit.is_scripting():
            return self._eager_forward(input, hx)
        x, h0, is_batched = self._single_state_input(input, hx)
        if self.nonlinearity == "tanh":
            out, h_n = cthtorch.rnn_tanh(x, h0, self._flat_weights, self.bias, self.num_layers, self.dropout,
                                         self.training, self.bidirectional, False)
        else:
            out, h_n = cthtorch.rnn_relu(x, h0, self._flat_weights, self.bias, self.num_layers, self.dropout,
                                         self.training, self.bidirectional, False)
        return self._single_state_output(out, h_n, is_batched)


class LSTM(RNNBase):
    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def forward(self, input: Tensor,
                hx: Optional[Tuple[Tensor, Tensor]] = None) -> Tuple[Tensor, Tuple[Tensor, Tensor]]:
        # eager calls (PackedSequence too) take _eager_forward; TorchScript compiles the rest, which is
        # torch's Tensor overload: torch.lstm over the flat weights
        if not cthtorch.jit.is_scripting():
            return self._eager_forward(input, hx)
        input, is_batched = self._seq_batch_input(input)
        if hx is None:
            h0 = self._zero_state(input, self.proj_size if self.proj_size > 0 else self.hidden_size)
            c0 = self._zero_state(input, self.hidden_size)
        else:
            h0, c0 = hx
            if not is_batched:
                h0, c0 = h0.unsqueeze(1), c0.unsqueeze(1)
        out, h_n, c_n = cthtorch.lstm(input, [h0, c0], self._flat_weights, self.bias, self.num_layers,
                                      self.dropout, self.training, self.bidirectional, False)
        if not is_batched:
            return out.squeeze(1), (h_n.squeeze(1), c_n.squeeze(1))
        if self.batch_first:
            out = out.transpose(0, 1)
        return out, (h_n, c_n)


class GRU(RNNBase):
    def __init__(self, *args, **kwargs):
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input: Tensor, hx: Optional[Tensor] = None) -> Tuple[Tensor, Tensor]:
        if not cthtorch.jit.is_scripting():
            return self._eager_forward(input, hx)
        x, h0, is_batched = self._single_state_input(input, hx)
        out, h_n = cthtorch.gru(x, h0, self._flat_weights, self.bias, self.num_layers, self.dropout, self.training,
                                self.bidirectional, False)
        return self._single_state_output(out, h_n, is_batched)


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

    def _scripted_state(self, input: Tensor, hx: Optional[Tensor]) -> Tuple[Tensor, Tensor, bool]:
        """The scripted RNNCell/GRUCell forward's batched input and state, and whether the input was batched."""
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            h = cthtorch.zeros(input.size(0), self.hidden_size, dtype=input.dtype, device=input.device)
        elif is_batched:
            h = hx
        else:
            h = hx.unsqueeze(0)
        return input, h, is_batched

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

    def forward(self, input: Tensor, hx: Optional[Tensor] = None) -> Tensor:
        if not cthtorch.jit.is_scripting():
            return self._eager_forward(input, hx)
        input, h, is_batched = self._scripted_state(input, hx)   # TorchScript: the cell op, as torch's
        if self.nonlinearity == "tanh":
            out = cthtorch.rnn_tanh_cell(input, h, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        else:
            out = cthtorch.rnn_relu_cell(input, h, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return out if is_batched else out.squeeze(0)

    def _eager_forward(self, input, hx):
        unb = input.dim() == 1
        x = input.unsqueeze(0) if unb else input
        h = cthtorch.zeros(x.shape[0], self.hidden_size, dtype=x.dtype) if hx is None else (hx.unsqueeze(0) if unb else hx)
        out, _ = _cell_step("RNN", x, h, None, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh, self.nonlinearity)
        return out.squeeze(0) if unb else out


class LSTMCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input: Tensor, hx: Optional[Tuple[Tensor, Tensor]] = None) -> Tuple[Tensor, Tensor]:
        if not cthtorch.jit.is_scripting():
            return self._eager_forward(input, hx)
        is_batched = input.dim() == 2   # TorchScript: aten::lstm_cell, as torch's
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            zeros = cthtorch.zeros(input.size(0), self.hidden_size, dtype=input.dtype, device=input.device)
            h, c = zeros, zeros
        elif is_batched:
            h, c = hx[0], hx[1]
        else:
            h, c = hx[0].unsqueeze(0), hx[1].unsqueeze(0)
        h, c = cthtorch.lstm_cell(input, [h, c], self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        if not is_batched:
            return h.squeeze(0), c.squeeze(0)
        return h, c

    def _eager_forward(self, input, hx):
        unb = input.dim() == 1
        x = input.unsqueeze(0) if unb else input
        if hx is None:
            z = cthtorch.zeros(x.shape[0], self.hidden_size, dtype=x.dtype)
            h, c = z, z   # already batched: unbatched input without a state used to get a 3-d state
        else:
            h, c = (hx[0].unsqueeze(0), hx[1].unsqueeze(0)) if unb else hx
        h, c = _cell_step("LSTM", x, h, c, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return (h.squeeze(0), c.squeeze(0)) if unb else (h, c)


class GRUCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input: Tensor, hx: Optional[Tensor] = None) -> Tensor:
        if not cthtorch.jit.is_scripting():
            return self._eager_forward(input, hx)
        input, h, is_batched = self._scripted_state(input, hx)   # TorchScript: aten::gru_cell, as torch's
        out = cthtorch.gru_cell(input, h, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return out if is_batched else out.squeeze(0)

    def _eager_forward(self, input, hx):
        unb = input.dim() == 1
        x = input.unsqueeze(0) if unb else input
        h = cthtorch.zeros(x.shape[0], self.hidden_size, dtype=x.dtype) if hx is None else (hx.unsqueeze(0) if unb else hx)
        out, _ = _cell_step("GRU", x, h, None, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return out.squeeze(0) if unb else out
