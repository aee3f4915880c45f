"""torch.__config__: how this build was made, as text (environment reports such as collect_env and
detectron2's print show() and parallel_info()). The lines describe cthtorch itself, in torch's layout."""
import os

import cthtorch

__all__ = ["show", "parallel_info"]


def show():
    """A human-readable description of this build's configuration."""
    return ("PyTorch built with:\n"
            "  - cthtorch C CPU kernels (TH/ATen), C11\n"
            "  - OpenBLAS (scipy-openblas32) for BLAS and LAPACK\n"
            "  - OpenMP\n"
            "  - LAPACK is enabled (usually provided by OpenBLAS)\n"
            "  - Build settings: BLAS_INFO=open, LAPACK_INFO=open, TORCH_VERSION=%s, USE_CUDA=0, USE_CUDNN=OFF, "
            "USE_MKL=OFF, USE_MKLDNN=OFF, USE_MPI=OFF, USE_NCCL=OFF, USE_OPENMP=ON, USE_ROCM=OFF, USE_XPU=OFF, \n"
            % cthtorch.__version__.split("+")[0])


def _cxx_flags():
    return ""


def parallel_info():
    """The thread settings, as torch's report lays them out."""
    env = "".join("\t%s : %s\n" % (k, os.environ.get(k, "[not set]")) for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"))
    return ("ATen/Parallel:\n"
            "\tat::get_num_threads() : %d\n"
            "\tat::get_num_interop_threads() : %d\n"
            "OpenMP\n"
            "\tomp_get_max_threads() : %d\n"
            "std::thread::hardware_concurrency() : %d\n"
            "Environment variables:\n%s"
            "ATen parallel backend: OpenMP\n"
            % (cthtorch.get_num_threads(), cthtorch.get_num_interop_threads(), cthtorch.get_num_threads(),
               os.cpu_count() or 1, env))
