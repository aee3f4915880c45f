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


def synchronize(device=None):
    pass


def empty_cache():
    pass


def current_device():
    raise RuntimeError("CUDA is not available: cthtorch has no GPU on this machine "
                       "(cthtorch.cuda.is_available() is False)")


def get_device_name(device=None):
    current_device()


# torch.cuda.amp (deprecated aliases of cthtorch.amp); registered in sys.modules
# so `from torch.cuda.amp import autocast` works although cuda is a module
from cthtorch.amp import cuda_amp as amp  # noqa: E402
import sys as _sys  # noqa: E402
_sys.modules[__name__ + ".amp"] = amp
