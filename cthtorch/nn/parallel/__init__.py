"""nn.parallel on a CPU-only build: DataParallel runs the module itself (with
no CUDA devices PyTorch's DataParallel does the same); DistributedDataParallel
needs an initialized process group, which cthtorch does not provide."""
from cthtorch.nn.modules.module import Module


class DataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.device_ids = []
        self.output_device = None
        self.dim = dim

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    return module(*inputs, **(module_kwargs or {}))


class DistributedDataParallel(Module):
    def __init__(self, module, *args, **kwargs):
        raise RuntimeError("Default process group has not been initialized, please make sure to call "
                           "init_process_group.")


__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]
