"""torch.quasirandom: SobolEngine's names, so programs that import it load; drawing is not implemented.

Matching torch's Sobol points needs the Joe-Kuo direction numbers for all of torch's 21201 dimensions (the
table torch compiles in), which cthtorch does not carry yet; the engine refuses construction with a
NotImplementedError rather than give other numbers."""

__all__ = ["SobolEngine"]


class SobolEngine:
    MAXBIT = 30
    MAXDIM = 21201

    def __init__(self, dimension, scramble=False, seed=None):
        if dimension > self.MAXDIM or dimension < 1:
            raise ValueError("Supported range of dimensionality for SobolEngine is [1, %d]" % self.MAXDIM)
        raise NotImplementedError("torch.quasirandom.SobolEngine is not implemented in cthtorch: its points need "
                                  "torch's table of Sobol direction numbers (21201 dimensions), which cthtorch "
                                  "does not carry")
