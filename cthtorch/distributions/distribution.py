"""Distribution: the base class. Holds batch/event shapes, validates
parameters and values (PyTorch's ValueError messages), and defines the
methods subclasses fill in."""
import warnings

import cthtorch as torch

from . import constraints
from .utils import lazy_property

__all__ = ["Distribution"]


class Distribution:
    has_rsample = False
    has_enumerate_support = False
    # like PyTorch: on unless python runs with -O
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value):
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=torch.Size(), event_shape=torch.Size(), validate_args=None):
        self._batch_shape = torch.Size(batch_shape)
        self._event_shape = torch.Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(f"{self.__class__} does not define `arg_constraints`. "
                              "Please set `arg_constraints = {}` or initialize the distribution "
                              "with `validate_args=False` to turn off validation.", stacklevel=2)
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue  # cannot be checked on its own
                if param not in self.__dict__ and isinstance(getattr(type(self), param), lazy_property):
                    continue  # lazily built from another parameter
                value = getattr(self, param)
                valid = constraint.check(value)
                if not bool(valid.all()):
                    raise ValueError(f"Expected parameter {param} "
                                     f"({type(value).__name__} of shape {tuple(value.shape)}) "
                                     f"of distribution {repr(self)} "
                                     f"to satisfy the constraint {repr(constraint)}, "
                                     f"but found invalid values:\n{value}")
        super().__init__()

    def expand(self, batch_shape, _instance=None):
        raise NotImplementedError

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    @property
    def arg_constraints(self):
        raise NotImplementedError

    @property
    def support(self):
        raise NotImplementedError

    @property
    def mean(self):
        raise NotImplementedError

    @property
    def mode(self):
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError

    @property
    def stddev(self):
        return self.variance.sqrt()

    def sample(self, sample_shape=torch.Size()):
        with torch.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=torch.Size()):
        raise NotImplementedError

    def sample_n(self, n):
        warnings.warn("`sample_n(n)` will be deprecated. Use `sample((n,))` instead.", FutureWarning, stacklevel=2)
        return self.sample(torch.Size((n,)))

    def log_prob(self, value):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def perplexity(self):
        return torch.exp(self.entropy())

    def _extended_shape(self, sample_shape=torch.Size()):
        if not isinstance(sample_shape, torch.Size):
            sample_shape = torch.Size(sample_shape)
        return torch.Size(sample_shape + self._batch_shape + self._event_shape)

    def _validate_sample(self, value):
        if not isinstance(value, torch.Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = len(value.size()) - len(self._event_shape)
        if value.size()[event_dim_start:] != self._event_shape:
            raise ValueError("The right-most size of value must match event_shape: "
                             f"{value.size()} vs {self._event_shape}.")
        actual_shape = value.size()
        expected_shape = self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual_shape), reversed(expected_shape)):
            if i != 1 and j != 1 and i != j:
                raise ValueError("Value is not broadcastable with batch_shape+event_shape: "
                                 f"{actual_shape} vs {expected_shape}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{self.__class__} does not define `support` to enable "
                          "sample validation. Please initialize the distribution with "
                          "`validate_args=False` to turn off validation.", stacklevel=2)
            return
        valid = support.check(value)
        if not bool(valid.all()):
            raise ValueError("Expected value argument "
                             f"({type(value).__name__} of shape {tuple(value.shape)}) "
                             f"to be within the support ({repr(support)}) "
                             f"of the distribution {repr(self)}, "
                             f"but found invalid values:\n{value}")

    def _expand_params(self, cls, batch_shape, _instance, names=(), fill=None):
        """The expand() distributions share: a new instance of cls whose
        parameters in names (those set on self) are expanded to batch_shape;
        fill(new, batch_shape) sets anything else."""
        new = self._get_checked_instance(cls, _instance)
        batch_shape = torch.Size(batch_shape)
        for n in names:
            if n in self.__dict__:
                setattr(new, n, self.__dict__[n].expand(batch_shape))
        if fill is not None:
            fill(new, batch_shape)
        super(cls, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a "
                                      "custom __init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self):
        param_names = [k for k in self.arg_constraints if k in self.__dict__]
        args_string = ", ".join(
            f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}"
            for p in param_names)
        return self.__class__.__name__ + "(" + args_string + ")"
