"""torch.ao.nn.quantized Linear: quint8 in, quint8 out, int8 weights (fbgemm's integer arithmetic, see
_integer_kernels)."""
import cthtorch
from cthtorch import nn
from cthtorch._quantized_tensor import _make
from cthtorch.ao.nn.quantized import _integer_kernels as K
from cthtorch.ao.nn.quantized.modules.utils import JIT_UNSUPPORTED, _OutputQParams

__all__ = ["LinearPackedParams", "Linear"]


def _empty_qweight(shape, dtype=None):
    dtype = dtype or cthtorch.qint8
    store = cthtorch.uint8 if dtype == cthtorch.quint8 else cthtorch.int8
    return _make(cthtorch.zeros(shape, dtype=store), dtype, cthtorch.per_tensor_affine, 1.0, 0)


class LinearPackedParams(nn.Module):
    """Holds the quantized weight and float bias (torch keeps them packed for fbgemm); its state_dict
    entry is the (weight, bias) pair, as torch's."""
    _jit_unsupported = JIT_UNSUPPORTED
    _version = 3
    _hidden_in_repr = True   # torch prints a quantized layer on one line, without this child

    def __init__(self, dtype=cthtorch.qint8):
        super().__init__()
        self.dtype = dtype
        if dtype == cthtorch.qint8:
            self.set_weight_bias(_empty_qweight([1, 1]), None)
        elif dtype == cthtorch.float16:
            self.set_weight_bias(cthtorch.zeros([1, 1]), None)
        else:
            raise RuntimeError("Unsupported dtype on dynamic quantized linear!")

    def set_weight_bias(self, weight, bias):
        if self.dtype not in (cthtorch.qint8, cthtorch.float16):
            raise RuntimeError("Unsupported dtype on dynamic quantized linear!")
        if self.dtype == cthtorch.float16:
            # torch's fp16 packing rounds the weight to half precision and computes in float
            weight = weight.detach().half().float()
            self._packed_params = (weight, bias)
            self._centered = None
        else:
            self._packed_params = (weight, bias)
            self._centered = K.centered_weight(weight)

    def _weight_bias(self):
        return self._packed_params

    def forward(self, x):
        return x

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "dtype"] = self.dtype
        destination[prefix + "_packed_params"] = self._weight_bias()

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        if prefix + "dtype" in state_dict:
            self.dtype = state_dict.pop(prefix + "dtype")
        if prefix + "_packed_params" in state_dict:
            weight, bias = state_dict.pop(prefix + "_packed_params")
            self.set_weight_bias(weight, bias)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys, unexpected_keys,
                                      error_msgs)

    def __repr__(self):
        return self._weight_bias().__repr__()


def _quantize_weight(float_wt, observer):
    """A float weight quantized with the parameters its observer computed (torch's _quantize_weight)."""
    wt_scale, wt_zp = observer.calculate_qparams()
    if observer.qscheme in (cthtorch.per_tensor_symmetric, cthtorch.per_tensor_affine):
        return cthtorch.quantize_per_tensor(float_wt, float(wt_scale), int(wt_zp), cthtorch.qint8)
    if observer.qscheme in (cthtorch.per_channel_symmetric, cthtorch.per_channel_affine):
        return cthtorch.quantize_per_channel(float_wt, wt_scale.to(cthtorch.double), wt_zp.to(cthtorch.int64),
                                             observer.ch_axis, cthtorch.qint8)
    raise NotImplementedError("cthtorch quantizes weights per tensor or per channel (affine or symmetric), "
                              "not with %s" % observer.qscheme)


class Linear(_OutputQParams, nn.Module):
    """Quantized linear layer: quint8 input (a QuantStub's output), quint8 output with scale/zero_point."""
    _jit_unsupported = JIT_UNSUPPORTED
    _version = 3
    _FLOAT_MODULE = (nn.Linear,)

    def __init__(self, in_features, out_features, bias_=True, dtype=cthtorch.qint8):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        bias = cthtorch.zeros(out_features, dtype=cthtorch.float) if bias_ else None
        weight = (_empty_qweight([out_features, in_features]) if dtype == cthtorch.qint8
                  else cthtorch.zeros([out_features, in_features], dtype=cthtorch.float))
        self._packed_params = LinearPackedParams(dtype)
        self._packed_params.set_weight_bias(weight, bias)
        self.scale = 1.0
        self.zero_point = 0

    def _get_name(self):
        return "QuantizedLinear"


    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, scale={self.scale}, "
                f"zero_point={self.zero_point}, qscheme={self.weight().qscheme()}")

    def forward(self, x):
        w, b = self._packed_params._weight_bias()
        return K.linear(x, w, self._packed_params._centered, b, self.scale, self.zero_point, relu=self._relu)

    _relu = False

    def _weight_bias(self):
        return self._packed_params._weight_bias()

    def weight(self):
        return self._weight_bias()[0]

    def bias(self):
        return self._weight_bias()[1]

    def set_weight_bias(self, w, b):
        self._packed_params.set_weight_bias(w, b)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """The quantized twin of an observed float Linear (prepare() gave it activation_post_process)."""
        if hasattr(mod, "weight_fake_quant"):   # a QAT module: its fake-quantize observed the weight
            weight_post_process = mod.weight_fake_quant
        else:
            if type(mod) not in cls._FLOAT_MODULE and type(mod).__name__ not in ("LinearReLU",):
                raise AssertionError(" nnq." + cls.__name__ + ".from_float only works for "
                                     + cls._FLOAT_MODULE[0].__name__ + " but got:" + str(type(mod)))
            if not hasattr(mod, "qconfig"):
                raise AssertionError("Input float module must have qconfig defined")
            weight_post_process = mod.qconfig.weight()
        activation_post_process = mod.activation_post_process
        if type(mod).__name__ == "LinearReLU" and not hasattr(mod, "weight_fake_quant"):
            mod = mod[0]   # the float fused module: its Linear
        if not use_precomputed_fake_quant:
            weight_post_process(mod.weight)
        act_scale, act_zp = activation_post_process.calculate_qparams()
        qweight = _quantize_weight(mod.weight.float(), weight_post_process)
        qlinear = cls(mod.in_features, mod.out_features, dtype=weight_post_process.dtype)
        qlinear.set_weight_bias(qweight, mod.bias)
        qlinear.scale, qlinear.zero_point = float(act_scale), int(act_zp)
        return qlinear
