import math

import cthtorch as torch

from .cauchy import Cauchy
from .folded import _FoldedAtZero

__all__ = ["HalfCauchy"]


class HalfCauchy(_FoldedAtZero):
    _base = Cauchy

    @property
    def mean(self):
        return torch.full(self._extended_shape(), math.inf, dtype=self.scale.dtype, device=self.scale.device)

    @property
    def variance(self):
        return self.base_dist.variance
