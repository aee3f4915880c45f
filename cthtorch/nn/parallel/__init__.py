"""nn.parallel: DataParallel (one process) and DistributedDataParallel (one
process per replica, gradients all-reduced through torch.distributed)."""
from cthtorch.nn.parallel.data_parallel import DataParallel, data_parallel
from cthtorch.nn.parallel.parallel_apply import parallel_apply
from cthtorch.nn.parallel.scatter_gather import gather, scatter

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel", "gather", "parallel_apply", "scatter"]


def __getattr__(name):
    # DDP brings torch.distributed (MPI, numpy) with it: loaded on first use so
    # `import cthtorch.nn` stays light
    if name in ("DistributedDataParallel", "distributed"):
        import importlib
        distributed = importlib.import_module("cthtorch.nn.parallel.distributed")
        return distributed if name == "distributed" else distributed.DistributedDataParallel
    raise AttributeError("module 'cthtorch.nn.parallel' has no attribute '%s'" % name)
