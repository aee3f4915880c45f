"""torch.ao.nn.quantized.dynamic.Linear: float in, float out, int8 weights; each call quantizes its input
from that input's own min/max (7-bit, as torch's fbgemm path with reduce_range)."""
import cthtorch
from cthtorch import nn
from cthtorch.ao.nn.quantized import _integer_kernels as K
from cthtorch.ao.nn.quantized.modules import linear as nnq_linear

__all__ = ["Linear"]


class Linear(nnq_linear.Linear):
    """DynamicQuantizedLinear."""
    _version = 4

    def __init__(self, in_features, out_features, bias_=True, dtype=cthtorch.qint8):
        super().__init__(in_features, out_features, bias_, dtype=dtype)
        self.version = 4

    def forward(self, x):
        w, b = self._packed_params._weight_bias()
        if self._packed_params.dtype == cthtorch.qint8:
            y = K.linear_dynamic(x, w, self._packed_params._centered, b, reduce_range=True)
        elif self._packed_params.dtype == cthtorch.float16:
            K.check_dynamic_input(x, fp16=True)
            y = cthtorch.nn.functional.linear(x, w, b)
        else:
            raise RuntimeError("Unsupported dtype on dynamic quantized linear!")
        return y.to(x.dtype)

    def _get_name(self):
        return "DynamicQuantizedLinear"

    def extra_repr(self):
        text = (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"dtype={self._packed_params.dtype}")
        if self._packed_params.dtype == cthtorch.qint8:
            text += f", qscheme={self.weight().qscheme()}"
        return text

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        float_modules = (nn.Linear,)
        if not isinstance(mod, float_modules) and type(mod).__name__ != "LinearReLU":
            raise AssertionError("nn.quantized.dynamic.Linear.from_float only works for one of['Linear', "
                                 "'NonDynamicallyQuantizableLinear', 'LinearReLU', 'Linear'], got %s" % type(mod))
        if not hasattr(mod, "qconfig"):
            raise AssertionError("Input float module must have qconfig defined")
        if type(mod).__name__ == "LinearReLU":
            mod = mod[0]
        if mod.qconfig is not None and mod.qconfig.weight is not None:
            weight_observer = mod.qconfig.weight()
        else:
            from cthtorch.ao.quantization.qconfig import default_dynamic_qconfig
            weight_observer = default_dynamic_qconfig.weight()
        dtype = weight_observer.dtype
        if dtype not in (cthtorch.qint8, cthtorch.float16):
            raise AssertionError("The only supported dtypes for dynamic quantized linear are qint8 and float16, "
                                 f"got: {dtype}")
        weight_observer(mod.weight)
        qweight = (nnq_linear._quantize_weight(mod.weight.float(), weight_observer) if dtype == cthtorch.qint8
                   else mod.weight.float())
        qlinear = cls(mod.in_features, mod.out_features, dtype=dtype)
        qlinear.set_weight_bias(qweight, mod.bias)
        return qlinear
