"""torch.backends: switches a program may read or set. Only the CPU backend
exists here; the CUDA/cuDNN/MPS ones report unavailable, and their flags are
plain attributes so programs that set them (cudnn.benchmark = True) run."""
import types as _types

from . import cudnn, mps  # noqa: F401


class _Flags(_types.SimpleNamespace):
    pass


mkldnn = _Flags(is_available=lambda: False, enabled=False)
mkl = _Flags(is_available=lambda: False)
openmp = _Flags(is_available=lambda: True)
cuda = _Flags(is_built=lambda: False,
              matmul=_Flags(allow_tf32=False, allow_fp16_reduced_precision_reduction=True,
                            allow_bf16_reduced_precision_reduction=True),
              flash_sdp_enabled=lambda: False, mem_efficient_sdp_enabled=lambda: False,
              math_sdp_enabled=lambda: True)
cpu = _Flags(get_cpu_capability=lambda: "AVX2")
opt_einsum = _Flags(is_available=lambda: False, enabled=False, strategy=None)
