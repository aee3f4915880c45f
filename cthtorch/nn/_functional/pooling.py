"""Pooling forms missing a C kernel, as composites: lp_pool*, max_unpool*,
the *_with_indices spellings and 3-d pooling (windows from Tensor.unfold)."""
import math

import cthtorch
from cthtorch.nn._functional import _F
from cthtorch.nn.modules.utils import _ntuple, _pair, _triple



# ---------------------------------------------------------------- lp pooling
def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    out = _F().avg_pool1d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    k = kernel_size[0] if isinstance(kernel_size, (list, tuple)) else kernel_size
    return (out.sign() * out.abs().relu()).mul(k).pow(1.0 / norm_type)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    kh, kw = _pair(kernel_size)
    out = _F().avg_pool2d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (out.sign() * out.abs().relu()).mul(kh * kw).pow(1.0 / norm_type)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
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
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 2)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
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
    out, idx = max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return (out, idx) if return_indices else out


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
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


def _adaptive_output(input, sizes, name):
    """Hostile output sizes fail here with PyTorch's errors, before the loops below
    walk the output in Python (the output is allocated to find out)."""
    shape = list(input.shape[:-3]) + [input.shape[-3 + i] if o is None else o for i, o in enumerate(sizes)]
    for o in shape:
        if not -2**63 <= o < 2**63:
            raise ValueError("Overflow when unpacking long long")
    if name == "adaptive_avg_pool3d" and min(shape[-3:]) < 0:
        raise RuntimeError("adaptive_avg_pool3d: elements of output_size must be greater than or equal to 0 but "
                           "received {%d, %d,%d}" % tuple(shape[-3:]))
    for o in shape:
        if o < 0:
            raise RuntimeError("Trying to create tensor with negative dimension %d: %s" % (o, shape))
    if math.prod(shape) * input.element_size() >= 2**63:
        raise RuntimeError("Storage size calculation overflowed with sizes=%s" % shape)
    cthtorch.empty(shape, dtype=input.dtype)


def _adaptive_bounds(L, o):
    return [(i * L // o, -(-(i + 1) * L // o)) for i in range(o)]


def adaptive_avg_pool3d(input, output_size):
    _check_pool_input(input, 3, "adaptive_avg_pool3d")
    out = input
    sizes = _triple(output_size)
    _adaptive_output(input, sizes, "adaptive_avg_pool3d")
    for i, o in enumerate(sizes):
        dim = input.dim() - 3 + i
        L = input.shape[dim]
        o = L if o is None else o
        # averaging is separable: one (L x o) averaging matrix per dim
        m = [[0.0] * o for _ in range(L)]
        for j, (a, b) in enumerate(_adaptive_bounds(L, o)):
            for t in range(a, b):
                m[t][j] = 1.0 / (b - a)
        out = out.movedim(dim, -1).matmul(cthtorch.tensor(m, dtype=input.dtype).reshape(L, o)).movedim(-1, dim)
    return out


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=True):
    _check_pool_input(input, 3, "adaptive_max_pool3d")
    sp = input.shape[-3:]
    sizes = [L if o is None else o for L, o in zip(sp, _triple(output_size))]
    _adaptive_output(input, sizes, "adaptive_max_pool3d")
    lead = input.shape[:-3]
    pos = cthtorch.arange(math.prod(sp)).reshape(sp)
    vals, idxs = [], []
    for a0, b0 in _adaptive_bounds(sp[0], sizes[0]):
        for a1, b1 in _adaptive_bounds(sp[1], sizes[1]):
            for a2, b2 in _adaptive_bounds(sp[2], sizes[2]):
                v, j = input[..., a0:b0, a1:b1, a2:b2].reshape(*lead, -1).max(-1)
                vals.append(v)
                idxs.append(pos[a0:b0, a1:b1, a2:b2].reshape(-1)[j])
    return (cthtorch.stack(vals, -1).reshape(*lead, *sizes), cthtorch.stack(idxs, -1).reshape(*lead, *sizes))


def adaptive_max_pool3d(input, output_size, return_indices=False):
    out, idx = adaptive_max_pool3d_with_indices(input, output_size)
    return (out, idx) if return_indices else out
