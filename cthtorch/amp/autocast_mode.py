"""autocast: the state (per device type, per thread) that torch keeps, with
torch's argument checks and warnings.

The CUDA and CPU states reach the dispatch point (src/python/Bindings.c),
which casts the tensor arguments of the ops declared `autocast:` (CUDA) or
`autocast_cpu:` (CPU) in src/ATen/declarations, so matmul, linear and conv
give the autocast dtype as torch's do; the ops of torch's CPU lists that are
written in Python cast through the decorators of _cpu_policy. Other device types
keep only the state."""
import functools
import threading
import warnings

import cthtorch
from cthtorch import _C
from cthtorch.amp import _cpu_policy

__all__ = ["autocast", "custom_fwd", "custom_bwd", "is_autocast_available"]

_DEVICES = ("cpu", "cuda", "xpu", "mps", "hpu", "xla", "mtia", "ipu", "privateuseone")
_local = threading.local()


def _state():
    st = getattr(_local, "st", None)
    if st is None:
        st = _local.st = {"enabled": {}, "dtype": {}, "cache": True, "nesting": 0}
    return st


def _sync_cuda():
    """Hands the CUDA autocast state to the dispatch point, which casts the
    arguments of the ops declared `autocast:` (src/ATen/declarations)."""
    st = _state()
    _C._cuda._set_autocast(bool(st["enabled"].get("cuda", False)), st["dtype"].get("cuda", cthtorch.float16))


def _sync_cpu():
    st = _state()
    on, dtype = bool(st["enabled"].get("cpu", False)), st["dtype"].get("cpu", cthtorch.bfloat16)
    _C._set_autocast_cpu(on, dtype)
    _cpu_policy._local.dtype = dtype if on else None


def _sync(device_type):
    if device_type == "cuda":
        _sync_cuda()
    elif device_type == "cpu":
        _sync_cpu()


def _default_dtype(device_type):
    return cthtorch.bfloat16 if device_type in ("cpu", "mps", "xla", "hpu") else cthtorch.float16


def is_autocast_available(device_type):
    return device_type in _DEVICES


def _check_device(device_type):
    if not is_autocast_available(device_type):
        raise RuntimeError("unsupported autocast device_type '%s'" % device_type)


def is_autocast_enabled(device_type=None):
    return bool(_state()["enabled"].get(device_type or "cuda", False))


def set_autocast_enabled(device_type, enabled=None):
    if enabled is None:   # the old one-argument form sets the CUDA state
        device_type, enabled = "cuda", device_type
    _check_device(device_type)
    _state()["enabled"][device_type] = bool(enabled)
    _sync(device_type)


def get_autocast_dtype(device_type):
    _check_device(device_type)
    return _state()["dtype"].get(device_type, _default_dtype(device_type))


def set_autocast_dtype(device_type, dtype):
    _check_device(device_type)
    _state()["dtype"][device_type] = dtype
    _sync(device_type)


def is_autocast_cpu_enabled():
    return is_autocast_enabled("cpu")


def get_autocast_cpu_dtype():
    return get_autocast_dtype("cpu")


def get_autocast_gpu_dtype():
    return get_autocast_dtype("cuda")


def _deprecated_setter(old, new):
    warnings.warn("torch.%s is deprecated. Please use torch.%s instead." % (old, new), DeprecationWarning,
                  stacklevel=3)


def set_autocast_cpu_enabled(enabled):
    _deprecated_setter("set_autocast_cpu_enabled(enabled)", "set_autocast_enabled('cpu', enabled)")
    set_autocast_enabled("cpu", enabled)


def set_autocast_cpu_dtype(dtype):
    _deprecated_setter("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)")
    set_autocast_dtype("cpu", dtype)


def set_autocast_gpu_dtype(dtype):
    _deprecated_setter("set_autocast_gpu_dtype(dtype)", "set_autocast_dtype('cuda', dtype)")
    set_autocast_dtype("cuda", dtype)


def is_autocast_cache_enabled():
    return _state()["cache"]


def set_autocast_cache_enabled(enabled):
    _state()["cache"] = bool(enabled)


def clear_autocast_cache():
    pass   # nothing is cached: no casts are made


def autocast_increment_nesting():
    _state()["nesting"] += 1
    return _state()["nesting"]


def autocast_decrement_nesting():
    _state()["nesting"] -= 1
    return _state()["nesting"]


class autocast:
    """Context manager / decorator marking a mixed-precision region (see the module docstring)."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError("Expected `device_type` of type `str`, got: `%s`" % type(device_type))
        self.device = device_type
        if not is_autocast_available(device_type):
            raise RuntimeError("User specified an unsupported autocast device_type '%s'" % device_type)
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self._cache_enabled = is_autocast_cache_enabled() if cache_enabled is None else cache_enabled
        supported = [cthtorch.bfloat16, cthtorch.float16]
        if enabled:
            if device_type == "cuda":
                if not cthtorch.cuda.is_available():
                    warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.", stacklevel=2)
                    enabled = False
            elif self.fast_dtype not in supported:
                name = device_type.upper()
                warnings.warn("In %s autocast, but the target dtype is not supported. Disabling autocast.\n%s Autocast "
                              "only supports dtypes of %s currently." % (name, name, ", ".join(map(str, supported))),
                              stacklevel=2)
                enabled = False
        self._enabled = enabled

    def __enter__(self):
        self.prev_cache_enabled = is_autocast_cache_enabled()
        self.prev = is_autocast_enabled(self.device)
        self.prev_fastdtype = get_autocast_dtype(self.device)
        set_autocast_enabled(self.device, self._enabled)
        set_autocast_dtype(self.device, self.fast_dtype)
        autocast_increment_nesting()
        set_autocast_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, *args):
        autocast_decrement_nesting()
        set_autocast_enabled(self.device, self.prev)
        set_autocast_dtype(self.device, self.prev_fastdtype)
        set_autocast_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return wrapper


def _cast(value, dtype):
    if isinstance(value, cthtorch.Tensor):
        return value.to(dtype) if value.is_floating_point() else value
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, dtype) for v in value)
    if isinstance(value, dict):
        return {k: _cast(v, dtype) for k, v in value.items()}
    return value


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorator for a custom Function's forward: with cast_inputs, inside an enabled autocast
    region floating inputs are cast to it and forward runs with autocast off."""
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        ctx = args[0]
        ctx._dtype = get_autocast_dtype(device_type)
        ctx._fwd_used_autocast = is_autocast_enabled(device_type)
        if cast_inputs is None or not ctx._fwd_used_autocast:
            return fwd(*args, **kwargs)
        with autocast(device_type=device_type, enabled=False):
            return fwd(*_cast(args, cast_inputs), **_cast(kwargs, cast_inputs))
    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """Decorator for a custom Function's backward: runs it with forward's autocast state."""
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        ctx = args[0]
        with autocast(device_type=device_type, enabled=getattr(ctx, "_fwd_used_autocast", False),
                      dtype=getattr(ctx, "_dtype", None)):
            return bwd(*args, **kwargs)
    return decorate_bwd
