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


def increment_version(tensor):
    """Mark tensor (or each of an iterable of tensors) as modified in place without writing it: backward then
    refuses the saved copies of its old value, as after a real in-place op."""
    import cthtorch
    _C._increment_version((tensor,) if isinstance(tensor, cthtorch.Tensor) else tensor)


class GradientEdge(tuple):
    """(node, output_nr): the graph node that receives a tensor's gradient and which of its inputs it is."""
    __slots__ = ()
    _fields = ("node", "output_nr", "ownership_token")

    def __new__(cls, node, output_nr, ownership_token=None):
        return tuple.__new__(cls, (node, output_nr, ownership_token))

    node = property(lambda self: self[0])
    output_nr = property(lambda self: self[1])
    ownership_token = property(lambda self: self[2])

    def __repr__(self):
        return "GradientEdge(node=%r, output_nr=%r, ownership_token=%r)" % tuple(self)


def get_gradient_edge(tensor):
    """The GradientEdge of tensor: its grad_fn, or for a leaf the AccumulateGrad node that fills .grad."""
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not require "
                           "gradients")
    if tensor.grad_fn is not None:
        return GradientEdge(tensor.grad_fn, tensor.output_nr)
    node = tensor.view_as(tensor).grad_fn.next_functions[0][0]   # the leaf's accumulator, shared by every use
    return GradientEdge(node, 0)


class _MultiGradHook:
    """One register_multi_grad_hook: the tensors' grads of the backward under way, collected by tensor hooks;
    fn runs from a callback queued on the engine when the first of them arrives. In mode 'all' that callback
    runs when backward finishes, so the tensors the backward never reached stay None (torch calls fn as
    soon as the last reached one arrives: the same values, possibly before other hooks of that backward)."""

    def __init__(self, tensors, fn, mode):
        self.fn, self.mode, self.grads, self.pending = fn, mode, [None] * len(tensors), False

    def hook(self, i):
        def on_grad(grad):
            if not self.pending:
                self.pending = True
                self.grads = [None] * len(self.grads)
                from cthtorch.autograd import Variable
                Variable._execution_engine.queue_callback(self.finish)
                if self.mode == "any":
                    self.fn(grad)
                    return None
            if self.mode == "all":
                self.grads[i] = grad
            return None
        return on_grad

    def finish(self):
        self.pending = False
        if self.mode == "all":
            grads, self.grads = self.grads, [None] * len(self.grads)
            self.fn(grads)


class _MultiHandle:
    def __init__(self, handles):
        self.handles = handles

    def remove(self):
        for h in self.handles:
            h.remove()

    def __enter__(self):
        return self

    def __exit__(self, *args):
        self.remove()


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """Call fn once per backward that reaches any of tensors: in mode 'all' with the list of their gradients
    (None where that backward computed none), in mode 'any' with the first gradient computed."""
    if mode not in ("all", "any"):
        raise ValueError("Expects mode to be one of ('all', 'any') but got %s" % mode)
    tensors = list(tensors)
    state = _MultiGradHook(tensors, fn, mode)
    return _MultiHandle([t.register_hook(state.hook(i)) for i, t in enumerate(tensors) if t.requires_grad])


class allow_mutation_on_saved_tensors(saved_tensors_hooks):
    """Inside the block a tensor that autograd saved may be modified in place afterwards: every saved tensor is
    copied when saved, so backward reads the value it had then (memory is the cost, as in torch, where only
    the mutated ones are copied)."""

    def __init__(self):
        super().__init__(lambda t: t.detach().clone(), lambda t: t)

    def __enter__(self):
        super().__enter__()
        return self
