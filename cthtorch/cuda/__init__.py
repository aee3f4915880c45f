"""cthtorch.cuda: GPUs through libTHC (src/THC), loaded on first use.

libTHC is built where nvcc exists and loaded only when a program asks for
CUDA, so the same build imports on machines without a GPU. The CUDA
libraries it needs beyond the driver (cuBLAS, cuDNN) come from the pip nvidia-*
packages or the system toolkit, found here and loaded before it."""

import os as _os
import sys as _sys

from .. import _C

_lib_path = _os.path.join(_os.path.dirname(_os.path.dirname(_os.path.abspath(__file__))), "lib", "libTHC.so")
_init_error = None
_NO_GPU = ("CUDA is not available: cthtorch has no GPU on this machine (cthtorch.cuda.is_available() is False). "
           "Use device='cpu'.")


def _nvidia_lib_dirs():
    """lib folders of the pip nvidia-* packages (nvidia/<name>/lib), then the toolkit's."""
    import glob as _glob
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
    import ctypes as _ctypes
    import glob as _glob
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
    # cuDNN's loader library (libcudnn.so.9) opens its sub-libraries from its own folder
    _preload(["libcublasLt.so*", "libcublas.so*", "libcudnn.so*"])
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
    return _C._cuda._is_initialized()


# ---- devices ----
def current_device():
    return _C._cuda._current_device()


def set_device(device):
    """Makes `device` current (new tensors with device='cuda' land there). Negative: no-op, as torch."""
    if isinstance(device, int) and device < 0:
        return
    _C._cuda._set_device(device)


def _index(device):
    """A device argument (None, int, 'cuda:1', torch.device) as an index; None: the current one."""
    if device is None:
        return current_device()
    if isinstance(device, int):
        return current_device() if device < 0 else device
    import cthtorch
    d = cthtorch.device(device)
    if d.type != "cuda":
        raise ValueError("Expected a cuda device, but got: %s" % d)
    return current_device() if d.index is None else d.index


class device:
    """Context manager that makes `device` current inside the block; None/-1 is a no-op."""

    def __init__(self, device):
        self.idx = -1 if device is None else (device if isinstance(device, int) else _index(device))
        self.prev_idx = -1

    def __enter__(self):
        if self.idx != -1:
            self.prev_idx = current_device()
            if self.prev_idx != self.idx:
                set_device(self.idx)
        return self

    def __exit__(self, *exc):
        if self.idx != -1 and self.prev_idx != self.idx:
            set_device(self.prev_idx)
        return False


class device_of(device):
    """device(t.get_device()): the block runs on the tensor's GPU (no-op for CPU tensors)."""

    def __init__(self, obj):
        super().__init__(obj.get_device() if obj.is_cuda else -1)


def synchronize(device=None):
    """Waits for every kernel queued on the device; reports an earlier asynchronous kernel error."""
    _C._cuda._synchronize(device)


class _CudaDeviceProperties:
    """torch.cuda.get_device_properties(): name, total_memory (bytes), major/minor
    (compute capability), multi_processor_count, ..."""

    def __init__(self, props):
        self.__dict__.update(props)

    def __repr__(self):
        return ("_CudaDeviceProperties(name='%s', major=%d, minor=%d, total_memory=%dMB, multi_processor_count=%d, "
                "L2_cache_size=%dMB)" % (self.name, self.major, self.minor, self.total_memory // (1 << 20),
                                        self.multi_processor_count, self.L2_cache_size // (1 << 20)))


def get_device_properties(device=None):
    return _CudaDeviceProperties(_C._cuda._device_props(_index(device)))


def get_device_name(device=None):
    return get_device_properties(device).name


def get_device_capability(device=None):
    p = get_device_properties(device)
    return (p.major, p.minor)


def get_arch_list():
    return ["sm_90"] if is_available() else []   # what setup.py builds libTHC for (and compute_80 PTX)


def is_bf16_supported(including_emulation=True):
    """bfloat16 runs natively from compute capability 8.0 (Ampere)."""
    if not is_available():
        return False
    return get_device_capability()[0] >= 8 or bool(including_emulation)


# ---- random numbers ----
# cthtorch generates the random numbers of CUDA tensors on the host (the
# factory runs there and the result moves to the GPU), from the default CPU
# generator. So seeding "CUDA" seeds that generator: torch.cuda.manual_seed(s)
# makes CUDA random tensors reproducible, and also resets the CPU stream
# (torch.manual_seed(s) seeds both anyway). Without a GPU, as torch, seeding
# CUDA does nothing.
def manual_seed(seed):
    """Seeds the CUDA generator (Philox, drawn on the device). Lazy as torch's:
    it needs no GPU and takes effect on the first CUDA random draw."""
    _C._cuda._manual_seed(int(seed))


manual_seed_all = manual_seed


def seed():
    import random as _pyrandom
    manual_seed(_pyrandom.getrandbits(64))


seed_all = seed


def initial_seed():
    _lazy_init()
    return _C._cuda._initial_seed()


def get_rng_state(device="cuda"):
    """The CUDA generator's state: 16 bytes, its seed and offset (as torch's)."""
    _lazy_init()
    import struct
    import cthtorch
    return cthtorch.tensor(list(struct.pack("<QQ", *_C._cuda._get_rng_state())), dtype=cthtorch.uint8)


def set_rng_state(new_state, device="cuda"):
    _lazy_init()
    import struct
    b = bytes(int(v) & 0xFF for v in new_state.tolist())
    if len(b) != 16:
        raise RuntimeError("RNG state must be 16 bytes (seed and offset), got %d" % len(b))
    _C._cuda._set_rng_state(*struct.unpack("<QQ", b))


def get_rng_state_all():
    return [get_rng_state(i) for i in range(device_count() or 1)]


def set_rng_state_all(new_states):
    for s in new_states:
        set_rng_state(s)


def ipc_collect():
    _lazy_init()


# ---- streams and events ----
from .streams import Stream, ExternalStream, Event  # noqa: E402


def current_stream(device=None):
    """The stream kernels are queued on now (the legacy default stream, cuda_stream 0, unless set)."""
    _lazy_init()
    return Stream._borrow(_C._cuda._current_stream(), _index(device))


def default_stream(device=None):
    _lazy_init()
    return Stream._borrow(0, _index(device))


def set_stream(stream):
    if stream is not None:
        _C._cuda._set_stream(stream.cuda_stream)


class StreamContext:
    """Queues the block's kernels on `stream` (None: no-op), restoring the previous stream after."""

    def __init__(self, stream):
        self.stream = stream
        self.prev = None

    def __enter__(self):
        if self.stream is not None:
            self.prev = current_stream()
            set_stream(self.stream)
        return self.stream

    def __exit__(self, *exc):
        if self.stream is not None:
            set_stream(self.prev)
        return False


def stream(stream):
    return StreamContext(stream)


# ---- memory ----
from .memory import (memory_stats, memory_allocated, max_memory_allocated, memory_reserved,  # noqa: E402
                     max_memory_reserved, memory_cached, max_memory_cached, reset_peak_memory_stats,
                     reset_max_memory_allocated, reset_max_memory_cached, reset_accumulated_memory_stats,
                     empty_cache, mem_get_info, memory_summary)


# ---- legacy typed constructors: torch.cuda.FloatTensor(2, 3), isinstance(x, torch.cuda.FloatTensor) ----
class _CudaLegacyMeta(type):
    def __instancecheck__(cls, obj):
        import cthtorch
        return isinstance(obj, cthtorch.Tensor) and obj.is_cuda and obj.dtype == cls.dtype and not obj.is_sparse

    def __subclasscheck__(cls, sub):
        return sub is cls


def _legacy_type(name, dtype_name):
    def __new__(cls, *args, **kwargs):
        if not is_available():
            raise TypeError("type torch.cuda.%s not available. Torch not compiled with CUDA enabled." % name)
        import cthtorch
        dt = getattr(cthtorch, dtype_name)
        dev = kwargs.get("device", "cuda")
        if len(args) == 1 and not isinstance(args[0], int) and not isinstance(args[0], cthtorch.Size):
            data = args[0]
            if isinstance(data, cthtorch.Tensor):
                return data.to(device=dev, dtype=dt)
            return cthtorch.tensor(data, dtype=dt, device=dev)
        return cthtorch.empty(*(args or (0,)), dtype=dt, device=dev)
    import cthtorch
    return _CudaLegacyMeta(name, (object,), {"__new__": __new__, "dtype": getattr(cthtorch, dtype_name),
                                             "__module__": "cthtorch.cuda"})


FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor = (_legacy_type(n, d) for n, d in (
    ("FloatTensor", "float32"), ("DoubleTensor", "float64"), ("HalfTensor", "float16"),
    ("BFloat16Tensor", "bfloat16")))
LongTensor, IntTensor, ShortTensor, CharTensor, ByteTensor, BoolTensor = (_legacy_type(n, d) for n, d in (
    ("LongTensor", "int64"), ("IntTensor", "int32"), ("ShortTensor", "int16"), ("CharTensor", "int8"),
    ("ByteTensor", "uint8"), ("BoolTensor", "bool")))


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
