"""SGD, Adam, AdamW, Adagrad, RMSprop, Adadelta, Adamax, NAdam, RAdam: the
update rules PyTorch documents, applied per parameter with in-place ops."""
import math

import cthtorch
from cthtorch import _C
from cthtorch.optim.optimizer import Optimizer, required
from cthtorch.optim._single_tensor import _real_views


def _check(lr=None, eps=None, betas=None, wd=None, momentum=None):
    if lr is not None and not isinstance(lr, cthtorch.Tensor) and lr < 0.0:
        raise ValueError("Invalid learning rate: %s" % lr)
    if eps is not None and eps < 0.0:
        raise ValueError("Invalid epsilon value: %s" % eps)
    if betas is not None:
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError("Invalid beta parameter at index 0: %s" % betas[0])
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError("Invalid beta parameter at index 1: %s" % betas[1])
    if wd is not None and wd < 0.0:
        raise ValueError("Invalid weight_decay value: %s" % wd)
    if momentum is not None and momentum < 0.0:
        raise ValueError("Invalid momentum value: %s" % momentum)


class SGD(Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *, maximize=False,
                 foreach=None, differentiable=False, fused=None):
        _check(lr=lr, wd=weight_decay, momentum=momentum)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                                      nesterov=nesterov, maximize=maximize, foreach=foreach,
                                      differentiable=differentiable, fused=fused))

    def step(self, closure=None):
        def impl():
            for g in self.param_groups:
                for p in g["params"]:
                    if p.grad is None:
                        continue
                    if not g["differentiable"] and not p.grad.is_sparse and self._fused_sgd(g, p):
                        continue
                    d_p = p.grad if not g["maximize"] else -p.grad
                    if g["weight_decay"] != 0:
                        d_p = d_p.add(p, alpha=g["weight_decay"])
                    if g["momentum"] != 0:
                        st = self.state[p]
                        buf = st.get("momentum_buffer")
                        if buf is None:
                            buf = d_p.clone().detach()
                            st["momentum_buffer"] = buf
                        else:
                            buf.mul_(g["momentum"]).add_(d_p, alpha=1 - g["dampening"])
                        d_p = d_p.add(buf, alpha=g["momentum"]) if g["nesterov"] else buf
                    p.add_(d_p, alpha=-g["lr"])
        return self._run_step(closure, impl)

    def _fused_sgd(self, g, p):
        """The whole update in one pass (_C._sgd_step, same rounding as the
        op-by-op step below); False when p's tensors don't suit it."""
        buf = first = None
        if g["momentum"] != 0:
            st = self.state[p]
            buf = st.get("momentum_buffer")
            first = buf is None
            if first:
                buf = cthtorch.empty_like(p, memory_format=cthtorch.contiguous_format)
        if not _C._sgd_step(p, p.grad, buf, g["lr"], g["momentum"], g["dampening"], g["weight_decay"],
                            g["nesterov"], g["maximize"], bool(first)):
            return False
        if first:
            st["momentum_buffer"] = buf
        return True


class Adam(Optimizer):
    _no_sparse_grads = "Adam does not support sparse gradients, please consider SparseAdam instead"

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        _check(lr=lr, eps=eps, betas=betas, wd=weight_decay)
        # torch stores a tuple (betas=[0.5, 0.999] too), a 1-element tensor beta squeezed to 0-d
        betas = tuple(b.squeeze() if isinstance(b, cthtorch.Tensor) and b.dim() != 0 else b for b in betas)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable, fused=fused,
                                      decoupled_weight_decay=decoupled_weight_decay))

    def __setstate__(self, state):
        super().__setstate__(state)
        for g in self.param_groups:   # groups saved before the option existed
            g.setdefault("decoupled_weight_decay", isinstance(self, AdamW))

    def step(self, closure=None):
        def impl():
            for g in self.param_groups:
                beta1, beta2 = g["betas"]
                for p in g["params"]:
                    if p.grad is None:
                        continue
                    st = self.state[p]
                    if len(st) == 0:
                        st["step"] = cthtorch.tensor(0.0)
                        st["exp_avg"] = cthtorch.zeros_like(p)
                        st["exp_avg_sq"] = cthtorch.zeros_like(p)
                        if g["amsgrad"]:
                            st["max_exp_avg_sq"] = cthtorch.zeros_like(p)
                    st["step"] += 1
                    step = st["step"].item()
                    p, raw_grad, st = _real_views(p, p.grad, st)
                    grad = raw_grad if not g["maximize"] else -raw_grad
                    if not g["differentiable"] and _C._adam_step(
                            p, raw_grad, st["exp_avg"], st["exp_avg_sq"], st.get("max_exp_avg_sq"), g["lr"], beta1,
                            beta2, g["eps"], g["weight_decay"], step, g["maximize"], g["decoupled_weight_decay"]):
                        continue   # the update below in one pass, with torch's kernels' rounding
                    if g["weight_decay"] != 0:
                        if g["decoupled_weight_decay"]:
                            p.mul_(1 - g["lr"] * g["weight_decay"])
                        else:
                            grad = grad.add(p, alpha=g["weight_decay"])
                    st["exp_avg"].lerp_(grad, 1 - beta1)
                    st["exp_avg_sq"].mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                    bc1 = 1 - beta1 ** step
                    bc2 = 1 - beta2 ** step
                    step_size = g["lr"] / bc1
                    bc2_sqrt = math.sqrt(bc2)
                    if g["amsgrad"]:
                        cthtorch.maximum(st["max_exp_avg_sq"], st["exp_avg_sq"], out=st["max_exp_avg_sq"])
                        denom = (st["max_exp_avg_sq"].sqrt() / bc2_sqrt).add_(g["eps"])
                    else:
                        denom = (st["exp_avg_sq"].sqrt() / bc2_sqrt).add_(g["eps"])
                    p.addcdiv_(st["exp_avg"], denom, value=-step_size)
        return self._run_step(closure, impl)


class AdamW(Adam):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)


class Adagrad(Optimizer):
    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        _check(lr=lr, eps=eps, wd=weight_decay)
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, fused=fused))
        for g in self.param_groups:
            for p in g["params"]:
                st = self.state[p]
                st["step"] = cthtorch.tensor(0.0)
                # a complex parameter's sum starts at the value in both parts, as torch's (each part steps alone)
                v = initial_accumulator_value
                st["sum"] = cthtorch.empty_like(p).fill_(complex(v, v) if p.is_complex() else v)

    def step(self, closure=None):
        def impl():
            for g in self.param_groups:
                for p in g["params"]:
                    if p.grad is None:
                        continue
                    grad = p.grad if not g["maximize"] else -p.grad
                    st = self.state[p]
                    st["step"] += 1
                    step = st["step"].item()
                    if not grad.is_sparse:
                        p, grad, st = _real_views(p, grad, st)
                    if g["weight_decay"] != 0:
                        if grad.is_sparse:
                            raise RuntimeError("weight_decay option is not compatible with sparse gradients")
                        grad = grad.add(p, alpha=g["weight_decay"])
                    clr = g["lr"] / (1 + (step - 1) * g["lr_decay"])
                    if grad.is_sparse:
                        _adagrad_sparse(p, grad, st["sum"], clr, g["eps"])
                        continue
                    st["sum"].addcmul_(grad, grad, value=1)
                    p.addcdiv_(grad, st["sum"].sqrt().add_(g["eps"]), value=-clr)
        return self._run_step(closure, impl)


def _adagrad_sparse(p, grad, state_sum, clr, eps):
    """Adagrad on a sparse gradient, as torch: the update is non-linear, so
    the gradient is coalesced; only its rows of sum and p change."""
    from cthtorch._sparse_tensor import SparseTensor
    grad = grad.coalesce()
    idx, values = grad._indices(), grad._values()
    state_sum.add_(SparseTensor(idx, values.pow(2), grad.shape, True))
    std_values = state_sum.sparse_mask(grad)._values().sqrt_().add_(eps)
    p.add_(SparseTensor(idx, values / std_values, grad.shape, True), alpha=-clr)


class RMSprop(Optimizer):
    _no_sparse_grads = "RMSprop does not support sparse gradients"

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _check(lr=lr, eps=eps, wd=weight_decay, momentum=momentum)
        if alpha < 0:
            raise ValueError("Invalid alpha value: %s" % alpha)
        super().__init__(params, dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                                      weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable))

    def step(self, closure=None):
        def impl():
            for g in self.param_groups:
                for p in g["params"]:
                    if p.grad is None:
                        continue
                    grad = p.grad if not g["maximize"] else -p.grad
                    st = self.state[p]
                    if len(st) == 0:
                        st["step"] = cthtorch.tensor(0.0)
                        st["square_avg"] = cthtorch.zeros_like(p)
                        if g["momentum"] > 0:
                            st["momentum_buffer"] = cthtorch.zeros_like(p)
                        if g["centered"]:
                            st["grad_avg"] = cthtorch.zeros_like(p)
                    st["step"] += 1
                    p, grad, st = _real_views(p, grad, st)
                    if g["weight_decay"] != 0:
                        grad = grad.add(p, alpha=g["weight_decay"])
                    sq = st["square_avg"]
                    sq.mul_(g["alpha"]).addcmul_(grad, grad, value=1 - g["alpha"])
                    if g["centered"]:
                        ga = st["grad_avg"]
                        ga.lerp_(grad, 1 - g["alpha"])
                        avg = sq.addcmul(ga, ga, value=-1).sqrt_().add_(g["eps"])
                    else:
                        avg = sq.sqrt().add_(g["eps"])
                    if g["momentum"] > 0:
                        buf = st["momentum_buffer"]
                        buf.mul_(g["momentum"]).addcdiv_(grad, avg)
                        p.add_(buf, alpha=-g["lr"])
                    else:
                        p.addcdiv_(grad, avg, value=-g["lr"])
        return self._run_step(closure, impl)


class Adadelta(Optimizer):
    _no_sparse_grads = "Adadelta does not support sparse gradients"

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        _check(lr=lr, eps=eps, wd=weight_decay)
        if not 0.0 <= rho <= 1.0:
            raise ValueError("Invalid rho value: %s" % rho)
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                                      capturable=capturable, foreach=foreach, differentiable=differentiable))

    def step(self, closure=None):
        def impl():
            for g in self.param_groups:
                for p in g["params"]:
                    if p.grad is None:
                        continue
                    grad = p.grad if not g["maximize"] else -p.grad
                    st = self.state[p]
                    if len(st) == 0:
                        st["step"] = cthtorch.tensor(0.0)
                        st["square_avg"] = cthtorch.zeros_like(p)
                        st["acc_delta"] = cthtorch.zeros_like(p)
                    st["step"] += 1
                    p, grad, st = _real_views(p, grad, st)
                    if g["weight_decay"] != 0:
                        grad = grad.add(p, alpha=g["weight_decay"])
                    sq, acc = st["square_avg"], st["acc_delta"]
                    sq.mul_(g["rho"]).addcmul_(grad, grad, value=1 - g["rho"])
                    std = sq.add(g["eps"]).sqrt_()
                    delta = acc.add(g["eps"]).sqrt_().div_(std).mul_(grad)
                    acc.mul_(g["rho"]).addcmul_(delta, delta, value=1 - g["rho"])
                    p.add_(delta, alpha=-g["lr"])
        return self._run_step(closure, impl)


class Adamax(Optimizer):
    _no_sparse_grads = "Adamax does not support sparse gradients"

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        _check(lr=lr, eps=eps, betas=betas, wd=weight_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, capturable=capturable))

    def step(self, closure=None):
        def impl():
            for g in self.param_groups:
                b1, b2 = g["betas"]
                for p in g["params"]:
                    if p.grad is None:
                        continue
                    grad = p.grad if not g["maximize"] else -p.grad
                    st = self.state[p]
                    if len(st) == 0:
                        st["step"] = cthtorch.tensor(0.0)
                        st["exp_avg"] = cthtorch.zeros_like(p)
                        st["exp_inf"] = cthtorch.zeros_like(p)
                    st["step"] += 1
                    p, grad, st = _real_views(p, grad, st)
                    if g["weight_decay"] != 0:
                        grad = grad.add(p, alpha=g["weight_decay"])
                    st["exp_avg"].lerp_(grad, 1 - b1)
                    norm = cthtorch.maximum(st["exp_inf"].mul_(b2), grad.abs().add_(g["eps"]))
                    st["exp_inf"].copy_(norm)
                    clr = g["lr"] / (1 - b1 ** st["step"].item())
                    p.addcdiv_(st["exp_avg"], st["exp_inf"], value=-clr)
        return self._run_step(closure, impl)
