import math
from numbers import Number

import cthtorch as torch

from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import broadcast_all

__all__ = ["FisherSnedecor"]


class FisherSnedecor(Distribution):
    """(X1 / df1) / (X2 / df2) for X_i ~ Chi2(df_i), i.e. Gamma(df_i / 2, df_i / 2) ratios."""
    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        batch_shape = torch.Size() if isinstance(df1, Number) and isinstance(df2, Number) else self.df1.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        def fill(new, shape):
            new._gamma1 = self._gamma1.expand(shape)
            new._gamma2 = self._gamma2.expand(shape)
        return self._expand_params(FisherSnedecor, batch_shape, _instance, ("df1", "df2"), fill)

    @property
    def mean(self):
        df2 = self.df2
        return torch.where(df2 > 2, df2 / (df2 - 2), torch.full_like(df2, math.nan))

    @property
    def mode(self):
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return torch.where(self.df1 > 2, mode, torch.full_like(mode, math.nan))

    @property
    def variance(self):
        df1, df2 = self.df1, self.df2
        var = 2 * df2.pow(2) * (df1 + df2 - 2) / (df1 * (df2 - 2).pow(2) * (df2 - 4))
        return torch.where(df2 > 4, var, torch.full_like(var, math.nan))

    def rsample(self, sample_shape=torch.Size()):
        shape = self._extended_shape(sample_shape)
        tiny = torch.finfo(self.df1.dtype).tiny
        x1 = self._gamma1.rsample(sample_shape).view(shape)
        x2 = self._gamma2.rsample(sample_shape).view(shape).clamp(min=tiny)
        return (x1 / x2).clamp(min=tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        h1, h2 = self.df1 * 0.5, self.df2 * 0.5
        ratio = self.df1 / self.df2
        log_norm = (h1 + h2).lgamma() - h1.lgamma() - h2.lgamma()
        return log_norm + h1 * ratio.log() + (h1 - 1) * torch.log(value) - (h1 + h2) * torch.log1p(ratio * value)
