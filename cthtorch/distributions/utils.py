"""Helpers shared by the distributions: parameter broadcasting, the
probs <-> logits maps, and lazy_property (parameters computed on first use)."""
from functools import update_wrapper
from numbers import Number

import cthtorch as torch
import cthtorch.nn.functional as F

euler_constant = 0.57721566490153286060


def broadcast_all(*values):
    """Broadcasts tensors and numbers to one shape; numbers take the dtype
    of the first tensor (or the default float dtype)."""
    if not all(isinstance(v, (torch.Tensor, Number)) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number, torch.Tensor or objects "
                         "implementing __torch_function__.")
    if not all(isinstance(v, torch.Tensor) for v in values):
        ref = next((v for v in values if isinstance(v, torch.Tensor)), None)
        dtype = ref.dtype if ref is not None else torch.get_default_dtype()
        values = [v if isinstance(v, torch.Tensor) else torch.tensor(v, dtype=dtype) for v in values]
    return torch.broadcast_tensors(*values)


def _standard_normal(shape, dtype, device):
    return torch.randn(shape, dtype=dtype, device=device)


def _sum_rightmost(value, dim):
    """Sums out the `dim` rightmost dimensions."""
    if dim == 0:
        return value
    return value.reshape(value.shape[:-dim] + (-1,)).sum(-1)


def clamp_probs(probs):
    eps = torch.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def logits_to_probs(logits, is_binary=False):
    if is_binary:
        return torch.sigmoid(logits)
    return F.softmax(logits, dim=-1)


def probs_to_logits(probs, is_binary=False):
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return torch.log(ps_clamped) - torch.log1p(-ps_clamped)
    return torch.log(ps_clamped)


class lazy_property:
    """Computes the wrapped method once per instance and stores the value as
    an attribute of the same name (so later reads are plain lookups)."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with torch.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    # what the class attribute looks like: both a lazy_property and a property
    def __init__(self, wrapped):
        property.__init__(self, wrapped)


def tril_matrix_to_vec(mat, diag=0):
    n = mat.shape[-1]
    rows, cols = _tril_index(n, diag)
    return mat[..., rows, cols]


def vec_to_tril_matrix(vec, diag=0):
    # the matrix side n solves n(n+1)/2 + n*diag = len(vec)
    m = vec.shape[-1]
    n = 0
    while len(_tril_index(n, diag)[0]) < m:
        n += 1
    if len(_tril_index(n, diag)[0]) != m:
        raise ValueError("Incorrect vector length: %d does not fill a lower triangle" % m)
    rows, cols = _tril_index(n, diag)
    mat = vec.new_zeros(vec.shape[:-1] + (n, n))
    mat[..., rows, cols] = vec
    return mat


def _tril_index(n, diag):
    pairs = [(i, j) for i in range(n) for j in range(n) if j - i <= diag]
    return torch.tensor([p[0] for p in pairs], dtype=torch.long), torch.tensor([p[1] for p in pairs], dtype=torch.long)
