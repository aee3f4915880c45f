"""torch.nn.attention: choosing scaled_dot_product_attention's backend. On
the CPU there are two, as in torch: FLASH_ATTENTION (the fused C kernel) and
MATH (the composite of recorded ops); sdpa_kernel limits the choice to the
backends it names for the duration of the block."""
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
    global _enabled
    old = _enabled
    _enabled = frozenset(items)
    try:
        yield
    finally:
        _enabled = old


# the backends scaled_dot_product_attention may pick from (sdpa_kernel narrows it)
_enabled = frozenset(SDPBackend)


def _fused_allowed():
    return SDPBackend.FLASH_ATTENTION in _enabled
