"""The integer arithmetic of torch's fbgemm quantized kernels (quantized::linear_dynamic, quantized::linear,
quantized::conv2d), emulated with cthtorch ops so results match torch's CPU kernels.

The int32 accumulations sum((xq - x_zp) * (wq - w_zp)) are exact in float64 (every partial sum is an
integer far below 2**53), so they run as float64 matmul / conv2d on the integer values. What fbgemm does
with the accumulator afterwards is reproduced in its own float32 steps:
  * dynamic: out = fma(float(acc), x_scale * w_scale, bias), one rounding (ReQuantizeForFloat; qnnpack
    rounds the product and the sum separately);
  * static: y = nearbyint((float(acc) + bias / (x_scale * w_scale)) * (x_scale * w_scale / y_scale)) + y_zp,
    clamped to [0, 255], or to [y_zp, 255] when a ReLU is fused (ReQuantizeOutput).
"""
import cthtorch
from cthtorch._quantized_tensor import _make, _scalar_type
from cthtorch.ao.quantization.fake_quantize import _choose_qparams, _f32

__all__ = ["linear_dynamic", "linear", "conv2d", "weight_scales", "centered_weight", "check_dynamic_input"]


def weight_scales(qweight, out_dim_shape):
    """The weight's float32 scales, shaped to broadcast over the output's channel dimension."""
    if qweight.qscheme() in (cthtorch.per_tensor_affine, cthtorch.per_tensor_symmetric):
        return cthtorch.tensor([_f32(qweight.q_scale())], dtype=cthtorch.float32)
    return qweight.q_per_channel_scales().float().reshape(out_dim_shape)


def centered_weight(qweight):
    """wq - w_zp as float64 (per channel along axis 0 when per-channel)."""
    ints = qweight.int_repr().double()
    if qweight.qscheme() in (cthtorch.per_tensor_affine, cthtorch.per_tensor_symmetric):
        return ints - qweight.q_zero_point()
    shape = [-1] + [1] * (ints.dim() - 1)
    return ints - qweight.q_per_channel_zero_points().double().reshape(shape)


def _quantize_activation(x, reduce_range):
    """fbgemm's dynamic quantization of an activation: parameters from its min/max (uint8, 7-bit with
    reduce_range), then the integers minus the zero point, as float32."""
    lo, hi = cthtorch.aminmax(x.detach()) if x.numel() else (cthtorch.tensor(0.), cthtorch.tensor(0.))
    scale, zp = _choose_qparams(lo.item(), hi.item(), 0, 127 if reduce_range else 255, False)
    scale = _f32(scale)
    inv = _f32(1.0 / scale)
    xq = x.detach().float().mul(inv).add_(float(zp)).round_().clamp_(0, 255).sub_(float(zp))
    return xq, scale


def check_dynamic_input(x, fp16=False):
    """torch's dynamic linear kernels (int8 and float16) take a float32 input of at least two dimensions."""
    if x.dim() < 2:
        raise RuntimeError("Expected input.dim() >= 2 to be true, but got false.  (Could this error message be "
                           "improved?  If so, please report an enhancement request to PyTorch.)" if fp16 else
                           "The dimension of input tensor should be larger than or equal to 2")
    if x.dtype != cthtorch.float32:
        raise RuntimeError("expected scalar type Float but found %s" % _scalar_type(x.dtype))


def _fma_out(acc, multiplier, bias):
    """float32(acc) * multiplier + bias with one rounding, as fbgemm's fused multiply-add."""
    out = acc.float().double() * multiplier.double()
    if bias is not None:
        out = out + bias.detach().double()
    return out.float()


def linear_dynamic(x, qweight, wc, bias, reduce_range=True):
    """quantized::linear_dynamic: x float, qweight qint8 (wc its centered integers, float64, (out, in)).
    qnnpack ignores reduce_range and multiplies, then adds the bias, in two float32 steps."""
    check_dynamic_input(x)
    qnnpack = cthtorch.backends.quantized.engine == "qnnpack"
    xq, x_scale = _quantize_activation(x, reduce_range and not qnnpack)
    acc = cthtorch.matmul(xq.double(), wc.t())
    w_scale = weight_scales(qweight, [-1])
    multiplier = (w_scale * _f32(x_scale)).float()
    if qnnpack:
        out = acc.float() * multiplier
        return out + bias.detach() if bias is not None else out
    return _fma_out(acc, multiplier, bias)


def _requantize(acc, x, qweight, bias, scale, zero_point, relu, channel_shape):
    x_scale = _f32(x.q_scale())
    act_times_w = (weight_scales(qweight, channel_shape) * x_scale).float()
    raw = acc.float()
    if bias is not None:
        raw = raw + (bias.detach().float().reshape(channel_shape) / act_times_w)
    ab = raw * (act_times_w / _f32(scale))
    out = ab.round_().add_(float(zero_point)).clamp_(float(zero_point) if relu else 0.0, 255.0)
    return _make(out.to(cthtorch.uint8), cthtorch.quint8, cthtorch.per_tensor_affine, float(scale), int(zero_point))


def _centered_input(x):
    if not getattr(x, "is_quantized", False):
        raise NotImplementedError("Could not run 'quantized::linear' with arguments from the 'CPU' backend: the "
                                  "input of a quantized module must be a quantized tensor (put a QuantStub "
                                  "before it)")
    return x.int_repr().double() - x.q_zero_point()


def linear(x, qweight, wc, bias, scale, zero_point, relu=False):
    """quantized::linear(_relu): quint8 x, qint8 weight -> quint8 output with (scale, zero_point)."""
    acc = cthtorch.matmul(_centered_input(x), wc.t())
    return _requantize(acc, x, qweight, bias, scale, zero_point, relu, [-1])


def conv2d(x, qweight, wc, bias, stride, padding, dilation, groups, scale, zero_point, relu=False):
    """quantized::conv2d(_relu); zero padding pads the centered input with 0, which is x's zero point."""
    acc = cthtorch.nn.functional.conv2d(_centered_input(x), wc, None, stride, padding, dilation, groups)
    return _requantize(acc, x, qweight, bias, scale, zero_point, relu, [1, -1, 1, 1])
