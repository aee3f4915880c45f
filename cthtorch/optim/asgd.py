"""torch.optim.asgd: ASGD, PyTorch's single-tensor update rule."""
import cthtorch
from cthtorch.optim.algorithms import _check
from cthtorch.optim._single_tensor import _real_views, _scalar, _grads
from cthtorch.optim.optimizer import Optimizer


class ASGD(Optimizer):
    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False, differentiable=False, capturable=False):
        _check(lr=lr, wd=weight_decay)
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize, differentiable=differentiable,
                                      capturable=capturable))

    def step(self, closure=None):
        def impl():
            for g in self.param_groups:
                lr, lambd, alpha, t0 = g["lr"], g["lambd"], g["alpha"], g["t0"]
                for p, grad in _grads(g, "ASGD"):
                    st = self.state[p]
                    if len(st) == 0:
                        st["step"] = _scalar(0.0)
                        st["eta"] = _scalar(lr)
                        st["mu"] = _scalar(1.0)
                        st["ax"] = cthtorch.zeros_like(p)
                    st["step"] += 1
                    p, grad, st = _real_views(p, grad, st)
                    if g["weight_decay"] != 0:
                        grad = grad.add(p, alpha=g["weight_decay"])
                    eta = st["eta"].item()
                    p.mul_(1 - lambd * eta)
                    p.add_(grad, alpha=-eta)
                    if st["mu"].item() != 1:
                        st["ax"].add_(p.sub(st["ax"]).mul_(st["mu"]))
                    else:
                        st["ax"].copy_(p)
                    step = st["step"].item()
                    st["eta"].fill_(lr / ((1 + lambd * lr * step) ** alpha))
                    st["mu"].fill_(1 / max(1, step - t0))
        return self._run_step(closure, impl)
