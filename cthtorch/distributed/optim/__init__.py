"""torch.distributed.optim.DistributedOptimizer: one local optimizer on each
worker that owns some of the parameters; step(context_id) runs them all
with that distributed autograd context's gradients."""
import threading

from cthtorch.distributed import autograd as dist_autograd
from cthtorch.distributed import rpc

from .zero_redundancy_optimizer import ZeroRedundancyOptimizer  # noqa: E402

__all__ = ["DistributedOptimizer", "ZeroRedundancyOptimizer"]


class _LocalOptimizer:
    # One lock for all: two trainers stepping the same parameters must not interleave (as torch).
    global_lock = threading.Lock()

    def __init__(self, optim_cls, local_params_rref, *args, **kwargs):
        self._local_params = [rref.local_value() for rref in local_params_rref]
        self.optim = optim_cls(self._local_params, *args, **kwargs)

    def step(self, autograd_ctx_id):
        grads = dist_autograd.get_gradients(autograd_ctx_id)
        with _LocalOptimizer.global_lock:
            for param, grad in grads.items():
                param.grad = grad
            self.optim.step()


def _new_local_optimizer(optim_cls, local_params_rref, args, kwargs):
    return rpc.RRef(_LocalOptimizer(optim_cls, local_params_rref, *args, **kwargs))


def _local_optimizer_step(local_optim_rref, autograd_ctx_id):
    local_optim_rref.local_value().step(autograd_ctx_id)


class DistributedOptimizer:
    """DistributedOptimizer(optimizer_class, params_rref, *args, **kwargs): params_rref are RRefs
    to parameters on any workers; the args go to optimizer_class on each owner."""

    def __init__(self, optimizer_class, params_rref, *args, **kwargs):
        per_worker = {}
        for param in params_rref:
            per_worker.setdefault(param.owner(), []).append(param)
        self.is_functional_optim = False
        futs = [rpc.rpc_async(worker, _new_local_optimizer, args=(optimizer_class, rrefs, args, kwargs))
                for worker, rrefs in per_worker.items()]
        self.remote_optimizers = [f.wait() for f in futs]

    def step(self, context_id):
        dist_autograd._is_valid_context(context_id)
        futs = [rpc.rpc_async(opt.owner(), _local_optimizer_step, args=(opt, context_id))
                for opt in self.remote_optimizers]
        errors = []
        for f in futs:
            try:
                f.wait()
            except Exception as e:
                errors.append(e)
        if errors:
            raise errors[0]
