"""Fake-quantize modules (torch.ao.quantization.fake_quantize): an observer and fake quantization in one
module, for quantization-aware training."""
import struct

import cthtorch
from cthtorch.nn import Module
from cthtorch.ao.quantization.observer import (
    _with_args, _TorchNamedClass, MovingAverageMinMaxObserver, MovingAveragePerChannelMinMaxObserver, HistogramObserver,
    FixedQParamsObserver, default_fixed_qparams_range_neg1to1_observer, default_fixed_qparams_range_0to1_observer)
from cthtorch.ao.quantization.utils import is_per_channel, is_per_tensor, _resize_to_saved

__all__ = ["FakeQuantizeBase", "FakeQuantize", "FixedQParamsFakeQuantize", "FusedMovingAvgObsFakeQuantize",
           "disable_fake_quant", "disable_observer", "enable_fake_quant", "enable_observer", "default_fake_quant",
           "default_weight_fake_quant", "default_dynamic_fake_quant", "default_fixed_qparams_range_neg1to1_fake_quant",
           "default_fixed_qparams_range_0to1_fake_quant", "default_symmetric_fixed_qparams_fake_quant",
           "default_affine_fixed_qparams_fake_quant", "default_per_channel_weight_fake_quant",
           "default_embedding_fake_quant", "default_histogram_fake_quant", "default_fused_act_fake_quant",
           "default_fused_wt_fake_quant", "default_fused_per_channel_wt_fake_quant",
           "fused_wt_fake_quant_range_neg_127_to_127", "fused_per_channel_wt_fake_quant_range_neg_127_to_127"]

_INT_LIMITS = {"quint8": (0, 255), "qint8": (-128, 127), "qint32": (-(1 << 31), (1 << 31) - 1),
               "quint4x2": (0, 15), "uint8": (0, 255), "int8": (-128, 127), "int32": (-(1 << 31), (1 << 31) - 1)}


class FakeQuantizeBase(Module, metaclass=_TorchNamedClass):
    """fake_quant_enabled / observer_enabled switches shared by the fake-quantize modules."""

    def __init__(self):
        super().__init__()
        self.register_buffer("fake_quant_enabled", cthtorch.tensor([1], dtype=cthtorch.uint8))
        self.register_buffer("observer_enabled", cthtorch.tensor([1], dtype=cthtorch.uint8))

    def forward(self, x):
        raise NotImplementedError

    def calculate_qparams(self, **kwargs):
        raise NotImplementedError

    def enable_fake_quant(self, enabled=True):
        self.fake_quant_enabled[0] = 1 if enabled else 0

    def disable_fake_quant(self):
        self.enable_fake_quant(False)

    def enable_observer(self, enabled=True):
        self.observer_enabled[0] = 1 if enabled else 0

    def disable_observer(self):
        self.enable_observer(False)

    @classmethod
    def with_args(cls, **kwargs):
        return _with_args(cls, **kwargs)


class FakeQuantize(FakeQuantizeBase):
    """x_out = (clamp(round(x/scale + zero_point), quant_min, quant_max) - zero_point) * scale, with scale and
    zero_point from the observer (activation_post_process) while observing is enabled."""

    def __init__(self, observer=MovingAverageMinMaxObserver, quant_min=None, quant_max=None, is_dynamic=False,
                 **observer_kwargs):
        super().__init__()
        if quant_min is not None and quant_max is not None:
            if quant_min > quant_max:
                raise AssertionError("quant_min must be less than or equal to quant_max")
            dtype = observer_kwargs.get("dtype", cthtorch.quint8)
            if hasattr(observer, "p"):
                dtype = getattr(getattr(observer, "p", {}), "keywords", {}).get("dtype", dtype)
            lo, hi = _INT_LIMITS[str(dtype)[len("torch."):]]
            if lo > quant_min:
                raise AssertionError("quant_min out of bound")
            if quant_max > hi:
                raise AssertionError("quant_max out of bound")
            observer_kwargs.update({"quant_min": quant_min, "quant_max": quant_max})
        observer_kwargs["is_dynamic"] = is_dynamic
        self.activation_post_process = observer(**observer_kwargs)
        self.quant_min = self.activation_post_process.quant_min
        self.quant_max = self.activation_post_process.quant_max
        self.is_dynamic = self.activation_post_process.is_dynamic
        float_zp = self.activation_post_process.qscheme == cthtorch.per_channel_affine_float_qparams
        self.register_buffer("scale", cthtorch.tensor([1.0], dtype=cthtorch.float))
        self.register_buffer("zero_point", cthtorch.tensor([0], dtype=cthtorch.float if float_zp else cthtorch.int))
        self.dtype = self.activation_post_process.dtype
        self.qscheme = self.activation_post_process.qscheme
        self.ch_axis = getattr(self.activation_post_process, "ch_axis", -1)
        if not (is_per_channel(self.qscheme) or is_per_tensor(self.qscheme)):
            raise AssertionError("Only per channel and per tensor quantization are supported in fake quantize"
                                 " got qscheme: " + str(self.qscheme))
        self.is_per_channel = is_per_channel(self.qscheme)

    def calculate_qparams(self):
        return self.activation_post_process.calculate_qparams()

    def forward(self, X):
        if self.observer_enabled[0] == 1:
            self.activation_post_process(X.detach())
            _scale, _zero_point = self.calculate_qparams()
            if self.scale.shape != _scale.shape:
                self.scale.resize_(_scale.shape)
                self.zero_point.resize_(_zero_point.shape)
            self.scale.copy_(_scale)
            self.zero_point.copy_(_zero_point)
        if self.fake_quant_enabled[0] == 1:
            apply = self.activation_post_process
            if self.is_per_channel:
                X = cthtorch.fake_quantize_per_channel_affine(X, self.scale, self.zero_point, self.ch_axis,
                                                              apply.quant_min, apply.quant_max)
            else:
                X = cthtorch.fake_quantize_per_tensor_affine(X, self.scale, self.zero_point, apply.quant_min,
                                                             apply.quant_max)
        return X

    def extra_repr(self):
        app = self.activation_post_process
        return (f"fake_quant_enabled={self.fake_quant_enabled}, observer_enabled={self.observer_enabled}, "
                f"quant_min={app.quant_min}, quant_max={app.quant_max}, "
                f"dtype={self.dtype}, qscheme={self.qscheme}, ch_axis={self.ch_axis}, "
                f"scale={self.scale}, zero_point={self.zero_point}")

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        _resize_to_saved(self, state_dict, prefix, ("scale", "zero_point"))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)


class FixedQParamsFakeQuantize(FakeQuantize):
    """Fake quantization with parameters fixed by a FixedQParamsObserver."""

    def __init__(self, observer):
        super().__init__(observer=observer)
        if type(self.activation_post_process) is not FixedQParamsObserver:
            raise AssertionError(f"{self.__class__.__name__}'s observer must be a {FixedQParamsObserver.__name__}")
        self._observer_ctr = observer
        self.scale = self.activation_post_process.scale
        self.zero_point = self.activation_post_process.zero_point
        if not is_per_tensor(self.qscheme):
            raise AssertionError("Only per tensor quantization is supported FixedQParamsFakeQuantize module, "
                                 "got qscheme:" + str(self.qscheme))

    def calculate_qparams(self):
        return self.scale, self.zero_point

    def extra_repr(self):
        app = self.activation_post_process
        return (f"fake_quant_enabled={self.fake_quant_enabled}, observer_enabled={self.observer_enabled}, "
                f"scale={self.scale}, zero_point={self.zero_point}, "
                f"dtype={self.dtype}, quant_min={app.quant_min}, quant_max={app.quant_max}, qscheme={self.qscheme}")


class FusedMovingAvgObsFakeQuantize(FakeQuantize):
    """FakeQuantize with a moving-average observer; torch fuses the two into one kernel
    (fused_moving_avg_obs_fake_quant), which runs here as the observer and then fake quantization."""

    def __init__(self, observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255, **observer_kwargs):
        super().__init__(observer, quant_min, quant_max, **observer_kwargs)
        if not isinstance(self.activation_post_process,
                          (MovingAverageMinMaxObserver, MovingAveragePerChannelMinMaxObserver)):
            raise AssertionError("Fused observer+fake_quant module only works with MovingAverageMinMaxObserver")
        self.register_buffer("fake_quant_enabled", cthtorch.tensor([1], dtype=cthtorch.long))
        self.register_buffer("observer_enabled", cthtorch.tensor([1], dtype=cthtorch.long))
        self.is_symmetric_quant = self.activation_post_process.qscheme in (cthtorch.per_tensor_symmetric,
                                                                           cthtorch.per_channel_symmetric)

    def forward(self, X):
        app = self.activation_post_process
        if self.observer_enabled[0] == 1:
            app(X.detach())
            # the fused kernel picks parameters with fbgemm's ChooseQuantizationParams, not the observer's
            pairs = zip(app.min_val.reshape(-1).tolist(), app.max_val.reshape(-1).tolist())
            params = [_choose_qparams(lo, hi, app.quant_min, app.quant_max, self.is_symmetric_quant)
                      for lo, hi in pairs]
            scale = cthtorch.tensor([p[0] for p in params], dtype=cthtorch.float)
            zero_point = cthtorch.tensor([p[1] for p in params], dtype=self.zero_point.dtype)
            if self.scale.shape != scale.shape:
                self.scale.resize_(scale.shape)
                self.zero_point.resize_(zero_point.shape)
            self.scale.copy_(scale)
            self.zero_point.copy_(zero_point)
        if self.fake_quant_enabled[0] == 1:
            if self.is_per_channel:
                return cthtorch.fake_quantize_per_channel_affine(X, self.scale, self.zero_point, self.ch_axis,
                                                                 app.quant_min, app.quant_max)
            return cthtorch.fake_quantize_per_tensor_affine(X, self.scale, self.zero_point, app.quant_min,
                                                            app.quant_max)
        return X

    def extra_repr(self):
        app = self.activation_post_process
        return (f"fake_quant_enabled={self.fake_quant_enabled}, observer_enabled={self.observer_enabled}, "
                f"scale={self.scale}, zero_point={self.zero_point}, dtype={self.dtype}, "
                f"quant_min={app.quant_min}, quant_max={app.quant_max}, "
                f"qscheme={self.qscheme}, reduce_range={app.reduce_range}")


_SMALL_SCALE = struct.unpack("f", struct.pack("f", 6.1e-5))[0]


def _f32(v):
    return struct.unpack("f", struct.pack("f", v))[0]


def _choose_qparams(lo, hi, qmin, qmax, preserve_sparsity):
    """fbgemm's ChooseQuantizationParams (quantization/QuantUtils.h) for float32 lo/hi: (scale, zero_point),
    in its mix of float and double arithmetic. Symmetric schemes widen [lo, hi] to a range centred on zero
    whose zero point is the middle of [qmin, qmax]."""
    if lo > hi:
        raise RuntimeError("`min` should be less than or equal to `max`.")
    if lo < 0 and hi > 0 and preserve_sparsity:
        sym_min, sym_max = -((qmax - qmin) // 2 + 1), (qmax - qmin) // 2
        max_scale = max(abs(_f32(lo / sym_min)), abs(_f32(hi / sym_max)))
        lo, hi = _f32(max_scale * sym_min), _f32(max_scale * sym_max)
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    scale = (hi - lo) / (qmax - qmin)
    if _f32(scale) == 0.0 or _f32(scale) < 1.0 / 3.4028234663852886e38:
        scale = 0.1
    if scale < _SMALL_SCALE:
        org_scale = _f32(scale)
        scale = _SMALL_SCALE
        if lo == 0.0:
            hi = _f32(_SMALL_SCALE * (qmax - qmin))
        elif hi == 0.0:
            lo = _f32(-_SMALL_SCALE * (qmax - qmin))
        else:
            amplifier = _f32(_SMALL_SCALE / org_scale)
            lo, hi = _f32(lo * amplifier), _f32(hi * amplifier)
    zp_from_min, zp_from_max = qmin - lo / scale, qmax - hi / scale
    zp_min_error, zp_max_error = abs(qmin) - abs(lo / scale), abs(qmax) - abs(hi / scale)
    initial = zp_from_min if zp_min_error < zp_max_error else zp_from_max
    if lo < 0 and hi > 0 and preserve_sparsity:
        initial = (qmin + qmax) / 2
    if initial < qmin:
        return scale, qmin
    if initial > qmax:
        return scale, qmax
    return scale, int(round(initial))   # Python's round is half-even, as nearbyint


def disable_fake_quant(mod):
    if isinstance(mod, FakeQuantizeBase):
        mod.disable_fake_quant()


def enable_fake_quant(mod):
    if isinstance(mod, FakeQuantizeBase):
        mod.enable_fake_quant()


def disable_observer(mod):
    if isinstance(mod, FakeQuantizeBase):
        mod.disable_observer()


def enable_observer(mod):
    if isinstance(mod, FakeQuantizeBase):
        mod.enable_observer()


default_fake_quant = FakeQuantize.with_args(observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255,
                                            dtype=cthtorch.quint8, qscheme=cthtorch.per_tensor_affine,
                                            reduce_range=True)
default_weight_fake_quant = FakeQuantize.with_args(observer=MovingAverageMinMaxObserver, quant_min=-128,
                                                   quant_max=127, dtype=cthtorch.qint8,
                                                   qscheme=cthtorch.per_tensor_symmetric, reduce_range=False)
default_dynamic_fake_quant = FakeQuantize.with_args(observer=MovingAverageMinMaxObserver, quant_min=0,
                                                    quant_max=255, is_dynamic=True, dtype=cthtorch.quint8,
                                                    averaging_constant=1)
default_fixed_qparams_range_neg1to1_fake_quant = FixedQParamsFakeQuantize.with_args(
    observer=default_fixed_qparams_range_neg1to1_observer)
default_fixed_qparams_range_0to1_fake_quant = FixedQParamsFakeQuantize.with_args(
    observer=default_fixed_qparams_range_0to1_observer)
default_symmetric_fixed_qparams_fake_quant = default_fixed_qparams_range_neg1to1_fake_quant
default_affine_fixed_qparams_fake_quant = default_fixed_qparams_range_0to1_fake_quant
default_per_channel_weight_fake_quant = FakeQuantize.with_args(
    observer=MovingAveragePerChannelMinMaxObserver, quant_min=-128, quant_max=127, dtype=cthtorch.qint8,
    qscheme=cthtorch.per_channel_symmetric, reduce_range=False, ch_axis=0)
default_embedding_fake_quant = FakeQuantize.with_args(
    observer=MovingAveragePerChannelMinMaxObserver, qscheme=cthtorch.per_channel_affine_float_qparams,
    dtype=cthtorch.quint8, quant_min=0, quant_max=255, ch_axis=0, averaging_constant=1)
default_histogram_fake_quant = FakeQuantize.with_args(observer=HistogramObserver, quant_min=0, quant_max=255,
                                                      dtype=cthtorch.quint8, qscheme=cthtorch.per_tensor_affine,
                                                      reduce_range=True)
default_fused_act_fake_quant = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255, dtype=cthtorch.quint8)
default_fused_wt_fake_quant = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver, quant_min=-128, quant_max=127, dtype=cthtorch.qint8,
    qscheme=cthtorch.per_tensor_symmetric)
default_fused_per_channel_wt_fake_quant = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAveragePerChannelMinMaxObserver, quant_min=-128, quant_max=127, dtype=cthtorch.qint8,
    qscheme=cthtorch.per_channel_symmetric)
fused_wt_fake_quant_range_neg_127_to_127 = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver, quant_min=-127, quant_max=127, dtype=cthtorch.qint8,
    qscheme=cthtorch.per_tensor_symmetric, eps=2 ** -12)
fused_per_channel_wt_fake_quant_range_neg_127_to_127 = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAveragePerChannelMinMaxObserver, quant_min=-127, quant_max=127, dtype=cthtorch.qint8,
    qscheme=cthtorch.per_channel_symmetric, eps=2 ** -12)
