"""torchvision.models._api: the Weights/WeightsEnum types and the model registry behind get_model, list_models,
get_model_builder, get_model_weights and get_weight."""
import fnmatch
import importlib
import inspect
import typing
from enum import Enum
from functools import partial

import cthtorch

__all__ = ["WeightsEnum", "Weights", "get_model", "get_model_builder", "get_model_weights", "get_weight",
           "list_models"]


class Weights:
    """A set of pretrained weights: where the file is, the preprocessing it expects (a callable making the
    transform), and its metadata (num_params, min_size, recipe, _metrics, ...)."""

    def __init__(self, url, transforms, meta):
        self.url, self.transforms, self.meta = url, transforms, meta

    def __repr__(self):
        return "Weights(url=%r, transforms=%r, meta=%r)" % (self.url, self.transforms, self.meta)

    def __eq__(self, other):
        # deepcopy/unpickling of an enum member compares values; partial objects only compare by identity,
        # so transforms made by partial compare by their parts
        if not isinstance(other, Weights):
            return NotImplemented
        if self.url != other.url or self.meta != other.meta:
            return False
        a, b = self.transforms, other.transforms
        if isinstance(a, partial) and isinstance(b, partial):
            return a.func == b.func and a.args == b.args and a.keywords == b.keywords
        return a == b

    def __hash__(self):
        return hash(self.url)


class WeightsEnum(Enum):
    """Base of every model's weights enum; members are Weights, DEFAULT an alias of the recommended one."""

    @classmethod
    def verify(cls, obj):
        if obj is not None:
            if type(obj) is str:
                obj = cls[obj.replace(cls.__name__ + ".", "")]
            elif not isinstance(obj, cls):
                raise TypeError("Invalid Weight class provided; expected %s but received %s."
                                % (cls.__name__, obj.__class__.__name__))
        return obj

    def get_state_dict(self, *args, **kwargs):
        return cthtorch.hub.load_state_dict_from_url(self.url, *args, **kwargs)

    def __repr__(self):
        return "%s.%s" % (self.__class__.__name__, self._name_)

    @property
    def url(self):
        return self.value.url

    @property
    def transforms(self):
        return self.value.transforms

    @property
    def meta(self):
        return self.value.meta


BUILTIN_MODELS = {}


def register_model(name=None):
    """Decorator adding a builder to the registry under name (default: the function's name)."""
    def wrapper(fn):
        key = name if name is not None else fn.__name__
        if key in BUILTIN_MODELS:
            raise ValueError("An entry is already registered under the name '%s'." % key)
        BUILTIN_MODELS[key] = fn
        return fn
    return wrapper


def _as_list(filters):
    return [filters] if isinstance(filters, str) else list(filters)


def list_models(module=None, include=None, exclude=None):
    """Sorted names of the registered models, optionally only those whose builder lives in `module` (e.g.
    models.quantization), kept by any fnmatch pattern of include and then dropped by any pattern of exclude."""
    names = {k for k, fn in BUILTIN_MODELS.items()
             if module is None or fn.__module__.rsplit(".", 1)[0] == module.__name__}
    chosen = set()
    if include:
        for pattern in _as_list(include):
            chosen |= set(fnmatch.filter(names, pattern))
    else:
        chosen = set(names)
    if exclude:
        for pattern in _as_list(exclude):
            chosen -= set(fnmatch.filter(names, pattern))
    return sorted(chosen)


def get_model_builder(name):
    name = name.lower()
    try:
        return BUILTIN_MODELS[name]
    except KeyError:
        raise ValueError("Unknown model %s" % name) from None


def get_model(name, **config):
    """The model registered under name, built with config passed to its builder."""
    return get_model_builder(name)(**config)


def _enum_of_builder(fn):
    # the builder's `weights` annotation names its enum (Optional[X_Weights])
    params = inspect.signature(fn).parameters
    if "weights" not in params:
        raise ValueError("The method is missing the 'weights' argument.")
    ann = params["weights"].annotation
    for t in (ann,) + typing.get_args(ann):
        if isinstance(t, type) and issubclass(t, WeightsEnum):
            return t
    raise ValueError("The WeightsEnum class for the specific method couldn't be retrieved. Make sure the typing "
                     "info is correct.")


def get_model_weights(name):
    """The weights enum class of a builder (given as the function or its registered name)."""
    return _enum_of_builder(get_model_builder(name) if isinstance(name, str) else name)


def get_weight(name):
    """A weights member by its full name, e.g. "ResNet50_Weights.IMAGENET1K_V1"."""
    try:
        enum_name, value_name = name.split(".")
    except ValueError:
        raise ValueError("Invalid weight name provided: '%s'." % name) from None
    base = importlib.import_module(__name__.rsplit(".", 1)[0])
    # the models package and its sub-packages (quantization, ...) that export enums
    modules = [base] + [m for _, m in inspect.getmembers(base, inspect.ismodule)
                        if getattr(m, "__file__", "").endswith("__init__.py")]
    for m in modules:
        enum = m.__dict__.get(enum_name)
        if isinstance(enum, type) and issubclass(enum, WeightsEnum):
            return enum[value_name]
    raise ValueError("The weight enum '%s' for the specific method couldn't be retrieved." % enum_name)
