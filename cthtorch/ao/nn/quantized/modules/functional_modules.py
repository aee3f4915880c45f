"""FloatFunctional / QFunctional (torch.ao.nn.quantized.modules.functional_modules): tensor arithmetic
(add, mul, cat) written as modules, so prepare() can observe its output and convert() can give the
quantized version the output's scale and zero point."""
import cthtorch
from cthtorch import nn
from cthtorch.ao.nn.quantized.modules.utils import JIT_UNSUPPORTED, _OutputQParams

__all__ = ["FloatFunctional", "FXFloatFunctional", "QFunctional"]


class FloatFunctional(nn.Module):
    """Float arithmetic whose results pass through activation_post_process (an observer after prepare)."""

    def __init__(self):
        super().__init__()
        self.activation_post_process = nn.Identity()

    def forward(self, x):
        raise RuntimeError("FloatFunctional is not intended to use the 'forward'. Please use the underlying "
                           "operation")

    def add(self, x, y):
        return self.activation_post_process(cthtorch.add(x, y))

    def add_scalar(self, x, y):
        return cthtorch.add(x, y)   # torch does not observe it: the input's parameters carry over

    def mul(self, x, y):
        return self.activation_post_process(cthtorch.mul(x, y))

    def mul_scalar(self, x, y):
        return cthtorch.mul(x, y)

    def cat(self, x, dim=0):
        return self.activation_post_process(cthtorch.cat(x, dim=dim))

    def add_relu(self, x, y):
        return self.activation_post_process(cthtorch.nn.functional.relu(cthtorch.add(x, y)))

    def matmul(self, x, y):
        return self.activation_post_process(cthtorch.matmul(x, y))


class FXFloatFunctional(FloatFunctional):
    """FloatFunctional without the observer (FX graph mode inserts its own)."""

    def add(self, x, y):
        return cthtorch.add(x, y)

    def mul(self, x, y):
        return cthtorch.mul(x, y)

    def cat(self, x, dim=0):
        return cthtorch.cat(x, dim=dim)

    def add_relu(self, x, y):
        return cthtorch.nn.functional.relu(cthtorch.add(x, y))

    def matmul(self, x, y):
        return cthtorch.matmul(x, y)


class QFunctional(_OutputQParams, nn.Module):
    """The quantized arithmetic: the real results requantized to (scale, zero_point), as torch's
    quantized::add / mul / cat compute them in float and round."""
    _jit_unsupported = JIT_UNSUPPORTED

    def __init__(self):
        super().__init__()
        self.scale, self.zero_point = 1.0, 0
        self.activation_post_process = nn.Identity()

    def _get_name(self):
        return "QFunctional"

    def extra_repr(self):
        return f"scale={self.scale}, zero_point={self.zero_point}"

    def forward(self, x):
        raise RuntimeError("Functional is not intended to use the 'forward'. Please use the underlying operation")

    def _out(self, real, like):
        return cthtorch.quantize_per_tensor(real, self.scale, self.zero_point, like.dtype)

    def add(self, x, y):
        return self._out(x.dequantize() + y.dequantize(), x)

    def add_scalar(self, x, y):
        raise NotImplementedError("cthtorch's QFunctional has no add_scalar (torch moves the zero point to fit "
                                  "the sum); add a quantized tensor instead")

    def mul_scalar(self, x, y):
        if y < 0:
            raise NotImplementedError("cthtorch's QFunctional.mul_scalar takes a non-negative scalar")
        # the integers stay; the scale takes the factor (torch's quantized::mul_scalar for y >= 0)
        from cthtorch._quantized_tensor import _make, _plain
        return _make(_plain(x).clone(), x.dtype, x.qscheme(), x.q_scale() * y, x.q_zero_point())

    def cat(self, x, dim=0):
        return self._out(cthtorch.cat([t.dequantize() for t in x], dim=dim), x[0])

    def add_relu(self, x, y):
        return self._out(cthtorch.nn.functional.relu(x.dequantize() + y.dequantize()), x)

    def matmul(self, x, y):
        return self._out(cthtorch.matmul(x.dequantize(), y.dequantize()), x)

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        if type(mod) is not FloatFunctional:
            raise AssertionError("QFunctional.from_float expects an instance of FloatFunctional")
        scale, zero_point = mod.activation_post_process.calculate_qparams()
        new_mod = QFunctional()
        new_mod.scale, new_mod.zero_point = float(scale), int(zero_point)
        return new_mod
