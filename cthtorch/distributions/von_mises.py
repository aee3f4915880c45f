import math

import cthtorch as torch

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property

__all__ = ["VonMises"]


def _log_i0(k):
    # i0e(k) = I0(k) exp(-k): no overflow for large concentrations
    return torch.log(torch.special.i0e(k)) + k


def _best_fisher(loc, concentration, proposal_r, x):
    """Best and Fisher's (1979) wrapped-Cauchy rejection sampler, in float64:
    three uniforms per round (angle, accept test, sign); rounds repeat until
    every element has been accepted once."""
    done = torch.zeros(x.shape, dtype=torch.bool, device=loc.device)
    while not bool(done.all()):
        u1, u2, u3 = torch.rand((3,) + x.shape, dtype=x.dtype, device=x.device).unbind()
        z = torch.cos(math.pi * u1)
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
        if bool(accept.any()):
            x = torch.where(accept, (u3 - 0.5).sign() * f.acos(), x)
            done = done | accept
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(Distribution):
    """The circular normal on [-pi, pi): density exp(k cos(x - loc)) / (2 pi I0(k))."""
    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, torch.Size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(VonMises, batch_shape, _instance, ("loc", "concentration"))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        k = self.concentration
        return k * torch.cos(value - self.loc) - math.log(2 * math.pi) - _log_i0(k)

    @lazy_property
    def _loc(self):
        return self.loc.to(torch.double)

    @lazy_property
    def _concentration(self):
        return self.concentration.to(torch.double)

    @lazy_property
    def _proposal_r(self):
        k = self._concentration
        tau = 1 + torch.sqrt(1 + 4 * k ** 2)
        rho = (tau - torch.sqrt(2 * tau)) / (2 * k)
        r = (1 + rho ** 2) / (2 * rho)
        # tiny k: r's closed form cancels; its expansion is 1/k + k
        return torch.where(k < 1e-5, 1 / k + k, r)

    @torch.no_grad()
    def sample(self, sample_shape=torch.Size()):
        shape = self._extended_shape(sample_shape)
        x = torch.empty(shape, dtype=self._loc.dtype, device=self.loc.device)
        return _best_fisher(self._loc, self._concentration, self._proposal_r, x).to(self.loc.dtype)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        k = self.concentration
        # 1 - I1(k) / I0(k), the ratio taken of the scaled functions
        return 1 - torch.special.i1e(k) / torch.special.i0e(k)
