"""Torch-level forms of nn.functional ops (torch.kl_div, torch.lstm_cell,
torch.grid_sampler, ...): the ATen signatures torch exposes in its own
namespace, where a reduction is the int enum (1 mean, 2 sum, anything else
none) and modes are ints. torch 2.13's stubs say reduction defaults to 1,
but its binding reduces nothing when the argument is left out, so the
defaults here are 0. Each one checks its arguments as torch's parser does and
then calls the nn.functional code; no kernels live here."""
import cthtorch
from cthtorch.nn import functional as F
from cthtorch.nn._functional import loss as _loss_fns, sampling as _sampling_fns
from cthtorch._ops.nn import alpha_dropout as _alpha_dropout, feature_dropout_  # noqa: F401 (re-exported)
from cthtorch._utils import _dtype_name as _scalar_name, _tensor_arg

__all__ = ["kl_div", "margin_ranking_loss", "triplet_margin_loss", "poisson_nll_loss", "hinge_embedding_loss",
           "cosine_embedding_loss", "instance_norm",
           "native_dropout", "grid_sampler", "lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell",
           "feature_alpha_dropout", "feature_alpha_dropout_", "alpha_dropout_", "feature_dropout_",
           "ctc_loss", "get_device", "binomial", "affine_grid_generator",
           "norm_except_dim", "segment_reduce", "lstm", "gru", "rnn_tanh", "rnn_relu",
           "embedding_renorm_"]

_REDUCTIONS = ("none", "mean", "sum")


def _reduction(op, value, position=None):
    """The reduction string for torch's int enum, with the parser's TypeError
    for anything that is not an int (bools and floats included)."""
    if type(value) is not int and not (isinstance(value, int) and not isinstance(value, bool)):
        where = "argument 'reduction'" + (" (position %d)" % position if position else "")
        raise TypeError("%s(): %s must be int, not %s" % (op, where, type(value).__name__))
    return _REDUCTIONS[value] if 0 <= value < len(_REDUCTIONS) else "none"


# ---------------------------------------------------------------- losses
def kl_div(input, target, reduction=0, *, log_target=False):
    loss = F.kl_div(input, target, reduction="none", log_target=log_target)
    return F._apply_loss_reduction(loss, _reduction("kl_div", reduction, 3))


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=0):
    return F.margin_ranking_loss(input1, input2, target, margin,
                                 reduction=_reduction("margin_ranking_loss", reduction, 5))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-06, swap=False, reduction=0):
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                 reduction=_reduction("triplet_margin_loss", reduction, 8))


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps,
                              reduction=_reduction("poisson_nll_loss", reduction, 6))


def hinge_embedding_loss(input, target, margin=1.0, reduction=0):
    return F.hinge_embedding_loss(input, target, margin, reduction=_reduction("hinge_embedding_loss", reduction, 4))


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=0):
    return F.cosine_embedding_loss(input1, input2, target, margin,
                                   reduction=_reduction("cosine_embedding_loss", reduction, 5))


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=0, zero_infinity=False):
    return _loss_fns.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                              _reduction("ctc_loss", reduction, 6), zero_infinity)


# ---------------------------------------------------------------- normalization, padding
def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled):
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


# ---------------------------------------------------------------- dropout
def native_dropout(input, p, train):
    """(output, keep mask as bool); train=None counts as training, as in torch."""
    if not input.is_floating_point():
        raise RuntimeError("result type Float can't be cast to the desired output type %s" % _scalar_name(input.dtype))
    if train is False or p == 0 and train:
        return input.clone(), cthtorch.ones_like(input, dtype=cthtorch.bool)
    keep = cthtorch.empty_like(input).bernoulli_(1 - p)
    scale = 1.0 / (1 - p) if p < 1 else 0.0
    return input * keep * scale, keep.to(cthtorch.bool)


def feature_alpha_dropout(input, p, train):
    return _alpha_dropout(input, p, train, feature=True)


def _in_place(input, out):
    """Writes an out-of-place result back into input, as torch's x_ ops do."""
    if out is not input:
        with cthtorch.no_grad():
            input.copy_(out)
    return input


def alpha_dropout_(input, p, train):
    return _in_place(input, _alpha_dropout(input, p, train))


def feature_alpha_dropout_(input, p, train):
    return _in_place(input, _alpha_dropout(input, p, train, feature=True))


# ---------------------------------------------------------------- sampling
def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    return _sampling_fns._grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def affine_grid_generator(theta, size, align_corners):
    return _sampling_fns.affine_grid(theta, list(size), bool(align_corners))


# ---------------------------------------------------------------- recurrent cells
def _cell(mode, input, hx, c, w_ih, w_hh, b_ih, b_hh, nonlinearity="tanh"):
    from cthtorch.nn.modules.rnn import _cell_step
    return _cell_step(mode, input, hx, c, w_ih, w_hh, b_ih, b_hh, nonlinearity)


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    if len(hx) != 2:
        raise RuntimeError("lstm_cell expects two hidden states")
    return _cell("LSTM", input, hx[0], hx[1], w_ih, w_hh, b_ih, b_hh)


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    return _cell("GRU", input, hx, None, w_ih, w_hh, b_ih, b_hh)[0]


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    return _cell("RNN", input, hx, None, w_ih, w_hh, b_ih, b_hh, "tanh")[0]


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    return _cell("RNN", input, hx, None, w_ih, w_hh, b_ih, b_hh, "relu")[0]


def _sequence(mode, input, h0, c0, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    from cthtorch.nn.modules.rnn import run_sequence
    return run_sequence(mode, input, h0, c0, params, has_biases, num_layers, dropout, train, bidirectional,
                        batch_first)


def _packed_sequence(mode, data, batch_sizes, h0, c0, params, has_biases, num_layers, dropout, train,
                     bidirectional):
    """The `.data` overloads (a PackedSequence's data and batch_sizes, sorted by decreasing length):
    (output data in the same packed order, h_n[, c_n])."""
    from cthtorch.nn.modules.rnn import _repack, _run_layers, _unpack
    from cthtorch.nn.utils.rnn import PackedSequence
    packed = PackedSequence(data, batch_sizes)
    padded, lengths = _unpack(packed)
    out, h_n, c_n = _run_layers(mode, padded, h0, c0, list(params), has_biases, num_layers, dropout, train,
                                bidirectional, lengths)
    return _repack(out, packed).data, h_n, c_n


# torch.lstm & co. (their `.input` overloads): what the RNN modules' scripted forwards call, over the
# modules' flat weight lists
def lstm(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
    if isinstance(hx, cthtorch.Tensor):      # .data: (data, batch_sizes, hx, params, has_biases, ...)
        if len(params) != 2:
            raise RuntimeError("lstm expects two hidden states")
        return _packed_sequence("LSTM", input, hx, params[0], params[1], has_biases, num_layers, dropout, train,
                                bidirectional, batch_first)
    if len(hx) != 2:
        raise RuntimeError("lstm expects two hidden states")
    return _sequence("LSTM", input, hx[0], hx[1], params, has_biases, num_layers, dropout, train, bidirectional,
                     batch_first)


def _single_state_op(mode, name):
    """torch.gru/rnn_tanh/rnn_relu: one hidden state, so the .data overload is told apart by params,
    (data, batch_sizes, hx, params, has_biases, ...), being a Tensor"""
    def op(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first):
        if isinstance(params, cthtorch.Tensor):
            return _packed_sequence(mode, input, hx, params, None, has_biases, num_layers, dropout, train,
                                    bidirectional, batch_first)[:2]
        return _sequence(mode, input, hx, None, params, has_biases, num_layers, dropout, train, bidirectional,
                         batch_first)[:2]
    op.__name__ = op.__qualname__ = name
    return op


gru = _single_state_op("GRU", "gru")
rnn_tanh = _single_state_op("RNN_TANH", "rnn_tanh")
rnn_relu = _single_state_op("RNN_RELU", "rnn_relu")


def embedding_renorm_(input, indices, max_norm, norm_type):
    """The rows of input that indices name, scaled in place to norm at most max_norm (F.embedding's max_norm)."""
    with cthtorch.no_grad():
        idx = indices.reshape(-1).unique()
        rows = input[idx]
        norms = rows.norm(norm_type, 1, keepdim=True)
        scale = (max_norm / (norms + 1e-7)).clamp(max=1.0)
        input[idx] = rows * scale
    return input


# ---------------------------------------------------------------- misc
def norm_except_dim(v, pow=2, dim=0):
    """The pow-norm over every dim but dim, kept as size-1 dims (weight_norm's g); dim=-1 is the whole norm."""
    if dim == -1:
        return v.norm(pow)
    others = [d for d in range(v.dim()) if d != dim]
    return v.norm(pow, dim=others, keepdim=True) if others else v.abs() if pow != 0 else (v != 0).to(v.dtype)


def get_device(input):
    _tensor_arg("get_device", "input", input, 1)
    return input.get_device()


def binomial(count, prob, generator=None):
    from cthtorch.distributions._samplers import binomial as _binomial
    if not count.is_floating_point():
        raise ValueError("binomial only supports floating-point dtypes for count, got: %s" % _scalar_name(count.dtype))
    if prob.dtype != count.dtype:
        raise RuntimeError("Found dtype %s but expected %s" % (_scalar_name(prob.dtype), _scalar_name(count.dtype)))
    if generator is not None:
        raise NotImplementedError("cthtorch.binomial: an explicit generator is not supported; it draws from the "
                                  "default generator")
    with cthtorch.no_grad():
        return _binomial(count, prob)


# ---------------------------------------------------------------- segment_reduce
_SEGMENT_EMPTY = {"sum": 0.0, "mean": float("nan"), "max": float("-inf"), "min": float("inf"), "prod": 1.0}


def segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0, unsafe=False, initial=None):
    """Reductions over consecutive segments of data along axis (a Python loop
    over segments of existing reductions, so autograd follows). lengths or
    offsets may carry leading dims matching data's; axis is their last dim.
    initial joins every segment's reduction and fills empty segments."""
    reduce = {"amax": "max", "amin": "min"}.get(reduce, reduce)
    if reduce not in _SEGMENT_EMPTY:
        raise RuntimeError("reduce argument must be either sum, prod, mean, amax or amin, got %s" % reduce)
    data.size(axis)   # IndexError for an axis out of range, in torch's words
    axis %= data.dim()
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    name, seg = ("offsets", offsets) if offsets is not None else ("lengths", lengths)
    if axis != seg.dim() - 1:
        raise RuntimeError("segment_reduce(): Expected axis to be the last dimension of %s but got %d." % (name, axis))
    if not data.is_floating_point():
        raise NotImplementedError("\"_segment_reduce_cpu\" not implemented for '%s'" % _scalar_name(data.dtype))
    if offsets is not None:
        lengths = offsets[..., 1:] - offsets[..., :-1]
    if bool((lengths < 0).any()):
        raise RuntimeError("lengths contains negative value!")
    if not unsafe and not bool((lengths.sum(-1) == data.size(axis)).all()):
        raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to sum to "
                           "data.size(lengths.dim()-1) when !unsafe.")
    return _segments(data, reduce, lengths, axis, initial)


def _segments(data, reduce, lengths, axis, initial):
    if lengths.dim() > 1:   # one row of lengths per leading index
        return cthtorch.stack([_segments(data[i], reduce, lengths[i], axis - 1, initial)
                               for i in range(lengths.shape[0])])
    parts, start = [], 0
    for n in (int(v) for v in lengths.tolist()):
        if n == 0:
            shape = list(data.shape)
            shape[axis] = 1
            fill = _SEGMENT_EMPTY[reduce] if initial is None else initial
            parts.append(cthtorch.full(shape, fill, dtype=data.dtype))
        else:
            parts.append(_reduce_segment(data.narrow(axis, start, n), reduce, axis, initial, n))
        start += n
    return cthtorch.cat(parts, axis)


def _reduce_segment(x, reduce, axis, initial, n):
    if reduce in ("sum", "mean"):
        out = x.sum(axis, keepdim=True)
        out = out if initial is None else out + initial
        return out / n if reduce == "mean" else out
    if reduce == "prod":
        out = x.prod(axis, keepdim=True)
        return out if initial is None else out * initial
    out = x.amax(axis, keepdim=True) if reduce == "max" else x.amin(axis, keepdim=True)
    if initial is None:
        return out
    bound = cthtorch.full_like(out, initial)
    return cthtorch.maximum(out, bound) if reduce == "max" else cthtorch.minimum(out, bound)
