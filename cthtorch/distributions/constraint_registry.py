"""biject_to(constraint) / transform_to(constraint): a transform from
unconstrained reals onto the constraint's set (for optimizing constrained
parameters). Registries keyed by constraint type, extendable by register."""
from . import constraints, transforms

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]


class ConstraintRegistry:
    def __init__(self):
        self._registry = {}
        super().__init__()

    def register(self, constraint, factory=None):
        if factory is None:
            return lambda factory: self.register(constraint, factory)
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not isinstance(constraint, type) or not issubclass(constraint, constraints.Constraint):
            raise TypeError("Expected constraint to be either a Constraint subclass or instance, "
                            f"but got {constraint}")
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint):
        try:
            factory = self._registry[type(constraint)]
        except KeyError:
            raise NotImplementedError(f"Cannot transform {type(constraint).__name__} constraints") from None
        return factory(constraint)


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


def _real(constraint):
    return transforms.identity_transform


def _positive(constraint):
    return transforms.ExpTransform()


def _greater_than(constraint):
    return transforms.ComposeTransform([transforms.ExpTransform(),
                                        transforms.AffineTransform(constraint.lower_bound, 1)])


def _less_than(constraint):
    return transforms.ComposeTransform([transforms.ExpTransform(),
                                        transforms.AffineTransform(constraint.upper_bound, -1)])


def _interval(constraint):
    # unit interval needs no affine step
    lower_is_0 = isinstance(constraint.lower_bound, (int, float)) and constraint.lower_bound == 0
    upper_is_1 = isinstance(constraint.upper_bound, (int, float)) and constraint.upper_bound == 1
    if lower_is_0 and upper_is_1:
        return transforms.SigmoidTransform()
    loc, scale = constraint.lower_bound, constraint.upper_bound - constraint.lower_bound
    return transforms.ComposeTransform([transforms.SigmoidTransform(), transforms.AffineTransform(loc, scale)])


def _simplex(constraint):
    return transforms.SoftmaxTransform()


for _reg in (biject_to, transform_to):
    _reg.register(constraints.real, _real)
    _reg.register(constraints.positive, _positive)
    _reg.register(constraints.nonnegative, _positive)
    _reg.register(constraints.greater_than, _greater_than)
    _reg.register(constraints.greater_than_eq, _greater_than)
    _reg.register(constraints.less_than, _less_than)
    _reg.register(constraints.interval, _interval)
    _reg.register(constraints.half_open_interval, _interval)
# the simplex's bijection is stick-breaking; softmax (not injective) is the cheaper map onto it
biject_to.register(constraints.simplex, lambda c: transforms.StickBreakingTransform())
transform_to.register(constraints.simplex, _simplex)


# the composite constraints map through the same registry's transform for each part
def _independent(registry):
    return lambda c: transforms.IndependentTransform(registry(c.base_constraint), c.reinterpreted_batch_ndims)


def _cat(registry):
    return lambda c: transforms.CatTransform([registry(part) for part in c.cseq], c.dim, c.lengths)


def _stack(registry):
    return lambda c: transforms.StackTransform([registry(part) for part in c.cseq], c.dim)


for _reg in (biject_to, transform_to):
    _reg.register(constraints.corr_cholesky, lambda c: transforms.CorrCholeskyTransform())
    _reg.register(constraints.independent, _independent(_reg))
    _reg.register(constraints.cat, _cat(_reg))
    _reg.register(constraints.stack, _stack(_reg))
# onto, not bijective: the lower-triangular parametrisation leaves the upper triangle unused
transform_to.register(constraints.lower_cholesky, lambda c: transforms.LowerCholeskyTransform())
transform_to.register(constraints.positive_definite, lambda c: transforms.PositiveDefiniteTransform())
transform_to.register(constraints.positive_semidefinite, lambda c: transforms.PositiveDefiniteTransform())
