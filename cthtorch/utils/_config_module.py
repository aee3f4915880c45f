"""torch.utils._config_module's behaviour for cthtorch's knob modules (torch._dynamo.config,
torch._inductor.config): module attributes with torch's defaults, unknown names refused as torch
refuses them (a misspelt knob still fails loudly), and patch() for a block or a function.
Nothing in cthtorch reads the knobs: there is no compiler."""
import contextlib
import sys
import types


class ConfigModule(types.ModuleType):
    def _nested(self, name):
        """(sub-config, rest) for a dotted name ("triton.cudagraphs", as torch's patch and getattr take it)"""
        head, _, rest = name.partition(".")
        sub = self.__dict__.get(head)
        if rest and isinstance(sub, ConfigModule):
            return sub, rest
        return None, None

    def __getattr__(self, name):
        aliases = self.__dict__.get("_aliases", {})
        if name in aliases:
            return getattr(self, aliases[name])
        sub, rest = self._nested(name)
        if sub is not None:
            return getattr(sub, rest)
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError("%s.%s does not exist" % (self._public_name, name))

    def __setattr__(self, name, value):
        name = self.__dict__.get("_aliases", {}).get(name, name)
        sub, rest = self._nested(name)
        if sub is not None:
            return setattr(sub, rest, value)
        if not name.startswith("_") and name not in self._defaults:
            raise AttributeError("%s.%s does not exist" % (self._public_name, name))
        super().__setattr__(name, value)

    def patch(self, arg1=None, arg2=None, **kwargs):
        """patch("name", value), patch({"name": value}) or patch(name=value): a context manager and decorator
        that sets the knobs for its extent and puts the old values back."""
        if arg1 is not None and kwargs:
            raise AssertionError("cannot pass both positional and keyword arguments to patch")
        if arg2 is not None:
            if not isinstance(arg1, str):
                raise AssertionError("first argument must be a string when passing 2 positional args to patch")
            changes = {arg1: arg2}
        elif arg1 is not None:
            if not isinstance(arg1, dict):
                raise AssertionError("first argument must be a dict when passing a single positional arg to patch")
            changes = dict(arg1)
        else:
            changes = kwargs
        return _Patch(self, changes)


class _Patch(contextlib.ContextDecorator):
    def __init__(self, config, changes):
        self.config, self.changes, self.saved = config, changes, []

    def __enter__(self):
        # an unknown name fails here, before anything changes, as in torch
        self.saved.append({k: getattr(self.config, k) for k in self.changes})
        for k, v in self.changes.items():
            setattr(self.config, k, v)

    def __exit__(self, *exc):
        for k, v in self.saved.pop().items():
            setattr(self.config, k, v)
        return False


def install_config_module(module, public_name, defaults, aliases=None):
    """Turn `module` (a config.py's own module, or a fresh one for a sub-namespace) into a ConfigModule:
    `public_name` is the torch name error messages use; a dict value in `defaults` becomes a nested
    sub-config of the same kind (torch._inductor.config.triton)."""
    module.__dict__["_public_name"] = public_name
    module.__dict__["_defaults"] = defaults
    module.__dict__["_aliases"] = aliases or {}
    for k, v in defaults.items():
        if isinstance(v, dict):
            v = install_config_module(types.ModuleType(module.__name__ + "." + k), public_name + "." + k, v)
        module.__dict__[k] = v
    module.__class__ = ConfigModule
    return module
