"""torch.cpu: the CPU as a device module (streams and events are no-ops)."""
import contextlib


def is_available():
    return True


def device_count():
    return 1


def current_device():
    return "cpu"


def set_device(device):
    pass


def synchronize(device=None):
    pass


def is_initialized():
    return True


class Stream:
    def __init__(self, priority=-1):
        pass

    def wait_stream(self, stream):
        pass

    def synchronize(self):
        pass


class Event:
    def __init__(self, enable_timing=False):
        pass

    def record(self, stream=None):
        pass

    def synchronize(self):
        pass

    def query(self):
        return True


def current_stream(device=None):
    return Stream()


@contextlib.contextmanager
def stream(stream):
    yield


# torch.cpu.amp (deprecated aliases of cthtorch.amp); registered in sys.modules
# so `from torch.cpu.amp import GradScaler` works although cpu is a module
from cthtorch.amp import cpu_amp as amp  # noqa: E402
import sys as _sys  # noqa: E402
_sys.modules[__name__ + ".amp"] = amp
