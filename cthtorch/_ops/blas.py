"""Matrix products over the declared GEMM ops mm/bmm/addmm (src/ATen/ATBlas.c):
matmul's broadcasting rules, dot/vdot/inner/mv/outer/addmv/addbmm and
linear. Autograd comes from the declared ops. Registered by _ops/nn.py's
register() with the other composites."""
import math

import cthtorch
from cthtorch._ops.shape import _broadcast_pair
from cthtorch.amp import _cpu_policy
from cthtorch.amp._cpu_policy import lower_on_cpu, outside_cpu_autocast
from cthtorch._utils import _cpp_dtype_name, _dtype_name, _tensor_arg
from cthtorch.autograd.function import Function


def _refuse_out_grad(name, out, *inputs):
    if out is not None and cthtorch.is_grad_enabled() and any(t.requires_grad for t in inputs):
        raise RuntimeError("%s(): functions with out=... arguments don't support automatic differentiation, but one "
                           "of the arguments requires grad." % name)


def _into(out, r, dtype_message):
    """out= of a product computed into the fresh r: out must have r's dtype (dtype_message(out.dtype, r.dtype)
    is the op's own wording in torch), is resized to r's shape and filled; r itself without out"""
    if out is None:
        return r
    if out.dtype != r.dtype:
        raise RuntimeError(dtype_message(out.dtype, r.dtype))
    if tuple(out.shape) != tuple(r.shape):
        out.resize_(r.shape)
    with cthtorch.no_grad():
        out.copy_(r)
    return out


def _result_dtype_message(out_dtype, dtype):    # dot, vdot
    return "result dtype %s does not match input dtype %s" % (_dtype_name(out_dtype), _dtype_name(dtype))


def _out_dtype_message(out_dtype, dtype):   # the GEMM family (mm, mv, addmv, matmul)
    return "Expected out tensor to have dtype %s, but got %s instead" % (_cpp_dtype_name(dtype),
                                                                         _cpp_dtype_name(out_dtype))


def matmul(input, other, *, out=None):
    if _cpu_policy._local.dtype is not None:   # CPU autocast's lower list (inline: matmul is hot)
        input, other = _cpu_policy.lowered(input, other)
    a, b = input, other
    if not isinstance(b, cthtorch.Tensor) or not isinstance(a, cthtorch.Tensor):
        _tensor_arg("matmul", "input", a, 1)
        _tensor_arg("matmul", "other", b, 1)
    if out is not None:
        _refuse_out_grad("matmul", out, a, b)
    da, db = a.dim(), b.dim()
    if da == 0 or db == 0:
        raise RuntimeError("both arguments to matmul need to be at least 1D, but they are %dD and %dD" % (da, db))
    if a.is_complex() or b.is_complex():   # real GEMMs on the parts (cthtorch/_ops/complex.py)
        from cthtorch._ops.complex import complex_matmul
        return _into(out, complex_matmul(matmul, a, b),
                     _result_dtype_message if da == 1 and db == 1 else _out_dtype_message)
    if da == 1 and db == 1:
        r = dot(a, b)
    elif da == 2 and db == 2:
        r = cthtorch.mm(a, b)
    elif da == 1 and db == 2:
        r = cthtorch.mm(a.unsqueeze(0), b).squeeze(0)
    elif da == 2 and db == 1:   # torch's matmul is mv here: its node and its messages
        r = _mv(a, b)
    elif a.is_nested or b.is_nested:   # per component (cthtorch/_nested_tensor.py)
        r = a.matmul(b) if a.is_nested else _nested_operand()
    elif _folds(a, b, out is not None):
        if da >= db:
            r = _fold_mm(a, b)
        else:   # b^T a^T folded, transposed back into a contiguous result (as torch: CloneBackward0)
            r = _fold_mm(b.transpose(-2, -1), a.transpose(0, 1) if da == 2 else a)
            if da == 2:
                r = r.transpose(-2, -1).clone(memory_format=cthtorch.contiguous_format)
    else:
        aa = a.unsqueeze(0) if da == 1 else a
        bb = b.unsqueeze(-1) if db == 1 else b
        n, k = aa.shape[-2], aa.shape[-1]
        k2, m = bb.shape[-2], bb.shape[-1]
        batch = _broadcast_pair(list(aa.shape[:-2]), list(bb.shape[:-2]))
        nb = math.prod(batch)   # not -1: with n or k 0 the batch cannot be inferred from no elements
        if k != k2:   # bmm's check, on the operands expanded to the common batch
            raise RuntimeError("Expected size for first two dimensions of batch2 tensor to be: [%d, %d] but got: [%d, %d]."
                               % (nb, k, nb, k2))
        ae = _fold_reshape(aa.expand(batch + [n, k]), [nb, n, k])
        be = _fold_reshape(bb.expand(batch + [k, m]), [nb, k, m])
        shape = batch + ([n] if da > 1 else []) + ([m] if db > 1 else [])
        r = cthtorch.bmm(ae, be)
        if db == 1:   # torch drops a vector's column before the final view (SqueezeBackward1)
            r = r.squeeze(-1)
        r = cthtorch._C._internal._unsafe_view(r, shape)
    if out is not None:
        return _into(out, r, _result_dtype_message if da == 1 and db == 1 else _out_dtype_message)
    return r


def _nested_operand():
    raise RuntimeError("Expected both to be nested, but got a non-nested self and nested other")


def _folds(a, b, has_out):
    """whether matmul folds the larger operand's batch into GEMM rows (one mm) rather than
    running bmm: torch's choice, which its grad_fn chain shows. The larger operand (b^T when
    b is larger) must be >= 3-d and the other <= 2-d; it folds when the smaller one needs a
    gradient (a bmm would expand it and its gradient), else only without a copy: not a 2-d a
    (its fold needs a transposed result), and the leading dims must merge into one."""
    t1 = a if a.dim() >= b.dim() else b.transpose(-2, -1)
    small = b if a.dim() >= b.dim() else a
    if t1.dim() < 3 or small.dim() > 2:
        return False
    if small.requires_grad and not has_out:
        return True
    if a.dim() == 2:
        return False
    if t1.numel() == 0:
        return True
    st, sz = t1.stride(), t1.shape
    return all(st[i] == st[i + 1] * sz[i + 1] for i in range(t1.dim() - 2))


def _fold_reshape(t, shape):
    """t.reshape(shape) with torch's matmul history: a view where one exists, else a
    contiguous copy reshaped without view tracking (CloneBackward0 under UnsafeViewBackward0)"""
    try:
        return t.view(shape)
    except RuntimeError:
        return cthtorch._C._internal._unsafe_view(t.clone(memory_format=cthtorch.contiguous_format), shape)


def _fold_mm(t1, t2):
    """t1 (>= 3-d) @ t2 (1-d or 2-d) as one mm over t1's rows"""
    k = t1.shape[-1]
    k2 = t2.shape[0]
    if k != k2:
        if t2.dim() == 1:
            raise RuntimeError("size mismatch, got input (%d), mat (%dx%d), vec (%d)"
                               % (t1.shape[:-1].numel(), t1.shape[:-1].numel(), k, k2))
        raise RuntimeError("mat1 and mat2 shapes cannot be multiplied (%dx%d and %dx%d)"
                           % (t1.shape[:-1].numel(), k, k2, t2.shape[1]))
    rows = t1.shape[:-1].numel()
    r = cthtorch.mm(_fold_reshape(t1, [rows, k]), t2.unsqueeze(1) if t2.dim() == 1 else t2)
    shape = list(t1.shape[:-1]) + ([t2.shape[1]] if t2.dim() == 2 else [])
    return cthtorch._C._internal._unsafe_view(r, shape)


@outside_cpu_autocast
def dot(input, other, *, out=None):
    _tensor_arg("dot", "input", input, 1)
    _tensor_arg("dot", "tensor", other, 1)
    _check_dot(input, other)
    _refuse_out_grad("dot", out, input, other)
    if _records_graph(input, other):
        return _Dot.apply(input, other)
    return _into(out, _dot_value(input, other), _result_dtype_message)


def _check_dot(input, other):
    if input.dim() != 1 or other.dim() != 1:
        raise RuntimeError("1D tensors expected, but got %dD and %dD tensors" % (input.dim(), other.dim()))
    if input.shape[0] != other.shape[0]:
        raise RuntimeError("inconsistent tensor size, expected tensor [%d] and src [%d] to have the same number of "
                           "elements, but got %d and %d elements respectively"
                           % (input.shape[0], other.shape[0], input.shape[0], other.shape[0]))
    if input.dtype != other.dtype:
        raise RuntimeError("dot : expected both vectors to have same dtype, but found %s and %s"
                           % (_dtype_name(input.dtype), _dtype_name(other.dtype)))


def _dot_value(a, b):
    return cthtorch.mm(a.unsqueeze(0), b.unsqueeze(1)).reshape(())


def _records_graph(*ts):
    return cthtorch.is_grad_enabled() and any(t.requires_grad for t in ts)


def vdot(input, other, *, out=None):
    _tensor_arg("vdot", "input", input, 1)
    _tensor_arg("vdot", "other", other, 1)
    _check_dot(input, other)
    _refuse_out_grad("vdot", out, input, other)
    if _records_graph(input, other):
        return _Vdot.apply(input, other)
    return _into(out, _dot_value(input.conj() if input.is_complex() else input, other), _result_dtype_message)


@outside_cpu_autocast
def inner(input, other, *, out=None):
    _tensor_arg("inner", "input", input, 1)
    _tensor_arg("inner", "other", other, 1)
    if input.dim() == 0 or other.dim() == 0:
        r = input * other
    elif other.dim() <= 2:
        r = matmul(input, other.movedim(-1, 0) if other.dim() > 1 else other)
    else:
        r = cthtorch.tensordot(input, other, ([-1], [-1]))
    return _into(out, r, lambda o, d: "tensordot: Expected the output tensor to have dtype %s, but got an output "
                                      "tensor with dtype %s" % (_dtype_name(d), _dtype_name(o)))


@outside_cpu_autocast
def mv(input, vec, *, out=None):
    _tensor_arg("mv", "input", input, 1)
    _tensor_arg("mv", "vec", vec, 1)
    if input.dim() == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    if input.dim() != 2 or vec.dim() != 1:
        raise RuntimeError("vector + matrix @ vector expected, got %d, %d, %d" % (1, input.dim(), vec.dim()))
    _refuse_out_grad("mv", out, input, vec)
    return _into(out, _mv(input, vec), _out_dtype_message)


def _mv(m, v):
    """m @ v of a matrix and a vector, checked (torch's messages), as one MvBackward0 node where it records
    (matmul's path: the checks are written for speed)"""
    if m.shape[1] != v.shape[0] or m.dtype != v.dtype:
        _mv_error(m, v)
    if (m.requires_grad or v.requires_grad) and cthtorch.is_grad_enabled():
        return _Mv.apply(m, v)
    return _mv_value(m, v)


def _mv_error(m, v):
    if m.shape[1] != v.shape[0]:
        raise RuntimeError("size mismatch, got input (%d), mat (%dx%d), vec (%d)"
                           % (m.shape[0], m.shape[0], m.shape[1], v.shape[0]))
    # torch's mv is addmv into a result of vec's dtype
    raise RuntimeError("addmv input tensors must have the same dtype, but got %s, %s, and %s"
                       % (_dtype_name(v.dtype), _dtype_name(m.dtype), _dtype_name(v.dtype)))


def _mv_value(m, v):
    return cthtorch.mm(m, v.unsqueeze(1)).squeeze(1)


def _product_node(name, value, grad_a, grad_b):
    """a product of two tensors as one graph node named as torch's: value(a, b) forward, grad_a/grad_b(g, a, b)
    the gradients (written with differentiable ops, so they differentiate again)"""
    class Node(Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return value(a, b)

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            return (grad_a(g, a, b) if ctx.needs_input_grad[0] else None,
                    grad_b(g, a, b) if ctx.needs_input_grad[1] else None)
    from cthtorch._sparse_tensor import name_node
    return name_node(Node, name)


# dot: d/da = g conj(b), d/db = g conj(a); vdot = sum(conj(a) b): d/da = conj(g) b, d/db = g a;
# mv: d/dM = outer(g, conj(v)), d/dv = M^H g
_Dot = _product_node("DotBackward0", _dot_value, lambda g, a, b: g * b.conj(), lambda g, a, b: g * a.conj())
_Vdot = _product_node("VdotBackward0", lambda a, b: _dot_value(a.conj() if a.is_complex() else a, b),
                      lambda g, a, b: g.conj() * b, lambda g, a, b: g * a)
_Mv = _product_node("MvBackward0", _mv_value, lambda g, m, v: g.unsqueeze(1) * v.conj(),
                    lambda g, m, v: _mv(m.conj().t(), g))


def outer(input, vec2, *, out=None):
    _tensor_arg("outer", "input", input, 1)
    _tensor_arg("outer", "vec2", vec2, 1)
    for name, t in (("self", input), ("vec2", vec2)):
        if t.dim() != 1:
            raise RuntimeError("outer: Expected 1-D argument %s, but got %d-D" % (name, t.dim()))
    return cthtorch.mul(input.reshape(-1, 1), vec2, out=out)   # vec2 broadcasts: torch's graph, no view of it


def ger(input, vec2, *, out=None):
    _tensor_arg("ger", "input", input, 1)
    _tensor_arg("ger", "vec2", vec2, 1)
    return outer(input, vec2, out=out)


@outside_cpu_autocast
def addmv(input, mat, vec, *, beta=1, alpha=1, out=None):
    _refuse_out_grad("addmv", out, input, mat, vec)
    r = cthtorch.addmm(input.unsqueeze(1) if input.dim() == 1 else input, mat, vec.unsqueeze(1),
                       beta=beta, alpha=alpha).squeeze(1)
    return _into(out, r, _out_dtype_message)


@lower_on_cpu
def addbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    _refuse_out_grad("addbmm", out, input, batch1, batch2)
    r = input * beta + cthtorch.bmm(batch1, batch2).sum(0) * alpha
    return _into(out, r, lambda o, d: "self and mat2 must have the same dtype, but got %s and %s"
                 % (_dtype_name(o), _dtype_name(d)))


def linear(input, weight, bias=None):
    if input.dim() == 2 and bias is not None:
        return cthtorch.addmm(bias, input, weight.t())
    if input.is_nested:
        from cthtorch._nested_tensor import linear as nested_linear
        return nested_linear(input, weight, bias)
    if bias is not None and input.dim() >= 1 and input.is_contiguous() and bias.dim() == 1:
        # torch's fused path: one addmm over the leading dims flattened (a 1-d
        # input is one row), viewed back (so grad_fn is ViewBackward0 as there)
        lead = list(input.shape[:-1])
        r = cthtorch.addmm(bias, input.reshape(math.prod(lead), input.shape[-1]), weight.t())
        return r.view(lead + [r.shape[1]])
    r = matmul(input, weight.t())
    return r + bias if bias is not None else r
