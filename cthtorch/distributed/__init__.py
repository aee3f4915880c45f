"""torch.distributed on MPI: process groups and collectives
(distributed_c10d), the stores, the launcher (run), and, from other modules,
DistributedDataParallel and RPC. "gloo" and "mpi" both run on MPI."""
from cthtorch.distributed._stores import (DistBackendError, DistError, DistNetworkError, DistStoreError,  # noqa: F401
                                          FileStore, HashStore, PrefixStore, Store, TCPStore)
from cthtorch.distributed.distributed_c10d import *  # noqa: F401,F403
from cthtorch.distributed.distributed_c10d import (Backend, GroupMember, P2POp, ProcessGroup, ReduceOp,  # noqa: F401
                                                   Work, group, is_available)
from cthtorch.distributed._reducer import GradBucket  # noqa: F401,E402 -- what DDP communication hooks receive
from cthtorch.distributed import rpc  # noqa: F401,E402 -- torch.distributed.rpc is an attribute, as in torch
