"""cthtorch.cuda: GPUs through libTHC (src/THC), loaded on first use.

libTHC is built where nvcc exists and loaded only when a program asks for
CUDA, so the same build imports on machines without a GPU. The CUDA
libraries it needs beyond the driver (cuBLAS) come from the pip nvidia-*
packages or the system toolkit, found here and loaded before it."""

import ctypes as _ctypes
import glob as _glob
import os as _os
import sys as _sys

from .. import _C

_lib_path = _os.path.join(_os.path.dirname(_os.path.dirname(_os.path.abspath(__file__))), "lib", "libTHC.so")
_init_error = None
_NO_GPU = ("CUDA is not available: cthtorch has no GPU on this machine (cthtorch.cuda.is_available() is False). "
           "Use device='cpu'.")


def _nvidia_lib_dirs():
    """lib folders of the pip nvidia-* packages (nvidia/<name>/lib), then the toolkit's."""
    dirs = []
    for p in _sys.path:
        dirs += sorted(_glob.glob(_os.path.join(p, "nvidia", "*", "lib")))
        dirs += sorted(_glob.glob(_os.path.join(p, "nvidia", "cu*", "lib")))
    for home in (_os.environ.get("CUDA_HOME", ""), "/usr/local/cuda"):
        if home:
            dirs += [_os.path.join(home, "lib64")]
    return [d for d in dirs if _os.path.isdir(d)]


def _preload(names):
    """Loads the first library matching each pattern, globally, so libTHC's
    dlopen of it (cuBLAS) finds it by soname."""
    for pat in names:
        for d in _nvidia_lib_dirs():
            hits = sorted(_glob.glob(_os.path.join(d, pat)))
            if hits:
                try:
                    _ctypes.CDLL(hits[-1], mode=_ctypes.RTLD_GLOBAL)
                    break
                except OSError:
                    continue


def _lazy_init():
    """Loads libTHC and routes CUDA tensors to it; raises where that cannot be."""
    global _init_error
    if _C._cuda._is_initialized():
        return
    if _init_error is not None:
        raise RuntimeError(_init_error)
    if not _os.path.exists(_lib_path):
        _init_error = _NO_GPU + " (libTHC was not built: no nvcc when cthtorch was built)"
        raise RuntimeError(_init_error)
    _preload(["libcublasLt.so*", "libcublas.so*"])
    try:
        _C._cuda._register(_lib_path)
    except (OSError, RuntimeError) as e:
        _init_error = "%s (%s)" % (_NO_GPU, e)
        raise RuntimeError(_init_error) from None


def init():
    _lazy_init()


def device_count():
    try:
        _lazy_init()
    except RuntimeError:
        return 0
    return _C._cuda._device_count()


def is_available():
    """True with libTHC built and a GPU present."""
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
