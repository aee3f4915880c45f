import math

import cthtorch as torch

from . import constraints
from .chi2 import Chi2
from .distribution import Distribution
from .utils import _standard_normal, broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        def fill(new, shape):
            new._chi2 = self._chi2.expand(shape)
        return self._expand_params(StudentT, batch_shape, _instance, ("df", "loc", "scale"), fill)

    @property
    def mean(self):
        m = self.loc.clone(memory_format=torch.contiguous_format)
        return torch.where(self.df <= 1, torch.full_like(m, math.nan), m)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        m = self.scale.pow(2) * self.df / (self.df - 2)
        m = torch.where(self.df <= 2, torch.full_like(m, math.inf), m)
        return torch.where(self.df <= 1, torch.full_like(m, math.nan), m)

    def rsample(self, sample_shape=torch.Size()):
        # X / sqrt(Z / df) with X standard normal and Z ~ Chi2(df)
        shape = self._extended_shape(sample_shape)
        x = _standard_normal(shape, dtype=self.df.dtype, device=self.df.device)
        z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * x * torch.rsqrt(z / self.df)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        log_norm = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
                    + torch.lgamma(0.5 * self.df) - torch.lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * torch.log1p(y ** 2.0 / self.df) - log_norm

    def entropy(self):
        lbeta = torch.lgamma(0.5 * self.df) + math.lgamma(0.5) - torch.lgamma(0.5 * (self.df + 1))
        return (self.scale.log() + 0.5 * (self.df + 1) * (torch.digamma(0.5 * (self.df + 1))
                                                          - torch.digamma(0.5 * self.df))
                + 0.5 * self.df.log() + lbeta)
