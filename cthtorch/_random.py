"""Seeding the default generator (torch.manual_seed and friends)."""
from cthtorch import _C

_VF_normal = _C._VariableFunctions.normal   # the binding torch.normal extends


def manual_seed(seed):
    """Seeds the default generator and, as torch does, the CUDA generator (no
    GPU needed: the CUDA one is a (seed, offset) pair in ATen)."""
    g = _C.default_generator.manual_seed(int(seed))
    _C._cuda._manual_seed(g.initial_seed())
    return g


def seed():
    s = _C.default_generator.seed()
    _C._cuda._manual_seed(s)
    return s


def initial_seed():
    return _C.default_generator.initial_seed()


def get_rng_state():
    return _C.default_generator.get_state()


def set_rng_state(new_state):
    _C.default_generator.set_state(new_state)


def normal(mean, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None, device=None,
           pin_memory=False, requires_grad=False):
    """normal(mean, std[, size]): tensors broadcast; floats need a size."""
    import cthtorch
    if not isinstance(mean, cthtorch.Tensor) and not isinstance(std, cthtorch.Tensor):
        if size is None:
            raise TypeError("normal() received an invalid combination of arguments - got (float, float), "
                            "but expected one of: (Tensor mean, Tensor std), (float mean, float std, tuple of ints size)")
        t = cthtorch.empty(size, dtype=dtype, device=device) if out is None else out.resize_(size)
        t.normal_(mean, std, generator=generator)
        return t.requires_grad_(requires_grad) if requires_grad else t
    if not isinstance(mean, cthtorch.Tensor):
        mean = cthtorch.full_like(std, float(mean))
    if not isinstance(std, cthtorch.Tensor):
        if std < 0:
            raise RuntimeError("normal expects std >= 0.0, but found std %s" % std)
        std = cthtorch.full_like(mean, float(std))
    r = _VF_normal(mean, std, generator=generator)
    if out is not None:
        out.resize_(r.shape).copy_(r)
        return out
    return r
