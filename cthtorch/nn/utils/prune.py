"""nn.utils.prune basics: a pruned tensor `name` is recomputed before each forward as
name_orig * name_mask; masks of repeated prunings combine (later ones act on what is left)."""
import numbers

import cthtorch

__all__ = ["BasePruningMethod", "Identity", "RandomUnstructured", "L1Unstructured", "identity", "random_unstructured",
           "l1_unstructured", "global_unstructured", "remove", "is_pruned"]


def _validate_amount(amount):
    if not isinstance(amount, numbers.Real) or (isinstance(amount, numbers.Integral) and amount < 0) or \
            (not isinstance(amount, numbers.Integral) and (float(amount) > 1.0 or float(amount) < 0.0)):
        raise ValueError("amount=%s should either be a float in the range [0, 1] or a non-negative integer" % amount)


def _n_to_prune(amount, n):
    if isinstance(amount, numbers.Integral):
        if amount > n:
            raise ValueError("amount=%d should be smaller than the number of parameters to prune=%d" % (amount, n))
        return amount
    return round(amount * n)


class BasePruningMethod:
    PRUNING_TYPE = "unstructured"

    def __call__(self, module, inputs):
        setattr(module, self._tensor_name, self.apply_mask(module))

    def compute_mask(self, t, default_mask):
        raise NotImplementedError

    def apply_mask(self, module):
        orig = getattr(module, self._tensor_name + "_orig")
        return orig * getattr(module, self._tensor_name + "_mask").to(dtype=orig.dtype)

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        hook_key, old = None, None
        for k, hook in module._forward_pre_hooks.items():
            if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
                hook_key, old = k, hook
        method = cls(*args, **kwargs)
        method._tensor_name = name
        orig = getattr(module, name)
        if importance_scores is None:
            importance_scores = orig
        if old is None:
            default_mask = cthtorch.ones_like(orig)
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
            del module._forward_pre_hooks[hook_key]
            orig = getattr(module, name + "_orig")
        with cthtorch.no_grad():
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
        module.register_buffer(name + "_mask", mask)
        setattr(module, name, method.apply_mask(module))
        module.register_forward_pre_hook(method)
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        scores = importance_scores if importance_scores is not None else t
        dm = default_mask if default_mask is not None else cthtorch.ones_like(t)
        return t * self.compute_mask(scores, default_mask=dm)

    def remove(self, module):
        weight = self.apply_mask(module)
        if hasattr(module, self._tensor_name):
            delattr(module, self._tensor_name)
        orig = module._parameters[self._tensor_name + "_orig"]
        orig.data = weight.data
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, orig)


def _unstructured(default_mask, amount, choose):
    """Zero `amount` of the entries still kept by default_mask; choose(k, kept) gives the flat positions."""
    kept = default_mask.reshape(-1).nonzero().reshape(-1)
    k = _n_to_prune(amount, kept.numel())
    mask = default_mask.clone()
    if k:
        flat = mask.reshape(-1)
        flat[kept[choose(k, kept)]] = 0
    return mask


class Identity(BasePruningMethod):
    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        return super().apply(module, name)


class RandomUnstructured(BasePruningMethod):
    def __init__(self, amount):
        _validate_amount(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        return _unstructured(default_mask, self.amount,
                             lambda k, kept: cthtorch.rand(kept.numel()).topk(k).indices)

    @classmethod
    def apply(cls, module, name, amount):
        return super().apply(module, name, amount=amount)


class L1Unstructured(BasePruningMethod):
    def __init__(self, amount):
        _validate_amount(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        scores = t.detach().abs().reshape(-1)
        return _unstructured(default_mask, self.amount,
                             lambda k, kept: scores[kept].topk(k, largest=False).indices)

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


def identity(module, name):
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs):
    parameters = list(parameters)
    importance_scores = importance_scores or {}
    scores = cthtorch.cat([importance_scores.get((m, n), getattr(m, n)).detach().reshape(-1) for m, n in parameters])
    masks = cthtorch.cat([getattr(m, n + "_mask", cthtorch.ones_like(getattr(m, n))).reshape(-1)
                          for m, n in parameters])
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    final = method.compute_mask(scores, default_mask=masks)
    pos = 0
    for m, n in parameters:
        p = getattr(m, n)
        custom_from_mask(m, n, final[pos:pos + p.numel()].reshape(p.shape))
        pos += p.numel()


class CustomFromMask(BasePruningMethod):
    def __init__(self, mask):
        self.mask = mask

    def compute_mask(self, t, default_mask):
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        return super().apply(module, name, mask=mask)


def custom_from_mask(module, name, mask):
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module, name):
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError("Parameter '%s' of module %s has to be pruned before pruning can be removed" % (name, module))


def is_pruned(module):
    for _, submodule in module.named_modules():
        for hook in submodule._forward_pre_hooks.values():
            if isinstance(hook, BasePruningMethod):
                return True
    return False

