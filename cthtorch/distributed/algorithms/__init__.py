"""torch.distributed.algorithms: the Join context manager (uneven inputs) and
DDP's communication hooks."""
from cthtorch.distributed.algorithms.join import Join, Joinable, JoinHook  # noqa: F401
