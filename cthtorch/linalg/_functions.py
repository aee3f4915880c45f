"""Autograd Functions over the LAPACK primitives (cthtorch._C._internal._lapack_*):
forward runs LAPACK, backward is the usual matrix-calculus formula written
with differentiable ops, so double backward works too."""
import cthtorch
from cthtorch import _C
from cthtorch.autograd import Function
from cthtorch._sparse_tensor import name_node

_VF = _C._internal   # the LAPACK helpers are not public ops


def _eye_like(A):
    n = A.shape[-1]
    return cthtorch.eye(n, dtype=A.dtype).expand(A.shape)


def lu_det(LU, piv):
    """det and (sign, log|det|) of the factored matrices."""
    d = LU.diagonal(0, -2, -1)
    n = piv.shape[-1]
    swaps = (piv != cthtorch.arange(1, n + 1, dtype=piv.dtype)).sum(-1)
    perm_sign = 1 - 2 * (swaps % 2).to(LU.dtype)
    return d, perm_sign


class Identity(Function):
    """A^0: the identity, connected to A's graph with a zero gradient (PyTorch's result requires grad)."""

    @staticmethod
    def forward(ctx, A):
        return _eye_like(A).clone()

    @staticmethod
    def backward(ctx, g):
        return g * 0


class Inv(Function):
    @staticmethod
    def forward(ctx, A):
        LU, piv, info = _VF._lapack_lu(A)
        X = _VF._lapack_lu_solve(LU, piv, _eye_like(A), False)
        ctx.save_for_backward(X)
        ctx.mark_non_differentiable(info)
        return X, info

    @staticmethod
    def backward(ctx, g, _):
        X, = ctx.saved_tensors
        Xt = X.mT
        return -cthtorch.matmul(cthtorch.matmul(Xt, g), Xt)


class Det(Function):
    @staticmethod
    def forward(ctx, A):
        LU, piv, _ = _VF._lapack_lu(A)
        d, s = lu_det(LU, piv)
        det = d.prod(-1) * s
        ctx.save_for_backward(A, det)
        return det

    @staticmethod
    def backward(ctx, g):
        A, det = ctx.saved_tensors
        gd = (g * det).unsqueeze(-1).unsqueeze(-1)
        if not bool((det == 0).any()):
            return gd * cthtorch.linalg.inv(A).mT
        # singular: det(A) A^{-T} is the cofactor matrix, U diag(prod_{j!=i} s_j) Vh * det(U) det(Vh)
        U, S, Vh = cthtorch.linalg.svd(A, full_matrices=False)
        n = S.shape[-1]
        eye = cthtorch.eye(n, dtype=cthtorch.bool)
        others = cthtorch.where(eye, cthtorch.ones((), dtype=S.dtype), S.unsqueeze(-2)).prod(-1)
        sign = Det.apply(U.detach()) * Det.apply(Vh.detach())
        cof = cthtorch.matmul(U * others.unsqueeze(-2), Vh) * sign.unsqueeze(-1).unsqueeze(-1)
        return g.unsqueeze(-1).unsqueeze(-1) * cof


class Slogdet(Function):
    @staticmethod
    def forward(ctx, A):
        LU, piv, _ = _VF._lapack_lu(A)
        d, s = lu_det(LU, piv)
        sign = s * d.sign().prod(-1)
        lad = d.abs().log().sum(-1)
        ctx.save_for_backward(A)
        return sign, lad   # sign requires grad (its gradient is zero), as in PyTorch

    @staticmethod
    def backward(ctx, gsign, glad):
        A, = ctx.saved_tensors
        return glad.unsqueeze(-1).unsqueeze(-1) * cthtorch.linalg.inv(A).mT


class Solve(Function):
    """A X = B for broadcast A (..., n, n), B (..., n, k)."""

    @staticmethod
    def forward(ctx, A, B):
        LU, piv, info = _VF._lapack_lu(A)
        X = _VF._lapack_lu_solve(LU, piv, B, False)
        ctx.save_for_backward(A, X)
        ctx.mark_non_differentiable(info)
        return X, info

    @staticmethod
    def backward(ctx, g, _):
        A, X = ctx.saved_tensors
        gB = Solve.apply(A.mT, g)[0]
        gA = -cthtorch.matmul(gB, X.mT) if ctx.needs_input_grad[0] else None
        return gA, gB


class SolveTriangular(Function):
    @staticmethod
    def forward(ctx, A, B, upper, left, unitriangular):
        X = _VF._lapack_triangular_solve(A, B, upper, left, unitriangular)
        ctx.save_for_backward(A, X)
        ctx.opts = (upper, left, unitriangular)
        return X

    @staticmethod
    def backward(ctx, g):
        A, X = ctx.saved_tensors
        upper, left, unit = ctx.opts
        gB = SolveTriangular.apply(A.mT, g, not upper, left, unit)
        gA = None
        if ctx.needs_input_grad[0]:
            gA = -cthtorch.matmul(gB, X.mT) if left else -cthtorch.matmul(X.mT, gB)
            k = 1 if unit else 0
            gA = gA.triu(k) if upper else gA.tril(-k)
        return gA, gB, None, None, None


class LuFactor(Function):
    """Square A = P L U (packed LU). With phi = tril_-1(L^T gL) + triu(gU U^T),
    gA = P L^{-T} phi U^{-T}; gL and gU are the strict lower and upper parts
    of the packed gradient."""

    @staticmethod
    def forward(ctx, A, perm_matrix):
        LU, piv, info = _VF._lapack_lu(A)
        ctx.mark_non_differentiable(piv, info)
        ctx.save_for_backward(LU)
        ctx.P = perm_matrix(piv, A.shape[-2], A.dtype)
        return LU, piv, info

    @staticmethod
    def backward(ctx, gLU, _gpiv, _ginfo):
        LU, = ctx.saved_tensors
        L = LU.tril(-1) + _eye_like(LU)
        U = LU.triu()
        phi = cthtorch.matmul(L.mT, gLU.tril(-1)).tril(-1) + cthtorch.matmul(gLU.triu(), U.mT).triu()
        X = SolveTriangular.apply(L.mT, phi, True, True, True)
        X = SolveTriangular.apply(U.mT, X, False, False, False)
        return cthtorch.matmul(ctx.P, X), None


def _cholesky_solve(B, L, upper):
    """A^{-1} B for A = L L^T (or U^T U) by two triangular solves."""
    Lo = L.mT if upper else L
    Y = SolveTriangular.apply(Lo, B, False, True, False)
    return SolveTriangular.apply(Lo.mT, Y, True, True, False)


class CholeskySolve(Function):
    """PyTorch differentiates cholesky_solve as if L were a full matrix
    (A = L L^T with every entry of L), so gL is dense; so does this."""

    @staticmethod
    def forward(ctx, B, L, upper):
        X = _cholesky_solve(B, L, upper)
        ctx.save_for_backward(L, X)
        ctx.upper = upper
        return X

    @staticmethod
    def backward(ctx, g):
        L, X = ctx.saved_tensors
        gB = CholeskySolve.apply(g, L, ctx.upper)
        common = cthtorch.matmul(gB, X.mT)
        common = common + common.mT
        gL = -cthtorch.matmul(L, common) if ctx.upper else -cthtorch.matmul(common, L)
        return gB, gL, None


class Cholesky(Function):
    @staticmethod
    def forward(ctx, A, upper):
        L, info = _VF._lapack_cholesky(A, upper)
        ctx.save_for_backward(L)
        ctx.upper = upper
        ctx.mark_non_differentiable(info)
        return L, info

    @staticmethod
    def backward(ctx, g, _):
        L, = ctx.saved_tensors
        if ctx.upper:
            L, g = L.mT, g.mT
        # gA = L^{-T} Phi(L^T gL) L^{-1}, Phi symmetrizing the lower triangle with a halved diagonal
        P = cthtorch.matmul(L.mT, g).tril()
        P = 0.5 * (P + P.tril(-1).mT)
        gA = SolveTriangular.apply(L.mT, P, True, True, False)
        gA = SolveTriangular.apply(L, gA, False, False, False)
        return gA, None


class Eigh(Function):
    @staticmethod
    def forward(ctx, A, upper):
        w, V, info = _VF._lapack_eigh(A, upper, True)
        ctx.save_for_backward(w, V)
        ctx.mark_non_differentiable(info)
        return w, V, info

    @staticmethod
    def backward(ctx, gw, gV, _):
        w, V = ctx.saved_tensors
        # gA = V (diag(gw) + (V^T gV) / (w_j - w_i)) V^T
        E = w.unsqueeze(-2) - w.unsqueeze(-1)
        eye = cthtorch.eye(w.shape[-1], dtype=cthtorch.bool)
        inner = cthtorch.where(eye, gw.unsqueeze(-1) * eye.to(w.dtype),
                               cthtorch.matmul(V.mT, gV) / cthtorch.where(eye, cthtorch.ones((), dtype=w.dtype), E))
        return cthtorch.matmul(cthtorch.matmul(V, inner), V.mT), None


class Svd(Function):
    @staticmethod
    def forward(ctx, A, full_matrices):
        U, S, Vh, info = _VF._lapack_svd(A, full_matrices, True)
        # the outputs themselves are saved (sliced in backward): a view made here
        # would not be connected to this node, and double backward would lose it
        ctx.save_for_backward(U, S, Vh)
        ctx.mark_non_differentiable(info)
        return U, S, Vh, info

    @staticmethod
    def backward(ctx, gU, gS, gVh, _):
        U, S, Vh = ctx.saved_tensors
        k = S.shape[-1]
        U, Vh = U[..., :k], Vh[..., :k, :]
        m, n = U.shape[-2], Vh.shape[-1]
        gU, gVh = gU[..., :k], gVh[..., :k, :]
        V, gV = Vh.mT, gVh.mT

        def skew(X):
            return X - X.mT
        UhgU = skew(cthtorch.matmul(U.mT, gU))
        VhgV = skew(cthtorch.matmul(V.mT, gV))
        S2 = S * S
        eye = cthtorch.eye(k, dtype=cthtorch.bool)
        E = cthtorch.where(eye, cthtorch.ones((), dtype=S.dtype), S2.unsqueeze(-2) - S2.unsqueeze(-1))
        inner = (UhgU * S.unsqueeze(-2) + S.unsqueeze(-1) * VhgV) / E
        inner = cthtorch.where(eye, cthtorch.zeros((), dtype=S.dtype), inner) + cthtorch.diag_embed(gS)
        if m > k:
            gUSinv = gU / S.unsqueeze(-2)
            gA = cthtorch.matmul(U, inner) + gUSinv - cthtorch.matmul(U, cthtorch.matmul(U.mT, gUSinv))
            return cthtorch.matmul(gA, Vh), None
        gA = cthtorch.matmul(inner, Vh)
        if n > k:
            gVSinv = (gV / S.unsqueeze(-2)).mT
            gA = gA + gVSinv - cthtorch.matmul(cthtorch.matmul(gVSinv, V), Vh)
        return cthtorch.matmul(U, gA), None


class Qr(Function):
    @staticmethod
    def forward(ctx, A, mode):
        Q, R = _VF._lapack_qr(A, mode)
        ctx.save_for_backward(Q, R)
        ctx.mode = mode
        return Q, R

    @staticmethod
    def backward(ctx, gQ, gR):
        Q, R = ctx.saved_tensors
        m, n = Q.shape[-2], R.shape[-1]
        if ctx.mode == "r":
            raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
                               "Please use linalg.qr(A, mode='reduced') if you are going to differentiate through "
                               "linalg.qr.")
        if ctx.mode == "complete" and m > n:
            raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
        if m < n:
            # A = [X | Y], R = [U | V] with X = Q U square and Y = Q V: X takes the
            # square formula with gQ + Y gV^T, and gY = Q gV
            U, V, gU, gV = R[..., :m], R[..., m:], gR[..., :m], gR[..., m:]
            gX = _qr_square_backward(gQ + cthtorch.matmul(cthtorch.matmul(Q, V), gV.mT), gU, Q, U)
            return cthtorch.cat([gX, cthtorch.matmul(Q, gV)], -1), None
        return _qr_square_backward(gQ, gR, Q, R), None


def _qr_square_backward(gQ, gR, Q, R):
    """gA = (gQ + Q copyltu(M)) R^{-T}, M = R gR^T - gQ^T Q (m >= n, reduced)."""
    M = cthtorch.matmul(R, gR.mT) - cthtorch.matmul(gQ.mT, Q)
    low = M.tril(-1)
    M = low + low.mT + cthtorch.diag_embed(M.diagonal(0, -2, -1))
    b = gQ + cthtorch.matmul(Q, M)
    return SolveTriangular.apply(R.mT, b, False, False, False)


# torch's grad_fn names for the nodes of these Functions
name_node(Inv, "LinalgInvExBackward0")
name_node(Det, "LinalgDetBackward0")
name_node(Slogdet, "LinalgSlogdetBackward0")


def not_differentiable(node_name, message, error=NotImplementedError, full_name=None):
    """An autograd Function that passes LAPACK's results through and whose backward raises: the graph exists
    (outputs require grad, as PyTorch's do) but the derivative is not implemented, in PyTorch as here."""
    class NotDifferentiable(Function):
        @staticmethod
        def forward(ctx, outs, *inputs):
            return tuple(outs)

        @staticmethod
        def backward(ctx, *grads):
            raise error(message)
    name_node(NotDifferentiable, node_name)
    if full_name:   # torch's generic node: repr <NotImplemented ...>, name() namespaced
        NotDifferentiable._backward_cls.name = lambda self: full_name
    return NotDifferentiable


Geqrf = not_differentiable("GeqrfBackward0", "the derivative for 'geqrf' is not implemented.")
LdlFactor = not_differentiable("NotImplemented", "derivative for aten::linalg_ldl_factor_ex is not implemented",
                                RuntimeError, "torch::autograd::NotImplemented")
LdlSolve = not_differentiable("NotImplemented", "derivative for aten::linalg_ldl_solve is not implemented",
                               RuntimeError, "torch::autograd::NotImplemented")
