"""The autograd Functions behind scatter/gather/broadcast (torch.nn.parallel._functions).
Programs import them for their multi-GPU paths (wide-residual-networks' utils.data_parallel
broadcasts its functional parameters with Broadcast.apply). CPU tensors are refused with
PyTorch's assertion; several GPUs are not implemented in cthtorch (see DataParallel)."""
import cthtorch
from cthtorch.autograd import Function

__all__ = ["Broadcast", "ReduceAddCoalesced", "Gather", "Scatter"]


def _refuse_cpu(what, tensors):
    assert all(t.device.type != "cpu" for t in tensors), "%s function not implemented for CPU tensors" % what


def _one_device(what, devices):
    if len(devices) != 1:
        raise NotImplementedError("cthtorch: %s over %d GPUs is not implemented; use DistributedDataParallel "
                                  "with one process per GPU" % (what, len(devices)))
    d = cthtorch.device(devices[0]) if isinstance(devices[0], str) else devices[0]
    if isinstance(d, cthtorch.device) and d.type == "cpu":
        raise ValueError("Expected a non cpu device, but got: %s" % d)
    return d if isinstance(d, cthtorch.device) else cthtorch.device("cuda", d)


class Broadcast(Function):
    @staticmethod
    def forward(ctx, target_gpus, *inputs):
        _refuse_cpu("Broadcast", inputs)
        device = _one_device("Broadcast", target_gpus)
        ctx.input_device = [t.device for t in inputs]
        return tuple(t.to(device, copy=True) for t in inputs)

    @staticmethod
    def backward(ctx, *grads):
        return (None,) + tuple(g.to(d) for g, d in zip(grads, ctx.input_device))


class ReduceAddCoalesced(Function):
    @staticmethod
    def forward(ctx, destination, num_inputs, *grads):
        _refuse_cpu("ReduceAddCoalesced", grads)
        raise NotImplementedError("cthtorch: ReduceAddCoalesced (a reduction over several GPUs) is not implemented")


class Gather(Function):
    @staticmethod
    def forward(ctx, target_device, dim, *inputs):
        _refuse_cpu("Gather", inputs)
        if target_device == "cpu":
            device = cthtorch.device("cpu")
        else:
            device = target_device if isinstance(target_device, cthtorch.device) else cthtorch.device("cuda", target_device)
        ctx.dim, ctx.input_device = dim, [t.device for t in inputs]
        ctx.sizes = [t.size(dim) for t in inputs]
        return cthtorch.cat([t.to(device) for t in inputs], dim)

    @staticmethod
    def backward(ctx, grad):
        parts = grad.split(ctx.sizes, ctx.dim)
        return (None, None) + tuple(p.to(d) for p, d in zip(parts, ctx.input_device))


class Scatter(Function):
    @staticmethod
    def forward(ctx, target_gpus, chunk_sizes, dim, input):
        device = _one_device("Scatter", target_gpus)
        ctx.dim, ctx.input_device = dim, input.device
        return (input.to(device),)

    @staticmethod
    def backward(ctx, *grads):
        return (None, None, None, grads[0].to(ctx.input_device))
