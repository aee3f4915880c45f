"""torch.backends.cuda: the CUDA switches a program reads or sets.

matmul.allow_tf32 is the float32 matmul precision setting (off by default, as in
PyTorch); its friends are plain flags. The scaled_dot_product_attention switches (enable_flash_sdp ...) are
the same state torch.nn.attention.sdpa_kernel narrows, so either way of
turning a backend off is seen by the CPU kernels too, as in PyTorch."""
import contextlib
import warnings

from ..nn import attention as _attention
from ..nn.attention import SDPBackend  # noqa: F401

__all__ = ["is_built", "cuFFTPlanCacheAttrContextProp", "cuFFTPlanCache", "cuFFTPlanCacheManager", "cuBLASModule",
           "preferred_linalg_library", "preferred_blas_library", "cufft_plan_cache", "matmul", "SDPBackend",
           "SDPAParams", "enable_cudnn_sdp", "cudnn_sdp_enabled", "enable_flash_sdp", "flash_sdp_enabled",
           "enable_mem_efficient_sdp", "mem_efficient_sdp_enabled", "math_sdp_enabled", "enable_math_sdp",
           "can_use_flash_attention", "can_use_efficient_attention", "can_use_cudnn_attention", "sdp_kernel",
           "is_flash_attention_available"]


def is_built():
    """Whether cthtorch was built with CUDA: libTHC is compiled wherever nvcc was found at build time."""
    import os
    from .. import cuda
    return os.path.exists(cuda._lib_path)


class cuBLASModule:
    """torch.backends.cuda.matmul: allow_tf32, the reduced-precision reductions (True), fp16 accumulation
    (False); any other name is refused as torch refuses it. allow_tf32 is torch.get_float32_matmul_precision()
    seen as a flag, as torch's: True unless 'highest'; setting it sets the precision to 'high' or 'highest'."""
    _defaults = {"allow_fp16_reduced_precision_reduction": True,
                 "allow_bf16_reduced_precision_reduction": True, "allow_fp16_accumulation": False}

    def __init__(self):
        self.__dict__.update(self._defaults)

    def __getattr__(self, name):
        if name == "allow_tf32":
            from .._ops.tensor_api import get_float32_matmul_precision
            return get_float32_matmul_precision() != "highest"
        raise AttributeError("Unknown attribute " + name)

    def __setattr__(self, name, value):
        if name == "allow_tf32":
            from .._ops.tensor_api import set_float32_matmul_precision
            return set_float32_matmul_precision("high" if value else "highest")
        if name not in self._defaults:
            raise AttributeError("Unknown attribute " + name)
        self.__dict__[name] = value


class cuFFTPlanCache:
    """cuFFT's plan cache of one device: size/max_size/clear(). cthtorch's GPU FFT keeps no plans, so it is empty."""

    def __init__(self, device_index):
        self.device_index = device_index
        self.max_size = 4096

    @property
    def size(self):
        return 0

    def clear(self):
        pass


class cuFFTPlanCacheManager:
    def __init__(self):
        self.caches = {}

    def __getitem__(self, device):
        from .. import cuda
        index = cuda._index(device)
        return self.caches.setdefault(index, cuFFTPlanCache(index))

    def __getattr__(self, name):
        return getattr(self[None], name)

    def __setattr__(self, name, value):
        if name == "caches":
            object.__setattr__(self, name, value)
        else:
            setattr(self[None], name, value)


cuFFTPlanCacheAttrContextProp = property
matmul = cuBLASModule()
cufft_plan_cache = cuFFTPlanCacheManager()

_linalg = ["default"]
_blas = ["cublas"]


def preferred_linalg_library(backend=None):
    """The linear-algebra library GPU linalg ops prefer: 'default', 'cusolver' or 'magma' (a flag here: cthtorch's
    GPU linalg has one implementation)."""
    if backend is not None:
        name = backend.lower() if isinstance(backend, str) else str(backend)
        if name not in ("default", "cusolver", "magma"):
            raise RuntimeError("Unknown input value. Choose from: default, cusolver, magma.")
        _linalg[0] = name
    return _linalg[0]


def preferred_blas_library(backend=None):
    if backend is not None:
        name = backend.lower() if isinstance(backend, str) else str(backend)
        if name not in ("default", "cublas", "cublaslt", "ck"):
            raise RuntimeError("Unknown input value. Choose from: cublas, cublaslt, ck, default.")
        _blas[0] = "cublas" if name == "default" else name
    return _blas[0]


def _flag(backend):
    return backend in _attention._enabled


def _set(backend, enabled):
    _attention._enabled = (_attention._enabled | {backend}) if enabled else (_attention._enabled - {backend})


def flash_sdp_enabled():
    return _flag(SDPBackend.FLASH_ATTENTION)


def enable_flash_sdp(enabled):
    _set(SDPBackend.FLASH_ATTENTION, enabled)


def mem_efficient_sdp_enabled():
    return _flag(SDPBackend.EFFICIENT_ATTENTION)


def enable_mem_efficient_sdp(enabled):
    _set(SDPBackend.EFFICIENT_ATTENTION, enabled)


def math_sdp_enabled():
    return _flag(SDPBackend.MATH)


def enable_math_sdp(enabled):
    _set(SDPBackend.MATH, enabled)


def cudnn_sdp_enabled():
    return _flag(SDPBackend.CUDNN_ATTENTION)


def enable_cudnn_sdp(enabled):
    _set(SDPBackend.CUDNN_ATTENTION, enabled)


_fp16_bf16_math = [False]


def fp16_bf16_reduction_math_sdp_allowed():
    return _fp16_bf16_math[0]


def allow_fp16_bf16_reduction_math_sdp(enabled):
    _fp16_bf16_math[0] = bool(enabled)


def is_flash_attention_available():
    """Whether a GPU flash-attention kernel was built: cthtorch's GPU attention is the math composite."""
    return False


class SDPAParams:
    def __init__(self, query, key, value, attn_mask=None, dropout=0.0, is_causal=False, enable_gqa=False):
        self.query, self.key, self.value = query, key, value
        self.attn_mask, self.dropout, self.is_causal, self.enable_gqa = attn_mask, dropout, is_causal, enable_gqa


def _no_gpu_kernel(params, debug, what):
    if debug:
        warnings.warn("%s requires a CUDA kernel that cthtorch does not build" % what)
    return False


def can_use_flash_attention(params, debug=False):
    return _no_gpu_kernel(params, debug, "Flash attention")


def can_use_efficient_attention(params, debug=False):
    return _no_gpu_kernel(params, debug, "Memory efficient attention")


def can_use_cudnn_attention(params, debug=False):
    return _no_gpu_kernel(params, debug, "cuDNN attention")


@contextlib.contextmanager
def sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True, enable_cudnn=True):
    """Deprecated in torch for torch.nn.attention.sdpa_kernel, which it calls with the backends left on."""
    warnings.warn("`torch.backends.cuda.sdp_kernel()` is deprecated. In the future, this context manager will be "
                  "removed. Please see `torch.nn.attention.sdpa_kernel()` for the new context manager, with updated "
                  "signature.", FutureWarning, stacklevel=3)
    chosen = [b for b, on in ((SDPBackend.CUDNN_ATTENTION, enable_cudnn), (SDPBackend.FLASH_ATTENTION, enable_flash),
                              (SDPBackend.EFFICIENT_ATTENTION, enable_mem_efficient), (SDPBackend.MATH, enable_math))
              if on]
    with _attention.sdpa_kernel(chosen):
        yield
