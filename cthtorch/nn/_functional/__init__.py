"""nn.functional's composite forms, one file per op family (loss, pooling, conv, sampling, distance,
normalization, sparse, activation, attention, shuffle); cthtorch.nn.functional re-exports them."""


def _F():
    """cthtorch.nn.functional, looked up at call time (it imports the files of this package)."""
    from cthtorch.nn import functional
    return functional
