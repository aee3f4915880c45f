"""torch.utils.benchmark's Fuzzer: random parameter sets and the tensors they
describe, for benchmarking an op over many shapes and layouts.

The draws follow torch's order on a numpy RandomState(seed), so a seeded
fuzzer yields torch's parameters, layouts and (through manual_seed of a seed
drawn from that state) tensor values:
  take():     one int64 seed for the torch RNG, then per step:
  parameters: strict ones once, then the others, redrawn together until every
              constraint and every tensor's element/allocation limit holds;
  tensors:    per tensor, one uniform against probability_contiguous and, when
              it says non-contiguous, a permutation of the dimensions."""
import math

import numpy as np

import cthtorch

__all__ = ["Fuzzer", "FuzzedParameter", "FuzzedTensor", "ParameterAlias"]


class ParameterAlias:
    """Stands for the value of another parameter (for example inside a custom
    distribution, to make a size that sometimes matches another one)."""

    def __init__(self, alias_to):
        self.alias_to = alias_to

    def __repr__(self):
        return "ParameterAlias[alias_to: %s]" % (self.alias_to,)


def _ints(*values):
    return all(isinstance(v, (int, np.integer)) for v in values)


class FuzzedParameter:
    """A named value drawn from 'loguniform' or 'uniform' over [minval, maxval]
    (integers when both bounds are), or from a dict {choice: probability}."""

    def __init__(self, name, minval=None, maxval=None, distribution=None, strict=False):
        self._name = name
        self._minval = minval
        self._maxval = maxval
        self._distribution = self._check_distribution(distribution)
        self.strict = strict

    @property
    def name(self):
        return self._name

    def _check_distribution(self, distribution):
        if isinstance(distribution, dict):
            if self._minval is not None or self._maxval is not None:
                raise ValueError("minval and maxval must not be given with a custom distribution")
            probs = list(distribution.values())
            if any(p < 0 for p in probs):
                raise ValueError("Custom distribution has negative probability")
            # probabilities written as decimals (0.3, 0.4, 0.3) sum to 1 only within rounding
            if abs(sum(probs) - 1) > 1e-6:
                raise AssertionError("Distribution is not normalized")
            return distribution
        if distribution not in ("loguniform", "uniform"):
            raise ValueError("Invalid distribution: %r" % (distribution,))
        if self._minval is None or self._maxval is None:
            raise ValueError("minval and maxval must be given for the %r distribution" % distribution)
        return distribution

    def sample(self, state):
        if self._distribution == "loguniform":
            lo, hi = math.log2(self._minval), math.log2(self._maxval)
            if not self._minval > 0:
                raise ValueError("loguniform needs minval > 0")
            value = 2 ** state.uniform(low=lo, high=hi)
            return int(value) if _ints(self._minval, self._maxval) else value
        if self._distribution == "uniform":
            if _ints(self._minval, self._maxval):
                return int(state.randint(low=self._minval, high=self._maxval + 1))
            return state.uniform(low=self._minval, high=self._maxval)
        choices = list(self._distribution.keys())
        total = sum(self._distribution.values())
        index = state.choice(len(choices), p=[v / total for v in self._distribution.values()])
        return choices[index]


def _resolve(value, params):
    """A literal, a parameter's name, or a ParameterAlias, as a concrete value."""
    if isinstance(value, ParameterAlias):
        return params[value.alias_to]
    if isinstance(value, str):
        return params[value]
    return value


def _default_tensor_constructor(size, dtype, **kwargs):
    if dtype.is_floating_point or dtype.is_complex:
        return cthtorch.rand(size=size, dtype=dtype, device="cpu")
    return cthtorch.randint(1, 127, size=size, dtype=dtype, device="cpu")


class FuzzedTensor:
    """A tensor whose sizes (and optional slicing steps) name parameters; it
    is contiguous with probability probability_contiguous, else laid out in a
    random dimension order. min_elements/max_elements/max_allocation_bytes
    reject parameter sets; dim_parameter truncates size and steps."""

    def __init__(self, name, size, steps=None, probability_contiguous=0.5, min_elements=None, max_elements=None,
                 max_allocation_bytes=None, dim_parameter=None, roll_parameter=None, dtype=cthtorch.float32,
                 cuda=False, tensor_constructor=None):
        if roll_parameter is not None:
            raise NotImplementedError("cthtorch.utils.benchmark.FuzzedTensor: roll_parameter is not implemented")
        if cuda:
            raise NotImplementedError("cthtorch.utils.benchmark.FuzzedTensor: cuda=True is not supported")
        self._name = name
        self._size = size
        self._steps = steps
        self._probability_contiguous = probability_contiguous
        self._min_elements = min_elements
        self._max_elements = max_elements
        self._max_allocation_bytes = max_allocation_bytes
        self._dim_parameter = dim_parameter
        self._dtype = dtype
        self._tensor_constructor = tensor_constructor

    @property
    def name(self):
        return self._name

    @staticmethod
    def default_tensor_constructor(size, dtype, **kwargs):
        return _default_tensor_constructor(size, dtype, **kwargs)

    def _get_size_and_steps(self, params):
        size = tuple(int(_resolve(s, params)) for s in self._size)
        steps = tuple(int(_resolve(s, params)) for s in self._steps) if self._steps is not None \
            else (1,) * len(size)
        if len(steps) != len(size):
            raise ValueError("FuzzedTensor %r: steps and size differ in length" % self._name)
        if self._dim_parameter is not None:
            dim = params[self._dim_parameter]
            size, steps = size[:dim], steps[:dim]
        return size, steps

    def satisfies_constraints(self, params):
        size, steps = self._get_size_and_steps(params)
        numel = math.prod(size)
        allocated = math.prod(s * t for s, t in zip(size, steps))
        itemsize = cthtorch.empty((), dtype=self._dtype).element_size()
        if self._min_elements is not None and numel < self._min_elements:
            return False
        if self._max_elements is not None and numel > self._max_elements:
            return False
        if self._max_allocation_bytes is not None and allocated * itemsize > self._max_allocation_bytes:
            return False
        return True

    def _make_tensor(self, params, state):
        size, steps = self._get_size_and_steps(params)
        allocation = tuple(s * t for s, t in zip(size, steps))
        ctor = self._tensor_constructor or _default_tensor_constructor
        raw = ctor(size=allocation, dtype=self._dtype, **params)
        identity = list(range(len(size)))
        order = identity
        if state.rand() > self._probability_contiguous:
            while len(size) > 1 and list(order) == identity:
                order = state.permutation(raw.dim())   # the draw itself is torch's, on the numpy RandomState
        order = [int(i) for i in order]
        # values are drawn in the logical shape, stored in dimension order `order`
        inverse = sorted(range(len(order)), key=order.__getitem__)
        raw = raw.permute(tuple(order)).contiguous().permute(tuple(inverse))
        tensor = raw[tuple(slice(None, None, t) for t in steps)] if steps else raw
        properties = {"numel": int(tensor.numel()), "order": order, "steps": steps,
                      "is_contiguous": tensor.is_contiguous(), "dtype": str(self._dtype)}
        return tensor, properties


def _flatten(items):
    out = []
    for item in items:
        if isinstance(item, (list, tuple)):
            out.extend(item)
        else:
            out.append(item)
    return out


class Fuzzer:
    """take(n) yields n (tensors, tensor_properties, params) triples, each a dict
    keyed by name; the same seed gives the same sequence."""

    def __init__(self, parameters, tensors=(), constraints=None, seed=None):
        if seed is None:
            seed = int(np.random.RandomState().randint(0, 2 ** 32 - 1, dtype=np.int64))
        self._seed = seed
        self._parameters = _flatten(parameters)
        self._tensors = _flatten(tensors)
        self._constraints = constraints or ()
        names = [p.name for p in self._parameters]
        for p in self._parameters:
            if not isinstance(p, FuzzedParameter):
                raise TypeError("Fuzzer parameters must be FuzzedParameters, got %r" % (p,))
        if len(set(names)) != len(names):
            raise ValueError("Duplicate parameter names: %s" % names)
        tensor_names = [t.name for t in self._tensors]
        if len(set(tensor_names)) != len(tensor_names) or set(names) & set(tensor_names):
            raise ValueError("Tensor names must be unique and differ from parameter names")
        self._total_generated = 0
        self._rejections = 0

    def take(self, n):
        state = np.random.RandomState(self._seed)
        cthtorch.manual_seed(int(state.randint(0, 2 ** 63 - 1, dtype=np.int64)))
        for _ in range(n):
            params = self._generate(state)
            tensors, properties = {}, {}
            for t in self._tensors:
                tensors[t.name], properties[t.name] = t._make_tensor(params, state)
            yield tensors, properties, params

    @property
    def rejection_rate(self):
        if not self._total_generated:
            return 0.0
        return self._rejections / self._total_generated

    def _generate(self, state):
        strict = {p.name: p.sample(state) for p in self._parameters if p.strict}
        while True:
            candidate = dict(strict)
            for p in self._parameters:
                if not p.strict:
                    candidate[p.name] = p.sample(state)
            candidate = self._resolve_aliases(candidate)
            self._total_generated += 1
            if all(f(candidate) for f in self._constraints) and \
                    all(t.satisfies_constraints(candidate) for t in self._tensors):
                return {p.name: candidate[p.name] for p in self._parameters}
            self._rejections += 1

    @staticmethod
    def _resolve_aliases(params):
        params = dict(params)
        for _ in range(len(params) + 1):
            pending = [k for k, v in params.items() if isinstance(v, ParameterAlias)]
            if not pending:
                return params
            for k in pending:
                params[k] = params[params[k].alias_to]
        raise ValueError("ParameterAlias chain has a cycle: %s" % params)
