"""Samplers cthtorch has no C op for: gamma (with an implicit
reparameterization gradient, so Gamma/Beta/Dirichlet.rsample differentiate)
and binomial. Written with cthtorch ops on whole tensors."""
import cthtorch as torch


_SERIAL_MAX = 64


def _gamma_draw(alpha):
    """Marsaglia-Tsang on every element at once, redrawing the rejected ones;
    alpha < 1 uses Gamma(a) = Gamma(a + 1) * (1 - U)^(1/a). An alpha that is not
    positive and finite (no draw would ever be accepted) gives 0 (the caller
    clamps it to tiny, as torch gives) and inf gives inf.
    A few elements are drawn one at a time, as torch's serial kernel draws them, so a seeded small draw
    (MixUp's Beta(a, a)) takes torch's values; many go at once."""
    if 1 < alpha.numel() <= _SERIAL_MAX:
        flat = alpha.reshape(-1)
        return torch.cat([_gamma_draw(flat[i:i + 1]) for i in range(flat.numel())]).reshape(alpha.shape)
    usable = (alpha > 0) & torch.isfinite(alpha)
    alpha_u = torch.where(usable, alpha, torch.ones_like(alpha))
    boost = alpha_u < 1
    a = torch.where(boost, alpha_u + 1, alpha_u)
    d = a - 1.0 / 3
    c = 1.0 / torch.sqrt(9 * d)
    out = torch.where(alpha == float("inf"), alpha, torch.zeros_like(alpha))
    done = ~usable
    scale = None
    if bool(boost.any()):   # torch draws the boost's uniform before the Marsaglia-Tsang draws, as 1 - u
        u = torch.rand(alpha.shape, dtype=alpha.dtype)
        scale = torch.where(boost, (1 - u).pow(1.0 / alpha_u), torch.ones_like(alpha))
    while not bool(done.all()):
        x = torch.randn(alpha.shape, dtype=alpha.dtype)
        v = (1 + c * x) ** 3
        u = torch.rand(alpha.shape, dtype=alpha.dtype)
        ok = (v > 0) & (torch.log(u) < 0.5 * x * x + d - d * v + d * torch.log(v.clamp(min=1e-300)))
        out = torch.where(ok & ~done, d * v, out)
        done = done | ok
    return out if scale is None else out * scale


def _gamma_dsample_dalpha(x, alpha):
    """d x / d alpha at fixed CDF value: -(dP/dalpha) / (dP/dx), P the
    regularized lower incomplete gamma; dP/dalpha by a central difference
    (float64, step small against alpha)."""
    x, alpha = x.double(), alpha.double()
    h = 1e-5 * alpha.clamp(min=1e-3)
    dp_da = (torch.igamma(alpha + h, x) - torch.igamma(alpha - h, x)) / (2 * h)
    log_pdf = (alpha - 1) * torch.log(x) - x - torch.lgamma(alpha)
    return -dp_da / torch.exp(log_pdf)


class _StandardGamma(torch.autograd.Function):
    @staticmethod
    def forward(ctx, alpha):
        with torch.no_grad():
            x = _gamma_draw(alpha.double()).to(alpha.dtype)
            x = x.clamp(min=torch.finfo(alpha.dtype).tiny)
        ctx.save_for_backward(x, alpha)
        return x

    @staticmethod
    def backward(ctx, grad):
        x, alpha = ctx.saved_tensors
        return grad * _gamma_dsample_dalpha(x, alpha).to(grad.dtype)


def standard_gamma(alpha):
    """Gamma(alpha, 1) samples of alpha's shape; differentiable in alpha."""
    return _StandardGamma.apply(alpha)


def dirichlet(alpha):
    """Dirichlet(alpha) samples over the last dim, differentiable in alpha: gamma draws normalized in
    float64, since a small concentration's float32 draws underflow to tiny and would normalize to uniform"""
    g = standard_gamma(alpha.double())
    return (g / g.sum(-1, keepdim=True)).to(alpha.dtype).clamp(min=torch.finfo(alpha.dtype).tiny)


def binomial(count, prob):
    """Binomial(count, prob) samples (same shapes) in time independent of count:
    with q = min(p, 1 - p) (and k -> n - k where p > 1/2), inversion of the cdf
    where n*q < 10 (a few steps on average), Hormann's BTRS rejection otherwise
    (1993; about 1.15 draws per sample). Summing n Bernoulli draws took O(n):
    a hang for Binomial(2**40, .5)."""
    n = count.to(torch.float64)
    p = prob.to(torch.float64)
    flip = p > 0.5
    q = torch.where(flip, 1 - p, p)
    k = torch.zeros_like(q)
    small = (n * q < 10) & (n > 0) & (q > 0)
    large = (n * q >= 10)
    if bool(small.any()):
        k = torch.where(small, _binomial_inversion(n, q, small), k)
    if bool(large.any()):
        k = torch.where(large, _binomial_btrs(n, q, large), k)
    k = torch.where(flip, n - k, k)
    k = torch.where(torch.isnan(n) | torch.isnan(p), torch.full_like(k, float("nan")), k)
    return k.to(prob.dtype)


def _binomial_inversion(n, q, todo):
    """Walks the cdf from k = 0 until it passes a uniform draw (n*q < 10)."""
    n, q = torch.where(todo, n, torch.ones_like(n)), torch.where(todo, q, torch.full_like(q, 0.5))
    u = torch.rand(n.shape, dtype=torch.float64)
    pk = torch.exp(n * torch.log1p(-q))               # P(k = 0)
    cdf, k = pk.clone(), torch.zeros_like(n)
    live = todo & (u > cdf)
    ratio = q / (1 - q)
    while bool(live.any()):
        k = torch.where(live, k + 1, k)
        pk = pk * (n - k + 1) / k * ratio
        cdf = cdf + pk
        # pk reaches 0 past n (or underflows): the walk stops at the last k
        live = live & (u > cdf) & (k < n) & (pk > 0)
    return k


def _binomial_btrs(n, q, todo):
    """Hormann's transformed rejection with squeeze (n*q >= 10, q <= 1/2)."""
    n, q = torch.where(todo, n, torch.full_like(n, 100.)), torch.where(todo, q, torch.full_like(q, 0.5))
    r = 1 - q
    spq = torch.sqrt(n * q * r)
    b = 1.15 + 2.53 * spq
    a = -0.0873 + 0.0248 * b + 0.01 * q
    c = n * q + 0.5
    v_r = 0.92 - 4.2 / b
    alpha = (2.83 + 5.1 / b) * spq
    lpq = torch.log(q / r)
    m = torch.floor((n + 1) * q)
    h = torch.lgamma(m + 1) + torch.lgamma(n - m + 1)
    k = torch.zeros_like(n)
    live = todo.clone()
    while bool(live.any()):
        u = torch.rand(n.shape, dtype=torch.float64) - 0.5
        v = torch.rand(n.shape, dtype=torch.float64)
        us = 0.5 - torch.abs(u)
        kk = torch.floor((2 * a / us + b) * u + c)
        inside = (kk >= 0) & (kk <= n)
        squeeze = inside & (us >= 0.07) & (v <= v_r)
        kc = torch.clamp(torch.minimum(kk, n), min=0)
        bound = h - torch.lgamma(kc + 1) - torch.lgamma(n - kc + 1) + (kc - m) * lpq
        logv = torch.log(v * alpha / (a / (us * us) + b))
        ok = live & inside & (squeeze | (logv <= bound))
        k = torch.where(ok, kk, k)
        live = live & ~ok
    return k
