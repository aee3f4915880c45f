"""torchvision.ops.stochastic_depth (Huang et al. 2016): drop a residual branch at random while training."""
import cthtorch
from cthtorch import nn


def stochastic_depth(input, p, mode, training=True):
    """Zero the whole input ("batch") or each sample's row ("row") with probability p, scaling what survives
    by 1/(1-p); the identity when not training or p == 0."""
    if p < 0.0 or p > 1.0:
        raise ValueError("drop probability has to be between 0 and 1, but got %s" % p)
    if mode not in ("batch", "row"):
        raise ValueError("mode has to be either 'batch' or 'row', but got %s" % mode)
    if not training or p == 0.0:
        return input
    keep = 1.0 - p
    shape = [input.shape[0]] + [1] * (input.ndim - 1) if mode == "row" else [1] * input.ndim
    noise = cthtorch.empty(shape, dtype=input.dtype, device=input.device).bernoulli_(keep)
    if keep > 0.0:
        noise.div_(keep)
    return input * noise


class StochasticDepth(nn.Module):
    """See stochastic_depth."""

    def __init__(self, p, mode):
        super().__init__()
        self.p, self.mode = p, mode

    def forward(self, input):
        return stochastic_depth(input, self.p, self.mode, self.training)

    def __repr__(self):
        return "%s(p=%s, mode=%s)" % (type(self).__name__, self.p, self.mode)
