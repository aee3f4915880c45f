"""nn.DataParallel: one process driving several GPUs. With no GPU PyTorch's
DataParallel keeps no devices and calls the module itself; cthtorch does the
same, and with one GPU it runs the module on that GPU (what PyTorch does for a
single device id). Replicating over several GPUs is not implemented: use
DistributedDataParallel, one process per device."""
from itertools import chain

import cthtorch
from cthtorch.nn.modules.module import Module

__all__ = ["DataParallel", "data_parallel"]


def _device_index(d):
    if isinstance(d, cthtorch.device):
        return 0 if d.index is None else d.index
    return int(d)


def _to_device(obj, device):
    """The inputs moved to the one device (scatter onto a single device)."""
    if isinstance(obj, cthtorch.Tensor):
        return obj.to(device)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*(_to_device(o, device) for o in obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_device(o, device) for o in obj)
    if isinstance(obj, dict):
        return type(obj)((k, _to_device(v, device)) for k, v in obj.items())
    return obj


def _check_on_device(module, device):
    for t in chain(module.parameters(), module.buffers()):
        if t.device != device:
            raise RuntimeError("module must have its parameters and buffers on device %s (device_ids[0]) but found "
                               "one of them on device: %s" % (device, t.device))


def _one_device(device_ids):
    if len(device_ids) > 1:
        raise NotImplementedError("cthtorch: DataParallel over %d GPUs is not implemented (one GPU, or no GPU, runs "
                                  "the module directly); use DistributedDataParallel with one process per GPU"
                                  % len(device_ids))


class DataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        if not cthtorch.cuda.is_available():
            self.module = module
            self.device_ids = []
            return
        if device_ids is None:
            device_ids = list(range(cthtorch.cuda.device_count()))
        if output_device is None:
            output_device = device_ids[0]
        self.dim = dim
        self.module = module
        self.device_ids = [_device_index(d) for d in device_ids]
        self.output_device = _device_index(output_device)
        self.src_device_obj = cthtorch.device("cuda", self.device_ids[0])
        if len(self.device_ids) == 1:
            self.module.to(self.src_device_obj)

    def forward(self, *inputs, **kwargs):
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        _check_on_device(self.module, self.src_device_obj)
        _one_device(self.device_ids)
        return self.module(*_to_device(inputs, self.src_device_obj), **_to_device(kwargs, self.src_device_obj))


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    if not cthtorch.cuda.is_available():
        raise RuntimeError("device type could not be determined")
    if device_ids is None:
        device_ids = list(range(cthtorch.cuda.device_count()))
    device = cthtorch.device("cuda", _device_index(device_ids[0]))
    _check_on_device(module, device)
    _one_device(device_ids)
    return module(*_to_device(inputs, device), **_to_device(module_kwargs or {}, device))
