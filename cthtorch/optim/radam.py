"""torch.optim.radam: RAdam, PyTorch's single-tensor update rule."""
from cthtorch.optim.algorithms import _check
from cthtorch.optim._single_tensor import _real_views, _grads, _adam_state, _weight_decay
from cthtorch.optim.optimizer import Optimizer


class RAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        _check(lr=lr, eps=eps, betas=betas, wd=weight_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize,
                                      foreach=foreach, capturable=capturable,
                                      decoupled_weight_decay=decoupled_weight_decay, differentiable=differentiable))

    def step(self, closure=None):
        def impl():
            for g in self.param_groups:
                beta1, beta2 = g["betas"]
                lr = g["lr"]
                for p, grad in _grads(g, "RAdam"):
                    st = self.state[p]
                    step = _adam_state(st, p)
                    p, grad, st = _real_views(p, grad, st)
                    grad = _weight_decay(p, grad, g)
                    exp_avg, exp_avg_sq = st["exp_avg"], st["exp_avg_sq"]
                    exp_avg.lerp_(grad, 1 - beta1)
                    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                    bc1 = 1 - beta1 ** step
                    bc2 = 1 - beta2 ** step
                    corrected = exp_avg / bc1
                    # the variance rectification term is defined once rho_t > 5 (RAdam paper)
                    rho_inf = 2 / (1 - beta2) - 1
                    rho_t = rho_inf - 2 * step * (beta2 ** step) / bc2
                    if rho_t > 5.0:
                        rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
                        adaptive = (bc2 ** 0.5) / exp_avg_sq.sqrt().add_(g["eps"])
                        p.add_(corrected * lr * adaptive * rect, alpha=-1.0)
                    else:
                        p.add_(corrected * lr, alpha=-1.0)
        return self._run_step(closure, impl)
