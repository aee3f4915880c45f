"""torch.optim.rprop: Rprop, PyTorch's single-tensor update rule."""
import cthtorch
from cthtorch.optim.algorithms import _check
from cthtorch.optim._single_tensor import _real_views, _scalar, _grads
from cthtorch.optim.optimizer import Optimizer


class Rprop(Optimizer):
    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False, foreach=None,
                 maximize=False, differentiable=False):
        _check(lr=lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError("Invalid eta values: %s, %s" % (etas[0], etas[1]))
        super().__init__(params, dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize,
                                      differentiable=differentiable, capturable=capturable))

    def step(self, closure=None):
        def impl():
            for g in self.param_groups:
                etaminus, etaplus = g["etas"]
                smin, smax = g["step_sizes"]
                for p, grad in _grads(g, "Rprop"):
                    st = self.state[p]
                    if len(st) == 0:
                        st["step"] = _scalar(0.0)
                        st["prev"] = cthtorch.zeros_like(p)
                        # a complex step size starts at lr in both parts, as torch's (the imaginary part too steps)
                        lr = complex(g["lr"], g["lr"]) if p.is_complex() else g["lr"]
                        st["step_size"] = cthtorch.empty_like(grad).fill_(lr)
                    st["step"] += 1
                    p, grad, st = _real_views(p, grad, st)
                    # same sign as last step: grow the step; flipped: shrink it and skip this update
                    s = grad.mul(st["prev"]).sign()
                    factor = cthtorch.ones_like(s).masked_fill_(s.gt(0), etaplus).masked_fill_(s.lt(0), etaminus)
                    st["step_size"].mul_(factor).clamp_(smin, smax)
                    grad = grad.clone().masked_fill_(factor.eq(etaminus), 0)
                    p.addcmul_(grad.sign(), st["step_size"], value=-1)
                    st["prev"].copy_(grad)
        return self._run_step(closure, impl)
