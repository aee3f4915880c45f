"""nn.Module: parameters, buffers and submodules registered by attribute
assignment; traversal, state_dict, train/eval, hooks, repr."""
import collections
import warnings
import functools
import itertools
import weakref

import cthtorch
from cthtorch.nn.parameter import Parameter
from cthtorch.utils.hooks import RemovableHandle

# named as torch's (the namedtuple repr prints the class name: _IncompatibleKeys(missing_keys=[...], ...))
class _IncompatibleKeys(collections.namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _addindent(s_, numSpaces):
    s = s_.split("\n")
    if len(s) == 1:
        return s_
    first = s.pop(0)
    # blank lines (an extra_repr ending in a newline) stay empty, as torch 2.x prints them
    s = [(numSpaces * " ") + line if line.strip() else "" for line in s]
    return first + "\n" + "\n".join(s)


_global_forward_pre_hooks = collections.OrderedDict()
_global_forward_hooks = collections.OrderedDict()
_global_backward_pre_hooks = collections.OrderedDict()
_global_backward_hooks = collections.OrderedDict()
_global_is_full_backward_hook = None
_global_buffer_registration_hooks = collections.OrderedDict()
_global_module_registration_hooks = collections.OrderedDict()
_global_parameter_registration_hooks = collections.OrderedDict()


def _registered(hooks, module, name, value):
    """value after the global registration hooks (each may return a replacement)."""
    for hook in hooks.values():
        out = hook(module, name, value)
        if out is not None:
            value = out
    return value


def _forward_unimplemented(self, *input):
    raise NotImplementedError('Module [%s] is missing the required "forward" function' % type(self).__name__)


class Module:
    dump_patches = False
    _version = 1
    training: bool
    call_super_init = False

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError("%s.__init__() got an unexpected argument" % type(self).__name__)
        d = self.__dict__
        # torch's attributes in torch's order and types: a pickled module (torch.save(model)) is torch's bytes
        d["training"] = True
        d["_parameters"] = {}
        d["_buffers"] = {}
        d["_non_persistent_buffers_set"] = set()
        for k in ("_backward_pre_hooks", "_backward_hooks"):
            d[k] = collections.OrderedDict()
        d["_is_full_backward_hook"] = None
        for k in ("_forward_hooks", "_forward_hooks_with_kwargs", "_forward_hooks_always_called", "_forward_pre_hooks",
                  "_forward_pre_hooks_with_kwargs", "_state_dict_hooks", "_state_dict_pre_hooks",
                  "_load_state_dict_pre_hooks", "_load_state_dict_post_hooks"):
            d[k] = collections.OrderedDict()
        d["_modules"] = {}

    forward = _forward_unimplemented

    # ---- registration ----
    def register_buffer(self, name, tensor, persistent=True):
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError("buffer name should be a string. Got %s" % type(name).__name__)
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError("attribute '%s' already exists" % name)
        if tensor is not None and not isinstance(tensor, cthtorch.Tensor):
            raise TypeError("cannot assign '%s' object to buffer '%s' (torch Tensor or None required)"
                            % (type(tensor).__name__, name))
        self._buffers[name] = _registered(_global_buffer_registration_hooks, self, name, tensor)
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name, param):
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError("parameter name should be a string. Got %s" % type(name).__name__)
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError("attribute '%s' already exists" % name)
        if param is None:
            self._parameters[name] = None
        elif not isinstance(param, Parameter):
            raise TypeError("cannot assign '%s' object to parameter '%s' (torch.nn.Parameter or None required)"
                            % (type(param).__name__, name))
        elif param.grad_fn is not None:
            raise ValueError("Cannot assign non-leaf Tensor to parameter '%s'. Model parameters must be created "
                             "explicitly. To express '%s' as a function of another Tensor, compute the value in the "
                             "forward() method." % (name, name))
        else:
            self._parameters[name] = _registered(_global_parameter_registration_hooks, self, name, param)

    def add_module(self, name, module):
        if not isinstance(module, Module) and module is not None:
            raise TypeError("%s is not a Module subclass" % cthtorch.typename(module))
        if not isinstance(name, str):
            raise TypeError("module name should be a string. Got %s" % type(name).__name__)
        if hasattr(self, name) and name not in self._modules:
            raise KeyError("attribute '%s' already exists" % name)
        if "." in name:
            raise KeyError('module name can\'t contain ".", got: %s' % name)
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = _registered(_global_module_registration_hooks, self, name, module)

    register_module = add_module

    def get_submodule(self, target):
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def get_parameter(self, target):
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        p = getattr(mod, name)
        if not isinstance(p, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return p

    def get_buffer(self, target):
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if name not in mod._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return mod._buffers[name]

    # ---- attribute protocol ----
    def __getattr__(self, name):
        d = self.__dict__
        if "_parameters" in d and name in d["_parameters"]:
            return d["_parameters"][name]
        if "_buffers" in d and name in d["_buffers"]:
            return d["_buffers"][name]
        if "_modules" in d and name in d["_modules"]:
            return d["_modules"][name]
        raise AttributeError("'%s' object has no attribute '%s'" % (type(self).__name__, name))

    def __setattr__(self, name, value):
        def remove_from(*dicts):
            for d in dicts:
                if name in d:
                    if isinstance(d, dict):
                        del d[name]
                    else:
                        d.discard(name)
        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(self.__dict__, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError("cannot assign '%s' as parameter '%s' (torch.nn.Parameter or None expected)"
                                % (cthtorch.typename(value), name))
            self.register_parameter(name, value)
        else:
            modules = self.__dict__.get("_modules")
            if isinstance(value, Module):
                if modules is None:
                    raise AttributeError("cannot assign module before Module.__init__() call")
                remove_from(self.__dict__, self._parameters, self._buffers, self._non_persistent_buffers_set)
                modules[name] = _registered(_global_module_registration_hooks, self, name, value)
            elif modules is not None and name in modules:
                if value is not None:
                    raise TypeError("cannot assign '%s' as child module '%s' (torch.nn.Module or None expected)"
                                    % (cthtorch.typename(value), name))
                modules[name] = _registered(_global_module_registration_hooks, self, name, value)
            else:
                buffers = self.__dict__.get("_buffers")
                if isinstance(value, cthtorch.Tensor) and getattr(value, "_is_buffer", False):
                    self.register_buffer(name, value, getattr(value, "_buffer_persistent", True))
                elif buffers is not None and name in buffers:
                    if value is not None and not isinstance(value, cthtorch.Tensor):
                        raise TypeError("cannot assign '%s' as buffer '%s' (torch.Tensor or None expected)"
                                        % (cthtorch.typename(value), name))
                    buffers[name] = _registered(_global_buffer_registration_hooks, self, name, value)
                else:
                    object.__setattr__(self, name, value)

    def __delattr__(self, name):
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self):
        keys = list(object.__dir__(self)) + list(self._parameters) + list(self._modules) + list(self._buffers)
        return sorted(k for k in set(keys) if not k[0].isdigit())

    def __getstate__(self):
        return self.__dict__.copy()

    def __setstate__(self, state):
        self.__dict__.update(state)
        for k in ("_forward_hooks_with_kwargs", "_forward_pre_hooks_with_kwargs", "_state_dict_hooks",
                  "_load_state_dict_pre_hooks"):
            self.__dict__.setdefault(k, collections.OrderedDict())
        self.__dict__.setdefault("_non_persistent_buffers_set", set())

    # ---- traversal ----
    def _named_members(self, get_members_fn, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for k, v in get_members_fn(module):
                if v is None or (remove_duplicate and id(v) in memo):
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield (module_prefix + ("." if module_prefix else "") + k, v)

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members(lambda m: m._parameters.items(), prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members(lambda m: m._buffers.items(), prefix, recurse, remove_duplicate)

    def children(self):
        for _, m in self.named_children():
            yield m

    def named_children(self):
        memo = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in memo:
                memo.add(id(m))
                yield name, m

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        if memo is None:
            memo = set()
        if id(self) not in memo:
            if remove_duplicate:
                memo.add(id(self))
            yield prefix, self
            for name, m in self._modules.items():
                if m is None:
                    continue
                yield from m.named_modules(memo, prefix + ("." if prefix else "") + name, remove_duplicate)

    # ---- modes and conversions ----
    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        for p in self.parameters():
            if p.grad is not None:
                if set_to_none:
                    p.grad = None
                else:
                    if p.grad.grad_fn is not None:
                        p.grad.detach_()
                    else:
                        p.grad.requires_grad_(False)
                    p.grad.zero_()

    def _apply(self, fn, recurse=True):
        """Applies fn to every parameter, gradient and buffer. As torch's: a converted parameter keeps its
        identity (optimizers built before .double()/.to() still hold it) by taking the result through
        `.data =` where the tensor kinds allow; a new Parameter replaces it only where they don't (dense vs
        sparse) or when torch.__future__'s overwrite switch is on; the swap switch swaps the contents in."""
        if recurse:
            for m in self.children():
                m._apply(fn)
        future = cthtorch.__future__
        overwrite = future.get_overwrite_module_params_on_conversion()

        def keep_object(t, applied):
            return not overwrite and cthtorch._has_compatible_shallow_copy_type(t, applied)

        swap = future.get_swap_module_params_on_conversion()
        for key, param in self._parameters.items():
            if param is None:
                continue
            with cthtorch.no_grad():
                applied = fn(param)
            grad = param.grad
            if swap:
                try:
                    param.grad = None   # the gradient is swapped on its own below
                    cthtorch.utils.swap_tensors(param, Parameter(applied, requires_grad=param.requires_grad))
                except Exception as e:
                    param.grad = grad
                    raise RuntimeError("_apply(): Couldn't swap %s.%s" % (self._get_name(), key)) from e
                out = param
            elif keep_object(param, applied):
                param.data = applied
                out = param
            else:
                out = Parameter(applied, param.requires_grad)
                self._parameters[key] = out
            if grad is None:
                continue
            with cthtorch.no_grad():
                grad_applied = fn(grad)
            if swap:
                grad_applied.requires_grad_(grad.requires_grad)
                try:
                    cthtorch.utils.swap_tensors(grad, grad_applied)
                except Exception as e:
                    raise RuntimeError("_apply(): Couldn't swap %s.%s.grad" % (self._get_name(), key)) from e
                out.grad = grad
            elif keep_object(grad, grad_applied):
                out.grad.data = grad_applied
            else:
                out.grad = grad_applied.requires_grad_(grad.requires_grad)
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def apply(self, fn):
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def to(self, *args, **kwargs):
        """Moves and/or casts parameters and buffers (floating dtypes only are cast), as torch."""
        dtype = kwargs.get("dtype")
        device = kwargs.get("device")
        non_blocking = bool(kwargs.get("non_blocking", False))
        for a in args:
            if isinstance(a, cthtorch.dtype):
                dtype = a
            elif isinstance(a, cthtorch.Tensor):
                dtype, device = a.dtype, a.device
            elif isinstance(a, (str, cthtorch.device, int)):
                device = a
            elif isinstance(a, bool):
                non_blocking = a
        if device is not None:
            device = cthtorch.device("cuda", device) if isinstance(device, int) else cthtorch.device(device)
            cthtorch.empty(0).to(device)   # raises clearly when CUDA is absent
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError("nn.Module.to only accepts floating point or complex dtypes, but got desired dtype=%s" % dtype)
        memory_format = kwargs.get("memory_format")
        if dtype is None and device is None and memory_format is None:
            return self

        def convert(t):
            if dtype is not None and t.is_floating_point():
                t = t.to(dtype)
            if memory_format is not None and t.dim() in (4, 5):   # torch lays out only the 4-d and 5-d tensors
                t = t.to(memory_format=memory_format)
            return t if device is None else t.to(device, non_blocking=non_blocking)
        return self._apply(convert)

    def cuda(self, device=None):
        return self._apply(lambda t: t.cuda(device))

    def cpu(self):
        return self._apply(lambda t: t.cpu())

    def type(self, dst_type):
        return self._apply(lambda t: t.type(dst_type))

    def float(self):
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self):
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self):
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self):
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    def share_memory(self):
        return self._apply(lambda t: t.share_memory_())

    # ---- state dict ----
    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def get_extra_state(self):
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be called. Please file "
                           "an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml to "
                           "report this bug.")

    def set_extra_state(self, state):
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be called. Please file "
                           "an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml to "
                           "report this bug.")

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        if args:
            destination = args[0] if len(args) > 0 else destination
            prefix = args[1] if len(args) > 1 else prefix
            keep_vars = args[2] if len(args) > 2 else keep_vars
        if destination is None:
            destination = collections.OrderedDict()
            destination._metadata = collections.OrderedDict()
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = {"version": self._version}
        for hook in self.__dict__.get("_state_dict_pre_hooks", {}).values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            r = hook(self, destination, prefix, {})
            if r is not None:
                destination = r
        return destination

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        assign = local_metadata.get("assign_to_params_buffers", False)
        persistent = {k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set}
        local = dict(itertools.chain(self._parameters.items(), persistent.items()))
        local = {k: v for k, v in local.items() if v is not None}
        for name, param in local.items():
            key = prefix + name
            if key in state_dict:
                input_param = state_dict[key]
                if not isinstance(input_param, cthtorch.Tensor):
                    error_msgs.append('While copying the parameter named "%s", expected torch.Tensor or Tensor-like '
                                      'object from checkpoint but received %s' % (key, type(input_param)))
                    continue
                if input_param.shape != param.shape:
                    error_msgs.append("size mismatch for %s: copying a param with shape %s from checkpoint, the shape "
                                      "in current model is %s." % (key, input_param.shape, param.shape))
                    continue
                try:
                    if assign:   # load_state_dict(assign=True): take the checkpoint's tensor itself
                        if isinstance(param, cthtorch.nn.Parameter):
                            if not isinstance(input_param, cthtorch.nn.Parameter):
                                input_param = cthtorch.nn.Parameter(input_param, requires_grad=param.requires_grad)
                            else:
                                input_param.requires_grad_(param.requires_grad)
                            self._parameters[name] = input_param
                        else:
                            self._buffers[name] = input_param
                        continue
                    if param.is_meta and not input_param.is_meta:
                        warnings.warn("for %s: copying from a non-meta parameter in the checkpoint to a meta "
                                      "parameter in the current model, which is a no-op. (Did you mean to pass "
                                      "`assign=True` to assign items in the state dictionary to their corresponding "
                                      "key in the module instead of copying them in place?)" % key)
                    with cthtorch.no_grad():
                        param.copy_(input_param)
                except Exception as ex:  # noqa: BLE001
                    error_msgs.append('While copying the parameter named "%s", whose dimensions in the model are %s '
                                      'and whose dimensions in the checkpoint are %s, an exception occurred : %s.'
                                      % (key, param.size(), input_param.size(), ex.args))
            elif strict:
                missing_keys.append(key)
        extra = prefix + _EXTRA_STATE_KEY_SUFFIX
        has_extra = type(self).set_extra_state is not Module.set_extra_state
        if has_extra:
            if extra in state_dict:
                self.set_extra_state(state_dict[extra])
            elif strict:
                missing_keys.append(extra)
        if strict:
            for key in state_dict.keys():
                if key.startswith(prefix) and not (has_extra and key == extra):
                    input_name = key[len(prefix):].split(".", 1)
                    if input_name[0] not in self._modules and input_name[0] not in local:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        if not isinstance(state_dict, collections.abc.Mapping):
            raise TypeError("Expected state_dict to be dict-like, got %s." % type(state_dict))
        missing, unexpected, errors = [], [], []
        # the copy keeps the per-module versions that _load_from_state_dict overrides read (old file layouts)
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = collections.OrderedDict(state_dict)

        def load(module, prefix=""):
            local = dict(metadata.get(prefix[:-1], {})) if metadata is not None else {}
            if assign:
                local["assign_to_params_buffers"] = True
            for hook, with_module in module.__dict__.get("_load_state_dict_pre_hooks_full", {}).values():
                args = (state_dict, prefix, local, True, missing, unexpected, errors)
                hook(module, *args) if with_module else hook(*args)
            module._load_from_state_dict(state_dict, prefix, local, True, missing, unexpected, errors)
            for name, child in module._modules.items():
                if child is not None:
                    load(child, prefix + name + ".")
        load(self)
        keys = _IncompatibleKeys(missing, unexpected)
        for module in self.modules():
            for hook in module.__dict__.get("_load_state_dict_post_hooks", {}).values():
                if hook(module, keys) is not None:
                    raise AssertionError("Hooks registered with ``register_load_state_dict_post_hook`` are not "
                                         "expected to return new values, if incompatible_keys need to be "
                                         "modified, it should be done inplace.")
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: %s. " % ", ".join('"%s"' % k for k in unexpected))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: %s. " % ", ".join('"%s"' % k for k in missing))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for %s:\n\t%s"
                               % (self.__class__.__name__, "\n\t".join(errors)))
        return keys

    # ---- hooks ----
    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        handle = RemovableHandle(self._forward_pre_hooks, extra_dict=self._forward_pre_hooks_with_kwargs)
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        handle = RemovableHandle(self._forward_hooks, extra_dict=self._forward_hooks_with_kwargs)
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def _backward_hook_kind(self, full):
        if self.__dict__.get("_is_full_backward_hook") is (not full):
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on a single Module. "
                               "Please use only one of them.")
        self.__dict__["_is_full_backward_hook"] = full

    def register_full_backward_hook(self, hook, prepend=False):
        self._backward_hook_kind(True)
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        if prepend:
            self._backward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_backward_hook(self, hook):
        """The deprecated non-full hook: hook(module, grad_input, grad_output) on the autograd node that made
        the module's (first) output, so grad_input is that node's, as torch's (see _non_full_backward_hooks)."""
        self._backward_hook_kind(False)
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        return handle

    def _full_backward_hooks(self):
        own = list(self._backward_hooks.values()) if self.__dict__.get("_is_full_backward_hook") else []
        return (list(_global_backward_hooks.values()) if _global_is_full_backward_hook else []) + own

    def _non_full_backward_hooks(self, args, result):
        hooks = (list(_global_backward_hooks.values()) if _global_is_full_backward_hook is False else []) + (
            list(self._backward_hooks.values()) if self.__dict__.get("_is_full_backward_hook") is False else [])
        if not hooks:
            return
        var = result
        while not isinstance(var, cthtorch.Tensor):
            var = next(v for v in var.values() if isinstance(v, cthtorch.Tensor)) if isinstance(var, dict) else var[0]
        grad_fn = var.grad_fn
        if grad_fn is None:
            return
        for hook in hooks:
            grad_fn.register_hook(functools.partial(hook, self))
        _warn_non_full_backward_hook(args, result, grad_fn)

    def register_full_backward_pre_hook(self, hook, prepend=False):
        if "_backward_pre_hooks" not in self.__dict__:
            self.__dict__["_backward_pre_hooks"] = collections.OrderedDict()
        handle = RemovableHandle(self._backward_pre_hooks)
        self._backward_pre_hooks[handle.id] = hook
        if prepend:
            self._backward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def _hook_dict(self, name):
        if name not in self.__dict__:
            self.__dict__[name] = collections.OrderedDict()
        return self.__dict__[name]

    def register_state_dict_pre_hook(self, hook):
        """hook(module, prefix, keep_vars) before the module saves its tensors."""
        d = self._hook_dict("_state_dict_pre_hooks")
        handle = RemovableHandle(d)
        d[handle.id] = hook
        return handle

    def register_state_dict_post_hook(self, hook):
        """hook(module, state_dict, prefix, local_metadata) after; changes are made in place."""
        return self._register_state_dict_hook(hook)

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        d = self._hook_dict("_load_state_dict_pre_hooks_full")
        handle = RemovableHandle(d)
        d[handle.id] = (hook, with_module)
        return handle

    def register_load_state_dict_pre_hook(self, hook):
        """hook(module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def register_load_state_dict_post_hook(self, hook):
        """hook(module, incompatible_keys), after the whole load; edits the key lists in place."""
        d = self._hook_dict("_load_state_dict_post_hooks")
        handle = RemovableHandle(d)
        d[handle.id] = hook
        return handle

    def set_submodule(self, target, module, strict=False):
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        atoms = target.split(".")
        parent = self.get_submodule(".".join(atoms[:-1])) if len(atoms) > 1 else self
        if strict and not hasattr(parent, atoms[-1]):
            raise AttributeError(parent._get_name() + " has no attribute `" + atoms[-1] + "`")
        if hasattr(parent, atoms[-1]) and not isinstance(getattr(parent, atoms[-1]), Module):
            raise AttributeError("`" + atoms[-1] + "` is not an nn.Module")
        setattr(parent, atoms[-1], module)

    def to_empty(self, *, device, recurse=True):
        """Parameters and buffers become uninitialised tensors of the same shapes on `device` (the step
        after building a module on the meta device)."""
        return self._apply(lambda t: cthtorch.empty_like(t, device=device), recurse=recurse)

    def compile(self, *args, **kwargs):
        """torch.compile in place: here the module keeps running eagerly."""
        return None

    def _register_state_dict_hook(self, hook):
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    def _call_impl(self, *args, **kwargs):
        for hid, hook in itertools.chain(_global_forward_pre_hooks.items(), self._forward_pre_hooks.items()):
            if hid in self._forward_pre_hooks_with_kwargs:
                r = hook(self, args, kwargs)
                if r is not None:
                    args, kwargs = r
            else:
                r = hook(self, args)
                if r is not None:
                    args = r if isinstance(r, tuple) else (r,)
        bw = None
        if (self._full_backward_hooks() or self.__dict__.get("_backward_pre_hooks")
                or _global_backward_pre_hooks) and cthtorch.is_grad_enabled():
            bw = _BackwardHookState(self)
            args = bw.wrap_inputs(args)
        result = self.forward(*args, **kwargs)
        for hid, hook in itertools.chain(_global_forward_hooks.items(), self._forward_hooks.items()):
            if hid in self._forward_hooks_with_kwargs:
                r = hook(self, args, kwargs, result)
            else:
                r = hook(self, args, result)
            if r is not None:
                result = r
        if bw is not None:
            result = bw.wrap_outputs(result)
        if cthtorch.is_grad_enabled():   # beside full hooks or pre-hooks too, as torch's _call_impl
            self._non_full_backward_hooks(args, result)
        return result

    __call__ = _call_impl

    # ---- repr ----
    def extra_repr(self):
        return ""

    def _get_name(self):
        return self.__class__.__name__

    def __repr__(self):
        extra_lines = []
        extra = self.extra_repr()
        if extra:
            extra_lines = extra.split("\n")
        child_lines = []
        for key, module in self._modules.items():
            if getattr(module, "_hidden_in_repr", False):   # quantized layers' packed parameters
                continue
            mod_str = repr(module)
            mod_str = _addindent(mod_str, 2)
            child_lines.append("(" + key + "): " + mod_str)
        lines = extra_lines + child_lines
        main_str = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main_str += extra_lines[0]
            else:
                main_str += "\n  " + "\n  ".join(lines) + "\n"
        main_str += ")"
        return main_str


_EXTRA_STATE_KEY_SUFFIX = "_extra_state"


_NON_FULL = "Using a non-full backward hook when "


def _warn_non_full_backward_hook(inputs, result, grad_fn):
    """torch's FutureWarnings for where a non-full hook's grad_input is not the module's inputs' gradient"""
    T = cthtorch.Tensor
    seqs = []
    for value, what, part in ((result, "return", "grad_output"), (inputs, "take as input", "grad_input")):
        if not isinstance(value, T) and not (isinstance(value, tuple) and all(isinstance(v, T) for v in value)):
            warnings.warn("Using non-full backward hooks on a Module that does not %s a single Tensor or a tuple of "
                          "Tensors is deprecated and will be removed in future versions. This hook will be missing "
                          "some of the %s. Please use register_full_backward_hook to get the documented behavior."
                          % (what, part), FutureWarning, stacklevel=3)
            return
        seqs.append((value,) if isinstance(value, T) else value)
    result, inputs = seqs
    out_fns = {r.grad_fn for r in result if r.grad_fn is not None}
    if not out_fns or (len(out_fns) == 1 and grad_fn not in out_fns):
        warnings.warn(_NON_FULL + "outputs are nested in python data structure is deprecated and will be removed "
                      "in future versions. This hook will be missing some grad_output.", FutureWarning, stacklevel=3)
    elif len(out_fns) > 1:
        warnings.warn(_NON_FULL + "outputs are generated by different autograd Nodes is deprecated and will be "
                      "removed in future versions. This hook will be missing some grad_output. Please use "
                      "register_full_backward_hook to get the documented behavior.", FutureWarning, stacklevel=3)
    elif {i.grad_fn for i in inputs if i.grad_fn is not None} != {n[0] for n in grad_fn.next_functions}:
        warnings.warn(_NON_FULL + "the forward contains multiple autograd Nodes is deprecated and will be removed "
                      "in future versions. This hook will be missing some grad_input. Please use "
                      "register_full_backward_hook to get the documented behavior.", FutureWarning, stacklevel=3)


class _BackwardHookFunction(cthtorch.autograd.Function):
    """Identity on a module's tensor inputs or outputs whose backward hands the
    gradients to a callback (which may replace them): as torch's
    BackwardHookFunction, it sits between the module and the rest of the graph,
    so the gradients it sees are the module's own."""

    @staticmethod
    def forward(ctx, callback, *tensors):
        ctx.callback = callback
        return tuple(t.view_as(t) for t in tensors)

    @staticmethod
    def backward(ctx, *grads):
        r = ctx.callback(grads)
        return (None,) + tuple(grads if r is None else r)


class _BackwardHookState:
    """One module call's full backward (pre-)hooks: pre-hooks get the module's
    grad_output when it is complete; hooks get (grad_input, grad_output) once
    the gradients reach the module's inputs, or with grad_input all None when
    no input requires grad."""

    def __init__(self, module):
        self.module = module
        self.grad_outputs = None
        self.n_inputs = 0
        self.input_hooked = False

    def _hooks(self):
        return self.module._full_backward_hooks()

    def _fire(self, grad_inputs):
        for hook in self._hooks():
            r = hook(self.module, grad_inputs, self.grad_outputs)
            if r is not None:
                r = tuple(r) if isinstance(r, (tuple, list)) else (r,)
                if len(r) != len(grad_inputs):
                    raise RuntimeError("Backward hook returned an invalid number of grad_input, got %d, but "
                                       "expected %d" % (len(r), len(grad_inputs)))
                grad_inputs = r
        return grad_inputs

    @staticmethod
    def _apply(callback, items, positions):
        """items with the tensors at positions replaced by the identity's outputs."""
        outs = _BackwardHookFunction.apply(callback, *[items[i] for i in positions])
        outs = outs if isinstance(outs, tuple) else (outs,)
        items = list(items)
        for i, o in zip(positions, outs):
            items[i] = o
        return items

    def wrap_inputs(self, args):
        pos = [i for i, a in enumerate(args) if isinstance(a, cthtorch.Tensor) and a.requires_grad]
        tensors = [i for i, a in enumerate(args) if isinstance(a, cthtorch.Tensor)]
        self.n_inputs = len(tensors)
        if not pos or not self._hooks():
            return args
        self.input_hooked = True

        # as torch: a tensor input that does not require grad shows a zero gradient
        zeros = {i: args[i] for i in tensors if i not in pos}

        def on_grad_inputs(grads):
            full = [cthtorch.zeros_like(zeros[i]) if i in zeros else None for i in tensors]
            for i, g in zip(pos, grads):
                full[tensors.index(i)] = g
            new = self._fire(tuple(full))
            return tuple(new[tensors.index(i)] for i in pos)
        return tuple(self._apply(on_grad_inputs, args, pos))

    def wrap_outputs(self, result):
        single = not isinstance(result, tuple)
        outs = (result,) if single else result
        pos = [i for i, o in enumerate(outs) if isinstance(o, cthtorch.Tensor) and o.requires_grad]
        if not pos:
            return result
        tensors = [i for i, o in enumerate(outs) if isinstance(o, cthtorch.Tensor)]

        def on_grad_outputs(grads):
            full = [None] * len(tensors)
            for i, g in zip(pos, grads):
                full[tensors.index(i)] = g
            full = tuple(full)
            for hook in (list(_global_backward_pre_hooks.values())
                         + list(self.module.__dict__.get("_backward_pre_hooks", {}).values())):
                r = hook(self.module, full)
                if r is not None:
                    full = tuple(r) if isinstance(r, (tuple, list)) else (r,)
            self.grad_outputs = full
            if not self.input_hooked and self._hooks():
                warnings.warn("Full backward hook is firing when gradients are computed with respect to module "
                              "outputs since no inputs require gradients. See https://docs.pytorch.org/docs/main/"
                              "generated/torch.nn.Module.html#torch.nn.Module.register_full_backward_hook for more "
                              "details.", stacklevel=2)
                self._fire((None,) * max(self.n_inputs, 1))
            return tuple(full[tensors.index(i)] for i in pos)
        outs = self._apply(on_grad_outputs, outs, pos)
        return outs[0] if single else type(result)(outs) if not hasattr(result, "_fields") else type(result)(*outs)


def _add_global_hook(hooks, hook):
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    return handle


def register_module_forward_pre_hook(hook):
    return _add_global_hook(_global_forward_pre_hooks, hook)


def register_module_forward_hook(hook):
    return _add_global_hook(_global_forward_hooks, hook)


def register_module_full_backward_pre_hook(hook):
    """hook(module, grad_output) before every module's full backward hooks (as torch's)."""
    return _add_global_hook(_global_backward_pre_hooks, hook)


def _register_global_backward_hook(hook, full):
    global _global_is_full_backward_hook
    if _global_is_full_backward_hook is (not full):
        raise RuntimeError("Cannot use both regular backward hooks and full backward hooks as a global Module hook. "
                           "Please use only one of them.")
    _global_is_full_backward_hook = full
    return _add_global_hook(_global_backward_hooks, hook)


def register_module_full_backward_hook(hook):
    """hook(module, grad_input, grad_output) for every module, before its own full backward hooks."""
    return _register_global_backward_hook(hook, True)


def register_module_backward_hook(hook):
    """Deprecated spelling; here it runs as a full backward hook (as Module.register_backward_hook does)."""
    return _register_global_backward_hook(hook, False)


def register_module_buffer_registration_hook(hook):
    """hook(module, name, buffer) on every buffer registration; a non-None return replaces the buffer."""
    return _add_global_hook(_global_buffer_registration_hooks, hook)


def register_module_module_registration_hook(hook):
    """hook(module, name, submodule) on every submodule registration; a non-None return replaces it."""
    return _add_global_hook(_global_module_registration_hooks, hook)


def register_module_parameter_registration_hook(hook):
    """hook(module, name, param) on every parameter registration; a non-None return replaces it."""
    return _add_global_hook(_global_parameter_registration_hooks, hook)
