"""The deprecated per-device spellings torch.cuda.amp.{autocast, GradScaler}
and torch.cpu.amp.{autocast, GradScaler}: thin subclasses of the cthtorch.amp
classes that fix the device and give torch's FutureWarning."""
import warnings

import cthtorch
from cthtorch.amp import autocast_mode as _am
from cthtorch.amp import grad_scaler as _gs


def _deprecated(device, what):
    warnings.warn("`torch.%s.amp.%s(args...)` is deprecated. Please use `torch.amp.%s('%s', args...)` instead."
                  % (device, what, what, device), FutureWarning, stacklevel=3)


def make(device, default_dtype):
    """(autocast, GradScaler) classes for torch.<device>.amp."""

    class autocast(_am.autocast):
        def __init__(self, enabled=True, dtype=None, cache_enabled=True):
            _deprecated(device, "autocast")
            super().__init__(device, enabled=enabled, dtype=default_dtype if dtype is None else dtype,
                             cache_enabled=cache_enabled)

    class GradScaler(_gs.GradScaler):
        def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                     enabled=True):
            _deprecated(device, "GradScaler")
            super().__init__(device, init_scale=init_scale, growth_factor=growth_factor,
                             backoff_factor=backoff_factor, growth_interval=growth_interval, enabled=enabled)

    for cls in (autocast, GradScaler):
        cls.__module__ = "cthtorch.%s.amp" % device
        cls.__qualname__ = cls.__name__
    return autocast, GradScaler


cpu_autocast, cpu_GradScaler = make("cpu", cthtorch.bfloat16)
