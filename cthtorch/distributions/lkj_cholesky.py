import math

import cthtorch as torch

from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """Cholesky factors of dim x dim correlation matrices whose law is
    det(C)^(concentration - 1) (Lewandowski, Kurowicka and Joe 2009), sampled
    by the onion method: row i is a random direction scaled by the square
    root of a Beta draw, the diagonal taking what is left of unit length."""
    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = self.concentration.size()
        event_shape = torch.Size((dim, dim))
        # row i's squared off-diagonal length is Beta(i/2, concentration + (dim - 2 - i)/2) (row 0 has none)
        marginal = self.concentration + 0.5 * (self.dim - 2)
        offset = torch.arange(self.dim - 1, dtype=self.concentration.dtype, device=self.concentration.device)
        offset = torch.cat([offset.new_zeros((1,)), offset])
        self._beta = Beta(offset + 0.5, marginal.unsqueeze(-1) - 0.5 * offset)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = torch.Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = Beta(self._beta.concentration1.expand(batch_shape + (self.dim,)),
                         self._beta.concentration0.expand(batch_shape + (self.dim,)))
        super(LKJCholesky, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=torch.Size()):
        with torch.no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            u = torch.randn(self._extended_shape(sample_shape), dtype=y.dtype, device=y.device).tril(-1)
            u = u / u.norm(dim=-1, keepdim=True)
            u[..., 0, :].fill_(0.0)            # row 0 is (1, 0, ..., 0): its 0/0 direction is dropped
            w = torch.sqrt(y) * u
            diag = torch.clamp(1 - torch.sum(w ** 2, dim=-1), min=torch.finfo(w.dtype).tiny).sqrt()
            return w + torch.diag_embed(diag)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        # density in the factor L: prod_i L_ii^(dim - i + 2 (concentration - 1)), i = 2..dim
        diag = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = torch.arange(2, self.dim + 1, device=self.concentration.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = torch.sum(order * diag.log(), dim=-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        normalizer = 0.5 * dm1 * math.log(math.pi) + torch.mvlgamma(alpha - 0.5, dm1) - torch.lgamma(alpha) * dm1
        return unnormalized - normalizer
