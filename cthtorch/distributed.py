"""torch.distributed in a single-process build: no backend is compiled in, so
is_available() is False (as in PyTorch builds without distributed support) and
the process-group calls raise PyTorch's errors."""


def is_available():
    return False


def is_initialized():
    return False


def is_torchelastic_launched():
    return False


def _no_group(*args, **kwargs):
    raise RuntimeError("Default process group has not been initialized, please make sure to call "
                       "init_process_group.")


get_rank = get_world_size = barrier = all_reduce = broadcast = all_gather = reduce = destroy_process_group = _no_group


def init_process_group(*args, **kwargs):
    raise RuntimeError("cthtorch.distributed: no distributed backend is available in cthtorch")


class ReduceOp:
    SUM, PRODUCT, MIN, MAX, BAND, BOR, BXOR, AVG = range(8)


class Backend(str):
    GLOO, NCCL, MPI = "gloo", "nccl", "mpi"
