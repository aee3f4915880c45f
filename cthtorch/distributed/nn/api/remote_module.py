"""torch.distributed.nn.api.remote_module.RemoteModule: module_cls(*args,
**kwargs) is built on the worker named by remote_device ("worker" or
"worker/cpu"); forward runs there over RPC, so inside a distributed
autograd context its gradients flow back through dist_autograd."""
from cthtorch.distributed import rpc
from cthtorch.nn.modules.module import Module

__all__ = ["RemoteModule"]


def _instantiate(module_cls, args, kwargs, device):
    return module_cls(*args, **kwargs).to(device)


def _forward(module_rref, *args, **kwargs):
    return module_rref.local_value()(*args, **kwargs)


def _param_rrefs(module_rref, recurse):
    return [rpc.RRef(p) for p in module_rref.local_value().parameters(recurse)]


class RemoteModule(Module):
    def __init__(self, remote_device, module_cls, args=None, kwargs=None):
        super().__init__()
        on, _, device = remote_device.partition("/")
        self.on, self.device = on, device or "cpu"
        self.module_rref = rpc.remote(on, _instantiate,
                                      args=(module_cls, tuple(args or ()), dict(kwargs or {}), self.device))

    def forward(self, *args, **kwargs):
        return rpc.rpc_sync(self.on, _forward, args=(self.module_rref,) + args, kwargs=kwargs)

    def forward_async(self, *args, **kwargs):
        return rpc.rpc_async(self.on, _forward, args=(self.module_rref,) + args, kwargs=kwargs)

    def remote_parameters(self, recurse=True):
        """RRefs to the remote module's parameters, e.g. for DistributedOptimizer."""
        return rpc.rpc_sync(self.on, _param_rrefs, args=(self.module_rref, recurse))

    def get_module_rref(self):
        return self.module_rref

    def __repr__(self):
        return "RemoteModule(on=%s, device=%s)" % (self.on, self.device)
