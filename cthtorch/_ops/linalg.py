"""torch.<name> linear-algebra functions that are compositions of other ops
(diag, trace, kron, cross, einsum, ...), the legacy torch.<name>
spellings of torch.linalg ops, and their Tensor methods. install() wires
them into the cthtorch namespace."""
import warnings

import cthtorch
from cthtorch import _C, linalg
from cthtorch.autograd.function import Function
from cthtorch._einsum import einsum
from cthtorch._ops.torch_api import _with_out
from cthtorch._ops.shape import _inplace_of
from cthtorch._utils import _dtype_name
from cthtorch.linalg import _decomp, _norms, _products


def diag(input, diagonal=0):
    if input.dim() == 1:
        r = cthtorch.diag_embed(input, diagonal)
    elif input.dim() == 2:
        r = cthtorch.diagonal(input, diagonal).clone()
    else:
        raise RuntimeError("diag(): Supports 1D or 2D tensors. Got %dD" % input.dim())
    return r


def diagflat(input, offset=0):
    return cthtorch.diag_embed(input.reshape(-1), offset)


def trace(input):
    if input.dim() != 2:
        raise RuntimeError("trace: expected a matrix, but got tensor with dim %d" % input.dim())
    if input.dtype == cthtorch.bool:
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    if input.requires_grad and cthtorch.is_grad_enabled():
        return _Trace.apply(input)
    return cthtorch.diagonal(input).sum()


class _Trace(Function):
    """trace as one node (torch's TraceBackward0); the gradient is grad on the diagonal"""
    @staticmethod
    def forward(ctx, input):
        ctx.shape = tuple(input.shape)
        return cthtorch.diagonal(input).sum()

    @staticmethod
    def backward(ctx, g):
        return g * cthtorch.eye(*ctx.shape, dtype=g.dtype, device=g.device)


def _tri_indices(row, col, offset, dtype, lower):
    if dtype not in (cthtorch.int64, cthtorch.int32):
        raise NotImplementedError("\"%s_indices\" not implemented for '%s'"
                                  % ("tril" if lower else "triu", _dtype_name(dtype)))
    r = _C._internal._tri_indices(row, col, offset, lower)
    return r if dtype == cthtorch.int64 else r.to(dtype)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None, pin_memory=False):
    return _tri_indices(row, col, offset, dtype or cthtorch.int64, True)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None, pin_memory=False):
    return _tri_indices(row, col, offset, dtype or cthtorch.int64, False)


def kron(input, other):
    nd = max(input.dim(), other.dim())
    a = input.reshape([1] * (nd - input.dim()) + list(input.shape))
    b = other.reshape([1] * (nd - other.dim()) + list(other.shape))
    # a[i] * b[j] laid out as index i * len(b) + j in every dim
    a2 = a.reshape([x for s in a.shape for x in (s, 1)])
    b2 = b.reshape([x for s in b.shape for x in (1, s)])
    # the product is a fresh contiguous tensor: torch folds it with _unsafe_view (UnsafeViewBackward0)
    return cthtorch._C._internal._unsafe_view(a2 * b2, [sa * sb for sa, sb in zip(a.shape, b.shape)])


def cross(input, other, dim=None):
    if dim is None:
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the dim "
                      "explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to agree "
                      "with that of linalg.cross in a future release.")
        shape = cthtorch.broadcast_shapes(input.shape, other.shape)
        dim = next((i for i, s in enumerate(shape) if s == 3), -1)
    return _products.cross_(input, other, dim)


# ---------------------------------------------------------------- install
_FUNCS = {
    "diag": diag, "diagflat": diagflat, "trace": trace, "tril_indices": tril_indices,
    "triu_indices": triu_indices, "kron": kron, "cross": cross, "einsum": einsum,
    "norm": _norms.torch_norm, "renorm": _norms.renorm, "dist": _norms.dist, "cdist": _norms.cdist,
    "frobenius_norm": _norms.frobenius_norm, "nuclear_norm": _norms.nuclear_norm,
    "inverse": linalg.inv, "det": linalg.det, "logdet": _decomp.logdet, "slogdet": _decomp.slogdet_legacy,
    "cholesky": _decomp.cholesky_legacy, "cholesky_solve": _decomp.cholesky_solve,
    "cholesky_inverse": _decomp.cholesky_inverse, "qr": _decomp.qr_legacy, "svd": _decomp.svd_legacy,
    "pinverse": _decomp.pinverse, "matrix_power": linalg.matrix_power, "matrix_exp": linalg.matrix_exp,
    "lu": _decomp.lu_legacy, "lu_solve": _decomp.lu_solve_legacy,
    "triangular_solve": _decomp.triangular_solve, "vecdot": linalg.vecdot,
    "geqrf": _decomp.geqrf, "orgqr": _decomp.orgqr, "ormqr": _decomp.ormqr,
}
# out= forms (PyTorch has them for these)
_OUT = ("diag", "cross", "kron", "trace", "inverse", "det", "cholesky", "matrix_power", "pinverse", "tril_indices", "dist",
        "cholesky_solve", "cholesky_inverse", "vecdot",
        "geqrf", "orgqr", "ormqr")
_METHODS = ("diag", "diagflat", "trace", "kron", "cross", "renorm", "dist", "inverse",
            "det", "logdet", "slogdet", "cholesky", "cholesky_solve", "cholesky_inverse", "qr", "svd", "pinverse",
            "matrix_power", "matrix_exp", "lu", "lu_solve", "triangular_solve", "geqrf", "orgqr", "ormqr")


renorm_ = _inplace_of(_norms.renorm, "renorm_")


def register():
    """Registers this module's ops (cthtorch/_ops)."""
    from cthtorch import _ops
    from cthtorch._ops.torch_api import _present
    for name, fn in _FUNCS.items():
        if not _present("torch", name):
            _ops.op("torch", name, _with_out(name, fn) if name in _OUT else fn, __name__)
    for name in _METHODS:
        if not _present("Tensor", name):
            _ops.op("Tensor", name, _FUNCS[name], __name__)
    if not _present("Tensor", "norm"):
        _ops.op("Tensor", "norm", _norms.tensor_norm, __name__)
    if not _present("Tensor", "renorm_"):
        _ops.op("Tensor", "renorm_", renorm_, __name__)
    # torch._C._LinAlgError: what singular / non-positive-definite inputs raise
    _C._LinAlgError = linalg.LinAlgError


from cthtorch._sparse_tensor import name_node  # noqa: E402
name_node(_Trace, "TraceBackward0")
