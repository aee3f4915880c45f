"""SparseAdam: Adam's moments and update on the rows a sparse gradient names
(nn.Embedding(sparse=True)), as torch.optim.SparseAdam computes them."""
import math

import cthtorch
from cthtorch.optim.optimizer import Optimizer


class SparseAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        if isinstance(lr, cthtorch.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 < lr:
            raise ValueError("Invalid learning rate: %s" % lr)
        if not 0.0 < eps:
            raise ValueError("Invalid epsilon value: %s" % eps)
        for i in (0, 1):
            if not 0.0 <= betas[i] < 1.0:
                raise ValueError("Invalid beta parameter at index %d: %s" % (i, betas[i]))
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, maximize=maximize))
        sparse_params, complex_params = [], []
        for gi, group in enumerate(self.param_groups):
            for pi, p in enumerate(group["params"]):
                if p.is_sparse:
                    sparse_params.append([gi, pi])
                if p.is_complex():
                    complex_params.append([gi, pi])
        if sparse_params:
            raise ValueError("Sparse params at indices %s: SparseAdam requires dense parameter tensors"
                             % sparse_params)
        if complex_params:
            raise ValueError("Complex params at indices %s: SparseAdam does not support complex parameters"
                             % complex_params)

    def step(self, closure=None):
        def impl():
            for g in self.param_groups:
                live = [p for p in g["params"] if p.grad is not None]
                for p in live:
                    if not p.grad.is_sparse:
                        raise RuntimeError("SparseAdam does not support dense gradients, please consider Adam "
                                           "instead")
                for p in live:
                    st = self.state[p]
                    if len(st) == 0:
                        st["step"] = 0
                        st["exp_avg"] = cthtorch.zeros_like(p)
                        st["exp_avg_sq"] = cthtorch.zeros_like(p)
                    st["step"] += 1
                    _sparse_adam_update(p, p.grad, st, g)
        return self._run_step(closure, impl)


def _sparse_adam_update(p, grad, st, g):
    """torch.optim._functional.sparse_adam for one parameter: the moments move
    toward the gradient only on its (coalesced) entries; the step uses the
    moments' new values there."""
    from cthtorch._sparse_tensor import SparseTensor
    beta1, beta2 = g["betas"]
    grad = (grad if not g["maximize"] else -grad).coalesce()
    idx, values = grad._indices(), grad._values()
    if values.numel() == 0:
        return

    def entries(v):
        return SparseTensor(idx, v, grad.shape, True)

    exp_avg, exp_avg_sq = st["exp_avg"], st["exp_avg_sq"]
    old_avg = exp_avg.sparse_mask(grad)._values()
    avg_update = values.sub(old_avg).mul_(1 - beta1)
    exp_avg.add_(entries(avg_update))
    old_sq = exp_avg_sq.sparse_mask(grad)._values()
    sq_update = values.pow(2).sub_(old_sq).mul_(1 - beta2)
    exp_avg_sq.add_(entries(sq_update))
    numer = avg_update.add_(old_avg)
    denom = sq_update.add_(old_sq).sqrt_().add_(g["eps"])
    step = st["step"]
    step_size = float(g["lr"]) * math.sqrt(1 - beta2 ** step) / (1 - beta1 ** step)
    p.add_(entries(-step_size * numer.div_(denom)))
