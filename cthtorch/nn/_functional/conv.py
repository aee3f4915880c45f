"""conv3d and conv_transpose3d as composites: one 2-d convolution per depth tap."""
import cthtorch
from cthtorch.overrides import _handle_with_locals, has_torch_function_unary as _has_torch_function_unary
from cthtorch.nn._functional import _F
from cthtorch.nn.modules.utils import _triple
from cthtorch.amp._cpu_policy import lower_on_cpu
from cthtorch._utils import _dtype_name


def _check_transposed_channels(input, weight, nd):
    """torch's message for a transposed conv whose input channels are not the weight's first dim (the weight is
    (Cin, Cout/groups, k...)); the transposed forward runs as a conv backward here, whose own check named
    conv2d_backward's grad_output instead. An unbatched input shows as a batch of one, as in torch's."""
    if input.dim() not in (nd + 1, nd + 2) or weight.dim() != nd + 2:
        return
    shape = list(input.shape) if input.dim() == nd + 2 else [1] + list(input.shape)
    if shape[1] != weight.shape[0]:
        raise RuntimeError("Given transposed=1, weight of size %s, expected input%s to have %d channels, but got %d "
                           "channels instead" % (list(weight.shape), shape, weight.shape[0], shape[1]))


def _check_dtype_as_input(input, t):
    """the transposed convolutions run as conv backwards here, which would promote: torch's kernels take a weight
    (and for 3-d a bias) of the input's dtype only"""
    if t is not None and t.dtype != input.dtype:
        raise RuntimeError("expected scalar type %s but found %s" % (_dtype_name(input.dtype), _dtype_name(t.dtype)))


@lower_on_cpu
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    if _has_torch_function_unary(input):
        return _handle_with_locals(conv3d, locals(), cthtorch.conv3d)
    batched = input.dim() == 5
    if input.dim() not in (4, 5):
        raise RuntimeError("Expected 4D (unbatched) or 5D (batched) input to conv3d, but got input of size: %s"
                           % list(input.shape))
    x = input if batched else input.unsqueeze(0)
    s, d = _triple(stride), _triple(dilation)
    kd = weight.shape[2]
    if isinstance(padding, str):
        if padding == "valid":
            p = (0, 0, 0)
        elif padding == "same":
            if any(v != 1 for v in s):
                raise ValueError("padding='same' is not supported for strided convolutions")
            total = [dd * (k - 1) for dd, k in zip(d, weight.shape[2:])]
            flat = []
            for t in reversed(total):
                flat += [t // 2, t - t // 2]
            x = _F().pad(x, flat)
            p = (0, 0, 0)
        else:
            raise ValueError("Invalid padding string '%s', should be one of {'valid', 'same'}" % padding)
    else:
        p = _triple(padding)
    if p[0]:
        x = _F().pad(x, [0, 0, 0, 0, p[0], p[0]])
    n, c, D = x.shape[:3]
    od = (D - d[0] * (kd - 1) - 1) // s[0] + 1
    if od <= 0:
        raise RuntimeError("Calculated output size is too small for input %s" % list(input.shape))
    out = None
    for t in range(kd):
        sl = x[:, :, t * d[0]: t * d[0] + s[0] * (od - 1) + 1: s[0]]            # (n, c, od, H, W)
        sl = sl.transpose(1, 2).reshape(n * od, c, *x.shape[3:])
        # the bias rides on the first tap: conv2d checks its dtype against the input's as torch's conv3d does
        y = cthtorch.conv2d(sl, weight[:, :, t].contiguous(), bias if t == 0 else None, s[1:], p[1:], d[1:], groups)
        out = y if out is None else out + y
    out = out.reshape(n, od, *out.shape[1:]).transpose(1, 2)
    return out if batched else out.squeeze(0)


@lower_on_cpu
def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    if _has_torch_function_unary(input):
        return _handle_with_locals(conv_transpose3d, locals(), cthtorch.conv_transpose3d)
    _check_transposed_channels(input, weight, 3)
    _check_dtype_as_input(input, weight)
    _check_dtype_as_input(input, bias)
    batched = input.dim() == 5
    x = input if batched else input.unsqueeze(0)
    s, p, op, d = _triple(stride), _triple(padding), _triple(output_padding), _triple(dilation)
    n, cin, D = x.shape[:3]
    kd = weight.shape[2]
    full = (D - 1) * s[0] + d[0] * (kd - 1) + 1 + op[0]
    planes = x.transpose(1, 2).reshape(n * D, cin, *x.shape[3:])
    out = None
    for t in range(kd):
        y = _F().conv_transpose2d(planes, weight[:, :, t].contiguous(), None, s[1:], p[1:], op[1:], groups, d[1:])
        y = y.reshape(n, D, *y.shape[1:])                                      # (n, D, cout, OH, OW)
        if s[0] > 1:   # interleave s-1 zero planes: input plane i lands on depth i*s
            y = cthtorch.stack([y] + [y * 0] * (s[0] - 1), 2).reshape(n, D * s[0], *y.shape[2:])
            y = y[:, :(D - 1) * s[0] + 1]
        y = _F().pad(y, [0, 0, 0, 0, 0, 0, t * d[0], full - t * d[0] - y.shape[1]])
        out = y if out is None else out + y
    out = out[:, p[0]: full - p[0]].transpose(1, 2)
    if bias is not None:
        out = out + bias.reshape(1, -1, 1, 1, 1)
    return out if batched else out.squeeze(0)
