"""torch.nn.attention: choosing scaled_dot_product_attention's backend. On
this CPU-only build every backend request runs the one math kernel, so
sdpa_kernel only validates its argument (as torch does) and restores nothing."""
import contextlib
import enum

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS"]

WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.Enum):
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __int__(self):
        return self.value

    def __str__(self):
        return "SDPBackend." + self.name


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    items = backends if isinstance(backends, (list, tuple, set)) else [backends]
    for b in items:   # a plain int is refused, as torch refuses it
        if not isinstance(b, SDPBackend):
            raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend instances, "
                                 "got %s" % type(b).__name__)
    yield
