"""torch.utils.data._utils.pin_memory: the DataLoader's pin_memory=True applied to a batch."""
import cthtorch


def pin_memory(data, device=None):
    """Tensors in the batch, at any depth, pinned (device: torch's accelerator argument; the host is the only one)."""
    if isinstance(data, cthtorch.Tensor):
        return data.pin_memory()
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, dict):
        return type(data)({k: pin_memory(v) for k, v in data.items()})
    if isinstance(data, tuple) and hasattr(data, "_fields"):   # namedtuple
        return type(data)(*(pin_memory(v) for v in data))
    if isinstance(data, (list, tuple)):
        return type(data)(pin_memory(v) for v in data)
    if hasattr(data, "pin_memory"):
        return data.pin_memory()
    return data
