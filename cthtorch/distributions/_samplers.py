"""Samplers cthtorch has no C op for: gamma (with an implicit
reparameterization gradient, so Gamma/Beta/Dirichlet.rsample differentiate)
and binomial. Written with cthtorch ops on whole tensors."""
import cthtorch as torch


def _gamma_draw(alpha):
    """Marsaglia-Tsang on every element at once, redrawing the rejected ones;
    alpha < 1 uses Gamma(a) = Gamma(a + 1) * U^(1/a). An alpha that is not
    positive and finite (no draw would ever be accepted) gives 0 (the caller
    clamps it to tiny, as torch gives) and inf gives inf."""
    usable = (alpha > 0) & torch.isfinite(alpha)
    alpha_u = torch.where(usable, alpha, torch.ones_like(alpha))
    boost = alpha_u < 1
    a = torch.where(boost, alpha_u + 1, alpha_u)
    d = a - 1.0 / 3
    c = 1.0 / torch.sqrt(9 * d)
    out = torch.where(alpha == float("inf"), alpha, torch.zeros_like(alpha))
    done = ~usable
    while not bool(done.all()):
        x = torch.randn(alpha.shape, dtype=alpha.dtype)
        v = (1 + c * x) ** 3
        u = torch.rand(alpha.shape, dtype=alpha.dtype)
        ok = (v > 0) & (torch.log(u) < 0.5 * x * x + d - d * v + d * torch.log(v.clamp(min=1e-300)))
        out = torch.where(ok & ~done, d * v, out)
        done = done | ok
    if bool(boost.any()):
        u = torch.rand(alpha.shape, dtype=alpha.dtype)
        out = torch.where(boost, out * u.pow(1.0 / alpha_u), out)
    return out


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
    """Binomial(count, prob) samples (same shapes), as sums of Bernoulli
    draws in chunks that keep memory bounded."""
    n_max = int(count.max()) if count.numel() else 0
    out = torch.zeros_like(prob)
    chunk = max(1, (1 << 22) // max(1, prob.numel()))
    for start in range(0, n_max, chunk):
        k = min(chunk, n_max - start)
        idx = torch.arange(start, start + k, dtype=prob.dtype).view((k,) + (1,) * prob.dim())
        draws = torch.bernoulli(prob.expand((k,) + prob.shape)) * (idx < count).to(prob.dtype)
        out = out + draws.sum(0)
    return out
