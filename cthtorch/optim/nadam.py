"""torch.optim.nadam: NAdam, PyTorch's single-tensor update rule."""
from cthtorch.optim.algorithms import _check
from cthtorch.optim._single_tensor import _real_views, _grads, _adam_state, _weight_decay
from cthtorch.optim.optimizer import Optimizer


class NAdam(Optimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        _check(lr=lr, eps=eps, betas=betas, wd=weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError("Invalid momentum_decay value: %s" % momentum_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay, decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable))

    def step(self, closure=None):
        def impl():
            for g in self.param_groups:
                beta1, beta2 = g["betas"]
                lr = g["lr"]
                for p, grad in _grads(g, "NAdam"):
                    st = self.state[p]
                    step = _adam_state(st, p, mu_product=1.0)
                    p, grad, st = _real_views(p, grad, st)
                    bc2 = 1 - beta2 ** step
                    grad = _weight_decay(p, grad, g)
                    mu = beta1 * (1.0 - 0.5 * 0.96 ** (step * g["momentum_decay"]))
                    mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * g["momentum_decay"]))
                    st["mu_product"] *= mu
                    mu_product = st["mu_product"].item()
                    st["exp_avg"].lerp_(grad, 1 - beta1)
                    st["exp_avg_sq"].mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                    denom = st["exp_avg_sq"].div(bc2).sqrt().add_(g["eps"])
                    p.addcdiv_(grad, denom, value=-lr * (1.0 - mu) / (1.0 - mu_product))
                    p.addcdiv_(st["exp_avg"], denom, value=-lr * mu_next / (1.0 - mu_product * mu_next))
        return self._run_step(closure, impl)
