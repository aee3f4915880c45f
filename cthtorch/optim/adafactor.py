"""torch.optim.Adafactor: Adam's second moment kept factored (a row and a column mean of g^2 per matrix, the full
moment only for vectors), no first moment, a relative step size and update clipping (Shazeer & Stern, 2018), with
torch's single-tensor rule: 1 - beta2_t = t^beta2_decay, rho_t = min(lr, 1/sqrt(t)), alpha = max(eps2, RMS(p)) rho_t."""
import math

import cthtorch
from cthtorch.optim._single_tensor import _scalar, _grads
from cthtorch.optim.optimizer import Optimizer


class Adafactor(Optimizer):
    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0, *,
                 foreach=None, maximize=False):
        if isinstance(lr, cthtorch.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        for ok, what, v in ((0.0 <= lr, "Learning rate should be >= 0", lr),
                            (0.0 >= beta2_decay, "beta2_decay should be <= 0", beta2_decay),
                            (eps[0] is None or 0.0 <= eps[0], "epsilon1 should be >= 0", eps[0]),
                            (0.0 <= eps[1], "epsilon2 should be >= 0", eps[1]),
                            (1.0 <= d, "Clipping threshold d should be >= 1", d),
                            (0.0 <= weight_decay, "weight_decay should be >= 0", weight_decay)):
            if not ok:
                raise ValueError(f"{what} but is: {v}")
        super().__init__(params, dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize))

    @staticmethod
    def _state(st, p):
        if len(st) == 0:
            st["step"] = _scalar(0.0)
            if p.dim() > 1:   # the factors: means over the last dim (rows) and the one before (columns)
                st["row_var"] = p.new_zeros(list(p.shape[:-1]) + [1])
                st["col_var"] = p.new_zeros(list(p.shape[:-2]) + [1, p.shape[-1]])
            else:
                st["variance"] = cthtorch.zeros_like(p)
        return st

    def step(self, closure=None):
        def impl():
            for g in self.param_groups:
                lr, eps1, eps2 = float(g["lr"]), g["eps"][0], g["eps"][1]
                for p, grad in _grads(g, "Adafactor"):
                    if p.is_complex():
                        raise RuntimeError("Adafactor does not support complex parameters")
                    st = self._state(self.state[p], p)
                    e1 = cthtorch.finfo(p.dtype).eps if eps1 is None else eps1
                    st["step"] += 1
                    t = st["step"].item()
                    new_weight = t ** g["beta2_decay"]   # 1 - beta2_t
                    rho = min(lr, 1 / t ** 0.5)
                    alpha = max(eps2, p.norm(2).item() / math.sqrt(p.numel())) * rho
                    if g["weight_decay"] != 0:
                        p.mul_(1 - lr * g["weight_decay"])
                    if grad.dim() > 1:
                        row = cthtorch.norm(grad, dim=-1, keepdim=True).square_().div_(grad.size(-1))
                        col = cthtorch.norm(grad, dim=-2, keepdim=True).square_().div_(grad.size(-2))
                        st["row_var"].lerp_(row, new_weight)
                        st["col_var"].lerp_(col, new_weight)
                        # V = R C / mean(R): the rank-1 estimate of the mean of g^2
                        v = st["row_var"] @ st["col_var"]
                        v.div_(st["row_var"].mean(dim=-2, keepdim=True).clamp_(min=e1))
                    else:
                        st["variance"].lerp_(grad * grad, new_weight)
                        v = st["variance"].clone()
                    u = v.clamp_(min=e1 * e1).rsqrt_().mul_(grad)
                    clip = max(1.0, u.norm(2).item() / (math.sqrt(u.numel()) * g["d"]))
                    p.add_(u, alpha=-alpha / clip)
        return self._run_step(closure, impl)
