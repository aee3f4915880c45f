"""nn.utils.spectral_norm / remove_spectral_norm: the hook-based form: weight = weight_orig / sigma,
sigma estimated by power iteration on buffers weight_u, weight_v (updated in training mode)."""
import cthtorch
from cthtorch.nn import functional as F
from cthtorch.nn.parameter import Parameter
from cthtorch.nn.utils._norm_helpers import default_spectral_dim, reshape_weight_to_matrix

__all__ = ["SpectralNorm", "spectral_norm", "remove_spectral_norm"]


class SpectralNorm:
    _version = 1

    def __init__(self, name="weight", n_power_iterations=1, dim=0, eps=1e-12):
        self.name, self.dim, self.eps = name, dim, eps
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got n_power_iterations=%d"
                             % n_power_iterations)
        self.n_power_iterations = n_power_iterations

    def reshape_weight_to_matrix(self, weight):
        return reshape_weight_to_matrix(weight, self.dim)

    def compute_weight(self, module, do_power_iteration):
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with cthtorch.no_grad():
                for _ in range(self.n_power_iterations):
                    v.copy_(F.normalize(cthtorch.mv(mat.t(), u), dim=0, eps=self.eps))
                    u.copy_(F.normalize(cthtorch.mv(mat, v), dim=0, eps=self.eps))
                u, v = u.clone(), v.clone()
        sigma = cthtorch.dot(u, cthtorch.mv(mat, v))
        return weight / sigma

    def remove(self, module):
        with cthtorch.no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        for suffix in ("", "_u", "_v", "_orig"):
            delattr(module, self.name + suffix)
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))

    @staticmethod
    def apply(module, name, n_power_iterations, dim, eps):
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError("Cannot register two spectral_norm hooks on the same parameter %s" % name)
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        with cthtorch.no_grad():
            h, w = fn.reshape_weight_to_matrix(weight).shape
            u = F.normalize(weight.new_empty(h).normal_(0, 1), dim=0, eps=fn.eps)
            v = F.normalize(weight.new_empty(w).normal_(0, 1), dim=0, eps=fn.eps)
        delattr(module, name)
        module.register_parameter(name + "_orig", weight)
        setattr(module, name, weight.data)
        module.register_buffer(name + "_u", u)
        module.register_buffer(name + "_v", v)
        module.register_forward_pre_hook(fn)
        return fn


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    SpectralNorm.apply(module, name, n_power_iterations, default_spectral_dim(module) if dim is None else dim, eps)
    return module


def remove_spectral_norm(module, name="weight"):
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError("spectral_norm of '%s' not found in %s" % (name, module))
