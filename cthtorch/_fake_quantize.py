"""torch.fake_quantize_per_tensor_affine / fake_quantize_per_channel_affine: x rounded onto a quantization
grid and back, in float32, with the straight-through gradient of quantization-aware training.

torch's kernel (fake_quantize_core.cpp): q = zero_point + nearbyint(x * inv_scale) (the zero point added
after rounding, unlike quantize_per_tensor), out = (clamp(q, quant_min, quant_max) - zero_point) * scale;
the gradient passes where quant_min <= q <= quant_max and is zero elsewhere.
"""
import cthtorch

__all__ = ["fake_quantize_per_tensor_affine", "fake_quantize_per_channel_affine"]


def _fake_quant(x, inv_scale, scale, zero_point, quant_min, quant_max):
    """(output, mask) for broadcastable inv_scale/scale/zero_point (float32 tensors)."""
    q = x.mul(inv_scale).round_().add_(zero_point)
    mask = (q >= quant_min) & (q <= quant_max)
    return q.clamp_(quant_min, quant_max).sub_(zero_point).mul_(scale), mask


_functions = {}


def _forward(ctx, x, inv_scale, scale, zero_point, quant_min, quant_max):
    out, mask = _fake_quant(x, inv_scale, scale, zero_point, quant_min, quant_max)
    ctx.save_for_backward(mask)
    return out


def _backward(ctx, grad):
    mask, = ctx.saved_tensors
    return grad * mask, None, None, None, None, None


def _function(per_channel):
    """The autograd Function (made on first use: cthtorch registers these ops while it imports, before
    cthtorch.autograd is loaded); its class name is what grad_fn reports."""
    if per_channel not in _functions:
        from cthtorch.autograd import Function
        name = "FakeQuantizePer%sAffineCachemask" % ("Channel" if per_channel else "Tensor")
        _functions[per_channel] = type(name, (Function,), {"forward": staticmethod(_forward),
                                                           "backward": staticmethod(_backward)})
    return _functions[per_channel]


_ZP_RANGE = "`zero_point` must be between `quant_min` and `quant_max`."


def _type_name(dtype):
    return {"torch.int64": "Long", "torch.float64": "Double", "torch.float16": "Half", "torch.int16": "Short",
            "torch.int8": "Char", "torch.uint8": "Byte"}.get(str(dtype), str(dtype))


def _check_range(quant_min, quant_max):
    if quant_min > quant_max:
        raise RuntimeError("`quant_min` should be less than or         equal to `quant_max`.")


def _f32(value):
    return cthtorch.tensor(value, dtype=cthtorch.float32)


def fake_quantize_per_tensor_affine(input, scale, zero_point, quant_min, quant_max):
    """scale/zero_point: numbers, or one-element tensors (torch's tensor_qparams overload)."""
    _check_range(quant_min, quant_max)
    if isinstance(scale, cthtorch.Tensor):
        scale = scale.detach().reshape(-1)[0].item()
    if isinstance(zero_point, cthtorch.Tensor):
        zero_point = zero_point.detach().reshape(-1)[0].item()
    elif not quant_min <= zero_point <= quant_max:   # the number overload checks it (the tensor one does not)
        raise RuntimeError(_ZP_RANGE)
    s = _f32(float(scale))
    return _function(False).apply(input, s.reciprocal(), s, float(int(zero_point)), quant_min, quant_max)


def fake_quantize_per_channel_affine(input, scale, zero_point, axis, quant_min, quant_max):
    """scale: float tensor, zero_point: int32/float/half tensor, one per slice of axis."""
    # torch's checks, in its order
    if scale.dtype not in (cthtorch.float32, cthtorch.bfloat16):
        raise RuntimeError("Scale must be Float or BFloat16, found %s" % _type_name(scale.dtype))
    if zero_point.dtype not in (cthtorch.int32, cthtorch.float32, cthtorch.float16):
        raise RuntimeError("Zero-point must be Int32, Float or Half, found %s" % _type_name(zero_point.dtype))
    if scale.dim() != 1:
        raise RuntimeError("scale should be a 1-D tensor")
    if zero_point.dim() != 1:
        raise RuntimeError("zero point should be a 1-D tensor")
    if scale.numel() != zero_point.numel():
        raise RuntimeError("scale and zero-point need to have the same dimensions")
    if scale.numel() != input.size(axis):
        raise RuntimeError("dimensions of scale and zero-point are not consistent with input tensor")
    _check_range(quant_min, quant_max)
    if not zero_point.is_floating_point() and zero_point.numel() and (
            zero_point.min().item() < quant_min or zero_point.max().item() > quant_max):
        raise RuntimeError(_ZP_RANGE)
    if not 0 <= axis <= input.dim():
        raise RuntimeError("`axis` must be between 0 and number of dimensions of input")
    shape = [1] * input.dim()
    shape[axis] = -1
    s = scale.detach().float().reshape(shape)
    z = zero_point.detach().float().round().reshape(shape)
    return _function(True).apply(input, s.reciprocal(), s, z, quant_min, quant_max)
