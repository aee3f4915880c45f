"""nn.utils.skip_init: build a module without running its initializers."""
import inspect

import cthtorch


def skip_init(module_cls, *args, **kwargs):
    if not issubclass(module_cls, cthtorch.nn.Module):
        raise RuntimeError("Expected a Module; got %s" % module_cls)
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    final_device = kwargs.pop("device", "cpu")
    # torch builds on the meta device, which cthtorch lacks: the module is built
    # on the CPU and its storage replaced by fresh uninitialized memory, so the
    # result is the same (uninitialized parameters) but the initializers do run.
    return module_cls(*args, **kwargs).to_empty(device=final_device)
