"""gradcheck / gradgradcheck: compare the engine's Jacobian (one backward per
output element) with central finite differences, as PyTorch's slow mode does.

fast_mode is accepted and runs the full (slow) check: same verdict, more time.
check_batched_grad needs vmap, which cthtorch lacks: without batching there is
nothing extra to compare, so it is accepted and adds no check.
"""
import warnings

import cthtorch


class GradcheckError(RuntimeError):
    """Error raised by gradcheck and gradgradcheck."""


def _as_tuple(x):
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _is_tensor(x):
    return isinstance(x, cthtorch.Tensor)


def _differentiable_outputs(x):
    return tuple(o for o in _as_tuple(x) if _is_tensor(o) and o.requires_grad)


def _check_inputs(inputs):
    found = False
    for idx, inp in enumerate(inputs):
        if not (_is_tensor(inp) and inp.requires_grad):
            continue
        if inp.dtype != cthtorch.float64:
            warnings.warn("Input #%d requires gradient and is not a double precision floating point or complex. "
                          "This check will likely fail if all the inputs are not of double precision floating "
                          "point or complex. " % idx, stacklevel=3)
        if not all(st > 0 or sz <= 1 for st, sz in zip(inp.stride(), inp.size())):
            raise RuntimeError("The %dth input has a dimension with stride 0. gradcheck only supports inputs that "
                               "are non-overlapping to be able to compute the numerical gradients correctly. You "
                               "should call .contiguous on the input before passing it to gradcheck." % idx)
        found = True
    if not found:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of them have "
                         "requires_grad=True.")


def _flat_indices(t):
    """Every element's index tuple, in row-major order (the Jacobian's row order)."""
    import itertools
    return itertools.product(*[range(s) for s in t.shape])


def _numerical_jacobian(func, inputs, eps):
    """jac[j][i]: (inputs[j].numel(), outputs[i].numel()) float64, for every input that requires grad."""
    outs0 = _as_tuple(func(*inputs))
    result = []
    for inp in inputs:
        if not (_is_tensor(inp) and inp.requires_grad):
            continue
        # .data has its own version counter, so perturbing it leaves saved tensors valid
        data = inp.data
        cols = [cthtorch.zeros(inp.numel(), o.numel(), dtype=cthtorch.float64) if _is_tensor(o) else None
                for o in outs0]
        for row, idx in enumerate(_flat_indices(inp)):
            orig = data[idx].item()
            data[idx] = orig - eps
            minus = [o.detach().clone() if _is_tensor(o) else None for o in _as_tuple(func(*inputs))]
            data[idx] = orig + eps
            plus = [o.detach().clone() if _is_tensor(o) else None for o in _as_tuple(func(*inputs))]
            data[idx] = orig
            for c, a, b in zip(cols, plus, minus):
                if c is not None:
                    c[row] = (a.double() - b.double()).reshape(-1) / (2 * eps)
        result.append(cols)
    return outs0, result


def _analytical_jacobian(output, diff_inputs, check_grad_dtypes):
    """jac[j]: (diff_inputs[j].numel(), output.numel()), one backward per output element."""
    jac = [cthtorch.zeros(i.numel(), output.numel(), dtype=cthtorch.float64) for i in diff_inputs]
    sizes_ok = types_ok = True
    for k in range(output.numel()):
        # contiguous, so reshape(-1) is a view to write through (zeros_like keeps a permuted output's strides)
        go = cthtorch.zeros_like(output, memory_format=cthtorch.contiguous_format)
        go.reshape(-1)[k] = 1
        grads = cthtorch.autograd.grad(output, diff_inputs, go, retain_graph=True, allow_unused=True)
        for j, (g, inp) in enumerate(zip(grads, diff_inputs)):
            if g is None:
                continue
            if g.shape != inp.shape:
                sizes_ok = False
                continue
            if g.dtype != inp.dtype:
                types_ok = False
            jac[j][:, k] = g.detach().double().reshape(-1)
    if not types_ok and check_grad_dtypes:
        raise GradcheckError("Gradient has dtype mismatch")
    if not sizes_ok:
        raise GradcheckError("Analytical gradient has incorrect size")
    return jac


def _check_mul_by_grad_output(outputs, diff_inputs):
    grads = cthtorch.autograd.grad(outputs, diff_inputs, [cthtorch.zeros_like(o) for o in outputs],
                                   allow_unused=True, retain_graph=True)
    for gi, di in zip(grads, diff_inputs):
        if gi is None:
            continue
        if not bool(gi.eq(0).all()):
            raise GradcheckError("backward not multiplied by grad_output")
        if gi.dtype != di.dtype:
            raise GradcheckError("grad is incorrect type")
        if gi.size() != di.size():
            raise GradcheckError("grad is incorrect size")


def _gradcheck(func, inputs, atol, rtol, nondet_tol, check_undefined_grad, check_grad_dtypes, numeric):
    func_out, numerical = numeric
    outputs = _differentiable_outputs(func_out)
    if not outputs:
        for per_input in numerical:
            for jac in per_input:
                if jac is not None and bool(jac.ne(0).any()):
                    raise GradcheckError("Numerical gradient for function expected to be zero")
        return True
    diff_inputs = [i for i in inputs if _is_tensor(i) and i.requires_grad]
    out_all = _as_tuple(func_out)
    for i, o in enumerate(out_all):
        if not (_is_tensor(o) and o.requires_grad):
            continue
        analytical = _analytical_jacobian(o, diff_inputs, check_grad_dtypes)
        again = _analytical_jacobian(o, diff_inputs, check_grad_dtypes)
        oi = sum(1 for x in out_all[:i] if _is_tensor(x) and x.requires_grad)
        for j, a in enumerate(analytical):
            n = numerical[j][i]
            if not cthtorch.allclose(a, n, rtol, atol):
                raise GradcheckError("Jacobian mismatch for output %d with respect to input %d,\nnumerical:%s\n"
                                     "analytical:%s\n" % (oi, j, n, a))
        for a, b in zip(analytical, again):
            if a.numel() and float((a - b).abs().max()) > nondet_tol:
                raise GradcheckError("Backward is not reentrant, i.e., running backward with same input and "
                                     "grad_output multiple times gives different values, although analytical "
                                     "gradient matches numerical gradient.The tolerance for nondeterminism was "
                                     "%s." % (nondet_tol,))
    # also covers check_undefined_grad: zeros stand in for PyTorch's undefined grads
    _check_mul_by_grad_output(outputs, diff_inputs)
    return True


def _forward_ad_jacobian(func, inputs, n_out):
    """jac[j][i] as _numerical_jacobian lays it out, from forward mode: one jvp per input element."""
    from cthtorch.autograd import forward_ad as fwAD
    diff = [k for k, x in enumerate(inputs) if _is_tensor(x) and x.requires_grad]
    result = []
    for k in diff:
        inp = inputs[k]
        cols = [None] * n_out
        for row in range(inp.numel()):
            with fwAD.dual_level():
                args = list(inputs)
                for m in diff:
                    t = cthtorch.zeros_like(inputs[m], memory_format=cthtorch.contiguous_format).detach()
                    if m == k:
                        t.reshape(-1)[row] = 1
                    args[m] = fwAD.make_dual(inputs[m].detach(), t)
                outs = _as_tuple(func(*args))
                for i, o in enumerate(outs):
                    if not _is_tensor(o):
                        continue
                    if cols[i] is None:
                        cols[i] = cthtorch.zeros(inp.numel(), o.numel(), dtype=cthtorch.float64)
                    tan = fwAD.unpack_dual(o).tangent
                    if tan is not None:
                        cols[i][row] = tan.double().reshape(-1)
        result.append(cols)
    return result


def _check_forward_ad(func, inputs, atol, rtol, numeric):
    func_out, numerical = numeric
    forward = _forward_ad_jacobian(func, inputs, len(_as_tuple(func_out)))
    for j, (num_cols, fwd_cols) in enumerate(zip(numerical, forward)):
        for i, (n, a) in enumerate(zip(num_cols, fwd_cols)):
            if n is None or a is None:
                continue
            if not cthtorch.allclose(a, n, rtol, atol):
                raise GradcheckError("Jacobian computed with forward mode mismatch for output %d with respect to "
                                     "input %d,\nnumerical:%s\nanalytical:%s\n" % (i, j, n, a))
    return True


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True, fast_mode=False,
              masked=None):
    """Checks analytical gradients of func at inputs against finite differences (True or GradcheckError)."""
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad to be True")
    inputs = _as_tuple(inputs)
    try:
        _check_inputs(inputs)
        numeric = _numerical_jacobian(func, inputs, eps)   # (func's output, the finite differences): both modes'
        if check_forward_ad:
            _check_forward_ad(func, inputs, atol, rtol, numeric)
        if not check_backward_ad:
            return True
        return _gradcheck(func, inputs, atol, rtol, nondet_tol, check_undefined_grad, check_grad_dtypes,
                          numeric)
    except GradcheckError:
        if raise_exception:
            raise
        return False


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False, masked=False):
    """gradcheck of the gradient: differentiates autograd.grad(func(inputs), inputs, grad_outputs)."""
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError("Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True")
    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        outs = _differentiable_outputs(func(*inputs))
        grad_outputs = tuple((cthtorch.rand(o.shape, dtype=o.dtype if o.is_floating_point() else cthtorch.float64)
                              * 2 - 1).requires_grad_() for o in outs)
        if gen_non_contig_grad_outputs:
            grad_outputs = tuple(g.detach().t().contiguous().t().requires_grad_() if g.dim() == 2 else g
                                 for g in grad_outputs)
    else:
        grad_outputs = _as_tuple(grad_outputs)
    n_out = len(grad_outputs)
    diff_in = {i for i, x in enumerate(inputs) if _is_tensor(x) and x.requires_grad}

    def new_func(*args):
        ins = args[:-n_out] if n_out else args
        outs = _differentiable_outputs(func(*ins))
        diff = tuple(x for i, x in enumerate(ins) if i in diff_in)
        grads = cthtorch.autograd.grad(outs, diff, args[len(ins):], create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(new_func, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad, check_grad_dtypes=check_grad_dtypes,
                     check_batched_grad=check_batched_grad, fast_mode=fast_mode,
                     check_forward_ad=check_fwd_over_rev, check_backward_ad=check_rev_over_rev, masked=masked)
