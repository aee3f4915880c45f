"""torch.svd_lowrank and torch.pca_lowrank: randomized truncated SVD (Halko,
Martinsson and Tropp 2011, algorithm 4.4 with subspace iterations). A basis
Q of A's range is found from A applied to a Gaussian n x q block; the small
matrix Q^H A is then decomposed exactly. Draws come from cthtorch.randn, so a
seeded call sees torch's Gaussian block."""
import cthtorch as torch

__all__ = ["get_approximate_basis", "svd_lowrank", "pca_lowrank"]


def _floating_dtype(A):
    return A.dtype if A.dtype.is_floating_point or A.dtype.is_complex else torch.float32


def get_approximate_basis(A, q, niter=2, M=None):
    """An m x q matrix with orthonormal columns spanning about the range of A - M."""
    niter = 2 if niter is None else niter
    R = torch.randn(A.shape[-1], q, dtype=_floating_dtype(A), device=A.device)

    def apply(X, Y, MX):
        return X @ Y if MX is None else X @ Y - MX @ Y

    Q = torch.linalg.qr(apply(A, R, M)).Q
    for _ in range(niter):
        # power iterations sharpen the spectrum's decay; re-orthonormalising each half step keeps them stable
        Q = torch.linalg.qr(apply(A.mH, Q, None if M is None else M.mH)).Q
        Q = torch.linalg.qr(apply(A, Q, M)).Q
    return Q


def svd_lowrank(A, q=6, niter=2, M=None):
    """(U, S, V) with A - M ~= U diag(S) V^H, of rank q."""
    q = 6 if q is None else q
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.size())
    wide = m < n
    if wide:
        # sketch the tall one, A^H, and swap the factors back at the end
        A = A.mH
        M = None if M is None else M.mH
    Q = get_approximate_basis(A, q, niter=niter, M=M)
    # A ~= Q (Q^H A), and Q^H A (q x n) decomposes exactly
    B = Q.mH @ A if M is None else Q.mH @ A - Q.mH @ M
    U, S, Vh = torch.linalg.svd(B, full_matrices=False)
    U, V = Q @ U, Vh.mH
    return (V, S, U) if wide else (U, S, V)


def pca_lowrank(A, q=None, center=True, niter=2):
    """svd_lowrank of A with its column means removed (when center)."""
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (q >= 0 and q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if A.layout != torch.strided:
        raise NotImplementedError("pca_lowrank: sparse inputs are not supported in cthtorch yet")
    return svd_lowrank(A - A.mean(dim=(-2,), keepdim=True) if center else A, q, niter=niter)


# composites over ops (as torch's are Python): listed in the op registry as torch.svd_lowrank/pca_lowrank
from cthtorch import _ops  # noqa: E402
_ops.api_module("torch", {"__name__": __name__, "svd_lowrank": svd_lowrank, "pca_lowrank": pca_lowrank})
