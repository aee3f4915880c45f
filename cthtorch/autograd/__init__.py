"""cthtorch.autograd: the Python API over the C engine (_C._ImperativeEngine)."""
import cthtorch
torch = cthtorch   # as torch's modules have it: old code writes torch.sparse.torch.eye(n)
from cthtorch import _C

from .function import Function, FunctionCtx, once_differentiable  # noqa: F401
from .variable import Variable  # noqa: F401

from .grad_mode import no_grad, enable_grad, set_grad_enabled, inference_mode  # noqa: F401
from .anomaly_mode import detect_anomaly, set_detect_anomaly  # noqa: F401,E402
from .gradcheck import gradcheck, gradgradcheck  # noqa: F401,E402
from . import graph, functional, forward_ad, profiler  # noqa: F401,E402


def _make_grads(outputs, grads):
    new = []
    for out, g in zip(outputs, grads):
        if isinstance(g, cthtorch.Tensor):
            if g.shape != out.shape:
                raise RuntimeError("Mismatch in shape: grad_output[0] has a shape of %s and output[0] has a shape of %s."
                                   % (g.shape, out.shape))
            new.append(g)
        elif g is None:
            if out.requires_grad:
                if out.numel() != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                new.append(cthtorch.ones_like(out))
            else:
                new.append(None)
        else:
            raise TypeError("gradients can be either Tensors or None, but got " + type(g).__name__)
    return tuple(new)


def _as_tuple(x):
    if x is None:
        return ()
    if isinstance(x, cthtorch.Tensor):
        return (x,)
    return tuple(x)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None, inputs=None):
    """Computes the sum of gradients of `tensors` w.r.t. graph leaves (into .grad)."""
    tensors = _as_tuple(tensors)
    given, inputs = inputs is not None, _as_tuple(inputs)
    overridable = tuple(t for t in tensors + inputs if isinstance(t, cthtorch.Tensor))
    if _C._has_torch_function(overridable):   # a subclass or a mode takes the call, as torch's
        return _C._handle_torch_function(backward, overridable, (tensors,), dict(
            grad_tensors=grad_tensors, retain_graph=retain_graph, create_graph=create_graph,
            inputs=inputs if given else None))
    if grad_tensors is None:
        grad_tensors = [None] * len(tensors)
    else:
        grad_tensors = list(_as_tuple(grad_tensors))
    if len(grad_tensors) != len(tensors):
        raise RuntimeError("grad can be implicitly created only for scalar outputs")
    if inputs and any(not isinstance(i, cthtorch.Tensor) for i in inputs):
        raise TypeError("inputs must be Tensors")
    if retain_graph is None:
        retain_graph = create_graph
    grads = _make_grads(tensors, grad_tensors)
    if inputs:
        res = Variable._execution_engine.run_backward(tensors, grads, retain_graph, create_graph, inputs, True, True)
        # inputs= that are not leaves get their .grad from the captured values
        for t, g in zip(inputs, res):
            if t.grad_fn is not None and g is not None:
                t.grad = g if t.grad is None else t.grad + g
        return
    Variable._execution_engine.run_backward(tensors, grads, retain_graph, create_graph, None, True, True)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Returns the gradients of outputs w.r.t. inputs (nothing is accumulated into .grad)."""
    outputs = _as_tuple(outputs)
    inputs_t = _as_tuple(inputs)
    overridable = tuple(t for t in outputs + inputs_t if isinstance(t, cthtorch.Tensor))
    if _C._has_torch_function(overridable):   # a subclass or a mode takes the call (its results are its type)
        return _C._handle_torch_function(grad, overridable, (outputs, inputs_t), dict(
            grad_outputs=grad_outputs, retain_graph=retain_graph, create_graph=create_graph, only_inputs=only_inputs,
            allow_unused=allow_unused, is_grads_batched=is_grads_batched, materialize_grads=materialize_grads))
    if allow_unused is None:
        allow_unused = materialize_grads
    if grad_outputs is None:
        grad_outputs = [None] * len(outputs)
    else:
        grad_outputs = list(_as_tuple(grad_outputs))
    if retain_graph is None:
        retain_graph = create_graph
    for t in inputs_t:
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    if is_grads_batched:
        return _batched_grads(outputs, inputs_t, grad_outputs, retain_graph, create_graph, allow_unused,
                              materialize_grads)
    grads = _make_grads(outputs, grad_outputs)
    res = Variable._execution_engine.run_backward(outputs, grads, retain_graph, create_graph, inputs_t,
                                                  allow_unused, False)
    out = []
    for t, g in zip(inputs_t, res):
        if g is None:
            if materialize_grads:
                g = cthtorch.zeros_like(t)
            elif not allow_unused:
                raise RuntimeError("One of the differentiated Tensors appears to not have been used in the graph. "
                                   "Set allow_unused=True if this is the desired behavior.")
        out.append(g)
    return tuple(out)


def _batched_grads(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused, materialize_grads):
    """grad(..., is_grads_batched=True): every grad_output has a leading batch dim; one backward per batch entry
    over the same graph (the recorded nodes take one cotangent each), results stacked along a new dim 0"""
    # torch fills in the missing grad_outputs first (an error for a non-scalar output), then maps its vjp over
    # dim 0 of them all: vmap's errors (ValueError) for ones that have no dim 0
    missing = [o for o, g in zip(outputs, grad_outputs) if g is None]
    _make_grads(missing, [None] * len(missing))
    if any(not isinstance(g, cthtorch.Tensor) or g.dim() == 0 for g in grad_outputs):
        raise ValueError("vmap(vjp, in_dims=0, ...)(<inputs>): Got in_dim=0 for some input, but that input is a "
                         "Tensor of dimensionality 0 so expected in_dim to satisfy 0 <= in_dim < 0.")
    sizes = {g.shape[0] for g in grad_outputs}
    if len(sizes) > 1:
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped dimension, got sizes %s "
                         "for the mapped dimension" % sorted(sizes))
    B = sizes.pop()
    if B == 0:
        return tuple(x.new_zeros((0,) + tuple(x.shape)) for x in inputs)
    rows = []
    for i in range(B):
        rows.append(grad(outputs, inputs, [g[i] for g in grad_outputs], retain_graph=True if i < B - 1 else
                         retain_graph, create_graph=create_graph, allow_unused=allow_unused or materialize_grads))
    # an unused input: None, or with materialize_grads torch's zeros of the input's own (unbatched) shape
    return tuple(cthtorch.stack([r[k] for r in rows]) if rows[0][k] is not None
                 else cthtorch.zeros_like(x) if materialize_grads else None for k, x in enumerate(inputs))


def _is_checkpoint_valid():
    return True
