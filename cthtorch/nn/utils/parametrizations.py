"""nn.utils.parametrizations: orthogonal, weight_norm and spectral_norm as parametrizations."""
import cthtorch
from cthtorch.nn import functional as F
from cthtorch.nn.modules.module import Module
from cthtorch.nn.utils import parametrize
from cthtorch.nn.utils._norm_helpers import default_spectral_dim, norm_except_dim, reshape_weight_to_matrix, \
    weight_norm_

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return weight_norm_(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.dim()
        if dim >= ndim or dim < -ndim:
            raise IndexError("Dimension out of range (expected to be in range of [-%d, %d] but got %d)"
                             % (ndim, ndim - 1, dim))
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got n_power_iterations=%d"
                             % n_power_iterations)
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            mat = reshape_weight_to_matrix(weight, self.dim)
            h, w = mat.shape
            self.register_buffer("_u", F.normalize(mat.new_empty(h).normal_(0, 1), dim=0, eps=eps))
            self.register_buffer("_v", F.normalize(mat.new_empty(w).normal_(0, 1), dim=0, eps=eps))
            self._power_method(mat, 15)

    def _power_method(self, mat, n):
        with cthtorch.no_grad():
            for _ in range(n):
                self._u.copy_(F.normalize(cthtorch.mv(mat, self._v), dim=0, eps=self.eps))
                self._v.copy_(F.normalize(cthtorch.mv(mat.t(), self._u), dim=0, eps=self.eps))

    def forward(self, weight):
        if weight.dim() == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        mat = reshape_weight_to_matrix(weight, self.dim)
        if self.training:
            self._power_method(mat.detach(), self.n_power_iterations)
        sigma = cthtorch.dot(self._u.clone(), cthtorch.mv(mat, self._v.clone()))
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    weight = getattr(module, name, None)
    if not isinstance(weight, cthtorch.Tensor):
        raise ValueError("Module '%s' has no parameter or buffer with name '%s'" % (module, name))
    dim = default_spectral_dim(module) if dim is None else dim
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


def _make_orthogonal(A):
    """Q of A = QR (A tall) with R's diagonal made non-negative"""
    Q, R = cthtorch.linalg.qr(A)
    return Q * R.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


def _is_orthogonal(Q):
    n, k = Q.shape[-2], Q.shape[-1]
    eps = 10.0 * n * cthtorch.finfo(Q.dtype).eps
    return cthtorch.allclose(Q.mH @ Q, cthtorch.eye(k, dtype=Q.dtype), atol=eps)


class _Orthogonal(Module):
    """An orthogonal matrix (or batch) from an unconstrained one through the map named; with use_trivialization
    the result is base @ map(X), base being the matrix last assigned, so assigning Q gives back Q exactly."""

    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:   # work on the tall matrix
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in ("matrix_exp", "cayley"):
            X = X.tril()
            if n != k:   # embedded as the first columns of a square matrix
                X = cthtorch.cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - X.mH   # skew-symmetric, so its exponential or Cayley transform is orthogonal
            if self.orthogonal_map == "matrix_exp":
                Q = cthtorch.matrix_exp(A)
            else:
                Id = cthtorch.eye(n, dtype=A.dtype)
                Q = cthtorch.linalg.solve(Id - 0.5 * A, Id + 0.5 * A)
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            Q = cthtorch.linalg.householder_product(A, 2.0 / (1.0 + (A * A).sum(dim=-2)))
            # X's diagonal holds the signs (+-1) of Q's columns; not differentiated through
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, "base"):
            Q = self.base @ Q
        return Q.mT if transposed else Q

    def right_inverse(self, Q):
        with cthtorch.no_grad():
            if Q.shape != self.shape:
                raise ValueError("Expected a matrix or batch of matrices of shape %s. Got a tensor of shape %s."
                                 % (self.shape, Q.shape))
            Q_init = Q
            n, k = Q.shape[-2], Q.shape[-1]
            transposed = n < k
            if transposed:
                Q = Q.mT
                n, k = k, n
            if not hasattr(self, "base"):
                if self.orthogonal_map in ("matrix_exp", "cayley"):
                    raise NotImplementedError("It is not possible to assign to the matrix exponential or the Cayley "
                                              "parametrizations when use_trivialization=False.")
                # the inverse of the Householder map: Q's QR reflectors, with R's diagonal signs on the diagonal
                # (so Q = (-Q) @ (-Id) is not a second answer); a zero tau is a reflection LAPACK skipped
                A, tau = cthtorch.geqrf(Q)
                A.diagonal(dim1=-2, dim2=-1).sign_()
                A.diagonal(dim1=-2, dim2=-1)[tau == 0.0] *= -1
                return A.mT if transposed else A
            if n == k:
                Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
            else:   # completed to a square orthogonal matrix with random columns
                N = cthtorch.randn(*(tuple(Q.shape[:-2]) + (n, n - k)), dtype=Q.dtype)
                Q = _make_orthogonal(cthtorch.cat([Q, N], dim=-1))
            self.base = Q
            # X = -Id maps to the identity under every map (householder's signs included), so the weight is base
            neg_id = cthtorch.zeros_like(Q_init)
            neg_id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
            return neg_id


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    weight = getattr(module, name, None)
    if not isinstance(weight, cthtorch.Tensor):
        raise ValueError("Module '%s' has no parameter or buffer with name '%s'" % (module, name))
    if weight.ndim < 2:
        raise ValueError("Expected a matrix or batch of matrices. Got a tensor of %d dimensions." % weight.ndim)
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.shape[-2] == weight.shape[-1] or weight.is_complex() else \
            "householder"
    if orthogonal_map not in ("matrix_exp", "cayley", "householder"):
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". Got: %s'
                         % orthogonal_map)
    orth = _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
