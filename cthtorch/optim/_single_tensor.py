"""What the single-tensor update rules share (NAdam, RAdam, ASGD, Rprop: the
path torch takes for CPU parameters, op by op). Scalar state (step,
mu_product, eta, mu) is kept in float32 0-d tensors as torch keeps it, so the
rounding of those scalars, and hence the parameters, match torch's."""
import cthtorch


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


def _real_views(p, grad, st):
    """A complex parameter steps as torch steps it: its grad and its state
    (kept complex, as torch keeps it) seen as (real, imag) float pairs, so the
    element-wise rules (squares, sqrt, max, sign) act on each part alone."""
    if not p.is_complex():
        return p, grad, st
    real = cthtorch.view_as_real
    return real(p), real(grad), {k: real(v) if isinstance(v, cthtorch.Tensor) and v.is_complex() else v
                                 for k, v in st.items()}


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
