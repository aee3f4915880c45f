"""torch.fx marks its public API with @compatibility(is_backward_compatible=...);
the decorator only records the promise on the object."""


def compatibility(is_backward_compatible):
    def mark(fn):
        fn._fx_backward_compatible = is_backward_compatible
        return fn
    return mark
