import math

from .folded import _FoldedAtZero
from .normal import Normal

__all__ = ["HalfNormal"]


class HalfNormal(_FoldedAtZero):
    _base = Normal

    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self):
        return self.scale.pow(2) * (1 - 2 / math.pi)
