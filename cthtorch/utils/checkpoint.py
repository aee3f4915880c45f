"""torch.utils.checkpoint: activation checkpointing. The wrapped function runs
without recording a graph; backward re-runs it with grad enabled (and the
forward's RNG state, so dropout masks repeat) and backpropagates through the
recomputation. Memory is traded for compute exactly as in PyTorch's reentrant
variant; use_reentrant=False takes the same path, with its context_fn and
keyword arguments."""
import contextlib
import enum
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
        """run_function: one callable, or (forward's, recomputation's) when context_fn gave each its context"""
        run_function, ctx.run_function = run_function if isinstance(run_function, tuple) else (run_function,) * 2
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


class CheckpointError(RuntimeError):
    """what a recomputation that differs from the forward raises"""


class CheckpointPolicy(enum.Enum):
    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


class DefaultDeviceType:
    """the device type whose RNG state checkpoint saves besides the CPU's"""
    _default_device_type = None

    @staticmethod
    def set_device_type(device="cuda"):
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type():
        t = DefaultDeviceType._default_device_type
        return t if t is not None else ("cuda" if cthtorch.cuda.is_available() else "cpu")


def noop_context_fn():
    return contextlib.nullcontext(), contextlib.nullcontext()


def detach_variable(inputs):
    if not isinstance(inputs, tuple):
        raise RuntimeError("Only tuple of tensors is supported. Got Unsupported input type: " + type(inputs).__name__)
    return _detach_inputs(inputs)


def check_backward_validity(inputs):
    if not any(isinstance(x, cthtorch.Tensor) and x.requires_grad for x in inputs):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)


def get_device_states(*args):
    """(devices, RNG states) of the accelerator devices the tensor args live on (none on CPU)"""
    devices = []
    for a in args:
        if isinstance(a, cthtorch.Tensor) and a.device.type == "cuda" and a.get_device() not in devices:
            devices.append(a.get_device())
    return devices, [cthtorch.cuda.get_rng_state(d) for d in devices]


def set_device_states(devices, states, *, device_type=None):
    for d, st in zip(devices, states):
        cthtorch.cuda.set_rng_state(st, d)


_debug = [False]
_early_stop = [True]


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled):
    """debug=None checkpoints inside take this value (only the error text of a non-deterministic recomputation
    depends on it)"""
    prev, _debug[0] = _debug[0], enabled
    try:
        yield
    finally:
        _debug[0] = prev


@contextlib.contextmanager
def set_checkpoint_early_stop(enable):
    """torch stops a recomputation once the tensors it needs exist; here the recomputation always runs the whole
    function (same results, a little more compute)"""
    prev, _early_stop[0] = _early_stop[0], enable
    try:
        yield
    finally:
        _early_stop[0] = prev


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    raise NotImplementedError("cthtorch: selective activation checkpointing (per-op save/recompute policies) needs "
                              "TorchDispatchMode, which is not implemented; checkpoint() without context_fn "
                              "recomputes every op")


def _in_context(fn, cm):
    def run(*a):
        with cm:
            return fn(*a)
    return run


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn, determinism_check="default",
               debug=False, early_stop=True, **kwargs):
    preserve_rng_state = kwargs.pop("preserve_rng_state", True)
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in "
                      "PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception. "
                      "use_reentrant=False is recommended, but if you need to preserve the current default behavior, "
                      "you can pass use_reentrant=True. Refer to docs for more details on the differences between "
                      "the two variants.", stacklevel=2)
        use_reentrant = True
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if determinism_check not in ("default", "none"):
        raise ValueError("determinism_check should be one of ['default', 'none'], but got %s" % determinism_check)
    if kwargs:
        f = function
        function = lambda *a: f(*a, **kwargs)  # noqa: E731
    if use_reentrant:
        check_backward_validity(args)   # torch's reentrant forward warns of inputs none of which requires grad
    if not cthtorch.is_grad_enabled() or not any(isinstance(a, cthtorch.Tensor) and a.requires_grad for a in args):
        # nothing to differentiate: reentrant checkpoint would return an output without grad
        if not any(p.requires_grad for p in getattr(function, "parameters", lambda: [])()):
            return function(*args)
    run = function
    if context_fn is not noop_context_fn:
        fwd_cm, recompute_cm = context_fn()
        run = (_in_context(function, fwd_cm), _in_context(function, recompute_cm))
    return CheckpointFunction.apply(run, preserve_rng_state, *args)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed "
                      "explicitly. In version 2.9 we will raise an exception if use_reentrant is not passed. "
                      "use_reentrant=False is recommended, but if you need to preserve the current default behavior, "
                      "you can pass use_reentrant=True. Refer to docs for more details on the differences between "
                      "the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if isinstance(functions, cthtorch.nn.Sequential):
        functions = list(functions.children())
    functions = list(functions)
    size = len(functions) // segments

    def run(start, end):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x
        return forward
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return run(end + 1, len(functions) - 1)(input)
