"""Gradient clipping."""
import warnings

import cthtorch


def _tensor_list(tensors):
    return [tensors] if isinstance(tensors, cthtorch.Tensor) else list(tensors)


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The norm of the per-tensor norms: the norm of all elements as one vector."""
    tensors = _tensor_list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return cthtorch.tensor(0.0)
    with cthtorch.no_grad():   # as torch's: a norm for clipping records no graph
        norms = [cthtorch.linalg.vector_norm(t, norm_type) for t in tensors]
        total = cthtorch.linalg.vector_norm(cthtorch.stack([n.to(tensors[0].device) for n in norms]), norm_type)
    if error_if_nonfinite and not bool(total.isfinite()):
        raise RuntimeError("The total norm of order %s for gradients from `parameters` is non-finite, so it "
                           "cannot be clipped. To disable this error and scale the gradients by the non-finite "
                           "norm anyway, set `error_if_nonfinite=False`" % norm_type)
    return total


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scales the gradients by max_norm / total_norm when that is below 1."""
    grads = [p.grad for p in _tensor_list(parameters) if p.grad is not None]
    if not grads:
        return
    with cthtorch.no_grad():
        coef = (float(max_norm) / (total_norm + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(coef.to(g.device))


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    parameters = _tensor_list(parameters)
    grads = [p.grad for p in parameters if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total, foreach)
    return total


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value, foreach=None):
    if isinstance(parameters, cthtorch.Tensor):
        parameters = [parameters]
    clip_value = float(clip_value)
    with cthtorch.no_grad():
        for p in parameters:
            if p.grad is not None:
                p.grad.clamp_(min=-clip_value, max=clip_value)
