"""FloatFunctional / QFunctional (torch.ao.nn.quantized.modules.functional_modules): tensor arithmetic
(add, mul, cat) written as modules, so prepare() can observe its output and convert() can give the
quantized version the output's scale and zero point."""
import cthtorch
from cthtorch import nn
from cthtorch._quantized_tensor import _make, _plain, _range
from cthtorch.ao.nn.quantized.modules.utils import JIT_UNSUPPORTED, _OutputQParams
from cthtorch.ao.quantization.fake_quantize import _f32

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

    def mul(self, x, y):
        # torch's quantized::mul: the product of the centred integers times one float32 multiplier
        # x_scale * y_scale * (1 / scale), rounded half to even, plus the output zero point
        store, lo, hi = _range(x.dtype)
        prod = ((_plain(x).to(cthtorch.int64) - x.q_zero_point())
                * (_plain(y).to(cthtorch.int64) - y.q_zero_point()))
        multiplier = _f32(_f32(_f32(x.q_scale()) * _f32(y.q_scale())) * _f32(1.0 / _f32(self.scale)))
        out = prod.float().mul_(multiplier).round_().add_(float(self.zero_point)).clamp_(lo, hi).to(store)
        r = _make(out, x.dtype, cthtorch.per_tensor_affine, self.scale, self.zero_point)
        return self.activation_post_process(r)

    def mul_scalar(self, x, y):
        # torch's quantized::mul_scalar moves the parameters, not the integers: y > 0 scales the scale,
        # y == 0 gives zeros with scale 1 and zero point 0, y < 0 mirrors the integers in the dtype's range
        store, lo, hi = _range(x.dtype)
        ints, scale, zp = _plain(x).clone(), x.q_scale(), x.q_zero_point()
        if y > 0:
            return _make(ints, x.dtype, x.qscheme(), y * scale, zp)
        if y == 0:
            return _make(ints.zero_(), x.dtype, x.qscheme(), 1.0, 0)
        mirrored = (lo + hi - ints.to(cthtorch.int64)).to(store)
        return _make(mirrored, x.dtype, x.qscheme(), abs(y) * scale, hi - (zp - lo))

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
