"""Distances: cosine_similarity and pairwise_distance as composites over
linalg.vector_norm; pdist through its C kernel (src/ATen/ATDistance.c)."""
import cthtorch
from cthtorch._utils import _dtype_name, _tensor_arg
from cthtorch.overrides import _handle_with_locals, has_torch_function_unary as _has_torch_function_unary


def _vector_norm(x, p=2.0, dim=-1, keepdim=False):
    # linalg.vector_norm: torch's subgradients (0 at a zero vector, ties share an inf-norm
    # gradient), and a backward built from differentiable ops so double backward works
    return cthtorch.linalg.vector_norm(x, float(p), dim, keepdim)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    if _has_torch_function_unary(x1):
        return _handle_with_locals(cosine_similarity, locals(), cthtorch.cosine_similarity)
    _tensor_arg("cosine_similarity", "x1", x1, 1)
    _tensor_arg("cosine_similarity", "x2", x2, 2)
    common = cthtorch.promote_types(x1.dtype, x2.dtype)
    if not common.is_floating_point:   # integers and complex numbers alike (torch's check)
        raise RuntimeError("expected common dtype to be floating point, yet common dtype is %s" % _dtype_name(common))
    # each side divided by its own (clamped) norm first, as torch does: keeps results in [-1, 1];
    # the clamp is invisible to autograd
    x1, x2 = cthtorch.broadcast_tensors(x1.to(common), x2.to(common))
    n1 = _vector_norm(x1, 2, dim, True)
    n2 = _vector_norm(x2, 2, dim, True)
    with cthtorch.no_grad():
        c1 = n1.clamp_min(eps) - n1
        c2 = n2.clamp_min(eps) - n2
    return ((x1 / (n1 + c1)) * (x2 / (n2 + c2))).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    d = max(x1.dim(), x2.dim())
    if d == 0:
        return _vector_norm((x1 - x2 + eps).reshape(1), p, 0, keepdim).reshape(()) if not keepdim else \
            (x1 - x2 + eps).abs()
    return _vector_norm(x1 - x2 + eps, p, d - 1, keepdim)


def pdist(input, p=2):
    return cthtorch._pdist_forward(input, p)
