"""grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian on cthtorch's reverse-mode autograd.

Each transform copies the inputs it differentiates (x.detach().requires_grad_(),
or a view of x when x is already part of an outer graph), runs func with grad
mode on, and calls cthtorch.autograd.grad. Transforms nest by depth: inside
another transform the gradients are taken with create_graph=True so the outer
transform can differentiate them again; at the outermost level the results are
detached unless a differentiated input already required grad (then they stay
connected to the caller's graph, as torch.func's results do).

Under vmap (arguments that are BatchedTensors, see _batched.py) a transform is
lifted to the physical tensors: every differentiated input gets the batch
dimension in front (expanded when it does not vary), func runs once on the
batch, and since the samples do not interact, the gradient of the outputs
summed over the batch is every sample's own gradient: grad, vjp and jvp of
the summed function, and jacrev/jacfwd of the batch-summed outputs (the
Jacobian's batch dimension is then moved to the front). One batched forward
and one batched backward per output element, as torch's vmap of vjp does.
A vjp_fn of an unbatched graph called with batched cotangents (vmap(vjp_fn))
reruns func once on the primals expanded over the batch and takes all the
cotangents in one backward (one backward per cotangent when that rerun cannot
batch or draws random numbers). Batched values that reach autograd any other
way raise NeedsLoop, and the enclosing vmap runs func once per sample.

jvp uses the double-vjp trick (no forward-mode AD); jacfwd is jacrev (same
values); both compute one vjp per output element (no vmap over the basis), or,
when the inputs have under half as many elements as the output, one
double-vjp column per input element.
"""
import functools
import threading

import cthtorch

from cthtorch.utils._pytree import tree_flatten, tree_unflatten

from ._batched import BatchedTensor, NeedsLoop, batch_size, max_level, physical
from ._random import RANDOM_ERROR

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "linearize"]

_state = threading.local()


def _depth():
    return getattr(_state, "depth", 0)


class _Level:
    """One transform level (depth counter, thread local) with grad mode on."""

    def __enter__(self):
        self.outer_depth = _depth()
        self.outer_grad = cthtorch.is_grad_enabled()
        _state.depth = self.outer_depth + 1
        self._grad = cthtorch.enable_grad()
        self._grad.__enter__()
        return self

    def __exit__(self, *exc):
        self._grad.__exit__(*exc)
        _state.depth = self.outer_depth
        return False

    def outside(self):
        """A context in which this level is not entered (depth and grad mode of its caller)."""
        return _Outside(self)

    def connects(self, t):
        """Whether t's own autograd history has to stay linked to the results."""
        return (isinstance(t, cthtorch.Tensor) and t.requires_grad
                and (self.outer_depth > 0 or self.outer_grad))


class _Outside:
    def __init__(self, level):
        self.level = level

    def __enter__(self):
        _state.depth = self.level.outer_depth
        self._grad = cthtorch.set_grad_enabled(self.level.outer_grad)
        self._grad.__enter__()

    def __exit__(self, *exc):
        self._grad.__exit__(*exc)
        _state.depth = self.level.outer_depth + 1
        return False


def _make_diff(t, level):
    if not isinstance(t, cthtorch.Tensor):
        raise ValueError("Thing passed to transform API must be Tensor, got %s" % type(t))
    if level.connects(t):
        return t.view_as(t)
    return t.detach().requires_grad_()


def _detach_tree(tree):
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([x.detach() if isinstance(x, cthtorch.Tensor) else x for x in leaves], spec)


def _autograd_grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False):
    """autograd.grad over the outputs that require grad; zeros for inputs they don't reach."""
    if max_level(outputs, inputs, grad_outputs):
        raise NeedsLoop("vmap: batched values reached autograd.grad without a lifted transform")
    if grad_outputs is None:
        grad_outputs = [None] * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if isinstance(o, cthtorch.Tensor) and o.requires_grad]
    if pairs:
        grads = cthtorch.autograd.grad([p[0] for p in pairs], list(inputs), [p[1] for p in pairs],
                                       retain_graph=retain_graph, create_graph=create_graph, allow_unused=True)
    else:
        grads = [None] * len(inputs)
    return tuple(cthtorch.zeros_like(x) if g is None else g for g, x in zip(grads, inputs))


# ---- argnums (messages as torch._functorch.eager_transforms) ----

def _validate_argnum(argnum, num_args):
    if not isinstance(argnum, int):
        raise RuntimeError("argnum must be int, got: %s" % type(argnum))
    if 0 <= argnum < num_args:
        return argnum
    if -num_args <= argnum < 0:
        return argnum + num_args
    raise RuntimeError("Got argnum=%d, but only %d positional inputs" % (argnum, num_args))


def _wrap_argnums(argnums, num_args):
    if isinstance(argnums, int):
        return _validate_argnum(argnums, num_args)
    if isinstance(argnums, tuple):
        if len(argnums) == 0:
            raise RuntimeError("argnums must be non-empty")
        wrapped = tuple(_validate_argnum(a, num_args) for a in argnums)
        if len(set(argnums)) != len(argnums):
            raise RuntimeError("argnums elements must be unique, got %s" % (argnums,))
        return wrapped
    raise RuntimeError("argnums must be int or Tuple[int, ...], got: %s" % type(argnums))


def _differentiable_args(args, argnums, level, kwargs=None):
    """(new args, flat differentiable leaves, spec of the (args[argnums],) or args[argnums...] tuple, connected).

    connected: some argument already has autograd history the results must keep."""
    connected = level.outer_depth > 0 or any(level.connects(t) for t in tree_flatten((args, kwargs))[0])
    argnums = _wrap_argnums(argnums, len(args))
    idx = (argnums,) if isinstance(argnums, int) else argnums
    flat, spec = tree_flatten(tuple(args[i] for i in idx))
    flat = [_make_diff(t, level) for t in flat]
    new = tree_unflatten(flat, spec)
    args = list(args)
    for k, i in enumerate(idx):
        args[i] = new[k]
    return tuple(args), flat, spec, connected


# ---- lifting a transform over the batch dimension of a vmap level ----

def _to_physical(tree, level, B, expand):
    """(physical tree, flags): BatchedTensors of level unwrapped, other tensors expanded when expand."""
    flat, spec = tree_flatten(tree)
    out, flags = [], []
    for x in flat:
        if isinstance(x, BatchedTensor) and x._level == level:
            out.append(x._value)
            flags.append(True)
        elif expand and isinstance(x, (cthtorch.Tensor, BatchedTensor)):
            out.append(physical(x, level, B))
            flags.append(True)
        else:
            out.append(x)
            flags.append(False)
    return tree_unflatten(out, spec), flags


def _to_logical(tree, level, flags=None):
    flat, spec = tree_flatten(tree)
    if flags is None:
        flags = [isinstance(x, (cthtorch.Tensor, BatchedTensor)) for x in flat]
    return tree_unflatten([BatchedTensor(x, level) if f else x for x, f in zip(flat, flags)], spec)


def _lift_args(args, kwargs, level, B, diff_idx):
    """physical args (the differentiated ones always batched) and the function that rewraps them"""
    pargs, aflags = [], []
    for i, a in enumerate(args):
        pa, fl = _to_physical(a, level, B, i in diff_idx)
        pargs.append(pa)
        aflags.append(fl)
    pkw, kflags = _to_physical(kwargs, level, B, False)

    def rewrap(pa, pk):
        return (tuple(_to_logical(x, level, fl) for x, fl in zip(pa, aflags)), _to_logical(pk, level, kflags))
    return tuple(pargs), pkw, rewrap


def _phys_tree(tree, level, B):
    flat, spec = tree_flatten(tree)
    return tree_unflatten([physical(x, level, B) if isinstance(x, (cthtorch.Tensor, BatchedTensor)) else x
                           for x in flat], spec)


def _check_scalar_output(out):
    """grad's func must return one scalar Tensor (a batched one: one scalar per sample)"""
    if not isinstance(out, (cthtorch.Tensor, BatchedTensor)):
        raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got %s" % type(out))
    if out.dim() != 0:
        raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor "
                           "with %d dims. Maybe you wanted to use the vjp or jacrev APIs instead?" % out.dim())


def _lifted_grad_and_value(func, argnums, has_aux, level, args, kwargs, B=None):
    B = B or batch_size(level, args, kwargs)
    wrapped = _wrap_argnums(argnums, len(args))
    idx = (wrapped,) if isinstance(wrapped, int) else wrapped
    pargs, pkw, rewrap = _lift_args(args, kwargs, level, B, idx)

    def summed(*pa, **pk):
        a, k = rewrap(pa, pk)
        out = func(*a, **k)
        out, aux = _split_aux(out, has_aux, "grad_and_value(f)(*args)")
        _check_scalar_output(out)
        po = physical(out, level, B)
        return po.sum(), (po, _phys_tree(aux, level, B))

    with _Lifting(level):
        g, (_, (po, paux)) = grad_and_value(summed, argnums, has_aux=True)(*pargs, **pkw)
    g, value, aux = _to_logical(g, level), BatchedTensor(po, level), _to_logical(paux, level)
    return (g, (value, aux)) if has_aux else (g, value)


def _lifted_jacobian(func, argnums, has_aux, name, level, args, B=None):
    B = B or batch_size(level, args)
    wrapped = _wrap_argnums(argnums, len(args))
    idx = (wrapped,) if isinstance(wrapped, int) else wrapped
    pargs, _, rewrap = _lift_args(args, {}, level, B, idx)
    ranks = []

    def summed(*pa):
        a, _ = rewrap(pa, {})
        out = func(*a)
        out, aux = _split_aux(out, has_aux, "vjp(f, *primals)")
        flat, spec = tree_flatten(out)
        ranks[:] = [o.dim() if isinstance(o, (cthtorch.Tensor, BatchedTensor)) else 0 for o in flat]
        flat = [physical(o, level, B).sum(0) if isinstance(o, (cthtorch.Tensor, BatchedTensor)) else o
                for o in flat]
        return tree_unflatten(flat, spec), _phys_tree(aux, level, B)

    with _Lifting(level):
        jac, paux = _jacobian(summed, argnums, True, name)(*pargs)
    # every output leaf's Jacobian is [*out, B, *in]: the batch dimension goes to the front
    flat, spec = tree_flatten(jac)
    per_out = len(flat) // max(len(ranks), 1)
    flat = [BatchedTensor(j.movedim(ranks[k // per_out], 0), level) for k, j in enumerate(flat)]
    res = tree_unflatten(flat, spec)
    return (res, _to_logical(paux, level)) if has_aux else res


def _captured_level(out):
    """(level, batch size) of the BatchedTensors in func's output when its arguments had none: func
    captured a batched value, and the transform is redone lifted over that level (0, 0 when none).
    Inside the lift of a later level, lifting an earlier one would expand every value over both batches
    (NTK's jvp of a captured input under vmap over the basis): the enclosing vmap loops instead."""
    lv = max_level(out)
    if not lv:
        return 0, 0
    if lv < getattr(_state, "lifting", 0):
        raise NeedsLoop("vmap: a transform inside the lift of level %d captured a value of level %d"
                        % (_state.lifting, lv))
    return lv, batch_size(lv, out)


class _Lifting:
    """Marks the lift of a vmap level in progress (thread local), for _captured_level."""

    def __init__(self, level):
        self.level = level

    def __enter__(self):
        self.outer = getattr(_state, "lifting", 0)
        _state.lifting = max(self.outer, self.level)

    def __exit__(self, *exc):
        _state.lifting = self.outer
        return False


def _map_over_level(fn, tree, level):
    """fn applied to every sample of level's batch in tree (one call per sample), results batched at level."""
    B = batch_size(level, tree)
    flat, spec = tree_flatten(tree)
    outs = []
    for i in range(B):
        sample = [x._value[i] if isinstance(x, BatchedTensor) and x._level == level else x for x in flat]
        outs.append(tree_flatten(fn(tree_unflatten(sample, spec))))
    res_spec = outs[0][1]
    stacked = [BatchedTensor(cthtorch.stack([o[0][k] for o in outs]), level) for k in range(len(outs[0][0]))]
    return tree_unflatten(stacked, res_spec)


# ---- grad ----

def grad_and_value(func, argnums=0, has_aux=False):
    """grad_and_value(func, argnums=0, has_aux=False) as torch.func.grad_and_value."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        batch_level = max_level(args, kwargs)
        if batch_level:
            return _lifted_grad_and_value(func, argnums, has_aux, batch_level, args, kwargs)
        orig_args = args
        with _Level() as level:
            args, flat_diff, spec, create_graph = _differentiable_args(args, argnums, level, kwargs)
            output = func(*args, **kwargs)
            lv, B = _captured_level(output)
            if lv:
                with level.outside():
                    return _lifted_grad_and_value(func, argnums, has_aux, lv, orig_args, kwargs, B)
            output, aux = _split_aux(output, has_aux, "grad_and_value(f)(*args)")
            _check_scalar_output(output)
            grads = _autograd_grad([output], flat_diff, create_graph=create_graph)
        if not create_graph:
            grads, output, aux = _detach_tree(grads), output.detach(), _detach_tree(aux)
        g = tree_unflatten(list(grads), spec)
        if isinstance(argnums, int):
            g = g[0]
        return (g, (output, aux)) if has_aux else (g, output)

    return wrapper


def grad(func, argnums=0, has_aux=False):
    """grad(func, argnums=0, has_aux=False) as torch.func.grad: func must return a scalar tensor."""
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper


# ---- vjp ----

def _split_aux(out, has_aux, api):
    """(output, aux): f's result split when has_aux (torch.func's check), else (out, None)"""
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError("%s: output of function f should be a tuple: (output, aux) if has_aux is True" % api)
    return out


def _check_tensor_outputs(flat, api):
    if (len(flat) == 1 and flat[0] is None) or len(flat) < 1:
        raise RuntimeError("%s: Expected f to be a function that has non-empty output (got output = %s)"
                           % (api, flat))
    for o in flat:
        if not isinstance(o, cthtorch.Tensor):
            raise RuntimeError("%s: expected f(*primals) to return only tensors, got unsupported type %s"
                               % (api, type(o)))


def _split_vjp_output(out, has_aux):
    """(output, aux, flat outputs, spec) with torch.func.vjp's checks: (output, aux) when has_aux,
    and floating-point tensor outputs only."""
    out, aux = _split_aux(out, has_aux, "vjp(f, *primals)")
    flat_out, out_spec = tree_flatten(out)
    _check_tensor_outputs(flat_out, "vjp(f, *primals)")
    for o in flat_out:
        if not (o.is_floating_point() or o.is_complex()):
            raise RuntimeError("vjp(f, ...): All outputs of f must be floating-point or complex Tensors, got "
                               "Tensor with dtype %s" % o.dtype)
    return out, aux, flat_out, out_spec


def vjp(func, *primals, has_aux=False):
    """vjp(func, *primals, has_aux=False) -> (output, vjp_fn[, aux]) as torch.func.vjp."""
    batch_level = max_level(primals)
    if batch_level:
        return _lifted_vjp(func, primals, has_aux, batch_level)
    with _Level() as level:
        flat_p, p_spec = tree_flatten(primals)
        diff = [_make_diff(t, level) for t in flat_p]
        out = func(*tree_unflatten(diff, p_spec))
        lv, B = _captured_level(out)
        if lv:
            with level.outside():
                return _lifted_vjp(func, primals, has_aux, lv, B)
        out, aux, flat_out, out_spec = _split_vjp_output(out, has_aux)
    connected = level.outer_depth > 0 or any(level.connects(t) for t in flat_p)

    def vjp_fn(cotangents, retain_graph=True, create_graph=None):
        if create_graph is None:
            create_graph = cthtorch.is_grad_enabled()
        flat_ct, ct_spec = tree_flatten(cotangents)
        if ct_spec != out_spec:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree structure of "
                               "outputs to the function. cotangents: %s, primal output: %s" % (ct_spec, out_spec))
        lv = max_level(cotangents)
        if lv:     # an unbatched graph, batched cotangents (vmap(vjp_fn), jacobians by rows)
            res = _batched_cotangents_vjp(func, primals, has_aux, lv, cotangents, create_graph)
            if res is not None:
                return res
            return _map_over_level(lambda c: vjp_fn(c, retain_graph=True, create_graph=create_graph),
                                   cotangents, lv)
        keep = create_graph and (connected or _depth() > 0
                                 or any(isinstance(c, cthtorch.Tensor) and c.requires_grad for c in flat_ct))
        with cthtorch.enable_grad():
            res = _autograd_grad(flat_out, diff, flat_ct, retain_graph=retain_graph, create_graph=keep)
        if not keep:
            res = [r.detach() for r in res]
        return tree_unflatten(list(res), p_spec)

    results = out if connected else _detach_tree(out)
    if has_aux:
        return results, vjp_fn, (aux if connected else _detach_tree(aux))
    return results, vjp_fn


def _batched_cotangents_vjp(func, primals, has_aux, level, cotangents, create_graph):
    """vjp_fn of an unbatched graph called with cotangents batched at level: the recorded graph's backward
    nodes take one cotangent each, so func is run again once on the primals expanded over the batch and that
    batched graph takes all the cotangents in one backward pass (B backward passes become one forward and one
    backward of the batch). None when the rerun cannot be batched or draws random numbers (a second draw would
    not be the graph the caller recorded): the caller then runs one backward per cotangent. Python side effects
    of func happen once more."""
    rng = cthtorch.get_rng_state()
    try:
        fn = _lifted_vjp(func, primals, has_aux, level, batch_size(level, cotangents))[1]
        if not cthtorch.equal(cthtorch.get_rng_state(), rng):
            cthtorch.set_rng_state(rng)
            return None
        return fn(cotangents, retain_graph=False, create_graph=create_graph)
    except NeedsLoop:
        cthtorch.set_rng_state(rng)
        return None
    except RuntimeError as e:
        cthtorch.set_rng_state(rng)
        if str(e) == RANDOM_ERROR:     # the rerun drew under an enclosing vmap in 'error' mode
            return None
        raise
    except (TypeError, AttributeError, NotImplementedError) as e:
        cthtorch.set_rng_state(rng)
        if "BatchedTensor" in str(e):
            return None
        raise


def _lifted_vjp(func, primals, has_aux, level, B=None):
    B = B or batch_size(level, primals)
    pprim, _, rewrap = _lift_args(primals, {}, level, B, range(len(primals)))
    stash = []

    def phys_func(*pa):
        a, _ = rewrap(pa, {})
        out = func(*a)
        out, aux = _split_aux(out, has_aux, "vjp(f, *primals)")
        stash.append(aux)
        return _phys_tree(out, level, B)

    with _Lifting(level):
        out, inner_fn = vjp(phys_func, *pprim)

    def vjp_fn(cotangents, retain_graph=True, create_graph=None):
        lv = max_level(cotangents)
        if lv > level:
            return _map_over_level(lambda c: vjp_fn(c, retain_graph=True, create_graph=create_graph), cotangents, lv)
        pct = _phys_tree(cotangents, level, B)
        return _to_logical(inner_fn(pct, retain_graph=retain_graph, create_graph=create_graph), level)

    res = (_to_logical(out, level), vjp_fn)
    return res + (stash[0],) if has_aux else res


def _lifted_jvp(func, primals, tangents, strict, has_aux, level, B=None):
    B = B or batch_size(level, primals, tangents)
    pprim = tuple(_phys_tree(p, level, B) for p in primals)
    ptan = tuple(_phys_tree(t, level, B) for t in tangents) if isinstance(tangents, tuple) else \
        _phys_tree(tangents, level, B)
    stash = []

    def phys_func(*pa):
        out = func(*tuple(_to_logical(p, level) for p in pa))
        out, aux = _split_aux(out, has_aux, _JVP)
        stash.append(aux)
        return _phys_tree(out, level, B)

    with _Lifting(level):
        out, tan = jvp(phys_func, pprim, ptan, strict=strict)
    res = (_to_logical(out, level), _to_logical(tan, level))
    return res + (stash[0],) if has_aux else res


# ---- jvp (double-vjp trick) ----

_JVP = "jvp(f, primals, tangents)"


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """jvp(func, primals, tangents, *, strict=False, has_aux=False) as torch.func.jvp.

    Computed with two reverse passes: g(u) = J^T u with a dummy cotangent u,
    then the gradient of <g(u), tangents> with respect to u is J tangents.
    """
    if not isinstance(primals, tuple):
        raise RuntimeError("%s: Expected primals to be a tuple. E.g. it should be valid to call f(*primals)." % _JVP)
    flat_p, p_spec = tree_flatten(primals)
    flat_t, t_spec = tree_flatten(tangents)
    if p_spec != t_spec:
        raise RuntimeError("%s: Expected primals and tangents to have the same python structure. For example, if "
                           "primals is a tuple of 3 tensors, tangents also must be. Got primals with structure %s "
                           "and tangents with structure %s" % (_JVP, p_spec, t_spec))
    for argname, flat in (("primals", flat_p), ("tangents", flat_t)):
        if len(flat) == 0:
            raise RuntimeError("%s: Expected %s to contain at least one Tensor." % (_JVP, argname))
        for x in flat:
            if not isinstance(x, (cthtorch.Tensor, BatchedTensor)):
                raise RuntimeError("%s: Expected %s to only contain Tensors, got %s" % (_JVP, argname, type(x)))
    batch_level = max_level(primals, tangents)
    if batch_level:
        return _lifted_jvp(func, primals, tangents, strict, has_aux, batch_level)
    with _Level() as level:
        diff = [_make_diff(t, level) for t in flat_p]
        out = func(*tree_unflatten(diff, p_spec))
        lv, B = _captured_level(out)
        if lv:
            with level.outside():
                return _lifted_jvp(func, primals, tangents, strict, has_aux, lv, B)
        out, aux = _split_aux(out, has_aux, _JVP)
        flat_out, out_spec = tree_flatten(out)
        _check_tensor_outputs(flat_out, _JVP)
        connected = (level.outer_depth > 0 or any(level.connects(t) for t in flat_p)
                     or any(level.connects(t) for t in flat_t))
        idx = [k for k, o in enumerate(flat_out) if o.requires_grad]
        dummies = [cthtorch.zeros_like(flat_out[k]).requires_grad_() for k in idx]
        tangent_out = [None] * len(flat_out)
        if idx:
            gs = cthtorch.autograd.grad([flat_out[k] for k in idx], diff, dummies, create_graph=True,
                                        allow_unused=True)
            pairs = [(g, t) for g, t in zip(gs, flat_t) if g is not None and g.requires_grad]
            if pairs:
                jv = cthtorch.autograd.grad([p[0] for p in pairs], dummies, [p[1] for p in pairs],
                                            create_graph=connected, allow_unused=True)
                for k, t in zip(idx, jv):
                    tangent_out[k] = t
        for k, t in enumerate(tangent_out):
            if t is None:
                if strict:
                    raise RuntimeError("jvp(f, primals, tangents, strict=True): The output of f is independent of "
                                       "the inputs. This is not allowed with strict=True.")
                tangent_out[k] = cthtorch.zeros_like(flat_out[k])
    if not connected:
        flat_out = [o.detach() for o in flat_out]
        tangent_out = [t.detach() for t in tangent_out]
        aux = _detach_tree(aux)
    res = (tree_unflatten(flat_out, out_spec), tree_unflatten(tangent_out, out_spec))
    return res + (aux,) if has_aux else res


def linearize(func, *primals):
    """linearize(func, *primals) -> (output, jvp_fn): jvp_fn(*tangents) reruns jvp at primals."""
    out = func(*primals)

    def jvp_fn(*tangents):
        return jvp(func, primals, tangents)[1]

    return _detach_tree(out), jvp_fn


# ---- jacobians ----

def _error_if_complex(name, tree, is_input):
    for i, x in enumerate(tree_flatten(tree)[0]):
        if isinstance(x, cthtorch.Tensor) and x.is_complex():
            raise RuntimeError("%s: Expected all %s to be real but received complex tensor at flattened input idx: %d"
                               % (name, "inputs" if is_input else "outputs", i))


def _jacobian_by_rows(o, flat_diff, create_graph):
    """d o / d x for each x of flat_diff, one reverse pass per element of o"""
    n = o.numel()
    basis = cthtorch.eye(n, dtype=o.dtype)
    rows = [_autograd_grad([o], flat_diff, [basis[j].reshape(o.shape)], retain_graph=True,
                           create_graph=create_graph) for j in range(n)]
    return [cthtorch.stack([r[i] for r in rows]).reshape(tuple(o.shape) + tuple(x.shape))
            for i, x in enumerate(flat_diff)]


def _jacobian_by_columns(o, flat_diff, create_graph):
    """d o / d x column by column, for outputs with many more elements than the inputs: g(u) = J^T u once
    with a dummy cotangent u, then J e_k = d<g(u), e_k>/du, one pass over g's graph per input element
    (torch's vmap does either direction as one batched pass; here the cheaper direction keeps 2048-output
    Jacobians of a 32-element input at 33 passes instead of 2048). None when some op on the way has no
    double backward (the caller then goes by rows)."""
    u = cthtorch.zeros_like(o).requires_grad_()
    try:
        gs = cthtorch.autograd.grad([o], flat_diff, [u], retain_graph=True, create_graph=True, allow_unused=True)
        jac = []
        for g, x in zip(gs, flat_diff):
            if g is None or not g.requires_grad:
                jac.append(x.new_zeros(tuple(o.shape) + tuple(x.shape)))
                continue
            basis = cthtorch.eye(x.numel(), dtype=x.dtype)
            cols = [_autograd_grad([g], [u], [basis[k].reshape(x.shape)], retain_graph=True,
                                   create_graph=create_graph)[0].reshape(-1) for k in range(x.numel())]
            jac.append(cthtorch.stack(cols, 1).reshape(tuple(o.shape) + tuple(x.shape)))
        return jac
    except (RuntimeError, NotImplementedError):
        return None


def _jacobian(func, argnums, has_aux, name):
    @functools.wraps(func)
    def wrapper(*args):
        _error_if_complex(name, args, True)
        batch_level = max_level(args)
        if batch_level:
            return _lifted_jacobian(func, argnums, has_aux, name, batch_level, args)
        orig_args = args
        with _Level() as level:
            args, flat_diff, spec, create_graph = _differentiable_args(args, argnums, level)
            out = func(*args)
            lv, B = _captured_level(out)
            if lv:
                with level.outside():
                    return _lifted_jacobian(func, argnums, has_aux, name, lv, orig_args, B)
            out, aux, flat_out, out_spec = _split_vjp_output(out, has_aux)
            _error_if_complex(name, flat_out, False)
            per_output = []
            for o in flat_out:
                n = o.numel()
                if n == 0 or not o.requires_grad:
                    per_output.append([x.new_zeros(tuple(o.shape) + tuple(x.shape)) for x in flat_diff])
                    continue
                jac = None
                if 2 * sum(x.numel() for x in flat_diff) < n:
                    jac = _jacobian_by_columns(o, flat_diff, create_graph)
                if jac is None:
                    jac = _jacobian_by_rows(o, flat_diff, create_graph)
                per_output.append(jac)
        if not create_graph:
            per_output = [[j.detach() for j in js] for js in per_output]
            aux = _detach_tree(aux)
        per_output = [tree_unflatten(js, spec) for js in per_output]
        if isinstance(argnums, int):
            per_output = [js[0] for js in per_output]
        result = tree_unflatten(per_output, out_spec)
        return (result, aux) if has_aux else result

    return wrapper


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """jacrev(func, argnums=0, *, has_aux=False, chunk_size=None) as torch.func.jacrev.

    One reverse pass per output element (or per input element, see
    _jacobian_by_columns); chunk_size is validated only.
    """
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")
    return _jacobian(func, argnums, has_aux, "jacrev")


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """jacfwd(func, argnums=0, has_aux=False, *, randomness='error'): the Jacobian, computed by reverse mode.

    There is no forward-mode AD here, so this is jacrev under jacfwd's
    signature: same values, shapes and output structure.
    """
    if randomness not in ["error", "different", "same"]:
        raise RuntimeError("Only allowed values for randomness are 'error', 'different', or 'same'. Got %s"
                           % randomness)
    return _jacobian(func, argnums, has_aux, "jacfwd")


def hessian(func, argnums=0):
    """hessian(func, argnums=0) = jacfwd(jacrev(func, argnums), argnums), as torch.func.hessian."""
    return jacfwd(jacrev(func, argnums), argnums)
