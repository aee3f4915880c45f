"""torch._C._profiler: the profiler's configuration types. Programs build an
_ExperimentalConfig for profile(experimental_config=...) and compare against
ProfilerActivity (torch.profiler's enum is this one). Only CPU activity is
recorded here, so the Kineto options are kept as given and change nothing."""
import enum

__all__ = ["ProfilerActivity", "ProfilerState", "_ExperimentalConfig"]


class ProfilerActivity(enum.Enum):
    CPU = 0
    CUDA = 2
    XPU = 3
    MTIA = 4
    PrivateUse1 = 5


class ProfilerState(enum.Enum):
    Disabled = 0
    CPU = 1
    CUDA = 2
    NVTX = 3
    ITT = 4
    PRIVATEUSE1 = 5
    KINETO = 6
    KINETO_GPU_FALLBACK = 7
    KINETO_PRIVATEUSE1_FALLBACK = 8
    KINETO_ONDEMAND = 9


class _ExperimentalConfig:
    """An experimental config for Kineto features (torch's keyword arguments and defaults)."""

    _defaults = (("profiler_metrics", []), ("profiler_measure_per_kernel", False), ("verbose", False),
                 ("performance_events", []), ("enable_cuda_sync_events", False), ("adjust_profiler_step", False),
                 ("disable_external_correlation", False), ("profile_all_threads", False),
                 ("capture_overload_names", False), ("record_python_gc_info", False),
                 ("expose_kineto_event_metadata", False), ("custom_profiler_config", ""),
                 ("adjust_timestamps", False), ("trace_only", False))

    def __init__(self, *args, **kwargs):
        names = [n for n, _ in self._defaults]
        if len(args) > len(names) or any(k not in names for k in kwargs):
            raise TypeError("__init__(): incompatible constructor arguments")
        for (n, d), v in zip(self._defaults, args):
            kwargs.setdefault(n, v)
        for n, d in self._defaults:
            setattr(self, "_" + n, kwargs.get(n, list(d) if isinstance(d, list) else d))

    def __repr__(self):
        return "<torch._C._profiler._ExperimentalConfig object at %#x>" % id(self)
