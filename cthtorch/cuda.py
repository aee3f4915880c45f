"""cthtorch.cuda on a machine without a GPU: nothing is available, and
asking for a CUDA tensor raises a clear error (from _C's device parsing)."""


import ctypes as _ctypes
import os as _os

_lib = None


def _thc():
    """libTHC (built where nvcc exists) or None; loading it never fails loudly."""
    global _lib
    if _lib is None:
        path = _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "lib", "libTHC.so")
        try:
            _lib = _ctypes.CDLL(path)
        except OSError:
            _lib = False
    return _lib or None


def device_count():
    lib = _thc()
    return int(lib.THC_deviceCount()) if lib else 0


def is_available():
    """True only with THC built and a GPU present. Tensors stay on the CPU here:
    cthtorch's ops run on THC only when both hold (never on these machines)."""
    return device_count() > 0


def is_initialized():
    return False


def manual_seed(seed):
    pass


def manual_seed_all(seed):
    pass


def empty_cache():
    pass


def _no_gpu(*args, **kwargs):
    raise RuntimeError("CUDA is not available: cthtorch has no GPU on this machine "
                       "(cthtorch.cuda.is_available() is False)")


# anything that needs a device fails as torch does without one
current_device = get_device_name = get_device_properties = get_device_capability = _no_gpu
synchronize = set_device = get_rng_state = set_rng_state = get_rng_state_all = set_rng_state_all = _no_gpu
ipc_collect = current_stream = default_stream = set_stream = _no_gpu


class _NoGpuClass:
    def __init__(self, *args, **kwargs):
        _no_gpu()


Event = Stream = _NoGpuClass


class device:
    """Context manager selecting a CUDA device: -1/None (no device) is a no-op."""

    def __init__(self, device):
        self.idx = device

    def __enter__(self):
        if self.idx not in (None, -1):
            _no_gpu()
        return self

    def __exit__(self, *exc):
        return False


def is_bf16_supported(including_emulation=True):
    return False


# memory statistics read 0 before CUDA is initialised, as in torch
def memory_allocated(device=None):
    return 0


max_memory_allocated = memory_reserved = max_memory_reserved = memory_cached = max_memory_cached = memory_allocated


def reset_peak_memory_stats(device=None):
    pass


reset_max_memory_allocated = reset_accumulated_memory_stats = reset_peak_memory_stats


def memory_stats(device=None):
    return {}


def memory_summary(device=None, abbreviated=False):
    return "No CUDA device is available (cthtorch runs on the CPU here)."


def _not_compiled(name):
    def make(*args, **kwargs):
        raise TypeError("type torch.cuda.%s not available. Torch not compiled with CUDA enabled." % name)
    return make


FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor = (_not_compiled(n) for n in (
    "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor"))
LongTensor, IntTensor, ShortTensor, CharTensor, ByteTensor, BoolTensor = (_not_compiled(n) for n in (
    "LongTensor", "IntTensor", "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor"))


# torch.cuda.amp (deprecated aliases of cthtorch.amp); registered in sys.modules
# so `from torch.cuda.amp import autocast` works although cuda is a module
from cthtorch.amp import cuda_amp as amp  # noqa: E402
import sys as _sys  # noqa: E402
_sys.modules[__name__ + ".amp"] = amp


def __getattr__(name):
    if name == "OutOfMemoryError":   # torch.cuda.OutOfMemoryError is torch.OutOfMemoryError
        import cthtorch
        return cthtorch.OutOfMemoryError
    raise AttributeError("module 'cthtorch.cuda' has no attribute '%s'" % name)
