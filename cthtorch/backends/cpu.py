"""torch.backends.cpu: the vector instruction set the CPU kernels use."""
import functools

__all__ = ["get_cpu_capability"]


@functools.lru_cache(None)
def get_cpu_capability():
    """'AVX512', 'AVX2' or 'DEFAULT', from the CPU's flags (cthtorch picks its AVX2/AVX-512 kernels at run time the
    same way)."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    except OSError:
        return "DEFAULT"
    if all(f in flags for f in ("avx512f", "avx512bw", "avx512vl", "avx512dq")):
        return "AVX512"
    return "AVX2" if "avx2" in flags and "fma" in flags else "DEFAULT"
