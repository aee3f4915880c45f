import math
import cthtorch as torch
import cthtorch.nn.functional as F

from . import constraints
from .bernoulli import _BinaryParams
from .exp_family import ExponentialFamily
from .utils import broadcast_all, clamp_probs

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(_BinaryParams, ExponentialFamily):
    """The density on [0, 1] proportional to p^x (1-p)^(1-x) (Loaiza-Ganem and
    Cunningham 2019). Its normalizer and moments are 0/0 at p = 1/2: inside
    `lims` they are replaced by their Taylor expansions around 1/2."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        is_scalar, _ = self._init_binary(probs, logits)
        if probs is not None:
            # validated before clamping (0 and 1 are in the support of the parameter)
            if validate_args is not None and not bool(self.arg_constraints["probs"].check(self.probs).all()):
                raise ValueError("The parameter probs has invalid values")
            self.probs = self._param = clamp_probs(self.probs)
        self._lims = lims
        super().__init__(torch.Size() if is_scalar else self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        def fill(new, shape):
            self._expand_binary(new, shape)
            new._lims = self._lims
        return self._expand_params(ContinuousBernoulli, batch_shape, _instance, fill=fill)

    def _outside_unstable_region(self):
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self):
        # inside the unstable region any stable value will do: the Taylor branch is taken there
        return torch.where(self._outside_unstable_region(), self.probs, torch.full_like(self.probs, self._lims[0]))

    @staticmethod
    def _log_ratio(p):
        return torch.log1p(-p) - torch.log(p)

    def _cont_bern_log_norm(self):
        """log C(p), C(p) = 2 atanh(1 - 2p) / (1 - 2p)."""
        p = self._cut_probs()
        below = torch.where(p <= 0.5, p, torch.zeros_like(p))
        above = torch.where(p >= 0.5, p, torch.ones_like(p))
        log_norm = torch.log(torch.abs(self._log_ratio(p))) - torch.where(
            p <= 0.5, torch.log1p(-2.0 * below), torch.log(2.0 * above - 1.0))
        x = torch.pow(self.probs - 0.5, 2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return torch.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        p = self._cut_probs()
        mus = p / (2.0 * p - 1.0) + 1.0 / self._log_ratio(p)
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * torch.pow(x, 2)) * x
        return torch.where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self):
        return torch.sqrt(self.variance)

    @property
    def variance(self):
        p = self._cut_probs()
        vs = p * (p - 1.0) / torch.pow(1.0 - 2.0 * p, 2) + 1.0 / torch.pow(self._log_ratio(p), 2)
        x = torch.pow(self.probs - 0.5, 2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return torch.where(self._outside_unstable_region(), vs, taylor)

    def sample(self, sample_shape=torch.Size()):
        with torch.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=torch.Size()):
        u = torch.rand(self._extended_shape(sample_shape), dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -F.binary_cross_entropy_with_logits(logits, value, reduction="none") + self._cont_bern_log_norm()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        p = self._cut_probs()
        cdfs = (torch.pow(p, value) * torch.pow(1.0 - p, 1.0 - value) + p - 1.0) / (2.0 * p - 1.0)
        unbounded = torch.where(self._outside_unstable_region(), cdfs, value)
        return torch.where(value <= 0.0, torch.zeros_like(unbounded),
                           torch.where(value >= 1.0, torch.ones_like(unbounded), unbounded))

    def icdf(self, value):
        p = self._cut_probs()
        inv = (torch.log1p(-p + value * (2.0 * p - 1.0)) - torch.log1p(-p)) / (torch.log(p) - torch.log1p(-p))
        return torch.where(self._outside_unstable_region(), inv, value)

    def entropy(self):
        log_q, log_p = torch.log1p(-self.probs), torch.log(self.probs)
        return self.mean * (log_q - log_p) - self._cont_bern_log_norm() - log_q

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        """log C as a function of the natural parameter x = logit(p)."""
        out = (x <= self._lims[0] - 0.5) | (x > self._lims[1] - 0.5)
        cut = torch.where(out, x, torch.full_like(x, self._lims[0] - 0.5))
        log_norm = torch.log(torch.abs(torch.expm1(cut))) - torch.log(torch.abs(cut))
        taylor = 0.5 * x + torch.pow(x, 2) / 24.0 - torch.pow(x, 4) / 2880.0
        return torch.where(out, log_norm, taylor)
