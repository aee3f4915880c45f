"""Compose, RandomApply, RandomChoice, RandomOrder of v2: they pass the whole sample (one argument or several)
from transform to transform."""
import cthtorch


def _call(t, sample, several):
    return t(*sample) if several else t(sample)


class Compose(cthtorch.nn.Module):
    def __init__(self, transforms):
        super().__init__()
        if not isinstance(transforms, (list, tuple)):
            raise TypeError("Argument transforms should be a sequence of callables")
        if not transforms:
            raise ValueError("Pass at least one transform")
        self.transforms = transforms

    def forward(self, *inputs):
        several = len(inputs) > 1
        sample = inputs if several else inputs[0]
        for t in self.transforms:
            sample = _call(t, sample, several)
        return sample

    def extra_repr(self):
        # nn.Module's repr indents this by two more spaces, as torchvision's v2 containers print
        return "\n".join("    %s" % t for t in self.transforms)


class RandomApply(Compose):
    def __init__(self, transforms, p=0.5):
        if not isinstance(transforms, (list, tuple, cthtorch.nn.ModuleList)):
            raise TypeError("Argument transforms should be a sequence of callables or a `nn.ModuleList`")
        if not 0.0 <= p <= 1.0:
            raise ValueError("`p` should be a floating point value in the interval [0.0, 1.0].")
        cthtorch.nn.Module.__init__(self)
        self.transforms, self.p = transforms, p

    def forward(self, *inputs):
        several = len(inputs) > 1
        sample = inputs if several else inputs[0]
        if cthtorch.rand(1) >= self.p:
            return sample
        for t in self.transforms:
            sample = _call(t, sample, several)
        return sample

    def extra_repr(self):
        return "\n".join(["    p=%s" % self.p] + ["    %s" % t for t in self.transforms])


class RandomChoice(Compose):
    """One transform, drawn from torch's generator with probabilities p (uniform by default)"""

    def __init__(self, transforms, p=None):
        if not isinstance(transforms, (list, tuple)):
            raise TypeError("Argument transforms should be a sequence of callables")
        if p is None:
            p = [1] * len(transforms)
        elif len(p) != len(transforms):
            raise ValueError("Length of p doesn't match the number of transforms: %d != %d"
                             % (len(p), len(transforms)))
        cthtorch.nn.Module.__init__(self)
        self.transforms = transforms
        total = sum(p)
        self.p = [prob / total for prob in p]

    def forward(self, *inputs):
        idx = int(cthtorch.multinomial(cthtorch.tensor(self.p), 1))
        return self.transforms[idx](*inputs)


class RandomOrder(Compose):
    def forward(self, *inputs):
        several = len(inputs) > 1
        sample = inputs if several else inputs[0]
        for i in cthtorch.randperm(len(self.transforms)).tolist():
            sample = _call(self.transforms[i], sample, several)
        return sample
