import math
from numbers import Number

import cthtorch as torch

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """Survival function (1 + c z)^(-1/c), z = (x - loc) / scale; c = 0 is the
    exponential limit exp(-z). Outside the support the formulas run on and
    give what they give (NaN past an upper bound), as torch's do."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive, "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        if all(isinstance(v, Number) for v in (loc, scale, concentration)):
            batch_shape = torch.Size()
        else:
            batch_shape = self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(GeneralizedPareto, batch_shape, _instance, ("loc", "scale", "concentration"))

    def _z(self, x):
        return (x - self.loc) / self.scale

    def _is_exponential(self):
        # |c| <= 1e-8 takes the c -> 0 limit, as torch's isclose(c, 0) does
        return self.concentration.abs() <= 1e-8

    def _safe_concentration(self):
        # 1 where the c = 0 branch is taken, so the other branch stays finite there (its gradient too)
        c = self.concentration
        return torch.where(self._is_exponential(), torch.ones_like(c), c)

    def rsample(self, sample_shape=torch.Size()):
        u = torch.rand(self._extended_shape(sample_shape), dtype=self.loc.dtype, device=self.loc.device)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        safe = self._safe_concentration()
        y = 1 / safe + 1
        # c = -1 is the uniform law: its exponent 1/c + 1 is 0, and 0 * log(0) at the upper end counts as 0
        general = -torch.where(y == 0, y, y * torch.log1p(safe * z))
        return torch.where(self._is_exponential(), -z, general) - torch.log(self.scale)

    def log_survival_function(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        safe = self._safe_concentration()
        return torch.where(self._is_exponential(), -z, -torch.log1p(safe * z) / safe)

    def log_cdf(self, value):
        return torch.log1p(-torch.exp(self.log_survival_function(value)))

    def cdf(self, value):
        return torch.exp(self.log_cdf(value))

    def icdf(self, value):
        safe = self._safe_concentration()
        log1mu = torch.log1p(-value)
        z = torch.where(self._is_exponential(), -log1mu, torch.expm1(-safe * log1mu) / safe)
        return self.loc + self.scale * z

    @property
    def mean(self):
        c = self.concentration
        return torch.where(c < 1, self.loc + self.scale / (1 - torch.where(c < 1, c, torch.zeros_like(c))),
                           torch.full_like(c, math.nan))

    @property
    def variance(self):
        c = self.concentration
        safe = torch.where(c < 0.5, c, torch.zeros_like(c))
        return torch.where(c < 0.5, self.scale.pow(2) / ((1 - safe).pow(2) * (1 - 2 * safe)),
                           torch.full_like(c, math.nan))

    def entropy(self):
        return torch.log(self.scale) + self.concentration + 1

    @property
    def mode(self):
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        c = self.concentration
        upper = torch.where(c < 0, self.loc - self.scale / torch.where(c < 0, c, -torch.ones_like(c)),
                            torch.full_like(self.loc, math.inf))
        return constraints.interval(self.loc, upper)
