"""NAdam, RAdam, ASGD, Rprop: PyTorch's single-tensor update rules
(the path torch takes for CPU parameters). Scalar state (step, mu_product,
eta, mu) is kept in float32 0-d tensors as torch keeps it, so the rounding of
those scalars, and hence the parameters, match torch's."""
import cthtorch
from cthtorch.optim.algorithms import _check
from cthtorch.optim.optimizer import Optimizer


def _scalar(v):
    return cthtorch.tensor(float(v), dtype=cthtorch.float32)


def _grads(group, name):
    """(param, grad) for the group's params that have a grad (negated with maximize)."""
    for p in group["params"]:
        if p.grad is None:
            continue
        if p.grad.is_sparse:
            raise RuntimeError("%s does not support sparse gradients" % name)
        yield p, (p.grad if not group.get("maximize") else -p.grad)


def _adam_state(st, p, **extra):
    """First-step state of the Adam family (step, moments, plus extra scalars); then counts the step."""
    if len(st) == 0:
        st["step"] = _scalar(0.0)
        for k, v in extra.items():
            st[k] = _scalar(v)
        st["exp_avg"] = cthtorch.zeros_like(p)
        st["exp_avg_sq"] = cthtorch.zeros_like(p)
    st["step"] += 1
    return st["step"].item()


def _weight_decay(p, grad, g):
    """L2 (added to grad) or decoupled (AdamW-style, applied to p) weight decay."""
    wd = g["weight_decay"]
    if wd != 0:
        if g["decoupled_weight_decay"]:
            p.mul_(1 - g["lr"] * wd)
        else:
            grad = grad.add(p, alpha=wd)
    return grad


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
                        st["step_size"] = cthtorch.full_like(grad, g["lr"])
                    st["step"] += 1
                    # same sign as last step: grow the step; flipped: shrink it and skip this update
                    s = grad.mul(st["prev"]).sign()
                    factor = cthtorch.ones_like(s).masked_fill_(s.gt(0), etaplus).masked_fill_(s.lt(0), etaminus)
                    st["step_size"].mul_(factor).clamp_(smin, smax)
                    grad = grad.clone().masked_fill_(factor.eq(etaminus), 0)
                    p.addcmul_(grad.sign(), st["step_size"], value=-1)
                    st["prev"].copy_(grad)
        return self._run_step(closure, impl)
