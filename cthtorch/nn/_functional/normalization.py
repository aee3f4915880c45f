"""rms_norm and local_response_norm as composites of differentiable ops."""
import cthtorch
from cthtorch.overrides import _handle_with_locals, has_torch_function_unary as _has_torch_function_unary
from cthtorch.overrides import has_torch_function_variadic as _has_torch_function_variadic


def rms_norm(input, normalized_shape, weight=None, eps=None):
    if _has_torch_function_variadic(input, weight):
        return _handle_with_locals(rms_norm, locals())
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if tuple(input.shape[input.dim() - len(shape):]) != shape or len(shape) > input.dim():
        raise RuntimeError("Given normalized_shape=%s, expected input with shape [*, %s], but got input of size%s"
                           % (list(shape), ", ".join(str(s) for s in shape), input.size()))
    if eps is None:
        eps = cthtorch.finfo(input.dtype).eps
    dims = list(range(input.dim() - len(shape), input.dim()))
    y = input * (input * input).mean(dims, keepdim=True).add(eps).rsqrt()
    return y * weight if weight is not None else y


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    if _has_torch_function_unary(input):
        return _handle_with_locals(local_response_norm, locals())
    from cthtorch.nn import functional as F
    dim = input.dim()
    if dim < 3:
        raise ValueError("Expected 3D or higher dimensionality input (got %d dimensions)" % dim)
    if input.numel() == 0:
        return input
    sizes = input.shape
    # average of squares over a window of `size` channels, zero-padded: one avg_pool2d over (C, rest)
    div = (input * input).reshape(sizes[0], 1, sizes[1], -1)
    div = F.pad(div, (0, 0, size // 2, (size - 1) // 2))
    div = F.avg_pool2d(div, (size, 1), stride=1).reshape(sizes)
    return input / div.mul(alpha).add(k).pow(beta)


def cross_map_lrn2d(input, size, alpha=1e-4, beta=0.75, k=1):
    """CrossMapLRN2d's forward (legacy Lua torch's): input * (k + alpha/size * window sum of squares)^-beta,
    the window over channels [c - pre_pad + 1, c + pre_pad - 1] with pre_pad = (size - 1) // 2 + 1, and, as
    torch's running window never drops channel 0, channel 0's square counted in every window past pre_pad."""
    if input.dim() != 4:
        raise ValueError("CrossMapLRN2d: Expected input to be 4D, got %dD instead." % input.dim())
    channels = input.size(1)
    pre_pad = int((size - 1) / 2 + 1)
    sq = input * input
    prefix = cthtorch.cat([cthtorch.zeros_like(sq[:, :1]), sq.cumsum(1)], 1)   # prefix[c] = sum of sq[:, :c]
    hi = cthtorch.arange(channels).add_(pre_pad).clamp_(max=channels)
    lo = cthtorch.arange(channels).sub_(pre_pad - 1).clamp_(min=0)
    window = prefix.index_select(1, hi) - prefix.index_select(1, lo)
    first = (cthtorch.arange(channels) >= pre_pad).to(input.dtype).view(1, channels, 1, 1)
    scale = (window + sq[:, :1] * first) * (alpha / size) + k
    return input * scale.pow(-beta)
