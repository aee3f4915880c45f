"""torch.utils.checkpoint: activation checkpointing. The wrapped function runs
without recording a graph; backward re-runs it with grad enabled (and the
forward's RNG state, so dropout masks repeat) and backpropagates through the
recomputation. Memory is traded for compute exactly as in PyTorch's reentrant
variant; use_reentrant=False is accepted and takes the same path."""
import warnings

import cthtorch
from cthtorch.autograd.function import Function


def _detach_inputs(inputs):
    out = []
    for x in inputs:
        if isinstance(x, cthtorch.Tensor):
            d = x.detach()
            d.requires_grad_(x.requires_grad)
            out.append(d)
        else:
            out.append(x)
    return tuple(out)


class CheckpointFunction(Function):
    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        if preserve_rng_state:
            ctx.fwd_rng_state = cthtorch.get_rng_state()
        ctx.inputs = [None if isinstance(a, cthtorch.Tensor) else a for a in args]
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, cthtorch.Tensor)]
        ctx.save_for_backward(*[a for a in args if isinstance(a, cthtorch.Tensor)])
        with cthtorch.no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = t
        detached = _detach_inputs(inputs)
        rng = cthtorch.get_rng_state() if ctx.preserve_rng_state else None
        try:
            if rng is not None:
                cthtorch.set_rng_state(ctx.fwd_rng_state)
            with cthtorch.enable_grad():
                outputs = ctx.run_function(*detached)
        finally:
            if rng is not None:
                cthtorch.set_rng_state(rng)
        if isinstance(outputs, cthtorch.Tensor):
            outputs = (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads) if isinstance(o, cthtorch.Tensor) and o.requires_grad]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        cthtorch.autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(d.grad if isinstance(d, cthtorch.Tensor) else None for d in detached)


def checkpoint(function, *args, use_reentrant=None, context_fn=None, determinism_check="default", debug=False,
               preserve_rng_state=True, **kwargs):
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
                      "Refer to docs for more details on the differences between the two variants.", stacklevel=2)
    if kwargs:
        f = function
        function = lambda *a: f(*a, **kwargs)  # noqa: E731
    if not cthtorch.is_grad_enabled() or not any(isinstance(a, cthtorch.Tensor) and a.requires_grad for a in args):
        # nothing to differentiate: reentrant checkpoint would warn and return an output without grad
        if not any(p.requires_grad for p in getattr(function, "parameters", lambda: [])()):
            return function(*args)
    return CheckpointFunction.apply(function, preserve_rng_state, *args)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    if isinstance(functions, cthtorch.nn.Sequential):
        functions = list(functions.children())
    functions = list(functions)
    size = len(functions) // segments if segments else len(functions)

    def run(start, end):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x
        return forward
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=True if use_reentrant is None else use_reentrant,
                           **kwargs)
    return run(end + 1, len(functions) - 1)(input)
