"""Products and matrix functions of torch.linalg built from matmul: cross,
multi_dot, vecdot, matrix_power, matrix_exp."""
import math

import cthtorch
from cthtorch._sparse_tensor import name_node
from cthtorch.linalg import _checks, _functions
from cthtorch.amp._cpu_policy import lower_on_cpu


def cross_(input, other, dim, name="linalg.cross"):
    if input.dim() != other.dim():
        raise RuntimeError("%s: inputs must have the same number of dimensions." % name)
    a, b = cthtorch.broadcast_tensors(input, other)
    if a.shape[dim] != 3:
        raise RuntimeError("%s: inputs dimension %d must have length 3. Got %d and %d"
                           % (name, dim, input.shape[dim], other.shape[dim]))
    if cthtorch.is_grad_enabled() and (input.requires_grad or other.requires_grad):
        return _Cross.apply(input, other, dim)   # one LinalgCrossBackward0 node, as torch's
    return _cross_values(a, b, dim)


def _cross_values(a, b, dim):
    a0, a1, a2 = a.unbind(dim)
    b0, b1, b2 = b.unbind(dim)
    return cthtorch.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], dim)


class _Cross(cthtorch.autograd.Function):
    @staticmethod
    def forward(ctx, input, other, dim):
        ctx.save_for_backward(input, other)
        ctx.dim = dim
        return _cross_values(*cthtorch.broadcast_tensors(input.detach(), other.detach()), dim)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        # d(a x b) = da x b + a x db: <g, da x b> = <b x g, da>, <g, a x db> = <g x a, db>
        ga = cross_(b.expand_as(g), g, ctx.dim).sum_to_size(a.shape) if ctx.needs_input_grad[0] else None
        gb = cross_(g, a.expand_as(g), ctx.dim).sum_to_size(b.shape) if ctx.needs_input_grad[1] else None
        return ga, gb, None


def cross(input, other, *, dim=-1):
    return cross_(input, other, dim)


@lower_on_cpu
def vecdot(x, y, *, dim=-1):
    return (x * y).sum(dim)


def multi_dot(tensors):
    n = len(tensors)
    if n < 2:
        raise RuntimeError("multi_dot(): expected at least 2 tensors but got %d" % n)
    first, last = tensors[0].dim() == 1, tensors[-1].dim() == 1
    ts = list(tensors)
    if first:
        ts[0] = ts[0].unsqueeze(0)
    if last:
        ts[-1] = ts[-1].unsqueeze(-1)
    for i, t in enumerate(ts):
        if t.dim() != 2:
            which = "first" if i == 0 else ("last" if i == n - 1 else None)
            if which:
                raise RuntimeError("multi_dot(): the %s tensor must be 1D or 2D but got %dD"
                                   % (which, tensors[i].dim()))
            raise RuntimeError("multi_dot(): tensor %d must be 2D but got %dD" % (i, t.dim()))
    r = ts[0]
    for t in ts[1:]:
        r = cthtorch.mm(r, t)
    if first:
        r = r.squeeze(0)
    if last:
        r = r.squeeze(-1)
    return r


def matrix_power(A, n):
    _checks.square(A, "linalg.matrix_power")
    if n == 0:
        return _functions.Identity.apply(A)
    if n < 0:
        A = cthtorch.linalg.inv(A)
        n = -n
    result, base = None, A
    while n:   # square-and-multiply
        if n & 1:
            result = base if result is None else cthtorch.matmul(result, base)
        n >>= 1
        if n:
            base = cthtorch.matmul(base, base)
    return result.clone() if result is A else result


def matrix_exp(A):
    _checks.square(A, "linalg.matrix_exp")
    _checks.floating(A, "linalg.matrix_exp")
    n = A.shape[-1]
    if A.numel() == 0:
        return A.clone()
    # scaling and squaring: exp(A) = exp(A / 2^s)^(2^s) with |A / 2^s|_1 <= 1/2, then
    # Taylor to degree 18, whose error there is below float64's epsilon
    norm = float(A.detach().abs().sum(-2).amax())
    s = max(0, int(math.ceil(math.log2(norm))) + 1) if norm > 0.5 else 0
    X = A / (2.0 ** s)
    eye = cthtorch.eye(n, dtype=A.dtype).expand(A.shape)
    result = eye
    for k in range(18, 0, -1):   # Horner: I + X/1 (I + X/2 (I + ...))
        result = eye + cthtorch.matmul(X, result) / k
    for _ in range(s):
        result = cthtorch.matmul(result, result)
    return result


def vander(x, N=None):
    """Columns x^0, x^1, ..., x^(N-1): a running product keeps integer dtypes exact."""
    n = x.size(-1) if x.dim() > 0 and N is None else N
    if n is None or n <= 1:
        raise RuntimeError("N must be greater than 1.")
    powers = x.unsqueeze(-1).expand(*x.shape, n - 1).cumprod(-1)
    return cthtorch.cat([cthtorch.ones_like(powers[..., :1]), powers], -1)


def tensorinv(A, ind=2):
    """inv of A flattened to (prod(shape[:ind]), prod(shape[ind:])), shaped back to shape[ind:] + shape[:ind]."""
    if ind <= 0:
        raise RuntimeError("Expected a strictly positive integer for 'ind', but got %d" % ind)
    rows, cols = math.prod(A.shape[:ind]), math.prod(A.shape[ind:])
    if rows != cols:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           "prod(self.shape[:ind]), but got %d != %d" % (cols, rows))
    return cthtorch.linalg.inv(A.reshape(rows, cols)).reshape(tuple(A.shape[ind:]) + tuple(A.shape[:ind]))


def tensorsolve(A, B, dims=None):
    """X with tensordot(A, X, X.ndim) == B: A flattened to (B.numel(), rest) and solved."""
    if dims is not None:
        dims = [d % A.dim() for d in dims]
        A = A.permute([d for d in range(A.dim()) if d not in dims] + dims)
    lead, rest = tuple(A.shape[:B.dim()]), tuple(A.shape[B.dim():])
    # torch words it as the shapes of A but compares A's trailing size with B's
    if math.prod(rest) != B.numel():
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                           "prod(self.shape[:other.ndim]), but got %d != %d" % (math.prod(rest), B.numel()))
    return cthtorch.linalg.solve(A.reshape(math.prod(lead), -1), B.reshape(-1)).reshape(rest)


name_node(_Cross, "LinalgCrossBackward0")
