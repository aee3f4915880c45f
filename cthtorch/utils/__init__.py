"""cthtorch.utils: data loading, hooks and swap_tensors."""
from cthtorch.utils import hooks  # noqa: F401


def swap_tensors(t1, t2):
    """t1 and t2 exchange their data, autograd state, __dict__ and class; references to either object
    (an optimizer's parameter list) see the other's contents afterwards."""
    from cthtorch import _C
    _C._swap_tensors(t1, t2)


def __getattr__(name):
    # torch.utils.data is reachable as an attribute once torch is imported;
    # here it loads on first use so importing nn stays light
    if name in ("data", "checkpoint", "tensorboard", "model_zoo", "cpp_extension", "ffi", "benchmark", "_pytree",
                "dlpack"):
        import importlib
        try:
            mod = importlib.import_module("cthtorch.utils." + name)
        except ModuleNotFoundError as e:
            if e.name != "cthtorch.utils." + name:
                raise
            raise AttributeError("module 'cthtorch.utils' has no attribute '%s'" % name) from None
        globals()[name] = mod
        return mod
    raise AttributeError("module 'cthtorch.utils' has no attribute '%s'" % name)
