"""Pooling forms missing a C kernel, as composites (lp_pool*, max_unpool*),
and the 3-d forms' argument handling in front of their C kernels."""
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


# ---------------------------------------------------------------- 3-d pooling (C kernels, ATPool.c)
def _pool3d_list(v, what, name, omit_ok=False):
    """torch's length checks of a 3-d pooling argument: one int or three"""
    if v is None or (omit_ok and isinstance(v, (list, tuple)) and len(v) == 0):
        return []
    if isinstance(v, (list, tuple)):
        if len(v) not in (1, 3):
            raise RuntimeError(_POOL3D_ARG_TEXT[name][what])
        return list(v)
    return v


_POOL3D_ARG_TEXT = {
    "max_pool3d": {"kernel_size": "max_pool3d: kernel_size must either be a single int, or a tuple of three ints",
                   "stride": "max_pool3d: stride must either be omitted, a single int, or a tuple of three ints",
                   "padding": "max_pool3d: padding must either be a single int, or a tuple of three ints",
                   "dilation": "max_pool3d: dilation must be either a single int, or a tuple of three ints"},
    "avg_pool3d": {"kernel_size": "avg_pool3d: kernel_size must be a single int, or a tuple of three ints",
                   "stride": "avg_pool3d: stride must be omitted, a single int, or a tuple of three ints",
                   "padding": "avg_pool3d: padding must be a single int, or a tuple of three ints"},
}


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=True):
    n = "max_pool3d"
    if input.is_cuda:   # no CUDA kernel yet: the CPU kernel, through differentiable copies
        out, idx = max_pool3d_with_indices(input.cpu(), kernel_size, stride, padding, dilation, ceil_mode)
        return out.to(input.device), idx.to(input.device)
    return cthtorch._C._nn.max_pool3d_with_indices(
        input, _pool3d_list(kernel_size, "kernel_size", n), _pool3d_list(stride, "stride", n, True),
        _pool3d_list(padding, "padding", n), _pool3d_list(dilation, "dilation", n), ceil_mode)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    if _has_torch_function_unary(input):
        return _handle_with_locals(max_pool3d, locals())
    out, idx = max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return (out, idx) if return_indices else out


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    if _has_torch_function_unary(input):
        return _handle_with_locals(avg_pool3d, locals())
    n = "avg_pool3d"
    if input.is_cuda:   # no CUDA kernel yet: the CPU kernel, through differentiable copies
        return avg_pool3d(input.cpu(), kernel_size, stride, padding, ceil_mode, count_include_pad,
                          divisor_override).to(input.device)
    return cthtorch._C._nn.avg_pool3d(input, _pool3d_list(kernel_size, "kernel_size", n),
                                      _pool3d_list(stride, "stride", n, True), _pool3d_list(padding, "padding", n),
                                      ceil_mode, count_include_pad, divisor_override)


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
