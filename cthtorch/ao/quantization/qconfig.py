"""QConfig (torch.ao.quantization.qconfig): which observer / fake-quantize factories prepare() attaches to
a layer's activations and weights, and the per-backend defaults."""
import warnings
from collections import namedtuple

import cthtorch
from cthtorch import nn
from cthtorch.ao.quantization.observer import (
    HistogramObserver, MinMaxObserver, NoopObserver, PlaceholderObserver, default_debug_observer,
    default_dynamic_quant_observer, default_float_qparams_observer, default_observer,
    default_per_channel_weight_observer, default_placeholder_observer, default_weight_observer,
    per_channel_weight_observer_range_neg_127_to_127, weight_observer_range_neg_127_to_127)
from cthtorch.ao.quantization.fake_quantize import (
    FakeQuantize, FusedMovingAvgObsFakeQuantize, default_dynamic_fake_quant, default_embedding_fake_quant,
    default_fake_quant, default_fused_act_fake_quant, default_fused_per_channel_wt_fake_quant,
    default_fused_wt_fake_quant, default_per_channel_weight_fake_quant, default_weight_fake_quant,
    fused_per_channel_wt_fake_quant_range_neg_127_to_127, fused_wt_fake_quant_range_neg_127_to_127)
from cthtorch.ao.quantization.observer import MovingAverageMinMaxObserver

__all__ = ["QConfig", "QConfigDynamic", "QConfigAny", "default_qconfig", "default_debug_qconfig",
           "default_per_channel_qconfig", "default_dynamic_qconfig", "float16_dynamic_qconfig",
           "float16_static_qconfig", "per_channel_dynamic_qconfig", "float_qparams_weight_only_qconfig",
           "default_qat_qconfig", "default_dynamic_qat_qconfig", "default_weight_only_qconfig",
           "default_activation_only_qconfig", "default_qat_qconfig_v2", "get_default_qconfig",
           "get_default_qat_qconfig", "default_symmetric_qnnpack_qconfig",
           "default_per_channel_symmetric_qnnpack_qconfig", "default_embedding_qat_qconfig",
           "default_quint8_weight_qconfig", "default_symmetric_qnnpack_qat_qconfig",
           "default_per_channel_symmetric_qnnpack_qat_qconfig", "qconfig_equals"]

_BACKENDS = ["fbgemm", "x86", "qnnpack", "onednn"]


class QConfig(namedtuple("QConfig", ["activation", "weight"])):
    """Observer factories (classes or with_args partials, not instances) for activations and weights."""
    __slots__ = ()

    def __new__(cls, activation, weight):
        if isinstance(activation, nn.Module) or isinstance(weight, nn.Module):
            raise ValueError("QConfig received observer instance, please pass observer class instead. "
                             "Use MyObserver.with_args(x=1) to override arguments to constructor if needed")
        return super().__new__(cls, activation, weight)


class QConfigDynamic(namedtuple("QConfigDynamic", ["activation", "weight"])):
    """QConfig's deprecated twin for dynamic quantization."""
    __slots__ = ()

    def __new__(cls, activation=nn.Identity, weight=nn.Identity):
        warnings.warn("`QConfigDynamic` is going to be deprecated in PyTorch 1.12, please use `QConfig` instead",
                      FutureWarning, stacklevel=2)
        if isinstance(weight, nn.Module):
            raise ValueError("QConfigDynamic received observer instance, please pass observer class instead. "
                             "Use MyObserver.with_args(x=1) to override arguments to constructor if needed")
        return super().__new__(cls, activation, weight)


QConfigAny = QConfig   # torch's Optional[QConfig] alias, as a name programs annotate with

default_qconfig = QConfig(activation=default_observer, weight=default_weight_observer)
default_debug_qconfig = QConfig(weight=default_weight_observer, activation=default_debug_observer)
default_per_channel_qconfig = QConfig(activation=default_observer, weight=default_per_channel_weight_observer)
default_dynamic_qconfig = QConfig(activation=default_dynamic_quant_observer, weight=default_weight_observer)
float16_dynamic_qconfig = QConfig(activation=PlaceholderObserver.with_args(dtype=cthtorch.float16, is_dynamic=True),
                                  weight=PlaceholderObserver.with_args(dtype=cthtorch.float16))
float16_static_qconfig = QConfig(activation=PlaceholderObserver.with_args(dtype=cthtorch.float16),
                                 weight=PlaceholderObserver.with_args(dtype=cthtorch.float16))
per_channel_dynamic_qconfig = QConfig(activation=default_dynamic_quant_observer,
                                      weight=default_per_channel_weight_observer)
float_qparams_weight_only_qconfig = QConfig(activation=default_placeholder_observer,
                                            weight=default_float_qparams_observer)
default_qat_qconfig = QConfig(activation=default_fake_quant, weight=default_weight_fake_quant)
default_dynamic_qat_qconfig = QConfig(activation=default_dynamic_fake_quant, weight=default_weight_fake_quant)
default_weight_only_qconfig = QConfig(activation=nn.Identity, weight=default_weight_fake_quant)
default_activation_only_qconfig = QConfig(activation=default_fake_quant, weight=nn.Identity)
default_qat_qconfig_v2 = QConfig(activation=default_fused_act_fake_quant, weight=default_fused_wt_fake_quant)
default_symmetric_qnnpack_qconfig = QConfig(
    activation=HistogramObserver.with_args(dtype=cthtorch.qint8, reduce_range=False, eps=2 ** -12),
    weight=weight_observer_range_neg_127_to_127)
default_per_channel_symmetric_qnnpack_qconfig = QConfig(
    activation=HistogramObserver.with_args(dtype=cthtorch.qint8, reduce_range=False, eps=2 ** -12),
    weight=per_channel_weight_observer_range_neg_127_to_127)
default_embedding_qat_qconfig = QConfig(activation=NoopObserver.with_args(dtype=cthtorch.float32),
                                        weight=default_embedding_fake_quant)
default_quint8_weight_qconfig = QConfig(activation=HistogramObserver, weight=MinMaxObserver)
_SYMMETRIC_QAT_ACT = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver, quant_min=-128, quant_max=127, dtype=cthtorch.qint8, reduce_range=False,
    eps=2 ** -12)
default_symmetric_qnnpack_qat_qconfig = QConfig(activation=_SYMMETRIC_QAT_ACT,
                                                weight=fused_wt_fake_quant_range_neg_127_to_127)
default_per_channel_symmetric_qnnpack_qat_qconfig = QConfig(
    activation=_SYMMETRIC_QAT_ACT, weight=fused_per_channel_wt_fake_quant_range_neg_127_to_127)


def _check_backend(backend):
    if backend not in _BACKENDS:
        raise AssertionError("backend: " + str(backend) + f" not supported. backend must be one of {_BACKENDS}")


def get_default_qconfig(backend="x86", version=0):
    """The post-training qconfig torch recommends for backend: histogram activations (7-bit on x86/fbgemm)
    and per-channel symmetric weights (per-tensor on qnnpack)."""
    _check_backend(backend)
    if version != 0:
        raise AssertionError("Version number: " + str(version)
                             + " in get_default_qconfig is not supported. Version number must be 0")
    if backend == "qnnpack":
        return QConfig(activation=HistogramObserver.with_args(reduce_range=False), weight=default_weight_observer)
    if backend == "onednn":
        return QConfig(activation=HistogramObserver.with_args(reduce_range=False),
                       weight=default_per_channel_weight_observer)
    return QConfig(activation=HistogramObserver.with_args(reduce_range=True),
                   weight=default_per_channel_weight_observer)


def get_default_qat_qconfig(backend="x86", version=1):
    """The quantization-aware-training qconfig torch recommends for backend (version 1: fused observers)."""
    _check_backend(backend)
    if version not in (0, 1):
        raise AssertionError("Version number: " + str(version)
                             + "in get_default_qat_qconfig is not supported. Version number must be 0 or 1")
    fq = FakeQuantize if version == 0 else FusedMovingAvgObsFakeQuantize
    kwargs = dict(observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255)
    if backend != "onednn":
        kwargs["reduce_range"] = backend != "qnnpack"
    if backend == "qnnpack":
        weight = default_weight_fake_quant if version == 0 else default_fused_wt_fake_quant
    else:
        weight = default_per_channel_weight_fake_quant if version == 0 else default_fused_per_channel_wt_fake_quant
    return QConfig(activation=fq.with_args(**kwargs), weight=weight)


def _partial_wrapper_equals(obs_or_fq1, obs_or_fq2):
    if hasattr(obs_or_fq1, "p") and hasattr(obs_or_fq2, "p"):
        p1, p2 = obs_or_fq1.p, obs_or_fq2.p
        return p1.func == p2.func and p1.args == p2.args and p1.keywords == p2.keywords
    return obs_or_fq1 == obs_or_fq2


def qconfig_equals(q1, q2):
    """Whether two qconfigs build the same observers (their partials compared by function and arguments)."""
    if q1 is None or q2 is None:
        return q1 == q2
    return _partial_wrapper_equals(q1.activation, q2.activation) and _partial_wrapper_equals(q1.weight, q2.weight)
