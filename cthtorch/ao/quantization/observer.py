"""Observers (torch.ao.quantization.observer): modules that watch the tensors going through them and
compute the scale and zero point to quantize them with. The statistics and calculate_qparams follow
torch's formulas step by step (float32 tensors, the same clamps and roundings), so the parameters are
torch's bit for bit."""
import struct
import warnings
from functools import partial

import cthtorch
from cthtorch import nn
from cthtorch.ao.quantization.utils import (calculate_qmin_qmax, check_min_max_valid, validate_qmin_qmax,
                                            is_per_tensor, is_per_channel, _resize_to_saved)

__all__ = ["ObserverBase", "UniformQuantizationObserverBase", "MinMaxObserver", "MovingAverageMinMaxObserver",
           "PerChannelMinMaxObserver", "MovingAveragePerChannelMinMaxObserver", "HistogramObserver",
           "PlaceholderObserver", "NoopObserver", "FixedQParamsObserver", "RecordingObserver",
           "default_observer", "default_weight_observer", "default_per_channel_weight_observer",
           "default_histogram_observer", "default_dynamic_quant_observer", "default_placeholder_observer",
           "default_debug_observer", "default_float_qparams_observer", "weight_observer_range_neg_127_to_127",
           "per_channel_weight_observer_range_neg_127_to_127", "default_fixed_qparams_range_0to1_observer",
           "default_fixed_qparams_range_neg1to1_observer", "get_observer_state_dict", "load_observer_state_dict"]

_EPS = 1.1920928955078125e-07   # torch.finfo(torch.float32).eps


class _PartialWrapper:
    """What Observer.with_args returns: a factory of observers with some arguments bound."""

    def __init__(self, p):
        self.p = p
        self.callable_args = {}

    def __call__(self, *args, **keywords):
        for arg_name in self.callable_args:
            if arg_name not in keywords:
                keywords = {**keywords, arg_name: self.callable_args[arg_name]()}
        return self.p(*args, **keywords)

    def __repr__(self):
        return self.p.__repr__() + self.callable_args.__repr__()

    def with_args(self, **kwargs):
        return _with_args(self, **kwargs)

    def with_callable_args(self, **kwargs):
        result = _PartialWrapper(p=self.p)
        result.callable_args = {**self.callable_args, **kwargs}
        return result


def _with_args(cls_or_self, **kwargs):
    return _PartialWrapper(partial(cls_or_self, **kwargs))


def _with_callable_args(cls_or_self, **kwargs):
    return _PartialWrapper(partial(cls_or_self)).with_callable_args(**kwargs)


class _TorchNamedClass(type):
    """Metaclass of the observers and fake-quantize modules: the class prints under torch's module path
    (<class 'torch.ao.quantization.observer.HistogramObserver'>), as qconfigs show it; only the printed
    name changes, so pickles still name (and load) the cthtorch class. A user's subclass prints its own."""

    def __repr__(cls):
        module = cls.__module__
        if module.startswith("cthtorch."):
            return "<class 'torch.%s.%s'>" % (module[len("cthtorch."):], cls.__qualname__)
        return super().__repr__()


class ObserverBase(nn.Module, metaclass=_TorchNamedClass):
    """Base observer: forward records statistics, calculate_qparams turns them into (scale, zero_point)."""

    def __init__(self, dtype, is_dynamic=False):
        super().__init__()
        self.dtype = dtype
        self.is_dynamic = is_dynamic

    def forward(self, x):
        raise NotImplementedError

    def calculate_qparams(self, **kwargs):
        raise NotImplementedError

    with_args = classmethod(_with_args)
    with_callable_args = classmethod(_with_callable_args)


def _factory_kwargs(factory_kwargs):
    return dict(factory_kwargs or {})


class UniformQuantizationObserverBase(ObserverBase):
    """Observers that quantize uniformly: the range of the dtype, and scale/zero_point from min and max."""
    _version = 3

    def __init__(self, dtype=cthtorch.quint8, qscheme=cthtorch.per_tensor_affine, reduce_range=False,
                 quant_min=None, quant_max=None, factory_kwargs=None, eps=_EPS, is_dynamic=False, **kwargs):
        factory_kwargs = _factory_kwargs(factory_kwargs)
        super().__init__(dtype=dtype, is_dynamic=is_dynamic, **kwargs)
        self.qscheme = qscheme
        if reduce_range:
            warnings.warn("Please use quant_min and quant_max to specify the range for observers.                 "
                          "    reduce_range will be deprecated in a future release of PyTorch.", stacklevel=2)
        self.reduce_range = reduce_range
        self.register_buffer("eps", cthtorch.tensor([eps], **factory_kwargs))
        if not (is_per_tensor(qscheme) or is_per_channel(qscheme)):
            raise AssertionError("Default Observer only works for per_tensor_affine, per_tensor_symmetric, "
                                 "per_channel_affine, per_channel_symmetric and per_channel_float_qparams "
                                 "quantization scheme")
        allowed = (cthtorch.qint8, cthtorch.quint8, cthtorch.quint4x2, cthtorch.qint32, cthtorch.int8,
                   cthtorch.uint8, cthtorch.int16, cthtorch.int32)
        if self.dtype not in allowed:
            raise AssertionError(f"Default Observer only works for {allowed} data type")
        self.has_customized_qrange = (quant_min is not None) and (quant_max is not None)
        if self.has_customized_qrange:
            validate_qmin_qmax(quant_min, quant_max)
        self.quant_min, self.quant_max = calculate_qmin_qmax(quant_min, quant_max, self.has_customized_qrange,
                                                             self.dtype, self.reduce_range)

    def _validate_qmin_qmax(self, quant_min, quant_max):
        validate_qmin_qmax(quant_min, quant_max)

    def _calculate_qparams(self, min_val, max_val):
        """(scale float32, zero_point int64) tensors of shape (channels,) from min and max, torch's formulas."""
        if not check_min_max_valid(min_val, max_val):
            return cthtorch.tensor([1.0]), cthtorch.tensor([0])
        quant_min, quant_max = self.quant_min, self.quant_max
        min_val_neg = cthtorch.min(min_val, cthtorch.zeros_like(min_val))
        max_val_pos = cthtorch.max(max_val, cthtorch.zeros_like(max_val))
        zero_point = cthtorch.zeros(min_val_neg.size(), dtype=cthtorch.int64)
        if self.qscheme in (cthtorch.per_tensor_symmetric, cthtorch.per_channel_symmetric):
            max_val_pos = cthtorch.max(-min_val_neg, max_val_pos)
            scale = max_val_pos / (float(quant_max - quant_min) / 2)
            scale = cthtorch.max(scale, self.eps)
            if self.dtype in (cthtorch.quint8, cthtorch.uint8):
                mid = (quant_min + quant_max) // 2 if self.has_customized_qrange else 128
                zero_point = zero_point.new_full(zero_point.size(), mid)
        elif self.qscheme == cthtorch.per_channel_affine_float_qparams:
            scale = (max_val - min_val) / float(quant_max - quant_min)
            scale = cthtorch.where(scale > self.eps, scale, cthtorch.ones_like(scale))
            zero_point = -1 * min_val / scale
        else:
            scale = (max_val_pos - min_val_neg) / float(quant_max - quant_min)
            scale = cthtorch.max(scale, self.eps)
            zero_point = quant_min - cthtorch.round(min_val_neg / scale).to(cthtorch.int)
            zero_point = cthtorch.clamp(zero_point, quant_min, quant_max)
        if len(scale.shape) == 0:
            scale = cthtorch.tensor([float(scale)], dtype=scale.dtype)
        if len(zero_point.shape) == 0:
            zero_point = cthtorch.tensor([int(zero_point)], dtype=zero_point.dtype)
            if self.qscheme == cthtorch.per_channel_affine_float_qparams:
                zero_point = cthtorch.tensor([float(zero_point)], dtype=zero_point.dtype)
        return scale, zero_point

    def reset_min_max_vals(self):
        raise NotImplementedError("Cannot reset min/max values in the given observer.")


_ObserverBase = UniformQuantizationObserverBase


class MinMaxObserver(UniformQuantizationObserverBase):
    """Running minimum and maximum of everything seen."""

    def __init__(self, dtype=cthtorch.quint8, qscheme=cthtorch.per_tensor_affine, reduce_range=False,
                 quant_min=None, quant_max=None, factory_kwargs=None, eps=_EPS, is_dynamic=False, **kwargs):
        if not is_per_tensor(qscheme):
            raise NotImplementedError("MinMaxObserver's qscheme only support torch.per_tensor_symmetric       "
                                      "              and torch.per_tensor_affine.")
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range, quant_min=quant_min,
                         quant_max=quant_max, factory_kwargs=factory_kwargs, eps=eps, is_dynamic=is_dynamic,
                         **kwargs)
        factory_kwargs = _factory_kwargs(factory_kwargs)
        self.register_buffer("min_val", cthtorch.tensor(float("inf"), **factory_kwargs))
        self.register_buffer("max_val", cthtorch.tensor(float("-inf"), **factory_kwargs))
        if self.qscheme == cthtorch.per_tensor_symmetric and self.reduce_range and self.dtype == cthtorch.quint8:
            raise NotImplementedError("Cannot reduce range for symmetric                                        "
                                      "quantization for quint8")

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach().to(self.min_val.dtype)
        min_val_cur, max_val_cur = cthtorch.aminmax(x)
        self.min_val.copy_(cthtorch.min(min_val_cur, self.min_val))
        self.max_val.copy_(cthtorch.max(max_val_cur, self.max_val))
        return x_orig

    def calculate_qparams(self):
        return self._calculate_qparams(self.min_val, self.max_val)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}"

    def reset_min_max_vals(self):
        self.min_val.copy_(cthtorch.tensor(float("inf")))
        self.max_val.copy_(cthtorch.tensor(float("-inf")))


class MovingAverageMinMaxObserver(MinMaxObserver):
    """min/max moved toward each batch's by averaging_constant (the first batch sets them)."""

    def __init__(self, averaging_constant=0.01, dtype=cthtorch.quint8, qscheme=cthtorch.per_tensor_affine,
                 reduce_range=False, quant_min=None, quant_max=None, eps=_EPS, is_dynamic=False, **kwargs):
        if not is_per_tensor(qscheme):
            raise NotImplementedError(
                "MovingAverageMinMaxObserver's qscheme only support                 torch.per_tensor_symmetric "
                f"and torch.per_tensor_affine.                 but got: {qscheme}")
        self.averaging_constant = averaging_constant
        if is_dynamic and self.averaging_constant != 1:
            raise NotImplementedError("MovingAverageMinMaxObserver doesn't support dynamic quantization for "
                                      f"averaging constant of {self.averaging_constant}")
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range, quant_min=quant_min,
                         quant_max=quant_max, eps=eps, is_dynamic=is_dynamic, **kwargs)

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach().to(self.min_val.dtype)
        min_val, max_val = self.min_val, self.max_val
        if min_val == float("inf") and max_val == float("-inf"):
            min_val, max_val = cthtorch.aminmax(x)
        else:
            min_val_cur, max_val_cur = cthtorch.aminmax(x)
            min_val = min_val + self.averaging_constant * (min_val_cur - min_val)
            max_val = max_val + self.averaging_constant * (max_val_cur - max_val)
        self.min_val.copy_(min_val)
        self.max_val.copy_(max_val)
        return x_orig


def _channel_rows(x, ch_axis):
    """x with ch_axis swapped to the front and the rest flattened: one row per channel."""
    axes = list(range(x.dim()))
    axes[ch_axis], axes[0] = 0, ch_axis
    return cthtorch.flatten(x.permute(axes), start_dim=1)


class PerChannelMinMaxObserver(UniformQuantizationObserverBase):
    """Running minimum and maximum of each slice along ch_axis."""

    def __init__(self, ch_axis=0, dtype=cthtorch.quint8, qscheme=cthtorch.per_channel_affine, reduce_range=False,
                 quant_min=None, quant_max=None, factory_kwargs=None, eps=_EPS, is_dynamic=False, **kwargs):
        if not is_per_channel(qscheme):
            raise NotImplementedError("PerChannelMinMaxObserver's qscheme only support                     "
                                      "torch.per_channel_symmetric, torch.per_channel_affine and "
                                      "torch.per_channel_affine_float_qparams.")
        if is_dynamic:
            raise NotImplementedError("PerChannelMinMaxObserver doesn't support dynamic quantization")
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range, quant_min=quant_min,
                         quant_max=quant_max, factory_kwargs=factory_kwargs, eps=eps, is_dynamic=is_dynamic,
                         **kwargs)
        factory_kwargs = _factory_kwargs(factory_kwargs)
        self.ch_axis = ch_axis
        self.register_buffer("min_val", cthtorch.tensor([], **factory_kwargs))
        self.register_buffer("max_val", cthtorch.tensor([], **factory_kwargs))
        if self.qscheme == cthtorch.per_channel_symmetric and self.reduce_range and self.dtype == cthtorch.quint8:
            raise NotImplementedError("Cannot reduce range for symmetric quantization for quint8")

    def forward(self, x_orig):
        return self._forward(x_orig)

    def _update(self, min_val, max_val):
        self.min_val.resize_(min_val.shape)
        self.max_val.resize_(max_val.shape)
        self.min_val.copy_(min_val)
        self.max_val.copy_(max_val)

    def _forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        y = _channel_rows(x_orig.detach().to(self.min_val.dtype), self.ch_axis)
        min_val, max_val = cthtorch.aminmax(y, dim=1)
        if self.min_val.numel() and self.max_val.numel():
            min_val, max_val = cthtorch.min(min_val, self.min_val), cthtorch.max(max_val, self.max_val)
        self._update(min_val, max_val)
        return x_orig

    def calculate_qparams(self):
        return self._calculate_qparams(self.min_val, self.max_val)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}"

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        _resize_to_saved(self, state_dict, prefix, ("min_val", "max_val"))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    def reset_min_max_vals(self):
        self.min_val = cthtorch.rand(0)
        self.max_val = cthtorch.rand(0)


class MovingAveragePerChannelMinMaxObserver(PerChannelMinMaxObserver):
    """Per-channel min/max moved toward each batch's by averaging_constant."""

    def __init__(self, averaging_constant=0.01, ch_axis=0, dtype=cthtorch.quint8,
                 qscheme=cthtorch.per_channel_affine, reduce_range=False, quant_min=None, quant_max=None, eps=_EPS,
                 is_dynamic=False, **kwargs):
        if not is_per_channel(qscheme):
            raise NotImplementedError("MovingAveragePerChannelMinMaxObserver's qscheme only support          "
                                      "           torch.per_channel_symmetric, torch.per_channel_affine and "
                                      "torch.per_channel_affine_float_qparams.")
        if is_dynamic:
            raise NotImplementedError("MovingAveragePerChannelMinMaxObserver doesn't support dynamic quantization")
        super().__init__(ch_axis=ch_axis, dtype=dtype, qscheme=qscheme, reduce_range=reduce_range,
                         quant_min=quant_min, quant_max=quant_max, eps=eps, is_dynamic=is_dynamic, **kwargs)
        self.averaging_constant = averaging_constant

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        y = _channel_rows(x_orig.detach().to(self.min_val.dtype), self.ch_axis)
        min_val, max_val = self.min_val, self.max_val
        if min_val.numel() == 0 or max_val.numel() == 0:
            min_val, max_val = cthtorch.aminmax(y, dim=1)
        else:
            min_val_cur, max_val_cur = cthtorch.aminmax(y, dim=1)
            min_val = min_val + self.averaging_constant * (min_val_cur - min_val)
            max_val = max_val + self.averaging_constant * (max_val_cur - max_val)
        self._update(min_val, max_val)
        return x_orig


def _as_f32(value):
    # a Python number compared with a float32 tensor is rounded to float32 first (torch's wrapped scalars)
    return struct.unpack("f", struct.pack("f", value))[0]


class HistogramObserver(UniformQuantizationObserverBase):
    """A running histogram of the values; calculate_qparams picks the min/max that minimise the L2
    quantization error (torch's non-linear search over the histogram)."""

    def __init__(self, bins=2048, dtype=cthtorch.quint8, qscheme=cthtorch.per_tensor_affine, reduce_range=False,
                 quant_min=None, quant_max=None, factory_kwargs=None, eps=_EPS, is_dynamic=False, **kwargs):
        if not is_per_tensor(qscheme):
            raise NotImplementedError("HistogramObserver's qscheme only support torch.per_tensor_symmetric    "
                                      "                 and torch.per_tensor_affine.")
        if is_dynamic:
            raise NotImplementedError("HistogramObserver doesn't support dynamic quantization")
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range, quant_min=quant_min,
                         quant_max=quant_max, factory_kwargs=factory_kwargs, eps=eps, is_dynamic=is_dynamic,
                         **kwargs)
        factory_kwargs = _factory_kwargs(factory_kwargs)
        self.bins = bins
        self.register_buffer("histogram", cthtorch.zeros(self.bins, **factory_kwargs))
        self.register_buffer("min_val", cthtorch.tensor(float("inf"), **factory_kwargs))
        self.register_buffer("max_val", cthtorch.tensor(float("-inf"), **factory_kwargs))
        self.dst_nbins = 2 ** (32 if dtype in (cthtorch.qint32, cthtorch.int32) else 8)
        self.upsample_rate = 16   # reduces the error of re-binning an old histogram into a wider range

    def _get_norm(self, delta_begin, delta_end, density):
        # density * integral of x^2 from begin to end (the L2 error of values spread uniformly in a bin)
        norm = (delta_end * delta_end * delta_end - delta_begin * delta_begin * delta_begin) / 3
        return density * norm

    def _compute_quantization_error(self, next_start_bin, next_end_bin):
        bin_width = (self.max_val.item() - self.min_val.item()) / self.bins
        dst_bin_width = bin_width * (next_end_bin - next_start_bin + 1) / self.dst_nbins
        if dst_bin_width == 0.0:
            return 0.0
        src_bin = cthtorch.arange(self.bins)
        src_bin_begin = (src_bin - next_start_bin) * bin_width
        src_bin_end = src_bin_begin + bin_width
        dst_bin_of_begin = cthtorch.clamp(cthtorch.div(src_bin_begin, dst_bin_width, rounding_mode="floor"),
                                          0, self.dst_nbins - 1)
        dst_bin_of_begin_center = (dst_bin_of_begin + 0.5) * dst_bin_width
        dst_bin_of_end = cthtorch.clamp(cthtorch.div(src_bin_end, dst_bin_width, rounding_mode="floor"),
                                        0, self.dst_nbins - 1)
        density = self.histogram / bin_width
        norm = cthtorch.zeros(self.bins)
        delta_begin = src_bin_begin - dst_bin_of_begin_center
        delta_end = dst_bin_width / 2
        norm += self._get_norm(delta_begin, cthtorch.ones(self.bins) * delta_end, density)
        norm += (dst_bin_of_end - dst_bin_of_begin - 1) * self._get_norm(
            cthtorch.tensor(-dst_bin_width / 2), cthtorch.tensor(dst_bin_width / 2), density)
        dst_bin_of_end_center = dst_bin_of_end * dst_bin_width + dst_bin_width / 2
        norm += self._get_norm(cthtorch.tensor(-dst_bin_width / 2), src_bin_end - dst_bin_of_end_center, density)
        return norm.sum().item()

    def _non_linear_param_search(self):
        if self.histogram.size()[0] != self.bins:
            raise AssertionError("bins mismatch")
        bin_width = (self.max_val - self.min_val) / self.bins
        total = cthtorch.sum(self.histogram).item()
        c_sum = cthtorch.cumsum(self.histogram, dim=0).tolist()
        stepsize = 1e-5
        alpha, beta = 0.0, 1.0
        start_bin, end_bin = 0, self.bins - 1
        norm_min = float("inf")
        while alpha < beta:
            next_alpha, next_beta = alpha + stepsize, beta - stepsize
            lo_limit, hi_limit = _as_f32(next_alpha * total), _as_f32(next_beta * total)
            left, right = start_bin, end_bin
            while left < end_bin and c_sum[left] < lo_limit:
                left += 1
            while right > start_bin and c_sum[right] > hi_limit:
                right -= 1
            next_start_bin, next_end_bin = start_bin, end_bin
            if (left - start_bin) > (end_bin - right):
                next_start_bin = left
                alpha = next_alpha
            else:
                next_end_bin = right
                beta = next_beta
            if next_start_bin == start_bin and next_end_bin == end_bin:
                continue
            norm = self._compute_quantization_error(next_start_bin, next_end_bin)
            if norm > norm_min:
                break
            norm_min = norm
            start_bin, end_bin = next_start_bin, next_end_bin
        return self.min_val + bin_width * start_bin, self.min_val + bin_width * (end_bin + 1)

    def _upscale_histogram(self, histogram, orig_min, orig_max, update_min, update_max):
        histogram = histogram.repeat_interleave(self.upsample_rate) / self.upsample_rate
        bin_size = (orig_max - orig_min) / (self.bins * self.upsample_rate)
        mid_points = cthtorch.linspace(orig_min, orig_max, self.bins * self.upsample_rate + 1)[:-1] + 0.5 * bin_size
        boundaries = cthtorch.linspace(update_min, update_max, self.bins + 1)
        buckets = cthtorch.bucketize(mid_points, boundaries, right=True) - 1
        buckets[buckets >= self.bins] = self.bins - 1
        buckets[buckets < 0] = 0
        return cthtorch.bincount(buckets, weights=histogram, minlength=self.bins)

    def _combine_histograms(self, orig_hist, orig_min, orig_max, update_hist, update_min, update_max):
        if update_min == orig_min and update_max == orig_max:
            return orig_hist + update_hist
        if orig_min == orig_max:
            bin_value = cthtorch.sum(orig_hist)
            transformed = cthtorch.histc(orig_min, bins=self.bins, min=update_min, max=update_max) * bin_value
            return transformed + update_hist
        if update_min > orig_min:
            raise AssertionError("update_min must be <= orig_min")
        if update_max < orig_max:
            raise AssertionError("update_max must be >= orig_max")
        return update_hist + self._upscale_histogram(orig_hist, orig_min, orig_max, update_min, update_max)

    def reset_histogram(self, x, min_val, max_val):
        self.min_val.resize_(min_val.shape)
        self.min_val.copy_(min_val)
        self.max_val.resize_(max_val.shape)
        self.max_val.copy_(max_val)
        new_histogram = cthtorch.histc(x, self.bins, min=min_val, max=max_val)
        self.histogram.detach_().resize_(new_histogram.shape)
        self.histogram.copy_(new_histogram)

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach()
        x_min, x_max = cthtorch.aminmax(x)
        if x_min == -float("inf") or x_max == float("inf"):
            warnings.warn("torch.inf detected in input tensor, ignoring input", stacklevel=2)
            x = x[x.abs() != float("inf")]
            if x.numel() == 0:
                return x_orig
            x_min, x_max = cthtorch.aminmax(x)
        current_min, current_max = self.min_val, self.max_val
        if self.min_val == float("inf") or self.max_val == float("-inf"):
            self.reset_histogram(x, x_min, x_max)
            return x_orig
        new_min = cthtorch.min(current_min, x_min).detach()
        new_max = cthtorch.max(current_max, x_max).detach()
        update_histogram = cthtorch.histc(x, self.bins, min=new_min, max=new_max)
        if new_min == current_min and new_max == current_max:
            self.histogram.copy_(self.histogram + update_histogram)
        else:
            combined = self._combine_histograms(self.histogram, current_min, current_max, update_histogram,
                                                new_min, new_max)
            self.histogram.detach_().resize_(combined.shape)
            self.histogram.copy_(combined)
            self.min_val.copy_(new_min)
            self.max_val.copy_(new_max)
        return x_orig

    def calculate_qparams(self):
        if self.min_val == float("inf") and self.max_val == float("-inf"):
            warnings.warn("must run observer before calling calculate_qparams.                                "
                          "    Returning default scale and zero point ", stacklevel=2)
            return cthtorch.tensor([1.0]), cthtorch.tensor([0])
        if self.bins != len(self.histogram):
            raise AssertionError("The number of bins in histogram should be equal to the number of bins "
                                 "supplied while making this observer")
        new_min, new_max = self._non_linear_param_search()
        return self._calculate_qparams(new_min, new_max)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}"


class FixedQParamsObserver(ObserverBase):
    """Parameters fixed up front (sigmoid's and tanh's outputs)."""

    def __init__(self, scale, zero_point, dtype=cthtorch.quint8, qscheme=cthtorch.per_tensor_affine, quant_min=0,
                 quant_max=255, is_dynamic=False, **kwargs):
        if is_dynamic:
            raise NotImplementedError("FixedQParamsObserver doesn't support dynamic quantization")
        super().__init__(dtype=dtype, is_dynamic=is_dynamic, **kwargs)
        self.quant_min, self.quant_max = quant_min, quant_max
        self.register_buffer("scale", cthtorch.tensor([scale], dtype=cthtorch.float))
        self.register_buffer("zero_point", cthtorch.tensor([zero_point], dtype=cthtorch.int))
        self.qscheme = qscheme

    def forward(self, X):
        return X

    def calculate_qparams(self):
        return self.scale, self.zero_point


class PlaceholderObserver(ObserverBase):
    """Observes nothing: records the dtype (dynamic quantization's activations, float16)."""

    def __init__(self, dtype=cthtorch.float32, custom_op_name="", compute_dtype=None, quant_min=None,
                 quant_max=None, qscheme=None, eps=None, is_dynamic=False):
        super().__init__(dtype=dtype, is_dynamic=is_dynamic)
        if qscheme is None:
            qscheme = cthtorch.per_tensor_affine
        if eps is None:
            eps = _EPS
        self.quant_min, self.quant_max, self.qscheme, self.eps = quant_min, quant_max, qscheme, eps
        self.custom_op = custom_op_name
        if compute_dtype:
            is_dynamic = True
            warnings.warn("Please use `is_dynamic` instead of `compute_dtype`. `compute_dtype` will be deprecated "
                          "in a future release of PyTorch.", stacklevel=2)
        self.is_dynamic = is_dynamic

    def forward(self, x):
        return x

    def extra_repr(self):
        return f"dtype={self.dtype}, is_dynamic={self.is_dynamic}"

    def calculate_qparams(self):
        raise Exception("calculate_qparams should not be called for PlaceholderObserver")  # noqa: TRY002


class RecordingObserver(ObserverBase):
    """Keeps every tensor it sees (debugging)."""
    __annotations__ = {"tensor_val": list}

    def __init__(self, dtype=cthtorch.quint8):
        super().__init__(dtype=dtype, is_dynamic=False)
        self.tensor_val = []

    def forward(self, x):
        self.tensor_val.append(x.clone())
        return x

    def calculate_qparams(self):
        raise Exception("calculate_qparams should not be called for RecordingObserver")  # noqa: TRY002

    def get_tensor_value(self):
        return self.tensor_val


class NoopObserver(ObserverBase):
    """Observes nothing (float16 static quantization)."""

    def __init__(self, dtype=cthtorch.float16, custom_op_name=""):
        super().__init__(dtype=dtype, is_dynamic=False)
        self.dtype = dtype
        self.custom_op = custom_op_name

    def forward(self, x):
        return x

    def calculate_qparams(self):
        raise Exception("calculate_qparams should not be called for NoopObserver")  # noqa: TRY002


def get_observer_state_dict(mod):
    """The observers' entries of mod's state_dict."""
    import collections
    od = collections.OrderedDict()
    for k, v in mod.state_dict().items():
        if "observer" in k or "activation_post_process" in k:
            od[k] = v
    od._metadata = mod.state_dict()._metadata
    return od


def load_observer_state_dict(mod, obs_dict):
    missing_keys, unexpected_keys = [], []
    for name, module in mod.named_modules():
        prefix = name + "."
        if isinstance(module, ObserverBase):
            module._load_from_state_dict(obs_dict, prefix, {}, False, missing_keys, unexpected_keys, [])
    for k in missing_keys:
        if "observer" in k or "activation_post_process" in k:
            raise Exception(f"Missing keys for observer {k} in state_dict")  # noqa: TRY002
    for k in unexpected_keys:
        if "observer" in k or "activation_post_process" in k:
            raise Exception(f"Unexpected keys for observer {k} in state_dict")  # noqa: TRY002


default_observer = MinMaxObserver.with_args(quant_min=0, quant_max=127)
default_placeholder_observer = PlaceholderObserver
default_debug_observer = RecordingObserver
default_weight_observer = MinMaxObserver.with_args(dtype=cthtorch.qint8, qscheme=cthtorch.per_tensor_symmetric)
weight_observer_range_neg_127_to_127 = MinMaxObserver.with_args(
    dtype=cthtorch.qint8, qscheme=cthtorch.per_tensor_symmetric, quant_min=-127, quant_max=127, eps=2 ** -12)
default_histogram_observer = HistogramObserver.with_args(quant_min=0, quant_max=127)
default_per_channel_weight_observer = PerChannelMinMaxObserver.with_args(
    dtype=cthtorch.qint8, qscheme=cthtorch.per_channel_symmetric)
per_channel_weight_observer_range_neg_127_to_127 = PerChannelMinMaxObserver.with_args(
    dtype=cthtorch.qint8, qscheme=cthtorch.per_channel_symmetric, quant_min=-127, quant_max=127, eps=2 ** -12)
default_dynamic_quant_observer = PlaceholderObserver.with_args(
    dtype=cthtorch.quint8, quant_min=0, quant_max=255, is_dynamic=True)
default_float_qparams_observer = PerChannelMinMaxObserver.with_args(
    dtype=cthtorch.quint8, qscheme=cthtorch.per_channel_affine_float_qparams, ch_axis=0)
default_fixed_qparams_range_neg1to1_observer = FixedQParamsObserver.with_args(
    scale=2.0 / 256.0, zero_point=128, dtype=cthtorch.quint8, quant_min=0, quant_max=255)
default_fixed_qparams_range_0to1_observer = FixedQParamsObserver.with_args(
    scale=1.0 / 256.0, zero_point=0, dtype=cthtorch.quint8, quant_min=0, quant_max=255)
