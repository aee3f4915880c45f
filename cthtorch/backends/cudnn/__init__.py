"""torch.backends.cudnn: the switches of cuDNN, which libTHC opens at run time
(src/THC/THCCudnn.cu) for GPU convolutions and batch norm.

The flags live in libATen (every convolution reads them), so they can be set
before CUDA is initialised, as in PyTorch:
  enabled        use cuDNN where it takes the call (else libTHC's own kernels)
  benchmark      time every algorithm once per shape (cudnnFind*Ex) and keep the
                 fastest; otherwise cuDNN's heuristics pick
  deterministic  only deterministic algorithms (also on under
                 torch.use_deterministic_algorithms(True), as in PyTorch)
  allow_tf32     float32 convolutions may use TF32 tensor cores (PyTorch's
                 default for cuDNN is True, unlike matmul's)
"""
import sys as _sys
import types as _types
import warnings as _warnings

from ... import _C

_flags = {"enabled": True, "benchmark": False, "deterministic": False, "allow_tf32": True}
_limit = [10]
_version = []          # [int or None] once asked


def _push():
    """Hands the flags to libATen; deterministic also follows use_deterministic_algorithms."""
    from ..._ops import tensor_api as _api
    det = _flags["deterministic"] or _api.are_deterministic_algorithms_enabled()
    _C._cuda._set_cudnn_flags(_flags["enabled"], _flags["benchmark"], det, _flags["allow_tf32"])


def _init():
    if not _version:
        try:
            from ... import cuda
            cuda._lazy_init()
            _version.append(_C._cuda._cudnn_version())
        except RuntimeError:
            _version.append(None)
    return _version[0] is not None


def version():
    """cuDNN's version as an int (9.28.1 is 92801), or None where it cannot be loaded."""
    if not _init():
        return None
    return _version[0]


# the dtypes is_acceptable() admits, as torch's (cthtorch is initialised: backends loads lazily)
CUDNN_TENSOR_DTYPES = {_C.float16, _C.float32, _C.float64}


def is_available():
    """True where a GPU is present and libcudnn loads (this build has no compiled-in cuDNN: it opens it at run time)."""
    return _init()


def is_acceptable(tensor):
    if not _flags["enabled"]:
        return False
    if tensor.device.type != "cuda" or tensor.dtype not in CUDNN_TENSOR_DTYPES:
        return False
    if not is_available():
        _warnings.warn("cuDNN/MIOpen library not found. Check your LD_LIBRARY_PATH", stacklevel=2)
        return False
    return True


def set_flags(_enabled=None, _benchmark=None, _benchmark_limit=None, _deterministic=None, _allow_tf32=None,
              _fp32_precision="none", _depthwise_kernel=None):
    """Sets the given flags (None leaves one as it is); returns the previous ones for set_flags(*orig)."""
    orig = (_flags["enabled"], _flags["benchmark"], _limit[0], _flags["deterministic"],
            _flags["allow_tf32"])
    for key, val in (("enabled", _enabled), ("benchmark", _benchmark), ("deterministic", _deterministic),
                     ("allow_tf32", _allow_tf32)):
        if val is not None:
            _flags[key] = bool(val)
    if _benchmark_limit is not None:
        _limit[0] = int(_benchmark_limit)
    _push()
    return orig


class flags:
    """Context manager: the flags for its block (torch's defaults: enabled=False), restored after."""

    def __init__(self, enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True,
                 fp32_precision="none", depthwise_kernel="auto"):
        self._new = (enabled, benchmark, benchmark_limit, deterministic, allow_tf32)

    def __enter__(self):
        self._old = set_flags(*self._new)

    def __exit__(self, *exc):
        set_flags(*self._old)
        return False


def _flag(name):
    def get(self):
        return _flags[name]

    def put(self, value):
        _flags[name] = bool(value)
        _push()
    return property(get, put)


class _CudnnModule(_types.ModuleType):
    """Setting torch.backends.cudnn.<flag> reaches libATen, as PyTorch's ContextProp does."""
    enabled = _flag("enabled")
    benchmark = _flag("benchmark")
    deterministic = _flag("deterministic")
    allow_tf32 = _flag("allow_tf32")

    @property
    def benchmark_limit(self):
        # None where cuDNN is absent, as torch's
        return _limit[0] if is_available() else None

    @benchmark_limit.setter
    def benchmark_limit(self, value):
        # cuDNN's Find*Ex here times every algorithm; the limit is kept for programs that read it back
        _limit[0] = int(value)


_sys.modules[__name__].__class__ = _CudnnModule
