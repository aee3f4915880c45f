"""Gradient clipping."""
import math

import cthtorch


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    if isinstance(parameters, cthtorch.Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    max_norm, norm_type = float(max_norm), float(norm_type)
    if not grads:
        return cthtorch.tensor(0.0)
    with cthtorch.no_grad():
        if norm_type == math.inf:
            norms = [g.detach().abs().max() for g in grads]
            total = norms[0] if len(norms) == 1 else cthtorch.stack(norms).max()
        else:
            total = cthtorch.stack([g.detach().abs().pow(norm_type).sum() for g in grads]).sum().pow(1.0 / norm_type)
        if error_if_nonfinite and not bool(cthtorch.isfinite(total)):
            raise RuntimeError("The total norm of order %s for gradients from `parameters` is non-finite, so it "
                               "cannot be clipped. To disable this error and scale the gradients by the non-finite "
                               "norm anyway, set `error_if_nonfinite=False`" % norm_type)
        coef = max_norm / (total + 1e-6)
        coef_clamped = coef.clamp(max=1.0)
        for g in grads:
            g.mul_(coef_clamped)
    return total


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value, foreach=None):
    if isinstance(parameters, cthtorch.Tensor):
        parameters = [parameters]
    clip_value = float(clip_value)
    with cthtorch.no_grad():
        for p in parameters:
            if p.grad is not None:
                p.grad.clamp_(min=-clip_value, max=clip_value)
