"""torch.backends.mkldnn: oneDNN is not part of cthtorch (its CPU kernels are
its own), so it reports unavailable; enabled/deterministic stay settable flags
so programs that set them run."""
import contextlib

from . import mkl as _mkl

VERBOSE_OFF = 0
VERBOSE_ON = 1
VERBOSE_ON_CREATION = 2
enabled = True
deterministic = False
allow_tf32 = False
fp32_precision = "none"


class verbose(_mkl.verbose):
    """oneDNN's on-demand logging: nothing to log without it (torch names the argument level)."""

    def __init__(self, level):
        super().__init__(level)
        self.level = level


def is_available():
    return False


def is_acl_available():
    return False


@contextlib.contextmanager
def flags(enabled=False, deterministic=False, allow_tf32=True, fp32_precision="none"):
    g = globals()
    names = ("enabled", "deterministic", "allow_tf32", "fp32_precision")
    old = tuple(g[n] for n in names)
    g.update(zip(names, (enabled, deterministic, allow_tf32, fp32_precision)))
    try:
        yield
    finally:
        g.update(zip(names, old))
