"""The few matrix routines the distributions need (MultivariateNormal,
lower_cholesky/positive_definite constraints), written with differentiable
cthtorch ops so gradients flow. cthtorch.tril/linalg are being written
elsewhere; these use them when present and fall back to small column loops
(fine for the event sizes distributions use, O(n) Python steps)."""
import cthtorch as torch


def _linalg():
    try:
        return torch.linalg
    except AttributeError:
        return None


def tril(x):
    if hasattr(torch, "tril"):
        return torch.tril(x)
    rows = torch.arange(x.shape[-2], device=x.device)
    cols = torch.arange(x.shape[-1], device=x.device)
    return torch.where(rows[:, None] >= cols[None, :], x, torch.zeros_like(x))


def diag_embed(d):
    if hasattr(torch, "diag_embed"):
        return torch.diag_embed(d)
    n = d.shape[-1]
    return d.unsqueeze(-1) * torch.eye(n, dtype=d.dtype, device=d.device)


def cholesky_ex(a):
    """(L, ok): ok is a bool tensor of the batch shape, False where `a` is
    not positive-definite (L then holds NaNs there)."""
    la = _linalg()
    if la is not None and hasattr(la, "cholesky_ex"):
        L, info = la.cholesky_ex(a)
        return L, info == 0
    n = a.shape[-1]
    # read both triangles, so the gradient is symmetric (as PyTorch's)
    a = (a + a.mT) / 2
    rows = torch.arange(n, device=a.device)
    cols = []
    ok = torch.ones(a.shape[:-2], dtype=torch.bool, device=a.device)
    for j in range(n):
        c = a[..., :, j]
        if j:
            prev = torch.stack(cols, -1)                       # (..., n, j)
            c = c - (prev * prev[..., j:j + 1, :]).sum(-1)
        piv = c[..., j]
        ok = ok & (piv > 0)
        # where the pivot fails, keep going with NaN so shapes stay valid
        d = torch.sqrt(torch.where(piv > 0, piv, torch.full_like(piv, float("nan"))))
        cols.append(torch.where(rows >= j, c / d.unsqueeze(-1), torch.zeros_like(c)))
    return torch.stack(cols, -1), ok


def cholesky(a):
    la = _linalg()
    if la is not None and hasattr(la, "cholesky"):
        return la.cholesky(a)
    L, ok = cholesky_ex(a)
    if not bool(ok.all()):
        raise RuntimeError("linalg.cholesky: The factorization could not be completed because the input is not "
                           "positive-definite.")
    return L


def solve_lower(L, b):
    """X with L @ X = b (L lower triangular, b (..., n, m)), by forward
    substitution over rows."""
    la = _linalg()
    if la is not None and hasattr(la, "solve_triangular"):
        return la.solve_triangular(L, b, upper=False)
    n = L.shape[-1]
    L, b = _broadcast_batch(L, b)
    rows = []
    for i in range(n):
        r = b[..., i, :]
        if i:
            prev = torch.stack(rows, -2)                       # (..., i, m)
            r = r - (L[..., i, :i].unsqueeze(-1) * prev).sum(-2)
        rows.append(r / L[..., i, i].unsqueeze(-1))
    return torch.stack(rows, -2)


def _broadcast_batch(L, b):
    batch = torch.broadcast_shapes(L.shape[:-2], b.shape[:-2])
    return L.expand(batch + L.shape[-2:]), b.expand(batch + b.shape[-2:])


def eye_like(L):
    n = L.shape[-1]
    return torch.eye(n, dtype=L.dtype, device=L.device).expand(L.shape)


def cholesky_inverse(L):
    """(L L^T)^-1 from the Cholesky factor L."""
    li = solve_lower(L, eye_like(L))
    return li.mT @ li
