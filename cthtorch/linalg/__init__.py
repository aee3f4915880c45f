"""cthtorch.linalg: PyTorch's torch.linalg. Factorizations run in LAPACK
(src/ATen/ATLapack.c) with gradients from _functions.py; norms and products
are compositions of other ops."""
import cthtorch
from cthtorch import _ops
from cthtorch._ops.torch_api import _with_out
from cthtorch.linalg._checks import LinAlgError
from cthtorch.linalg._decomp import (  # noqa: F401
    inv, inv_ex, det, slogdet, solve, solve_ex, solve_triangular, cholesky, cholesky_ex, eigh, eigvalsh, svd,
    svdvals, qr, pinv, matrix_rank, lstsq, lu, lu_factor, lu_factor_ex, lu_solve, eig, eigvals,
    householder_product, ldl_factor, ldl_factor_ex, ldl_solve,
)
from cthtorch.linalg._norms import vector_norm, matrix_norm, norm  # noqa: F401
from cthtorch.linalg._products import (  # noqa: F401
    cross, vecdot, multi_dot, matrix_power, matrix_exp, vander, tensorinv, tensorsolve)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    return cthtorch.diagonal(A, offset, dim1, dim2)


def matmul(input, other, *, out=None):
    return cthtorch.matmul(input, other, out=out)


def cond(A, p=None):
    if p is None or p in (2, -2):
        S = svdvals(A)
        return S[..., 0] / S[..., -1] if p != -2 else S[..., -1] / S[..., 0]
    return matrix_norm(A, p) * matrix_norm(inv(A), p)


# out= forms, as PyTorch has them
for _name in ("inv", "inv_ex", "det", "slogdet", "solve", "solve_ex", "solve_triangular", "cholesky", "cholesky_ex",
              "eigh", "eigvalsh", "svd", "svdvals", "qr", "pinv", "matrix_rank", "lu", "lu_factor", "lu_factor_ex",
              "lu_solve", "householder_product", "ldl_factor", "ldl_factor_ex", "ldl_solve", "vector_norm",
              "matrix_norm", "norm", "cross", "vecdot", "multi_dot", "matrix_power",
              "matrix_exp", "cond", "tensorinv", "tensorsolve"):
    globals()[_name] = _with_out("linalg." + _name, globals()[_name])
del _name

_ops.module_ops("linalg", globals(), "linalg_")
