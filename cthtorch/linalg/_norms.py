"""Norms: linalg.vector_norm / matrix_norm / norm, legacy torch.norm, and
the distance ops (dist, cdist, renorm) built on them."""
import math

import cthtorch
from cthtorch.autograd import Function
from cthtorch.autograd.function import _recomputed_grads
from cthtorch._utils import _dtype_name
from cthtorch.linalg import _checks
from cthtorch._sparse_tensor import name_node
from cthtorch.amp._cpu_policy import fp32_on_cpu


def _dims(x, dim):
    if dim is None:
        return list(range(x.dim()))
    return [dim] if isinstance(dim, int) else list(dim)


def _unsqueeze_dims(t, x, dims):
    """t reduced over dims (keepdim=False) back to broadcastable with x."""
    for d in sorted(d % x.dim() for d in dims):
        t = t.unsqueeze(d)
    return t


def _pnorm(x, p, dims, keepdim):
    if x.dtype in (cthtorch.float16, cthtorch.bfloat16):
        # torch accumulates half-precision norms in float and rounds once: squaring in bf16 first moves the result
        return _pnorm(x.float(), p, dims, keepdim).to(x.dtype)
    if p == 0:
        return (x != 0).sum(dims, keepdim=keepdim).to(x.dtype)
    if p == math.inf:
        return x.abs().amax(dims, keepdim)
    if p == -math.inf:
        return x.abs().amin(dims, keepdim)
    if p == 1:
        return x.abs().sum(dims, keepdim=keepdim)
    if p == 2:
        return (x * x).sum(dims, keepdim=keepdim).sqrt()
    return x.abs().pow(p).sum(dims, keepdim=keepdim).pow(1.0 / p)


class _VectorNorm(Function):
    """Its own backward so the gradient at a zero vector is 0, as PyTorch's."""

    @staticmethod
    def forward(ctx, x, p, dims, keepdim):
        r = _pnorm(x, p, dims, keepdim)
        ctx.p, ctx.dims, ctx.keepdim = p, dims, keepdim
        ctx.save_for_backward(x, r)
        return r

    @staticmethod
    def backward(ctx, g):
        x, r = ctx.saved_tensors
        p, dims = ctx.p, ctx.dims
        if not ctx.keepdim and x.dim() > 0:
            g, r = _unsqueeze_dims(g, x, dims), _unsqueeze_dims(r, x, dims)
        if p == 0:
            return x * 0, None, None, None
        if p in (math.inf, -math.inf):
            hit = (x.abs() == r).to(x.dtype)
            return x.sign() * hit * g / hit.sum(dims, keepdim=True), None, None, None
        if p == 1:
            return x.sign() * g, None, None, None
        if p == 2:
            return cthtorch.where(r == 0, cthtorch.zeros((), dtype=x.dtype), x * (g / r)), None, None, None
        # |x|^(p-2) is infinite at a zero element for p < 2: torch's gradient there is 0, not 0 * inf
        gx = x * x.abs().pow(p - 2) * (g / r.pow(p - 1))
        return cthtorch.where((r == 0) | (x == 0), cthtorch.zeros((), dtype=x.dtype), gx), None, None, None


class _Dist(Function):
    """torch.dist: the norm of input - other as one node with both inputs' edges, as torch's"""

    @staticmethod
    def forward(ctx, input, other, p):
        ctx.p = p
        ctx.save_for_backward(input, other)
        d = input - other
        return _pnorm(d, p, _dims(d, None), False)

    @staticmethod
    def backward(ctx, g):
        input, other = ctx.saved_tensors
        # recomputed from the inputs, so that a second derivative reaches them
        d = input - other
        gd = _VectorNorm.backward(_NormCtx(d, _pnorm(d, ctx.p, _dims(d, None), False), ctx.p, d), g)[0]
        return gd.sum_to_size(input.shape), -gd.sum_to_size(other.shape), None


class _NormCtx:
    """what _VectorNorm.backward reads of its ctx, for _Dist's backward"""
    def __init__(self, x, r, p, d):
        self.saved_tensors, self.p, self.dims, self.keepdim = (x, r), p, _dims(d, None), False


# torch's names: grad_fn reprs (and so printed tensors) read as in torch
name_node(_VectorNorm, "LinalgVectorNormBackward0")
name_node(_Dist, "DistBackward0")


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    if not x.is_complex():
        _checks.floating(x, "linalg.vector_norm")
    if dtype is not None:
        if cthtorch.promote_types(x.dtype, dtype) != dtype:
            raise RuntimeError("linalg.vector_norm: the dtype of the input (%s) should be convertible without "
                               "narrowing to the specified dtype (%s)"
                               % (_dtype_name(x.dtype), _dtype_name(dtype)))
        x = x.to(dtype)
    if isinstance(ord, str):
        raise RuntimeError("linalg.vector_norm: ord must be a number")
    if x.is_complex():   # a complex vector's p-norm is its moduli's (a real result, torch's dtype)
        x = x.abs()
    dims = _dims(x, dim)
    if ord in (math.inf, -math.inf) and x.numel() == 0:
        if dim is None:
            raise RuntimeError("linalg.vector_norm cannot compute the %s norm on an empty tensor because the "
                               "operation does not have an identity" % ("inf" if ord > 0 else "-inf"))
        for d in dims:
            if x.shape[d] == 0:
                raise RuntimeError("linalg.vector_norm cannot compute the %s norm on the dimension %d"
                                   "because this dimension is empty and the operation does not have an identity"
                                   % ("inf" if ord > 0 else "-inf", d))
    if x.requires_grad and cthtorch.is_grad_enabled():
        return _VectorNorm.apply(x, float(ord), dims, keepdim)
    return _pnorm(x, float(ord), dims, keepdim)


def _matrix_dims(A, dim, name):
    if A.dim() < 2:
        raise RuntimeError("%s: The input tensor A must have at least 2 dimensions." % name)
    d0, d1 = (d % A.dim() for d in dim)
    if d0 == d1:
        raise RuntimeError("%s: dims must be different. Got (%d, %d)" % (name, dim[0], dim[1]))
    return d0, d1


def _svd_norm(A, ord, d0, d1, keepdim):
    S = cthtorch.linalg.svdvals(A.movedim((d0, d1), (-2, -1)))
    r = S.sum(-1) if ord == "nuc" else (S.amax(-1) if ord == 2 else S.amin(-1))
    if keepdim:
        for d in sorted((d0, d1)):
            r = r.unsqueeze(d)
    return r


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    name = "linalg.matrix_norm"
    _checks.floating(A, name)
    d0, d1 = _matrix_dims(A, dim, name)
    if dtype is not None:
        A = A.to(dtype)
    if ord == "fro":
        return vector_norm(A, 2, (d0, d1), keepdim)
    if ord in ("nuc", 2, -2):
        return _svd_norm(A, ord, d0, d1, keepdim)
    if ord in (1, -1, math.inf, -math.inf):
        # 1: max column sum (sum over rows d0); inf: max row sum
        s, m = (d0, d1) if ord in (1, -1) else (d1, d0)
        r = A.abs().sum(s, keepdim=True)
        r = r.amax(m, keepdim=True) if ord > 0 else r.amin(m, keepdim=True)
        return r if keepdim else r.squeeze((d0, d1))
    if isinstance(ord, str):
        raise RuntimeError("linalg.matrix_norm: Order %s not supported." % ord)
    raise RuntimeError("linalg.matrix_norm: Order %s not supported." % (int(ord) if ord == int(ord) else ord))


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None:
        if len(dim) == 1:
            return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)
        return matrix_norm(A, "fro" if ord is None else ord, dim, keepdim, dtype=dtype)
    if ord is None:
        return vector_norm(A, 2, None, keepdim, dtype=dtype)
    if A.dim() not in (1, 2):
        raise RuntimeError("linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got %dD."
                           % A.dim())
    if A.dim() == 1:
        return vector_norm(A, ord, None, keepdim, dtype=dtype)
    return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)


def torch_norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """Legacy torch.norm / Tensor.norm: numeric p is always a vector norm."""
    if isinstance(dim, int):
        dim = (dim,)
    if isinstance(p, str):
        if p == "fro" and (dim is None or len(dim) <= 2):
            r = vector_norm(input, 2, dim, keepdim, dtype=dtype)
        elif p == "nuc":
            r = matrix_norm(input, "nuc", (-2, -1) if dim is None else dim, keepdim, dtype=dtype)
        else:
            raise RuntimeError("linalg.matrix_norm: Order %s not supported." % p)
    else:
        r = vector_norm(input, 2 if p is None else p, dim, keepdim, dtype=dtype)
    if out is not None:
        from cthtorch._ops.torch_api import _write_out
        return _write_out("norm", out, r)
    return r


def tensor_norm(self, p="fro", dim=None, keepdim=False, dtype=None):
    """Tensor.norm: torch.norm without out= (its fourth positional argument is dtype)"""
    return torch_norm(self, p, dim, keepdim, dtype=dtype)


# argument errors name the method as torch's do ("Tensor.norm() got an unexpected keyword argument 'out'")
tensor_norm.__name__, tensor_norm.__qualname__ = "norm", "Tensor.norm"   # vmap finds its rule by the name


def frobenius_norm(input, dim=(-2, -1), keepdim=False):
    return vector_norm(input, 2, dim, keepdim)


def nuclear_norm(input, dim=(-2, -1), keepdim=False):
    if isinstance(dim, bool):   # nuclear_norm(input, keepdim)
        dim, keepdim = (-2, -1), dim
    return matrix_norm(input, "nuc", dim, keepdim)


def dist(input, other, p=2):
    if not isinstance(other, cthtorch.Tensor):
        raise TypeError("dist(): argument 'other' must be Tensor, not %s" % type(other).__name__)
    if cthtorch.is_grad_enabled() and (input.requires_grad or other.requires_grad):
        _checks.floating(input, "linalg.vector_norm")
        return _Dist.apply(input, other, float(p))
    return vector_norm(input - other, p)


def renorm(input, p, dim, maxnorm):
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if input.dim() <= 1:
        raise RuntimeError("renorm: input needs at least 2 dimensions, got %d dimensions" % input.dim())
    dims = [d for d in range(input.dim()) if d != dim % input.dim()]
    n = vector_norm(input, p, dims, keepdim=True)
    # PyTorch scales the over-long slices by maxnorm / (norm + 1e-7)
    factor = cthtorch.where(n > maxnorm, maxnorm / (n + 1e-7), cthtorch.ones((), dtype=n.dtype))
    return input * factor


@fp32_on_cpu
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    if compute_mode not in ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                            "donot_use_mm_for_euclid_dist"):   # torch's Python checks it before the op's own
        raise ValueError("%s is not a valid value for compute_mode" % compute_mode)
    if x1.dim() < 2:
        raise RuntimeError("cdist only supports at least 2D tensors, X1 got: %dD" % x1.dim())
    if x2.dim() < 2:
        raise RuntimeError("cdist only supports at least 2D tensors, X2 got: %dD" % x2.dim())
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError("X1 and X2 must have the same number of columns. X1: %d X2: %d"
                           % (x1.shape[-1], x2.shape[-1]))
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    _checks.floating(x1, "cdist")
    P, R = x1.shape[-2], x2.shape[-2]
    use_mm = p == 2 and (compute_mode == "use_mm_for_euclid_dist" or
                         (compute_mode == "use_mm_for_euclid_dist_if_necessary" and (P > 25 or R > 25)))
    if use_mm:
        # |a - b|^2 = |a|^2 + |b|^2 - 2 a.b through one GEMM, as PyTorch does
        n1 = (x1 * x1).sum(-1, keepdim=True)
        n2 = (x2 * x2).sum(-1, keepdim=True)
        d2 = n1 - 2 * cthtorch.matmul(x1, x2.mT) + n2.mT
        return d2.clamp_min(1e-30).sqrt()
    if cthtorch.is_grad_enabled() and (x1.requires_grad or x2.requires_grad):
        return _Cdist.apply(x1, x2, p)   # one CdistBackward0 node, as torch's direct (non-GEMM) path
    return _cdist_direct(x1, x2, p)


def _cdist_direct(x1, x2, p):
    return vector_norm(x1.unsqueeze(-2) - x2.unsqueeze(-3), p, -1)


class _Cdist(Function):
    @staticmethod
    def forward(ctx, x1, x2, p):
        ctx.save_for_backward(x1, x2)
        ctx.p = p
        return _cdist_direct(x1.detach(), x2.detach(), p)

    @staticmethod
    def backward(ctx, g):
        # the norm of differences differentiated again
        return _recomputed_grads(lambda a, b: _cdist_direct(a, b, ctx.p), ctx.saved_tensors,
                                 ctx.needs_input_grad[:2], (g,)) + (None,)


name_node(_Cdist, "CdistBackward0")
