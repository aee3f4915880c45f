"""torch.backends.openmp: cthtorch's CPU kernels are threaded with OpenMP."""


def is_available():
    return True
