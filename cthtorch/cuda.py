"""cthtorch.cuda on a machine without a GPU: nothing is available, and
asking for a CUDA tensor raises a clear error (from _C's device parsing)."""


def is_available():
    return False


def device_count():
    return 0


def is_initialized():
    return False


def manual_seed(seed):
    pass


def manual_seed_all(seed):
    pass


def synchronize(device=None):
    pass


def empty_cache():
    pass


def current_device():
    raise RuntimeError("CUDA is not available: cthtorch has no GPU on this machine "
                       "(cthtorch.cuda.is_available() is False)")


def get_device_name(device=None):
    current_device()
