"""cthtorch: PyTorch's classic architecture, written by hand.

`import cthtorch as torch` gives the names a PyTorch program uses. The ops
live in the C extension cthtorch._C (TH kernels -> ATen -> THP bindings);
this package adds the Python-level API on top, as torch/__init__.py does.
"""
import math as _math
import os as _os
import sys as _sys
import warnings as _warnings

# cthtorch threads GEMMs itself (one OpenMP pool), so its OpenBLAS needs no
# thread pool of its own: two pools oversubscribed the cores (with libgomp's
# default spin-wait, conv/matmul steps ran ~10x slower on 2 cores). OpenBLAS
# reads the variable once, when it loads; it is put back afterwards so a numpy
# imported later keeps its own default.
_blas_env = _os.environ.get("OPENBLAS_NUM_THREADS")
_os.environ["OPENBLAS_NUM_THREADS"] = "1"
try:
    from . import _C
finally:
    if _blas_env is None:
        del _os.environ["OPENBLAS_NUM_THREADS"]
    else:
        _os.environ["OPENBLAS_NUM_THREADS"] = _blas_env
from ._C import (  # noqa: F401
    Size, dtype, device, layout, memory_format, Generator, default_generator,
    get_default_dtype, is_grad_enabled, set_num_threads, get_num_threads,
    promote_types, can_cast, result_type, is_anomaly_enabled,
    strided, contiguous_format, preserve_format, channels_last, channels_last_3d,
    sparse_coo, sparse_csr, sparse_csc, sparse_bsr, sparse_bsc, _mkldnn, jagged,
)

# dtypes, by their PyTorch names (torch.float32, torch.float, torch.long ...)
for _name in ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
              "float64", "float", "double", "half", "long", "int", "short", "complex64", "complex128", "cfloat",
              "cdouble"):
    globals()[_name] = getattr(_C, _name)
del _name
from ._dtype_info import _UnimplementedDtype, _unimplemented_dtypes  # noqa: E402
globals().update(_unimplemented_dtypes())   # complex32, uint16..64, float8, quantized: named, not computed
_C._set_unimplemented_dtype(_UnimplementedDtype)

# torch.<op> functions: every public static method of _VariableFunctions
for _name in dir(_C._VariableFunctions):
    if _name.startswith("__"):
        continue
    _obj = getattr(_C._VariableFunctions, _name)
    if not _name.startswith("_") or _name in ("_to_copy",):
        globals()[_name] = _obj
    else:
        globals()[_name] = _obj
del _name, _obj

from ._tensor import Tensor  # noqa: E402
_C._set_tensor_class(Tensor)
from ._legacy import (  # noqa: E402,F401
    FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, LongTensor, IntTensor, ShortTensor,
    CharTensor, ByteTensor, BoolTensor,
)
from . import return_types  # noqa: E402,F401
# the op registry (cthtorch/_ops): every public op that is not a generated
# binding is registered there once, under the namespace it is public in
from . import _ops  # noqa: E402
_ops.bind("torch", globals())
_ops.bind("Tensor", Tensor)
_ops.bind("_nn", _C._nn)
from ._ops import nn as _ops_nn, shape as _ops_shape, torch_api as _ops_torch_api, linalg as _ops_linalg  # noqa: E402
from ._ops import complex as _ops_complex, spectral as _ops_spectral  # noqa: E402,F401
from ._ops import transformer as _ops_transformer  # noqa: E402
from . import _sparse_factory  # noqa: E402
for _m in (_ops_nn, _ops_shape, _ops_torch_api, _ops_linalg, _ops_transformer, _sparse_factory):
    _m.register()
del _m
from . import functional as _functional  # noqa: E402
for _name in ("broadcast_shapes", "meshgrid", "atleast_1d", "atleast_2d", "atleast_3d", "cartesian_prod", "block_diag",
              "unravel_index", "tensordot", "chain_matmul", "unique"):
    _ops.op("torch", _name, getattr(_functional, _name), "cthtorch.functional")
from . import _fake_quantize  # noqa: E402
for _name in _fake_quantize.__all__:   # composites of declared ops, with the straight-through gradient
    _ops.op("torch", _name, getattr(_fake_quantize, _name), "cthtorch._fake_quantize")
# picks the outputs asked for from the binding's (values, inverse, counts)
_ops.extend("torch", "unique_consecutive", _functional.unique_consecutive, "cthtorch.functional")
from ._random import (  # noqa: E402,F401
    manual_seed, seed, initial_seed, get_rng_state, set_rng_state,
)
from . import _random  # noqa: E402
from . import _copyreg  # noqa: E402,F401  (plain pickle of device/Size/Generator)
_ops.extend("torch", "normal", _random.normal, "cthtorch._random")   # adds normal(float, float, size)
from . import autograd  # noqa: E402
from .autograd import no_grad, enable_grad, set_grad_enabled, inference_mode  # noqa: E402,F401
from ._C import is_anomaly_check_nan_enabled, _set_anomaly_enabled as set_anomaly_enabled  # noqa: E402,F401

from . import cuda  # noqa: E402,F401
from ._dtype_info import finfo, iinfo  # noqa: E402,F401
from ._tensor_str import set_printoptions, get_printoptions, printoptions  # noqa: E402,F401

e = _math.e
pi = _math.pi
inf = _math.inf
nan = _math.nan
newaxis = None

from . import version  # noqa: E402
from .utils.dlpack import from_dlpack, to_dlpack  # noqa: E402,F401
from ._control_flow import cond, while_loop  # noqa: E402,F401
from ._symbolic import (  # noqa: E402,F401
    sym_int, sym_float, sym_max, sym_min, sym_not, sym_sqrt, sym_ite, sym_sum)
from .torch_version import TorchVersion as _TorchVersion  # noqa: E402
from . import jit  # noqa: E402,F401  (installs torch._C.Graph and the JIT types; light)
__version__ = _TorchVersion(version.__version__)


def set_default_dtype(d):
    """Sets the dtype of new floating-point tensors (float32 or float64)."""
    _C._set_default_dtype(d)


_warned_default_tensor_type = []


def set_default_tensor_type(t):
    """Deprecated in PyTorch (warned once, as torch's C++ warning); accepts the CPU float types (a type or
    its name)."""
    if not _warned_default_tensor_type:
        _warned_default_tensor_type.append(True)
        import warnings
        warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                      "torch.set_default_dtype() and torch.set_default_device() as alternatives.")
    name = t if isinstance(t, str) else getattr(t, "__name__", str(t))
    name = name.split(".")[-1]
    if "cuda" in str(t):
        raise TypeError("type %s not available. Torch not compiled with CUDA enabled." % t)
    table = {"FloatTensor": float32, "DoubleTensor": float64, "HalfTensor": float16, "BFloat16Tensor": bfloat16}
    if name not in table:
        raise TypeError("only floating-point types are supported as the default type")
    set_default_dtype(table[name])


def is_inference_mode_enabled():
    from .autograd import grad_mode
    return grad_mode.is_inference_mode_enabled()


def is_storage(obj):
    from .storage import TypedStorage
    return type(obj) in (TypedStorage, _C.UntypedStorage)


def typename(obj):
    if isinstance(obj, Tensor):
        return obj.type()
    return type(obj).__name__


# what this build has: LAPACK (from OpenBLAS) and OpenMP; no MKL, and no spectral (FFT) ops on real data
has_lapack = True
has_openmp = True
has_mkl = False
has_spectral = False


class OutOfMemoryError(RuntimeError):
    """torch.OutOfMemoryError (also torch.cuda.OutOfMemoryError): an accelerator ran out of memory."""


class AcceleratorError(RuntimeError):
    """torch.AcceleratorError: an error reported by an accelerator runtime."""


def is_vulkan_available():
    return False


def init_num_threads():
    """Nothing to do: the OpenMP pool starts on first use."""


def get_device_module(device=None):
    """The module for a device type (cthtorch.cpu, cthtorch.cuda, ...); None means the current
    accelerator's, which is the CPU's here."""
    if device is None:
        name = "cpu"
    elif isinstance(device, str):
        name = device if device in ("cpu", "cuda", "mps", "xpu", "mtia") else _C.device(device).type
    else:
        name = device.type
    return _lazy(name) if name != "cuda" else cuda


_dynamo_patched = False
_COMPILE_MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None,
            disable=False, **kwargs):
    """No compiler here: a function comes back unchanged and runs eagerly; a module comes back wrapped in
    torch's OptimizedModule (its `_orig_mod`, which it runs eagerly), with torch's checks of mode/options."""
    if model is None:
        def fn(model):
            if model is None:
                raise RuntimeError("Model can't be None")
            return compile(model, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                           options=options, disable=disable, **kwargs)
        return fn
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same time.")
    if mode is not None and mode not in _COMPILE_MODES:
        raise RuntimeError("Unrecognized mode=%s, should be one of: %s" % (mode, ", ".join(_COMPILE_MODES)))
    from cthtorch.nn import Module
    if disable:
        return model
    # torch's dynamo patches torch once, when it first compiles (TorchPatcher.patch): distributions stop
    # validating their arguments by default, process-wide, for compiled and eager code alike
    global _dynamo_patched
    if not _dynamo_patched:
        _dynamo_patched = True
        from cthtorch.distributions import Distribution
        Distribution.set_default_validate_args(False)
    if not isinstance(model, Module):
        return model
    from cthtorch._dynamo.eval_frame import OptimizedModule, OptimizeContext
    return OptimizedModule(model, OptimizeContext(backend, mode=mode or "default", options=options,
                                                  fullgraph=fullgraph, dynamic=dynamic))


_NN_ALIASES = frozenset((
    "adaptive_avg_pool1d", "adaptive_max_pool1d", "avg_pool1d", "max_pool1d", "max_pool2d", "max_pool3d",
    "max_pool1d_with_indices", "conv1d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "cosine_similarity", "pairwise_distance", "pdist", "pixel_shuffle", "pixel_unshuffle", "channel_shuffle",
    "hardshrink", "bilinear", "rms_norm", "rrelu_", "native_channel_shuffle"))


_TORCH_FUNCTIONAL = frozenset((
    "kl_div", "margin_ranking_loss", "triplet_margin_loss", "poisson_nll_loss", "hinge_embedding_loss",
    "cosine_embedding_loss", "instance_norm", "native_dropout",
    "grid_sampler", "lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell", "feature_alpha_dropout",
    "feature_alpha_dropout_", "alpha_dropout_", "feature_dropout_", "ctc_loss", "get_device",
    "binomial", "affine_grid_generator", "norm_except_dim", "segment_reduce",
    "lstm", "gru", "rnn_tanh", "rnn_relu", "embedding_renorm_"))
_REMOVED_OPS = frozenset(("matrix_rank", "eig", "symeig", "lstsq", "solve"))


_QUANTIZATION = frozenset((
    "qscheme", "per_tensor_affine", "per_channel_affine", "per_tensor_symmetric", "per_channel_symmetric",
    "per_channel_affine_float_qparams", "quantize_per_tensor", "quantize_per_channel", "dequantize",
    "quantize_per_tensor_dynamic"))


def _lazy(name):
    import importlib
    return importlib.import_module("." + name, __name__)


# torch.autocast and the autocast state functions (cthtorch.amp.autocast_mode)
_AUTOCAST_STATE = ("is_autocast_enabled", "set_autocast_enabled", "get_autocast_dtype", "set_autocast_dtype",
                   "is_autocast_cpu_enabled", "get_autocast_cpu_dtype", "get_autocast_gpu_dtype",
                   "is_autocast_cache_enabled", "set_autocast_cache_enabled", "clear_autocast_cache",
                   "autocast_increment_nesting", "autocast_decrement_nesting", "set_autocast_cpu_enabled",
                   "set_autocast_cpu_dtype", "set_autocast_gpu_dtype")


def __getattr__(name):
    # subpackages load on first use (import cthtorch stays fast)
    if name in ("nn", "optim", "utils", "vision", "linalg", "special", "fft", "multiprocessing",
                "distributed", "jit", "testing", "backends", "hub", "onnx", "distributions", "amp", "random", "accelerator", "cpu",
                "func", "xpu", "mps", "mtia", "compiler", "sparse", "serialization", "fx", "overrides", "futures",
                "__future__", "signal", "masked", "nested", "types", "_dynamo", "_inductor", "library", "_logging",
                "quasirandom", "ao", "quantization"):
        try:
            mod = _lazy(name)
        except ModuleNotFoundError as e:
            if e.name != __name__ + "." + name:
                raise
            raise AttributeError("module 'cthtorch' has no attribute '%s'" % name) from None
        globals()[name] = mod
        return mod
    if name in _QUANTIZATION:   # loaded on first use: a quantized tensor's type makes every op ask it
        from . import _qscheme, _quantized_tensor
        if name in _qscheme.__all__:
            globals()[name] = getattr(_qscheme, name)
            return globals()[name]
        # registered composites, as every public function (installed here by the registry)
        return _ops.op("torch", name, getattr(_quantized_tensor, name), "cthtorch._quantized_tensor")
    if name in ("svd_lowrank", "pca_lowrank"):
        fn = getattr(_lazy("_lowrank"), name)
        globals()[name] = fn
        return fn
    if name == "vmap":   # torch.vmap is torch.func.vmap
        fn = _lazy("func").vmap
        globals()[name] = fn
        return fn
    if name in _NN_ALIASES:   # torch.max_pool2d and friends: the nn.functional op
        import cthtorch.nn.functional as F
        fn = getattr(F, name)
        if _ops.is_op(fn):
            globals()[name] = fn
            return fn
        return _ops.op("torch", name, fn, "cthtorch.nn.functional")
    if name in _REMOVED_OPS:   # torch.eig and co.: torch's "removed in 1.9" RuntimeError
        from . import _removed_ops
        return getattr(_removed_ops, name)
    if name in _TORCH_FUNCTIONAL:   # torch.kl_div and friends: ATen signatures over nn.functional
        from . import _torch_functional
        return _ops.op("torch", name, getattr(_torch_functional, name), "cthtorch._torch_functional")
    if name.endswith("Storage") and name not in ("TypedStorage", "UntypedStorage"):
        from . import _legacy_storage
        if name in _legacy_storage.NAMES:
            return getattr(_legacy_storage, name)
    if name in ("TypedStorage", "UntypedStorage"):
        from . import storage
        return storage.TypedStorage if name == "TypedStorage" else _C.UntypedStorage
    if name in ("save", "load"):
        from . import serialization
        return getattr(serialization, name)
    if name in ("profiler", "__config__"):
        return _lazy(name)
    if name == "ops":   # torch.ops.aten.<op>.<overload>, torch.ops.profiler, load_library
        from ._ops.overloads import ops
        globals()["ops"] = ops
        return ops
    if name == "GradScaler":   # torch.GradScaler is torch.amp.GradScaler
        return _lazy("amp").GradScaler
    if name == "autocast" or name in _AUTOCAST_STATE:
        from .amp import autocast_mode
        return getattr(autocast_mode, name)
    raise AttributeError("module 'cthtorch' has no attribute '%s'" % name)
