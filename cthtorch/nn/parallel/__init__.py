"""nn.parallel: DataParallel (one process) and DistributedDataParallel (one
process per replica, gradients all-reduced through torch.distributed)."""
from cthtorch.nn.parallel.data_parallel import DataParallel, data_parallel
from cthtorch.nn.parallel.distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]
