"""Composite ops: entry points PyTorch exposes from C++ that are compositions
of other ops (CompositeImplicitAutograd in PyTorch's terms). Written once
here over the C ops, so autograd comes from their backward nodes. They are
installed into the cthtorch namespace and cthtorch._C._nn like the C ops."""
import math

import cthtorch
from cthtorch import _C
from cthtorch.autograd.function import Function
from cthtorch._utils import _dtype_name

_nn = _C._nn


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled=True):
    if not training and (running_mean is None or running_var is None):
        raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
    return cthtorch.native_batch_norm(input, weight, bias, running_mean, running_var, training,
                                      0.0 if momentum is None else momentum, eps)[0]


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    for pos, name, t in ((3, "weight", weight), (4, "bias", bias)):
        if t is not None and not isinstance(t, cthtorch.Tensor):   # torch's parser: no number for a Tensor
            raise TypeError("layer_norm(): argument '%s' (position %d) must be Tensor, not %s"
                            % (name, pos, type(t).__name__))
    return cthtorch.native_layer_norm(input, list(normalized_shape), weight, bias, eps)[0]


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    n, c = input.shape[0], input.shape[1]
    if c % num_groups:
        raise RuntimeError("Expected number of channels in input to be divisible by num_groups, but got input of "
                           "shape %s and num_groups=%d" % (list(input.shape), num_groups))
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.dim() != 1 or t.numel() != c):
            raise RuntimeError("Expected %s to be a vector of size equal to the number of channels in input, but got "
                               "%s of shape %s and input of shape %s" % (name, name, list(t.shape), list(input.shape)))
    _C._internal._group_norm_check(input, weight, bias)
    # float32 parameters of a half/bfloat16 input: torch's mixed kernel computes in float32, rounding once at the end
    mixed = any(t is not None and t.dtype != input.dtype for t in (weight, bias))
    x = (input.float() if mixed else input).reshape(n, num_groups, -1)
    y = cthtorch.native_layer_norm(x, [x.shape[-1]], None, None, eps)[0].reshape(input.shape)
    shape = [1, c] + [1] * (input.dim() - 2)
    if weight is not None:
        y = y * weight.reshape(shape)
    if bias is not None:
        y = y + bias.reshape(shape)
    return y.to(input.dtype) if mixed else y


def _check_p(p):
    if p < 0 or p > 1:
        raise ValueError("dropout probability has to be between 0 and 1, but got %s" % p)


def dropout(input, p, train):
    _check_p(p)
    if not train or p == 0:   # torch hands back the input itself
        return input
    if p == 1:
        return input * 0.0
    mask = cthtorch.empty_like(input).bernoulli_(1 - p)
    return input * mask.div_(1 - p)


def dropout_(input, p, train):
    _check_p(p)
    if not train or p == 0:
        return input
    if p == 1:
        return input.mul_(0.0)
    mask = cthtorch.empty_like(input).bernoulli_(1 - p)
    return input.mul_(mask.div_(1 - p))


def _feature_mask(input, p):
    """one scale per (N, C): 0 or 1/(1-p); all zeros when p == 1"""
    shape = list(input.shape[:2]) + [1] * (input.dim() - 2)
    if p == 1:
        return cthtorch.zeros(shape, dtype=input.dtype, device=input.device)
    return cthtorch.empty(shape, dtype=input.dtype, device=input.device).bernoulli_(1 - p).div_(1 - p)


def feature_dropout(input, p, train):
    """Zeroes whole channels (Dropout2d): one draw per (N, C)."""
    _check_p(p)
    if not train or p == 0:
        return input
    return input * _feature_mask(input, p)


def feature_dropout_(input, p, train):
    """in place through mul_, so autograd records the scaling"""
    _check_p(p)
    if not train or p == 0:
        return input
    return input.mul_(_feature_mask(input, p))


def alpha_dropout(input, p, train, feature=False):
    """SELU-preserving dropout: dropped units go to SELU's negative saturation,
    then an affine map restores mean and variance (feature=True: per channel)."""
    _check_p(p)
    if not train or p == 0:
        return input
    alpha = 1.7580993408473766
    shape = list(input.shape[:2]) + [1] * (input.dim() - 2) if feature else input.shape
    keep = cthtorch.empty(shape, dtype=input.dtype, device=input.device).bernoulli_(1 - p)
    a = ((1 - p) * (1 + p * alpha ** 2)) ** -0.5
    b = (keep - 1) * (alpha * a) + alpha * a * p
    return input * (keep * a) + b


def nll_loss_nd(input, target, weight, reduction, ignore_index):
    """nll_loss over any input rank with torch's nodes: 1-d and 2-d inputs are nll_loss
    (NllLossBackward0), 4-d ones nll_loss2d (NllLoss2DBackward0), other ranks nll_loss2d
    on (N, C, 1, -1) views"""
    d = input.dim()
    if d > 1 and (target.shape[0] if target.dim() else 0) != input.shape[0]:
        # torch's message reads a 0-d target's batch size as 0
        raise ValueError("Expected input batch_size (%d) to match target batch_size (%d)."
                         % (input.shape[0], target.shape[0] if target.dim() else 0))
    if d in (1, 2):
        return _nn.nll_loss(input, target, weight, reduction, ignore_index)
    if d == 4:
        return _nn.nll_loss2d(input, target, weight, reduction, ignore_index)
    if d < 1:
        return _nn.nll_loss_nd(input, target, weight, reduction, ignore_index)   # its error
    n, c = input.shape[0], input.shape[1]
    out_size = [n] + list(input.shape[2:])
    if list(target.shape[1:]) != list(input.shape[2:]):
        raise RuntimeError("Expected target size %s, got %s" % (out_size, list(target.shape)))
    inp = input.contiguous().view(n, c, 1, -1) if input.numel() else input.contiguous().view(n, c, 0, 0)
    tgt = target.contiguous().view(n, 1, -1) if target.numel() else target.contiguous().view(n, 0, 0)
    r = _nn.nll_loss2d(inp, tgt, weight, reduction, ignore_index)
    return r.view(out_size) if reduction == 0 else r


def cross_entropy_loss(input, target, weight=None, reduction=1, ignore_index=-100, label_smoothing=0.0):
    """log_softmax + nll, or soft targets (class probabilities), with label smoothing."""
    class_dim = 0 if input.dim() == 1 else 1
    logp = input.log_softmax(class_dim)
    # torch reads a target of the input's shape as class probabilities, any other as class indices (whose
    # checks then name a wrong batch size or dtype)
    if target.shape == input.shape:
        if not target.is_floating_point():
            raise RuntimeError("Expected floating point type for target with class probabilities, got %s"
                               % _dtype_name(target.dtype))
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        c = input.shape[class_dim]
        t = target * (1 - label_smoothing) + label_smoothing / c if label_smoothing > 0 else target
        if weight is not None:
            shape = [1] * input.dim()
            shape[class_dim] = c
            logp = logp * weight.reshape(shape)
        loss = -(logp * t).sum(class_dim)
        if reduction == 0:
            return loss
        if reduction == 2:
            return loss.sum()
        return loss.sum() / (input.numel() / c)
    nll = nll_loss_nd(logp, target, weight, reduction, ignore_index)
    if label_smoothing <= 0:
        return nll
    c = input.shape[class_dim]
    if weight is not None:
        shape = [1] * input.dim()
        shape[class_dim] = c
        smooth = -(logp * weight.reshape(shape)).sum(class_dim)
    else:
        smooth = -logp.sum(class_dim)
    mask = target == ignore_index
    smooth = smooth.masked_fill(mask, 0.0) if hasattr(smooth, "masked_fill") else smooth * (~mask)
    if reduction == 0:
        out = smooth
    elif reduction == 2:
        out = smooth.sum()
    else:
        if weight is not None:
            # the weights of the kept targets alone, in order, as torch sums them (zeros between would regroup)
            denom = weight[target[~mask]].sum()
        else:
            denom = (~mask).sum()
        out = smooth.sum() / denom
    return nll * (1 - label_smoothing) + out * (label_smoothing / c)


def selu(input):
    return _nn.elu(input, 1.6732632423543772848170429916717, 1.0507009873554804934193349852946)


def selu_(input):
    return _nn.elu_(input, 1.6732632423543772848170429916717, 1.0507009873554804934193349852946)


def celu(input, alpha=1.0):
    return _nn.elu(input, alpha, 1.0, 1.0 / alpha)


def celu_(input, alpha=1.0):
    return _nn.elu_(input, alpha, 1.0, 1.0 / alpha)


def prelu(input, weight):
    if weight.dtype != input.dtype:   # torch's prelu kernel does not promote
        raise RuntimeError("prelu: Type promoting not supported. Got %s and %s"
                           % (_dtype_name(input.dtype), _dtype_name(weight.dtype)))
    if not input.is_floating_point():
        raise NotImplementedError("\"prelu_cpu\" not implemented for '%s'" % _dtype_name(input.dtype))
    if weight.numel() != 1 and input.dim() >= 2:
        shape = [1] * input.dim()
        shape[1] = weight.numel()
        weight = weight.reshape(shape)
    return cthtorch.where(input > 0, input, input * weight)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    if not training:
        return _nn.leaky_relu(input, (lower + upper) / 2)
    # torch draws one double uniform per non-positive element, in element order
    with cthtorch.no_grad():
        neg = input.detach() <= 0
        r = cthtorch.empty(int(neg.sum()), dtype=cthtorch.float64).uniform_(lower, upper, generator=generator)
        noise = cthtorch.ones_like(input).masked_scatter_(neg, r.to(input.dtype))
    return input * noise


def _sparse_grad_wanted(weight, sparse):
    return sparse is True and isinstance(weight, cthtorch.Tensor) and weight.requires_grad and \
        cthtorch.is_grad_enabled()


def _arg(args, kwargs, pos, name, default):
    return args[pos] if len(args) > pos else kwargs.get(name, default)


def embedding(*args, **kwargs):
    """torch.embedding called directly: sparse=True gives the weight torch's
    sparse COO gradient (the binding's backward is dense); the binding parses
    every other call, so its argument errors stay torch's."""
    weight = _arg(args, kwargs, 0, "weight", None)
    if not _sparse_grad_wanted(weight, _arg(args, kwargs, 4, "sparse", False)):
        return _EMBEDDING(*args, **kwargs)
    from cthtorch.nn._functional.sparse import embedding_sparse_grad
    return embedding_sparse_grad(weight, _arg(args, kwargs, 1, "indices", None),
                                 _arg(args, kwargs, 2, "padding_idx", -1),
                                 _arg(args, kwargs, 3, "scale_grad_by_freq", False))


def embedding_bag(*args, **kwargs):
    """torch.embedding_bag called directly: as embedding's, sparse=True gives
    a sparse COO weight gradient; the four outputs are the binding's."""
    weight = _arg(args, kwargs, 0, "weight", None)
    if not _sparse_grad_wanted(weight, _arg(args, kwargs, 5, "sparse", False)):
        return _EMBEDDING_BAG(*args, **kwargs)
    from cthtorch.nn._functional.sparse import embedding_bag_sparse_grad
    padding_idx = _arg(args, kwargs, 8, "padding_idx", None)
    return embedding_bag_sparse_grad(weight, _arg(args, kwargs, 1, "indices", None),
                                     _arg(args, kwargs, 2, "offsets", None),
                                     _arg(args, kwargs, 6, "per_sample_weights", None),
                                     _arg(args, kwargs, 4, "mode", 0),
                                     -1 if padding_idx is None else padding_idx % weight.shape[0],
                                     _arg(args, kwargs, 7, "include_last_offset", False),
                                     _arg(args, kwargs, 3, "scale_grad_by_freq", False))


_EMBEDDING, _EMBEDDING_BAG = _C._VariableFunctions.embedding, _C._VariableFunctions.embedding_bag


def register():
    """Registers this module's composites (cthtorch/_ops)."""
    from cthtorch import _ops
    for name in ("embedding", "embedding_bag"):   # sparse=True's COO gradient
        _ops.extend("torch", name, globals()[name], __name__)
    for name in ("batch_norm", "layer_norm", "group_norm", "dropout", "dropout_", "feature_dropout",
                 "alpha_dropout", "selu", "selu_", "celu", "celu_", "prelu", "rrelu") + _EXTRA:
        _ops.op("torch", name, globals()[name], __name__)
    _ops.op("_nn", "cross_entropy_loss", cross_entropy_loss, __name__)
    _ops.op("_nn", "linear", linear, __name__)
    for name in ("allclose", "float_power", "deg2rad", "rad2deg", "positive",
                 "matmul", "dot", "vdot", "inner", "mv", "outer", "ger", "addmv", "addbmm"):
        _ops.op("Tensor", name, globals()[name], __name__)


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(cthtorch.isclose(input, other, rtol, atol, equal_nan).sum().item() ==
                cthtorch.broadcast_shapes(input.shape, other.shape).numel()
                if hasattr(cthtorch, "broadcast_shapes") else
                cthtorch.isclose(input, other, rtol, atol, equal_nan).logical_not().sum().item() == 0)


def float_power(input, exponent):
    to64 = lambda x: x.double() if isinstance(x, cthtorch.Tensor) else float(x)
    return cthtorch.pow(to64(input), cthtorch.tensor(to64(exponent), dtype=cthtorch.float64)
                        if not isinstance(exponent, cthtorch.Tensor) else to64(exponent))


class _Scale(Function):
    """input times a constant as one node (torch's Deg2RadBackward0 / Rad2DegBackward0)"""
    @staticmethod
    def forward(ctx, input, k):
        ctx.k = k
        return input * k

    @staticmethod
    def backward(ctx, g):
        return g * ctx.k, None


class _Deg2Rad(_Scale):
    pass


class _Rad2Deg(_Scale):
    pass


def deg2rad(input):
    if input.requires_grad and cthtorch.is_grad_enabled():
        return _Deg2Rad.apply(input, math.pi / 180.0)
    return input * (math.pi / 180.0)


def rad2deg(input):
    if input.requires_grad and cthtorch.is_grad_enabled():
        return _Rad2Deg.apply(input, 180.0 / math.pi)
    return input * (180.0 / math.pi)


def positive(input):
    if input.dtype == cthtorch.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


_EXTRA = ("allclose", "float_power", "deg2rad", "rad2deg", "positive")


_EXTRA = _EXTRA + ("matmul", "dot", "vdot", "inner", "mv", "outer", "ger", "addmv", "addbmm")
from cthtorch._ops.blas import matmul, dot, vdot, inner, mv, outer, ger, addmv, addbmm, linear  # noqa: E402,F401 (registered by name below)


from cthtorch._sparse_tensor import name_node  # noqa: E402
name_node(_Deg2Rad, "Deg2RadBackward0")
name_node(_Rad2Deg, "Rad2DegBackward0")
