"""The public factorization and solver ops of torch.linalg (and their legacy
torch.<name> spellings): argument checks and PyTorch's errors, then the
autograd Functions of _functions.py."""

import cthtorch
from cthtorch import _C, return_types
from cthtorch._utils import _dtype_name, _warn_once
from cthtorch.linalg import _checks
from cthtorch.linalg import _functions as F
from cthtorch.linalg._checks import raise_info

_VF = _C._internal   # the LAPACK helpers are not public ops

# named tuples torch.return_types has and return_types.py lacks
for _name, _fields in (("linalg_lu_factor", ("LU", "pivots")), ("linalg_lu_factor_ex", ("LU", "pivots", "info")),
                       ("linalg_lu", ("P", "L", "U")),
                       ("linalg_solve_ex", ("result", "info")),
                       ("linalg_ldl_factor", ("LD", "pivots")), ("linalg_ldl_factor_ex", ("LD", "pivots", "info")), ("triangular_solve", ("solution", "cloned_coefficient"))):
    if not hasattr(return_types, _name):
        setattr(return_types, _name, return_types._make(_name, _fields))


def _needs_grad(*ts):
    return cthtorch.is_grad_enabled() and any(t.requires_grad for t in ts)


def _singular_inv(code):
    return ("linalg.inv: The diagonal element %d is zero, the inversion could not be completed because the input "
            "matrix is singular." % code)


def _not_pd(name):
    return lambda code: ("%s: The factorization could not be completed because the input is not positive-definite "
                         "(the leading minor of order %d is not positive-definite)." % (name, code))


def inv_ex(A, *, check_errors=False):
    _checks.square_float(A, "linalg.inv")
    X, info = F.Inv.apply(A)
    if check_errors:
        raise_info(info, _singular_inv)
    return return_types.linalg_inv_ex(X, info)


def inv(A):
    return inv_ex(A, check_errors=True)[0]


def det(A):
    _checks.square_float(A, "linalg.det")
    return F.Det.apply(A)


def slogdet(A):
    _checks.square_float(A, "linalg.slogdet")
    return return_types.linalg_slogdet(*F.Slogdet.apply(A))


def slogdet_legacy(A):
    return return_types.slogdet(*slogdet(A))


def logdet(A):
    _checks.square_float(A, "logdet")
    sign, lad = F.Slogdet.apply(A)
    return cthtorch.where(sign < 0, cthtorch.full((), float("nan"), dtype=lad.dtype), lad)


def _as_matrix_rhs(A, B):
    """B is a batch of vectors when it is 1-d or A's shape without the last dim."""
    return B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1]))


def _solve(A, B, left, check, name="linalg.solve"):
    _checks.square(A, name)
    _checks.lapack_dtype(A, name)
    if A.dtype != B.dtype:
        raise RuntimeError("%s: Expected A and B to have the same dtype, but found A of type %s and B of type %s "
                           "instead" % (name, _dtype_name(A.dtype), _dtype_name(B.dtype)))
    vec = _as_matrix_rhs(A, B)
    Bm = B.unsqueeze(-1) if vec else B
    if not left:
        A, Bm = A.mT, Bm.mT
    n = A.shape[-1]
    if Bm.shape[-2] != n:
        raise RuntimeError("%s: Incompatible shapes of A and B for the equation %s (%dx%d and %dx%d)"
                           % (name, "AX = B" if left else "XA = B", n, n, Bm.shape[-2], Bm.shape[-1]))
    A2, B2 = _checks.broadcast_batch(A, Bm, name)
    X, info = F.Solve.apply(A2, B2)
    if check:
        raise_info(info, lambda code: "torch.linalg.solve: The solver failed because the input matrix is singular.")
    if not left:
        X = X.mT
    return (X.squeeze(-1) if vec else X), info


def solve(A, B, *, left=True):
    return _solve(A, B, left, True)[0]


def solve_ex(A, B, *, left=True, check_errors=False):
    return return_types.linalg_solve_ex(*_solve(A, B, left, check_errors))


def solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    name = "linalg.solve_triangular"
    _checks.square(A, name)
    _checks.lapack_dtype(A, name)
    _checks.matrix(B, name)
    A2, B2 = _checks.broadcast_batch(A, B, name)
    return F.SolveTriangular.apply(A2, B2, upper, left, unitriangular)


def _cholesky(A, upper, check_errors, name):
    L, info = F.Cholesky.apply(A, upper)
    if check_errors:
        raise_info(info, _not_pd(name))
    return L, info


def cholesky_ex(A, *, upper=False, check_errors=False):
    _checks.square_float(A, "linalg.cholesky")
    return return_types.linalg_cholesky_ex(*_cholesky(A, upper, check_errors, "linalg.cholesky"))


def cholesky(A, *, upper=False):
    return cholesky_ex(A, upper=upper, check_errors=True)[0]


def cholesky_legacy(A, upper=False):
    _warn_once("cholesky", "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in "
               "a future PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\n"
               "L = torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, upper=True)\nshould be replaced "
               "with\nU = torch.linalg.cholesky(A).mH\nThis transform will produce equivalent results for "
               "all valid (symmetric positive definite) inputs.")
    # the legacy op names itself "cholesky" in its errors and has no floating check before its kernel's dispatch
    _checks.square(A, "cholesky")
    if not A.is_complex() and A.dtype not in (cthtorch.float32, cthtorch.float64):
        raise NotImplementedError("\"cholesky_cpu\" not implemented for '%s'" % _dtype_name(A.dtype))
    _checks.lapack_dtype(A, "cholesky")
    return _cholesky(A, upper, True, "cholesky")[0]


def cholesky_solve(B, L, upper=False):
    L2, B2 = _checks.broadcast_batch(L, B, "cholesky_solve")
    return F.CholeskySolve.apply(B2, L2, upper)


def cholesky_inverse(L, upper=False):
    return cholesky_solve(F._eye_like(L), L, upper)


def _eigh_message(name):
    return lambda code: ("%s: The algorithm failed to converge because the input matrix is ill-conditioned or has "
                         "too many repeated eigenvalues (error code: %d)." % (name, code))


def _check_uplo(UPLO):
    if UPLO not in ("L", "U", "l", "u"):
        raise RuntimeError("Expected UPLO argument to be 'L' or 'U', but got %s" % UPLO)
    return UPLO in ("U", "u")


def eigh(A, UPLO="L"):
    _checks.square_float(A, "linalg.eigh")
    w, V, info = F.Eigh.apply(A, _check_uplo(UPLO))
    raise_info(info, _eigh_message("linalg.eigh"))
    return return_types.linalg_eigh(w, V)


def eigvalsh(A, UPLO="L"):
    _checks.square_float(A, "linalg.eigvalsh")
    upper = _check_uplo(UPLO)
    if _needs_grad(A):
        w, _, info = F.Eigh.apply(A, upper)
    else:
        w, _, info = _VF._lapack_eigh(A, upper, False)
    raise_info(info, _eigh_message("linalg.eigvalsh"))
    return w


def _svd_message(code):
    return ("linalg.svd: The algorithm failed to converge because the input matrix is ill-conditioned or has too "
            "many repeated singular values (error code: %d)." % code)


def svd(A, full_matrices=True, *, driver=None):
    _checks.matrix(A, "linalg.svd")
    _checks.lapack_dtype(A, "linalg.svd")
    if driver is not None:
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with "
                           "cuSOLVER backend.")
    U, S, Vh, info = F.Svd.apply(A, full_matrices)
    raise_info(info, _svd_message)
    return return_types.linalg_svd(U, S, Vh)


def svdvals(A, *, driver=None):
    _checks.matrix(A, "linalg.svdvals")
    _checks.lapack_dtype(A, "linalg.svdvals")
    if _needs_grad(A):
        U, S, Vh, info = F.Svd.apply(A, False)
    else:
        U, S, Vh, info = _VF._lapack_svd(A, False, False)
    raise_info(info, _svd_message)
    return S


def svd_legacy(input, some=True, compute_uv=True):
    if not compute_uv:
        m, n = input.shape[-2], input.shape[-1]
        S = svdvals(input)
        batch = tuple(input.shape[:-2])
        return return_types.svd(input.new_zeros(batch + (m, m)), S, input.new_zeros(batch + (n, n)))
    U, S, Vh = svd(input, full_matrices=not some)
    return return_types.svd(U, S, Vh.mT)


def qr(A, mode="reduced"):
    _checks.matrix(A, "linalg.qr")
    _checks.lapack_dtype(A, "linalg.qr")
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError("qr received unrecognized mode '%s' but expected one of 'reduced' (default), 'r', or "
                           "'complete'" % mode)
    Q, R = F.Qr.apply(A, mode)
    return return_types.linalg_qr(A.new_zeros(0) if mode == "r" else Q, R)


def qr_legacy(input, some=True):
    _warn_once("qr", "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future PyTorch "
               "release.\nThe boolean parameter 'some' has been replaced with a string parameter 'mode'.\n"
               "Q, R = torch.qr(A, some)\nshould be replaced with\n"
               "Q, R = torch.linalg.qr(A, 'reduced' if some else 'complete')")
    return return_types.qr(*qr(input, "reduced" if some else "complete"))


def _tolerance(S, A, atol, rtol):
    """max(atol, rtol * largest singular value), PyTorch's default rtol being eps * max(m, n)."""
    if rtol is None:
        rtol = 0.0 if (atol is not None and (not isinstance(atol, (int, float)) or atol > 0)) else \
            cthtorch.finfo(A.dtype).eps * max(A.shape[-2], A.shape[-1])
    smax = S.amax(-1, keepdim=True) if S.shape[-1] else S.new_zeros(S.shape[:-1] + (1,))
    tol = smax * rtol
    if atol is not None:
        tol = cthtorch.maximum(tol, atol if isinstance(atol, cthtorch.Tensor) else cthtorch.full((), atol,
                                                                                                    dtype=S.dtype))
    return tol


def pinv(A, rcond=None, hermitian=False, *, atol=None, rtol=None):
    _checks.matrix(A, "linalg.pinv")
    _checks.floating(A, "linalg.pinv")
    if rcond is not None:
        rtol = rcond
    U, S, Vh = svd(A, full_matrices=False)
    tol = _tolerance(S.detach(), A, atol, rtol)
    Sinv = cthtorch.where(S > tol, 1.0 / S, cthtorch.zeros((), dtype=S.dtype))
    return cthtorch.matmul(Vh.mT * Sinv.unsqueeze(-2), U.mT)


def pinverse(input, rcond=1e-15):
    return pinv(input, rtol=rcond)


def matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None):
    _checks.matrix(A, "linalg.matrix_rank")
    _checks.floating(A, "linalg.matrix_rank")
    if tol is not None:
        atol, rtol = tol, 0.0
    S = svdvals(A.detach())
    return (S > _tolerance(S, A, atol, rtol)).sum(-1)


def lstsq(A, B, rcond=None, *, driver=None):
    name = "torch.linalg.lstsq"
    _checks.floating(A, "linalg.lstsq")
    if A.dim() < 2:
        raise RuntimeError("%s: input must have at least 2 dimensions." % name)
    if driver not in (None, "gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError("%s: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)" % name)
    vec = B.dim() == A.dim() - 1
    Bm = B.unsqueeze(-1) if vec else B
    if A.shape[-2] != Bm.shape[-2]:
        raise RuntimeError("%s: input.size(-2) should match other.size(-2)" % name)
    m, n = A.shape[-2], A.shape[-1]
    A2, B2 = _checks.broadcast_batch(A, Bm, name)
    driver = driver or "gelsy"
    # full-rank least squares through QR (differentiable); rank-deficient through the pseudo-inverse
    rank = matrix_rank(A2)
    if bool((rank == min(m, n)).all()) and min(m, n) > 0:
        if m >= n:
            Q, R = qr(A2)
            X = solve_triangular(R, cthtorch.matmul(Q.mT, B2), upper=True)
        else:
            Q, R = qr(A2.mT)
            X = cthtorch.matmul(Q, solve_triangular(R.mT, B2, upper=False))
    else:
        X = cthtorch.matmul(pinv(A2, rtol=rcond), B2)
    empty = A.new_zeros(0)
    residuals = empty
    if m > n and driver != "gelsy" and bool((rank == n).all()):
        residuals = ((cthtorch.matmul(A2, X) - B2) ** 2).sum(-2)
        if vec:
            residuals = residuals.squeeze(-1)
    sv = svdvals(A2.detach()) if driver in ("gelsd", "gelss") else empty
    rank_out = rank if driver != "gels" else cthtorch.zeros(0, dtype=cthtorch.int64)
    return return_types.linalg_lstsq(X.squeeze(-1) if vec else X, residuals, rank_out, sv)


# ---------------------------------------------------------------- LU
def _lu_factor(A, name):
    _checks.matrix(A, name)
    _checks.lapack_dtype(A, name)
    if _needs_grad(A):
        if A.shape[-2] != A.shape[-1]:
            raise NotImplementedError("cthtorch: the derivative of %s for non-square matrices is not implemented"
                                      % name)
        return F.LuFactor.apply(A, _perm_matrix)
    return _VF._lapack_lu(A)


def lu_factor_ex(A, *, pivot=True, check_errors=False):
    if not pivot:
        raise NotImplementedError("linalg.lu_factor: LU without pivoting is not implemented on CPU.")
    LU, piv, info = _lu_factor(A, "linalg.lu_factor")
    if check_errors:
        raise_info(info, lambda c: "torch.linalg.lu_factor_ex: U[%d,%d] is zero and using it on lu_solve would "
                                   "result in a division by zero." % (c, c))
    return return_types.linalg_lu_factor_ex(LU, piv, info)


def lu_factor(A, *, pivot=True):
    LU, piv, info = lu_factor_ex(A, pivot=pivot)
    raise_info(info, lambda c: "torch.linalg.lu_factor: U[%d,%d] is zero and using it on lu_solve would result in a "
                               "division by zero. If you still want to perform the factorization, consider calling "
                               "linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)" % (c, c))
    return return_types.linalg_lu_factor(LU, piv)


def _perm_matrix(piv, m, dtype):
    """P with A = P L U from LAPACK's 1-based row swaps: P[perm[c], c] = 1."""
    perm = _VF._lu_pivots_to_permutation(piv, m)
    P = cthtorch.zeros(tuple(piv.shape[:-1]) + (m, m), dtype=dtype)
    return P.scatter_(-2, perm.unsqueeze(-2), 1)


def lu(A, *, pivot=True):
    LU, piv, _ = lu_factor_ex(A, pivot=pivot)
    return return_types.linalg_lu(*cthtorch.lu_unpack(LU, piv))


def lu_solve(LU, pivots, B, *, left=True, adjoint=False):
    name = "linalg.lu_solve"
    if not left:   # X A = B  <=>  A^T X^T = B^T
        return lu_solve(LU, pivots, B.mT, adjoint=not adjoint).mT
    if _needs_grad(LU, B):
        # recorded as triangular solves over the unpacked factors (A = P L U)
        P, L, U = cthtorch.lu_unpack(LU, pivots)
        if adjoint:   # A^T X = B
            Y = solve_triangular(U.mT, B, upper=False)
            return cthtorch.matmul(P, solve_triangular(L.mT, Y, upper=True, unitriangular=True))
        Y = solve_triangular(L, cthtorch.matmul(P.mT, B), upper=False, unitriangular=True)
        return solve_triangular(U, Y, upper=True)
    LU2, B2 = _checks.broadcast_batch(LU, B, name)
    piv = pivots.expand(LU2.shape[:-2] + pivots.shape[-1:])
    return _VF._lapack_lu_solve(LU2, piv, B2, adjoint)


_LU_DEPRECATED = (
    "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and will be removed in a "
    "future PyTorch release.\nLU, pivots = torch.lu(A, compute_pivots)\nshould be replaced with\n"
    "LU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\n"
    "LU, pivots, info = torch.lu(A, compute_pivots, get_infos=True)\nshould be replaced with\n"
    "LU, pivots, info = torch.linalg.lu_factor_ex(A, compute_pivots)")


def lu_legacy(A, pivot=True, get_infos=False):
    _warn_once("lu", _LU_DEPRECATED)
    LU, piv, info = lu_factor_ex(A, pivot=pivot)
    return (LU, piv, info) if get_infos else (LU, piv)


def lu_solve_legacy(b, LU_data, LU_pivots):
    return lu_solve(LU_data, LU_pivots, b)


def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False):
    # torch's text, its missing space included
    _warn_once("triangular_solve", "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangular"
               "and will be removed in a future PyTorch release.\ntorch.linalg.solve_triangular has its arguments "
               "reversed and does not return a copy of one of the inputs.\nX = torch.triangular_solve(B, A).solution"
               "\nshould be replaced with\nX = torch.linalg.solve_triangular(A, B).")
    if transpose:
        X = solve_triangular(A.mT, b, upper=not upper, unitriangular=unitriangular)
    else:
        X = solve_triangular(A, b, upper=upper, unitriangular=unitriangular)
    return return_types.triangular_solve(X, A.clone())


def eig(A):
    raise NotImplementedError("cthtorch: linalg.eig returns complex tensors, and complex dtypes are not implemented")


def eigvals(A):
    raise NotImplementedError("cthtorch: linalg.eigvals returns complex tensors, and complex dtypes are not "
                              "implemented")


# ---------------------------------------------------------------- Householder (QR's reflectors)
def geqrf(input):
    """torch.geqrf: LAPACK's QR factors, R with the Householder vectors below its diagonal, and tau.
    Not differentiable, as in PyTorch."""
    if input.dim() < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    if input.dtype not in (cthtorch.float32, cthtorch.float64):
        raise NotImplementedError("\"geqrf_cpu\" not implemented for '%s'" % _dtype_name(input.dtype))
    a, tau = _VF._lapack_geqrf(input.detach())
    if _needs_grad(input):
        a, tau = F.Geqrf.apply((a, tau), input)
    return return_types.geqrf(a, tau)


def _check_householder(A, tau, name):
    if A.dim() < 2:
        raise RuntimeError("%s: input must have at least 2 dimensions." % name)
    if tau.dim() != A.dim() - 1:
        raise RuntimeError("%s: Expected tau to have one dimension less than input, but got tau.ndim equal to %d and "
                           "input.ndim is equal to %d" % (name, tau.dim(), A.dim()))
    if A.dim() > 2 and tuple(tau.shape[:-1]) != tuple(A.shape[:-2]):
        raise RuntimeError("%s: Expected batch dimensions of tau to be equal to input.shape[:-2], but got %s"
                           % (name, list(tau.shape[:-1])))
    if tau.dtype != A.dtype:
        raise RuntimeError("%s: tau dtype %s does not match input dtype %s"
                           % (name, _dtype_name(tau.dtype), _dtype_name(A.dtype)))


def _reflect(A, tau, Q):
    """H_0 H_1 ... H_{k-1} Q, H_i = I - tau_i v_i v_i^T, v_i being column i of A below the diagonal with a 1
    on it: the reflectors applied right to left, as differentiable ops (so gradients come from autograd)"""
    n = A.shape[-2]
    V = A[..., :, :tau.shape[-1]].tril(-1) + cthtorch.eye(n, tau.shape[-1], dtype=A.dtype)
    for i in reversed(range(tau.shape[-1])):
        v = V[..., :, i:i + 1]
        Q = Q - (tau[..., i, None, None] * v) @ (v.mT @ Q)
    return Q


def householder_product(A, tau):
    name = "torch.linalg.householder_product"
    _check_householder(A, tau, name)
    if A.shape[-2] < A.shape[-1]:
        raise RuntimeError("%s: input.shape[-2] must be greater than or equal to input.shape[-1]" % name)
    if A.shape[-1] < tau.shape[-1]:
        raise RuntimeError("%s: input.shape[-1] must be greater than or equal to tau.shape[-1]" % name)
    if A.dtype not in (cthtorch.float32, cthtorch.float64):
        raise NotImplementedError("\"orgqr_cpu\" not implemented for '%s'" % _dtype_name(A.dtype))
    if not _needs_grad(A, tau):   # LAPACK's blocked orgqr; the graph below only when gradients are wanted
        return _VF._lapack_orgqr(A, tau)
    n, m = A.shape[-2], A.shape[-1]
    Q = cthtorch.eye(n, m, dtype=A.dtype).expand(*A.shape[:-2], n, m)
    if tau.shape[-1] == 0:   # no reflector: the identity, still on A's and tau's graph
        return Q + A * 0 + tau.sum(-1)[..., None, None] * 0
    return _reflect(A, tau, Q)


def orgqr(input, tau):
    return householder_product(input, tau)


def ormqr(input, tau, other, left=True, transpose=False):
    """Q @ other (left) or other @ Q, Q (or Q^T) being the m x m product of the reflectors in input"""
    name = "torch.ormqr"
    _check_householder(input, tau, name)
    if other.dim() != input.dim():
        raise RuntimeError("%s: other.dim() must be equal to input.dim()" % name)
    m = other.shape[-2] if left else other.shape[-1]
    if input.shape[-2] != m:
        raise RuntimeError("%s: %s must be equal to input.shape[-2]" % (name, "other.shape[-2]" if left else
                                                                         "other.shape[-1]"))
    if tau.shape[-1] != min(m, input.shape[-1]):
        raise RuntimeError("%s: tau.shape[-1] must be equal to min(%s, input.shape[-1])"
                           % (name, "other.shape[-2]" if left else "other.shape[-1]"))
    if other.dtype != input.dtype:
        raise RuntimeError("%s: Expected other and input to have the same dtype, but other has dtype %s and input "
                           "has dtype %s" % (name, _dtype_name(other.dtype), _dtype_name(input.dtype)))
    if input.dtype not in (cthtorch.float32, cthtorch.float64):
        raise NotImplementedError("\"ormqr_cpu\" not implemented for '%s'" % _dtype_name(input.dtype))
    # Q^T = H_{k-1} ... H_0: each H_i is symmetric, so Q^T C = (C^T Q)^T, and C Q = (Q^T C^T)^T
    if left and not transpose:
        return _reflect(input, tau, other)
    if not left and transpose:
        return _reflect(input, tau, other.mT).mT
    Q = _reflect(input, tau, cthtorch.eye(m, dtype=input.dtype).expand(*input.shape[:-2], m, m))
    return Q.mT @ other if left else other @ Q


# ---------------------------------------------------------------- LDL^T (Bunch-Kaufman)
def ldl_factor_ex(A, *, hermitian=False, check_errors=False):
    """LAPACK's sytrf on the lower triangle: LD holds L (unit diagonal implied) and the 1x1 / 2x2 blocks of D;
    pivots are LAPACK's (negative for a 2x2 block). Not differentiable, as in PyTorch."""
    name = "torch.linalg.ldl_factor_ex"
    _checks.square(A, name)
    if not A.dtype.is_complex:   # complex passes torch's check, and has no kernel here
        _checks.floating(A, name)
    if A.dtype not in (cthtorch.float32, cthtorch.float64):
        raise NotImplementedError("\"ldl_factor_kernel_cpu\" not implemented for '%s'" % _dtype_name(A.dtype))
    LD, piv, info = _VF._lapack_ldl_factor(A.detach())
    if _needs_grad(A):
        LD, = F.LdlFactor.apply((LD,), A)
    if check_errors:
        raise_info(info, lambda c: "torch.linalg.ldl_factor_ex: D[%d,%d] is exactly zero: the factorization "
                                   "completed, but D is singular (LAPACK info %d)" % (c, c, c))
    return return_types.linalg_ldl_factor_ex(LD, piv, info)


def ldl_factor(A, *, hermitian=False):
    LD, piv, info = ldl_factor_ex(A, hermitian=hermitian)
    raise_info(info, lambda c: "torch.linalg.ldl_factor: D[%d,%d] is exactly zero: the factorization completed, "
                               "but D is singular (LAPACK info %d)" % (c, c, c))
    return return_types.linalg_ldl_factor(LD, piv)


def ldl_solve(LD, pivots, B, *, hermitian=False):
    name = "torch.linalg.ldl_solve"
    _checks.square(LD, name)
    if B.dim() < 2:
        raise IndexError("Dimension out of range (expected to be in range of [%d, %d], but got -2)"
                         % (-max(B.dim(), 1), max(B.dim(), 1) - 1))
    if pivots.dtype.is_floating_point or pivots.dtype.is_complex or pivots.dtype == cthtorch.bool:
        raise RuntimeError("%s: Expected pivots to be integers. Got %s" % (name, _dtype_name(pivots.dtype)))
    if tuple(LD.shape[:-1]) != tuple(pivots.shape):
        raise RuntimeError("%s: Expected LD.shape[:-1] and pivots.shape to be the same, but got pivots with shape %s "
                           "instead" % (name, list(pivots.shape)))
    if B.dtype != LD.dtype:
        raise RuntimeError("Expected b and A to have the same dtype, but found b of type %s and A of type %s instead."
                           % (_dtype_name(B.dtype), _dtype_name(LD.dtype)))
    if B.shape[-2] != LD.shape[-1]:
        raise RuntimeError("Incompatible matrix sizes for %s: each A matrix is %d by %d but each b matrix is %d by %d"
                           % (name, LD.shape[-2], LD.shape[-1], B.shape[-2], B.shape[-1]))
    _checks.lapack_dtype(LD, name)
    batch = cthtorch.broadcast_shapes(LD.shape[:-2], B.shape[:-2])
    LD2, B2 = LD.detach().expand(batch + LD.shape[-2:]), B.detach().expand(batch + B.shape[-2:])
    X = _VF._lapack_ldl_solve(LD2, pivots.expand(batch + pivots.shape[-1:]), B2)
    if _needs_grad(LD, B):
        X, = F.LdlSolve.apply((X,), LD, B)
    return X
