"""torch.distributed.nn: RemoteModule, a module that lives on another RPC
worker (the collectives-as-autograd-functions part of torch.distributed.nn
is not implemented)."""
from cthtorch.distributed.nn.api.remote_module import RemoteModule  # noqa: F401

__all__ = ["RemoteModule"]
