"""vmap: func runs once on the whole batch (BatchedTensor), or once per sample when it cannot.

The mapped dimension of every input moves to the front and the input is wrapped
in a BatchedTensor of a fresh level (_batched.py); func runs once and each op
it calls applies its batching rule (one batched kernel call) or, without one,
loops over the samples for that op alone. The outputs are unwrapped and their
batch dimension moved to out_dims. When batching cannot express func
(data-dependent Python values such as `if x.sum() > 0`, an op that refuses a
BatchedTensor, a random draw that bypassed the batched random ops of
_random.py in 'same'/'different' mode, or a transform
inside it met batched values it cannot lift: NeedsLoop), func is run again
once per sample, x.select(in_dim, i), and the outputs are stacked: that loop
is always correct, only slower. Any other error is func's own and is raised
from the batched run, once, as torch raises it.
"""
import functools

import cthtorch

from cthtorch.utils._pytree import broadcast_to_and_flatten, tree_flatten, tree_unflatten

from . import _random
from ._batched import BatchedTensor, NeedsLoop, next_level, release_level

__all__ = ["vmap"]

_RANDOM_ERROR = _random.RANDOM_ERROR


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
        if isinstance(in_dim, int) and not isinstance(arg, (cthtorch.Tensor, BatchedTensor)):
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

    if isinstance(first_out, (cthtorch.Tensor, BatchedTensor)):
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
    if isinstance(a, BatchedTensor) or isinstance(b, BatchedTensor):
        return False     # values of an outer vmap: not provably the same for every sample
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
            if isinstance(leaves[0], (cthtorch.Tensor, BatchedTensor)) and \
                    not all(_same_value(leaves[0], x) for x in leaves[1:]):
                raise ValueError("vmap(%s, ...): `%s` can not return a BatchedTensor when out_dim is None"
                                 % (name, name))
            results.append(leaves[0])
            continue
        if not all(isinstance(x, (cthtorch.Tensor, BatchedTensor)) for x in leaves):
            bad = next(x for x in leaves if not isinstance(x, (cthtorch.Tensor, BatchedTensor)))
            raise ValueError("vmap(%s, ...): `%s` must only return Tensors, got type %s. Did you mean to set "
                             "out_dims= to None for output?" % (name, name, type(bad)))
        stacked = cthtorch.stack(leaves, dim=out_dim)
        if batch_size == 0:   # the single leaf came from the zero-filled probe call
            stacked = stacked.narrow(out_dim, 0, 0)
        results.append(stacked)
    return tree_unflatten(results, out_spec)


# which path the last vmap call took ('batched' or 'loop'): tests check that rules are really used
last_path = None


def _unwrap_outputs(out, out_dims, func, level, batch_size):
    """func's batched outputs with their batch dimension moved to out_dims."""
    name = _get_name(func)
    flat, out_spec = tree_flatten(out)
    flat_out_dims = _flat_out_dims(out, out_dims, out_spec, func)
    results = []
    for leaf, out_dim in zip(flat, flat_out_dims):
        batched = isinstance(leaf, BatchedTensor) and leaf._level == level
        if out_dim is None:
            if batched:
                raise ValueError("vmap(%s, ...): `%s` can not return a BatchedTensor when out_dim is None"
                                 % (name, name))
            results.append(leaf)
            continue
        if not isinstance(leaf, (cthtorch.Tensor, BatchedTensor)):
            raise ValueError("vmap(%s, ...): `%s` must only return Tensors, got type %s. Did you mean to set "
                             "out_dims= to None for output?" % (name, name, type(leaf)))
        if batched:
            value = leaf._value
            d = out_dim % value.dim() if -value.dim() <= out_dim < value.dim() else out_dim
            results.append(value if d == 0 else value.movedim(0, d))
        else:   # does not vary over the batch: torch returns it expanded
            rank = leaf.dim() + 1
            d = out_dim % rank if -rank <= out_dim < rank else out_dim
            shape = list(leaf.shape)
            shape.insert(d, batch_size)
            results.append(leaf.unsqueeze(d).expand(shape))
    return tree_unflatten(results, out_spec)


_FAILED = object()
_RANDOM = object()    # as _FAILED, because func drew random numbers ('same' / 'different' mode)


def _cannot_batch(e):
    """whether an error of the batched run means batching cannot express func (the loop then runs it):
    NeedsLoop, or an op that refused a BatchedTensor argument (it has no __torch_function__ path)"""
    return isinstance(e, NeedsLoop) or (isinstance(e, (TypeError, AttributeError, NotImplementedError))
                                        and "BatchedTensor" in str(e))


def _batched_call(func, flat_in_dims, flat_args, args_spec, kwargs, out_dims, randomness, batch_size):
    """func run once on BatchedTensors; _FAILED or _RANDOM when the loop has to do it instead."""
    rng = cthtorch.get_rng_state()
    level = next_level()
    try:
        inputs = [a if d is None else BatchedTensor(a if d == 0 else a.movedim(d, 0), level)
                  for a, d in zip(flat_args, flat_in_dims)]
        try:
            with _random.frame(level, batch_size, randomness) as drawn:
                out = func(*tree_unflatten(inputs, args_spec), **kwargs)
        except Exception as e:
            cthtorch.set_rng_state(rng)
            if not _cannot_batch(e):
                raise    # func's own error: raised once, as torch raises it (no rerun of func's side effects)
            return _FAILED
    finally:
        release_level(level)
    if randomness == "error" and not cthtorch.equal(cthtorch.get_rng_state(), rng):
        cthtorch.set_rng_state(rng)
        raise RuntimeError(_RANDOM_ERROR)
    if randomness != "error" and drawn.unsanctioned:
        cthtorch.set_rng_state(rng)
        return _RANDOM      # a draw no batched random path made: the per-sample loop draws as the mode says
    return _unwrap_outputs(out, out_dims, func, level, batch_size)


def _chunked_call(func, flat_in_dims, flat_args, args_spec, kwargs, out_dims, randomness, batch_size, chunk_size):
    if chunk_size is None or chunk_size >= batch_size:
        return _batched_call(func, flat_in_dims, flat_args, args_spec, kwargs, out_dims, randomness, batch_size)
    parts = []
    for start in range(0, batch_size, chunk_size):
        n = min(chunk_size, batch_size - start)
        chunk = [a if d is None else a.narrow(d, start, n) for a, d in zip(flat_args, flat_in_dims)]
        r = _batched_call(func, flat_in_dims, chunk, args_spec, kwargs, out_dims, randomness, n)
        if r is _FAILED or r is _RANDOM:
            return r
        parts.append(r)
    flats = [tree_flatten(p) for p in parts]
    out_spec = flats[0][1]
    flat_out_dims = _flat_out_dims(parts[0], out_dims, out_spec, func)
    joined = []
    for k, od in enumerate(flat_out_dims):
        leaves = [f[0][k] for f in flats]
        joined.append(leaves[0] if od is None else cthtorch.cat(leaves, od))
    return tree_unflatten(joined, out_spec)


def _loop_impl(func, out_dims, randomness, args_spec, flat_args, flat_in_dims, batch_size, kwargs):
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


def _vmap_impl(func, in_dims, out_dims, randomness, args, kwargs, chunk_size=None, memo=None):
    """memo (one per vmap(func) object): 'random' once func was seen to draw random numbers, so that later
    calls go straight to the loop instead of running func batched only to discard the result"""
    global last_path
    _check_out_dims(out_dims, func)
    batch_size, flat_in_dims, flat_args, args_spec = _process_inputs(in_dims, args, func)
    if batch_size > 0 and not (memo and memo.get("random")):
        res = _chunked_call(func, flat_in_dims, flat_args, args_spec, kwargs, out_dims, randomness, batch_size,
                            chunk_size)
        if res is _RANDOM and memo is not None:
            memo["random"] = True
        elif res is not _FAILED and res is not _RANDOM:
            last_path = "batched"
            return res
    last_path = "loop"
    return _loop_impl(func, out_dims, randomness, args_spec, flat_args, flat_in_dims, batch_size, kwargs)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """vmap(func, in_dims=0, out_dims=0, randomness='error', *, chunk_size=None) as torch.func.vmap.

    Runs ``func`` once on the whole batch (see the module docstring; once per
    sample when batching cannot express it). ``in_dims`` is an int, or a
    tuple with one entry per positional argument, each entry an int, None or
    a container (tuple/list/dict) matching that argument. keyword arguments
    are passed unmapped. ``out_dims`` is an int or a container matching the
    output. randomness: 'error' raises when func consumed the global random
    generator; 'same' draws once and shares the draw between the samples;
    'different' lets every sample draw its own numbers (both batched, see
    _random.py). ``chunk_size`` runs func on that
    many samples at a time.
    """
    _check_randomness_arg(randomness)
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError("vmap: chunk_size should be None or greater than 0. (got %s)" % chunk_size)

    memo = {}

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        return _vmap_impl(func, in_dims, out_dims, randomness, args, kwargs, chunk_size, memo)

    return wrapped
