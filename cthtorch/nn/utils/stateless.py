"""Calling a module with other parameters and buffers (torch.nn.utils.stateless).

_reparametrize_module swaps the tensors named in a {name: tensor} dict into
the module ('layer.0.weight' names a submodule's tensor) and swaps the
originals back on exit, also when forward raises. Plain tensors go into the
module's _parameters/_buffers slots directly, so they need not be Parameters.
"""
import contextlib
import warnings

import cthtorch
from cthtorch.overrides import is_tensor_like

__all__ = ["functional_call"]

_MISSING = object()


def _get_submodule(module, path):
    for part in path.split(".") if path else []:
        sub = getattr(module, part, None)
        if not isinstance(sub, cthtorch.nn.Module):
            raise AttributeError("%s has no attribute `%s`" % (module._get_name(), part))
        module = sub
    return module


def _swap_tensor(module, name, tensor, allow_missing=False):
    """Puts tensor (or _MISSING: remove) at module.name; returns what was there (_MISSING if nothing)."""
    if tensor is not _MISSING and not is_tensor_like(tensor):
        raise TypeError("%s is not an instance of torch.Tensor" % (tensor,))
    store = (module._parameters if name in module._parameters else
             module._buffers if name in module._buffers else None)
    if store is not None:
        orig = store[name]
        if tensor is _MISSING:
            del store[name]
        else:
            store[name] = tensor
    else:
        if hasattr(module, name):
            orig = getattr(module, name)
            if not isinstance(orig, cthtorch.Tensor):
                raise TypeError("attribute `%s`: %s is not an instance of torch.Tensor" % (name, orig))
        else:
            if not allow_missing:
                raise AttributeError("%s has no attribute `%s`" % (module._get_name(), name))
            orig = _MISSING
        if tensor is not _MISSING:
            setattr(module, name, tensor)
        elif hasattr(module, name):
            delattr(module, name)
    return orig


def _swap_tensors_dict(module, named_tensors, allow_missing=True):
    orig = {}
    try:
        for name, tensor in named_tensors.items():
            path, _, attr = name.rpartition(".")
            orig[name] = _swap_tensor(_get_submodule(module, path), attr, tensor, allow_missing)
    except Exception:
        for name, tensor in reversed(list(orig.items())):   # undo the swaps done so far
            path, _, attr = name.rpartition(".")
            _swap_tensor(_get_submodule(module, path), attr, tensor, allow_missing=True)
        raise
    return orig


def _untie_named_tensors_map(module, parameters_and_buffers):
    """parameters_and_buffers plus the tied aliases of every given name (ValueError on conflicting values)."""
    named = dict(module.named_parameters(remove_duplicate=False))
    named.update(module.named_buffers(remove_duplicate=False))
    by_tensor = {}
    for name, t in named.items():
        by_tensor.setdefault(id(t), set()).add(name)
    tied = {}
    for names in by_tensor.values():
        if len(names) > 1:
            for n in names:
                tied[n] = names
    given = set(parameters_and_buffers)
    given_tied = {n for n in given if n in tied}
    for n in given_tied:
        names = tied[n]
        if (len(names & given_tied) > 1
                and len({id(parameters_and_buffers[m]) for m in names if m in parameters_and_buffers}) != 1):
            raise ValueError("functional_call got multiple values for keys %s, which are tied. Consider using "
                             "tie_weights=False" % sorted(names))
    untied = dict(parameters_and_buffers)
    for n in given_tied:
        for m in tied[n]:
            untied[m] = parameters_and_buffers[n]
    return untied


def _check_keys(module, keys):
    valid = {n for n, _ in module.named_parameters(remove_duplicate=False)}
    valid |= {n for n, _ in module.named_buffers(remove_duplicate=False)}
    keys = set(keys)
    return sorted(valid - keys), sorted(keys - valid)


@contextlib.contextmanager
def _reparametrize_module(module, parameters_and_buffers, tie_weights=False, strict=False, stack_weights=False):
    untied = _untie_named_tensors_map(module, parameters_and_buffers) if tie_weights else parameters_and_buffers
    if strict:
        missing, unexpected = _check_keys(module, untied)
        msgs = []
        if unexpected:
            msgs.append("Unexpected key(s): %s." % ", ".join(map(repr, unexpected)))
        if missing:
            msgs.append("Missing key(s): %s." % ", ".join(map(repr, missing)))
        if msgs:
            raise RuntimeError("Error(s) in reparametrizing for %s:\n\t%s" % (module._get_name(), "\n\t".join(msgs)))
    orig = {}
    try:
        orig = _swap_tensors_dict(module, untied, allow_missing=True)
        yield
    finally:
        if stack_weights:
            orig = dict(reversed(orig.items()))
        new = _swap_tensors_dict(module, orig, allow_missing=True)
        # a forward that reassigned a tensor (self.x = self.x + 1) hands the new one back
        parameters_and_buffers.update({k: new[k] for k in parameters_and_buffers
                                       if k in new and new[k] is not _MISSING})


def _functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights=True, strict=False):
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize_module(module, parameters_and_buffers, tie_weights=tie_weights, strict=strict):
        return module(*args, **kwargs)


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """Deprecated alias of cthtorch.func.functional_call (one dict of parameters and buffers)."""
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be removed in "
                  "a future version of PyTorch. Please use `torch.func.functional_call` instead which is a drop-in "
                  "replacement.", FutureWarning, stacklevel=2)
    return _functional_call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict)
