"""torch.backends.mkl: cthtorch's GEMM is OpenBLAS plus its own kernels, not MKL."""
VERBOSE_OFF = 0
VERBOSE_ON = 1


def is_available():
    return False


class verbose:
    """MKL's (and oneDNN's) on-demand logging: nothing to log without them."""

    def __init__(self, enable):
        self.enable = enable

    def __enter__(self):
        return None if self.enable == VERBOSE_OFF else self

    def __exit__(self, *exc):
        return False
