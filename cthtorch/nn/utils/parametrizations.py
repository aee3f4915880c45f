"""nn.utils.parametrizations: weight_norm and spectral_norm as parametrizations (orthogonal: not implemented)."""
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


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    raise NotImplementedError("nn.utils.parametrizations.orthogonal is not implemented in cthtorch")
