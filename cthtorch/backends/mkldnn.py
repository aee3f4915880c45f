"""torch.backends.mkldnn: oneDNN is not part of cthtorch (its CPU kernels are
its own), so it reports unavailable; enabled/deterministic stay settable flags
so programs that set them run."""
import contextlib

from .mkl import verbose  # noqa: F401 - the same do-nothing logging switch

VERBOSE_OFF = 0
VERBOSE_ON = 1
VERBOSE_ON_CREATION = 2
enabled = True
deterministic = False
allow_tf32 = False


def is_available():
    return False


def is_acl_available():
    return False


@contextlib.contextmanager
def flags(enabled=False, deterministic=False):
    g = globals()
    old = g["enabled"], g["deterministic"]
    g["enabled"], g["deterministic"] = enabled, deterministic
    try:
        yield
    finally:
        g["enabled"], g["deterministic"] = old
