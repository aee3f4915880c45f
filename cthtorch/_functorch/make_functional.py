"""functorch.make_functional(_with_buffers) and combine_state_for_ensemble: a module as a function of its
parameters (and buffers). The function holds a copy of the module and calls it through
torch.func.functional_call with the given tensors, so the original module is never touched."""
import copy

import cthtorch
from cthtorch import nn
from cthtorch.func import functional_call

__all__ = ["FunctionalModule", "FunctionalModuleWithBuffers", "make_functional", "make_functional_with_buffers",
           "combine_state_for_ensemble"]


def _names(named):
    return tuple(name for name, _ in named(remove_duplicate=True))


def _copy_and_params(model, disable_autograd_tracking):
    """the module the function runs (a copy) and its parameters, detached from autograd when asked"""
    model_copy = copy.deepcopy(model)
    params = tuple(p for _, p in model_copy.named_parameters())
    if disable_autograd_tracking:
        for p in params:
            p.requires_grad_(False)
    return model_copy, params


class FunctionalModuleWithBuffers(nn.Module):
    """This is the callable object returned by :func:`make_functional_with_buffers`."""

    def __init__(self, stateless_model, param_names, buffer_names):
        super().__init__()
        self.stateless_model = stateless_model
        self.param_names = param_names
        self.buffer_names = buffer_names

    @staticmethod
    def _create_from(model, disable_autograd_tracking=False):
        model_copy, params = _copy_and_params(model, disable_autograd_tracking)
        buffers = tuple(b for _, b in model_copy.named_buffers())
        return (FunctionalModuleWithBuffers(model_copy, _names(model_copy.named_parameters),
                                            _names(model_copy.named_buffers)), params, buffers)

    def forward(self, params, buffers, *args, **kwargs):
        state = dict(zip(self.param_names, tuple(params)))
        state.update(zip(self.buffer_names, tuple(buffers)))
        return functional_call(self.stateless_model, state, args, kwargs)


class FunctionalModule(nn.Module):
    """This is the callable object returned by :func:`make_functional`."""

    def __init__(self, stateless_model, param_names):
        super().__init__()
        self.stateless_model = stateless_model
        self.param_names = param_names

    @staticmethod
    def _create_from(model, disable_autograd_tracking=False):
        model_copy, params = _copy_and_params(model, disable_autograd_tracking)
        return FunctionalModule(model_copy, _names(model_copy.named_parameters)), params

    def forward(self, params, *args, **kwargs):
        return functional_call(self.stateless_model, dict(zip(self.param_names, tuple(params))), args, kwargs)


def make_functional(model, disable_autograd_tracking=False):
    """make_functional(model, disable_autograd_tracking=False) -> func, params"""
    if len(list(model.buffers())) > 0:
        raise RuntimeError("make_functional(model): `model` has buffers. Please use "
                           "make_functional_with_buffers(model) instead.")
    return FunctionalModule._create_from(model, disable_autograd_tracking=disable_autograd_tracking)


def make_functional_with_buffers(model, disable_autograd_tracking=False):
    """make_functional_with_buffers(model, disable_autograd_tracking=False) -> func, params, buffers"""
    return FunctionalModuleWithBuffers._create_from(model, disable_autograd_tracking=disable_autograd_tracking)


def combine_state_for_ensemble(models):
    """combine_state_for_ensemble(models) -> func, params, buffers: each parameter and buffer stacked over the
    models (a new leading dimension of size len(models)), for vmap(func, ...)."""
    if len(models) == 0:
        raise RuntimeError("combine_state_for_ensemble: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("combine_state_for_ensemble: Expected all models to have the same training/eval mode.")
    if not all(type(m) is type(models[0]) for m in models):
        raise RuntimeError("combine_state_for_ensemble: Expected all models to be of the same class.")
    funcs, params, buffers = zip(*[make_functional_with_buffers(m) for m in models])
    stack = lambda per_model: tuple(cthtorch.stack(shards).detach() for shards in zip(*per_model))  # noqa: E731
    return funcs[0], stack(params), stack(buffers)
