"""torch.cuda.amp: the deprecated CUDA spellings of autocast, GradScaler,
custom_fwd/custom_bwd, forwarding to cthtorch.amp with torch's FutureWarnings."""
import functools
import warnings

import cthtorch
from cthtorch.amp import autocast_mode as _am
from cthtorch.amp import _device_amp


def amp_definitely_not_available():
    return not cthtorch.cuda.is_available()


autocast, GradScaler = _device_amp.make("cuda", cthtorch.float16)


def custom_fwd(fwd=None, *, cast_inputs=None):
    warnings.warn("`torch.cuda.amp.custom_fwd(args...)` is deprecated. Please use `torch.amp.custom_fwd(args..., "
                  "device_type='cuda')` instead.", FutureWarning, stacklevel=2)
    return functools.partial(_am.custom_fwd, device_type="cuda")(fwd=fwd, cast_inputs=cast_inputs)


def custom_bwd(bwd):
    warnings.warn("`torch.cuda.amp.custom_bwd(args...)` is deprecated. Please use `torch.amp.custom_bwd(args..., "
                  "device_type='cuda')` instead.", FutureWarning, stacklevel=2)
    return functools.partial(_am.custom_bwd, device_type="cuda")(bwd)
