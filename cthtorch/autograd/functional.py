"""Higher-order autograd helpers: vjp, jvp, jacobian, hessian, vhp, hvp.

All are built on reverse mode. jvp and hvp use the double-backward trick
(differentiate a vjp with respect to its grad_output), so they need no
forward-mode AD. vectorize=True gives the same results as the loop (there is
no vmap here); strategy="forward-mode" (torch requires vectorize=True with it)
gives the same Jacobian, computed by reverse mode.
"""
import cthtorch

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


def _as_tuple(inp, arg_name, fn_name):
    """(was_tuple, tuple of tensors), with PyTorch's TypeError for anything else."""
    is_tuple = isinstance(inp, tuple)
    items = inp if is_tuple else (inp,)
    for i, el in enumerate(items):
        if not isinstance(el, cthtorch.Tensor):
            where = "value at index %d" % i if is_tuple else "given %s" % arg_name
            raise TypeError("The %s given to %s must be either a Tensor or a tuple of Tensors but the %s has type %s."
                            % (arg_name, fn_name, where, type(el)))
    return is_tuple, items


def _unpack(res, outer, inner=None):
    """Undoes the tuple wrapping of single tensors (outer level, then inner)."""
    if inner is not None and not inner:
        res = tuple(r[0] for r in res)
    return res if outer else res[0]


def _prepare(inputs, create_graph, need_graph):
    # with create_graph, keep the link to the caller's graph through a view
    return tuple(i.view_as(i) if create_graph and i.requires_grad else i.detach().requires_grad_(need_graph)
                 for i in inputs)


def _finish(ts, create_graph):
    if ts and isinstance(ts[0], tuple):
        return tuple(_finish(t, create_graph) for t in ts)
    return ts if create_graph else tuple(t.detach() for t in ts)


def _check_v(v, other, other_is_tuple):
    if len(v) != len(other):
        if other_is_tuple:
            raise RuntimeError("v is a tuple of invalid length: should be %d but got %d." % (len(other), len(v)))
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(v, other)):
        if a.size() != b.size():
            raise RuntimeError("%sv has invalid size: should be %s but got %s."
                               % ("Entry %d in " % i if other_is_tuple else "", b.size(), a.size()))


def _check_outputs_require_grad(outputs, strict):
    if not strict:
        return
    for i, o in enumerate(outputs):
        if not o.requires_grad:
            raise RuntimeError("Output %d of the user-provided function does not require gradients. The outputs must "
                               "be computed in a differentiable manner from the input when running in strict mode." % i)


def _grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """autograd.grad over the outputs that require grad; all None when none do."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return cthtorch.autograd.grad([p[0] for p in pairs], inputs, [p[1] for p in pairs], allow_unused=True,
                                  create_graph=create_graph, retain_graph=retain_graph)


_STRICT_NONE = {
    "back": "The output of the user-provided function is independent of input {i}. This is not allowed in strict "
            "mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the grad_outputs when using "
                  "the double backward trick to compute forward mode gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This is not allowed in "
                   "strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} in the grad_jacobian."
                         " This is not allowed in strict mode as it prevents from using the double backward trick to "
                         "replace forward mode AD.",
}


def _zeros_for_none(grads, refs, strict, create_graph, stage):
    out = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_STRICT_NONE[stage].format(i=i))
            g = cthtorch.zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError("The %s of the user-provided function is independent of input %d. This is not allowed "
                               "in strict mode when create_graph=True." % (what, i))
        out.append(g)
    return tuple(out)


def _prepare_v(v, fn_name, create_graph, ref, ref_is_tuple, none_msg):
    if v is None:
        if len(ref) != 1 or ref[0].nelement() != 1:
            raise RuntimeError(none_msg)
        return None
    _, v = _as_tuple(v, "v", fn_name)
    v = _prepare(v, create_graph, need_graph=False)
    _check_v(v, ref, ref_is_tuple)
    return v


_V_NONE_INPUT = ("The vector v can only be None if the input to the user-provided function is a single Tensor with "
                 "a single element.")


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J)."""
    with cthtorch.enable_grad():
        in_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        out_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "vjp")
        _check_outputs_require_grad(outputs, strict)
        v = _prepare_v(v, "vjp", create_graph, outputs, out_tuple,
                       "The vector v can only be None if the user-provided function returns a single Tensor with a "
                       "single element.")
    with cthtorch.set_grad_enabled(True if create_graph else cthtorch.is_grad_enabled()):
        res = _zeros_for_none(_grad(outputs, inputs, v, create_graph), inputs, strict, create_graph, "back")
    return _unpack(_finish(outputs, create_graph), out_tuple), _unpack(_finish(res, create_graph), in_tuple)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v), by differentiating a vjp with respect to its grad_outputs."""
    with cthtorch.enable_grad():
        in_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        v = _prepare_v(v, "jvp", create_graph, inputs, in_tuple, _V_NONE_INPUT)
        out_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jvp")
        _check_outputs_require_grad(outputs, strict)
        dummies = tuple(cthtorch.zeros_like(o, requires_grad=True) for o in outputs)
        g_in = _grad(outputs, inputs, dummies, create_graph=True)
        if strict:
            for i, g in enumerate(g_in):
                if g is None or not g.requires_grad:
                    raise RuntimeError("The gradient with respect to input %d is independent of the inputs of the "
                                       "user-provided function. This is not allowed in strict mode." % i)
    with cthtorch.enable_grad() if create_graph else cthtorch.set_grad_enabled(cthtorch.is_grad_enabled()):
        res = _zeros_for_none(_grad(g_in, dummies, v, create_graph), outputs, strict, create_graph, "back_trick")
    return _unpack(_finish(outputs, create_graph), out_tuple), _unpack(_finish(res, create_graph), out_tuple)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """J[i][j] of shape outputs[i].shape + inputs[j].shape (tuples dropped for single tensors)."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your function '
                             'has more outputs than inputs, "forward-mode" tends to be more performant. Otherwise, '
                             'prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError('torch.autograd.functional.jacobian: `create_graph=True` and `strategy="forward-'
                                      'mode"` are not supported together (yet). Please either set `create_graph=False` '
                                      'or `strategy="reverse-mode"`.')
        if not vectorize:
            raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian isonly "
                                      "implemented for `vectorize=True`.")
        # the same Jacobian; reverse mode computes it (forward_ad's duals are reverse mode underneath anyway)
    if vectorize and strict:
        raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not supported "
                           "together. Please either set `strict=False` or `vectorize=False`.")
    with cthtorch.enable_grad():
        in_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        out_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jacobian")
        _check_outputs_require_grad(outputs, strict)
        jac = []
        for i, out in enumerate(outputs):
            rows = [[] for _ in inputs]
            flat = out.reshape(-1)
            for k in range(out.nelement()):
                vj = _grad((flat[k],), inputs, retain_graph=True, create_graph=create_graph)
                for j, (g, inp) in enumerate(zip(vj, inputs)):
                    if g is None:
                        if strict:
                            raise RuntimeError("Output %d of the user-provided function is independent of input %d. "
                                               "This is not allowed in strict mode." % (i, j))
                        g = cthtorch.zeros_like(inp)
                    elif strict and create_graph and not g.requires_grad:
                        raise RuntimeError("The jacobian of the user-provided function is independent of input %d. "
                                           "This is not allowed in strict mode when create_graph=True." % i)
                    rows[j].append(g)
            jac.append(tuple(_stack_rows(r, out, inp) for r, inp in zip(rows, inputs)))
        jac = _finish(tuple(jac), create_graph)
        return _unpack(jac, out_tuple, in_tuple)


def _stack_rows(rows, out, inp):
    if not rows:   # an empty output: the Jacobian has no rows
        return cthtorch.zeros(tuple(out.shape) + tuple(inp.shape), dtype=inp.dtype)
    return cthtorch.stack(rows, 0).view(tuple(out.shape) + tuple(inp.shape))


def _single_scalar_output(func, fn_name, strict):
    def wrapped(*inp):
        out = func(*inp)
        is_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", fn_name)
        _check_outputs_require_grad(t_out, strict)
        if is_tuple:
            raise RuntimeError("The function given to %s should return a single Tensor" % fn_name)
        if out.nelement() != 1:
            raise RuntimeError("The Tensor returned by the function given to %s should contain a single element"
                               % fn_name)
        return out
    return wrapped


def _check_jac_depends(jac, strict, what):
    if not strict:
        return
    for i, g in enumerate(jac):
        if g is None or not g.requires_grad:
            if what == "hessian":
                raise RuntimeError("The hessian of the user-provided function with respect to input %d is independent"
                                   " of the input. This is not allowed in strict mode. You should ensure that your "
                                   "function is thrice differentiable and that the hessian depends on the inputs." % i)
            raise RuntimeError("While computing the hessian, found that the jacobian of the user-provided function "
                               "with respect to input %d is independent of the input. This is not allowed in strict "
                               "mode. You should ensure that your function is twice differentiable and that the "
                               "jacobian depends on the inputs (this would be violated by a linear function for "
                               "example)." % i)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """H[i][j] of shape inputs[i].shape + inputs[j].shape for a scalar func."""
    in_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')
    scalar_fn = _single_scalar_output(func, "hessian", strict)

    def jac_func(*inp):   # inp is a tuple, so this returns a tuple
        jac = jacobian(lambda *a: scalar_fn(*a).squeeze(), inp, create_graph=True)
        _check_jac_depends(jac, strict, "jacobian")
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)
    return _unpack(res, in_tuple, in_tuple)


def _vhp_setup(func, inputs, v, create_graph, strict, fn_name):
    in_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
    inputs = _prepare(inputs, create_graph, need_graph=True)
    v = _prepare_v(v, fn_name, create_graph, inputs, in_tuple, _V_NONE_INPUT)
    out = _single_scalar_output(func, fn_name, strict)(*inputs)
    jac = _grad((out,), inputs, create_graph=True)
    _check_jac_depends(jac, strict, "jacobian")
    return in_tuple, inputs, v, out, jac


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H)."""
    with cthtorch.enable_grad():
        in_tuple, inputs, v, out, jac = _vhp_setup(func, inputs, v, create_graph, strict, "vhp")
    with cthtorch.set_grad_enabled(True if create_graph else cthtorch.is_grad_enabled()):
        res = _zeros_for_none(_grad(jac, inputs, v, create_graph), inputs, strict, create_graph, "double_back")
    return _finish((out,), create_graph)[0], _unpack(_finish(res, create_graph), in_tuple)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v), via the double-backward trick on v^T H."""
    with cthtorch.enable_grad():
        in_tuple, inputs, v, out, jac = _vhp_setup(func, inputs, v, create_graph, strict, "hvp")
        dummies = tuple(cthtorch.zeros_like(i, requires_grad=True) for i in inputs)
        double_back = _grad(jac, inputs, dummies, create_graph=True)
        _check_jac_depends(jac, strict, "hessian")
    with cthtorch.set_grad_enabled(True if create_graph else cthtorch.is_grad_enabled()):
        res = _zeros_for_none(_grad(double_back, dummies, v, create_graph), inputs, strict, create_graph,
                              "double_back_trick")
    return _finish((out,), create_graph)[0], _unpack(_finish(res, create_graph), in_tuple)
