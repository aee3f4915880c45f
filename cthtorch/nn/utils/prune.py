"""nn.utils.prune: a pruned tensor `name` is recomputed before each forward as name_orig * name_mask. A tensor
pruned again gets a PruningContainer (torch's): the new method sees only what earlier masks kept (the kept entries,
or for structured methods the kept channels) and its mask is written back into the combined one."""
import numbers

import cthtorch

__all__ = ["BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured", "L1Unstructured",
           "RandomStructured", "LnStructured", "CustomFromMask", "identity", "random_unstructured", "l1_unstructured",
           "random_structured", "ln_structured", "global_unstructured", "custom_from_mask", "remove", "is_pruned"]


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
        if old is not None:   # pruned before: the methods so far and this one go into one container
            del module._forward_pre_hooks[hook_key]
            if not isinstance(old, PruningContainer):
                old = PruningContainer(old)
            old.add_pruning_method(method)
            method = old
        orig = getattr(module, name)
        if importance_scores is None:
            importance_scores = orig
        elif importance_scores.shape != orig.shape:
            raise AssertionError("importance_scores should have the same shape as parameter %s of %s"
                                 % (name, module))
        if not isinstance(method, PruningContainer):
            default_mask = cthtorch.ones_like(orig)
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
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


def _unstructured(t, default_mask, amount, choose):
    """default_mask with `amount` of t's entries zeroed; choose(k) gives their flat positions"""
    k = _n_to_prune(amount, t.numel())
    mask = default_mask.clone()
    if k:
        mask.view(-1)[choose(k)] = 0
    return mask


class PruningContainer(BasePruningMethod):
    """the pruning methods applied in turn to one tensor; the last one acts on what the earlier ones kept"""

    def __init__(self, *args):
        self._pruning_methods = ()
        if len(args) == 1 and not isinstance(args[0], BasePruningMethod):
            args = tuple(args[0])
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
        for method in args:
            self.add_pruning_method(method)

    def add_pruning_method(self, method):
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError("%s is not a BasePruningMethod subclass" % type(method))
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError("Can only add pruning methods acting on the parameter named '%s' to PruningContainer %s."
                             " Found '%s'" % (self._tensor_name, self, method._tensor_name))
        self._pruning_methods += (method,)

    def __len__(self):
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t, default_mask):
        method = self._pruning_methods[-1]
        kind = method.PRUNING_TYPE
        n = t.dim()
        if kind == "unstructured":
            slc = default_mask == 1
        elif kind == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError("Pruning methods of PRUNING_TYPE \"structured\" need to have the attribute `dim` "
                                     "defined.")
            dim = method.dim + n if method.dim < 0 else method.dim
            keep = default_mask.sum(dim=[d for d in range(n) if d != dim]) != 0
            slc = tuple(keep if d == dim else slice(None) for d in range(n))
        elif kind == "global":
            slc = tuple(slice(None) for _ in range(n))
        else:
            raise ValueError("Unrecognized PRUNING_TYPE %s" % kind)
        new_mask = default_mask.clone()
        new_mask[slc] = method.compute_mask(t[slc], default_mask=default_mask[slc]).to(dtype=new_mask.dtype)
        return new_mask


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
        return _unstructured(t, default_mask, self.amount, lambda k: cthtorch.rand_like(t).view(-1).topk(k).indices)

    @classmethod
    def apply(cls, module, name, amount):
        return super().apply(module, name, amount=amount)


class L1Unstructured(BasePruningMethod):
    def __init__(self, amount):
        _validate_amount(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        return _unstructured(t, default_mask, self.amount,
                             lambda k: t.detach().abs().reshape(-1).topk(k, largest=False).indices)

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


def _structured(t, default_mask, amount, dim, keep_of):
    """default_mask times a mask keeping the channels along dim that keep_of(k) picks (k to keep)"""
    size = t.shape[dim]
    prune_n = _n_to_prune(amount, size)
    if prune_n == 0:
        return default_mask
    chosen = keep_of(size - prune_n)
    mask = cthtorch.zeros_like(t)
    mask[tuple(chosen if d == (dim % t.dim()) else slice(None) for d in range(t.dim()))] = 1
    return mask * default_mask


class RandomStructured(BasePruningMethod):
    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim=-1):
        _validate_amount(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t, default_mask):
        def keep_of(k):
            prob = cthtorch.rand(t.shape[self.dim])
            return prob > cthtorch.kthvalue(prob, k=prob.numel() - k).values
        return _structured(t, default_mask, self.amount, self.dim, keep_of)

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    PRUNING_TYPE = "structured"

    def __init__(self, amount, n, dim=-1):
        _validate_amount(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t, default_mask):
        def keep_of(k):
            other = [d for d in range(t.dim()) if d != self.dim % t.dim()]
            norm = cthtorch.norm(t, p=self.n, dim=other) if other else t.abs()
            return cthtorch.topk(norm, k=k, largest=True).indices
        return _structured(t, default_mask, self.amount, self.dim, keep_of)

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        return super().apply(module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores)


def identity(module, name):
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs):
    parameters = list(parameters)
    importance_scores = importance_scores or {}
    scores = cthtorch.cat([importance_scores.get((m, n), getattr(m, n)).detach().reshape(-1) for m, n in parameters])
    masks = cthtorch.cat([getattr(m, n + "_mask", cthtorch.ones_like(getattr(m, n))).reshape(-1)
                          for m, n in parameters])
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError('Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found method %s of type %s'
                        % (pruning_method, method.PRUNING_TYPE))
    final = PruningContainer(method).compute_mask(scores, default_mask=masks)
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

