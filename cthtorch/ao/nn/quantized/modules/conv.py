"""torch.ao.nn.quantized.Conv2d: quint8 in, quint8 out, int8 weights (fbgemm's integer arithmetic, see
_integer_kernels)."""
import cthtorch
from cthtorch import nn
from cthtorch.nn.modules.utils import _pair
from cthtorch.nn.utils.fusion import fuse_conv_bn_weights
from cthtorch.ao.nn.quantized import _integer_kernels as K
from cthtorch.ao.nn.quantized.modules.utils import JIT_UNSUPPORTED, _OutputQParams
from cthtorch.ao.nn.quantized.modules.linear import _empty_qweight, _quantize_weight

__all__ = ["Conv2d"]


class Conv2d(_OutputQParams, nn.Module):
    """QuantizedConv2d."""
    _jit_unsupported = JIT_UNSUPPORTED
    _FLOAT_MODULE = nn.Conv2d
    _relu = False

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__()
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if padding_mode != "zeros":
            raise NotImplementedError("cthtorch's quantized Conv2d pads with zeros only (padding_mode='zeros')")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride = _pair(kernel_size), _pair(stride)
        self.padding, self.dilation = _pair(padding), _pair(dilation)
        self.transposed, self.output_padding = False, _pair(0)
        self.groups, self.padding_mode = groups, padding_mode
        qweight = _empty_qweight([out_channels, in_channels // groups, *self.kernel_size])
        self.set_weight_bias(qweight, cthtorch.zeros(out_channels) if bias else None)
        self.scale, self.zero_point = 1.0, 0

    def _get_name(self):
        return "QuantizedConv2d"

    def extra_repr(self):
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}, scale={scale}, " \
            "zero_point={zero_point}"
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias() is None:
            s += ", bias=False"
        return s.format(**self.__dict__)

    def set_weight_bias(self, w, b):
        # plain attributes, not registered parameters: the state_dict names them weight and bias
        self.__dict__["_weight"], self.__dict__["_bias"] = w, b
        self._centered = K.centered_weight(w)

    def _weight_bias(self):
        return self._weight, self._bias

    def weight(self):
        return self._weight

    def bias(self):
        return self._bias

    def forward(self, input):
        if input.dim() != 4:
            raise ValueError("Input shape must be `(N, C, H, W)`!")
        return K.conv2d(input, self._weight, self._centered, self._bias, self.stride, self.padding, self.dilation,
                        self.groups, self.scale, self.zero_point, relu=self._relu)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        destination[prefix + "weight"], destination[prefix + "bias"] = self._weight_bias()
        super()._save_to_state_dict(destination, prefix, keep_vars)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        self.set_weight_bias(state_dict.pop(prefix + "weight"), state_dict.pop(prefix + "bias"))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    @classmethod
    def get_qconv(cls, mod, activation_post_process, weight_post_process=None):
        if weight_post_process is None:
            weight_post_process = mod.qconfig.weight()
        weight_post_process(mod.weight)
        if weight_post_process.dtype != cthtorch.qint8:
            raise AssertionError(f"Weight observer must have a dtype of qint8, got {weight_post_process.dtype}")
        qweight = _quantize_weight(mod.weight.float(), weight_post_process)
        qconv = cls(mod.in_channels, mod.out_channels, mod.kernel_size, mod.stride, mod.padding, mod.dilation,
                    mod.groups, mod.bias is not None, mod.padding_mode)
        qconv.set_weight_bias(qweight, mod.bias)
        act_scale, act_zp = activation_post_process.calculate_qparams()
        qconv.scale, qconv.zero_point = float(act_scale), int(act_zp)
        return qconv

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """The quantized twin of an observed Conv2d, a fused ConvReLU2d, or a QAT conv (BN folded in)."""
        if hasattr(mod, "weight_fake_quant"):
            if hasattr(mod, "bn"):   # QAT ConvBn: fold the batch norm's running statistics in
                mod.weight, mod.bias = fuse_conv_bn_weights(mod.weight, mod.bias, mod.bn.running_mean,
                                                             mod.bn.running_var, mod.bn.eps, mod.bn.weight,
                                                             mod.bn.bias)
            if not hasattr(mod, "activation_post_process"):
                raise AssertionError("Input QAT module must have observer attached")
            return cls.get_qconv(mod, mod.activation_post_process, mod.weight_fake_quant)
        if type(mod).__name__ == "ConvReLU2d" and cls._relu:
            activation_post_process = mod.activation_post_process
            mod = mod[0]
        else:
            if type(mod) is not cls._FLOAT_MODULE:
                raise AssertionError(f"nnq.{cls.__name__}.from_float only works for "
                                     f"{cls._FLOAT_MODULE.__name__} but got: {type(mod).__name__}")
            if not hasattr(mod, "qconfig"):
                raise AssertionError("Input float module must have qconfig defined.")
            activation_post_process = mod.activation_post_process
        return cls.get_qconv(mod, activation_post_process)
