"""cthtorch.func: torch.func's composable transforms, built on cthtorch's autograd.

How they work here (no functorch C++ machinery; a Python BatchedTensor for vmap):

* vmap wraps the inputs in BatchedTensors (the mapped dim moved to the front,
  one level per vmap; _batched.py) and runs func once: ops apply batching
  rules (one batched kernel call, e.g. one GEMM for the batch) or, without a
  rule, run once per sample for that op. grad/vjp/jvp/jacrev/jacfwd over
  batched values are lifted to the physical tensors (the gradient of the
  batch-summed outputs is each sample's own). What batching cannot express
  (data-dependent Python control flow, transforms whose levels would
  interleave) reruns func once per sample (x.select(in_dim, i)) and stacks:
  values, shapes and dtypes match torch.func.vmap either way.
  randomness='error' raises when func draws random numbers, 'same' draws
  once and shares the draw between samples, 'different' draws independent
  numbers per sample, both in the batched run (_random.py). chunk_size runs that
  many samples per batched call. A mapped dimension of size 0 runs func once
  on zeros to learn the output shapes and returns empty tensors.
* grad / grad_and_value / vjp / jacrev / hessian differentiate copies of the
  inputs (x.detach().requires_grad_()) with cthtorch.autograd.grad; inside
  another transform they keep the graph (create_graph=True), which is how
  grad(grad(f)), hessian and vmap(grad(f)) (per-sample gradients) compose.
  At the outermost level the results are detached unless an argument already
  required grad; tensors that func only captures by closure do not connect
  the results to the caller's graph.
* jvp uses the double-vjp trick; jacfwd is jacrev (reverse mode, one pass
  per output element); linearize reruns jvp per call.
* functionalize returns func unchanged (cthtorch has no functionalization
  pass; the values are the same).
"""
from ._vmap import vmap
from ._transforms import grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian, linearize

__all__ = ["vmap", "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "linearize",
           "functional_call", "stack_module_state", "functionalize", "replace_all_batch_norm_modules_",
           "debug_unwrap"]


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False)

    Calls module(*args, **kwargs) with its parameters and buffers replaced by
    the given tensors (by qualified name, e.g. 'layer.0.weight'); the
    originals are restored afterwards, also when forward raises. args that
    is not a tuple is a single argument.
    """
    from cthtorch.nn.utils.stateless import _functional_call
    if isinstance(parameter_and_buffer_dicts, dict):
        merged = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, (list, tuple)):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be dictionaries")
        counts = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                counts[k] = counts.get(k, 0) + 1
        repeated = [k for k, n in counts.items() if n > 1]
        if repeated:
            raise ValueError("%s appeared in multiple dictionaries; behavior of functional call is ambiguous"
                             % repeated)
        merged = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got %s"
                         % type(parameter_and_buffer_dicts))
    return _functional_call(module, merged, args, kwargs, tie_weights=tie_weights, strict=strict)


def _construct_stacked_leaf(tensors, name):
    import cthtorch
    all_rg = all(t.requires_grad for t in tensors)
    if not all_rg and any(t.requires_grad for t in tensors):
        raise RuntimeError("Expected %s from each model to have the same .requires_grad" % name)
    result = cthtorch.stack(tensors)
    if all_rg:
        result = result.detach().requires_grad_()
    return result


def stack_module_state(models):
    """stack_module_state(models) -> (params, buffers): each name's tensors stacked over the models.

    The stacked parameters are new leaves (requires_grad as the originals),
    ready for vmap(functional_call-based fn, in_dims=(0, 0, None)).
    """
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    typ = type(models[0])
    if not all(type(m) is typ for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    all_params = [dict(m.named_parameters()) for m in models]
    params = {k: _construct_stacked_leaf(tuple(p[k] for p in all_params), k) for k in all_params[0]}
    all_buffers = [dict(m.named_buffers()) for m in models]
    buffers = {k: _construct_stacked_leaf(tuple(b[k] for b in all_buffers), k) for k in all_buffers[0]}
    return params, buffers


def functionalize(func, *, remove="mutations"):
    """functionalize(func, *, remove='mutations'): func itself (no functionalization pass; same values)."""
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError("functionalize(f, remove='mutations'): received invalid argument for remove=%s. Valid "
                           "options are:\n     remove='mutations': all inplace and out= operators will be removed "
                           "from the program, and replaced with their out-of-place equivalents.\n     "
                           "remove='mutations_and_views': In addition to the above, all aliasing operators {view} "
                           "will be replaced with their non-aliasing counterparts, {view}_copy.\n" % remove)
    return func


def replace_all_batch_norm_modules_(root):
    """Turns off running-stats tracking of every BatchNorm in root (in place), for use under vmap."""
    from cthtorch.nn.modules.batchnorm import _BatchNorm
    for m in [root, *root.modules()]:
        if isinstance(m, _BatchNorm) and m.track_running_stats:
            m.running_mean = None
            m.running_var = None
            m.num_batches_tracked = None
            m.track_running_stats = False
    return root


def debug_unwrap(tensor, *, recurse=True):
    """The tensor itself (there are no functorch wrappers to remove)."""
    return tensor
