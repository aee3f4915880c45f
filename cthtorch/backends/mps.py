"""torch.backends.mps: Apple's Metal backend, never built into cthtorch."""
from .._absent_device import backend_missing, returning

is_available = is_built = returning(False)
is_macos13_or_newer = backend_missing("MPS", "isOnMacOSorNewer")


def is_macos_or_newer(major, minor):
    return is_macos13_or_newer()
