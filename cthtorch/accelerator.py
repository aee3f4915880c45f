"""torch.accelerator: the device-generic accelerator API. cthtorch runs on the
CPU only, so there is never a current accelerator: queries answer as PyTorch's
CPU-only build does, and anything that needs a device raises its error."""
_NONE = "Cannot access accelerator device when none is available."


def is_available():
    return False


def current_accelerator(check_available=False):
    return None


def device_count():
    return 0


def _unavailable(*args, **kwargs):
    raise RuntimeError(_NONE)


current_device_index = current_device_idx = _unavailable
set_device_index = set_device_idx = _unavailable
current_stream = set_stream = synchronize = _unavailable
empty_cache = memory_allocated = max_memory_allocated = memory_reserved = max_memory_reserved = _unavailable
memory_stats = reset_peak_memory_stats = reset_accumulated_memory_stats = get_memory_info = _unavailable
get_device_capability = _unavailable


class device_index:
    """Context manager; with no accelerator it does nothing (as in PyTorch)."""

    def __init__(self, device, /):
        self.idx = device

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
