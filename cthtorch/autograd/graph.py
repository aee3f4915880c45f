"""Graph inspection helpers and saved-tensor hooks (torch.autograd.graph)."""
import contextlib

from cthtorch import _C

Node = None


def _set_node():
    global Node
    from cthtorch import _C
    Node = _C._FunctionBase


_set_node()


class saved_tensors_hooks:
    """Inside the block every tensor autograd saves for backward goes through pack_hook, and backward
    reads it back through unpack_hook(packed). Only the innermost block's hooks apply."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        if _disabled:
            raise RuntimeError(_disabled[-1])
        _C._push_saved_tensors_hooks(self.pack_hook, self.unpack_hook)

    def __exit__(self, *args):
        _C._pop_saved_tensors_hooks()


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are kept on the CPU (optionally pinned) and moved back to their device for backward."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack_to_cpu(tensor):
            packed = tensor.cpu()
            return tensor.device, packed.pin_memory() if pin_memory else packed

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device, non_blocking=pin_memory)

        super().__init__(pack_to_cpu, unpack_from_cpu)


_disabled = []   # messages of the disable_saved_tensors_hooks blocks we are in


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message):
    """Inside the block, entering saved_tensors_hooks raises RuntimeError(error_message) (for features
    that cannot work with them)."""
    _disabled.append(error_message)
    try:
        yield
    finally:
        _disabled.pop()
