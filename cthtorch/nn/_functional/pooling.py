"""Pooling forms missing a C kernel, as composites: lp_pool*, max_unpool*,
the *_with_indices spellings and max/avg 3-d pooling (windows from
Tensor.unfold); the adaptive 3-d forms call their C kernels."""
import math

import cthtorch
from cthtorch.overrides import _handle_with_locals, has_torch_function_unary as _has_torch_function_unary
from cthtorch.nn._functional import _F
from cthtorch.nn.modules.utils import _ntuple, _pair, _triple



# ---------------------------------------------------------------- lp pooling
def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    if _has_torch_function_unary(input):
        return _handle_with_locals(lp_pool1d, locals())
    out = _F().avg_pool1d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    k = kernel_size[0] if isinstance(kernel_size, (list, tuple)) else kernel_size
    return (out.sign() * out.abs().relu()).mul(k).pow(1.0 / norm_type)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    if _has_torch_function_unary(input):
        return _handle_with_locals(lp_pool2d, locals())
    kh, kw = _pair(kernel_size)
    out = _F().avg_pool2d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (out.sign() * out.abs().relu()).mul(kh * kw).pow(1.0 / norm_type)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    if _has_torch_function_unary(input):
        return _handle_with_locals(lp_pool3d, locals())
    kd, kh, kw = _triple(kernel_size)
    out = avg_pool3d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (out.sign() * out.abs().relu()).mul(kd * kh * kw).pow(1.0 / norm_type)


# ---------------------------------------------------------------- *_with_indices spellings
def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    return _F().max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices=True)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=True):
    return _F().adaptive_max_pool1d(input, output_size, return_indices=True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=True):
    return _F().adaptive_max_pool2d(input, output_size, return_indices=True)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    raise NotImplementedError("fractional_max_pool2d is not implemented in cthtorch")


fractional_max_pool2d_with_indices = fractional_max_pool3d = fractional_max_pool3d_with_indices = \
    fractional_max_pool2d


# ---------------------------------------------------------------- max_unpool
def _unpool_output_size(input, kernel_size, stride, padding, output_size):
    input_size = input.size()
    nd = len(kernel_size)
    default = [(input_size[-nd + d] - 1) * stride[d] + kernel_size[d] - 2 * padding[d] for d in range(nd)]
    if output_size is None:
        return default
    output_size = list(output_size)
    if len(output_size) == nd + 2:
        output_size = output_size[2:]
    if len(output_size) != nd:
        raise ValueError("output_size should be a sequence containing %d or %d elements, but it has a length of '%d'"
                         % (nd, nd + 2, len(output_size)))
    for d in range(nd):
        lo, hi = default[d] - stride[d], default[d] + stride[d]
        if not lo < output_size[d] < hi:
            raise ValueError('invalid output_size "%s" (dim %d must be between %d and %d)' % (output_size, d, lo, hi))
    return output_size


def _max_unpool(input, indices, kernel_size, stride, padding, output_size, nd):
    tup = _ntuple(nd)
    k = tup(kernel_size)
    s = tup(stride) if stride is not None else k
    p = tup(padding)
    out_sp = _unpool_output_size(input, k, s, p, output_size)
    if indices.dtype != cthtorch.int64:
        raise RuntimeError("elements in indices should be type int64 but got: %s" % str(indices.dtype).split(".")[-1])
    if input.shape != indices.shape:
        raise RuntimeError("Expected shape of indices to be same as that of the input tensor (%s) but got indices "
                           "tensor with shape: %s" % (list(input.shape), list(indices.shape)))
    lead = input.shape[:input.dim() - nd]
    numel = math.prod(out_sp)
    x = input.reshape(*lead, -1)
    idx = indices.reshape(*lead, -1)
    if idx.numel() and (int(idx.min()) < 0 or int(idx.max()) >= numel):
        raise RuntimeError("Found an invalid max index: %d (output volumes are of size %s"
                           % (int(idx.max()) if int(idx.max()) >= numel else int(idx.min()),
                              "x".join(str(v) for v in out_sp)))
    out = x.new_zeros(*lead, numel).scatter(x.dim() - 1, idx, x)
    return out.reshape(*lead, *out_sp)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    if _has_torch_function_unary(input):
        return _handle_with_locals(max_unpool1d, locals())
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    if _has_torch_function_unary(input):
        return _handle_with_locals(max_unpool2d, locals())
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 2)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    if _has_torch_function_unary(input):
        return _handle_with_locals(max_unpool3d, locals())
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 3)


# ---------------------------------------------------------------- 3-d pooling over unfold windows
def _out_len(L, k, s, p, d, ceil):
    span = L + 2 * p - d * (k - 1) - 1
    out = (-(-span // s) if ceil else span // s) + 1
    if ceil and (out - 1) * s >= L + p:   # the last window must start inside the input or left padding
        out -= 1
    return out


def _windows(x, k, s, p, d, ceil, fill, nd):
    """Pad the last nd dims with `fill` and return (windows (..., out..., K), out sizes)."""
    outs, pads = [], []
    for i in range(nd):
        L = x.shape[x.dim() - nd + i]
        o = _out_len(L, k[i], s[i], p[i], d[i], ceil)
        outs.append(o)
        right = (o - 1) * s[i] + d[i] * (k[i] - 1) + 1 - L - p[i]
        pads.append((p[i], right))
    flat = [v for lo_hi in reversed(pads) for v in lo_hi]
    w = _F().pad(x, flat, value=fill) if any(flat) else x
    base = w.dim() - nd
    for i in range(nd):
        w = w.unfold(base + i, d[i] * (k[i] - 1) + 1, s[i])
        if d[i] > 1:
            w = w[..., ::d[i]]
    return w.reshape(*w.shape[:base + nd], -1), outs


def _pool_args(kernel_size, stride, padding, dilation, nd):
    tup = _ntuple(nd)
    k = tup(kernel_size)
    s = tup(stride) if stride is not None and stride != [] else k
    return k, s, tup(padding), tup(dilation)


def _check_pool_input(input, nd, name):
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError("%s: Expected %dD or %dD (batch mode) tensor for input, but got: %s"
                           % (name, nd + 1, nd + 2, list(input.shape)))


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    _check_pool_input(input, 3, "max_pool3d")
    k, s, p, d = _pool_args(kernel_size, stride, padding, dilation, 3)
    for i in range(3):
        if p[i] > k[i] // 2:
            raise RuntimeError("pad should be at most half of effective kernel size, but got pad=%d, kernel_size=%d "
                               "and dilation=%d" % (p[i], k[i], d[i]))
    win, outs = _windows(input, k, s, p, d, ceil_mode, float("-inf"), 3)
    vals, arg = win.max(-1)
    sp = input.shape[-3:]
    pos = cthtorch.arange(math.prod(sp)).reshape(sp)
    pos_win, _ = _windows(pos, k, s, p, d, ceil_mode, -1, 3)
    idx = pos_win.expand(*arg.shape, pos_win.shape[-1]).gather(-1, arg.unsqueeze(-1)).squeeze(-1)
    return vals, idx


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    if _has_torch_function_unary(input):
        return _handle_with_locals(max_pool3d, locals())
    out, idx = max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return (out, idx) if return_indices else out


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    if _has_torch_function_unary(input):
        return _handle_with_locals(avg_pool3d, locals())
    _check_pool_input(input, 3, "avg_pool3d")
    k, s, p, d = _pool_args(kernel_size, stride, padding, 1, 3)
    for i in range(3):
        if p[i] > k[i] // 2:
            raise RuntimeError("pad should be smaller than or equal to half of kernel size, but got padW = %d, "
                               "padH = %d, padT = %d, kW = %d, kH = %d, kT = %d" % (p[2], p[1], p[0], k[2], k[1], k[0]))
    win, outs = _windows(input, k, s, p, d, ceil_mode, 0.0, 3)
    total = win.sum(-1)
    if divisor_override:
        return total / divisor_override
    # the divisor per window: count of positions inside the input (or inside input+padding)
    ones = cthtorch.ones(input.shape[-3:], dtype=input.dtype)
    if count_include_pad:
        ones = _F().pad(ones, [p[2], p[2], p[1], p[1], p[0], p[0]], value=1.0)
        cnt, _ = _windows(ones, k, s, (0, 0, 0), d, ceil_mode, 0.0, 3)
        cnt = cnt[tuple(slice(0, o) for o in outs)]
    else:
        cnt, _ = _windows(ones, k, s, p, d, ceil_mode, 0.0, 3)
    return total / cnt.sum(-1)


def _adaptive_size3(input, output_size):
    # None keeps the input's size; the C entry checks the input's rank and the count first.
    # A lone int goes through as torch passes it (its overflow is then a ValueError, not a list's TypeError)
    if isinstance(output_size, int):
        return output_size
    os = _triple(output_size)
    return tuple((input.shape[i - len(os)] if input.dim() >= len(os) else -1) if v is None else v
                 for i, v in enumerate(os))


def adaptive_avg_pool3d(input, output_size):
    if _has_torch_function_unary(input):
        return _handle_with_locals(adaptive_avg_pool3d, locals())
    return cthtorch._C._nn.adaptive_avg_pool3d(input, _adaptive_size3(input, output_size))


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=True):
    return cthtorch._C._nn.adaptive_max_pool3d(input, _adaptive_size3(input, output_size))


def adaptive_max_pool3d(input, output_size, return_indices=False):
    if _has_torch_function_unary(input):
        return _handle_with_locals(adaptive_max_pool3d, locals())
    out, idx = adaptive_max_pool3d_with_indices(input, output_size)
    return (out, idx) if return_indices else out
