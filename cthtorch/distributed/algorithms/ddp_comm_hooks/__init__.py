"""DDP communication hooks: hook(state, bucket) -> Future of the bucket's new
gradient buffer, registered with DistributedDataParallel.register_comm_hook."""
from enum import Enum
from functools import partial

from cthtorch.distributed.algorithms.ddp_comm_hooks import default_hooks

__all__ = ["DDPCommHookType", "register_ddp_comm_hook"]


def _ddp_comm_hook_wrapper(comm_hook, model, state):
    model.register_comm_hook(state, comm_hook)


class DDPCommHookType(Enum):
    ALLREDUCE = partial(_ddp_comm_hook_wrapper, comm_hook=default_hooks.allreduce_hook)
    FP16_COMPRESS = partial(_ddp_comm_hook_wrapper, comm_hook=default_hooks.fp16_compress_hook)
    BF16_COMPRESS = partial(_ddp_comm_hook_wrapper, comm_hook=default_hooks.bf16_compress_hook)


def register_ddp_comm_hook(comm_hook_type, model, state=None):
    comm_hook_type.value(model=model, state=state)
