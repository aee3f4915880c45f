"""Optimizer base: param_groups, state, state_dict round trips, zero_grad, hooks."""
import collections
import copy
from itertools import chain

import cthtorch
from cthtorch.utils.hooks import RemovableHandle


class _RequiredParameter:
    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


class Optimizer:
    def __init__(self, params, defaults):
        self.defaults = defaults
        self._optimizer_step_pre_hooks = collections.OrderedDict()
        self._optimizer_step_post_hooks = collections.OrderedDict()
        if isinstance(params, cthtorch.Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, but "
                            "got " + cthtorch.typename(params))
        self.state = collections.defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for g in param_groups:
            self.add_param_group(g)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.__dict__.setdefault("_optimizer_step_pre_hooks", collections.OrderedDict())
        self.__dict__.setdefault("_optimizer_step_post_hooks", collections.OrderedDict())

    def __repr__(self):
        # each group opens and closes with a newline, as torch's: two groups have a blank line between them
        s = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            s += "\nParameter Group %d\n" % i
            for key in sorted(group.keys()):
                if key != "params":
                    s += "    %s: %s\n" % (key, group[key])
        s += ")"
        return s

    def add_param_group(self, param_group):
        if not isinstance(param_group, dict):
            raise TypeError("param_group must be a dict, but got %s" % type(param_group).__name__)
        params = param_group["params"]
        if isinstance(params, cthtorch.Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering of "
                            "tensors in sets will change between runs. Please use a list instead.")
        else:
            param_group["params"] = list(params)
        for p in param_group["params"]:
            if not isinstance(p, cthtorch.Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is " + cthtorch.typename(p))
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required optimization parameter " + name)
            param_group.setdefault(name, default)
        params = param_group["params"]
        if len(params) != len(set(id(p) for p in params)):
            import warnings
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will cause "
                          "an error; see github.com/pytorch/pytorch/issues/40967 for more information", stacklevel=3)
        param_set = set()
        for group in self.param_groups:
            param_set.update(id(p) for p in group["params"])
        if not param_set.isdisjoint(set(id(p) for p in param_group["params"])):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none=True):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    if set_to_none:
                        p.grad = None
                    else:
                        if p.grad.grad_fn is not None:
                            p.grad.detach_()
                        else:
                            p.grad.requires_grad_(False)
                        p.grad.zero_()

    def state_dict(self):
        mapping = {}
        index = 0
        groups = []
        for g in self.param_groups:
            packed = {k: v for k, v in g.items() if k != "params"}
            ids = []
            for p in g["params"]:
                if id(p) not in mapping:
                    mapping[id(p)] = index
                    index += 1
                ids.append(mapping[id(p)])
            packed["params"] = ids
            groups.append(packed)
        packed_state = {mapping[id(k)]: v for k, v in self.state.items() if id(k) in mapping}
        return {"state": packed_state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        state_dict = copy.deepcopy(state_dict) if not isinstance(state_dict, dict) else \
            {"state": {k: dict(v) for k, v in state_dict["state"].items()},
             "param_groups": [dict(g) for g in state_dict["param_groups"]]}
        groups = self.param_groups
        saved = state_dict["param_groups"]
        if len(groups) != len(saved):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of optimizer's "
                             "group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved),
                          chain.from_iterable(g["params"] for g in groups)))

        def cast(param, value, key=None):
            if isinstance(value, cthtorch.Tensor):
                if key == "step":   # torch keeps step where it was saved (the host, unless capturable/fused)
                    return value.clone()
                if param.is_floating_point() and value.is_floating_point():   # state follows its parameter
                    return value.to(dtype=param.dtype, device=param.device)
                return value.to(param.device, copy=True)
            if isinstance(value, dict):
                return {k: cast(param, v, k) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return type(value)(cast(param, v) for v in value)
            return value
        state = collections.defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = cast(param, v)
            else:
                state[k] = v
        new_groups = []
        for g, s in zip(groups, saved):
            s = dict(s)
            s["params"] = g["params"]
            new_groups.append(s)
        self.__setstate__({"state": state, "param_groups": new_groups})

    def register_step_pre_hook(self, hook):
        handle = RemovableHandle(self._optimizer_step_pre_hooks)
        self._optimizer_step_pre_hooks[handle.id] = hook
        return handle

    def register_step_post_hook(self, hook):
        handle = RemovableHandle(self._optimizer_step_post_hooks)
        self._optimizer_step_post_hooks[handle.id] = hook
        return handle

    _no_sparse_grads = None   # torch's error text where the update has no sparse form

    def _run_step(self, closure, impl):
        for hook in list(self._optimizer_step_pre_hooks.values()):
            r = hook(self, (), {})
        loss = None
        if closure is not None:
            with cthtorch.enable_grad():
                loss = closure()
        if self._no_sparse_grads and any(p.grad is not None and p.grad.is_sparse
                                         for g in self.param_groups for p in g["params"]):
            raise RuntimeError(self._no_sparse_grads)
        with cthtorch.no_grad():
            impl()
        for hook in list(self._optimizer_step_post_hooks.values()):
            hook(self, (), {})
        return loss

    def step(self, closure=None):
        raise NotImplementedError
