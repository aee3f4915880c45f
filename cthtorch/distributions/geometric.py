import cthtorch as torch
import cthtorch.nn.functional as F

from . import constraints
from .bernoulli import _BinaryParams
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Geometric"]


class Geometric(_BinaryParams, Distribution):
    """Number of failures before the first success."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        is_scalar, _ = self._init_binary(probs, logits)
        batch_shape = torch.Size() if is_scalar else self._param.size()
        super().__init__(batch_shape, validate_args=validate_args)
        if self._validate_args and probs is not None:
            # probs must be in (0, 1]; unit_interval alone allows 0
            value = self.probs
            valid = value > 0
            if not bool(valid.all()):
                invalid_value = value.data[~valid]
                raise ValueError("Expected parameter probs "
                                 f"({type(value).__name__} of shape {tuple(value.shape)}) "
                                 f"of distribution {repr(self)} "
                                 f"to be positive but found invalid values:\n{invalid_value}")

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Geometric, batch_shape, _instance, fill=self._expand_binary)

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return torch.zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=torch.Size()):
        shape = self._extended_shape(sample_shape)
        tiny = torch.finfo(self.probs.dtype).tiny
        with torch.no_grad():
            u = self.probs.new_empty(shape).uniform_(tiny, 1)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        # 0 * log(0) is 0 here (probs == 1, value == 0)
        probs = torch.where((probs == 1) & (value == 0), torch.zeros_like(probs), probs)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none") / self.probs
