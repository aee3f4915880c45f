"""vmap as a loop: call func once per index of the mapped dimension, then stack.

There is no batching-rule machinery (no BatchedTensor), so vmap(func)(x) runs
func(x.select(in_dim, i)) for every i and stacks the per-sample outputs along
out_dim. The results (values, shapes, dtypes, autograd history) are those of
the loop; the cost is batch_size Python calls.
"""
import functools

import cthtorch

from cthtorch.utils._pytree import broadcast_to_and_flatten, tree_flatten, tree_unflatten

__all__ = ["vmap"]

_RANDOM_ERROR = ("vmap: called random operation while in randomness error mode. Please either use the 'same' or "
                 "'different' randomness flags on vmap or perform the randomness operation out of vmap")


def _get_name(func):
    if hasattr(func, "__name__"):
        return func.__name__
    if isinstance(func, functools.partial):
        return "functools.partial(%s, ...)" % _get_name(func.func)
    return repr(func)


def _check_randomness_arg(randomness):
    if randomness not in ["error", "different", "same"]:
        raise RuntimeError("Only allowed values for randomness are 'error', 'different', or 'same'. Got %s"
                           % randomness)


def _check_out_dims(out_dims, func):
    if isinstance(out_dims, int):
        return
    leaves, _ = tree_flatten(out_dims)
    for x in leaves:
        if x is not None and not isinstance(x, int):
            raise ValueError("vmap(%s, ..., out_dims=%s): `out_dims` must be an int, None or a python collection of "
                             "ints representing where in the outputs the vmapped dimension should appear."
                             % (_get_name(func), out_dims))


def _process_inputs(in_dims, args, func):
    name = _get_name(func)
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError("vmap(%s, in_dims=%s, ...)(<inputs>): expected `in_dims` to be int or a (potentially "
                         "nested) tuple matching the structure of inputs, got: %s." % (name, in_dims, type(in_dims)))
    if len(args) == 0:
        raise ValueError("vmap(%s)(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are trying to "
                         "vmap over a function with no inputs. The latter is unsupported." % name)
    flat_args, args_spec = tree_flatten(args)
    flat_in_dims = broadcast_to_and_flatten(in_dims, args_spec)
    if flat_in_dims is None:
        raise ValueError("vmap(%s, in_dims=%s, ...)(<inputs>): in_dims is not compatible with the structure of "
                         "`inputs`. in_dims has structure %s but inputs has structure %s."
                         % (name, in_dims, tree_flatten(in_dims)[1], args_spec))
    for i, (arg, in_dim) in enumerate(zip(flat_args, flat_in_dims)):
        if not isinstance(in_dim, int) and in_dim is not None:
            raise ValueError("vmap(%s, in_dims=%s, ...)(<inputs>): Got in_dim=%s for an input but in_dim must be "
                             "either an integer dimension or None." % (name, in_dims, in_dim))
        if isinstance(in_dim, int) and not isinstance(arg, cthtorch.Tensor):
            raise ValueError("vmap(%s, in_dims=%s, ...)(<inputs>): Got in_dim=%s for an input but the input is of "
                             "type %s. We cannot vmap over non-Tensor arguments, please use None as the respective "
                             "in_dim" % (name, in_dims, in_dim, type(arg)))
        if in_dim is not None and (in_dim < -arg.dim() or in_dim >= arg.dim()):
            raise ValueError("vmap(%s, in_dims=%s, ...)(<inputs>): Got in_dim=%s for some input, but that input is a "
                             "Tensor of dimensionality %d so expected in_dim to satisfy -%d <= in_dim < %d."
                             % (name, in_dims, in_dim, arg.dim(), arg.dim(), arg.dim()))
        if in_dim is not None and in_dim < 0:
            flat_in_dims[i] = in_dim % arg.dim()
    sizes = [arg.size(d) for d, arg in zip(flat_in_dims, flat_args) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped dimension, got sizes %s "
                         "for the mapped dimension" % sizes)
    return sizes[0], flat_in_dims, flat_args, args_spec


def _flat_out_dims(first_out, out_dims, out_spec, func):
    def incompatible():
        raise ValueError("vmap(%s, ..., out_dims=%s)(<inputs>): out_dims is not compatible with the structure of "
                         "`outputs`. out_dims has structure %s but outputs has structure %s."
                         % (_get_name(func), out_dims, tree_flatten(out_dims)[1], out_spec))

    if isinstance(first_out, cthtorch.Tensor):
        if isinstance(out_dims, int) or out_dims is None:
            return [out_dims]
        if isinstance(out_dims, tuple) and len(out_dims) == 1:
            return list(out_dims)
        incompatible()
    flat = broadcast_to_and_flatten(out_dims, out_spec)
    if flat is None:
        incompatible()
    return flat


def _same_value(a, b):
    if a is b:
        return True
    if isinstance(a, cthtorch.Tensor) and isinstance(b, cthtorch.Tensor):
        return a.shape == b.shape and a.dtype == b.dtype and bool(cthtorch.equal(a, b))
    try:
        return bool(a == b)
    except Exception:
        return False


def _combine(per_sample, out_dims, func, batch_size):
    """Stack the per-sample outputs (each a pytree) along their out_dims."""
    name = _get_name(func)
    flats = [tree_flatten(o) for o in per_sample]
    out_spec = flats[0][1]
    for _, spec in flats[1:]:
        if spec != out_spec:
            raise ValueError("vmap(%s, ...): `%s` returned outputs of different structure for different samples "
                             "(%s and %s); vmap needs the same structure for every sample" % (name, name, out_spec, spec))
    flat_out_dims = _flat_out_dims(per_sample[0], out_dims, out_spec, func)
    results = []
    for k, out_dim in enumerate(flat_out_dims):
        leaves = [f[0][k] for f in flats]
        if out_dim is None:
            if isinstance(leaves[0], cthtorch.Tensor) and not all(_same_value(leaves[0], x) for x in leaves[1:]):
                raise ValueError("vmap(%s, ...): `%s` can not return a BatchedTensor when out_dim is None"
                                 % (name, name))
            results.append(leaves[0])
            continue
        if not all(isinstance(x, cthtorch.Tensor) for x in leaves):
            bad = next(x for x in leaves if not isinstance(x, cthtorch.Tensor))
            raise ValueError("vmap(%s, ...): `%s` must only return Tensors, got type %s. Did you mean to set "
                             "out_dims= to None for output?" % (name, name, type(bad)))
        stacked = cthtorch.stack(leaves, dim=out_dim)
        if batch_size == 0:   # the single leaf came from the zero-filled probe call
            stacked = stacked.narrow(out_dim, 0, 0)
        results.append(stacked)
    return tree_unflatten(results, out_spec)


def _vmap_impl(func, in_dims, out_dims, randomness, args, kwargs):
    _check_out_dims(out_dims, func)
    batch_size, flat_in_dims, flat_args, args_spec = _process_inputs(in_dims, args, func)
    rng = None if randomness == "different" else cthtorch.get_rng_state()

    if batch_size == 0:
        # Nothing to loop over: run func once on a zero-filled sample to learn the output
        # structure, shapes and dtypes, then return empty tensors (RNG state is restored).
        sample = [a if d is None else a.new_zeros(a.shape[:d] + a.shape[d + 1:])
                  for a, d in zip(flat_args, flat_in_dims)]
        state = cthtorch.get_rng_state()
        try:
            out = func(*tree_unflatten(sample, args_spec), **kwargs)
        finally:
            cthtorch.set_rng_state(state)
        return _combine([out], out_dims, func, 0)

    per_sample = []
    for i in range(batch_size):
        if randomness == "same":
            cthtorch.set_rng_state(rng)
        sample = [a if d is None else a.select(d, i) for a, d in zip(flat_args, flat_in_dims)]
        per_sample.append(func(*tree_unflatten(sample, args_spec), **kwargs))
        if randomness == "error" and not cthtorch.equal(cthtorch.get_rng_state(), rng):
            cthtorch.set_rng_state(rng)
            raise RuntimeError(_RANDOM_ERROR)
    return _combine(per_sample, out_dims, func, batch_size)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """vmap(func, in_dims=0, out_dims=0, randomness='error', *, chunk_size=None) as torch.func.vmap.

    Runs ``func`` once per index of the mapped dimension and stacks the
    outputs (a Python loop, no batching rules). ``in_dims`` is an int, or a
    tuple with one entry per positional argument, each entry an int, None or
    a container (tuple/list/dict) matching that argument. keyword arguments
    are passed unmapped. ``out_dims`` is an int or a container matching the
    output. randomness: 'error' raises when func consumed the global random
    generator; 'same' replays the same generator state for every sample;
    'different' lets every sample draw fresh numbers. ``chunk_size`` is
    validated and otherwise has no effect (the loop already runs one sample
    at a time).
    """
    _check_randomness_arg(randomness)
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError("vmap: chunk_size should be None or greater than 0. (got %s)" % chunk_size)

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        return _vmap_impl(func, in_dims, out_dims, randomness, args, kwargs)

    return wrapped
