"""torch.backends: switches a program may read or set. Only the CPU backend
exists here; the CUDA/cuDNN/MPS ones report unavailable unless libTHC was
built, and their flags are plain attributes so programs that set them
(cudnn.benchmark = True) run. Each is a submodule, as in torch, imported on
first use."""
import importlib as _importlib

__all__ = ["cpu", "cuda", "cudnn", "mha", "mkl", "mkldnn", "mps", "openmp", "opt_einsum", "quantized"]


def __getattr__(name):
    if name in __all__:
        return _importlib.import_module("." + name, __name__)
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
