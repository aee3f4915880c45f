"""nn.functional: the functional forms, over the C ops in cthtorch / cthtorch._C._nn."""
import math
import numbers

import warnings

import cthtorch
torch = cthtorch   # as torch's modules have it: old code writes torch.sparse.torch.eye(n)
from cthtorch.overrides import _handle_with_locals, has_torch_function_unary as _has_torch_function_unary
from cthtorch.overrides import has_torch_function_variadic as _has_torch_function_variadic
from cthtorch import _C
from cthtorch._ops.nn import _check_p
from cthtorch.nn.modules.utils import _pair
from cthtorch._utils import _dtype_name, _int_arg, _int_list, _tensor_arg
from cthtorch._sparse_tensor import name_node
from cthtorch.amp._cpu_policy import fp32_on_cpu, lower_on_cpu, outside_cpu_autocast

_nn = _C._nn
Tensor = cthtorch.Tensor


def _reduction_enum(reduction):
    try:
        return {"none": 0, "mean": 1, "sum": 2}[reduction]
    except KeyError:
        raise ValueError("%s is not a valid value for reduction" % reduction) from None


def _legacy_reduction(size_average, reduce, reduction):
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = "none" if not reduce else ("mean" if size_average else "sum")
    # torch announces the legacy arguments' removal each time they are given
    warnings.warn("size_average and reduce args will be deprecated, please use reduction='%s' instead." % ret)
    return ret


def _apply_loss_reduction(loss, reduction, node=None):
    """the reduced loss; with node, behind a pass-through graph node of that name (torch's fused loss node, printed
    as the loss's grad_fn by the tutorials) when autograd records"""
    if reduction == "none":
        out = loss
    elif reduction == "mean":
        out = loss.mean()
    elif reduction == "sum":
        out = loss.sum()
    else:
        raise ValueError("%s is not a valid value for reduction" % reduction)
    if node is None:
        return out
    from cthtorch._sparse_tensor import _named
    return _named(node, out)


# ---------------------------------------------------------------- linear / conv
def linear(input, weight, bias=None):
    if not isinstance(input, cthtorch.Tensor) and not hasattr(input, "__torch_function__"):
        _tensor_arg("linear", "input", input, 1)   # a forward that forgot its return: torch's parser TypeError
    return _nn.linear(input, weight, bias)


@outside_cpu_autocast
def bilinear(input1, input2, weight, bias=None):
    # y_k = x1^T W_k x2 + b_k
    y = cthtorch.matmul(input1.unsqueeze(-2).unsqueeze(-3), weight)   # (..., out, 1, in2)
    y = (y.squeeze(-2) * input2.unsqueeze(-2)).sum(-1)
    return y + bias if bias is not None else y


def _conv_padding(input, weight, padding, stride, dilation, nd):
    if isinstance(padding, str):
        if padding == "valid":
            return [0] * nd, None
        if padding == "same":
            if any(s != 1 for s in (stride if isinstance(stride, (list, tuple)) else [stride] * nd)):
                raise ValueError("padding='same' is not supported for strided convolutions")
            dil = dilation if isinstance(dilation, (list, tuple)) else [dilation] * nd
            total = [d * (k - 1) for d, k in zip(dil, weight.shape[2:])]
            left = [t // 2 for t in total]
            extra = [t - 2 * lft for t, lft in zip(total, left)]
            return left, extra
        raise ValueError("Invalid padding string '%s', should be one of {'valid', 'same'}" % padding)
    return padding, None


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    if _has_torch_function_unary(input):
        return _handle_with_locals(conv2d, locals(), cthtorch.conv2d)
    pad, extra = _conv_padding(input, weight, padding, stride, dilation, 2)
    if extra and any(extra):
        input = pad_(input, [0, extra[1], 0, extra[0]])
    # int[2] parameters take a lone int as it is: the parser repeats it (and raises torch's errors for it)
    return cthtorch.conv2d(input, weight, bias, stride, pad, dilation, groups)


@lower_on_cpu
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    if _has_torch_function_unary(input):
        return _handle_with_locals(conv1d, locals(), cthtorch.conv1d)
    s = stride[0] if isinstance(stride, (list, tuple)) else stride
    d = dilation[0] if isinstance(dilation, (list, tuple)) else dilation
    if isinstance(padding, str):
        pad, extra = _conv_padding(input, weight, padding, [s], [d], 1)
        if extra and extra[0]:
            input = pad_(input, [0, extra[0]])
        p = pad[0]
    else:
        p = padding[0] if isinstance(padding, (list, tuple)) else padding
    if cthtorch.is_grad_enabled() and any(t is not None and t.requires_grad for t in (input, weight, bias)):
        # one ConvolutionBackward0 node, as torch's (an absent bias is an edge to nothing there too)
        # (an unbatched input is a batch of one there: unsqueezed, the result squeezed)
        batched = input.dim() != 2
        r = _Conv1d.apply(input if batched else input.unsqueeze(0), weight, bias if bias is not None else _NO_BIAS,
                          s, p, d, groups)
        return r if batched else r.squeeze(0)
    out = cthtorch.conv2d(input.unsqueeze(-2), weight.unsqueeze(-2), bias, (1, s), (0, p), (1, d), groups)
    return out.squeeze(-2)


_NO_BIAS = cthtorch.empty(0)


class _Conv1d(cthtorch.autograd.Function):
    """conv1d as conv2d over a height-1 image; backward is conv2d_backward on the same views
    (a recorded op, so double backward works)"""
    @staticmethod
    def forward(ctx, input, weight, bias, s, p, d, groups):
        ctx.save_for_backward(input, weight)
        ctx.conf = ([1, s], [0, p], [1, d], groups)
        b = None if bias is _NO_BIAS else bias
        return cthtorch.conv2d(input.unsqueeze(-2), weight.unsqueeze(-2), b, (1, s), (0, p), (1, d), groups).squeeze(-2)

    @staticmethod
    def backward(ctx, g):
        input, weight = ctx.saved_tensors
        st, pad, dil, groups = ctx.conf
        mask = [int(m) for m in ctx.needs_input_grad[:3]]
        gi, gw, gb = cthtorch._C._internal.conv2d_backward(g.unsqueeze(-2), input.unsqueeze(-2), weight.unsqueeze(-2),
                                                           st, pad, dil, groups, mask)
        return (gi.squeeze(-2) if mask[0] else None, gw.squeeze(-2) if mask[1] else None, gb if mask[2] else None,
                None, None, None, None)


name_node(_Conv1d, "ConvolutionBackward0")


@lower_on_cpu
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    if _has_torch_function_unary(input):
        return _handle_with_locals(conv_transpose2d, locals(), cthtorch.conv_transpose2d)
    _check_transposed_channels(input, weight, 2)
    _check_dtype_as_input(input, weight)
    s, p, op, d = _pair(stride), _pair(padding), _pair(output_padding), _pair(dilation)
    batched = input.dim() == 4
    x = input if batched else input.unsqueeze(0)
    n, cin, h, w = x.shape
    cout, kh, kw = weight.shape[1], weight.shape[2], weight.shape[3]
    oh = (h - 1) * s[0] - 2 * p[0] + d[0] * (kh - 1) + op[0] + 1
    ow = (w - 1) * s[1] - 2 * p[1] + d[1] * (kw - 1) + op[1] + 1
    # the transpose of conv2d(out) w.r.t. its input: backward of a conv whose output is x
    # (a conv weight (Cin, Cout/groups, kh, kw) maps Cout channels to Cin, so groups carry over)
    cout = weight.shape[1] * groups
    zeros = cthtorch.zeros(n, cout, oh, ow, dtype=x.dtype, device=x.device)
    gi = _channels_last_like(
        cthtorch._C._internal.conv2d_backward(x, zeros, weight, list(s), list(p), list(d), groups, [1, 0, 0])[0],
        x, weight) if not x.requires_grad and not weight.requires_grad else \
        _ConvT.apply(x, weight, (n, cout, oh, ow), s, p, d, groups)
    if bias is not None:   # in place, as torch's: the output keeps the input's dtype whatever the bias's
        gi = gi.add_(bias.reshape(1, -1, 1, 1))
    return gi if batched else gi.squeeze(0)


def _reads_channels_last(t):
    # a (N, 1, H, W) tensor is contiguous in both layouts: its strides decide (torch's suggest_memory_format)
    return t.dim() == 4 and t.is_contiguous(memory_format=cthtorch.channels_last) and \
        (not t.is_contiguous() or t.stride(1) < t.stride(3) * t.shape[3])


def _channels_last_like(out, *tensors):
    """out laid out channels_last when one of tensors (the input, a conv's weight) is, as torch's convolutions,
    constant padding and group norm (their suggest_memory_format)"""
    if out.dim() == 4 and any(t is not None and _reads_channels_last(t) for t in tensors):
        return out.contiguous(memory_format=cthtorch.channels_last)
    return out


class _ConvT(cthtorch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, out_shape, s, p, d, groups):
        ctx.save_for_backward(x, weight)
        ctx.cfg = (out_shape, s, p, d, groups)
        z = cthtorch.zeros(out_shape, dtype=x.dtype, device=x.device)
        gi = cthtorch._C._internal.conv2d_backward(x, z, weight, list(s), list(p), list(d), groups, [1, 0, 0])[0]
        return _channels_last_like(gi, x, weight)

    @staticmethod
    def backward(ctx, g):
        x, weight = ctx.saved_tensors
        out_shape, s, p, d, groups = ctx.cfg
        gx = gw = None
        if ctx.needs_input_grad[0]:
            gx = cthtorch.conv2d(g, weight, None, list(s), list(p), list(d), groups)
        if ctx.needs_input_grad[1]:
            gw = cthtorch._C._internal.conv2d_backward(x, g, weight, list(s), list(p), list(d), groups, [0, 1, 0])[1]
        return gx, gw, None, None, None, None, None


@lower_on_cpu
def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    if _has_torch_function_unary(input):
        return _handle_with_locals(conv_transpose1d, locals(), cthtorch.conv_transpose1d)
    _check_transposed_channels(input, weight, 1)
    one = lambda v: v[0] if isinstance(v, (list, tuple)) else v
    out = conv_transpose2d(input.unsqueeze(-2), weight.unsqueeze(-2), bias, (1, one(stride)), (0, one(padding)),
                           (0, one(output_padding)), groups, (1, one(dilation)))
    return out.squeeze(-2)


# ---------------------------------------------------------------- pooling
def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    stride = [] if stride is None else stride   # int[2]: a lone int is repeated by the parser
    return _nn.max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    if _has_torch_function_unary(input):
        return _handle_with_locals(max_pool2d, locals())
    out, idx = max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return (out, idx) if return_indices else out


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    if _has_torch_function_unary(input):
        return _handle_with_locals(max_pool1d, locals())
    one = lambda v: v[0] if isinstance(v, (list, tuple)) else v
    st = one(stride) if stride is not None else one(kernel_size)
    if not return_indices and input.device.type == "cpu" and \
            not (input.requires_grad and cthtorch.is_grad_enabled()):   # the values alone (torch's shortcut too)
        lst = lambda v: list(v) if isinstance(v, (list, tuple)) else [v]   # noqa: E731
        return _C._internal._max_pool1d_values(input, lst(kernel_size), [] if stride is None else lst(stride),
                                               lst(padding), lst(dilation), ceil_mode)
    out, idx = _nn.max_pool2d_with_indices(input.unsqueeze(-2), (1, one(kernel_size)), (1, st), (0, one(padding)),
                                           (1, one(dilation)), ceil_mode)
    out, idx = out.squeeze(-2), idx.squeeze(-2)
    return (out, idx) if return_indices else out


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    stride = [] if stride is None else stride   # int[2]: a lone int is repeated by the parser
    return _nn.avg_pool2d(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    if _has_torch_function_unary(input):
        return _handle_with_locals(avg_pool1d, locals(), cthtorch.avg_pool1d)
    one = lambda v: v[0] if isinstance(v, (list, tuple)) else v
    st = one(stride) if stride is not None else one(kernel_size)
    return _nn.avg_pool2d(input.unsqueeze(-2), (1, one(kernel_size)), (1, st), (0, one(padding)), ceil_mode,
                          count_include_pad, None).squeeze(-2)


def _adaptive_size(input, output_size):
    os = _pair(output_size)
    return tuple(input.shape[-2 + i] if v is None else v for i, v in enumerate(os))


def adaptive_avg_pool2d(input, output_size):
    if _has_torch_function_unary(input):
        return _handle_with_locals(adaptive_avg_pool2d, locals())
    # torch's node for a 1x1 output is MeanBackward1 (its composite calls mean), but its tracer and ONNX
    # exporter still see adaptive_avg_pool2d (GlobalAveragePool): the pool op is kept for both
    return _nn.adaptive_avg_pool2d(input, _adaptive_size(input, output_size))


def adaptive_avg_pool1d(input, output_size):
    if _has_torch_function_unary(input):
        return _handle_with_locals(adaptive_avg_pool1d, locals(), cthtorch.adaptive_avg_pool1d)
    n = output_size[0] if isinstance(output_size, (list, tuple)) else output_size
    return _nn.adaptive_avg_pool2d(input.unsqueeze(-2), (1, n)).squeeze(-2)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    if _has_torch_function_unary(input):
        return _handle_with_locals(adaptive_max_pool2d, locals())
    out, idx = _nn.adaptive_max_pool2d(input, _adaptive_size(input, output_size))
    return (out, idx) if return_indices else out


def adaptive_max_pool1d(input, output_size, return_indices=False):
    if _has_torch_function_unary(input):
        return _handle_with_locals(adaptive_max_pool1d, locals())
    n = output_size[0] if isinstance(output_size, (list, tuple)) else output_size
    # torch's 1-d check, before the 2-d pool sees the extra dim: every dim after the first
    for i in range(1, input.dim()):
        if input.shape[i] == 0:
            raise RuntimeError("adaptive_max_pool1d(): Expected input to have non-zero size for non-batch dimensions, "
                               "but input has sizes %s with dimension %d being empty" % (list(input.shape), i))
    out, idx = _nn.adaptive_max_pool2d(input.unsqueeze(-2), (1, n))
    out, idx = out.squeeze(-2), idx.squeeze(-2)
    return (out, idx) if return_indices else out


# ---------------------------------------------------------------- activations
def relu(input, inplace=False):
    if _has_torch_function_unary(input):
        return _handle_with_locals(relu, locals())
    _tensor_arg("relu_" if inplace else "relu", "input", input, 1)
    return input.relu_() if inplace else input.relu()


def relu_(input):
    return input.relu_()


def relu6(input, inplace=False):
    if _has_torch_function_unary(input):
        return _handle_with_locals(relu6, locals())
    return _nn.relu6_(input) if inplace else _nn.relu6(input)


def elu(input, alpha=1.0, inplace=False):
    if _has_torch_function_unary(input):
        return _handle_with_locals(elu, locals())
    return _nn.elu_(input, alpha) if inplace else _nn.elu(input, alpha)


def selu(input, inplace=False):
    if _has_torch_function_unary(input):
        return _handle_with_locals(selu, locals())
    return cthtorch.selu_(input) if inplace else cthtorch.selu(input)


def celu(input, alpha=1.0, inplace=False):
    if _has_torch_function_unary(input):
        return _handle_with_locals(celu, locals())
    return cthtorch.celu_(input, alpha) if inplace else cthtorch.celu(input, alpha)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    if _has_torch_function_unary(input):
        return _handle_with_locals(leaky_relu, locals())
    return _nn.leaky_relu_(input, negative_slope) if inplace else _nn.leaky_relu(input, negative_slope)


def gelu(input, approximate="none"):
    return _nn.gelu(input, approximate=approximate)


def silu(input, inplace=False):
    if _has_torch_function_unary(input):
        return _handle_with_locals(silu, locals())
    return _nn.silu_(input) if inplace else _nn.silu(input)


def mish(input, inplace=False):
    if _has_torch_function_unary(input):
        return _handle_with_locals(mish, locals())
    return _nn.mish_(input) if inplace else _nn.mish(input)


def softplus(input, beta=1.0, threshold=20.0):
    return _nn.softplus(input, beta, threshold)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if _has_torch_function_unary(input):
        return _handle_with_locals(hardtanh, locals())
    return _nn.hardtanh_(input, min_val, max_val) if inplace else _nn.hardtanh(input, min_val, max_val)


def hardsigmoid(input, inplace=False):
    if _has_torch_function_unary(input):
        return _handle_with_locals(hardsigmoid, locals())
    return _nn.hardsigmoid_(input) if inplace else _nn.hardsigmoid(input)


def hardswish(input, inplace=False):
    if _has_torch_function_unary(input):
        return _handle_with_locals(hardswish, locals())
    return _nn.hardswish_(input) if inplace else _nn.hardswish(input)


def logsigmoid(input):
    return _nn.log_sigmoid(input)


def softsign(input):
    if _has_torch_function_unary(input):
        return _handle_with_locals(softsign, locals())
    return input / (input.abs() + 1)


def tanhshrink(input):
    if _has_torch_function_unary(input):
        return _handle_with_locals(tanhshrink, locals())
    return input - input.tanh()


def softshrink(input, lambd=0.5):
    return cthtorch.where(input > lambd, input - lambd, cthtorch.where(input < -lambd, input + lambd, input * 0))


def hardshrink(input, lambd=0.5):
    return cthtorch.where(input.abs() > lambd, input, input * 0)


def threshold(input, threshold, value, inplace=False):
    if _has_torch_function_unary(input):
        return _handle_with_locals(_threshold_fn, locals())
    return cthtorch.threshold_(input, threshold, value) if inplace else cthtorch.threshold(input, threshold, value)



_threshold_fn = threshold   # its parameter `threshold` hides the name

@lower_on_cpu
def prelu(input, weight):
    return cthtorch.prelu(input, weight)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    if _has_torch_function_unary(input):
        return _handle_with_locals(rrelu, locals())
    return rrelu_(input, lower, upper, training) if inplace else cthtorch.rrelu(input, lower, upper, training)


def glu(input, dim=-1):
    if _has_torch_function_unary(input):
        return _handle_with_locals(glu, locals())
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    a, b = input.chunk(2, dim)
    return a * b.sigmoid()


def sigmoid(input):
    return input.sigmoid()


def tanh(input):
    return input.tanh()


def _softmax_dim(name, ndim, stacklevel):
    """the dim torch picks when none is given, with its deprecation warning (stacklevel counts from
    this helper, as torch's: the default 3 points at the caller of softmax)"""
    warnings.warn("Implicit dimension choice for %s has been deprecated. Change the call to include dim=X as an "
                  "argument." % name, stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if _has_torch_function_unary(input):
        return _handle_with_locals(softmax, locals())
    if dim is None:
        dim = _softmax_dim("softmax", input.dim(), _stacklevel)
    return input.softmax(dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if _has_torch_function_unary(input):
        return _handle_with_locals(log_softmax, locals())
    if dim is None:
        dim = _softmax_dim("log_softmax", input.dim(), _stacklevel)
    return input.log_softmax(dim, dtype=dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    if _has_torch_function_unary(input):
        return _handle_with_locals(softmin, locals())
    if dim is None:
        dim = _softmax_dim("softmin", input.dim(), _stacklevel)
    return (-input).softmax(dim, dtype=dtype)


def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    if _has_torch_function_unary(logits):
        return _handle_with_locals(gumbel_softmax, locals())
    g = -cthtorch.empty_like(logits).exponential_().log()
    y = ((logits + g) / tau).softmax(dim)
    if hard:
        idx = y.argmax(dim, keepdim=True)
        y_hard = cthtorch.zeros_like(logits).scatter_(dim, idx, 1.0)
        return y_hard - y.detach() + y
    return y


# ---------------------------------------------------------------- normalization / dropout / embedding
def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    if _has_torch_function_variadic(input, running_mean, running_var, weight, bias):
        return _handle_with_locals(batch_norm, locals())
    if training:
        size = input.shape
        n = size[0]
        for s in size[2:]:
            n *= s
        if n == 1:
            raise ValueError("Expected more than 1 value per channel when training, got input size %s" % (size,))
    return cthtorch.batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, False)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    """ATen's instance_norm: batch_norm over (1, N*C, ...) with the weights and
    running stats repeated N times; the running stats then take the mean of
    their N updated copies."""
    if _has_torch_function_variadic(input, running_mean, running_var, weight, bias):
        return _handle_with_locals(instance_norm, locals())
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when use_input_stats is false")
    if use_input_stats and math.prod(input.shape[2:]) == 1:   # torch's check, before batch_norm's per-channel one
        raise ValueError("Expected more than 1 spatial element when training, got input size %s" % (input.size(),))
    n, c = input.shape[:2]
    x = input.reshape(1, n * c, *input.shape[2:])
    w, b, rm, rv = (t.repeat(n) if t is not None else None for t in (weight, bias, running_mean, running_var))
    out = cthtorch.batch_norm(x, w, b, rm, rv, use_input_stats, momentum, eps, False)
    with cthtorch.no_grad():
        if running_mean is not None:
            running_mean.copy_(rm.view(n, c).mean(0))
        if running_var is not None:
            running_var.copy_(rv.view(n, c).mean(0))
    return out.reshape(input.shape)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    if _has_torch_function_variadic(input, weight, bias):
        return _handle_with_locals(layer_norm, locals())
    _tensor_arg("layer_norm", "input", input, 1)
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    return cthtorch.layer_norm(input, list(normalized_shape), weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    if _has_torch_function_variadic(input, weight, bias):
        return _handle_with_locals(group_norm, locals())
    return _channels_last_like(cthtorch.group_norm(input, num_groups, weight, bias, eps), input)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    if _has_torch_function_variadic(input, out):
        return _handle_with_locals(normalize, locals())
    denom = _vector_norm(input, p, dim, True).clamp_min(eps).expand_as(input)
    return input / denom


def dropout(input, p=0.5, training=True, inplace=False):
    if _has_torch_function_unary(input):
        return _handle_with_locals(dropout, locals())
    _tensor_arg("dropout", "input", input, 1)
    _check_p(p)
    if _dropout_is_identity(input, p, training):
        return input
    return cthtorch.dropout_(input, p, training) if inplace else cthtorch.dropout(input, p, training)


def _dropout_is_identity(input, p, training):
    """torch returns the input itself (no copy, no RNG draw) in these cases"""
    return not training or p == 0 or input.numel() == 0


def _channel_dropout(input, p, training, inplace, batched):
    """feature dropout over (N, C, *spatial); unbatched input gains N = 1 (callers check p)"""
    x = input if batched else input.unsqueeze(0)
    if inplace:
        cthtorch.feature_dropout_(x, p, training)
        return input
    r = cthtorch.feature_dropout(x, p, training)
    return r if batched else r.squeeze(0)


def dropout1d(input, p=0.5, training=True, inplace=False):
    if _has_torch_function_unary(input):
        return _handle_with_locals(dropout1d, locals())
    _check_p(p)
    if input.dim() not in (2, 3):
        raise RuntimeError("dropout1d: Expected 2D or 3D input, but received a %dD input. Note that dropout1d exists "
                           "to provide channel-wise dropout on inputs with 1 spatial dimension, a channel dimension, "
                           "and an optional batch dimension (i.e. 2D or 3D inputs)." % input.dim())
    return _channel_dropout(input, p, training, inplace, input.dim() == 3)


def _warn_spatial_dims(name, dim, ok, spatial, dims):
    if dim not in ok:
        warnings.warn("%s: Received a %d-D input to %s, which is deprecated and will result in an error in a future "
                      "release. To retain the behavior and silence this warning, please use dropout instead. Note "
                      "that %s exists to provide channel-wise dropout on inputs with %d spatial dimensions, a channel "
                      "dimension, and an optional batch dimension (i.e. %s inputs)."
                      % (name, dim, name, name, spatial, dims), stacklevel=3)


def dropout2d(input, p=0.5, training=True, inplace=False):
    if _has_torch_function_unary(input):
        return _handle_with_locals(dropout2d, locals())
    _check_p(p)
    _warn_spatial_dims("dropout2d", input.dim(), (3, 4), 2, "3D or 4D")
    if input.dim() == 3:   # as torch 2.13: read as (N, C, L), i.e. channel-wise 1D dropout
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior "
                      "is desired - input is interpreted as shape (N, C, L), where C is the channel dim. This behavior "
                      "will change in a future release to interpret the input as one without a batch dimension, i.e. "
                      "shape (C, H, W). To maintain the 1D channel-wise dropout behavior, please switch to using "
                      "dropout1d instead.", stacklevel=2)
    return _channel_dropout(input, p, training, inplace, True)


def dropout3d(input, p=0.5, training=True, inplace=False):
    if _has_torch_function_unary(input):
        return _handle_with_locals(dropout3d, locals())
    _check_p(p)
    _warn_spatial_dims("dropout3d", input.dim(), (4, 5), 3, "4D or 5D")
    return _channel_dropout(input, p, training, inplace, input.dim() == 5)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    if _has_torch_function_unary(input):
        return _handle_with_locals(alpha_dropout, locals())
    return cthtorch.alpha_dropout(input, p, training)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    if _has_torch_function_unary(input):
        return _handle_with_locals(feature_alpha_dropout, locals())
    from cthtorch._ops.nn import alpha_dropout as _alpha_dropout
    return _alpha_dropout(input, p, training, feature=True)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False):
    if _has_torch_function_variadic(input, weight):
        return _handle_with_locals(embedding, locals())
    padding_idx = _embedding_padding_idx(weight, padding_idx)
    if max_norm is not None:
        cthtorch.embedding_renorm_(weight.detach(), input, max_norm, norm_type)
    if sparse and weight.requires_grad and cthtorch.is_grad_enabled():
        from cthtorch.nn._functional.sparse import embedding_sparse_grad
        return embedding_sparse_grad(weight, input, padding_idx, scale_grad_by_freq)
    return cthtorch.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)


def one_hot(tensor, num_classes=-1):
    if _has_torch_function_unary(tensor):
        return _handle_with_locals(one_hot, locals())
    _tensor_arg("one_hot", "input", tensor, 1)
    if tensor.dtype != cthtorch.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    num_classes = _int_arg("one_hot", "num_classes", 2, num_classes)
    if tensor.numel() == 0 and num_classes <= 0:
        raise RuntimeError("Can not infer total number of classes from empty tensor.")
    if tensor.numel():
        lo, hi = cthtorch.aminmax(tensor)
        if lo.item() < 0:
            raise RuntimeError("Class values must be non-negative.")
        if num_classes == -1:
            num_classes = int(hi.item()) + 1
        elif hi.item() >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    out = cthtorch.zeros(*tensor.shape, num_classes, dtype=cthtorch.int64, device=tensor.device)
    return out.scatter_(-1, tensor.unsqueeze(-1), 1)


# ---------------------------------------------------------------- losses
def _loss_tensor_args(fname, input, target, weight=None):
    """torch's parser names the loss's aten op when a model's forward returned None (or a list) instead of a
    tensor; an optional class weight must be a tensor too"""
    _tensor_arg(fname, "input", input, 1)
    _tensor_arg(fname, "target", target, 2)
    if weight is not None:
        _tensor_arg(fname, "weight", weight, 3)


def _no_grad_arg(fname, name, t):
    """torch's error for a tensor argument its kernel has no derivative for (loss weights), raised while grad
    mode is on, whether or not the other inputs require grad"""
    if t is not None and t.requires_grad and cthtorch.is_grad_enabled():
        raise RuntimeError("The function '%s' is not differentiable with respect to argument '%s'. "
                           "This input cannot have requires_grad True." % (fname, name))


def _check_class_weight(weight, target):
    # torch's nll_loss has no derivative for its class weights
    if not target.dtype.is_floating_point:
        _no_grad_arg("nll_loss_forward", "weight", weight)


@fp32_on_cpu
def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    if _has_torch_function_variadic(input, target, weight):
        return _handle_with_locals(nll_loss, locals())
    _loss_tensor_args("nll_loss_nd", input, target, weight)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_class_weight(weight, target)
    from cthtorch._ops.nn import nll_loss_nd
    return nll_loss_nd(input, target, weight, _reduction_enum(reduction), ignore_index)


@fp32_on_cpu
def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    if _has_torch_function_variadic(input, target, weight):
        return _handle_with_locals(cross_entropy, locals())
    _loss_tensor_args("cross_entropy_loss", input, target, weight)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_class_weight(weight, target)
    return _nn.cross_entropy_loss(input, target, weight, _reduction_enum(reduction), ignore_index, label_smoothing)


class _MseLoss(cthtorch.autograd.Function):
    """mse_loss as one graph node, as torch's MseLossBackward0: models print loss.grad_fn and walk next_functions
    from it to the layer that made the input (the neural networks tutorial)"""

    @staticmethod
    def forward(ctx, input, target, reduction):
        ctx.save_for_backward(input, target)   # d recomputed in backward, so create_graph reaches them
        ctx.reduction, ctx.shapes = reduction, (input.shape, target.shape)
        d = input - target
        return _apply_loss_reduction(d * d, reduction)

    @staticmethod
    def backward(ctx, g):
        input, target = ctx.saved_tensors
        d = input - target
        gd = 2 * d * (g / d.numel() if ctx.reduction == "mean" else g)
        gi = gd.sum_to_size(ctx.shapes[0]) if ctx.needs_input_grad[0] else None
        gt = -gd.sum_to_size(ctx.shapes[1]) if ctx.needs_input_grad[1] else None
        return gi, gt, None


name_node(_MseLoss, "MseLossBackward0")


@fp32_on_cpu
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    if _has_torch_function_variadic(input, target, weight):
        return _handle_with_locals(mse_loss, locals())
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _warn_target_size(input, target)
    if weight is not None:
        return _weighted_loss((input - target).pow(2), weight, input, reduction)
    if reduction not in ("mean", "sum", "none"):
        raise ValueError("%s is not a valid value for reduction" % reduction)
    if input.is_complex() or target.is_complex():   # torch's kernel has no complex case (the weighted path does)
        raise NotImplementedError("\"mse_cpu\" not implemented for '%s'"
                                  % _dtype_name(cthtorch.promote_types(input.dtype, target.dtype)))
    if (input.requires_grad or target.requires_grad) and cthtorch.is_grad_enabled():
        return _MseLoss.apply(input, target, reduction)
    d = input - target
    return _apply_loss_reduction(d * d, reduction)


def _warn_target_size(input, target):
    """torch's warning for an elementwise loss whose target broadcasts against input, at the caller's line
    (stacklevel: this, the loss, its fp32_on_cpu wrapper)"""
    if input.shape != target.shape:
        import warnings
        warnings.warn("Using a target size (%s) that is different to the input size (%s). This will likely lead to "
                      "incorrect results due to broadcasting. Please ensure they have the same size."
                      % (target.size(), input.size()), stacklevel=4)


def _weighted_loss(loss, weight, input, reduction, mean_over_weight=True):
    """the elementwise loss times weight (input's shape); 'mean' divides by weight.sum() (mse, l1) or by the
    count (huber), as torch's weighted forms do"""
    if weight.size() != input.size():
        raise ValueError("Weights and input must have the same size.")
    loss = loss * weight
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.sum() / weight.sum() if mean_over_weight else loss.mean()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


@fp32_on_cpu
def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    if _has_torch_function_variadic(input, target):
        # torch 2.13 hands l1_loss on without its weight (fx prints the call so)
        return _C._handle_torch_function(l1_loss, (input, target, weight), (input, target),
                                         dict(size_average=size_average, reduce=reduce, reduction=reduction))
    _warn_target_size(input, target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if weight is not None:
        return _weighted_loss((input - target).abs(), weight, input, reduction)
    return _apply_loss_reduction((input - target).abs(), reduction)


@fp32_on_cpu
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    if _has_torch_function_variadic(input, target):
        return _handle_with_locals(smooth_l1_loss, locals())
    _warn_target_size(input, target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if beta == 0:   # torch's l1_loss then
        return _apply_loss_reduction((input - target).abs(), reduction)
    if input.is_cpu and target.is_cpu:   # one fused pass each way (src/ATen/ATLoss.c)
        return _nn.smooth_l1_loss(input, target, _reduction_enum(reduction), beta)
    d = (input - target).abs()
    loss = cthtorch.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta)
    return _apply_loss_reduction(loss, reduction, "SmoothL1LossBackward0")


@fp32_on_cpu
def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    if _has_torch_function_variadic(input, target, weight):
        return _handle_with_locals(huber_loss, locals())
    _warn_target_size(input, target)
    if weight is None and input.is_cpu and target.is_cpu:   # one fused pass each way (src/ATen/ATLoss.c)
        return _nn.huber_loss(input, target, _reduction_enum(reduction), delta)
    d = (input - target).abs()
    loss = cthtorch.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta))
    if weight is not None:
        return _weighted_loss(loss, weight, input, reduction, mean_over_weight=False)
    return _apply_loss_reduction(loss, reduction, "HuberLossBackward0")


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    if _has_torch_function_variadic(input, target, weight):
        return _handle_with_locals(binary_cross_entropy, locals())
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError("Using a target size (%s) that is different to the input size (%s) is deprecated. Please "
                         "ensure they have the same size." % (target.size(), input.size()))
    if weight is not None:   # torch's steps: broadcast to target, its kernel's check, the loss's shape
        weight = weight.expand(cthtorch.broadcast_shapes(target.size(), weight.size()))
        _no_grad_arg("binary_cross_entropy", "weight", weight)
        if weight.shape != input.shape:
            raise RuntimeError("output with shape %s doesn't match the broadcast shape %s"
                               % (list(input.shape), list(weight.shape)))
    for t in (target, weight):   # torch's kernel takes every operand in the input's dtype
        if t is not None and t.dtype != input.dtype:
            raise RuntimeError("Found dtype %s but expected %s" % (_dtype_name(t.dtype), _dtype_name(input.dtype)))
    loss = -(target * input.log().clamp(min=-100) + (1 - target) * (1 - input).log().clamp(min=-100))
    if weight is not None:
        loss = loss * weight
    return _apply_loss_reduction(loss, reduction, "BinaryCrossEntropyBackward0")


@fp32_on_cpu
def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    if _has_torch_function_variadic(input, target, weight, pos_weight):
        return _handle_with_locals(binary_cross_entropy_with_logits, locals())
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError("Target size (%s) must be the same as input size (%s)" % (target.size(), input.size()))
    # torch computes (1 - target).mul_(input)...: the loss takes the target's dtype, which an integer or
    # bool target cannot be
    if target.dtype == cthtorch.bool:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
                           "`logical_xor()` operator instead.")
    if not target.is_floating_point():
        raise RuntimeError("result type %s can't be cast to the desired output type %s"
                           % (_dtype_name(cthtorch.result_type(input, target)), _dtype_name(target.dtype)))
    if target.dtype != input.dtype:
        wide = cthtorch.result_type(input, target)
        return binary_cross_entropy_with_logits(input.to(wide), target.to(wide), weight, None, None, reduction,
                                                pos_weight).to(target.dtype)
    if input.is_cpu and target.is_cpu and (weight is None or weight.is_cpu) and \
            (pos_weight is None or pos_weight.is_cpu):   # one fused pass each way (src/ATen/ATLoss.c)
        for name, t in (("weight", weight), ("pos_weight", pos_weight)):
            _no_grad_arg("binary_cross_entropy_with_logits", name, t)
        return cthtorch.binary_cross_entropy_with_logits(input, target, weight, pos_weight, _reduction_enum(reduction))
    log_sig = _nn.log_sigmoid(input)
    log_one_minus = _nn.log_sigmoid(-input)
    if pos_weight is not None:
        loss = -(pos_weight * target * log_sig + (1 - target) * log_one_minus)
    else:
        loss = -(target * log_sig + (1 - target) * log_one_minus)
    if weight is not None:
        loss = loss * weight
    return _apply_loss_reduction(loss, reduction, "BinaryCrossEntropyWithLogitsBackward0")


@fp32_on_cpu
def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    if _has_torch_function_variadic(input, target):
        return _handle_with_locals(kl_div, locals())
    _loss_tensor_args("kl_div", input, target)
    if size_average is None and reduce is None and reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                      "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                      "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                      stacklevel=3)   # the caller's line, past fp32_on_cpu's wrapper
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = cthtorch.xlogy(target, target) - target * input
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.dim() else loss.sum()
    return _apply_loss_reduction(loss, reduction)


@fp32_on_cpu
def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    if _has_torch_function_variadic(input, target):
        return _handle_with_locals(poisson_nll_loss, locals())
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _loss_tensor_args("poisson_nll_loss", input, target)
    loss = input.exp() - target * input if log_input else input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
        loss = loss + cthtorch.where(target > 1, stirling, stirling * 0)
    return _apply_loss_reduction(loss, reduction)


@fp32_on_cpu
def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    if _has_torch_function_variadic(input1, input2, target):
        return _handle_with_locals(cosine_embedding_loss, locals())
    reduction = _legacy_reduction(size_average, reduce, reduction)
    for pos, (name, t) in enumerate((("input1", input1), ("input2", input2), ("target", target)), 1):
        _tensor_arg("cosine_embedding_loss", name, t, pos)
    cos = cosine_similarity(input1, input2, dim=-1)
    loss = cthtorch.where(target == 1, 1 - cos, (cos - margin).clamp_min(0))
    return _apply_loss_reduction(loss, reduction)


@fp32_on_cpu
def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    if _has_torch_function_variadic(input1, input2, target):
        return _handle_with_locals(margin_ranking_loss, locals())
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return _apply_loss_reduction((-target * (input1 - input2) + margin).clamp_min(0), reduction)


@fp32_on_cpu
def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    if _has_torch_function_variadic(input, target):
        return _handle_with_locals(hinge_embedding_loss, locals())
    reduction = _legacy_reduction(size_average, reduce, reduction)
    loss = cthtorch.where(target == 1, input, (margin - input).clamp_min(0))
    return _apply_loss_reduction(loss, reduction)


@fp32_on_cpu
def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    if _has_torch_function_variadic(anchor, positive, negative):
        return _handle_with_locals(triplet_margin_loss, locals())
    reduction = _legacy_reduction(size_average, reduce, reduction)
    for pos, (name, t) in enumerate((("anchor", anchor), ("positive", positive), ("negative", negative)), 1):
        _tensor_arg("triplet_margin_loss", name, t, pos)
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = cthtorch.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return _apply_loss_reduction((d_pos - d_neg + margin).clamp_min(0), reduction)


@fp32_on_cpu
def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    if _has_torch_function_variadic(input, target):
        return _handle_with_locals(soft_margin_loss, locals())
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _loss_tensor_args("soft_margin_loss", input, target)
    return _apply_loss_reduction((1 + (-target * input).exp()).log(), reduction, "SoftMarginLossBackward0")


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    if _has_torch_function_variadic(input, target, weight):
        return _handle_with_locals(multilabel_soft_margin_loss, locals())
    reduction = _legacy_reduction(size_average, reduce, reduction)
    loss = -(target * _nn.log_sigmoid(input) + (1 - target) * _nn.log_sigmoid(-input))
    if weight is not None:
        loss = loss * weight
    return _apply_loss_reduction(loss.mean(-1), reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    if _has_torch_function_variadic(input, target, var):
        return _handle_with_locals(gaussian_nll_loss, locals())
    var = var.clamp(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _apply_loss_reduction(loss, reduction)


# ---------------------------------------------------------------- shape helpers
def pad(input, pad, mode="constant", value=None):
    if _has_torch_function_unary(input):
        return _handle_with_locals(_pad_fn, locals())
    _tensor_arg("pad", "input", input, 1)
    return pad_(input, pad, mode, value)


_pad_fn = pad   # its parameter `pad` hides the name
_PAD_OPS = {"reflect": "reflection_pad", "replicate": "replication_pad", "circular": "_pad_circular"}


def pad_(input, pad, mode="constant", value=None):
    pad = _int_list("pad", "pad", 2, pad)
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise NotImplementedError("Unrecognised padding mode %s" % mode)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.dim():
        raise RuntimeError("Padding length should be less than or equal to two times the input dimension but got "
                         "padding length %d and input of dimension %d" % (len(pad), input.dim()))
    if mode == "constant":   # one C op (constant_pad_nd), negative pads included
        return _channels_last_like(cthtorch.constant_pad_nd(input, pad, 0.0 if value is None else value), input)
    if value is not None and value != 0:
        raise RuntimeError('Padding mode "%s" doesn\'t take in value argument' % mode)
    nsp = len(pad) // 2
    if nsp == 0 or input.dim() not in (nsp + 1, nsp + 2) or nsp > 3:
        raise NotImplementedError(
            "Padding size %d is not supported for %dD input tensor.\nSupported combinations for non-constant padding:"
            "\n  - 2D or 3D input: padding size = 2 (pads last dimension)\n  - 3D or 4D input: padding size = 4 "
            "(pads last 2 dimensions)\n  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)"
            % (len(pad), input.dim()))
    if mode == "circular" and any(p > input.shape[input.dim() - 1 - i // 2] for i, p in enumerate(pad)):
        raise RuntimeError("Padding value causes wrapping around more than once.")
    if input.device.type == "cpu":   # one gather kernel per mode (src/ATen/ATShape.c)
        op = _PAD_OPS[mode]
        return getattr(_nn, op if mode == "circular" else "%s%dd" % (op, nsp))(input, pad)
    out = input
    for i in range(len(pad) // 2):
        d = input.dim() - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        if lo < 0:
            out = out.narrow(d, -lo, out.shape[d] + lo)
            lo = 0
        if hi < 0:
            out = out.narrow(d, 0, out.shape[d] + hi)
            hi = 0
        if lo == 0 and hi == 0:
            continue
        n = out.shape[d]
        if mode == "reflect":
            if lo >= n or hi >= n:
                raise RuntimeError("Argument #4: Padding size should be less than the corresponding input dimension, "
                                   "but got: padding (%d, %d) at dimension %d of input %s" % (lo, hi, d, list(input.shape)))
            left = out.narrow(d, 1, lo).flip([d]) if lo else None
            right = out.narrow(d, n - 1 - hi, hi).flip([d]) if hi else None
            out = cthtorch.cat([t for t in (left, out, right) if t is not None], d)
        elif mode == "replicate":
            left = out.narrow(d, 0, 1).expand(*[lo if k == d else -1 for k in range(out.dim())]) if lo else None
            right = out.narrow(d, n - 1, 1).expand(*[hi if k == d else -1 for k in range(out.dim())]) if hi else None
            out = cthtorch.cat([t for t in (left, out, right) if t is not None], d)
        else:   # circular
            left = out.narrow(d, n - lo, lo) if lo else None
            right = out.narrow(d, 0, hi) if hi else None
            out = cthtorch.cat([t for t in (left, out, right) if t is not None], d)
    return out


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None,
                antialias=False):
    if _has_torch_function_unary(input):
        return _handle_with_locals(interpolate, locals())
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    nd = input.dim() - 2
    spatial = list(input.shape[2:])
    scales = None     # the scale factors the kernel is given (torch's scale_factors)
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != nd:
                raise ValueError("Input and output must have the same number of spatial dimensions, but got input with "
                                 "spatial dimensions of %s and output size of %s. Please provide input tensor in (N, C, "
                                 "d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) format." % (spatial, size))
            if not all(isinstance(v, numbers.Integral) or _is_int_tensor(v) for v in size):
                raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] or Tuple[int, int, int], "
                                "but got size with types %s" % [type(v) for v in size])
            out_sizes = list(size)
        else:
            out_sizes = [size] * nd
    elif scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != nd:
                raise ValueError("Input and scale_factor must have the same number of spatial dimensions, but got input "
                                 "with spatial dimensions of %s and scale_factor of shape %s. Please provide input tensor "
                                 "in (N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format."
                                 % (spatial, scale_factor))
            scales = [float(v) for v in scale_factor]
        else:
            scales = [float(scale_factor)] * nd
        out_sizes = None
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if out_sizes is None:
        # the kernel's output size: the C cast of in * scale (truncation), as torch's upsample_*.vec
        out_sizes = []
        for n, sc in zip(spatial, scales):
            v = n * sc
            if not -2.0**63 <= v < 2.0**63:
                raise RuntimeError("value cannot be converted to type int64_t without overflow")
            out_sizes.append(int(v))
        if recompute_scale_factor or mode == "area":
            scales = None     # the kernel then derives its scales from the sizes
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.dim() == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a 4-D "
                         "tensor as input")
    if mode == "area" and input.dim() in (3, 4, 5):   # torch: adaptive average pooling to the output size
        pool = {3: adaptive_avg_pool1d, 4: adaptive_avg_pool2d, 5: adaptive_avg_pool3d}[input.dim()]
        return pool(input, out_sizes if nd > 1 else out_sizes[0])
    if mode == "lanczos" and input.dim() == 4:
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
        raise NotImplementedError("interpolate: mode 'lanczos' (antialiased) is not implemented in cthtorch")
    kernel = _UPSAMPLE_KERNELS.get((mode, input.dim()))
    if kernel is None:
        if mode in _UPSAMPLE_NEEDS and input.dim() in (3, 4, 5):
            raise NotImplementedError("Got %dD input, but %s mode needs %dD input" % (input.dim(), mode, _UPSAMPLE_NEEDS[mode]))
        raise NotImplementedError("Input Error: Only 3D, 4D and 5D input Tensors supported (got %dD) for the modes: "
                                  "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact (got %s)"
                                  % (input.dim(), mode))
    if antialias:   # torch's _upsample_{bilinear,bicubic}2d_aa (4-D input, checked above)
        kernel = _UPSAMPLE_AA_KERNELS[mode]
    for o in out_sizes:   # torch's parser refuses these before anything is allocated
        if not -2**63 <= o < 2**63:
            raise TypeError("%s(): argument 'output_size' failed to unpack the object at pos 1 with error "
                            "\"Overflow when unpacking long long\"" % kernel.__name__)
    scales = scales if scales is not None else [None] * nd
    if mode in ("nearest", "nearest-exact"):
        return kernel(input, out_sizes, *scales)
    return kernel(input, out_sizes, align_corners, *scales)


def _is_int_tensor(v):
    return isinstance(v, cthtorch.Tensor) and v.dim() == 0 and not v.is_floating_point() and not v.is_complex()


# (mode, input.dim()) -> the op that computes it
_UPSAMPLE_KERNELS = {
    ("nearest", 3): _C._nn.upsample_nearest1d, ("nearest", 4): _C._nn.upsample_nearest2d,
    ("nearest", 5): _C._nn.upsample_nearest3d, ("nearest-exact", 3): _C._nn._upsample_nearest_exact1d,
    ("nearest-exact", 4): _C._nn._upsample_nearest_exact2d, ("nearest-exact", 5): _C._nn._upsample_nearest_exact3d,
    ("linear", 3): _C._nn.upsample_linear1d, ("bilinear", 4): _C._nn.upsample_bilinear2d,
    ("trilinear", 5): _C._nn.upsample_trilinear3d, ("bicubic", 4): _C._nn.upsample_bicubic2d,
}
_UPSAMPLE_AA_KERNELS = {"bilinear": _C._nn._upsample_bilinear2d_aa, "bicubic": _C._nn._upsample_bicubic2d_aa}
_UPSAMPLE_NEEDS = {"linear": 3, "bilinear": 4, "trilinear": 5}


def _upsample_deprecated(name):
    warnings.warn("`nn.functional.%s` is deprecated. Use `nn.functional.interpolate` instead." % name, stacklevel=3)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    _upsample_deprecated("upsample")
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    _upsample_deprecated("upsample_nearest")
    return interpolate(input, size, scale_factor, "nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    _upsample_deprecated("upsample_bilinear")
    return interpolate(input, size, scale_factor, "bilinear", align_corners=True)


def pixel_shuffle(input, upscale_factor):
    if _has_torch_function_unary(input):
        return _handle_with_locals(pixel_shuffle, locals(), cthtorch.pixel_shuffle)
    _tensor_arg("pixel_shuffle", "input", input, 1)
    *b, c, h, w = input.shape
    r = upscale_factor
    oc = c // (r * r)
    x = input.reshape(*b, oc, r, r, h, w)
    n = len(b)
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return x.reshape(*b, oc, h * r, w * r)


def pixel_unshuffle(input, downscale_factor):
    *b, c, h, w = input.shape
    r = downscale_factor
    x = input.reshape(*b, c, h // r, r, w // r, r)
    n = len(b)
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return x.reshape(*b, c * r * r, h // r, w // r)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    if _has_torch_function_unary(input):
        return _handle_with_locals(unfold, locals())
    return _C._nn.im2col(input, _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride))


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    if _has_torch_function_unary(input):
        return _handle_with_locals(fold, locals())
    return _C._nn.col2im(input, _pair(output_size), _pair(kernel_size), _pair(dilation), _pair(padding),
                         _pair(stride))


# Composite forms kept in their own files, one per op family (names as in torch.nn.functional).
from cthtorch.nn._functional.distance import _vector_norm, cosine_similarity, pairwise_distance, pdist  # noqa: E402,F401,E501
from cthtorch.nn._functional.normalization import rms_norm, local_response_norm  # noqa: E402,F401
from cthtorch.nn._functional.shuffle import channel_shuffle, native_channel_shuffle  # noqa: E402,F401
from cthtorch.nn._functional.sparse import embedding_bag  # noqa: E402,F401
from cthtorch.nn._functional.sparse import embedding_padding_idx as _embedding_padding_idx  # noqa: E402
from cthtorch.nn._functional.activation import (  # noqa: E402,F401
    elu_, selu_, celu_, leaky_relu_, hardtanh_, threshold_, rrelu_,
)
from cthtorch.nn._functional.attention import multi_head_attention_forward, scaled_dot_product_attention  # noqa: E402,F401,E501
from cthtorch.nn._functional.attention import _canonical_mask, _none_or_dtype  # noqa: E402,F401
from cthtorch.nn._functional.pooling import (  # noqa: E402,F401
    lp_pool1d, lp_pool2d, lp_pool3d, max_pool1d_with_indices, adaptive_max_pool1d_with_indices,
    adaptive_max_pool2d_with_indices, fractional_max_pool2d, fractional_max_pool2d_with_indices,
    fractional_max_pool3d, fractional_max_pool3d_with_indices, max_unpool1d, max_unpool2d, max_unpool3d,
    max_pool3d, max_pool3d_with_indices, avg_pool3d, adaptive_avg_pool3d, adaptive_max_pool3d,
    adaptive_max_pool3d_with_indices,
)
from cthtorch.nn._functional.conv import conv3d, conv_transpose3d  # noqa: E402,F401
from cthtorch.nn._functional.conv import _check_transposed_channels, _check_dtype_as_input  # noqa: E402
from cthtorch.nn._functional.loss import (  # noqa: E402,F401
    multi_margin_loss, multilabel_margin_loss, triplet_margin_with_distance_loss, ctc_loss, linear_cross_entropy,
)
from cthtorch.nn._functional.sampling import affine_grid, grid_sample  # noqa: E402,F401


# every public function here is listed in the op registry (as PyTorch, this
# layer is Python; the ops it calls report to the dispatch point)
from cthtorch import _ops as _ops_registry  # noqa: E402
_ops_registry.api_module("nn.functional", globals())
