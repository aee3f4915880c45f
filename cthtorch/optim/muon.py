"""torch.optim.Muon: momentum SGD for 2-D hidden-layer weights whose update is orthogonalized by a quintic
Newton-Schulz iteration run in bfloat16 (Jordan et al., 2024), with decoupled weight decay and a shape-dependent
learning-rate scale ("original": sqrt(max(1, rows/cols)); "match_rms_adamw": 0.2 sqrt(max(rows, cols)))."""
import math

import cthtorch
from cthtorch.optim.optimizer import Optimizer

_NS_A, _NS_B, _NS_C = 3.4445, -4.7750, 2.0315


def _orthogonalize(update, coefficients, steps, eps):
    """X <- a X + (b G + c G^2) X with G = X X^T, on the wide orientation of X scaled to Frobenius norm <= 1."""
    if steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if update.dim() != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = coefficients
    tall = update.size(0) > update.size(1)
    x = update.bfloat16()
    if tall:
        x = x.T
    x.div_(x.norm().clamp(min=eps))
    for _ in range(steps):
        gram = x @ x.T
        poly = cthtorch.addmm(gram, gram, gram, beta=b, alpha=c)
        x = cthtorch.addmm(x, poly, x, beta=a)
    return x.T if tall else x


def _lr_scale(kind, shape):
    rows, cols = shape[:2]
    if kind is None or kind == "original":
        return math.sqrt(max(1, rows / cols))
    if kind == "match_rms_adamw":
        return 0.2 * math.sqrt(max(rows, cols))
    return 1.0


class Muon(Optimizer):
    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=(_NS_A, _NS_B, _NS_C), eps=1e-7, ns_steps=5, adjust_lr_fn=None):
        if isinstance(lr, cthtorch.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        super().__init__(params, dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                                      ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps,
                                      adjust_lr_fn=adjust_lr_fn))
        for g in self.param_groups:
            for p in g["params"]:
                if p.dim() != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a parameter with size: "
                                     f"{p.size()}")

    def step(self, closure=None):
        def impl():
            for g in self.param_groups:
                lr, mu = float(g["lr"]), g["momentum"]
                for p in g["params"]:
                    if p.grad is None:
                        continue
                    if p.is_complex():
                        raise RuntimeError("Muon does not support complex parameters")
                    if p.grad.is_sparse:
                        raise RuntimeError("Muon does not support sparse gradients")
                    grad = p.grad
                    if grad.dim() != 2:
                        raise ValueError("Param gradient must be a 2D matrix")
                    st = self.state[p]
                    if "momentum_buffer" not in st:
                        st["momentum_buffer"] = cthtorch.zeros_like(grad, memory_format=cthtorch.preserve_format)
                    buf = st["momentum_buffer"]
                    buf.lerp_(grad, 1 - mu)
                    upd = grad.lerp(buf, mu) if g["nesterov"] else buf
                    upd = _orthogonalize(upd, g["ns_coefficients"], g["ns_steps"], g["eps"])
                    p.mul_(1 - lr * g["weight_decay"])
                    p.add_(upd, alpha=-lr * _lr_scale(g["adjust_lr_fn"], p.shape))
        return self._run_step(closure, impl)
